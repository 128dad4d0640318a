"""The databases the result store runs on: SQLite (a file, the default) and PostgreSQL (a server
several machines write to, `--db postgresql://…`).

database.py writes its SQL once, in the subset both speak (`?` placeholders, `INSERT … ON CONFLICT …
DO UPDATE`, `RETURNING`, `CASE`); a backend connects, translates what differs (placeholders,
column types, where the schema version is kept, how a table is locked against other writers) and
turns the driver's errors into one line that names the database.

PostgreSQL is reached with psycopg 3 directly, not through SQLAlchemy: the store is fifteen
statements of standard SQL, the translation is the few lines below, and SQLite stays on the
standard library with no new dependency for the embedded default."""
from __future__ import annotations

import contextlib
import sqlite3
import sys
import time
from pathlib import Path
from typing import Callable, TypeVar
from urllib.parse import quote

from ..core.envnumbers import EnvNumber
from ..core.errors import UsageError
from ..core.extras import require
from .location import POSTGRES_SCHEMES, StoreLocation, parse_location

T = TypeVar("T")
# how long a lost PostgreSQL connection is tried again before the write fails; at most 100 s, below
# the 120 s after which another process may take over the run's lock (store.LOCK_STALE_S)
STORE_RETRY = EnvNumber("CRYPTOBENCH_STORE_RETRY_S", 60.0, high=100.0)
BACKOFF_FIRST_S, BACKOFF_MAX_S = 0.25, 8.0


class StoreUnavailable(UsageError):
    """The store's server went away and did not come back in time: the command stops, exit 1
    (not a usage error: nothing was wrong with what was asked)."""

    exit_code = 1


def is_postgres(location) -> bool:
    if isinstance(location, StoreLocation):
        return location.kind == "postgresql"
    return str(location).startswith(POSTGRES_SCHEMES)


class SqliteBackend:
    """A SQLite file; the schema version is PRAGMA user_version."""

    kind = "sqlite"

    def __init__(self, path: Path, timeout_s: float = 30.0, create: bool = True):
        """The file at `path`; without `create` (a command that only reads) it must exist: no
        folder and no empty database is made for a path that names none."""
        self.path = path
        self.label = str(path)
        if path.exists() and not path.is_file():
            raise UsageError(f"{path}: not a file (a directory or a device); give --db a database file")
        if create:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"{path}: cannot create its directory ({exc.strerror or exc})")
        elif not path.exists():
            raise UsageError(f"{path}: no such store (the file does not exist); this command only reads a "
                             "store, so none was created")
        try:
            # mode=rw: never create the file, even if it disappears between the look and the open
            self.db = sqlite3.connect(str(path), timeout=timeout_s) if create else \
                sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=rw", timeout=timeout_s, uri=True)
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{path}: not a usable cryptobench database ({exc})")
        self.db.row_factory = sqlite3.Row

    def write(self, what: str, body: Callable[[], T], exclusive: str | None = None) -> T:
        """body() in one transaction (see transaction); a refused write is one line (see writing)."""
        with self.writing(what), self.transaction(exclusive):
            return body()

    def execute(self, sql: str, params=()):
        return self.db.execute(sql, params)

    def stream(self, sql: str, params=(), batch: int = 500):
        """The rows of a query, fetched `batch` at a time (a report of 100 k cells never holds them
        all): SQLite's cursor steps through the result as it is read."""
        cursor = self.db.execute(sql, params)
        try:
            while rows := cursor.fetchmany(batch):
                yield from rows
        finally:
            cursor.close()

    @contextlib.contextmanager
    def transaction(self, exclusive: str | None = None):
        """One transaction; with `exclusive`, no other writer may come between its reads and its
        writes (SQLite: the whole database, BEGIN IMMEDIATE)."""
        with self.db:
            if exclusive:
                self.db.execute("BEGIN IMMEDIATE")
            yield

    def script(self, ddl: str) -> None:
        self.db.executescript(ddl)

    def tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    def set_version(self, version: int) -> None:
        self.db.execute(f"PRAGMA user_version = {int(version)}")

    @contextlib.contextmanager
    def writing(self, what: str):
        """A write that the file system or another process refuses is a one-line error naming the
        database, not a traceback; the transaction it was in is rolled back whole."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "readonly" in text or "read-only" in text:
                raise UsageError(f"{self.path}: cannot write ({what}): the database is read-only; "
                                 "give --db a writable file") from None
            if "locked" in text or "busy" in text:
                raise UsageError(f"{self.path}: cannot write ({what}): another process holds the database "
                                 "locked (tried for 30 s)") from None
            if "disk" in text or "full" in text or "unable to open" in text:
                raise UsageError(f"{self.path}: cannot write ({what}): {text}") from None
            raise
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{self.path}: not a usable cryptobench database ({exc})") from None

    def close(self) -> None:
        self.db.close()


class _Row(tuple):
    """A result row readable by position and by column name, as sqlite3.Row is."""

    names: tuple = ()

    def __getitem__(self, key):
        if isinstance(key, str):
            return tuple.__getitem__(self, self.names.index(key))
        return tuple.__getitem__(self, key)

    def keys(self):
        return list(self.names)


def _row_factory(cursor):
    names = tuple(c.name for c in cursor.description or ())
    cls = type("Row", (_Row,), {"names": names})
    return lambda values: cls(values)


class PostgresBackend:
    """A PostgreSQL database (psycopg 3); the schema version is the row 'version' of store_meta.

    A connection the server drops (a restart, a network that goes away) is made again: a write
    is re-run whole in a new transaction (every write of database.py and targets/mcu/lab/leases.py may be: cells
    are upserts, the others set a state), a read outside a transaction is repeated, with
    exponential backoff for up to CRYPTOBENCH_STORE_RETRY_S (one line on stderr says so). Past
    that, StoreUnavailable names what could not be written; the next writes try only once."""

    kind = "postgresql"

    def __init__(self, location: StoreLocation, retry: bool = True):
        psycopg = require("psycopg", "store", "a PostgreSQL store (--db postgresql://…)")
        self.psycopg = psycopg
        self.location = location
        self.path, self.label = location.url, location.label
        self.retry = retry              # False: a writer beside the main one (a heartbeat) skips a beat instead
        self.gave_up = False            # the server stayed away once: later writes do not wait again
        self._depth = 0                 # transactions open: inside one, its write is re-run whole
        self.streams = 0                # server-side cursors named so far (each stream needs a name of its own)
        self.db = self._connect(10)

    def _connect(self, timeout_s: float):
        try:
            return self.psycopg.connect(self.path, autocommit=True, row_factory=_row_factory,
                                        connect_timeout=max(2, int(timeout_s)))
        except self.psycopg.Error as exc:
            raise UsageError(f"{self.label}: cannot connect ({self._said(exc)})") from None

    def _said(self, exc: Exception) -> str:
        """The driver's first line, with the URL and every secret of it hidden."""
        text = str(exc).strip()
        return self.location.redact(text.splitlines()[0] if text else type(exc).__name__)

    def _lost(self, exc: Exception) -> bool:
        """Whether `exc` is the connection going away (not a refused statement)."""
        return isinstance(exc, self.psycopg.OperationalError) and bool(self.db.closed or self.db.broken)

    def write(self, what: str, body: Callable[[], T], exclusive: str | None = None) -> T:
        """body() in one transaction; re-run whole on a new connection if the server dropped this one."""
        def attempt() -> T:
            with self.writing(what), self.transaction(exclusive):
                return body()
        return self._retrying(f"writing {what}", attempt)

    def _retrying(self, doing: str, attempt: Callable[[], T]) -> T:
        try:
            return attempt()
        except self.psycopg.Error as exc:  # one line, its text redacted, for every driver error
            if not self._lost(exc):
                raise UsageError(f"{self.label}: {doing}: {self._said(exc)}") from None
            return self._again(doing, attempt, exc)

    def _again(self, doing: str, attempt: Callable[[], T], lost: Exception) -> T:
        """attempt() on a new connection, tried once at least, then with exponential backoff until
        the retry window closes; StoreUnavailable after that."""
        if not self.retry:                  # a heartbeat: its next beat is the retry
            raise StoreUnavailable(f"{self.label}: the connection was lost while {doing} ({self._said(lost)})")
        window = 0.0 if self.gave_up else STORE_RETRY.value()
        _say(f"store: the connection to {self.label} was lost while {doing} ({self._said(lost)}); "
             f"retrying for up to {window:g} s")
        try:
            return self._retry_for(window, doing, attempt, self._said(lost))
        except (StoreUnavailable, KeyboardInterrupt):
            self.gave_up = True             # gone for good, or Ctrl-C while waiting: the closing writes do not wait again
            raise

    def _retry_for(self, window: float, doing: str, attempt: Callable[[], T], last: str) -> T:
        deadline, delay = time.monotonic() + window, BACKOFF_FIRST_S
        while True:
            try:
                self.db.close()
                self.db = self._connect(min(10.0, max(2.0, deadline - time.monotonic())))
            except UsageError as exc:             # the server is not back yet
                last = str(exc)
            else:
                try:
                    result = attempt()
                except self.psycopg.Error as exc:
                    if not self._lost(exc):
                        raise UsageError(f"{self.label}: {doing}: {self._said(exc)}") from None
                    last = self._said(exc)
                else:
                    _say(f"store: connected to {self.label} again; went on {doing}")
                    return result
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(delay, left))
            delay = min(2 * delay, BACKOFF_MAX_S)
        raise StoreUnavailable(f"{self.label}: the connection was lost while {doing} and not made again "
                               f"within {window:g} s ({last})")

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params=()):
        """One statement; outside a transaction, repeated on a new connection if this one was lost."""
        if self._depth:
            return self.db.execute(self._sql(sql), tuple(params))
        return self._retrying("reading", lambda: self.db.execute(self._sql(sql), tuple(params)))

    def stream(self, sql: str, params=(), batch: int = 500):
        """The rows of a query, fetched `batch` at a time through a server-side cursor (a plain one
        would copy the whole result into this process first); it lives in a transaction of its own."""
        self.streams += 1                  # a cursor name of its own: streams may be open side by side
        with self.db.transaction():
            with self.db.cursor(name=f"cryptobench_stream_{self.streams}", row_factory=_row_factory) as cursor:
                cursor.itersize = batch
                cursor.execute(self._sql(sql), tuple(params))
                yield from cursor

    @contextlib.contextmanager
    def transaction(self, exclusive: str | None = None):
        """One transaction; with `exclusive` (a table), other writers of that table wait until it
        ends (LOCK TABLE … SHARE ROW EXCLUSIVE: readers go on)."""
        self._depth += 1
        try:
            with self.db.transaction():
                if exclusive:
                    self.db.execute(f"LOCK TABLE {exclusive} IN SHARE ROW EXCLUSIVE MODE")
                yield
        finally:
            self._depth -= 1

    def script(self, ddl: str) -> None:
        ddl = (ddl.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
               .replace(" REAL ", " DOUBLE PRECISION ").replace(" INTEGER ", " BIGINT "))
        ddl = "\n".join(line.split("--")[0] for line in ddl.splitlines())
        for statement in ddl.split(";"):
            if statement.strip():
                self.db.execute(statement)
        self.db.execute("CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}

    def version(self) -> int:
        if "store_meta" not in self.tables():
            return 0
        row = self.db.execute("SELECT value FROM store_meta WHERE key = 'version'").fetchone()
        return int(row[0]) if row else 0

    def set_version(self, version: int) -> None:
        self.db.execute("INSERT INTO store_meta (key, value) VALUES ('version', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(int(version)),))

    @contextlib.contextmanager
    def writing(self, what: str):
        """A write the server refuses is one line naming the database (its password hidden); the
        transaction it was in is rolled back whole."""
        try:
            yield
        except self.psycopg.Error as exc:  # every driver error: its text may quote the URL
            if self._lost(exc):
                raise                      # the connection went away: write() connects again and re-runs it
            raise UsageError(f"{self.label}: cannot write ({what}): {self._said(exc)}") from None

    def close(self) -> None:
        self.db.close()


def open_backend(location, timeout_s: float = 30.0, create: bool = True,
                 retry: bool = True) -> SqliteBackend | PostgresBackend:
    """The database `location` names (store_location.parse_location): a PostgreSQL URL (`retry`:
    a lost connection is made again), else a SQLite file path (waiting up to timeout_s for another
    writer's lock; without `create`, the file must exist)."""
    location = parse_location(location)
    if location.kind == "postgresql":
        return PostgresBackend(location, retry=retry)
    return SqliteBackend(location.path, timeout_s, create)


def _say(line: str) -> None:
    """A line about the store's connection, on stderr (the command's output stays clean)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()

"""The databases the result store runs on: SQLite (a file, the default) and PostgreSQL (a server
several machines write to, `--db postgresql://…`).

store.py writes its SQL once, in the subset both speak (`?` placeholders, `INSERT … ON CONFLICT …
DO UPDATE`, `RETURNING`, `CASE`); a backend connects, translates what differs (placeholders,
column types, where the schema version is kept, how a table is locked against other writers) and
turns the driver's errors into one line that names the database.

PostgreSQL is reached with psycopg 3 directly, not through SQLAlchemy: the store is fifteen
statements of standard SQL, the translation is the few lines below, and SQLite stays on the
standard library with no new dependency for the embedded default."""
from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path

from .errors import UsageError
from .extras import require

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(location) -> bool:
    return str(location).startswith(POSTGRES_SCHEMES)


def redacted(url: str) -> str:
    """The URL with its password hidden, for messages."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)


class SqliteBackend:
    """A SQLite file; the schema version is PRAGMA user_version."""

    kind = "sqlite"

    def __init__(self, path: Path, timeout_s: float = 30.0):
        self.path = path
        self.label = str(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{path}: cannot create its directory ({exc.strerror or exc})")
        if path.exists() and not path.is_file():
            raise UsageError(f"{path}: not a file (a directory or a device); give --db a database file")
        try:
            self.db = sqlite3.connect(str(path), timeout=timeout_s)
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{path}: not a usable cryptobench database ({exc})")
        self.db.row_factory = sqlite3.Row

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
    """A PostgreSQL database (psycopg 3); the schema version is the row 'version' of store_meta."""

    kind = "postgresql"

    def __init__(self, url: str):
        psycopg = require("psycopg", "store", "a PostgreSQL store (--db postgresql://…)")
        self.psycopg = psycopg
        self.path = url
        self.label = redacted(url)
        self.streams = 0
        try:
            self.db = psycopg.connect(url, autocommit=True, row_factory=_row_factory, connect_timeout=10)
        except psycopg.Error as exc:
            raise UsageError(f"{self.label}: cannot connect ({self._said(exc)})") from None

    def _said(self, exc: Exception) -> str:
        """The driver's first line, with the URL (and so its password) as the label shows it."""
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        return first.replace(self.path, self.label)

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params=()):
        return self.db.execute(self._sql(sql), tuple(params))

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
        with self.db.transaction():
            if exclusive:
                self.db.execute(f"LOCK TABLE {exclusive} IN SHARE ROW EXCLUSIVE MODE")
            yield

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
        except (self.psycopg.OperationalError, self.psycopg.errors.InsufficientPrivilege) as exc:
            raise UsageError(f"{self.label}: cannot write ({what}): {self._said(exc)}") from None

    def close(self) -> None:
        self.db.close()


def open_backend(location, timeout_s: float = 30.0) -> SqliteBackend | PostgresBackend:
    """The database `location` names: a postgresql:// URL, else a SQLite file path (waiting up to
    timeout_s for another writer's lock; a server connection waits its own 10 s)."""
    if is_postgres(location):
        return PostgresBackend(str(location))
    return SqliteBackend(Path(location), timeout_s)

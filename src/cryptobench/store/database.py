"""The result store: one transaction per finished cell, in SQLite (a file, the default) or
PostgreSQL (`--db postgresql://…`, shared by several machines; backends.py).

A run row holds the plan and the conditions; a cell row holds one (op, params, engine) result with
its raw samples, so statistics can always be recomputed. An interrupted run keeps every finished
cell; `--resume` runs only the cells that have no row yet.
"""
from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path

from ..core.errors import UsageError
from ..core.processes import process_alive
from ..core.printable import printable
from ..core.records import Cell, Conditions, Plan, Run, TargetSpecError, TargetView, VocabularyError
from .backends import StoreUnavailable, open_backend  # noqa: F401 - StoreUnavailable: the Runner's
from .location import StoreLocation, parse_location

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL,            -- running | complete | interrupted
    suite TEXT,
    plan TEXT NOT NULL,              -- JSON: the cells and options, enough to resume
    conditions TEXT NOT NULL         -- JSON: host, libraries, harness build, engines
);
CREATE TABLE IF NOT EXISTS cells (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    cell_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    op TEXT NOT NULL,
    params TEXT NOT NULL,
    engine TEXT NOT NULL,
    target TEXT NOT NULL,
    provenance TEXT NOT NULL,
    status TEXT NOT NULL,            -- ok | unsupported | failed | partial (sampling not finished)
    kat TEXT NOT NULL,               -- pass | fail | n/a
    detail TEXT,
    samples TEXT,                    -- JSON [[k, ns, cycles], ...]
    result TEXT,                     -- JSON: derived statistics as in docs/schema.md
    finished TEXT NOT NULL,
    PRIMARY KEY (run_id, cell_key)
);
CREATE TABLE IF NOT EXISTS locks (   -- the process measuring a run (one at a time), and when it last said so
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started REAL NOT NULL,
    heartbeat REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (  -- a run's units of work spread over several places (targets/mcu/lab/leases.py)
    run_id INTEGER NOT NULL REFERENCES runs(id),
    unit TEXT NOT NULL,              -- one firmware image's cells: "LIBRARY OP"
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,             -- todo | leased | done
    owner TEXT,                      -- the worker holding it: "host:pid"
    place TEXT,                      -- the place that worker measures on
    expires REAL NOT NULL,           -- time.time() after which a silent holder loses it
    attempts INTEGER NOT NULL,
    PRIMARY KEY (run_id, unit)
);
CREATE TABLE IF NOT EXISTS holds (   -- labgrid places a worker acquired and has not released yet
    coordinator TEXT NOT NULL,
    place TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    acquired REAL NOT NULL,
    PRIMARY KEY (coordinator, place)
);
"""
OUR_TABLES = {"runs", "cells"}


# The store's version (SQLite: PRAGMA user_version; PostgreSQL: store_meta). 0: written before
# stores were versioned (up to and including 8b58c6d); 2: the locks table; 3: the leases and
# holds tables of runs spread over several labgrid places; each step of
# MIGRATIONS lifts a database one version, in one transaction (new tables come from SCHEMA's
# CREATE TABLE IF NOT EXISTS).
STORE_VERSION = 3


def _plan_options_v1(plan: dict) -> dict:
    """0 -> 1: the CLI-only flags repeat_from_cli / min_time_from_cli become the plan's `overrides`
    (what the command line set over each bench's own value), and `fixed_samples` is set: a run of
    that time took exactly `repeat` samples per cell, which is what resuming it must keep doing."""
    opts = plan.get("options") or {}
    if "overrides" not in opts:
        opts["overrides"] = [k for k in ("repeat", "min_time") if opts.get(f"{k}_from_cli")]
    opts.pop("repeat_from_cli", None)
    opts.pop("min_time_from_cli", None)
    opts.setdefault("fixed_samples", True)
    plan["options"] = opts
    return plan


def _migrate_0_to_1(db) -> None:
    for run_id, plan in db.execute("SELECT id, plan FROM runs").fetchall():
        db.execute("UPDATE runs SET plan = ? WHERE id = ?", (json.dumps(_plan_options_v1(json.loads(plan))), run_id))


MIGRATIONS = {0: _migrate_0_to_1, 1: lambda db: None, 2: lambda db: None}
LOCK_STALE_S = 120.0      # a lock whose heartbeat is older than this belongs to a process that is gone


def default_location() -> StoreLocation:
    """The store when --db is not given: $CRYPTOBENCH_DB, else results.sqlite in the user data dir."""
    env = os.environ.get("CRYPTOBENCH_DB")
    if env:
        return parse_location(env, "CRYPTOBENCH_DB")
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return parse_location(str(base / "cryptobench" / "results.sqlite"))


def default_db_path() -> Path | str:
    """default_location()'s file path or URL."""
    return default_location().target


def store_location(given) -> StoreLocation:
    """The store a command's --db names (parsed: location.py), else the default one."""
    return parse_location(given) if given not in (None, "") else default_location()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def run_target_text(target: dict, measured: dict) -> str:
    """A run's target on one line as asked: "sim:cortex-m0 stm32f030 @8 MHz" (the core, device and
    clock the simulator ran; `measured` is the conditions' target, which has the clock), else
    "board:nucleo-f030r8", "qemu:mps2-an385"."""
    if TargetView(target).simulated and target.get("core"):
        hz = measured.get("clock_hz")
        return f"sim:{target['core']}" + (f" {target['device']}" if target.get("device") else "") \
            + (f" @{hz / 1e6:g} MHz" if isinstance(hz, (int, float)) and hz > 0 else "")
    return f"{target.get('kind')}:{target.get('board') or target.get('core')}"


class RunLocked(UsageError):
    """Another live process is measuring the run."""


class Store:
    def __init__(self, path: Path | str | StoreLocation | None = None, migrate: bool = False, create: bool = True):
        """The store at `path` (a SQLite file, or a postgresql:// URL; default: $CRYPTOBENCH_DB or
        the user data dir). A SQLite file is brought up to date as it opens, as it always was; a
        shared PostgreSQL database only by `cryptobench db migrate` (migrate=True), so that one
        machine's newer cryptobench does not change the schema under the others. Without `create`
        (every command that only reads) the store must exist: no file, folder or table is made."""
        self.location = store_location(path)
        self.backend = open_backend(self.location, create=create)
        self.path, self.label = self.location.target, self.location.label
        self.migrated_from: int | None = None
        with self.backend.writing("open"):
            self._open(migrate or self.backend.kind == "sqlite", create)

    def _open(self, migrate: bool, create: bool = True) -> None:
        """Create the tables of a new database, or bring an older one up to STORE_VERSION. A
        database that holds another program's tables is refused before anything is written to it."""
        b = self.backend
        version = b.version()
        tables = b.tables() - {"store_meta"}
        fresh = not tables
        if fresh and not create:
            raise UsageError(f"{self.label}: no cryptobench store there (the database holds no tables); this "
                             "command only reads a store, so none was created")
        if not fresh and not OUR_TABLES <= tables:
            shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
            raise UsageError(f"{self.label}: not a cryptobench database (it holds other tables: {shown}); "
                             "nothing was written to it; give --db a cryptobench database or a new "
                             + ("file" if b.kind == "sqlite" else "database"))
        if version > STORE_VERSION:
            raise UsageError(f"{self.label}: written by a newer cryptobench (store version {version}; this one "
                             f"reads up to {STORE_VERSION}); upgrade cryptobench to read it")
        if not fresh and version == STORE_VERSION:
            return                                  # nothing to write: a read-only database opens too
        if not fresh and not migrate:
            raise UsageError(f"{self.label}: store version {version}, this cryptobench writes {STORE_VERSION}; "
                             "bring it up to date once, for every machine that shares it: "
                             f"cryptobench db migrate --db {self.label}")
        with b.transaction():
            b.script(SCHEMA)
            if not fresh:
                for step in range(version, STORE_VERSION):
                    MIGRATIONS[step](b)
                self.migrated_from = version
            b.set_version(STORE_VERSION)

    @property
    def version(self) -> int:
        return self.backend.version()

    def close(self) -> None:
        self.backend.close()

    def _write(self, what: str, sql: str, params: tuple):
        """One statement in its own transaction (re-run on a new connection if the server dropped
        the old one: store_backends.PostgresBackend)."""
        return self.backend.write(what, lambda: self.backend.execute(sql, params))

    def create_run(self, plan: Plan, conditions: Mapping) -> int:
        # a connection lost at the very COMMIT, after the server made the row, leaves that row behind when
        # the write is re-run: an empty run, listed as interrupted, never one holding cells twice
        row = self.backend.write("a new run", lambda: self.backend.execute(
            "INSERT INTO runs (created, status, suite, plan, conditions) VALUES (?, 'running', ?, ?, ?) RETURNING id",
            (now(), plan.suite, json.dumps(plan.to_json()), json.dumps(dict(conditions)))).fetchone())
        return int(row[0])

    def set_status(self, run_id: int, status: str) -> None:
        self._write("the run's status", "UPDATE runs SET status = ?, finished = ? WHERE id = ?",
                    (status, now() if status == "complete" else None, run_id))

    def update_conditions(self, run_id: int, conditions: Mapping) -> None:
        self._write("the run's conditions", "UPDATE runs SET conditions = ? WHERE id = ?",
                    (json.dumps(dict(conditions)), run_id))

    def merge_conditions(self, run_id: int, path: tuple[str, ...], value) -> None:
        """Set one entry deep in the run's conditions (creating the tables on the way), with no
        other writer between the read and the write: several lab workers each add their place's."""
        def merge() -> None:
            row = self.backend.execute("SELECT conditions FROM runs WHERE id = ?", (run_id,)).fetchone()
            conditions = json.loads(row[0]) if row else {}
            at = conditions
            for key in path[:-1]:
                at = at.setdefault(key, {})
            at[path[-1]] = value
            self.backend.execute("UPDATE runs SET conditions = ? WHERE id = ?", (json.dumps(conditions), run_id))
        self.backend.write("the run's conditions", merge, exclusive="runs")

    def save_cell(self, run_id: int, cell: Cell) -> None:
        """One finished cell, in its own transaction."""
        self.backend.write("a cell", lambda: self.insert_cell(run_id, cell))

    def save_cells(self, run_id: int, cells: list[Cell], conditions: Mapping | None = None) -> None:
        """Several cells and optionally the run's conditions, all or nothing."""
        def insert() -> None:
            for cell in cells:
                self.insert_cell(run_id, cell)
            if conditions is not None:
                self.backend.execute("UPDATE runs SET conditions = ? WHERE id = ?", (json.dumps(dict(conditions)), run_id))
        self.backend.write("cells", insert)

    def insert_cell(self, run_id: int, cell: Cell) -> None:
        """One cell's row, inside a transaction the caller holds (save_cell, targets/mcu/lab/leases.py)."""
        d = cell.to_json()
        self.backend.execute(
            "INSERT INTO cells (run_id, cell_key, seq, op, params, engine, target, provenance,"
            " status, kat, detail, samples, result, finished) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (run_id, cell_key) DO UPDATE SET seq = excluded.seq, op = excluded.op,"
            " params = excluded.params, engine = excluded.engine, target = excluded.target,"
            " provenance = excluded.provenance, status = excluded.status, kat = excluded.kat,"
            " detail = excluded.detail, samples = excluded.samples, result = excluded.result,"
            " finished = excluded.finished",
            (run_id, cell.key, cell.seq, cell.op, cell.params.key, cell.engine, cell.target, cell.provenance,
             cell.status, cell.kat, cell.detail, json.dumps(d["samples"]), json.dumps(d["result"]), now()))

    def resolve_run_id(self, ref: str | int) -> int:
        if str(ref) == "latest":
            row = self.backend.execute("SELECT MAX(id) AS id FROM runs").fetchone()
            if row["id"] is None:
                raise UsageError(f"{self.label}: no runs stored yet")
            return int(row["id"])
        try:
            run_id = int(ref)
        except ValueError:
            raise UsageError(f"run id must be an integer or 'latest', got {ref!r}")
        if not self.backend.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
            raise UsageError(f"{self.label}: no run {run_id}")
        return run_id

    def run_summaries(self) -> list[dict]:
        """One line per stored run, oldest first: id, created, status, suite, label, target, cells
        (and how many failed). A run marked running that no live process holds is reported as
        interrupted (its process was killed before it could say so): at once when the lock's
        process was on this machine and is gone, else once its heartbeat is LOCK_STALE_S old."""
        this_host = socket.gethostname()
        held = {r[0] for r in self.backend.execute("SELECT run_id, pid, host, started FROM locks WHERE heartbeat > ?",
                                                   (time.time() - LOCK_STALE_S,))
                if _alive(r[1], r[2], r[3], this_host)}
        counts = {r[0]: (r[1], r[2]) for r in self.backend.execute(
            "SELECT run_id, COUNT(*), SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) FROM cells GROUP BY run_id")}
        out = []
        for row in self.backend.execute("SELECT id, created, status, suite, plan, conditions FROM runs ORDER BY id"):
            plan = json.loads(row["plan"])
            target = plan.get("target") or {}
            status = row["status"]
            if status == "running" and row["id"] not in held:
                status = "interrupted"
            cells, failed = counts.get(row["id"], (0, 0))
            out.append({"id": row["id"], "created": row["created"], "status": status, "suite": row["suite"] or "",
                        "label": plan.get("label") or "", "cells": cells, "failed": failed or 0,
                        "target": "trace" if plan.get("kind") == "trace" else
                        run_target_text(target, json.loads(row["conditions"]).get("target") or {})
                        if target else "host"})
        return out

    def load_run(self, run_id: int, cells: bool = True) -> Run:
        """The run with its cells; cells=False: its plan and conditions only, for a command that
        streams the cells (iter_cells) rather than holding them all (report, export)."""
        row = self.backend.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UsageError(f"{self.label}: no run {run_id}")
        try:
            plan = Plan.from_json(json.loads(row["plan"]))
        except TargetSpecError as exc:             # a stored target this version cannot read: one line
            raise UsageError(f"{self.label}: run {run_id}: its stored target is not one this cryptobench "
                             f"reads ({printable(str(exc))})") from None
        return Run(id=row["id"], created=row["created"], finished=row["finished"], status=row["status"],
                   suite=row["suite"], plan=plan,
                   conditions=Conditions(json.loads(row["conditions"])),
                   cells=list(self.iter_cells(run_id)) if cells else [])

    def iter_cells(self, run_id: int, samples: bool = True):
        """The run's cells in plan order, read from the database a batch at a time; samples=False
        leaves the raw samples unread (an export of cell rows does not need them)."""
        columns = "seq, op, params, engine, target, provenance, status, kat, detail, result" + (
            ", samples" if samples else "")
        for c in self.backend.stream(f"SELECT {columns} FROM cells WHERE run_id = ? ORDER BY seq", (run_id,)):
            try:
                cell = Cell.from_json({
                    "op": c["op"], "params": json.loads(c["params"]), "engine": c["engine"], "target": c["target"],
                    "provenance": c["provenance"], "status": c["status"], "kat": c["kat"], "detail": c["detail"],
                    "samples": json.loads(c["samples"] or "null") if samples else None,
                    "result": json.loads(c["result"] or "null"), "seq": c["seq"]})
            except VocabularyError as exc:      # a store another program wrote into: one line
                raise UsageError(f"{self.label}: run {run_id}, cell {c['seq']}: {printable(str(exc))}") from None
            yield cell

    def cell_engines(self, run_id: int) -> list[str]:
        """The engines the run's cells name."""
        return sorted(r[0] for r in self.backend.execute("SELECT DISTINCT engine FROM cells WHERE run_id = ?",
                                                         (run_id,)))

    def iter_params(self, run_id: int):
        """The parameters of each of the run's cells (only them: what an export's columns need)."""
        for c in self.backend.stream("SELECT params FROM cells WHERE run_id = ?", (run_id,)):
            yield json.loads(c["params"])

    def done_keys(self, run_id: int) -> set[str]:
        """Keys of the cells that are finished: measured, or unsupported by their engine. A
        `partial` cell is resumed, not redone; a `failed` one (a crashed harness, a device that went
        away) is measured again by --resume."""
        return {r["cell_key"] for r in self.backend.execute(
            "SELECT cell_key FROM cells WHERE run_id = ? AND status NOT IN ('partial', 'failed')", (run_id,))}

    # --- the run lock: one process measures a run at a time ------------------------------------
    def lock_run(self, run_id: int, pid: int | None = None) -> str | None:
        """Take the run for this process. Raises RunLocked when another live process holds it; a
        stale lock (its process gone, or silent for LOCK_STALE_S) is taken over, and the returned
        line says so (None when the run was free)."""
        pid, host, now_s = pid or os.getpid(), socket.gethostname(), time.time()
        def take() -> str | None:            # no other writer between the look and the take
            row = self.backend.execute("SELECT pid, host, heartbeat, started FROM locks WHERE run_id = ?",
                                       (run_id,)).fetchone()
            note = None
            if row is not None and (row[0], row[1]) != (pid, host):
                age = now_s - row[2]
                if _alive(row[0], row[1], row[3], host) and age < LOCK_STALE_S:
                    raise RunLocked(f"run {run_id} is being measured by process {row[0]} on {row[1]} (last heard "
                                    f"{age:.0f} s ago); wait for it, or stop it first")
                note = (f"run {run_id}: taking over the lock of process {row[0]} on {row[1]} (gone, or silent "
                        f"for {age:.0f} s)")
            self.backend.execute("INSERT INTO locks (run_id, pid, host, started, heartbeat) VALUES (?,?,?,?,?) "
                                 "ON CONFLICT (run_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, "
                                 "started = excluded.started, heartbeat = excluded.heartbeat",
                                 (run_id, pid, host, now_s, now_s))
            return note
        return self.backend.write("the run lock", take, exclusive="locks")

    def unlock_run(self, run_id: int) -> None:
        self._write("the run lock", "DELETE FROM locks WHERE run_id = ? AND pid = ?", (run_id, os.getpid()))


def heartbeat(path, run_id: int) -> bool:
    """Say that this process still measures the run (its lock's heartbeat): the Runner's heartbeat
    thread calls it while the main thread writes through the Store."""
    return write_aside(path, "the heartbeat", "UPDATE locks SET heartbeat = ? WHERE run_id = ? AND pid = ?",
                       (time.time(), run_id, os.getpid()))


def write_aside(location, what: str, sql: str, params: tuple) -> bool:
    """One statement on a connection of its own, for a thread that beats beside the one writing
    through the Store (the run lock's heartbeat, a lab worker's lease renewal). False when the
    database was busy or away: a missed beat is not an error, the next one tries again."""
    try:
        # a busy database or a lost server: skip this beat, not block the run (no retry, nothing created)
        backend = open_backend(location, timeout_s=5.0, create=False, retry=False)
    except UsageError:
        return False
    try:
        backend.write(what, lambda: backend.execute(sql, params))
    except Exception:              # noqa: BLE001 - a missed beat is not an error; the next one tries again
        return False
    finally:
        backend.close()
    return True


def _alive(pid: int, host: str, started: float, this_host: str) -> bool:
    """Whether the lock's process still runs: known only on this host, where a process with its id
    that started after the lock was taken is another one (the id reused); elsewhere, assume it
    does and let the heartbeat's age decide."""
    return host != this_host or process_alive(int(pid), since=float(started))

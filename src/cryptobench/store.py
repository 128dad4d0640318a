"""The result store: SQLite, one transaction per finished cell.

A run row holds the plan and the conditions; a cell row holds one (op, params, engine) result with
its raw samples, so statistics can always be recomputed. An interrupted run keeps every finished
cell; `--resume` runs only the cells that have no row yet.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

from .errors import UsageError
from .records import Cell, Conditions, Plan, Run

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
"""


# PRAGMA user_version of the database. 0: written before stores were versioned (up to and
# including 8b58c6d); each step of MIGRATIONS lifts a database one version, in one transaction.
STORE_VERSION = 1


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


def _migrate_0_to_1(db: sqlite3.Connection) -> None:
    for run_id, plan in db.execute("SELECT id, plan FROM runs").fetchall():
        db.execute("UPDATE runs SET plan = ? WHERE id = ?", (json.dumps(_plan_options_v1(json.loads(plan))), run_id))


MIGRATIONS = {0: _migrate_0_to_1}


def default_db_path() -> Path:
    env = os.environ.get("CRYPTOBENCH_DB")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "cryptobench" / "results.sqlite"


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class Store:
    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path else default_db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(str(self.path), timeout=30)
            self._open()
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{self.path}: not a usable cryptobench database ({exc})")
        self.db.row_factory = sqlite3.Row

    def _open(self) -> None:
        """Create the tables of a new database, or bring an older one up to STORE_VERSION."""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        fresh = not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone()
        if version > STORE_VERSION:
            raise UsageError(f"{self.path}: written by a newer cryptobench (store version {version}; this one "
                             f"reads up to {STORE_VERSION}); upgrade cryptobench to read it")
        with self.db:
            self.db.executescript(SCHEMA)
            if not fresh:
                for step in range(version, STORE_VERSION):
                    MIGRATIONS[step](self.db)
            self.db.execute(f"PRAGMA user_version = {STORE_VERSION}")

    def close(self) -> None:
        self.db.close()

    def create_run(self, plan: Plan, conditions: Mapping) -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs (created, status, suite, plan, conditions) VALUES (?, 'running', ?, ?, ?)",
                (now(), plan.suite, json.dumps(plan.to_json()), json.dumps(dict(conditions))))
        return int(cur.lastrowid)

    def set_status(self, run_id: int, status: str) -> None:
        with self.db:
            self.db.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ?",
                            (status, now() if status == "complete" else None, run_id))

    def update_conditions(self, run_id: int, conditions: Mapping) -> None:
        with self.db:
            self.db.execute("UPDATE runs SET conditions = ? WHERE id = ?", (json.dumps(dict(conditions)), run_id))

    def save_cell(self, run_id: int, cell: Cell) -> None:
        """One finished cell, in its own transaction."""
        with self.db:
            self._insert_cell(run_id, cell)

    def save_cells(self, run_id: int, cells: list[Cell], conditions: Mapping | None = None) -> None:
        """Several cells and optionally the run's conditions, all or nothing."""
        with self.db:
            for cell in cells:
                self._insert_cell(run_id, cell)
            if conditions is not None:
                self.db.execute("UPDATE runs SET conditions = ? WHERE id = ?", (json.dumps(dict(conditions)), run_id))

    def _insert_cell(self, run_id: int, cell: Cell) -> None:
        d = cell.to_json()
        self.db.execute(
            "INSERT OR REPLACE INTO cells (run_id, cell_key, seq, op, params, engine, target, provenance,"
            " status, kat, detail, samples, result, finished) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, cell.key, cell.seq, cell.op, cell.params.key, cell.engine, cell.target, cell.provenance,
             cell.status, cell.kat, cell.detail, json.dumps(d["samples"]), json.dumps(d["result"]), now()))

    def resolve_run_id(self, ref: str | int) -> int:
        if str(ref) == "latest":
            row = self.db.execute("SELECT MAX(id) AS id FROM runs").fetchone()
            if row["id"] is None:
                raise UsageError(f"{self.path}: no runs stored yet")
            return int(row["id"])
        try:
            run_id = int(ref)
        except ValueError:
            raise UsageError(f"run id must be an integer or 'latest', got {ref!r}")
        if not self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
            raise UsageError(f"{self.path}: no run {run_id}")
        return run_id

    def load_run(self, run_id: int) -> Run:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UsageError(f"{self.path}: no run {run_id}")
        cells = [Cell.from_json({
                    "op": c["op"], "params": json.loads(c["params"]), "engine": c["engine"],
                    "target": c["target"], "provenance": c["provenance"], "status": c["status"],
                    "kat": c["kat"], "detail": c["detail"], "samples": json.loads(c["samples"] or "null"),
                    "result": json.loads(c["result"] or "null"), "seq": c["seq"]})
                 for c in self.db.execute("SELECT * FROM cells WHERE run_id = ? ORDER BY seq", (run_id,))]
        return Run(id=row["id"], created=row["created"], finished=row["finished"], status=row["status"],
                   suite=row["suite"], plan=Plan.from_json(json.loads(row["plan"])),
                   conditions=Conditions(json.loads(row["conditions"])), cells=cells)

    def done_keys(self, run_id: int) -> set[str]:
        """Keys of the cells that are finished (a `partial` cell is resumed, not redone)."""
        return {r["cell_key"] for r in self.db.execute(
            "SELECT cell_key FROM cells WHERE run_id = ? AND status != 'partial'", (run_id,))}

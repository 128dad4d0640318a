"""Leases: how several workers (one per labgrid place, on one machine or many) share one run's
cells through the store, so that no cell is measured twice and none is lost.

A unit is what one firmware image measures: one library's cells of one operation. The run's
process writes the units that still need measuring as `todo`; a worker takes the first free unit
(todo, or leased by a worker whose lease has expired) in one exclusive transaction, renews its
leases while it works (a heartbeat on its own connection), and hands the unit's cells in with
`finish`, which stores them only if the worker still holds the lease, in the same transaction
that marks the unit done. A worker that dies stops renewing; once its lease expires another
worker takes the unit and measures it again, and the dead worker's cells, had it come back, would
be refused. Places acquired by a worker are recorded in `holds` until released, so a later run
can say which place a killed run left acquired."""
from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass

from ....core.records import Cell, Plan, cell_key
from ....store.database import Store, write_aside

TODO, LEASED, DONE = "todo", "leased", "done"
DEFAULT_LEASE_S = 60.0         # a silent worker's units go back to the others after this


def owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def unit_name(library: str, op: str) -> str:
    return f"{library} {op}"


def split_unit(unit: str) -> tuple[str, str]:
    library, _, op = unit.rpartition(" ")
    return library, op


def plan_units(plan: Plan) -> list[str]:
    """A microcontroller plan's units in the order the single-board target measures them
    (library by library, operation by operation)."""
    ops = list(dict.fromkeys(g.op for g in plan.groups))
    return [unit_name(lib, op) for lib in plan.options.engines for op in ops]


def unit_keys(plan: Plan, unit: str) -> set[str]:
    library, op = split_unit(unit)
    return {cell_key(g.op, g.params, library) for g in plan.groups if g.op == op}


@dataclass
class Taken:
    unit: str
    attempts: int                   # 1 the first time; more when a worker before this one lost it
    previous: str | None            # the owner whose lease expired, if any


class Leases:
    """The lease table of one run."""

    def __init__(self, store: Store, run_id: int):
        self.store, self.run_id, self.b = store, run_id, store.backend

    def prepare(self, plan: Plan) -> int:
        """Write the run's units afresh: done where every cell of the unit is finished (a resumed
        run), todo otherwise. Workers of an earlier process lose whatever they held. Returns the
        number of units to measure."""
        done = self.store.done_keys(self.run_id)
        states = [DONE if unit_keys(plan, unit) <= done else TODO for unit in plan_units(plan)]
        def write() -> None:
            self.b.execute("DELETE FROM leases WHERE run_id = ?", (self.run_id,))
            for seq, (unit, state) in enumerate(zip(plan_units(plan), states)):
                self.b.execute("INSERT INTO leases (run_id, unit, seq, state, owner, place, expires, attempts) "
                               "VALUES (?, ?, ?, ?, NULL, NULL, 0, 0)", (self.run_id, unit, seq, state))
        self.b.write("the run's leases", write, exclusive="leases")
        return states.count(TODO)

    def take(self, owner: str, place: str, lease_s: float) -> Taken | None:
        """The next free unit, leased to `owner` for `lease_s`; None when none is free now."""
        def take() -> Taken | None:       # re-run whole, with a new time, if the connection was lost
            now_s = time.time()
            row = self.b.execute(
                "SELECT unit, owner, attempts FROM leases WHERE run_id = ? AND (state = 'todo' OR "
                "(state = 'leased' AND expires < ?)) ORDER BY seq LIMIT 1", (self.run_id, now_s)).fetchone()
            if row is None:
                return None
            self.b.execute("UPDATE leases SET state = 'leased', owner = ?, place = ?, expires = ?, "
                           "attempts = attempts + 1 WHERE run_id = ? AND unit = ?",
                           (owner, place, now_s + lease_s, self.run_id, row[0]))
            return Taken(row[0], int(row[2]) + 1, row[1])
        return self.b.write("a lease", take, exclusive="leases")

    def finish(self, unit: str, owner: str, cells: list[Cell]) -> bool:
        """Store the unit's cells and mark it done, if `owner` still holds it; False (nothing
        stored) when its lease expired and another worker took the unit."""
        def finish() -> bool:
            row = self.b.execute("SELECT owner, state FROM leases WHERE run_id = ? AND unit = ?",
                                 (self.run_id, unit)).fetchone()
            if row is not None and row[0] == owner and row[1] == DONE:
                return True               # a re-run after its own commit, whose answer the lost connection took
            if row is None or row[0] != owner or row[1] != LEASED:
                return False
            for cell in cells:
                self.store.insert_cell(self.run_id, cell)
            self.b.execute("UPDATE leases SET state = 'done', expires = 0 WHERE run_id = ? AND unit = ?",
                           (self.run_id, unit))
            return True
        return self.b.write("a unit's cells", finish, exclusive="leases")

    def give_back(self, unit: str, owner: str) -> None:
        """A unit this worker will not finish (it is stopping): free at once, not after the lease."""
        self.b.write("a lease", lambda: self.b.execute(
            "UPDATE leases SET state = 'todo', owner = NULL, expires = 0 WHERE run_id = ? AND "
            "unit = ? AND owner = ? AND state = 'leased'", (self.run_id, unit, owner)))

    def counts(self) -> dict:
        """{"todo": n, "leased": n, "done": n, "expired": n} now."""
        now_s = time.time()
        out = {TODO: 0, LEASED: 0, DONE: 0, "expired": 0}
        for state, expires in self.b.execute("SELECT state, expires FROM leases WHERE run_id = ?", (self.run_id,)):
            out[state] += 1
            if state == LEASED and expires < now_s:
                out["expired"] += 1
        return out

    def done_units(self) -> list[str]:
        return [r[0] for r in self.b.execute("SELECT unit FROM leases WHERE run_id = ? AND state = 'done'",
                                             (self.run_id,))]

    def next_expiry(self) -> float | None:
        row = self.b.execute("SELECT MIN(expires) FROM leases WHERE run_id = ? AND state = 'leased'",
                             (self.run_id,)).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def by_place(self) -> dict[str, int]:
        """Units done per place (progress and the closing summary)."""
        return {r[0]: int(r[1]) for r in self.b.execute(
            "SELECT place, COUNT(*) FROM leases WHERE run_id = ? AND state = 'done' AND place IS NOT NULL "
            "GROUP BY place", (self.run_id,))}


def renew(location: str, run_id: int, owner: str, lease_s: float) -> bool:
    """Push the expiry of every unit `owner` holds (the worker's lease-renewing thread)."""
    return write_aside(location, "a lease", "UPDATE leases SET expires = ? WHERE run_id = ? AND owner = ? AND "
                       "state = 'leased'", (time.time() + lease_s, run_id, owner))


# --- holds: places acquired and not (yet) released ---------------------------------------------
def record_hold(store: Store, coordinator: str, place: str, run_id: int) -> None:
    store.backend.write("a place hold", lambda: store.backend.execute(
        "INSERT INTO holds (coordinator, place, run_id, pid, host, acquired) VALUES (?,?,?,?,?,?) "
        "ON CONFLICT (coordinator, place) DO UPDATE SET run_id = excluded.run_id, pid = excluded.pid, "
        "host = excluded.host, acquired = excluded.acquired",
        (coordinator, place, run_id, os.getpid(), socket.gethostname(), time.time())))


def drop_hold(store: Store, coordinator: str, place: str) -> None:
    store.backend.write("a place hold", lambda: store.backend.execute(
        "DELETE FROM holds WHERE coordinator = ? AND place = ?", (coordinator, place)))


def holds(store: Store, coordinator: str) -> list[dict]:
    return [{"place": r[0], "run_id": int(r[1]), "pid": int(r[2]), "host": r[3], "acquired": float(r[4])}
            for r in store.backend.execute("SELECT place, run_id, pid, host, acquired FROM holds WHERE coordinator = ? "
                                           "ORDER BY place", (coordinator,))]


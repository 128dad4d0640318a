"""A lab worker: one labgrid place measuring the units of one run it leases from the store, until
none is left. `cryptobench run --target labgrid:A,B` starts one per place (and runs a single
place's in its own process); a machine elsewhere that shares the store and the coordinator can
join a run with

    python -m cryptobench.targets.mcu.lab.worker --run RUN --place PLACE     # CRYPTOBENCH_DB, LG_COORDINATOR set

The worker acquires its place (recording the hold in the store), releases it when it stops, on
an error, Ctrl-C or SIGTERM, and gives back the unit it was measuring; a worker killed outright
keeps its lease until it expires, and then another worker measures that unit again."""
from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import time
from dataclasses import replace
from typing import Callable

from ....core.errors import UsageError
from ....core.periodic import Every
from ....core.printable import printable
from ....core.processes import interrupt_on_sigterm, process_alive
from ....core.records import Cell, LabSpec, Plan
from ....store.database import Store
from ...base import RunSession
from .leases import DEFAULT_LEASE_S, Leases, drop_hold, holds, owner_id, record_hold, renew, split_unit
from .places import Lab, PlaceBoard, PlaceBusy
from ..target import McuTarget
from ..boards import BOARDS
from ..transports import PlaceTransport


class UnitSession(RunSession):
    """The session a leased unit is measured in: its cells are kept until the unit is finished,
    then stored with the lease check (Leases.finish), all or nothing."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cells: list[Cell] = []

    def save_cell(self, cell: Cell) -> None:
        self.cells.append(cell)

    def save_cells(self, cells: list[Cell], conditions: dict | None = None) -> None:
        self.cells.extend(cells)


def acquire(lab: Lab, store: Store, place: str, run_id: int, log: Callable[[str], None]) -> None:
    """Acquire `place`; a hold this host's dead process left behind is released first (it was ours)."""
    info = lab.info(place)
    if info.acquired:
        mine = {h["place"]: h for h in holds(store, lab.address)}.get(place)
        if info.acquired != lab.who():
            raise PlaceBusy(f"labgrid place {place} is acquired by {info.acquired}")
        if mine is None or (mine["host"] == socket.gethostname() and process_alive(mine["pid"])):
            who = f"process {mine['pid']} (run {mine['run_id']})" if mine else "you, outside cryptobench"
            raise PlaceBusy(f"labgrid place {place} is acquired by {info.acquired}: {who}; release it with "
                            f"`labgrid-client -p {place} release` when it is done")
        if mine["host"] != socket.gethostname():
            raise PlaceBusy(f"labgrid place {place} is held by process {mine['pid']} on {mine['host']} (run "
                            f"{mine['run_id']})")
        log(f"labgrid place {place}: left acquired by run {mine['run_id']} (process {mine['pid']}, gone); "
            "releasing it and taking it")
        lab.release(place)
    lab.acquire(place)
    record_hold(store, lab.address, place, run_id)


def release(lab: Lab, store: Store, place: str) -> None:
    with contextlib.suppress(Exception):
        lab.release(place)
    drop_hold(store, lab.address, place)


def place_conditions(info, board: PlaceBoard, lab: Lab) -> dict:
    from importlib.metadata import version
    return {"tags": info.tags, "resources": board.resources(), "emulated": info.emulated,
            "exporters": sorted({r["exporter"] for r in info.resources}), "acquired_by": lab.who(),
            "labgrid": version("labgrid")}


def work(store: Store, run_id: int, plan: Plan, place: str, lease_s: float = DEFAULT_LEASE_S,
         log: Callable[[str], None] = lambda s: None, mcu=None) -> int:
    """Measure leased units of `run_id` on `place` until none is left; returns how many it
    finished. `mcu`: an opened McuTarget to measure with (the single-place run passes its own);
    otherwise one is made and opened here."""
    t = plan.target
    # labgrid's own variable first: a worker on another machine reaches the coordinator by its own route
    lab = Lab(os.environ.get("LG_COORDINATOR") or t.coordinator)
    leases, owner, finished = Leases(store, run_id), owner_id(), 0
    board = None
    acquired = False
    try:
        acquire(lab, store, place, run_id, log)
        acquired = True
        info = lab.info(place)
        board = PlaceBoard(lab, place, flash=not t.no_flash)
        wplan = replace(plan, target=replace(t, place=place, emulated=info.emulated))
        transport = PlaceTransport(wplan.target, BOARDS[t.board], board)
        if mcu is None:
            mcu = McuTarget(wplan, log=log, transport=transport)
            mcu.open()
        else:
            mcu.on_place(wplan, transport)
        store.merge_conditions(run_id, ("target", "place_details", place), place_conditions(info, board, lab))
        with Every(max(0.2, lease_s / 4), lambda: renew(store.path, run_id, owner, lease_s)):
            while True:
                taken = leases.take(owner, place, lease_s)
                if taken is None:
                    counts = leases.counts()
                    if counts["todo"] == 0 and counts["leased"] == 0:
                        return finished
                    soonest = leases.next_expiry()     # a unit another worker holds: it may come free
                    time.sleep(min(1.0, max(0.05, (soonest or 0) - time.time() + 0.05)))
                    continue
                if taken.previous:
                    log(f"{place}: measuring {taken.unit} again (its lease by {taken.previous} expired)")
                library, op = split_unit(taken.unit)
                session = UnitSession(store, run_id, wplan, {}, log=log)
                try:
                    mcu.measure_unit(session, library, op)
                except BaseException:
                    with contextlib.suppress(Exception):
                        leases.give_back(taken.unit, owner)
                    raise
                if leases.finish(taken.unit, owner, session.cells):
                    finished += 1
                else:
                    log(f"{place}: {taken.unit} was taken over by another worker (lease expired); its cells are "
                        "theirs")
    finally:
        if mcu is not None:
            mcu.close()
        if board is not None:
            board.shut()
        if acquired:
            release(lab, store, place)
        lab.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cryptobench.targets.mcu.lab.worker", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="the run to work on (its id)")
    ap.add_argument("--place", required=True, help="the labgrid place to measure on")
    ap.add_argument("--lease", type=float, default=None, help="lease in seconds (default: the run's)")
    ap.add_argument("--db", default=None, help="the store (default: $CRYPTOBENCH_DB)")
    args = ap.parse_args(argv)
    log = stderr_log
    interrupt_on_sigterm()
    try:
        store = Store(args.db, create=False)      # the run's store: it exists, or this is the wrong one
        run_id = store.resolve_run_id(args.run)
        plan = store.load_run(run_id).plan
        if not isinstance(plan.target, LabSpec):
            raise UsageError(f"run {run_id} is not a labgrid run")
        lease_s = args.lease or (plan.target.lease_s or DEFAULT_LEASE_S)
        n = work(store, run_id, plan, args.place, lease_s, log)
        log(f"{args.place}: {n} unit(s) measured")
        return 0
    except UsageError as exc:
        log(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        log(f"{args.place}: interrupted; the place is released and its unit given back")
        return 130
    except Exception as exc:                        # noqa: BLE001 - the run's process reports the stop
        log(f"error: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
        return 1


def stderr_log(line: str) -> None:
    """A worker's line on stderr (its run relays it, or a terminal shows it): place names, the
    coordinator's and labgrid's words and firmware text are outside text, printed inert (printable)."""
    sys.stderr.write(printable(line) + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())

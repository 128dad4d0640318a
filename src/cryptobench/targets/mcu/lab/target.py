"""The labgrid target: the microcontroller target's firmware, protocol and cells, measured on
labgrid places (places.py) instead of a board on this machine's serial port.

The run's units (one library's cells of one operation) are leased through the store
(leases.py). One place: its worker runs in this process. Several: one worker process per
place (worker.py), all taking units from the same lease table, while this process shows the
progress, says when a worker stops, releases a place a killed worker left acquired, and fails the
run only when every worker has stopped with units left. Cells say which place measured them
(their target is labgrid:PLACE); the run's conditions hold each place's tags and resources."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from typing import Callable

from ....core.errors import HarnessError
from ....core.processes import STORE_CREDENTIALS, child_environment, process_alive
from ....core.records import Plan
from ...base import RunSession
from ..target import McuTarget
from .leases import Leases, drop_hold, holds, split_unit
from .places import Lab
from .worker import work


class LabTarget:
    kind = "mcu"

    def __init__(self, plan: Plan, progress: Callable | None = None, log: Callable[[str], None] = lambda s: None):
        self.plan, self.progress, self.log = plan, progress, log
        self.places: list[str] = plan.target.places
        self.mcu = McuTarget(plan, progress=progress, log=log)
        self.workers: dict[str, subprocess.Popen] = {}

    def open(self) -> dict:
        # the recipes are resolved (crates fetched) here once, before any worker builds with them;
        # the conditions' target is the plan's (its places among it)
        return self.mcu.open()

    def measure(self, session: RunSession) -> None:
        leases = Leases(session.store, session.run_id)
        left = leases.prepare(self.plan)
        self._report_holds(session)
        if not left:
            return
        lease_s = self.plan.target.lease_s
        if len(self.places) == 1:
            work(session.store, session.run_id, self.plan, self.places[0], lease_s, self.log, mcu=self.mcu)
            return
        self._spread(session, leases, lease_s)

    def close(self) -> None:
        for proc in self.workers.values():          # an interrupted run: each worker releases its place
            if proc.poll() is None:
                proc.terminate()
        for proc in self.workers.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.mcu.close()

    # --- several places ---------------------------------------------------------------------------
    def _spread(self, session: RunSession, leases, lease_s: float) -> None:
        # a worker is cryptobench's own process and opens the store: it alone gets its location and
        # PostgreSQL's password variables, and starts its own children without them (child_environment)
        env = child_environment({"CRYPTOBENCH_DB": str(session.store.path),
                                 "LG_COORDINATOR": self.plan.target.coordinator}, keep=STORE_CREDENTIALS)
        for place in self.places:
            self.workers[place] = proc = subprocess.Popen(
                [sys.executable, "-m", "cryptobench.targets.mcu.lab.worker", "--run", str(session.run_id), "--place", place,
                 "--lease", str(lease_s)],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            threading.Thread(target=self._relay, args=(place, proc), daemon=True).start()
        if self.progress:
            self.progress({"op": f"on {len(self.places)} places", "params": {}}, "start")
        reported: set[str] = set()
        done_units: set[str] = set()
        while True:
            # looked at before the counts, so that what a stopped worker finished is in them
            all_stopped = all(p.poll() is not None for p in self.workers.values())
            self._advance(leases, done_units)
            counts = leases.counts()
            if counts["todo"] == 0 and counts["leased"] == 0:
                break
            for place, proc in self.workers.items():
                if proc.poll() is not None and place not in reported:
                    reported.add(place)
                    self._stopped(session, place, proc.returncode, lease_s)
            # a worker that joined from another machine and still holds a unit is waited for
            if all_stopped and counts["leased"] == counts["expired"]:
                raise HarnessError(f"{counts['todo'] + counts['leased']} unit(s) of run {session.run_id} not "
                                   f"measured: every place's worker stopped; `cryptobench run --resume "
                                   f"{session.run_id}` measures them")
            time.sleep(0.3)
        for place, proc in self.workers.items():
            proc.wait()
            if place not in reported and proc.returncode != 0:
                self._stopped(session, place, proc.returncode, lease_s)
        per_place = leases.by_place()
        self.log("units per place: " + ", ".join(f"{p} {per_place.get(p, 0)}" for p in self.places))

    def _advance(self, leases, done_units: set) -> None:
        """Progress: the units finished since the last look, each as its cells."""
        for unit in leases.done_units():
            if unit in done_units:
                continue
            done_units.add(unit)
            if self.progress:
                library, op = split_unit(unit)
                n = sum(1 for g in self.plan.groups if g.op == op)
                self.progress({"op": op, "params": {"library": library}}, "end", n)

    def _relay(self, place: str, proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            self.log(f"[{place}] {line.rstrip()}")

    def _stopped(self, session: RunSession, place: str, code: int, lease_s: float) -> None:
        """A worker that ended before the run: say so, and release the place it could not."""
        how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
        self.log(f"worker for place {place} stopped ({how}); the unit it held goes to another place once its "
                 f"lease expires (at most {lease_s:g} s)")
        left = [h for h in holds(session.store, self.plan.target.coordinator)
                if h["place"] == place and h["host"] == socket.gethostname() and not process_alive(h["pid"])]
        if left:
            lab = Lab(self.plan.target.coordinator)
            try:
                lab.release(place)
                self.log(f"released labgrid place {place}, which its worker left acquired")
            except Exception as exc:               # noqa: BLE001 - reported: the next run says so again
                self.log(f"labgrid place {place}: could not release it ({exc}); `labgrid-client -p {place} release`")
                return
            finally:
                lab.close()
            drop_hold(session.store, self.plan.target.coordinator, place)

    def _report_holds(self, session: RunSession) -> None:
        """Places an earlier run acquired and never released (its process killed, its machine
        gone): said at the start of every labgrid run, until released."""
        for h in holds(session.store, self.plan.target.coordinator):
            here = h["host"] == socket.gethostname()
            if here and process_alive(h["pid"]):
                continue
            self.log(f"labgrid place {h['place']} was not released by run {h['run_id']} (process {h['pid']} on "
                     f"{h['host']}" + (", gone)" if here else ")") + (
                         "; it is taken back when a worker here needs it" if here else
                         f"; release it with `labgrid-client -p {h['place']} release` on {h['host']}"))

"""The one Runner: a run's lifecycle around any Target (targets/base.py). It creates the run (or
resumes a stored one), holds the run's lock while it measures (one process at a time; a heartbeat
thread keeps it fresh), turns SIGTERM into an interruption, marks the run complete or interrupted
(also when the target fails), and always closes the target. How cells are measured is the
target's business."""
from __future__ import annotations

import signal
from typing import Callable

from ..core.periodic import Every
from ..core.processes import interrupt_on_sigterm
from ..core.records import Conditions, Plan
from ..store.database import LOCK_STALE_S, Store, StoreUnavailable, heartbeat
from ..targets.base import RunSession, Target
from ..targets.select import target_for

HEARTBEAT_S = min(10.0, LOCK_STALE_S / 6)


class Runner:
    def __init__(self, store: Store, plan: Plan, target: Target | None = None, progress: Callable | None = None,
                 log: Callable[[str], None] = lambda s: None):
        self.store, self.plan, self.log = store, plan, log
        self.target = target if target is not None else target_for(plan, progress=progress, log=log)

    def run(self, run_id: int | None = None) -> int:
        locked = None
        try:
            if run_id is not None:     # before anything starts: a second process resuming the run stops here
                locked = self._lock(run_id)
            conditions = self.target.open()
            session = self._session(run_id, conditions)
            if locked is None:
                locked = self._lock(session.run_id)
            # says every few seconds, on its own connection, that this process still measures the
            # run (store.lock_run takes over a lock only when its heartbeat has gone quiet)
            with Every(HEARTBEAT_S, lambda: heartbeat(self.store.path, session.run_id)):
                self._measure(session)
            return session.run_id
        finally:
            self.target.close()
            if locked is not None:
                _unless_store_gone(lambda: self.store.unlock_run(locked))

    def _lock(self, run_id: int) -> int:
        note = self.store.lock_run(run_id)
        if note:
            self.log(note)
        return run_id

    def _session(self, run_id: int | None, conditions: dict) -> RunSession:
        previous = Conditions()
        if run_id is None:
            run_id = self.store.create_run(self.plan, conditions)
        else:
            previous = self.store.load_run(run_id).conditions
            self.store.update_conditions(run_id, conditions)
            self.store.set_status(run_id, "running")
        return RunSession(self.store, run_id, self.plan, conditions, previous, self.log)

    def _measure(self, session: RunSession) -> None:
        previous_handler = interrupt_on_sigterm()
        try:
            self.target.measure(session)
            self.store.set_status(session.run_id, "complete")
        except StoreUnavailable as exc:
            # the store's server went away and stayed away (store_backends.PostgresBackend): said
            # once more if it is back; else `list runs` shows the run interrupted once its lock is gone
            _unless_store_gone(lambda: self.store.set_status(session.run_id, "interrupted"))
            raise StoreUnavailable(f"{exc}; run {session.run_id} stops here, interrupted (its stored cells are "
                                   f"kept; `cryptobench run --resume {session.run_id}` measures the rest)") from None
        except BaseException:
            # Ctrl-C, SIGTERM, or the target gave up (a board that cannot be opened, a usage error
            # found late): the run is not left "running"; --resume completes it
            self.store.set_status(session.run_id, "interrupted")
            raise
        finally:
            signal.signal(signal.SIGTERM, previous_handler)


def _unless_store_gone(write: Callable[[], None]) -> None:
    """A closing write that cannot matter more than the error already on its way: skipped when the
    store's server is gone."""
    try:
        write()
    except StoreUnavailable:
        pass

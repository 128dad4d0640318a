"""The one Runner: a run's lifecycle around any Target (targets/base.py). It creates the run (or
resumes a stored one), turns SIGTERM into an interruption, marks the run complete or interrupted,
and always closes the target. How cells are measured is the target's business."""
from __future__ import annotations

import signal
from typing import Callable

from .records import Conditions, Plan
from .store import Store
from .targets.base import RunSession, Target


class Runner:
    def __init__(self, store: Store, plan: Plan, target: Target | None = None, progress: Callable | None = None,
                 log: Callable[[str], None] = lambda s: None):
        from .targets import target_for
        self.store, self.plan, self.log = store, plan, log
        self.target = target if target is not None else target_for(plan, progress=progress, log=log)

    def run(self, run_id: int | None = None) -> int:
        try:
            conditions = self.target.open()
            session = self._session(run_id, conditions)
            self._measure(session)
        finally:
            self.target.close()
        return session.run_id

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
        previous_handler = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            self.target.measure(session)
            self.store.set_status(session.run_id, "complete")
        except KeyboardInterrupt:
            self.store.set_status(session.run_id, "interrupted")
            raise
        finally:
            signal.signal(signal.SIGTERM, previous_handler)


def _raise_interrupt(signum, frame):
    """SIGTERM (a CI timeout, `kill`): stop like Ctrl-C, keeping every finished cell."""
    raise KeyboardInterrupt

"""The Target protocol: where and how a run's cells are measured. The Runner (runner.py) owns a
run's lifecycle (create or resume, signals, status); a Target owns measuring and the conditions it
reports. Targets: host (targets/host.py: library engines, secure elements, TPMs), mcu
(targets/mcu.py: firmware on QEMU, a board or the simulator), trace (targets/trace.py: the cells of
an imported energy trace). docs/adding-a-target.md shows how to add one."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..store import Store


@dataclass
class RunSession:
    """What a target sees of the run it measures: where finished cells go, and what a resumed run
    already holds. Each `save_cell` is its own transaction, so an interrupted run keeps every
    finished cell."""
    store: Store
    run_id: int
    plan: dict
    conditions: dict                         # what the target's open() reported for this run
    previous_conditions: dict = field(default_factory=dict)   # a resumed run's stored conditions
    log: Callable[[str], None] = lambda s: None

    def save_cell(self, seq: int, cell: dict) -> None:
        self.store.save_cell(self.run_id, seq, cell)

    def done_keys(self) -> set[str]:
        """Keys of the cells this run has finished (a resumed run measures only the others)."""
        return self.store.done_keys(self.run_id)


class Target(Protocol):
    """open() starts what the target needs and returns the run's conditions (host, device, build,
    engines); measure() measures every planned cell the session has not finished and saves each;
    close() releases everything open() started, whatever happened in between."""
    kind: str                                # "host", "mcu", "trace", …: how progress is shown

    def open(self) -> dict: ...

    def measure(self, session: RunSession) -> None: ...

    def close(self) -> None: ...

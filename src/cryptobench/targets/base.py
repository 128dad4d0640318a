"""The Target protocol: where and how a run's cells are measured. The Runner (runner/runner.py) owns a
run's lifecycle (create or resume, signals, status); a Target owns measuring and the conditions it
reports. Targets: host (targets/host/target.py: library engines, secure elements, TPMs), mcu
(targets/mcu/: firmware on QEMU, a board or the simulator), trace (targets/trace/target.py: the cells of
an imported energy trace). docs/adding-a-target.md shows how to add one."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..core.records import Cell, Conditions, Plan
from ..store.database import Store


@dataclass
class RunSession:
    """What a target sees of the run it measures: where finished cells go, and what a resumed run
    already holds. Each `save_cell` is its own transaction, so an interrupted run keeps every
    finished cell."""
    store: Store
    run_id: int
    plan: Plan
    conditions: dict                         # what the target's open() reported for this run
    previous_conditions: Conditions = field(default_factory=Conditions)   # a resumed run's stored conditions
    log: Callable[[str], None] = lambda s: None

    def save_cell(self, cell: Cell) -> None:
        self.store.save_cell(self.run_id, cell)

    def save_cells(self, cells: list[Cell], conditions: dict | None = None) -> None:
        """Several cells (and the run's conditions as they now stand) in one transaction: a host
        run's rounds end, or checkpoint, all cells at once."""
        self.store.save_cells(self.run_id, cells, conditions)

    def update_conditions(self, conditions: dict) -> None:
        self.store.update_conditions(self.run_id, conditions)

    def stored_cells(self) -> list[Cell]:
        """The cells the run already holds (a resumed run's finished and partial cells)."""
        return self.store.load_run(self.run_id).cells

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

"""The trace target: the cells an imported energy trace yields (`cryptobench energy import … --op`).
Nothing is measured live: open() reports the machine and the trace's conditions, measure() stores
the cells the import made from the file."""
from __future__ import annotations

from ...core.conditions import host_conditions
from ...core.records import Cell
from ..base import RunSession


class TraceTarget:
    kind = "trace"

    def __init__(self, cells: list[Cell], trace_info: dict):
        self.cells = cells               # each a finished cell (energy/importer.as_cell)
        self.trace_info = trace_info     # the file, its format, sample period, channels, options

    def open(self) -> dict:
        return {"host": host_conditions(), "trace": self.trace_info}

    def measure(self, session: RunSession) -> None:
        for seq, cell in enumerate(self.cells):
            cell.seq = seq
            session.save_cell(cell)

    def close(self) -> None:
        pass

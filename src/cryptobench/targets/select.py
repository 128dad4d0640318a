"""Which target measures a plan: `target_for`, the one place that chooses."""
from __future__ import annotations

from typing import Callable

from ..core.errors import UsageError
from ..core.records import Cell, LabSpec, Plan
from .host.target import HostTarget
from .mcu.target import McuTarget
from .mcu.lab.target import LabTarget
from .trace.target import TraceTarget


def target_for(plan: Plan, progress: Callable | None = None, log: Callable[[str], None] = lambda s: None,
               imported: tuple[list[Cell], dict] | None = None):
    """The target a stored or new plan measures on: the one place that chooses. `imported`: the
    cells and trace information `energy import` made of a trace (a "trace" plan's only source)."""
    if isinstance(plan.target, LabSpec):
        return LabTarget(plan, progress=progress, log=log)
    if plan.target is not None:
        return McuTarget(plan, progress=progress, log=log)
    if plan.kind == "trace":
        if imported is None:
            raise UsageError("an imported trace's run is stored whole by `energy import`; there is nothing to resume")
        return TraceTarget(*imported)
    return HostTarget(plan, progress=progress, log=log)

"""Where a benchmark runs. A Target (base.py) measures cells and reports conditions; the Runner
(runner.py) owns the run around it. host.py: the host's library engines, secure elements and
TPMs; mcu/: firmware on QEMU machines, real boards (board_link.py) or the simulator (sim/), one
transport each (mcu/transports.py);
lab.py: the same firmware on labgrid places, one run spread over several; trace.py: the cells of
an imported energy trace. boards.py/boards.toml describe the boards."""
from __future__ import annotations

from typing import Callable

from ..errors import UsageError
from ..records import Cell, Plan


def target_for(plan: Plan, progress: Callable | None = None, log: Callable[[str], None] = lambda s: None,
               imported: tuple[list[Cell], dict] | None = None):
    """The target a stored or new plan measures on: the one place that chooses. `imported`: the
    cells and trace information `energy import` made of a trace (a "trace" plan's only source)."""
    if plan.target is not None and plan.target.kind == "labgrid":
        from .lab import LabTarget
        return LabTarget(plan, progress=progress, log=log)
    if plan.target is not None:
        from .mcu import McuTarget
        return McuTarget(plan, progress=progress, log=log)
    if plan.kind == "trace":
        if imported is None:
            raise UsageError("an imported trace's run is stored whole by `energy import`; there is nothing to resume")
        from .trace import TraceTarget
        return TraceTarget(*imported)
    from .host import HostTarget
    return HostTarget(plan, progress=progress, log=log)

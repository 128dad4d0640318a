"""Where a benchmark runs. A Target (base.py) measures cells and reports conditions; the Runner
(runner/runner.py) owns the run around it. host/: the host's library engines, secure elements and
TPMs; mcu/: firmware on QEMU machines, real boards (mcu/board_link.py) or the simulator (mcu/sim/),
one transport each (mcu/transports.py), and the same firmware on labgrid places, one run spread
over several (mcu/lab/); trace/: the cells of an imported energy trace. verify.py: the vectors and
cross-checks every target's numbers must pass; power.py: energy from durations and currents.
mcu/boards.py and mcu/boards.toml describe the boards."""
from __future__ import annotations

from typing import Callable

from ..core.errors import UsageError
from ..core.records import Cell, Plan


def target_for(plan: Plan, progress: Callable | None = None, log: Callable[[str], None] = lambda s: None,
               imported: tuple[list[Cell], dict] | None = None):
    """The target a stored or new plan measures on: the one place that chooses. `imported`: the
    cells and trace information `energy import` made of a trace (a "trace" plan's only source)."""
    if plan.target is not None and plan.target.kind == "labgrid":
        from .mcu.lab.target import LabTarget
        return LabTarget(plan, progress=progress, log=log)
    if plan.target is not None:
        from .mcu import McuTarget
        return McuTarget(plan, progress=progress, log=log)
    if plan.kind == "trace":
        if imported is None:
            raise UsageError("an imported trace's run is stored whole by `energy import`; there is nothing to resume")
        from .trace.target import TraceTarget
        return TraceTarget(*imported)
    from .host.target import HostTarget
    return HostTarget(plan, progress=progress, log=log)

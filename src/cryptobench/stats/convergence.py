"""Convergence of an adaptive host run: one rule, one statement (docs/statistics.md).

The sampler decides when to stop with `converged`, and each finished cell is flagged
*not-converged* with the same rule (results.derive), so the stop and the flags cannot disagree.
What a run prints about it is one line (`convergence_line`), counted from the flags the table's
cells carry: the stored stop record says only why the sampler stopped (time budget, converged,
interrupted), never a count of its own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .estimate import Z95

NOISY_SHARE = 0.25             # the noisy-machine advice only where at least this share of cells is flagged


def converged(est, precision: float) -> bool:
    """A cell has converged when its estimate (estimate.Estimate) rests on enough blocks and its
    repeat interval's half-width is within `precision` of it."""
    return est is not None and est.enough_blocks and est.half_width <= precision


@dataclass
class Convergence:
    """How many of an adaptive run's cells reached the target, from their flags."""
    within: int                # cells without the not-converged flag
    cells: int                 # cells with a repeat interval (ok, sampled in rounds)
    precision: float           # the target, a fraction
    budget_s: float | None     # the run's time budget
    stop: str                  # why the sampler stopped: "converged" | "time budget" | "interrupted" | other

    @property
    def short(self) -> int:
        return self.cells - self.within


def stop_kind(stop: str | None) -> str:
    """The reason of a stored stop record (older runs stored counts after it: ignored)."""
    if not stop:
        return "interrupted"
    for kind in ("converged", "time budget"):
        if stop.startswith(kind):
            return kind
    return stop


def convergence_of(run) -> Convergence | None:
    """The run's convergence, or None for a run without a precision target (fixed --repeat, MCU)."""
    sampling = run.conditions.sampling or {}
    precision = sampling.get("precision")
    if not precision:
        return None
    results = [c.result for c in run.cells if c.ok and c.result and c.result.estimate]
    if not results:
        return None
    within = sum(1 for r in results if "not-converged" not in r.flags)
    budget = sampling.get("budget_s") or run.plan.options.budget_s
    return Convergence(within, len(results), float(precision), budget, stop_kind(sampling.get("stop")))


def convergence_line(conv: Convergence) -> str:
    """The run's one statement about convergence."""
    target = f"±{conv.precision * 100:g} %"
    if conv.short == 0:
        return f"convergence: every cell ({conv.cells}) reached {target}"
    budget = f" in the {conv.budget_s:g} s budget" if conv.budget_s and conv.stop == "time budget" else ""
    return (f"convergence: {conv.within} of {conv.cells} cells reached {target}{budget}; "
            f"{conv.short} did not (not-converged)")


def drift_tau(sampling: dict) -> float:
    """τ of the printed estimate of most cells: the drift as it acts on p1 (runs stored before it
    was recorded: the stretches' spread, which those runs used)."""
    p1 = sampling.get("machine_tau_p1_log")
    return float(p1 if p1 is not None else sampling.get("machine_tau_log") or 0.0)


def drift_floor(sampling: dict) -> float:
    """The half-width (a fraction) that the machine's drift τ alone gives a p1 cell's interval: no
    budget narrows an interval below it, since more rounds do not make the machine steadier."""
    return math.exp(Z95 * math.sqrt(2) * drift_tau(sampling)) - 1


def convergence_advice(conv: Convergence, sampling: dict, more: str) -> str:
    """What to do about cells short of the target: more time where noise kept them, a reachable
    --precision where the machine's drift does (drift is the machine's speed changing over minutes,
    frequency or temperature, and no sign of other work)."""
    floor = drift_floor(sampling)
    if floor <= conv.precision:
        return f"for tighter intervals give the run {more}"
    levels = [float(x) for x in sampling.get("machine_levels_log") or []]
    spread = f"stretches of the run up to {100 * (math.exp(max(levels) - min(levels)) - 1):.1f} % apart, " if levels else ""
    return (f"the machine's speed drifted over the run ({spread}τ on p1 {100 * drift_tau(sampling):.1f} %: "
            f"clock or temperature, not noise), which alone keeps every interval at ±{100 * floor:.1f} %; "
            f"more time will not narrow that (no --precision below {math.ceil(1000 * floor) / 1000:g} can be met here)")

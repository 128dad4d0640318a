"""The machine's noise floor during a run.

A shared or virtual machine slows down now and then for reasons no engine controls (a neighbour
on the same physical core, the hypervisor taking the CPU). To tell that apart from an engine's own
variability, every host run samples a reference loop that does no cryptography (op
`reference-loop` of the `system` engine: an add-rotate-xor mix in registers, like the core of
ChaCha20) as one more cell of its rounds, so its samples are spread over the whole run exactly
like every cell's. Its RSD is the noise floor: a cell whose RSD is near it is limited by the
machine, not by the engine. Its estimate (p1, like the cells') is the machine's speed in
this run, which `diff` compares between runs.
"""
from __future__ import annotations

from .estimate import estimate
from .summary import summarize

SLOT = 1_000_001           # outside the range the runner uses for its cells
SAMPLE_S = 0.001           # one sample lasts about this long (as a cell's, by default)
ENGINE, OP = "system", "reference-loop"


def noise_summary(cell, block_rounds: int) -> dict:
    """conditions.noise_floor of a run from the reference loop's CellSamples."""
    out = {"op": OP, "engine": ENGINE, "provenance": "measured", "sample_s": SAMPLE_S,
           "samples": [list(s) for s in cell.samples], "rounds": list(cell.rounds)}
    if cell.failure:
        out["detail"] = f"reference loop stopped: {cell.failure}"
    if len(cell.samples) >= 2:
        per_op = cell.per_op()
        s = summarize(per_op)
        est = estimate(per_op, cell.rounds, block_rounds, "p1")
        out.update({"n": s.n, "median_s": s.median, "min_s": s.min, "rsd_pct": s.rsd_pct,
                    "max_over_median": s.max / s.median if s.median else None,
                    "estimate_s": est.value, "half_width_pct": 100.0 * est.half_width})
    return out


def noise_line(noise: dict | None) -> str | None:
    """One line for the report, or None when the run has no noise floor."""
    if not noise:
        return None
    if noise.get("rsd_pct") is None:
        return f"machine noise floor: not measured ({noise.get('detail') or 'fewer than 2 samples'})"
    line = (f"machine noise floor: reference loop (no crypto) RSD {noise['rsd_pct']:.1f} %, slowest sample "
            f"{noise['max_over_median']:.2f}× the median, n={noise['n']} samples of {noise['sample_s'] * 1e3:.0f} ms "
            "spread over the run")
    if noise.get("half_width_pct") is not None:
        line += f"; its own estimate reproduces within ±{noise['half_width_pct']:.1f} %"
    return line + "; a cell whose RSD is near this is limited by the machine, not the engine"

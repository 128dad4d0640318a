"""Distribution: a histogram of the cycles of every timed execution, one panel per cell (level and
engine), for the operations whose cost varies by design from one execution to the next (catalog
Op.executions: ML-DSA signing's rejection loop; pqm4 reports its AVG / MIN / MAX over 1000 executions).
The mean is a solid line, the minimum and maximum dashed; the values are the cell's own samples (one
execution each, k = 1), nothing fitted."""
from __future__ import annotations

import math

from ...analysis.pqc import scheme
from ...catalog.ops import OPS
from ...core.quantity import fmt_hz
from ...core.records import Cell, Run
from ...stats.distribution import summarize_distribution
from ..captions import conditions_caption, provenance_text
from ..series import engine_color, param_text
from .style import LABEL_PT, SMALL_PT, TITLE_PT, Figure, new_figure, run_suffix, style_axes, tag, unique_id

COLUMNS = 2            # panels per row at most: the panel's title and its provenance tag fit side by side
MIN_BINS, MAX_BINS = 5, 40


def execution_cycles(c: Cell) -> list[float]:
    """Cycles of each timed execution of an ok microcontroller cell of a varying op, sampled one execution
    per sample (k = 1) with a cycle counter; [] otherwise (a batch's mean hides the spread, so it is not
    drawn; a host's TSC ticks are not core cycles, as in the cycles figure)."""
    op = OPS.get(c.op)
    if op is None or not op.executions or not c.ok or c.result is None or not c.samples or c.target == "host":
        return []
    if (c.result.get("cycles") or {}).get("counter", "none") == "none":
        return []
    if any(k != 1 or not cyc for k, _, cyc in c.samples):
        return []
    div = 2.0 if op.halve else 1.0
    return [cyc / div for _, _, cyc in c.samples]


def bins_for(n: int) -> int:
    """Equal-width bins: the square root of the executions (Pearson's rule), 5 to 40."""
    return max(MIN_BINS, min(MAX_BINS, math.ceil(math.sqrt(n))))


def _where(run: Run) -> str:
    """The device and its clock, as the title says them: 'stm32f407 at 24 MHz'."""
    t = run.conditions.target or {}
    where = t.get("device") or t.get("board") or t.get("core") or "host"
    clock = t.get("clock_hz") or (t.get("simulator") or {}).get("clock_hz")
    return f"{where} at {fmt_hz(float(clock))}" if clock else str(where)


def _label(c: Cell) -> str:
    """The cell as pqm4 names its scheme (ml-dsa-65), its other parameters, and its engine."""
    shown = [scheme(c.op, c.params["level"])] if "level" in c.params else []
    shown += [param_text(k, v) for k, v in c.params.items() if k not in ("level", "source")]
    return " · ".join(shown + [c.engine])


def _unit(largest: float) -> tuple[float, str]:
    """The x axis in millions of cycles where the executions reach a million (tick labels stay short);
    the legend gives every mark in whole cycles."""
    return (1e6, " (millions)") if largest >= 1e6 else (1.0, "")


def distribution_figures(run: Run, used: set):
    """One figure per varying op in the run with cells to draw (ML-DSA signing), a panel per cell."""
    by_op: dict[str, list[tuple[Cell, list[float]]]] = {}
    for c in run.cells:
        xs = execution_cycles(c)
        if len(xs) >= 2:
            by_op.setdefault(c.op, []).append((c, xs))
    for op_id, cells in by_op.items():
        yield _figure(run, op_id, cells, used)


def _figure(run: Run, op_id: str, cells: list[tuple[Cell, list[float]]], used: set) -> Figure:
    """One op's figure: a histogram panel per cell with its mean, min and max, in the run's cell order."""
    cols = min(COLUMNS, len(cells))
    rows = math.ceil(len(cells) / cols)
    fig = new_figure(0.6 + 2.6 * rows)
    provs = sorted({c.provenance for c, _ in cells})
    summaries = []
    for i, (c, xs) in enumerate(cells):
        ax = fig.add_subplot(rows, cols, i + 1)
        style_axes(ax)
        d = summarize_distribution(xs, "cycles per execution")
        summaries.append(d)
        scale, unit = _unit(d["max"])
        ax.hist([x / scale for x in xs], bins=bins_for(len(xs)), color=engine_color(c.engine), alpha=0.8,
                edgecolor="white", zorder=3)
        for what, style, width in (("mean", "-", 1.3), ("min", "--", 1.0), ("max", "--", 1.0)):
            ax.axvline(d[what] / scale, color="#222222", linestyle=style, linewidth=width, zorder=4,
                       label=f"{what} {d[what]:,.0f}")
        ax.set_xlabel(f"cycles per execution{unit}", fontsize=LABEL_PT)
        ax.set_ylabel("executions", fontsize=LABEL_PT)
        ax.set_title(f"{_label(c)} (n = {len(xs)})", loc="left", fontsize=SMALL_PT)
        tag(ax, [c.provenance])
        ax.legend(fontsize=SMALL_PT, frameon=False, loc="upper right")
    title = f"{OPS[op_id].title}: cycles per execution, {' / '.join(provs)} on {_where(run)} (run {run.id})"
    fig.suptitle(title, fontsize=TITLE_PT)
    return Figure(unique_id(used, f"distribution-{op_id}-{run_suffix([run.id])}"), "distribution", title,
                  _caption(run, op_id, cells, summaries, provs), provs, fig)


def _caption(run: Run, op_id: str, cells, summaries: list[dict], provs: list[str]) -> str:
    ns = sorted({d["n"] for d in summaries})
    n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
    spread = "; ".join(f"{_label(c)}: max / min {d['max_over_min']:.2f}, p10 {d['p10']:,.0f}, p90 {d['p90']:,.0f}"
                       for (c, _), d in zip(cells, summaries) if d["max_over_min"])
    cap = [f"{provenance_text(provs).capitalize()}. The cycles of every timed execution of {OPS[op_id].title} "
           f"(n = {n} executions per panel, each one operation, k = 1), a panel per cell: its cost varies by design "
           "(the rejection loop repeats a random number of times), so the mean alone hides a tail; pqm4 reports "
           "AVG / MIN / MAX over 1000 executions.",
           "Equal-width bins from the smallest to the largest execution (the square root of n bins, 5 to 40); "
           "mean: solid line, min and max: dashed.",
           (f"Spread: {spread}." if spread else ""),
           conditions_caption(run)]
    return " ".join(p for p in cap if p)

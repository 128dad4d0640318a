"""History: one operation's value over the report's runs (`cryptobench report … --history OP`), a
figure per series (engine, target, parameters): the points in the series' order (the library's
commit order, else the runs' time; analysis/history.py), each labelled with its run and commit or
version, and the change points marked with a red diamond and their change. Nothing is fitted: the
values are the cells' own (cycles per operation, the printed time, stack or code size)."""
from __future__ import annotations

from ...analysis.history import METRICS, Series
from ...catalog.ops import OPS
from ..captions import provenance_text
from ..series import engine_color
from .style import LABEL_PT, SMALL_PT, TITLE_PT, Figure, new_figure, run_suffix, style_axes, tag, unique_id

STEP_COLOR = "#c0392b"


def point_label(p) -> str:
    """The x tick of a point: its run, and its commit (12 digits) or else its library version."""
    return f"run {p.run_id}\n" + (p.commit[:12] if p.commit else (p.version or ""))


def history_figures(series: list[Series], used: set):
    """A figure per series with at least two points."""
    for s in series:
        if len(s.points) >= 2:
            yield history_figure(s, used)


def history_figure(s: Series, used: set) -> Figure:
    fig = new_figure(3.4)
    ax = fig.add_subplot(1, 1, 1)
    style_axes(ax)
    xs = list(range(len(s.points)))
    scale, unit = (1e6, "µs") if s.metric == "time" else (1.0, METRICS[s.metric])
    ys = [p.value * scale for p in s.points]
    ax.plot(xs, ys, marker="o", color=engine_color(s.engine), linewidth=1.3, zorder=3, label=s.engine,
            drawstyle="steps-post" if all(p.deterministic for p in s.points) else "default")
    steps = [(x, y, p) for x, y, p in zip(xs, ys, s.points) if p.step]
    if steps:
        ax.scatter([x for x, _, _ in steps], [y for _, y, _ in steps], marker="D", s=60, color=STEP_COLOR, zorder=4,
                   label="change point")
        for x, y, p in steps:
            ax.annotate(f"{(p.change or 0) * 100:+.1f} %", (x, y), textcoords="offset points", xytext=(4, 6),
                        fontsize=SMALL_PT, color=STEP_COLOR)
    ax.set_xticks(xs, [point_label(p) for p in s.points], fontsize=SMALL_PT)
    ax.set_xlabel(f"runs in {s.order} order", fontsize=LABEL_PT)
    ax.set_ylabel(f"{s.metric} ({unit})", fontsize=LABEL_PT)
    provs = sorted({p.provenance for p in s.points})
    tag(ax, provs)
    ax.legend(fontsize=SMALL_PT, frameon=False, loc="best")
    op = OPS[s.points[0].cell.op]
    title = f"{op.title}: {s.metric} over {len(s.points)} runs, {s.label}"
    fig.suptitle(title, fontsize=TITLE_PT)
    ids = [p.run_id for p in s.points]
    return Figure(unique_id(used, f"history-{op.id}-{s.metric}-{s.engine}-{run_suffix(ids)}"), "history", title,
                  _caption(s, provs), provs, fig)


def _caption(s: Series, provs: list[str]) -> str:
    det = all(p.deterministic for p in s.points)
    steps = [p for p in s.points if p.step]
    rule = ("deterministic values: any change is a change point" if det else
            "measured values: a change point is a change diff finds significant and beyond its threshold")
    where = "; ".join(f"run {p.run_id} ({(p.commit or p.version or '')[:12]}): {(p.change or 0) * 100:+.2f} %"
                      for p in steps) or "none"
    return (f"{provenance_text(provs).capitalize()}. {s.metric} of {s.label}, one point per run, ordered by "
            f"{s.order} ({s.order_why}); {rule}. Change points (red diamonds): {where}.")

"""Scaling over cores for parallel runs: aggregate throughput and parallel efficiency vs N (the Pisa
Cortex-A53 paper)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from matplotlib import ticker
from matplotlib.lines import Line2D

from ...core.records import Cell, Run
from ...analysis.relative import WORDS, run_engines
from ..captions import provenance_text, runs_caption
from ..series import decades, engine_color, op_title, params_full, params_short
from .style import (LABEL_PT, SMALL_PT, TITLE_PT, Figure, log_y, new_figure, omitted_text, param_slugs,
                    run_suffix, style_axes, tag, unique_id)
from ...targets.host.parallel import units_per_op
from ..scaling_tables import cells_by_count


@dataclass
class _Drawn:
    """What the curves of one scaling figure drew, for its axes, legend and caption."""
    counts: set = field(default_factory=set)         # process counts N with a point
    omitted: list = field(default_factory=list)      # "engine N=n: why" per cell without a result
    provs: set = field(default_factory=set)
    rounds: list = field(default_factory=list)
    flags: dict = field(default_factory=dict)        # flag -> points with it (oversubscribed apart)
    over_ns: set = field(default_factory=set)        # oversubscribed N


def scaling_figures(run: Run, used: set) -> list[Figure]:
    order, cells = cells_by_count(run)
    cpus = run.plan.options.parallel_cpus or []
    engines = run_engines(run)
    slugs = param_slugs([(op, json.loads(pk)) for op, pk in order])
    out = []
    for (op_id, pk), ps in zip(order, slugs):
        by_engine = {e: cells[(op_id, pk)][e] for e in engines if e in cells[(op_id, pk)]}
        f = _scaling_figure(run, op_id, json.loads(pk), ps, by_engine, cpus, used)
        if f:
            out.append(f)
    return out


def _scaling_figure(run: Run, op_id: str, params: dict, ps: str, by_engine: dict, cpus: list,
                    used: set) -> Figure | None:
    """Throughput (left) and efficiency (right) against N for one operation and parameters, a curve
    per engine (by_engine: engine -> N -> cell); None when no cell has a result."""
    unit, _ = units_per_op(op_id, params)
    payload = unit == "bytes"
    th_unit = "Mb/s" if payload else "op/s"
    fig = new_figure(4.4)
    ax1, ax2 = fig.subplots(1, 2)
    for ax in (ax1, ax2):
        style_axes(ax)
    drawn = _Drawn()
    for engine, by_n in by_engine.items():
        _engine_curves(ax1, ax2, engine, by_n, 8 / 1e6 if payload else 1.0, drawn)
    if not drawn.counts:
        return None
    _count_axes((ax1, ax2), sorted(drawn.counts), len(cpus))
    ax2.axhline(100, color="#444444", linestyle="--", linewidth=1.0, zorder=1)
    # throughput on a log axis: engines an order of magnitude apart both stay readable, and equal
    # distances are equal ratios (the ideal line N·TH_1 runs parallel for every engine)
    log_y(ax1, decades([y for line in ax1.get_lines() for y in line.get_ydata()]))
    lo2 = min([0.0] + [float(min(line.get_ydata())) for line in ax2.get_lines() if len(line.get_ydata())])
    ax2.set_ylim(min(0.0, lo2), max(115.0, ax2.get_ylim()[1]))
    ax1.set_ylabel(f"aggregate throughput TH ({th_unit})", fontsize=LABEL_PT)
    ax2.set_ylabel("parallel efficiency TH_N / (N·TH_1) (%)", fontsize=LABEL_PT)
    ax1.set_title("throughput", loc="left", fontsize=LABEL_PT)
    ax2.set_title("efficiency", loc="left", fontsize=LABEL_PT)
    provs = sorted(drawn.provs) or ["measured"]
    tag(ax1, provs)
    tag(ax2, provs)
    handles, labels = ax1.get_legend_handles_labels()
    handles.append(Line2D([], [], color="#444444", linestyle="--", linewidth=1.0))
    labels.append("ideal: N·TH_1")
    if drawn.over_ns:
        handles.append(Line2D([], [], color="#444444", linestyle="none", marker="o", markerfacecolor="white"))
        labels.append("oversubscribed")
    ax2.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
               fontsize=SMALL_PT, frameon=False)
    short = params_short(op_id, params)
    title = f"{op_title(op_id)}: scaling over cores" + (f" ({short})" if short else "")
    fig.suptitle(title, fontsize=TITLE_PT)
    cap = _scaling_caption(run, op_id, params, th_unit, payload, cpus, drawn, provs)
    fig_id = unique_id(used, "-".join(x for x in ["scaling", op_id, ps, run_suffix([run.id])] if x))
    return Figure(fig_id, "scaling", title, cap, provs, fig)


def _engine_curves(ax1, ax2, engine: str, by_n: dict[int, Cell], scale: float, drawn: _Drawn) -> None:
    """One engine's throughput (ax1, with its ideal line and hollow oversubscribed markers) and
    efficiency (ax2) against N; what it drew and left out goes into drawn."""
    pts = []
    for n in sorted(by_n):
        c = by_n[n]
        if not c.ok or c.result is None or not c.result.parallel:
            drawn.omitted.append(f"{engine} N={n}: {WORDS.get(c.status, c.status)}"
                                 + (f" — {c.detail}" if c.detail else ""))
            continue
        pts.append((n, c.result.parallel))
        drawn.provs.add(c.provenance)
    if not pts:
        return
    color = engine_color(engine)
    ns = [n for n, _ in pts]
    drawn.counts |= set(ns)
    th = [p["aggregate"] * scale for _, p in pts]
    cis = [[v * scale for v in (p.get("aggregate_ci95") or [p["aggregate"]] * 2)] for _, p in pts]
    err = [[max(0.0, t - ci[0]) for t, ci in zip(th, cis)], [max(0.0, ci[1] - t) for t, ci in zip(th, cis)]]
    ax1.errorbar(ns, th, yerr=err, color=color, marker="o", markersize=6, linewidth=1.6, capsize=3,
                 label=engine, zorder=3)
    over = [(n, t) for (n, p), t in zip(pts, th) if p.get("oversubscribed")]
    drawn.over_ns |= {n for n, _ in over}
    if over:
        ax1.plot([n for n, _ in over], [t for _, t in over], linestyle="none", marker="o", markersize=8,
                 markerfacecolor="white", markeredgecolor=color, zorder=4)
    if 1 in ns:
        th1 = th[ns.index(1)]
        ideal_ns = sorted(set(ns))
        ax1.plot(ideal_ns, [th1 * n for n in ideal_ns], color=color, linestyle="--", linewidth=1.0,
                 alpha=0.8, zorder=2)
    eff = [(n, p["efficiency"] * 100, p.get("efficiency_ci95")) for n, p in pts if p.get("efficiency") is not None]
    if eff:
        e_y = [e for _, e, _ in eff]
        e_err = [[max(0.0, e - ci[0] * 100) if ci else 0.0 for _, e, ci in eff],
                 [max(0.0, ci[1] * 100 - e) if ci else 0.0 for _, e, ci in eff]]
        ax2.errorbar([n for n, _, _ in eff], e_y, yerr=e_err, color=color, marker="o", markersize=6,
                     linewidth=1.6, capsize=3, label=engine, zorder=3)
    drawn.rounds += [p.get("rounds") for _, p in pts]
    for _, p in pts:
        for f in p.get("flags", []):
            if f != "oversubscribed":
                drawn.flags[f] = drawn.flags.get(f, 0) + 1


def _count_axes(axes, ns_all: list[int], ncpu: int) -> None:
    """x axes over the process counts, with the counts past the CPU count shaded."""
    for ax in axes:
        ax.set_xticks(ns_all)
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("processes N (one per CPU)", fontsize=LABEL_PT)
        ax.set_xlim(min(ns_all) - 0.5, max(ns_all) + 0.5)
        if ncpu and max(ns_all) > ncpu:
            ax.axvspan(ncpu + 0.5, max(ns_all) + 0.5, color="#f2dede", alpha=0.6, zorder=0, linewidth=0)
            ax.text(ncpu + 0.55, 0.02, f"N > {ncpu} CPUs: oversubscribed", transform=ax.get_xaxis_transform(),
                    fontsize=SMALL_PT, color="#a94442", va="bottom")


def _scaling_caption(run: Run, op_id: str, params: dict, th_unit: str, payload: bool, cpus: list,
                     drawn: _Drawn, provs: list[str]) -> str:
    cap = [f"Left (log scale): aggregate throughput TH_N of {op_title(op_id)} (parameters: {params_full(params)}) in N "
           f"concurrent harness processes, each pinned to its own CPU ({th_unit}"
           + (", Mb = 10⁶ bit" if payload else "") + "), median over the rounds with its 95 % confidence "
           "interval as error bars; dashed: ideal linear scaling N·TH_1 in the engine's colour. Right: parallel "
           "efficiency TH_N / (N·TH_1) with its 95 % percentile-bootstrap interval; dashed: 100 %.",
           f"CPUs available: {len(cpus)} ({','.join(map(str, cpus))})"
           + (f"; N = {', '.join(map(str, sorted(drawn.over_ns)))} oversubscribed (hollow markers, shaded): "
              "throughput cannot scale past the CPU count." if drawn.over_ns else "; no N was oversubscribed.")]
    rr = sorted({r for r in drawn.rounds if r})
    if rr:
        cap.append(f"n = {rr[0]}" + (f"–{rr[-1]}" if len(rr) > 1 else "") + " rounds per point (each round one "
                   "concurrent batch per process, timed by the orchestrator).")
    if drawn.flags:
        cap.append("Flags: " + ", ".join(f"{k} ×{v}" for k, v in sorted(drawn.flags.items())) + ".")
    if drawn.omitted:
        cap.append(omitted_text(drawn.omitted))
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(runs_caption([run], [run.id]))
    return " ".join(cap)

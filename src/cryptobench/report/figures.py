"""The report's figures, drawn from stored runs with matplotlib's object API (no pyplot: no global
state, no display, safe in threads).

    build_figures(runs, baseline=None) -> [Figure]      every figure the runs have data for
    crossover_rows(runs, baseline=None) -> [dict]        the crossover lengths, for a table

Kinds (only where the data exists):
  duration      host cells: median time per operation vs payload length (params['bytes'] with at
                least two values), per operation and fixed other parameters, a line per engine,
                95 % CI of the median shaded (seed 000, figures 2-9)
  energy        the same for result.energy.per_op_j (measured, or modeled on simulated targets)
  cycles        microcontroller cells (target not 'host'): cycles per operation vs length, a line per
                library (seed 002's chart); simulated or measured as the cells say
  heatmap       per run with a baseline: engine / baseline ratio of medians per operation and
                parameters, colour on a log scale centred at 1, ratios to 3 significant digits in
                the cells (seed 003, figure 2); one for time, one for energy where energy ratios exist
  energy-split  cells with result.energy.supplies: 100 % stacked bars of each supply's share (seed
                003, figure 3)
  scaling       parallel runs: aggregate throughput and parallel efficiency vs N (seed 004)
  crossover     per run with a baseline, per operation swept over >= 2 lengths: t_engine /
                t_baseline vs length, with the crossover lengths of models.crossover (modeled)

The baseline of a heat-map or crossover figure: `baseline` when that engine is in the run, else the
run's own plan baseline; a run with neither gets no heat-map and no crossover figure (a ratio to an
arbitrary engine would read as a claim nobody made). Captions say which was used.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from matplotlib import ticker
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D

from ..catalog import OPS
from ..relative import WORDS, fmt_ratio, relative, run_engines
from .captions import n_text, provenance_text, runs_caption
from .series import (Group, decades, energy_unit, engine_color, fmt_len, op_title, param_text, params_full,
                     params_short, slug, style_for, sweep_groups)
from .tables import fmt_num, pick_unit

KINDS = ["duration", "energy", "cycles", "heatmap", "energy-split", "scaling", "crossover"]
TITLE_PT, LABEL_PT, TICK_PT, SMALL_PT = 11, 10, 9, 9
WIDTH = 8.0                       # inches at 100 dpi: ~800 px
GRID = "#dddddd"
TAG_COLOR = "#555555"
SUPPLY_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


@dataclass
class Figure:
    id: str                      # unique file stem, [a-z0-9-]
    kind: str                    # one of KINDS
    title: str
    caption: str                 # plain text
    provenance: list = field(default_factory=list)
    fig: MplFigure = None


# --- drawing helpers -----------------------------------------------------------------------------
def _new(height: float, width: float = WIDTH) -> MplFigure:
    return MplFigure(figsize=(width, height), dpi=100, layout="constrained")


def _style(ax) -> None:
    ax.grid(True, which="major", color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=TICK_PT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _tag(ax, provs) -> None:
    """The provenance, small, in the axes' top-right corner (above the plotting area: it never hides data)."""
    ax.set_title(" · ".join(provs), loc="right", fontsize=SMALL_PT, color=TAG_COLOR, style="italic")


def _tick_text(v: float, _pos=None) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    if abs(v) >= 1e-3:
        return f"{v:g}"
    return f"{v:.0e}"


def _len_tick(v: float, _pos=None) -> str:
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:g}"


def _thin(xs: list[float], scale: str) -> list[float]:
    """The measured lengths as ticks, leaving out any too close to the previous one to be read."""
    if not xs:
        return xs
    pos = [x for x in xs if x > 0]

    def where(x):
        if scale == "linear":
            return x / (xs[-1] - xs[0] or 1.0)
        floor = min(pos) if pos else 1.0
        return math.log10(max(x, floor)) / 1.0 + (0.0 if x > 0 else -0.5)

    span = (where(xs[-1]) - where(xs[0])) or 1.0
    kept = [xs[0]]
    for x in xs[1:]:
        if (where(x) - where(kept[-1])) / span >= 0.045:
            kept.append(x)
        elif x == xs[-1]:
            kept[-1] = x                       # keep the longest length: it bounds the range
    return kept


def _x_lengths(ax, xs: list[float], label: str) -> str:
    """Payload-length axis: log when it spans a decade (symmetric-log when 0 B is among the lengths),
    ticks at the measured lengths when there are few. Returns the scale's name for the caption."""
    xs = sorted(set(xs))
    pos = [x for x in xs if x > 0]
    scale = "linear"
    if decades(xs) >= 1:
        if xs[0] <= 0:
            ax.set_xscale("symlog", linthresh=min(pos), linscale=0.5)
            scale = "symlog"
        else:
            ax.set_xscale("log")
            scale = "log"
    if len(xs) <= 14:
        ticks = _thin(xs, scale)
        ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(_len_tick))
        if len(ticks) > 8:
            for t in ax.get_xticklabels():
                t.set_rotation(30)
                t.set_ha("right")
    elif scale != "linear":
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(_len_tick))
    ax.set_xlabel(label, fontsize=LABEL_PT)
    return scale


def _y_values(ax, values: list[float], label: str) -> str:
    """Value axis: log when the values span a decade, with plain-number tick labels."""
    ax.set_ylabel(label, fontsize=LABEL_PT)
    span = decades(values)
    if span >= 1:
        ax.set_yscale("log")
        subs = (1.0, 2.0, 5.0) if span < 2.5 else (1.0,)
        ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(_tick_text))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        return "log"
    return "linear"


def _legend(ax, n: int, title: str | None = None) -> None:
    """Outside the plotting area, right of it: never over the data."""
    if n == 0:
        return
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=SMALL_PT, frameon=False,
              title=title, title_fontsize=SMALL_PT)


def _axes_text(xscale: str, yscale: str) -> str:
    if xscale == "log" and yscale == "log":
        return "Axes: log–log."
    if xscale == "symlog":
        return ("Axes: symmetric-log x (linear below the smallest non-zero length, so that 0 B shows), "
                + ("log y." if yscale == "log" else "linear y."))
    return f"Axes: {xscale} x, {yscale} y."


def _omitted_text(items: list[str], limit: int = 8) -> str:
    if not items:
        return ""
    more = f"; and {len(items) - limit} more" if len(items) > limit else ""
    return "Not shown: " + "; ".join(items[:limit]) + more + "."


def _flag_text(points) -> str:
    counts: dict = {}
    flagged = 0
    for p in points:
        if p.flags:
            flagged += 1
        for f in p.flags:
            counts[f] = counts.get(f, 0) + 1
    if not flagged:
        return ""
    return (f"{flagged} of {len(points)} points flagged (" + ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items()))
            + "; see the tables' notes).")


def _ids(used: set, stem: str) -> str:
    base = slug(stem)
    out, i = base, 2
    while out in used:
        out, i = f"{base}-{i}", i + 1
    used.add(out)
    return out


def _param_slugs(groups: list[tuple[str, dict]]) -> list[str]:
    """For groups of one op that differ only in their fixed parameters: the differing ones as a slug."""
    out = []
    for op, fixed in groups:
        same = [f for o, f in groups if o == op]
        if len(same) < 2:
            out.append("")
            continue
        keys = sorted({k for f in same for k in f})
        differing = [k for k in keys if len({json.dumps(f.get(k)) for f in same}) > 1]
        out.append("-".join(f"{k}-{fixed.get(k)}" for k in differing))
    return out


def _run_suffix(ids) -> str:
    return "r" + "-".join(str(i) for i in ids)


# --- sweeps: duration, energy, cycles ----------------------------------------------------------------
METRIC_KIND = {"time": "duration", "energy": "energy", "cycles": "cycles"}


def _sweep_figure(g: Group, runs: list[dict], metric: str, fig_id: str) -> Figure:
    op = OPS.get(g.op)
    payload = bool(op and op.payload)
    xlabel = "payload length (bytes)" if payload or not op else "bytes per request"
    points = [p for s in g.series for p in s.points]
    if metric == "time":
        ys = [p.y for p in points if p.y > 0]
        unit, scale = pick_unit([math.sqrt(min(ys) * max(ys))] if ys else [])
        ylabel, what = f"duration per operation ({unit})", "Median time per operation"
    elif metric == "energy":
        ys = [p.y for p in points if p.y > 0]
        unit, scale = energy_unit([math.sqrt(min(ys) * max(ys))] if ys else [])
        ylabel, what = f"energy per operation ({unit})", "Energy per operation"
    else:
        unit, scale = "cycles", 1.0
        ylabel, what = "cycles per operation", "Median cycles per operation"
    fig = _new(4.6)
    ax = fig.add_subplot()
    _style(ax)
    any_band, zero_band = False, False
    values = []
    for s in g.series:
        color, ls, marker = style_for(g.series, s)
        xs = [p.x for p in s.points]
        ys = [p.y * scale for p in s.points]
        values += ys
        ax.plot(xs, ys, color=color, linestyle=ls if len(xs) > 1 else "none", marker=marker, markersize=5,
                linewidth=1.6, label=s.label, zorder=3)
        band = [p for p in s.points if p.lo is not None and p.hi is not None]
        if band:
            lo, hi = [p.lo * scale for p in band], [p.hi * scale for p in band]
            values += [v for v in lo + hi if v > 0]
            if any(h > l for l, h in zip(lo, hi)):
                any_band = True
                ax.fill_between([p.x for p in band], lo, hi, color=color, alpha=0.18, linewidth=0, zorder=2)
            else:
                zero_band = True
    xscale = _x_lengths(ax, g.xs, xlabel)
    yscale = _y_values(ax, values, ylabel)
    provs = sorted({p for s in g.series for p in s.provenance})
    _tag(ax, provs)
    _legend(ax, len(g.series), "library" if metric == "cycles" else "engine")
    short = params_short(g.op, g.fixed)
    noun = {"time": "duration", "energy": "energy", "cycles": "cycles"}[metric]
    title = f"{op_title(g.op)}: {noun} vs {'payload length' if payload or not op else 'bytes per request'}" + (
        f" ({short})" if short else "")
    fig.suptitle(title, fontsize=TITLE_PT)
    multi = len(g.runs) > 1
    cap = [f"{what} of {op_title(g.op)} (parameters: {params_full(g.fixed)}) against the "
           f"{'payload length' if payload or not op else 'bytes per request'}, one line per "
           f"{'library' if metric == 'cycles' else 'engine'}{' and run' if multi else ''}; markers at the measured "
           f"lengths ({', '.join(fmt_len(x) for x in g.xs)} B)."]
    if metric == "cycles":
        counters = sorted({(((c.get("result") or {}).get("cycles") or {}).get("counter") or "?") for r in runs
                           if r["id"] in g.runs for c in r["cells"] if c["op"] == g.op})
        names = {"model": "the simulator's cycle model", "dwt": "the core's DWT cycle counter"}
        cap.append("Cycles from " + ", ".join(names.get(c, c) for c in counters if c != "?") + ".")
    if metric == "energy":
        methods = sorted({((c.get("result") or {}).get("energy") or {}).get("method", "") for r in runs
                          if r["id"] in g.runs for c in r["cells"] if c["op"] == g.op and c["status"] == "ok"} - {""})
        if "modeled" in provs:
            cap.append("Modeled energy = simulated (or measured) time × the device profile's supply voltage × "
                       "active current.")
        if methods:
            cap.append("Method: " + "; ".join(m.rstrip(".") for m in methods[:2]) + ".")
    if any_band:
        cap.append("Shaded bands: 95 % confidence interval of the median" + (
            " (zero width where the samples are identical, e.g. a deterministic simulation)." if zero_band else "."))
    elif zero_band:
        cap.append("The 95 % confidence intervals have zero width (identical samples, e.g. a deterministic "
                   "simulation), so no band is drawn.")
    else:
        cap.append("No confidence intervals stored for these points.")
    nt = n_text([p.n for p in points], [p.k for p in points] if metric != "energy" else None,
                "windows" if metric == "energy" else "samples")
    if nt:
        cap.append(nt + ".")
    cap.append(_axes_text(xscale, yscale))
    for t in (_flag_text(points), _omitted_text(g.omitted)):
        if t:
            cap.append(t)
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(runs_caption(runs, g.runs))
    return Figure(fig_id, METRIC_KIND[metric], title, " ".join(cap), provs, fig)


def _sweep_figures(runs: list[dict], metric: str, used: set) -> list[Figure]:
    groups = sweep_groups(runs, metric)
    slugs = _param_slugs([(g.op, g.fixed) for g in groups])
    out = []
    for g, ps in zip(groups, slugs):
        fig_id = _ids(used, "-".join(x for x in [METRIC_KIND[metric], g.op, ps, _run_suffix(g.runs)] if x))
        out.append(_sweep_figure(g, runs, metric, fig_id))
    return out


# --- baseline -----------------------------------------------------------------------------------
def resolve_baseline(run: dict, baseline: str | None) -> tuple[str | None, str]:
    """(engine, why) for a run's relative figures; (None, why) when it has none."""
    engines = run_engines(run)
    if baseline and baseline in engines:
        return baseline, "the report's chosen baseline"
    plan_b = (run.get("plan") or {}).get("baseline")
    if plan_b and plan_b in engines:
        why = "the run's own baseline"
        if baseline:
            why += f" ({baseline} is not an engine of this run)"
        return plan_b, why
    return None, "no baseline: neither chosen for the report nor set in the run"


# --- heat-map ------------------------------------------------------------------------------------
def _row_labels(keys: list[tuple[str, str]]) -> list[str]:
    by_op: dict = {}
    for op, pk in keys:
        by_op.setdefault(op, []).append(json.loads(pk))
    labels = []
    for op, pk in keys:
        p = json.loads(pk)
        same = by_op[op]
        varying = [k for k in p if len({json.dumps(q.get(k)) for q in same}) > 1]
        shown = varying if varying else [k for k in p if k != "source"]
        labels.append(op_title(op) + (" · " + ", ".join(param_text(k, p[k]) for k in shown) if shown else ""))
    return labels


def _luminance(rgba) -> float:
    r, g, b = rgba[:3]
    return 0.299 * r + 0.587 * g + 0.114 * b


def _relative(run: dict, baseline: str, cache: dict | None) -> dict:
    """relative() (a seeded bootstrap per cell: not free), once per run and baseline per build."""
    if cache is None:
        return relative(run, baseline)
    key = (id(run), baseline)
    if key not in cache:
        cache[key] = relative(run, baseline)
    return cache[key]


def _heatmap(run: dict, baseline: str, why: str, metric: str, used: set, cache: dict | None = None) -> Figure | None:
    import matplotlib
    import numpy as np
    from matplotlib.colors import Normalize
    view = _relative(run, baseline, cache)
    rkey = "time_ratio" if metric == "time" else "energy_ratio"
    ckey = "time_ci95" if metric == "time" else "energy_ci95"
    rows = view["rows"]
    engines = [e for e in run_engines(run) if e != baseline
               and any(r["engine"] == e and r[rkey] is not None for r in rows)]
    if not engines:
        return None
    order: list = []
    lookup: dict = {}
    for r in rows:
        key = (r["op"], json.dumps(r["params"], sort_keys=True))
        if key not in lookup:
            lookup[key] = {}
            order.append(key)
        lookup[key][r["engine"]] = r
    keys = [k for k in order if any((lookup[k].get(e) or {}).get(rkey) is not None for e in engines)]
    dropped = [k for k in order if k not in keys]
    labels = _row_labels(keys)
    nr, nc = len(keys), len(engines)
    grid = np.full((nr, nc), np.nan)
    texts = [["—"] * nc for _ in range(nr)]
    words = set()
    cis = 0
    for i, k in enumerate(keys):
        for j, e in enumerate(engines):
            r = lookup[k].get(e)
            if r is None:
                words.add("missing")
                continue
            if r["status"] != "ok":
                texts[i][j] = WORDS.get(r["status"], r["status"])
                words.add(r["status"])
                continue
            if r[rkey] is None or r[rkey] <= 0:
                words.add("no energy" if metric == "energy" else "no time")
                continue
            grid[i, j] = math.log10(r[rkey])
            texts[i][j] = fmt_ratio(r[rkey])
            cis += 1 if r.get(ckey) else 0
    finite = np.abs(grid[np.isfinite(grid)])
    lim = max(1, math.ceil(float(finite.max()) - 1e-9)) if finite.size else 1
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#d9d9d9")
    norm = Normalize(vmin=-lim, vmax=lim)
    width = min(14.0, max(WIDTH, 3.6 + 1.15 * nc + 1.2))
    height = 1.6 + 0.32 * nr
    fig = _new(height, width)
    ax = fig.add_subplot()
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(nc))
    ax.set_xticklabels(engines, fontsize=TICK_PT, rotation=30 if nc > 5 else 0, ha="left" if nc > 5 else "center")
    ax.xaxis.tick_top()
    ax.set_yticks(range(nr))
    ax.set_yticklabels(labels, fontsize=TICK_PT)
    ax.set_xticks([x - 0.5 for x in range(1, nc)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, nr)], minor=True)
    ax.grid(True, which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.tick_params(which="major", length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    for i in range(nr):
        for j in range(nc):
            v = grid[i, j]
            if np.isfinite(v):
                color = "black" if _luminance(cmap(norm(v))) > 0.5 else "white"
                size = TICK_PT
            else:
                color, size = "#333333", 8 if len(texts[i][j]) > 8 else TICK_PT
            ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=size, color=color)
    noun = "time" if metric == "time" else "energy"
    bar = fig.colorbar(im, ax=ax, shrink=min(1.0, max(0.35, 8.0 / max(nr, 1))), aspect=20, pad=0.02)
    ticks = list(range(-lim, lim + 1))
    bar.set_ticks(ticks)
    bar.set_ticklabels([f"×{10.0 ** t:g}" for t in ticks])
    bar.ax.tick_params(labelsize=TICK_PT)
    bar.set_label(f"{noun} / {baseline}'s {noun} (log scale)", fontsize=LABEL_PT)
    if metric == "time":
        provs = sorted({c["provenance"] for c in run["cells"] if c["status"] == "ok"}) or ["measured"]
    else:
        provs = sorted({r.get("energy_provenance") or "measured" for r in rows if r["energy_ratio"] is not None})
    _tag(ax, provs)
    title = f"{noun.capitalize()} relative to {baseline} (run {run['id']})"
    fig.suptitle(title, fontsize=TITLE_PT)
    ns = [((c.get("result") or {}).get("n")) for c in run["cells"] if c["status"] == "ok"]
    ks = [((c.get("result") or {}).get("k")) for c in run["cells"] if c["status"] == "ok"]
    cap = [f"Ratio of medians, engine / {baseline}, of the {noun} per operation, per operation and parameters "
           f"(rows) and engine (columns), as seed 003's figure 2 divides the secure elements by the on-chip "
           f"engine: above 1 (red) the engine takes {'longer' if metric == 'time' else 'more energy'} than "
           f"{baseline}, below 1 (blue) {'less time' if metric == 'time' else 'less'}. Colour on a log scale centred "
           f"at 1, symmetric over ±{lim} decade{'s' if lim > 1 else ''}; each cell's ratio rounded to 3 significant "
           f"digits.",
           f"Baseline {baseline}: {why}."]
    if cis:
        cap.append("The 95 % bootstrap intervals of the ratios are in the relative table.")
    if words:
        cap.append("Grey: no ratio (" + ", ".join(sorted(WORDS.get(w, w) for w in words)) + ").")
    if dropped:
        cap.append(f"Rows without any ratio left out: {', '.join(_row_labels(dropped)[:6])}"
                   + (f" and {len(dropped) - 6} more" if len(dropped) > 6 else "") + ".")
    if metric == "time":
        nt = n_text(ns, ks)
        if nt:
            cap.append(nt + " (each cell a ratio of two medians).")
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(runs_caption([run], [run["id"]]))
    fig_id = _ids(used, f"heatmap-{noun}-{_run_suffix([run['id']])}")
    return Figure(fig_id, "heatmap", title, " ".join(cap), provs, fig)


# --- energy split --------------------------------------------------------------------------------
def _energy_split(run: dict, used: set) -> Figure | None:
    cells = [c for c in run["cells"] if c["status"] == "ok"
             and isinstance(((c.get("result") or {}).get("energy") or {}).get("supplies"), dict)
             and len(c["result"]["energy"]["supplies"]) >= 1]
    if not cells:
        return None
    supplies: list = []
    for c in cells:
        for name in c["result"]["energy"]["supplies"]:
            if name not in supplies:
                supplies.append(name)
    totals = [c["result"]["energy"].get("per_op_j")
              or sum(v.get("median_j") or 0 for v in c["result"]["energy"]["supplies"].values()) for c in cells]
    unit, scale = energy_unit(totals)
    by_op: dict = {}
    for c in cells:
        by_op.setdefault(c["op"], []).append(c["params"])
    labels = []
    for c, tot in zip(cells, totals):
        same = by_op[c["op"]]
        varying = [k for k in c["params"] if len({json.dumps(p.get(k)) for p in same}) > 1]
        shown = varying or [k for k in c["params"] if k != "source"]
        ptxt = ", ".join(param_text(k, c["params"][k]) for k in shown)
        labels.append(f"{op_title(c['op'])}{' ' + ptxt if ptxt else ''} · {c['engine']} ({fmt_num(tot * scale)} {unit})")
    fig = _new(1.7 + 0.42 * len(cells))
    ax = fig.add_subplot()
    _style(ax)
    ax.grid(False, axis="y")
    ys = list(range(len(cells)))
    for si, name in enumerate(supplies):
        lefts, widths = [], []
        for c in cells:
            sup = c["result"]["energy"]["supplies"]
            left = sum(float(sup[n].get("share_pct") or 0) for n in supplies[:si] if n in sup)
            lefts.append(left)
            widths.append(float((sup.get(name) or {}).get("share_pct") or 0))
        color = SUPPLY_COLORS[si % len(SUPPLY_COLORS)]
        ax.barh(ys, widths, left=lefts, color=color, edgecolor="white", height=0.7, label=name, zorder=3)
        for y, l, w in zip(ys, lefts, widths):
            if w >= 7:
                ax.text(l + w / 2, y, f"{w:.1f} %", ha="center", va="center", fontsize=SMALL_PT,
                        color="white" if _luminance(_hex_rgb(color)) < 0.55 else "black", zorder=4)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=TICK_PT)
    ax.set_ylim(len(cells) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the energy per operation (%)", fontsize=LABEL_PT)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(supplies), 5), fontsize=SMALL_PT,
              frameon=False, title="supply", title_fontsize=SMALL_PT)
    provs = sorted({c["result"]["energy"].get("provenance", "measured") for c in cells})
    _tag(ax, provs)
    title = f"Energy split between supplies (run {run['id']})"
    fig.suptitle(title, fontsize=TITLE_PT)
    n = [((c["result"]["energy"].get("stats") or {}).get("n")) for c in cells]
    cap = [f"Share of each supply ({', '.join(supplies)}) in the energy per operation, per operation and engine "
           "(seed 003's figure 3: host MCU vs secure element); each supply's median energy per window as a "
           f"percentage of their sum, printed where the segment is wide enough; in brackets the total energy per "
           f"operation ({unit}).",
           "Supply names are the trace's channel names."]
    nt = n_text(n, None, "windows")
    if nt:
        cap.append(nt + ".")
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(runs_caption([run], [run["id"]]))
    return Figure(_ids(used, f"energy-split-{_run_suffix([run['id']])}"), "energy-split", title, " ".join(cap),
                  provs, fig)


def _hex_rgb(color: str) -> tuple[float, float, float]:
    c = color.lstrip("#")
    return tuple(int(c[i:i + 2], 16) / 255 for i in (0, 2, 4))


# --- scaling -------------------------------------------------------------------------------------
def _scaling(run: dict, used: set) -> list[Figure]:
    from ..scaling import PARAM, op_params, units_per_op
    order, cells = [], {}
    for c in run["cells"]:
        n = c["params"].get(PARAM)
        if n is None:
            continue
        key = (c["op"], json.dumps(op_params(c["params"]), sort_keys=True))
        if key not in cells:
            cells[key] = {}
            order.append(key)
        cells[key].setdefault(c["engine"], {})[n] = c
    opts = run["plan"].get("options") or {}
    cpus = opts.get("parallel_cpus") or []
    ncpu = len(cpus)
    engines = run_engines(run)
    slugs = _param_slugs([(op, json.loads(pk)) for op, pk in order])
    out = []
    for (op_id, pk), ps in zip(order, slugs):
        params = json.loads(pk)
        unit, _ = units_per_op(op_id, params)
        payload = unit == "bytes"
        scale = 8 / 1e6 if payload else 1.0
        th_unit = "Mb/s" if payload else "op/s"
        fig = _new(4.4)
        ax1, ax2 = fig.subplots(1, 2)
        for ax in (ax1, ax2):
            _style(ax)
        counts, omitted, provs, rounds, flags = set(), [], set(), [], {}
        over_ns = set()
        for engine in [e for e in engines if e in cells[(op_id, pk)]]:
            by_n = cells[(op_id, pk)][engine]
            pts = []
            for n in sorted(by_n):
                c = by_n[n]
                if c["status"] != "ok" or not (c.get("result") or {}).get("parallel"):
                    omitted.append(f"{engine} N={n}: {WORDS.get(c['status'], c['status'])}"
                                   + (f" — {c['detail']}" if c.get("detail") else ""))
                    continue
                pts.append((n, c["result"]["parallel"]))
                provs.add(c["provenance"])
            if not pts:
                continue
            color = engine_color(engine)
            ns = [n for n, _ in pts]
            counts |= set(ns)
            th = [p["aggregate"] * scale for _, p in pts]
            cis = [[v * scale for v in (p.get("aggregate_ci95") or [p["aggregate"]] * 2)] for _, p in pts]
            err = [[max(0.0, t - ci[0]) for t, ci in zip(th, cis)], [max(0.0, ci[1] - t) for t, ci in zip(th, cis)]]
            ax1.errorbar(ns, th, yerr=err, color=color, marker="o", markersize=6, linewidth=1.6, capsize=3,
                         label=engine, zorder=3)
            over = [(n, t) for (n, p), t in zip(pts, th) if p.get("oversubscribed")]
            over_ns |= {n for n, _ in over}
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
            rounds += [p.get("rounds") for _, p in pts]
            for _, p in pts:
                for f in p.get("flags", []):
                    if f != "oversubscribed":
                        flags[f] = flags.get(f, 0) + 1
        if not counts:
            continue
        ns_all = sorted(counts)
        for ax in (ax1, ax2):
            ax.set_xticks(ns_all)
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_xlabel("processes N (one per CPU)", fontsize=LABEL_PT)
            ax.set_xlim(min(ns_all) - 0.5, max(ns_all) + 0.5)
            if ncpu and max(ns_all) > ncpu:
                ax.axvspan(ncpu + 0.5, max(ns_all) + 0.5, color="#f2dede", alpha=0.6, zorder=0, linewidth=0)
                ax.text(ncpu + 0.55, 0.02, f"N > {ncpu} CPUs: oversubscribed", transform=ax.get_xaxis_transform(),
                        fontsize=SMALL_PT, color="#a94442", va="bottom")
        ax2.axhline(100, color="#444444", linestyle="--", linewidth=1.0, zorder=1)
        ax1.set_ylim(bottom=0)
        lo2 = min([0.0] + [float(min(line.get_ydata())) for line in ax2.get_lines() if len(line.get_ydata())])
        ax2.set_ylim(min(0.0, lo2), max(115.0, ax2.get_ylim()[1]))
        ax1.set_ylabel(f"aggregate throughput TH ({th_unit})", fontsize=LABEL_PT)
        ax2.set_ylabel("parallel efficiency TH_N / (N·TH_1) (%)", fontsize=LABEL_PT)
        ax1.set_title("throughput", loc="left", fontsize=LABEL_PT)
        ax2.set_title("efficiency", loc="left", fontsize=LABEL_PT)
        provs = sorted(provs) or ["measured"]
        _tag(ax1, provs)
        _tag(ax2, provs)
        handles, labels = ax1.get_legend_handles_labels()
        handles.append(Line2D([], [], color="#444444", linestyle="--", linewidth=1.0))
        labels.append("ideal: N·TH_1")
        if over_ns:
            handles.append(Line2D([], [], color="#444444", linestyle="none", marker="o", markerfacecolor="white"))
            labels.append("oversubscribed")
        ax2.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                   fontsize=SMALL_PT, frameon=False)
        short = params_short(op_id, params)
        title = f"{op_title(op_id)}: scaling over cores" + (f" ({short})" if short else "")
        fig.suptitle(title, fontsize=TITLE_PT)
        cap = [f"Left: aggregate throughput TH_N of {op_title(op_id)} (parameters: {params_full(params)}) in N "
               f"concurrent harness processes, each pinned to its own CPU ({th_unit}"
               + (", Mb = 10⁶ bit" if payload else "") + "), median over the rounds with its 95 % confidence "
               "interval as error bars; dashed: ideal linear scaling N·TH_1 in the engine's colour. Right: parallel "
               "efficiency TH_N / (N·TH_1) with its 95 % percentile-bootstrap interval; dashed: 100 %.",
               f"CPUs available: {ncpu} ({','.join(map(str, cpus))})"
               + (f"; N = {', '.join(map(str, sorted(over_ns)))} oversubscribed (hollow markers, shaded): "
                  "throughput cannot scale past the CPU count." if over_ns else "; no N was oversubscribed.")]
        rr = sorted({r for r in rounds if r})
        if rr:
            cap.append(f"n = {rr[0]}" + (f"–{rr[-1]}" if len(rr) > 1 else "") + " rounds per point (each round one "
                       "concurrent batch per process, timed by the orchestrator).")
        if flags:
            cap.append("Flags: " + ", ".join(f"{k} ×{v}" for k, v in sorted(flags.items())) + ".")
        if omitted:
            cap.append(_omitted_text(omitted))
        cap.append(provenance_text(provs).capitalize() + ".")
        cap.append(runs_caption([run], [run["id"]]))
        fig_id = _ids(used, "-".join(x for x in ["scaling", op_id, ps, _run_suffix([run["id"]])] if x))
        out.append(Figure(fig_id, "scaling", title, " ".join(cap), provs, fig))
    return out


# --- crossover -----------------------------------------------------------------------------------
def len3(x: float) -> str:
    """A length to 3 significant digits, without an exponent: 4690, 638, 21.4."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    digits = 2 - int(math.floor(math.log10(abs(x))))
    v = round(x, digits)
    return f"{v:.0f}" if digits <= 0 else f"{v:.{digits}f}".rstrip("0").rstrip(".")


def _verdict(a: str, b: str, a_pts: list[dict], b_pts: list[dict]) -> dict:
    """Where the cheaper engine changes, from models.crossover in both directions."""
    from ..models.crossover import crossover
    res = crossover(a_pts, b_pts)                  # from which length is B cheaper than A
    xs = res["lengths"]
    rng = f"{fmt_len(xs[0])}–{fmt_len(xs[-1])} B"
    fit = (res.get("linear_fit") or {}).get("text")

    def bound(v: dict) -> str:
        if v["status"] == "always":
            return f"≤ {fmt_len(xs[0])}"
        if v["status"] == "never":
            return f"> {fmt_len(xs[-1])}"
        return len3(v["x"])

    def interval(r):
        lo, hi = r["interval"]
        return [lo, hi], f"{bound(r['earliest'])} to {bound(r['latest'])}"

    def resolved(r) -> bool:
        """False when the intervals allow a crossover anywhere in the range or none at all."""
        return not (r["earliest"]["status"] == "always" and r["latest"]["status"] == "never")

    def unresolved_note(r) -> str:
        return "" if resolved(r) else "; not resolved: within the 95 % CIs the two are indistinguishable"

    def everywhere(r) -> tuple[bool, str]:
        """Whether the cheaper one stays cheaper on the intervals' pessimistic bounds too."""
        ok = r["latest"]["status"] == "always"
        return ok, "" if ok else "; not at every length beyond the 95 % CIs"

    st = res["crossover"]["status"]
    if st == "always":
        ok, note = everywhere(res)
        return {"status": "b-always", "x": None, "interval": [None, None], "cheaper_above": b, "lengths": xs,
                "resolved": ok,
                "text": f"{b} cheaper at every measured length ({rng}{note})", "linear_fit": fit}
    if st == "crossover":
        iv, ivt = interval(res)
        x = res["crossover"]["x"]
        return {"status": "b-from", "x": x, "interval": iv, "cheaper_above": b, "lengths": xs, "linear_fit": fit,
                "resolved": resolved(res),
                "text": f"{b} cheaper than {a} from {len3(x)} B (interval {ivt} B; {a} cheaper below"
                        f"{unresolved_note(res)})"}
    rev = crossover(b_pts, a_pts)                  # from which length is A cheaper than B
    st = rev["crossover"]["status"]
    if st == "always":
        ok, note = everywhere(rev)
        return {"status": "a-always", "x": None, "interval": [None, None], "cheaper_above": a, "lengths": xs,
                "resolved": ok,
                "text": f"{a} cheaper at every measured length ({rng}{note})", "linear_fit": fit}
    if st == "crossover":
        iv, ivt = interval(rev)
        x = rev["crossover"]["x"]
        return {"status": "a-from", "x": x, "interval": iv, "cheaper_above": a, "lengths": xs, "linear_fit": fit,
                "resolved": resolved(rev),
                "text": f"{a} cheaper than {b} from {len3(x)} B (interval {ivt} B; {b} cheaper below"
                        f"{unresolved_note(rev)})"}
    return {"status": "none", "x": None, "interval": [None, None], "cheaper_above": None, "lengths": xs,
            "resolved": True,
            "linear_fit": fit, "text": f"no consistent crossover within {rng} (equal at the longest length)"}


def _crossover_groups(run: dict, baseline: str, cache: dict | None = None) -> list[dict]:
    """Per (op, fixed params) swept over >= 2 lengths: the ratio curves and the rows."""
    from ..models.crossover import sweep_from_run
    view = _relative(run, baseline, cache)
    groups: dict = {}
    order = []
    for r in view["rows"]:
        if "bytes" not in r["params"]:
            continue
        fixed = {k: v for k, v in r["params"].items() if k != "bytes"}
        key = (r["op"], json.dumps(fixed, sort_keys=True))
        if key not in groups:
            groups[key] = {"op": r["op"], "fixed": fixed, "curves": {}, "rows": []}
            order.append(key)
        if r["status"] == "ok" and r["time_ratio"]:
            groups[key]["curves"].setdefault(r["engine"], []).append(
                (float(r["params"]["bytes"]), r["time_ratio"], r["time_ci95"], r.get("energy_ratio"),
                 r.get("energy_ci95")))
    out = []
    for key in order:
        g = groups[key]
        try:
            a = sweep_from_run(run, g["op"], baseline, g["fixed"])
        except ValueError:
            continue
        if len(a["time"]) < 2:
            continue
        for engine, pts in g["curves"].items():
            pts.sort()
            try:
                b = sweep_from_run(run, g["op"], engine, g["fixed"])
            except ValueError:
                continue
            common = sorted({p["x"] for p in a["time"]} & {p["x"] for p in b["time"]})
            if len(common) < 2:
                continue
            tv = _verdict(baseline, engine, a["time"], b["time"])
            ev, eprov = None, []
            ea, eb = a["energy"], b["energy"]
            if ea and eb and all(p["y"] > 0 for p in ea + eb) \
                    and len({p["x"] for p in ea} & {p["x"] for p in eb}) >= 2:
                ev = _verdict(baseline, engine, ea, eb)
                eprov = sorted(set(a["energy_provenance"]) | set(b["energy_provenance"]))
            row = {"run": run["id"], "label": (run.get("plan") or {}).get("label"), "op": g["op"],
                   "title": op_title(g["op"]), "params": g["fixed"], "a": baseline, "b": engine,
                   "lengths": common,
                   # flat, for a table: x = the crossover length (bytes), lo/hi = its interval, None where none
                   "time_x": tv["x"], "time_lo": tv["interval"][0], "time_hi": tv["interval"][1],
                   "time_text": tv["text"],
                   "energy_x": ev["x"] if ev else None, "energy_lo": ev["interval"][0] if ev else None,
                   "energy_hi": ev["interval"][1] if ev else None, "energy_text": ev["text"] if ev else None,
                   "energy_provenance": eprov, "status": tv["status"], "provenance": "modeled",
                   "text": "time: " + tv["text"] + (f"; energy ({', '.join(eprov) or 'measured'} inputs): "
                                                    + ev["text"] if ev else ""),
                   "time": tv, "energy": ev}
            g["rows"].append(row)
        if g["rows"]:
            out.append(g)
    return out


def crossover_rows(runs: list[dict], baseline: str | None = None) -> list[dict]:
    """For a table: per run with a baseline (see resolve_baseline), operation swept over >= 2 payload
    lengths, and engine B != the baseline A, from which length the cheaper engine changes.

    Row: run, label, op, title, params (the fixed ones), a (baseline), b, lengths (shared); flat for a
    table: time_x, time_lo, time_hi, time_text, energy_x, energy_lo, energy_hi, energy_text (None
    where there is no crossover length / no energy); energy_provenance, status (of time: 'b-from' |
    'a-from' | 'b-always' | 'a-always' | 'none'), provenance ('modeled'), text (time and energy in one
    sentence); then the details: time {status, x, interval [lo, hi] (None where the 95 % CIs allow no
    crossover in range), resolved (False: the CIs cannot tell the two apart), cheaper_above, lengths,
    text, linear_fit} and energy (the same, or None). Costs are
    interpolated linearly between measured lengths (models.crossover); 'from x B' means the engine
    named stays cheaper from x to the longest measured length."""
    from ..scaling import is_parallel_run
    rows = []
    for run in runs:
        if is_parallel_run(run):
            continue
        b, _ = resolve_baseline(run, baseline)
        if not b:
            continue
        for g in _crossover_groups(run, b):
            rows += g["rows"]
    return rows


def _crossover_figure(run: dict, baseline: str, why: str, g: dict, ps: str, used: set) -> Figure:
    energy = any(p[3] for pts in g["curves"].values() for p in pts) and any(r["energy"] for r in g["rows"])
    fig = _new(4.8 if not energy else 4.6, WIDTH if not energy else 10.0)
    axes = fig.subplots(1, 2) if energy else [fig.add_subplot()]
    engines = [r["b"] for r in g["rows"]]
    all_x = sorted({p[0] for e in engines for p in g["curves"][e]})
    metrics = [("time", 1, 2)] + ([("energy", 3, 4)] if energy else [])
    scales = []
    for ax, (metric, ri, ci) in zip(axes, metrics):
        _style(ax)
        values = [1.0]
        for e in engines:
            pts = [p for p in g["curves"][e] if p[ri]]
            if not pts:
                continue
            color = engine_color(e)
            xs, ys = [p[0] for p in pts], [p[ri] for p in pts]
            values += ys
            ax.plot(xs, ys, color=color, marker="o", markersize=5, linewidth=1.6, label=e, zorder=3)
            band = [p for p in pts if p[ci]]
            if band:
                lo, hi = [p[ci][0] for p in band], [p[ci][1] for p in band]
                values += [v for v in lo + hi if v > 0]
                ax.fill_between([p[0] for p in band], lo, hi, color=color, alpha=0.15, linewidth=0, zorder=2)
        ax.axhline(1.0, color="#222222", linewidth=1.0, zorder=1)
        xscale = _x_lengths(ax, all_x, "payload length (bytes)")
        noun = "time" if metric == "time" else "energy"
        yscale = _y_values(ax, values, f"{noun} / {baseline}'s {noun}")
        scales.append((xscale, yscale))
        lo_x, hi_x = all_x[0], all_x[-1]
        marks = [r for r in g["rows"] if r[metric] and r[metric]["status"] in ("b-from", "a-from")
                 and r[metric].get("resolved", True)]
        for k, r in enumerate(marks):
            v = r[metric]
            color = engine_color(r["b"])
            ilo, ihi = v["interval"]
            ax.axvspan(ilo if ilo is not None else lo_x, ihi if ihi is not None else hi_x, color=color, alpha=0.08,
                       linewidth=0, zorder=0)
            ax.axvline(v["x"], color=color, linestyle=":", linewidth=1.6, zorder=2)
            ax.annotate(f"{len3(v['x'])} B", xy=(v["x"], 0.98 - 0.08 * (k % 4)), xycoords=("data", "axes fraction"),
                        xytext=(3, 0), textcoords="offset points", fontsize=SMALL_PT, color=color, va="top",
                        ha="left")
        provs = ["measured", "modeled"] if metric == "time" else sorted(
            set(sum((r["energy_provenance"] for r in g["rows"] if r["energy"]), [])) | {"modeled"})
        _tag(ax, provs)
        if energy:
            ax.set_title(noun, loc="left", fontsize=LABEL_PT)
    handles, labels = axes[0].get_legend_handles_labels()        # every engine has a time curve
    axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                    fontsize=SMALL_PT, frameon=False, title="engine", title_fontsize=SMALL_PT)
    short = params_short(g["op"], g["fixed"])
    title = f"{op_title(g['op'])}: crossover vs {baseline}" + (f" ({short})" if short else "")
    fig.suptitle(title, fontsize=TITLE_PT)
    provs = ["measured", "modeled"]
    if energy:
        provs = sorted(set(provs) | set(sum((r["energy_provenance"] for r in g["rows"] if r["energy"]), [])))
    ns = [((c.get("result") or {}).get("n")) for c in run["cells"] if c["op"] == g["op"] and c["status"] == "ok"]
    cap = [f"Ratio of median times engine / {baseline} of {op_title(g['op'])} (parameters: {params_full(g['fixed'])}) "
           "against the payload length (measured), one line per engine; shaded bands: 95 % bootstrap interval of "
           f"the ratio; below the line at 1 the engine is faster than {baseline}."
           + (" Right: the same for the energy per operation." if energy else ""),
           f"Baseline {baseline}: {why}.",
           "Dotted verticals: crossover lengths (provenance: modeled; costs interpolated linearly between the "
           "measured lengths, models.crossover), with the range the cells' 95 % confidence intervals allow shaded; "
           "a crossover the intervals cannot resolve gets no line. "
           "Crossovers: " + "; ".join(r["b"] + " — " + r["text"] for r in g["rows"]) + "."]
    nt = n_text(ns)
    if nt:
        cap.append(nt + ".")
    cap.append(_axes_text(*scales[0]))
    cap.append(provenance_text(provs).capitalize() + " (measured ratios, modeled crossover lengths).")
    cap.append(runs_caption([run], [run["id"]]))
    fig_id = _ids(used, "-".join(x for x in ["crossover", g["op"], ps, _run_suffix([run["id"]])] if x))
    return Figure(fig_id, "crossover", title, " ".join(cap), provs, fig)


# --- entry point ---------------------------------------------------------------------------------
def build_figures(runs: list[dict], baseline: str | None = None) -> list[Figure]:
    """Every figure the runs have data for, in KINDS order. Sweeps (duration, energy, cycles) combine
    the runs: one figure per operation and fixed parameters, a line per engine (and run or target
    where one engine appears several times); the relative, split, scaling and crossover figures are
    per run."""
    from ..scaling import is_parallel_run
    used: set = set()
    cache: dict = {}
    figs: list[Figure] = []
    figs += _sweep_figures(runs, "time", used)
    figs += _sweep_figures(runs, "energy", used)
    figs += _sweep_figures(runs, "cycles", used)
    for run in runs:
        if is_parallel_run(run):
            continue
        b, why = resolve_baseline(run, baseline)
        if b:
            for metric in ("time", "energy"):
                f = _heatmap(run, b, why, metric, used, cache)
                if f:
                    figs.append(f)
    for run in runs:
        f = _energy_split(run, used)
        if f:
            figs.append(f)
    for run in runs:
        if is_parallel_run(run):
            figs += _scaling(run, used)
    for run in runs:
        if is_parallel_run(run):
            continue
        b, why = resolve_baseline(run, baseline)
        if not b:
            continue
        groups = _crossover_groups(run, b, cache)
        slugs = _param_slugs([(g["op"], g["fixed"]) for g in groups])
        for g, ps in zip(groups, slugs):
            figs.append(_crossover_figure(run, b, why, g, ps, used))
    figs.sort(key=lambda f: KINDS.index(f.kind))
    return figs

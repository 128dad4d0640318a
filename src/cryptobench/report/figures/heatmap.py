"""The relative heat-map: engine / baseline ratio of the printed times (energy: medians) per operation and parameters, log colour
centred at 1 (the ZHAW IoT study, figure 2); and the baseline a run's relative figures use."""
from __future__ import annotations

import json
import math

from ...analysis.relative import WORDS, fmt_ratio, relative, run_engines
from ..captions import estimator_words, n_text, provenance_text, runs_caption
from ..series import op_title, param_text
from .style import (LABEL_PT, TICK_PT, TITLE_PT, WIDTH, Figure, luminance, new_figure, run_suffix, tag,
                    unique_id)
from ...core.records import Run, params_key
from ...targets.host.parallel import is_parallel_run


# --- baseline -----------------------------------------------------------------------------------
def resolve_baseline(run: Run, baseline: str | None) -> tuple[str | None, str]:
    """(engine, why) for a run's relative figures; (None, why) when it has none."""
    engines = run_engines(run)
    if baseline and baseline in engines:
        return baseline, "the report's chosen baseline"
    plan_b = run.plan.baseline
    if plan_b and plan_b in engines:
        why = "the run's own baseline"
        if baseline:
            why += f" ({baseline} is not an engine of this run)"
        return plan_b, why
    return None, "no baseline: neither chosen for the report nor set in the run"


def baseline_runs(runs: list[Run], baseline: str | None):
    """(run, engine, why) per run that is not parallel and has a baseline (see resolve_baseline)."""
    for run in runs:
        if is_parallel_run(run):
            continue
        b, why = resolve_baseline(run, baseline)
        if b:
            yield run, b, why


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


def relative_view(run: Run, baseline: str, cache: dict | None) -> dict:
    """relative() (a seeded bootstrap per cell: not free), once per run and baseline per build."""
    if cache is None:
        return relative(run, baseline)
    key = (id(run), baseline)
    if key not in cache:
        cache[key] = relative(run, baseline)
    return cache[key]


def heatmap_figure(run: Run, baseline: str, why: str, metric: str, used: set, cache: dict | None = None) -> Figure | None:
    import matplotlib
    import numpy as np
    from matplotlib.colors import Normalize
    view = relative_view(run, baseline, cache)
    rkey = "time_ratio" if metric == "time" else "energy_ratio"
    rows = view["rows"]
    engines = [e for e in run_engines(run) if e != baseline
               and any(r["engine"] == e and r[rkey] is not None for r in rows)]
    if not engines:
        return None
    keys, dropped, lookup = _heat_rows(rows, engines, rkey)
    grid, texts, words, cis = _heat_cells(keys, engines, lookup, metric)
    finite = np.abs(grid[np.isfinite(grid)])
    lim = max(1, math.ceil(float(finite.max()) - 1e-9)) if finite.size else 1
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#d9d9d9")
    norm = Normalize(vmin=-lim, vmax=lim)
    nr, nc = len(keys), len(engines)
    width = min(14.0, max(WIDTH, 3.6 + 1.15 * nc + 1.2))
    height = 1.6 + 0.32 * nr
    fig = new_figure(height, width)
    ax = fig.add_subplot()
    im = _draw_grid(ax, grid, texts, engines, _row_labels(keys), cmap, norm)
    noun = "time" if metric == "time" else "energy"
    _log_colorbar(fig, im, ax, nr, lim, f"{noun} / {baseline}'s {noun} (log scale)")
    if metric == "time":
        provs = sorted({c.provenance for c in run.cells if c.ok}) or ["measured"]
    else:
        provs = sorted({r.get("energy_provenance") or "measured" for r in rows if r["energy_ratio"] is not None})
    tag(ax, provs)
    title = f"{noun.capitalize()} relative to {baseline} (run {run.id})"
    fig.suptitle(title, fontsize=TITLE_PT)
    cap = _heat_caption(run, baseline, why, metric, lim, cis, words, dropped, provs)
    fig_id = unique_id(used, f"heatmap-{noun}-{run_suffix([run.id])}")
    return Figure(fig_id, "heatmap", title, cap, provs, fig)


def _heat_rows(rows: list[dict], engines: list[str], rkey: str) -> tuple[list, list, dict]:
    """The heat-map's rows, (op, params key) in first-seen order: those with a ratio for some engine,
    those without (left out), and per row the relative rows by engine."""
    order: list = []
    lookup: dict = {}
    for r in rows:
        key = (r["op"], params_key(r["params"]))
        if key not in lookup:
            lookup[key] = {}
            order.append(key)
        lookup[key][r["engine"]] = r
    keys = [k for k in order if any((lookup[k].get(e) or {}).get(rkey) is not None for e in engines)]
    dropped = [k for k in order if k not in keys]
    return keys, dropped, lookup


def _heat_cells(keys: list, engines: list[str], lookup: dict, metric: str):
    """Per cell: log10 of the ratio (NaN where none), its text, the words of the cells without a
    ratio, and how many ratios have an interval."""
    import numpy as np
    rkey = "time_ratio" if metric == "time" else "energy_ratio"
    ckey = "time_ci95" if metric == "time" else "energy_ci95"
    grid = np.full((len(keys), len(engines)), np.nan)
    texts = [["—"] * len(engines) for _ in keys]
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
    return grid, texts, words, cis


def _draw_grid(ax, grid, texts: list[list[str]], engines: list[str], labels: list[str], cmap, norm):
    """The coloured cells with their texts, engines on top and rows on the left; returns the image."""
    import numpy as np
    nr, nc = grid.shape
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
                color = "black" if luminance(cmap(norm(v))) > 0.5 else "white"
                size = TICK_PT
            else:
                color, size = "#333333", 8 if len(texts[i][j]) > 8 else TICK_PT
            ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=size, color=color)
    return im


def _log_colorbar(fig, im, ax, nr: int, lim: int, label: str) -> None:
    """The colour bar, one tick per decade from 10^-lim to 10^lim."""
    bar = fig.colorbar(im, ax=ax, shrink=min(1.0, max(0.35, 8.0 / max(nr, 1))), aspect=20, pad=0.02)
    ticks = list(range(-lim, lim + 1))
    bar.set_ticks(ticks)
    bar.set_ticklabels([f"×{10.0 ** t:g}" for t in ticks])
    bar.ax.tick_params(labelsize=TICK_PT)
    bar.set_label(label, fontsize=LABEL_PT)


def _heat_caption(run: Run, baseline: str, why: str, metric: str, lim: int, cis: int, words: set,
                  dropped: list, provs: list[str]) -> str:
    noun = "time" if metric == "time" else "energy"
    results = [c.result for c in run.cells if c.ok and c.result is not None]
    ns, ks = [r.n for r in results], [r.k for r in results]
    est = estimator_words(run)
    what = f"Ratio of the printed times (each engine's {est})" if metric == "time" else "Ratio of medians"
    cap = [f"{what}, engine / {baseline}, of the {noun} per operation, per operation and parameters "
           f"(rows) and engine (columns), as the ZHAW IoT study's figure 2 divides the secure elements by the on-chip "
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
            cap.append(nt + f" (each cell a ratio of two {est} times).")
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(runs_caption([run], [run.id]))
    return " ".join(cap)

"""Crossovers: t_engine / t_baseline vs payload length with the crossover lengths of models.crossover
(modeled; none of the studies draws this figure), and the same crossovers as table rows."""
from __future__ import annotations

import json

from ...core.records import Run
from ..captions import estimator_words, n_text, provenance_text, runs_caption
from ..series import engine_color, fmt_len, op_title, params_full, params_short
from .heatmap import baseline_runs, relative_view
from .style import (LABEL_PT, SMALL_PT, TITLE_PT, WIDTH, Figure, axes_text, len3, new_figure, run_suffix,
                    style_axes, tag, unique_id, x_lengths, y_values)
from ...analysis.models.crossover import crossover, sweep_from_run


def _verdict(a: str, b: str, a_pts: list[dict], b_pts: list[dict]) -> dict:
    """Where the cheaper engine changes, from models.crossover in both directions."""
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
        """Whether the 95 % CIs place the crossover inside the measured range: False when they allow it
        anywhere in the range or none at all (the latest bound never crosses)."""
        return r["latest"]["status"] != "never"

    def unresolved_note(r, cheaper: str) -> str:
        if resolved(r):
            return ""
        if r["earliest"]["status"] == "always":
            return "; not resolved: within the 95 % CIs the two are indistinguishable"
        return f"; not resolved: within the 95 % CIs {cheaper} may not become cheaper in the measured range"

    def everywhere(r) -> tuple[bool, str]:
        """Whether the cheaper one stays cheaper on the intervals' pessimistic bounds too."""
        ok = r["latest"]["status"] == "always"
        return ok, "" if ok else "; not at every length beyond the 95 % CIs"

    def verdict(r: dict, cheaper: str, other: str, prefix: str) -> dict | None:
        """`cheaper` from some length on (or at every length) per crossover result `r`; None if neither."""
        st = r["crossover"]["status"]
        if st == "always":
            ok, note = everywhere(r)
            return {"status": f"{prefix}-always", "x": None, "interval": [None, None], "cheaper_above": cheaper,
                    "lengths": xs, "resolved": ok, "linear_fit": fit,
                    "text": f"{cheaper} cheaper at every measured length ({rng}{note})"}
        if st == "crossover":
            iv, ivt = interval(r)
            x = r["crossover"]["x"]
            return {"status": f"{prefix}-from", "x": x, "interval": iv, "cheaper_above": cheaper, "lengths": xs,
                    "linear_fit": fit, "resolved": resolved(r),
                    "text": f"{cheaper} cheaper than {other} from {len3(x)} B (interval {ivt} B; {other} cheaper "
                            f"below{unresolved_note(r, cheaper)})"}
        return None

    found = verdict(res, b, a, "b") or verdict(crossover(b_pts, a_pts), a, b, "a")   # B cheaper from…, else A
    if found:
        return found
    return {"status": "none", "x": None, "interval": [None, None], "cheaper_above": None, "lengths": xs,
            "resolved": True,
            "linear_fit": fit, "text": f"no consistent crossover within {rng} (equal at the longest length)"}


def crossover_groups(run: Run, baseline: str, cache: dict | None = None) -> list[dict]:
    """Per (op, fixed params) swept over >= 2 lengths: the ratio curves and the rows."""
    view = relative_view(run, baseline, cache)
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
            row = {"run": run.id, "label": run.plan.label, "op": g["op"],
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


def crossover_rows(runs: list[Run], baseline: str | None = None) -> list[dict]:
    """For a table: per run with a baseline (see resolve_baseline), operation swept over >= 2 payload
    lengths, and engine B != the baseline A, from which length the cheaper engine changes.

    Row: run, label, op, title, params (the fixed ones), a (baseline), b, lengths (shared); flat for a
    table: time_x, time_lo, time_hi, time_text, energy_x, energy_lo, energy_hi, energy_text (None
    where there is no crossover length / no energy); energy_provenance, status (of time: 'b-from' |
    'a-from' | 'b-always' | 'a-always' | 'none'), provenance ('modeled'), text (time and energy in one
    sentence); then the details: time {status, x, interval [lo, hi] (None where the 95 % CIs allow no
    crossover in range), resolved (False: the CIs allow the crossover anywhere in the range or none at
    all; then no length is drawn or tabulated), cheaper_above, lengths,
    text, linear_fit} and energy (the same, or None). Costs are
    interpolated linearly between measured lengths (models.crossover); 'from x B' means the engine
    named stays cheaper from x to the longest measured length."""
    rows = []
    for run, b, _ in baseline_runs(runs, baseline):
        for g in crossover_groups(run, b):
            rows += g["rows"]
    return rows


def crossover_figure(run: Run, baseline: str, why: str, g: dict, ps: str, used: set) -> Figure:
    energy = any(p[3] for pts in g["curves"].values() for p in pts) and any(r["energy"] for r in g["rows"])
    fig = new_figure(4.8 if not energy else 4.6, WIDTH if not energy else 10.0)
    axes = fig.subplots(1, 2) if energy else [fig.add_subplot()]
    engines = [r["b"] for r in g["rows"]]
    all_x = sorted({p[0] for e in engines for p in g["curves"][e]})
    metrics = [("time", 1, 2)] + ([("energy", 3, 4)] if energy else [])
    scales = []
    for ax, (metric, ri, ci) in zip(axes, metrics):
        style_axes(ax)
        values = _ratio_curves(ax, g, engines, ri, ci)
        ax.axhline(1.0, color="#222222", linewidth=1.0, zorder=1)
        xscale = x_lengths(ax, all_x, "payload length (bytes)")
        noun = "time" if metric == "time" else "energy"
        yscale = y_values(ax, values, f"{noun} / {baseline}'s {noun}")
        scales.append((xscale, yscale))
        _crossover_marks(ax, g, metric, all_x[0], all_x[-1])
        provs = ["measured", "modeled"] if metric == "time" else sorted(
            set(sum((r["energy_provenance"] for r in g["rows"] if r["energy"]), [])) | {"modeled"})
        tag(ax, provs)
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
    cap = _crossover_caption(run, baseline, why, g, energy, scales[0], provs)
    fig_id = unique_id(used, "-".join(x for x in ["crossover", g["op"], ps, run_suffix([run.id])] if x))
    return Figure(fig_id, "crossover", title, cap, provs, fig)


def _ratio_curves(ax, g: dict, engines: list[str], ri: int, ci: int) -> list[float]:
    """One ratio line per engine (point field ri) with its 95 % band (field ci); returns every value
    drawn, and 1, for the y scale."""
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
    return values


def _crossover_marks(ax, g: dict, metric: str, lo_x: float, hi_x: float) -> None:
    """A dotted vertical at each resolved crossover length of the metric, its interval shaded; an
    unresolved one (the row says "not resolved") gets neither."""
    marks = [r for r in g["rows"] if drawn(r[metric])]
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


def drawn(verdict: dict | None) -> bool:
    """Whether a crossover verdict (a row's time or energy) has a length to draw or print: a crossover
    inside the range that the 95 % CIs resolve."""
    return bool(verdict) and verdict["status"] in ("b-from", "a-from") and verdict["resolved"] is True


def _crossover_caption(run: Run, baseline: str, why: str, g: dict, energy: bool, scales: tuple,
                       provs: list[str]) -> str:
    ns = [c.result.n for c in run.cells if c.op == g["op"] and c.ok and c.result is not None]
    cap = [f"Ratio of the printed times ({estimator_words(run)}) engine / {baseline} of {op_title(g['op'])} (parameters: {params_full(g['fixed'])}) "
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
    cap.append(axes_text(*scales))
    cap.append(provenance_text(provs).capitalize() + " (measured ratios, modeled crossover lengths).")
    cap.append(runs_caption([run], [run.id]))
    return " ".join(cap)

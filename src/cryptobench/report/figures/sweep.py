"""Duration, energy and cycles per operation vs payload length, a line per engine (or library), 95 % CI
bands shaded (the TI CC13x2/CC26x2 report, figures 2-9; cycles: the Cifra AEAD study's chart)."""
from __future__ import annotations

import math

from ...catalog.ops import OPS
from ...core.records import Run
from ..captions import ESTIMATOR_WORDS, conditions_caption, n_text, provenance_text
from ..published import published_series
from ..series import Group, Sweeps, energy_unit, fmt_len, op_title, params_full, params_short, style_for
from ..tables import pick_unit
from ..sweep_summary import summary_caption
from .style import (TITLE_PT, Figure, axes_text, legend, new_figure, omitted_text, param_slugs, run_suffix,
                    style_axes, tag, tally_flag_text, unique_id, x_lengths, y_values)

METRIC_KIND = {"time": "duration", "energy": "energy", "cycles": "cycles"}
PUBLISHED_COLORS = ["#222222", "#777777", "#aaaaaa", "#444444"]


def _published(ax, published: list, scale: float) -> list[float]:
    """Published series: grey shades, dashed, hollow markers. Returns the plotted values."""
    values = []
    for i, ps in enumerate(published):
        xs = [x for x, _ in ps.points]
        ys = [y * scale for _, y in ps.points]
        values += ys
        ax.plot(xs, ys, color=PUBLISHED_COLORS[i % len(PUBLISHED_COLORS)], linestyle="--" if len(xs) > 1 else "none",
                marker="o", markerfacecolor="none", markersize=5 if len(xs) < 20 else 3, linewidth=1.2,
                label=ps.label, zorder=2.5)
    return values


def _published_caption(published: list) -> str:
    docs = list(dict.fromkeys(ps.document for ps in published))
    return "Published (dashed, hollow markers; provenance: published), from " + "; ".join(docs) + ": " + "; ".join(
        f"{ps.source.id}, {ps.table} ({len(ps.points)} point{'s' if len(ps.points) != 1 else ''}; {ps.conditions()})"
        for ps in published) + "."


def _sweep_figure(g: Group, sweeps: Sweeps, metric: str, fig_id: str, published: list | None = None) -> Figure:
    published = published or []
    op = OPS.get(g.op)
    payload = bool(op and op.payload)
    xlabel = "payload length (bytes)" if payload or not op else "bytes per request"
    points = [p for s in g.series for p in s.points]
    unit, scale, ylabel, what = _y_unit(points, metric, g.estimators)
    fig = new_figure(4.6)
    ax = fig.add_subplot()
    style_axes(ax)
    values, any_band, zero_band = _series_lines(ax, g, scale)
    values += _published(ax, published, scale)
    xscale = x_lengths(ax, g.xs, xlabel)
    yscale = y_values(ax, values, ylabel)
    provs = sorted({p for s in g.series for p in s.provenance} | ({"published"} if published else set()))
    tag(ax, provs)
    legend(ax, len(g.series) + len(published), "library" if metric == "cycles" else "engine")
    short = params_short(g.op, g.fixed)
    title = f"{op_title(g.op)}: {METRIC_KIND[metric]} vs {'payload length' if payload or not op else 'bytes per request'}" + (
        f" ({short})" if short else "")
    fig.suptitle(title, fontsize=TITLE_PT)
    multi = len(g.runs) > 1 and not g.summarised
    noun = "library" if metric == "cycles" else "engine"
    cap = [f"{what} of {op_title(g.op)} (parameters: {params_full(g.fixed)}) against the "
           f"{'payload length' if payload or not op else 'bytes per request'}, one line per "
           f"{noun}{' and run' if multi else ''}; markers at the measured "
           f"lengths ({', '.join(fmt_len(x) for x in g.xs)} B)."]
    if g.summarised:
        cap.append(summary_caption(sum(s.n_runs for s in g.series), len(g.runs), noun,
                                   _estimate_noun(g.estimators if metric == "time" else set())))
    if len({s.mode for s in g.series}) > 1:
        cap.append("single-shot: each sample is one operation timed on its own (run --single: latency); "
                   "batched: each sample is the mean of a calibrated batch of k operations.")
    cap += _metric_notes(g, sweeps, metric, provs)
    if not g.summarised:
        cap.append(_band_note(any_band, zero_band, g.estimators if metric == "time" else set()))
    nt = n_text(g.tally.ns, g.tally.ks if metric != "energy" else None, "windows" if metric == "energy" else "samples")
    if nt:
        cap.append((f"Each run's {_estimate_noun(g.estimators if metric == 'time' else set())}: "
                    if g.summarised else "") + nt + ".")
    cap.append(axes_text(xscale, yscale))
    for t in (tally_flag_text(g.tally), omitted_text(g.omitted, more=g.omitted_more)):
        if t:
            cap.append(t)
    if published:
        cap.append(_published_caption(published))
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(sweeps.caption(g.runs))
    return Figure(fig_id, METRIC_KIND[metric], title, " ".join(cap), provs, fig)


def estimator_label(estimators) -> str:
    """The estimators a duration figure's points are, in words (what the tables print: a host run's
    estimate, e.g. p1; the median where a cell has no estimate)."""
    return " / ".join(ESTIMATOR_WORDS.get(e, e) for e in sorted(estimators)) or "median"


def _estimate_noun(estimators) -> str:
    """'median' or 'p1' (or 'p1 / median'): the short name of the printed estimate, for captions."""
    return " / ".join(sorted(estimators)) or "median"


def _y_unit(points: list, metric: str, estimators=()) -> tuple[str, float, str, str]:
    """(unit, scale from the stored unit, y label, what the caption calls the values) for a metric;
    time and energy in a unit that suits the points' geometric middle. Durations name the estimator
    the tables print (Result.reported_time) on the axis and in the caption."""
    if metric == "time":
        ys = [p.y for p in points if p.y > 0]
        unit, scale = pick_unit([math.sqrt(min(ys) * max(ys))] if ys else [])
        return (unit, scale, f"duration per operation, {_estimate_noun(estimators)} ({unit})",
                f"Time per operation, {estimator_label(estimators)} (the tables' printed estimate)")
    if metric == "energy":
        ys = [p.y for p in points if p.y > 0]
        unit, scale = energy_unit([math.sqrt(min(ys) * max(ys))] if ys else [])
        return unit, scale, f"energy per operation ({unit})", "Energy per operation"
    return "cycles", 1.0, "cycles per operation", "Median cycles per operation"


def _series_lines(ax, g: Group, scale: float) -> tuple[list[float], bool, bool]:
    """A line per series with its 95 % band shaded; returns the values drawn, whether some band has
    a width and whether some band has none."""
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
    return values, any_band, zero_band


def _metric_notes(g: Group, sweeps: Sweeps, metric: str, provs: list[str]) -> list[str]:
    """Caption sentences on where cycles come from, or how energy was measured or modeled."""
    cap = []
    if metric == "cycles":
        counters = sorted(sweeps.counters_of(g))
        names = {"model": "the simulator's cycle model", "dwt": "the core's DWT cycle counter"}
        cap.append("Cycles from " + ", ".join(names.get(c, c) for c in counters if c != "?") + ".")
    if metric == "energy":
        methods = sorted(sweeps.methods_of(g) - {""})
        if "modeled" in provs:
            cap.append("Modeled energy = simulated (or measured) time × the device profile's supply voltage × "
                       "active current.")
        if methods:
            cap.append("Method: " + "; ".join(m.rstrip(".") for m in methods[:2]) + ".")
    return cap


def _band_note(any_band: bool, zero_band: bool, estimators=()) -> str:
    """What the shaded bands are: the 95 % interval of the number drawn (a p1's repeat interval, as
    the tables print it; else the median's confidence interval)."""
    if any_band:
        of = "the median" if set(estimators) <= {"median"} else f"the printed estimate ({estimator_label(estimators)})"
        return f"Shaded bands: 95 % confidence interval of {of}" + (
            " (zero width where the samples are identical, e.g. a deterministic simulation)." if zero_band else ".")
    if zero_band:
        return ("The 95 % confidence intervals have zero width (identical samples, e.g. a deterministic "
                "simulation), so no band is drawn.")
    return "No confidence intervals stored for these points."


def sweep_figures(runs: list[Run], metric: str, used: set, references: list | tuple = ()) -> list[Figure]:
    """One figure per sweep group of runs loaded whole (see figures_of_sweeps)."""
    sweeps = Sweeps(metric, len(runs))
    for run in runs:
        sweeps.add(run, conditions_caption(run))
    return list(figures_of_sweeps(sweeps, used, references))


def figures_of_sweeps(sweeps: Sweeps, used: set, references: list | tuple = ()):
    """One figure per sweep group, made one at a time (the report writes and drops each); with
    `references` (loaded studies), their matching published points drawn beside the measured ones."""
    metric = sweeps.metric
    groups = sweeps.result()
    slugs = param_slugs([(g.op, g.fixed) for g in groups])
    for g, ps in zip(groups, slugs):
        fig_id = unique_id(used, "-".join(x for x in [METRIC_KIND[metric], g.op, ps, run_suffix(g.runs)] if x))
        yield _sweep_figure(g, sweeps, metric, fig_id, published_series(references, g.op, g.fixed, metric, g.xs))

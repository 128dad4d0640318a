"""The report's figures, drawn from stored runs with matplotlib's object API (no pyplot: no global
state, no display, safe in threads).

    build_figures(runs, baseline=None) -> [Figure]      every figure the runs have data for
    crossover_rows(runs, baseline=None) -> [dict]        the crossover lengths, for a table

One module per kind: sweep.py (duration, energy, cycles), heatmap.py, energy_split.py, scaling.py,
crossover.py, distribution.py; style.py holds the drawing helpers they share. offload.py draws `model offload
RUN --figure` (not a report kind).

Kinds (only where the data exists):
  duration      host cells: time per operation vs payload length (params['bytes'] with at
                least two values), per operation and fixed other parameters, a line per engine:
                the estimate the tables print (p1, or the median where a cell has none) with its
                95 % interval shaded, named on the axis and in the caption (the TI CC13x2/CC26x2
                report, figures 2-9)
  energy        the same for result.energy.per_op_j (measured, or modeled on simulated targets)
  cycles        microcontroller cells (target not 'host'): cycles per operation vs length, a line per
                library (the Cifra AEAD study's chart); simulated or measured as the cells say
  heatmap       per run with a baseline: engine / baseline ratio of medians per operation and
                parameters, colour on a log scale centred at 1, ratios to 3 significant digits in
                the cells (the ZHAW IoT study, figure 2); one for time, one for energy where energy ratios exist
  energy-split  cells with result.energy.supplies: 100 % stacked bars of each supply's share (the
                ZHAW IoT study, figure 3)
  scaling       parallel runs: aggregate throughput and parallel efficiency vs N (the Pisa Cortex-A53 paper)
  crossover     per run with a baseline, per operation swept over >= 2 lengths: t_engine /
                t_baseline vs length, with the crossover lengths of models.crossover (modeled)
  history       with `report --history OP`: per series (engine, target, parameters) of OP across the
                runs, its value in the library's commit order (else time), change points marked
                (analysis/history.py; history.py here)
  distribution  per run, per operation whose cost varies by design (catalog Op.executions: ML-DSA
                signing): a histogram of the cycles of every timed execution (k = 1 samples), a
                panel per cell, mean / min / max marked (pqm4's AVG / MIN / MAX)

The baseline of a heat-map or crossover figure: `baseline` when that engine is in the run, else the
run's own plan baseline; a run with neither gets no heat-map and no crossover figure (a ratio to an
arbitrary engine would read as a claim nobody made). Captions say which was used.
"""
from __future__ import annotations

from ...core.records import Run

from .crossover import crossover_figure, crossover_groups, crossover_rows
from .distribution import distribution_figures
from .energy_split import energy_split_figure
from .history import history_figures
from .heatmap import baseline_runs, heatmap_figure, resolve_baseline
from .scaling import scaling_figures
from .style import Figure, param_slugs
from .sweep import figures_of_sweeps, sweep_figures
from ...targets.host.parallel import is_parallel_run

__all__ = ["KINDS", "Figure", "build_figures", "crossover_rows", "figures_of_sweeps", "history_figures", "resolve_baseline",
           "run_figures"]

KINDS = ["duration", "energy", "cycles", "heatmap", "energy-split", "scaling", "crossover", "distribution", "history"]


def build_figures(runs: list[Run], baseline: str | None = None, references: list | tuple = ()) -> list[Figure]:
    """Every figure the runs have data for, in KINDS order. Sweeps (duration, energy, cycles) combine
    the runs: one figure per operation and fixed parameters, a line per engine (and run or target
    where one engine appears several times); the relative, split, scaling and crossover figures are
    per run. `references` (loaded studies, references/) add their published points to the sweeps.
    The report makes the same figures a run at a time (run_figures, then figures_of_sweeps)."""
    used: set = set()
    figs: list[Figure] = []
    for metric in ("time", "energy", "cycles"):
        figs += sweep_figures(runs, metric, used, references)
    for run in runs:
        figs += run_figures(run, baseline, used)
    figs.sort(key=lambda f: KINDS.index(f.kind))
    return figs


def run_figures(run: Run, baseline: str | None, used: set, cache: dict | None = None):
    """The figures of one run alone, one at a time: its relative heat-maps (time, energy), its
    energy split, its scaling figures, its crossover figures and its per-execution distributions."""
    cache = {} if cache is None else cache
    for _, b, why in baseline_runs([run], baseline):
        for metric in ("time", "energy"):
            f = heatmap_figure(run, b, why, metric, used, cache)
            if f:
                yield f
    f = energy_split_figure(run, used)
    if f:
        yield f
    if is_parallel_run(run):
        yield from scaling_figures(run, used)
    for _, b, why in baseline_runs([run], baseline):
        groups = crossover_groups(run, b, cache)
        slugs = param_slugs([(g["op"], g["fixed"]) for g in groups])
        for g, ps in zip(groups, slugs):
            yield crossover_figure(run, b, why, g, ps, used)
    yield from distribution_figures(run, used)

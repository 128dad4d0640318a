"""Bounded memory for the report's sweep figures over many runs (issue 30): what a sweep group keeps
grows with its lengths and engines, not with the number of runs (their ids aside).

A sweep figure draws one line per (run, engine) while there are at most MAX_LINES of them. Beyond
that the lines could not be told apart (and a legend of 200 entries leaves the axes no room), so
the group draws one line per engine (and target and timing mode) over all its runs instead: at
each length the mean of the runs' medians, shaded from the lowest to the highest run's median.
RunSummary gathers those from the first cell on (a few numbers per engine and length, updated as
each run's cells pass), so the per-run points can be dropped the moment the group outgrows
MAX_LINES. Tally counts what the caption says of every point (samples, batch sizes, flags) the
same way. The caption says when a figure shows the summary, and of how many runs and lines.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_LINES = 20          # lines a sweep figure draws one per (run, engine); beyond, one per engine over the runs
OMITTED_KEPT = 8        # reasons for cells left out of a figure that its caption quotes; the rest are counted


@dataclass
class Tally:
    """What the caption says of a group's points, counted as they come: the sample counts and
    batch sizes seen, and how many points carry which quality flag."""
    ns: set = field(default_factory=set)
    ks: set = field(default_factory=set)
    flags: dict = field(default_factory=dict)
    flagged: int = 0
    total: int = 0

    def merge(self, other: "Tally") -> None:
        """Another group's counts added (series.merge_single_engine)."""
        self.ns |= other.ns
        self.ks |= other.ks
        for f, count in other.flags.items():
            self.flags[f] = self.flags.get(f, 0) + count
        self.flagged += other.flagged
        self.total += other.total

    def add(self, n: int | None, k: int | None, flags) -> None:
        self.total += 1
        if n is not None:
            self.ns.add(int(n))
        if k is not None:
            self.ks.add(int(k))
        if flags:
            self.flagged += 1
            for f in flags:
                self.flags[f] = self.flags.get(f, 0) + 1


@dataclass
class _Spread:
    """The runs' medians at one length of one line: how many, their sum, the lowest and the highest."""
    runs: int = 0
    total: float = 0.0
    lo: float = math.inf
    hi: float = -math.inf

    def add(self, y: float) -> None:
        self.runs += 1
        self.total += y
        self.lo, self.hi = min(self.lo, y), max(self.hi, y)


@dataclass
class _Line:
    """One summary line (an engine on a target in a timing mode) over the runs."""
    at: dict = field(default_factory=dict)            # length -> _Spread
    provenance: set = field(default_factory=set)
    runs: int = 0                                     # runs with a point on this line
    last_run: int | None = None


class RunSummary:
    """Per (engine, target, mode): at each length, the spread of the runs' medians. Cells come a
    run at a time (Sweeps.add), so a line counts a run when its first cell of that run arrives."""

    def __init__(self):
        self.lines: dict[tuple, _Line] = {}

    @property
    def n_series(self) -> int:
        """Lines the figure would draw one per run: (run, engine, target, mode) seen."""
        return sum(line.runs for line in self.lines.values())

    def add(self, run_id: int, key: tuple, x: float, y: float, provenance: str) -> None:
        line = self.lines.setdefault(key, _Line())
        if line.last_run != run_id:
            line.runs, line.last_run = line.runs + 1, run_id
        line.at.setdefault(x, _Spread()).add(y)
        line.provenance.add(provenance)

    def rows(self):
        """(key, provenance, runs, [(x, mean, lowest, highest, runs at x)]) per line, lengths in order."""
        for key, line in self.lines.items():
            yield key, set(line.provenance), line.runs, [
                (x, s.total / s.runs, s.lo, s.hi, s.runs) for x, s in sorted(line.at.items())]


def summary_caption(n_series: int, n_runs: int, noun: str, estimate: str = "median") -> str:
    """The caption's sentence for a figure drawn from a RunSummary; `estimate` names the runs'
    values it averages ('median', 'p1': what their tables print)."""
    plural = "medians" if estimate == "median" else f"{estimate} estimates"
    return (f"{n_series} {noun}–run lines over {n_runs} runs are more than the {MAX_LINES} a figure draws one "
            f"by one, so each line is one {noun} over all of its runs (the legend gives their number): at each "
            f"length the mean of the runs' {plural}, shaded from the lowest to the highest run's {estimate} (the "
            "spread between runs, not a confidence interval; each run's own interval is in its tables).")

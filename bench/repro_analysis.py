"""How well two runs of one suite reproduce, as bench/reproducibility and bench/reproducibility_shared
print it. A run is its `cryptobench run --json` document (report.tables.document of a stored run).

For the cells (the printed estimate) and for the Duration Improvements:
  - the run-to-run change |B/A - 1|: median and p90 over the cells, share within 3 %;
  - coverage: the share of B's values inside A's 95 % repeat interval;
  - the median half-width of A's intervals against the p90 change (the issue-31 target: at most 2x);
  - how many of A's cells the run flagged not-converged.
With recompute, the cells' intervals as this tree's statistics (stats/estimate.py, the drift terms of
estimate.drift_of) give them from the same samples, so a change of the statistics can be judged on
runs made before it or elsewhere.
"""
from __future__ import annotations

import gzip
import json
import statistics
import sys
from dataclasses import dataclass, field

from cryptobench.stats.convergence import converged
from cryptobench.stats.estimate import drift_of, estimate


def load(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, EOFError) as exc:
        sys.exit(f"{path}: not a readable `cryptobench run --json` document ({exc})")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        sys.exit(f"{path}: expected a `cryptobench run --json` document (an object with `results`)")
    return doc


def key(c: dict) -> tuple:
    return c["op"], json.dumps(c.get("params") or {}, sort_keys=True), c["engine"]


def timed(doc: dict) -> dict:
    return {key(c): c for c in doc["results"] if c.get("status") == "ok" and c.get("estimate")}


def per_op(c: dict) -> list[float]:
    div = 2.0 if c.get("halved") else 1.0
    return [ns / k / 1e9 / div for k, ns, _ in c["samples"]]


def stored(doc: dict) -> dict:
    """key -> (value, (lo, hi), flagged not-converged) as the run printed them."""
    return {k: (c["estimate"]["value"], tuple(c["estimate"]["ci95"]), "not-converged" in c.get("flags", []))
            for k, c in timed(doc).items()}


def recomputed(doc: dict):
    """(key -> (value, (lo, hi), not-converged), the run's Drift) as this tree computes them from the
    stored samples: the drift terms from the run's p1 cells and its reference loop, as the host
    target does."""
    cells = timed(doc)
    smp = doc["conditions"].get("sampling") or {}
    first, last = smp.get("first_round", 0), smp.get("first_round", 0) + smp.get("rounds", 1) - 1
    pairs = [(per_op(c), c["sampling"]["rounds"]) for c in cells.values() if c["estimate"]["estimator"] == "p1"]
    nf = doc["conditions"].get("noise_floor") or {}
    if nf.get("samples") and nf.get("rounds"):
        pairs.append(([ns / k / 1e9 for k, ns, _ in nf["samples"]], nf["rounds"]))
    drift = drift_of(pairs, first, last)
    precision = smp.get("precision")
    out = {}
    for k, c in cells.items():
        s = c["sampling"]
        estimator = c["estimate"]["estimator"]
        e = estimate(per_op(c), s["rounds"], s["block_rounds"], estimator, drift.tau(estimator),
                     processes=s.get("processes") or None)
        out[k] = (e.value, e.ci95, bool(precision) and not converged(e, precision))
    return out, drift


def improvements(doc: dict) -> dict:
    """key -> (Duration Improvement, (lo, hi), False)."""
    return {(c["op"], json.dumps(c["params"], sort_keys=True), c["engine"]):
            (c["duration_improvement"], tuple(c["ci95"]), False) for c in doc.get("comparisons") or []}


@dataclass
class Changes:
    """Run-to-run changes of one kind of number, pooled over one or more pairs of runs."""
    changes: list = field(default_factory=list)
    covered: list = field(default_factory=list)
    halves: list = field(default_factory=list)
    short: int = 0
    flagged: bool = False      # the kind carries not-converged flags

    def add(self, a: dict, b: dict) -> "Changes":
        """a, b: key -> (value, (lo, hi), not-converged)."""
        for k in sorted(a.keys() & b.keys()):
            (va, (lo, hi), short), vb = a[k], b[k][0]
            self.changes.append(abs(vb / va - 1))
            self.covered.append(lo <= vb <= hi)
            self.halves.append(max(va - lo, hi - va) / va)
            self.short += bool(short)
        return self


def pct(xs: list, q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def line(name: str, ch: Changes) -> str:
    n = len(ch.changes)
    if not n:
        return f"  {name:<22} none compared"
    p90, half = pct(ch.changes, 0.9), statistics.median(ch.halves)
    text = (f"  {name:<22} n={n:<4} change median {100 * statistics.median(ch.changes):4.1f} %  p90 {100 * p90:4.1f} %  "
            f"within 3 %: {100.0 * sum(c <= 0.03 for c in ch.changes) / n:5.1f} %  "
            f"coverage {100.0 * sum(ch.covered) / n:5.1f} %  median half-width {100 * half:4.1f} % "
            f"({half / p90 if p90 else float('inf'):.1f}x p90)")
    return text + (f"  not-converged {ch.short}/{n}" if ch.flagged else "")

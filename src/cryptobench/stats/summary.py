"""Statistics of timing samples: robust summaries, a distribution-free interval of the median,
outliers, flags, and the ratio of two engines' medians with its interval.

Samples are per-operation times in seconds (batch duration / batch size).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, asdict

HIGH_RSD_PCT = 5.0          # flag a cell whose relative standard deviation exceeds this
RESOLUTION_FACTOR = 1000    # a sample should last this many timer resolutions (or read costs)
BOOTSTRAP_ROUNDS = 2000
OUTLIER_SHARE = 0.10        # flag a cell when more than this share of its samples are outliers


def quantile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default, 'type 7') of already sorted data."""
    if not sorted_xs:
        raise ValueError("quantile of no data")
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


EXACT_RANKS_MAX_N = 2000     # above this, the binomial tail is summed in floating point (log-gamma)


def _binom_terms(n: int):
    """C(n, i) / 2^n for i = 0, 1, 2, …: exact rationals as (numerator, 2^n) up to EXACT_RANKS_MAX_N,
    then floats from log-gamma (exact integers there would have hundreds of thousands of digits)."""
    if n <= EXACT_RANKS_MAX_N:
        c, total = 1, 2 ** n
        for i in range(n + 1):
            yield c, total
            c = c * (n - i) // (i + 1)
    else:
        base = math.lgamma(n + 1) - n * math.log(2)
        for i in range(n + 1):
            yield math.exp(base - math.lgamma(i + 1) - math.lgamma(n - i + 1)), 1


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int, float]:
    """1-based order-statistic ranks (l, u) with P(x_(l) <= median <= x_(u)) >= confidence.

    The distribution-free interval: coverage = 1 - 2·P(B <= l-1), B ~ Bin(n, 1/2), with l the
    largest rank that keeps the coverage at or above `confidence`. Where even (1, n) falls short
    (n < 6 at 95 %), returns (1, n) and its actual coverage. P(B <= l-1) is accumulated one term
    per rank, so the cost is linear in n (energy traces give hundreds of thousands of windows).
    """
    alpha = 1 - confidence
    terms = _binom_terms(n)
    tail, total = next(terms)                          # numerator of P(B <= l-1), for l = 1
    best, best_tail = 1, tail / total
    for l in range(2, n // 2 + 1):
        term, _ = next(terms)
        tail += term
        p = tail / total
        if 2 * p <= alpha:
            best, best_tail = l, p
        else:
            break
    coverage = 1 - 2 * best_tail
    return best, n - best + 1, coverage


def tukey_outliers(sorted_xs: list[float]) -> int:
    """Count of values outside Q1 − 1.5·IQR … Q3 + 1.5·IQR."""
    if len(sorted_xs) < 4:
        return 0
    q1, q3 = quantile(sorted_xs, 0.25), quantile(sorted_xs, 0.75)
    iqr = q3 - q1
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    return sum(1 for x in sorted_xs if x < lo or x > hi)


@dataclass
class Summary:
    n: int
    median: float
    mean: float
    stdev: float
    rsd_pct: float
    min: float
    max: float
    ci95: tuple[float, float]
    ci_coverage: float
    outliers: int

    def as_dict(self) -> dict:
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        return d


def summarize(xs: list[float]) -> Summary:
    if not xs:
        raise ValueError("no samples to summarize")
    s = sorted(xs)
    n = len(s)
    mean = statistics.fmean(s)
    stdev = statistics.stdev(s) if n > 1 else 0.0
    l, u, coverage = median_ci_ranks(n)
    return Summary(
        n=n,
        median=statistics.median(s),
        mean=mean,
        stdev=stdev,
        rsd_pct=100.0 * stdev / mean if mean else 0.0,
        min=s[0],
        max=s[-1],
        ci95=(s[l - 1], s[u - 1]),
        ci_coverage=coverage,
        outliers=tukey_outliers(s),
    )


def flags_for(summary: Summary, batch_ns_median: float, timer_floor_ns: float,
              high_rsd_pct: float = HIGH_RSD_PCT) -> list[str]:
    """Warnings a reader must see next to the number."""
    flags = []
    if summary.rsd_pct > high_rsd_pct:
        flags.append("high-rsd")
    if batch_ns_median < RESOLUTION_FACTOR * max(timer_floor_ns, 1.0):
        flags.append("near-timer-resolution")
    if summary.ci_coverage < 0.95:
        flags.append("few-samples")
    if summary.outliers > OUTLIER_SHARE * summary.n:
        flags.append("outliers")
    return flags


def ratio_ci(baseline: list[float], engine: list[float], confidence: float = 0.95,
             rounds: int = BOOTSTRAP_ROUNDS, seed: int = 1) -> tuple[float, tuple[float, float]]:
    """Ratio of medians median(baseline)/median(engine) and a percentile-bootstrap interval.

    Both sample sets are resampled independently; the generator is seeded so the same samples
    always give the same interval. Resampled in blocks with numpy (a report computes hundreds).
    """
    import numpy as np
    point = statistics.median(baseline) / statistics.median(engine)
    rng = np.random.default_rng(seed)
    b, e = np.asarray(baseline, dtype=float), np.asarray(engine, dtype=float)
    block = max(1, min(rounds, 2_000_000 // max(len(b), len(e), 1)))    # bounded memory per block
    ratios = []
    for start in range(0, rounds, block):
        m = min(block, rounds - start)
        mb = np.median(b[rng.integers(0, len(b), size=(m, len(b)))], axis=1)
        me = np.median(e[rng.integers(0, len(e), size=(m, len(e)))], axis=1)
        ratios.append(mb / me)
    ratios = sorted(np.concatenate(ratios).tolist())
    alpha = (1 - confidence) / 2
    return point, (quantile(ratios, alpha), quantile(ratios, 1 - alpha))

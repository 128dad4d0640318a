"""The two-sided Mann-Whitney U test (Wilcoxon rank-sum test), pure Python, no SciPy.

U counts, over every pair (x from a, y from b), 1 when x > y and 1/2 when x == y: U = R_a − n_a(n_a+1)/2,
with R_a the sum of a's ranks in the pooled sample (tied values get the average of their ranks).
Under the null hypothesis (a and b drawn from one distribution) U is symmetric about n_a·n_b/2.

p-value, two-sided:
  exact   — when there are no ties and n_a·n_b ≤ EXACT_MAX_PAIRS: the null distribution of U is the
            number of ways each U value arises among the C(n_a+n_b, n_a) equally likely rank
            assignments, counted exactly (integer dynamic programming: the coefficients of the Gaussian
            binomial coefficient [n_a+n_b choose n_a]_q); p = min(1, 2·min(P(U ≤ u), P(U ≥ u))).
  normal  — otherwise: z = (|U − n_a·n_b/2| − 1/2) / σ, σ² = n_a·n_b/12 · ((N+1) − Σ(t³−t)/(N(N−1))),
            t the size of each group of tied values, N = n_a + n_b (tie correction, continuity
            correction 1/2); p = erfc(z/√2). All values tied (σ = 0): p = 1.

The effect size reported beside it is deliberately simple: the ratio of medians, median(b)/median(a).
"""
from __future__ import annotations

import math
import statistics
from functools import lru_cache

EXACT_MAX_PAIRS = 2500          # n_a * n_b up to this (e.g. 50 x 50) with no ties: exact distribution


def ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """1-based ranks of `values` (average rank for ties) and the sizes of the tied groups (> 1)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    ties = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1           # ranks i+1 .. j+1
        for k in range(i, j + 1):
            out[order[k]] = avg
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return out, ties


@lru_cache(maxsize=64)
def u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """counts[u] = number of the C(n1+n2, n1) rank assignments (no ties) whose U equals u, u = 0..n1·n2.
    The generating function is the Gaussian binomial Π_{i=1..n1} (1 − q^(n2+i)) / (1 − q^i); multiplying
    by (1 − q^m) and dividing by (1 − q^i) are each one pass over the coefficients, in exact integers."""
    top = n1 * n2
    poly = [0] * (top + 1)
    poly[0] = 1
    for i in range(1, n1 + 1):
        m = n2 + i
        for k in range(top, m - 1, -1):        # × (1 − q^m), in place from the top
            poly[k] -= poly[k - m]
        for k in range(i, top + 1):            # ÷ (1 − q^i): b[k] = a[k] + b[k − i]
            poly[k] += poly[k - i]
    return tuple(poly)


def exact_p(u: float, n1: int, n2: int) -> float:
    """Two-sided exact p for U = u (an integer when there are no ties)."""
    counts = u_counts(n1, n2)
    total = math.comb(n1 + n2, n1)
    k = int(round(u))
    low = sum(counts[:k + 1])                  # P(U <= u) * total
    high = sum(counts[k:])                     # P(U >= u) * total
    return min(1.0, 2 * min(low, high) / total)


def normal_p(u: float, n1: int, n2: int, ties: list[int]) -> float:
    """Two-sided p from the normal approximation, with tie and continuity corrections."""
    n = n1 + n2
    mu = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - sum(t ** 3 - t for t in ties) / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u - mu) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def mann_whitney_u(a: list[float], b: list[float], method: str = "auto") -> dict:
    """Two-sided Mann-Whitney U test of a against b.

    Returns {"u": U of a (pairs with a > b, ties 1/2), "p": two-sided p-value, "method": "exact" or
    "normal"}. method="auto" picks exact for small samples without ties (n_a·n_b ≤ EXACT_MAX_PAIRS),
    normal otherwise; "exact" with ties is refused (ValueError), since the exact table assumes none."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("mann_whitney_u: both samples need at least one value")
    if any(math.isnan(x) for x in a + b):
        raise ValueError("mann_whitney_u: NaN in the samples")
    r, ties = ranks(a + b)
    u = sum(r[:n1]) - n1 * (n1 + 1) / 2
    if method == "auto":
        method = "exact" if not ties and n1 * n2 <= EXACT_MAX_PAIRS else "normal"
    if method == "exact":
        if ties:
            raise ValueError("mann_whitney_u: the exact distribution needs samples without ties")
        p = exact_p(u, n1, n2)
    elif method == "normal":
        p = normal_p(u, n1, n2, ties)
    else:
        raise ValueError(f"mann_whitney_u: method must be auto, exact or normal, got {method!r}")
    return {"u": u, "p": p, "method": method}


def median_ratio(a: list[float], b: list[float]) -> float | None:
    """The simple effect size shown beside the test: median(b) / median(a); None if median(a) is 0."""
    ma = statistics.median(a)
    return statistics.median(b) / ma if ma else None

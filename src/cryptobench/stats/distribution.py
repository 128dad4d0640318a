"""The spread of one cell's per-execution values, summarized for the record (result["distribution"],
docs/schema.md): for an op whose cost differs from one execution to the next by design (ML-DSA
signing's rejection loop, catalog Op.executions), where the median alone hides a tail."""
from __future__ import annotations

import math

# the percentiles kept: pqm4's table gives MIN / AVG / MAX; the deciles and quartiles say where the mass is
PERCENTILES = (10, 25, 50, 75, 90, 99)


def quantile(xs: list[float], q: float) -> float:
    """The q-quantile of sorted xs, linear between order statistics (numpy's default, 'linear')."""
    h = (len(xs) - 1) * q
    i = int(h)
    return xs[i] + (h - i) * (xs[min(i + 1, len(xs) - 1)] - xs[i])


def summarize_distribution(values: list[float], of: str) -> dict:
    """{"of", "n", "min", "max", "mean", "stdev", "p10" … "p99", "max_over_min"} of every value given
    (one per execution; nothing is dropped as an outlier: the tail is what is shown). stdev: the
    sample standard deviation (n - 1), 0 for one value."""
    xs = sorted(float(v) for v in values)
    if not xs:
        raise ValueError("a distribution of no values")
    n = len(xs)
    mean = sum(xs) / n
    stdev = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    out = {"of": of, "n": n, "min": xs[0], "max": xs[-1], "mean": mean, "stdev": stdev}
    out.update({f"p{p}": quantile(xs, p / 100) for p in PERCENTILES})
    out["max_over_min"] = xs[-1] / xs[0] if xs[0] > 0 else None
    return out

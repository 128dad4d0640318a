"""Numbers and units as every table and figure prints them: one place, so that a duration reads
the same in the terminal, in Markdown, in diff and in the report."""
from __future__ import annotations

import math

# (exclusive upper bound in seconds, unit, scale): the unit of a column is the one its smallest value reads in
UNITS = [(1e-6, "ns", 1e9), (1e-3, "µs", 1e6), (1.0, "ms", 1e3), (float("inf"), "s", 1.0)]


def pick_unit(seconds: list[float]) -> tuple[str, float]:
    smallest = min(seconds) if seconds else 1.0
    for bound, name, scale in UNITS:
        if smallest < bound:
            return name, scale
    return "s", 1.0


def fmt_num(x: float | None) -> str:
    """Three significant figures or so, thousands separated; an em dash for nothing."""
    if x is None:
        return "—"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 100:
        return f"{x:.1f}"
    if ax >= 10:
        return f"{x:.2f}"
    return f"{x:.3f}"


def is_amount(value, positive: bool = False) -> bool:
    """A number a user wrote for a time, current, voltage, rate or published value: a real number
    (true is not 1), finite, not negative (> 0 with `positive`). What every loader checks values
    against (suites, references, power profiles)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and (value > 0 if positive else value >= 0))

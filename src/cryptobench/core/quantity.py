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


def fmt_sig(x: float | None, digits: int = 3) -> str:
    """`digits` significant figures, never fewer (0.0223 ms stays 0.0223, not 0.022), in plain
    notation, thousands separated from 1000 up (whole numbers there: 12,485); an em dash for nothing."""
    if x is None:
        return "—"
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    if abs(round(x, decimals)) >= 10 ** (digits - decimals) and decimals:   # 9.996 rounds up to 10.0, not 10.00
        decimals -= 1
    if abs(round(x, decimals)) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{decimals}f}"


def fmt_sci(x: float | None, digits: int = 3) -> str:
    """`digits` significant figures in scientific notation, as the ZHAW IoT study prints its
    medians (8.19e-05); an em dash for nothing."""
    return "—" if x is None else f"{x:.{digits - 1}e}"


def fmt_hz(hz: float | None) -> str:
    """A clock: 48 MHz, 2.45 GHz (3 significant figures at most); "?" for nothing."""
    if not hz:
        return "?"
    return f"{hz / 1e9:.3g} GHz" if hz >= 1e9 else f"{hz / 1e6:.3g} MHz" if hz >= 1e6 else f"{hz:.3g} Hz"


def is_amount(value, positive: bool = False) -> bool:
    """A number a user wrote for a time, current, voltage, rate or published value: a real number
    (true is not 1), finite, not negative (> 0 with `positive`). What every loader checks values
    against (suites, references, power profiles)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and (value > 0 if positive else value >= 0))

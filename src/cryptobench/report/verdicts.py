"""The ratio of a comparison in words: an Improvement cell, and the line hyperfine prints under
its table ("openssl-hw ran 3.64 ± 0.02 times faster than openssl-sw")."""
from __future__ import annotations

import math

from ..core.quantity import fmt_num

# rows of a table summed up in words: all of a short table, else its first and last (the
# smallest and the largest message of a length sweep)
SUMMARY_ROWS = 3


def improvement_text(comp: dict | None, over_baseline: bool = False) -> str:
    """A Duration Improvement cell: the ratio, and its 95 % interval where it has a width; with
    `over_baseline`, read the other way as the study does (×r: t_engine / t_baseline)."""
    if not comp:
        return "—"
    value, (lo, hi) = comp["duration_improvement"], comp["ci95"]
    if over_baseline:
        value, lo, hi = (1 / value if value else math.inf), (1 / hi if hi else math.inf), (1 / lo if lo else math.inf)
    ratio = ("×" if over_baseline else "") + fmt_num(value)
    return (ratio if lo == hi else f"{ratio} [{fmt_num(lo)}–{fmt_num(hi)}]") + band_suffix(comp)


BAND_LEGEND = ("; ±N %: the band of a ratio a modelled engine's cell enters, the two cells' bands added "
               "(a modelled engine's against published hardware, a simulated cell's against silicon)")


def band_suffix(comp: dict | None) -> str:
    """' ±81 %' (or ' unvalidated') after a ratio a modelled engine's cell enters (stats/results.py
    ratio_band), '' otherwise."""
    band = (comp or {}).get("band")
    if not band:
        return ""
    return " unvalidated" if band.get("unvalidated") else f" ±{band['pct']:g} %"


def _times(comp: dict, baseline: str) -> str:
    """'3.64 ± 0.02 times faster than B' (or slower, as the inverse ratio, as hyperfine words
    it); 'as fast as B' where the interval holds 1."""
    ratio, (lo, hi) = comp["duration_improvement"], comp["ci95"]
    if lo < 1 < hi or ratio == 1:
        return f"as fast as {baseline} ({fmt_num(ratio)} [{fmt_num(lo)}–{fmt_num(hi)}])"
    if ratio >= 1:
        value, low, high, word = ratio, lo, hi, "faster"
    else:
        value, low, high, word = 1 / ratio, 1 / hi if hi else 0.0, 1 / lo if lo else 0.0, "slower"
    spread = max(high - value, value - low)
    return f"{fmt_num(value)}{f' ± {fmt_num(spread)}' if spread > 0 else ''} times {word} than {baseline}"


def summary_line(comps: list[dict], baseline: str, where: str = "") -> str | None:
    """One line for the comparisons of one row: every engine against the baseline."""
    if not comps:
        return None
    text = "; ".join(f"{c['engine']} ran {_times(c, baseline)}" for c in comps)
    return f"{where}: {text}" if where else text


def summary_rows(n: int) -> list[int]:
    """Which of a table's n rows get a summary line."""
    return list(range(n)) if n <= SUMMARY_ROWS else [0, n - 1]

"""The throughput of one long message: what the Cifra AEAD post calls "likely throughput" (its
footnote 3: "for one, long message. It therefore discounts set-up costs").

A message of L bytes costs about `setup + per_byte · L` (cycles on a microcontroller, seconds on a
host); for one long message the set-up vanishes and the rate is clock / per_byte (bytes/s). The per-byte
cost comes from:

  * a sweep of lengths (at least MIN_SWEEP of them, spanning at least MIN_SPAN bytes: the Cifra suite's
    0…256 B in steps of 4): the least-squares slope of cost against length over all of them, i.e. the
    marginal cost of one more byte, set-up excluded as the footnote says; block padding (the saw-tooth
    of the post's chart) averages out over whole blocks;
  * else one message of at least LONG_BYTES: its own cost per byte (set-up included, said so).

Never the cost of one short message divided by its length (the 256 B row's cycles / 256 counts the
set-up once per 256 B, which is what the post's own table shows beside the likely throughput).
"""
from __future__ import annotations

from dataclasses import dataclass

LONG_BYTES = 1024          # a single message at least this long stands for "one long message"
MIN_SWEEP = 3              # lengths a sweep needs for a slope
MIN_SPAN = 64              # … and the bytes between its shortest and longest


@dataclass(frozen=True)
class PerByte:
    cost: float            # per byte: cycles or seconds, as the points were
    how: str               # how it was found, for the reader: "slope of the 0…256 B sweep (65 lengths) …"


def per_byte_cost(points: list[tuple[int, float]]) -> tuple[PerByte | None, str]:
    """(the per-byte cost of one long message, "") from (length in bytes, cost) points of one
    operation; (None, why) where the points cannot give one."""
    pts = sorted((int(n), float(c)) for n, c in points if c is not None and c > 0 and n is not None and n >= 0)
    lengths = sorted({n for n, _ in pts})
    if len(lengths) >= MIN_SWEEP and lengths[-1] - lengths[0] >= MIN_SPAN:
        mx = sum(n for n, _ in pts) / len(pts)
        my = sum(c for _, c in pts) / len(pts)
        sxx = sum((n - mx) ** 2 for n, _ in pts)
        slope = sum((n - mx) * (c - my) for n, c in pts) / sxx
        if slope > 0:
            return PerByte(slope, f"slope of cost against length over the {lengths[0]}…{lengths[-1]} B sweep "
                                  f"({len(lengths)} lengths, least squares): the marginal cost of a byte, set-up "
                                  "excluded"), ""
        return None, f"the cost does not grow with length over the {lengths[0]}…{lengths[-1]} B sweep"
    long = [(n, c) for n, c in pts if n >= LONG_BYTES]
    if long:
        n, c = max(long)
        return PerByte(c / n, f"one {n} B message (its cost / {n}; set-up included)"), ""
    return None, (f"needs a sweep of lengths (≥ {MIN_SWEEP}, spanning ≥ {MIN_SPAN} B) or one message of ≥ "
                  f"{LONG_BYTES} B; a short message's cost / length would count its set-up")


def likely_throughput(points: list[tuple[int, float]], clock_hz: float | None = None) -> tuple[float | None, str]:
    """(bytes per second of one long message, how) from (length, cost) points: costs in cycles with
    `clock_hz` (bytes/s = clock / cycles per byte), else in seconds; (None, why) where it cannot."""
    per, why = per_byte_cost(points)
    if per is None:
        return None, why
    return (clock_hz / per.cost if clock_hz else 1.0 / per.cost), per.how

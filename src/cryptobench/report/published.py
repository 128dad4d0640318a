"""Published points beside measured ones: a study's rows (references/) that match a sweep figure's
operation, metric and the parameters the study states, as series over the payload length. No
matplotlib here; figures/sweep.py draws them dashed, with hollow markers, provenance `published`."""
from __future__ import annotations

from dataclasses import dataclass, field

# a sweep figure's metric -> the reference rows' metric
METRIC = {"time": "duration", "energy": "energy", "cycles": "cycles"}


@dataclass
class PublishedSeries:
    reference: str          # e.g. "cifra-aead"
    document: str
    table: str
    source: object          # references.Source: engine, device, clock_hz, compiler, library
    points: list = field(default_factory=list)    # [(bytes, value in the metric's canonical unit)]

    @property
    def label(self) -> str:
        table = self.table.split(" (")[0]
        return f"published: {self.source.id}, {table[:32]}"

    def conditions(self) -> str:
        s = self.source
        bits = [f"{s.engine} on {s.device}"]
        if s.clock_hz:
            bits.append(f"{s.clock_hz / 1e6:g} MHz")
        bits += [b for b in (s.compiler, s.library) if b]
        return ", ".join(bits)


def _matches(row, op: str, fixed: dict) -> bool:
    """The row is this op, and every parameter the document states (other than the length) equals the
    figure's; parameters the document does not state are not held against it."""
    if row.op != op or "bytes" not in row.params:
        return False
    return all(str(fixed.get(k)) == str(row.params[k]) for k in row.given if k != "bytes")


def published_series(references: list, op: str, fixed: dict, metric: str, xs: list[float]) -> list[PublishedSeries]:
    """Series of `references` rows for a sweep figure of `op` with fixed parameters `fixed`, within the
    figure's measured length range `xs`; one series per (reference, table, source)."""
    want = METRIC.get(metric)
    if not want or not xs:
        return []
    lo, hi = min(xs), max(xs)
    out: dict = {}
    for ref in references:
        for row in ref.rows:
            if row.metric != want or not _matches(row, op, fixed) or row.canonical is None:
                continue
            x = float(row.params["bytes"])
            if not lo <= x <= hi:
                continue
            key = (ref.name, row.table, row.source.id)
            if key not in out:
                out[key] = PublishedSeries(ref.name, ref.document, row.table, row.source)
            out[key].points.append((x, row.canonical))
    series = list(out.values())
    for s in series:
        s.points.sort()
    return series

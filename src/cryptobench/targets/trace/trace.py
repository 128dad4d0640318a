"""What every trace reader yields and every segmenter consumes: chunks of samples.

Supplies: the main supply is `current` (+ `voltage`); further supplies measured in the same trace
(the ZHAW IoT study: host MCU and secure element on separate analyzer channels) go in `extra` as
`current.NAME` and, when logged, `voltage.NAME`; the segmenter integrates each one per window and
reports the split.

A trace can be larger than memory, so readers stream it as `Chunk`s of at most a few million
samples (numpy arrays). Time is either uniform (t0 + i*dt, the common case for analyzers) or given
per sample (`t`). Currents are amperes, voltages volts, times seconds. A marker channel holds per
sample 0 (low), 1 (high) or MARKER_X (unknown / 'X' / glitch).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MARKER_X = 2


class TraceError(Exception):
    """A malformed trace: the message names the file, the line (or byte offset) and what was expected."""

    def __init__(self, path, where, expected: str):
        self.path, self.where, self.expected = str(path), where, expected
        loc = f"{path}:{where}" if where not in (None, "") else str(path)
        super().__init__(f"{loc}: {expected}")


@dataclass
class Chunk:
    current: np.ndarray                      # float64 amperes, one per sample
    t0: float = 0.0                          # time of the first sample (s) when uniform
    dt: float | None = None                  # sample period (s) when uniform
    t: np.ndarray | None = None              # per-sample times (s) when not uniform
    voltage: np.ndarray | None = None        # volts per sample, when logged
    marker: np.ndarray | None = None         # uint8 0/1/MARKER_X per sample, when a digital marker exists
    marker_analog: np.ndarray | None = None  # float64 per sample: an analog marker (GPIO logged as a voltage),
                                             # turned into edges by the segmenter's threshold and hysteresis
    extra: dict = field(default_factory=dict)   # other supplies: "current.NAME" (A) and optional "voltage.NAME" (V)
    line0: int | None = None                 # text formats: the file's line number of sample 0 (1-based)
    lines: np.ndarray | None = None          # text formats with skipped lines: the line of every sample
    byte0: int | None = None                 # binary formats: byte offset of sample 0 ...
    sample_bytes: int | None = None          # ... and bytes per sample frame
    source: str | None = None                # the file the samples come from, when not the trace's own
                                             # (a saleae join's current trace): errors about samples name it
    warnings: list[str] = field(default_factory=list)   # what the reader found doubtful in these samples,
                                             # passed on by the segmenter to the import's warnings

    def where(self, i: int) -> str:
        """Where sample i of this chunk is in the file, for error messages."""
        if self.lines is not None:
            return f"line {int(self.lines[i])}"
        if self.line0 is not None:
            return f"line {self.line0 + i}"
        if self.byte0 is not None and self.sample_bytes:
            return f"byte {self.byte0 + i * self.sample_bytes}"
        t = self.t[i] if self.t is not None else self.t0 + self.dt * i
        return f"t = {t:.9g} s"

    def __len__(self) -> int:
        return len(self.current)

    def times(self) -> np.ndarray:
        if self.t is not None:
            return self.t
        return self.t0 + self.dt * np.arange(len(self.current), dtype=np.float64)


@dataclass
class TraceInfo:
    path: str
    format: str
    sample_period_s: float | None            # None when sampling is not uniform
    channels: list[str]                      # e.g. ["current", "voltage", "marker"]
    nominal_voltage: float | None = None     # from the file's preamble, when it says
    notes: list[str] = field(default_factory=list)

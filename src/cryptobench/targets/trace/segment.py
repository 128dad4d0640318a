"""Segmentation of a trace into per-repetition windows, and the energy of each window.

A window runs from a rising edge of the marker to the next falling edge (the DUT raises a GPIO
before an operation and lowers it after, as in the ZHAW IoT study). The trace is read once, chunk by chunk, and
cut into *runs*: maximal stretches of samples with the same marker state. Every run keeps only
sums (energy per supply, charge, sample count, unknown-marker samples), so memory grows with the
number of edges, never with the number of samples; a chunk is processed with a handful of numpy
passes (no per-sample Python).

Integration is the rectangle rule: a sample stands for the interval from it to the next sample,
energy Σ V·I·Δt (per-sample V when the trace logs it, else the nominal supply voltage, with a
warning). Each further supply of the trace (`current.NAME` / `voltage.NAME` channels) is integrated
the same way, which gives the host / secure-element energy split of the ZHAW IoT study.

Marker states: a digital marker gives 0/1/X per sample; X (unknown, PPK2's `X`, a glitchy logic
level) holds the previous state and flags the window. An analog marker (a GPIO logged as a
voltage) becomes digital with a threshold and hysteresis: high at or above threshold + h/2, low at
or below threshold − h/2, unchanged in between.

Debounce: a run shorter than `min_width_s` is a glitch; it is merged with its neighbours (a short
high pulse disappears, a short low dip inside a window is bridged) and the window is flagged.
Windows shorter than 20 sampling periods are flagged approximate (the ZHAW IoT study).

Negative readings: an analyzer's zero offset makes a current near zero read slightly negative now
and then; such samples are kept (dropping or clipping them would bias the sums) and counted in a
warning. A window whose energy comes out zero or negative cannot be an operation's energy: the
import stops with an error naming the window (reversed leads, a wrong column or scale, or an offset
larger than the signal). A further supply whose energy in a window is negative while the total is
positive (an idle supply read as offset noise) flags the window `negative-supply`.
Non-finite values (NaN, inf, or sums that overflow) are errors naming their sample or window.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Iterable

import numpy as np

from ...stats.summary import summarize
from .trace import MARKER_X, Chunk, TraceError

APPROXIMATE_PERIODS = 20     # the ZHAW IoT study: values under 20 sampling periods are approximate
# no bench analyzer reads a million amperes or volts: a larger reading is garbage, or an overflow
# code (SCPI writes 9.9e37 for infinity and 9.91e37 for not-a-number)
MAX_READING = 1e6
MAIN = "main"                # the name of the trace's main supply in the energy split


class PlanMismatch(Exception):
    """The windows do not match the run's planned sequence (count or order)."""


@dataclass
class Window:
    index: int
    start_s: float
    duration_s: float
    energy_j: float                    # all supplies together
    avg_current_a: float               # main supply: charge / duration
    samples: int
    approximate: bool
    where: str                         # location of the rising edge in the file
    flags: list[str] = field(default_factory=list)       # glitch, x-state, negative-supply
    supplies: dict[str, float] = field(default_factory=dict)   # energy per supply (J)

    def as_dict(self) -> dict:
        return {"index": self.index, "start_s": self.start_s, "duration_s": self.duration_s,
                "energy_j": self.energy_j, "avg_current_a": self.avg_current_a, "samples": self.samples,
                "approximate": self.approximate, "where": self.where, "flags": list(self.flags),
                "supplies": dict(self.supplies)}


class Windows(Sequence):
    """The windows of a trace as columns (numpy arrays), so that a trace of a million windows costs
    no million objects: `column(name)` gives an array, indexing gives a `Window`, slicing a
    `Windows`. Columns: start_s, duration_s, energy_j, avg_current_a, samples, glitch, x, neg
    (a supply's energy negative), loc_kind, loc, and E.NAME per supply."""

    def __init__(self, cols: dict, supplies: list[str], first_index: int = 0):
        self.cols, self.supplies, self.first_index = cols, supplies, first_index

    def __len__(self) -> int:
        return len(self.cols["energy_j"])

    def column(self, name: str) -> np.ndarray:
        if name == "approximate":
            return self.cols["samples"] < APPROXIMATE_PERIODS
        if name == "flagged":
            return self.cols["glitch"] | self.cols["x"] | self.cols["neg"]
        return self.cols[name]

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, _, _ = i.indices(len(self))
            return Windows({k: v[i] for k, v in self.cols.items()}, self.supplies, self.first_index + start)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        c = self.cols
        n = int(c["samples"][i])
        return Window(self.first_index + i, float(c["start_s"][i]), float(c["duration_s"][i]), float(c["energy_j"][i]),
                      float(c["avg_current_a"][i]), n, n < APPROXIMATE_PERIODS, _where(c["loc_kind"][i], c["loc"][i]),
                      (["glitch"] if c["glitch"][i] else []) + (["x-state"] if c["x"][i] else []) +
                      (["negative-supply"] if c["neg"][i] else []),
                      {nm: float(c["E." + nm][i]) for nm in self.supplies})


def column(windows, name: str) -> np.ndarray:
    """A column of a `Windows`, or of a plain list of `Window`s."""
    if isinstance(windows, Windows):
        return windows.column(name)
    if name == "flagged":
        return np.array([bool(w.flags) for w in windows], dtype=bool)
    if name.startswith("E."):
        return np.array([w.supplies[name[2:]] for w in windows], dtype=np.float64)
    return np.array([getattr(w, name) for w in windows])


@dataclass
class SegmentResult:
    windows: Windows
    warnings: list[str]
    samples_total: int
    sample_period_s: float | None
    supplies: list[str]


@dataclass
class _Run:
    state: int
    start: int            # global index of the first sample
    start_s: float
    loc_kind: int         # where the run starts in the file: 0 line, 1 byte, 2 time (see _where)
    loc: float
    samples: int = 0
    duration_s: float = 0.0
    charge: float = 0.0
    energy: dict = field(default_factory=dict)
    x_samples: int = 0
    glitch: bool = False

    @property
    def where(self) -> str:
        return _where(self.loc_kind, self.loc)

    def absorb(self, other: "_Run") -> None:
        self.samples += other.samples
        self.duration_s += other.duration_s
        self.charge += other.charge
        for k, v in other.energy.items():
            self.energy[k] = self.energy.get(k, 0.0) + v
        self.x_samples += other.x_samples
        self.glitch = self.glitch or other.glitch


def _where(kind: int, value: float) -> str:
    if kind == 0:
        return f"line {int(value)}"
    if kind == 1:
        return f"byte {int(value)}"
    return f"t = {value:.9g} s"


def _forward_fill(states: np.ndarray, carry: int) -> np.ndarray:
    """Replace -1 (undetermined) by the last determined state before it (carry before the chunk)."""
    undetermined = states < 0
    if not undetermined.any():
        return states
    idx = np.where(undetermined, 0, np.arange(len(states)))
    np.maximum.accumulate(idx, out=idx)
    filled = states[idx]
    # leading undetermined samples (idx stayed 0 and sample 0 is undetermined) take the carry
    lead = np.flatnonzero(~undetermined)
    first = lead[0] if len(lead) else len(states)
    filled[:first] = carry
    return filled


class _Segmenter:
    def __init__(self, nominal_voltage, threshold, hysteresis, path):
        self.nominal_voltage = nominal_voltage
        self.threshold, self.hysteresis = threshold, hysteresis
        self.path = path
        self.parts: list[dict] = []       # per chunk: arrays of segment sums
        self.state: int | None = None     # marker state of the last sample seen
        self.total = 0
        self.last_t: float | None = None  # time of the last sample (non-uniform traces)
        self.periods: set[float] = set()
        self.warnings: list[str] = []
        self.supplies: list[str] = []
        self.nominal_used: set[str] = set()
        self.x_total = 0
        self.negative: dict[str, list] = {}   # channel -> [samples below zero inside windows, first where]
        self.source: str | None = None        # the file of the samples, when not the trace's own (Chunk.source)

    # -- per chunk ----------------------------------------------------------------------------
    def states(self, c: Chunk) -> tuple[np.ndarray, np.ndarray | None]:
        carry = self.state if self.state is not None else 0
        if c.marker is not None and self.threshold is None:
            m = c.marker
            x = m == MARKER_X
            if x.any():
                s = np.where(x, -1, m.astype(np.int8)).astype(np.int8)
                return _forward_fill(s, carry), x
            return m.astype(np.int8, copy=False), None
        analog = c.marker_analog
        if analog is None:
            if c.marker is not None:       # a digital marker given a threshold: use its 0/1 levels
                analog = c.marker.astype(np.float64)
            else:
                raise TraceError(self.path, None, "expected a marker channel (digital, or analog with a "
                                 "threshold), found none in the trace; see the format's marker option")
        if self.threshold is None:
            raise TraceError(self.path, None, "expected a threshold for the analog marker channel "
                             "(--threshold V, optionally --hysteresis V)")
        hi = self.threshold + self.hysteresis / 2
        lo = self.threshold - self.hysteresis / 2
        s = np.full(len(analog), -1, dtype=np.int8)
        s[analog >= hi] = 1
        s[analog <= lo] = 0
        bad = ~np.isfinite(analog)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TraceError(c.source or self.path, c.where(i), f"expected a finite marker value, found "
                                                                f"{float(analog[i])}")
        return _forward_fill(s, carry), None

    def dts(self, c: Chunk) -> np.ndarray | float:
        if c.t is None:
            self.periods.add(float(c.dt))
            return float(c.dt)
        t = c.t
        d = np.empty(len(t), dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):     # inf time stamps: refused below
            d[:-1] = np.diff(t)
        # the last sample's interval: the chunk's median step (the next chunk's first time is unknown)
        d[-1] = float(np.median(d[:-1])) if len(t) > 1 else (self.periods and min(self.periods) or 0.0)
        if len(t) > 1 and not (d[:-1] > 0).all():
            i = int(np.flatnonzero(~(d[:-1] > 0))[0]) + 1
            raise TraceError(c.source or self.path, c.where(i), f"expected increasing time stamps, found "
                             f"{float(t[i]):.9g} after {float(t[i - 1]):.9g}")
        if self.last_t is not None and len(t) and not t[0] > self.last_t:
            raise TraceError(c.source or self.path, c.where(0), f"expected increasing time stamps, found "
                             f"{float(t[0]):.9g} after {self.last_t:.9g}")
        if len(t) > 1:
            self.periods.add(float(np.median(d[:-1])))
        self.last_t = float(t[-1]) if len(t) else self.last_t
        return d

    def feed(self, c: Chunk) -> None:
        """Cut the chunk into segments of equal marker state and keep only their sums (arrays)."""
        n = len(c)
        if n == 0:
            return
        lows = self.check_samples(c)
        self.warnings += [w for w in c.warnings if w not in self.warnings]
        states, x = self.states(c)
        dt = self.dts(c)
        self.count_negative(c, states, lows)
        starts = np.flatnonzero(np.diff(states)) + 1
        starts = np.concatenate(([0], starts))
        part = {"state": states[starts].astype(np.int8), "start": starts + self.total,
                "n": np.diff(np.append(starts, n))}
        # huge values may overflow the sums or times to inf: the windows are checked for that at the end
        with np.errstate(over="ignore", invalid="ignore"):
            self.sums(c, dt, starts, part)
            part["t"] = (c.t[starts] if c.t is not None else c.t0 + c.dt * starts).astype(np.float64)
        part["x"] = np.add.reduceat(x.astype(np.int64), starts) if x is not None else np.zeros(len(starts), np.int64)
        kind, loc = self._locations(c, starts)
        part["loc_kind"] = np.full(len(starts), kind, dtype=np.int8)
        part["loc"] = loc
        self.parts.append(part)
        self.state = int(states[-1])
        self.total += n
        if x is not None:
            self.x_total += int(x.sum())

    def sums(self, c: Chunk, dt, starts: np.ndarray, part: dict) -> None:
        """Duration, charge and energy per supply of every segment (the rectangle rule)."""
        cur = c.current
        uniform = isinstance(dt, float)
        # with a uniform step, Σ x·dt = dt·Σ x saves a pass over the samples
        if uniform:
            part["dur"] = part["n"] * dt
            part["charge"] = np.add.reduceat(cur, starts) * dt
        else:
            part["dur"] = np.add.reduceat(dt, starts)
            part["charge"] = np.add.reduceat(cur * dt, starts)
        for name, (i_a, v_a) in self.supply_arrays(c).items():
            if v_a is None:
                part["E." + name] = (part["charge"] if i_a is cur else
                                     (np.add.reduceat(i_a, starts) * dt if uniform else np.add.reduceat(i_a * dt, starts))
                                     ) * self.nominal_voltage
            else:
                p_ = i_a * v_a
                part["E." + name] = np.add.reduceat(p_, starts) * dt if uniform else np.add.reduceat(p_ * dt, starts)

    @staticmethod
    def channels(c: Chunk):
        """(name, array) of every current and voltage of the chunk."""
        yield "current", c.current
        if c.voltage is not None:
            yield "voltage", c.voltage
        yield from c.extra.items()

    def check_samples(self, c: Chunk) -> dict:
        """Every current and voltage finite and within ±MAX_READING (the readers name a bad cell;
        this names the sample, in the file the samples came from). Returns each channel's minimum."""
        self.source = c.source or self.source
        lows = {}
        for name, a in self.channels(c):
            lo, hi = float(np.min(a)), float(np.max(a))          # NaN when a sample is NaN
            if not -MAX_READING <= lo <= hi <= MAX_READING:
                i = int(np.flatnonzero(~(np.abs(a) <= MAX_READING))[0])
                v, unit = float(a[i]), "V" if name.startswith("voltage") else "A"
                expected = (f"expected a finite {name}, found {v}" if not math.isfinite(v) else
                            f"expected a {name} within ±{MAX_READING:g} {unit}, found {v:.6g} (a garbage value, "
                            "or an instrument's overflow code such as SCPI's 9.9e37)")
                raise TraceError(c.source or self.path, c.where(i), expected)
            lows[name] = lo
        return lows

    def count_negative(self, c: Chunk, states: np.ndarray, lows: dict) -> None:
        """Count the samples below zero inside marker windows, per channel, for a warning (a pass
        over the samples only for a channel whose minimum is below zero)."""
        for name, a in self.channels(c):
            if lows[name] >= 0:
                continue
            neg = (a < 0) & (states == 1)
            if neg.any():
                seen = self.negative.setdefault(name, [0, c.where(int(np.argmax(neg)))])
                seen[0] += int(np.count_nonzero(neg))

    @staticmethod
    def _locations(c: Chunk, idx: np.ndarray) -> tuple[int, np.ndarray]:
        """Where samples idx are in the file: (0 line | 1 byte | 2 time, value) — see Chunk.where."""
        if c.lines is not None:
            return 0, c.lines[idx].astype(np.float64)
        if c.line0 is not None:
            return 0, (c.line0 + idx).astype(np.float64)
        if c.byte0 is not None and c.sample_bytes:
            return 1, (c.byte0 + idx * c.sample_bytes).astype(np.float64)
        return 2, (c.t[idx] if c.t is not None else c.t0 + c.dt * idx).astype(np.float64)

    def supply_arrays(self, c: Chunk) -> dict:
        """Per supply (current, voltage or None for the nominal voltage)."""
        out = {MAIN: (c.current, self._voltage(c.voltage, MAIN))}
        for key, cur in c.extra.items():
            if key.startswith("current."):
                name = key[len("current."):]
                out[name] = (cur, self._voltage(c.extra.get("voltage." + name), name))
        if not self.supplies:
            self.supplies = list(out)
        return out

    def _voltage(self, voltage, name):
        if voltage is not None:
            return voltage
        if self.nominal_voltage is None:
            raise TraceError(self.path, None, f"expected a voltage for supply '{name}', found none in the trace: "
                             "give the nominal supply voltage (--voltage V)")
        self.nominal_used.add(name)
        return None

    def merged(self) -> dict:
        """All segments, adjacent ones of equal state (split by chunk boundaries) merged into runs."""
        keys = self.parts[0].keys()
        cat = {k: np.concatenate([p[k] for p in self.parts]) for k in keys}
        first = np.flatnonzero(np.diff(cat["state"], prepend=np.int8(-1)) != 0)
        out = {}
        for k, v in cat.items():
            if k in ("state", "start", "t", "loc", "loc_kind"):
                out[k] = v[first]
            else:
                out[k] = np.add.reduceat(v, first)
        return out

    def run_objects(self, R: dict) -> list[_Run]:
        names = [k[2:] for k in R if k.startswith("E.")]
        return [_Run(int(R["state"][i]), int(R["start"][i]), float(R["t"][i]), int(R["loc_kind"][i]), float(R["loc"][i]),
                     int(R["n"][i]), float(R["dur"][i]), float(R["charge"][i]),
                     {nm: float(R["E." + nm][i]) for nm in names}, int(R["x"][i])) for i in range(len(R["state"]))]

    # -- after the last chunk -----------------------------------------------------------------
    @staticmethod
    def debounce(runs: list[_Run], min_width_s: float) -> list[_Run]:
        out: list[_Run] = []
        for r in runs:
            if len(out) >= 2 and out[-1].duration_s < min_width_s and out[-2].state == r.state:
                short = out.pop()
                keep = out[-1]
                keep.absorb(short)
                keep.absorb(r)
                keep.glitch = True
            elif out and out[-1].state == r.state:
                out[-1].absorb(r)
            else:
                out.append(r)
        # a short run at either end of the trace cannot be bridged: drop it into its neighbour
        if len(out) >= 2 and out[0].duration_s < min_width_s:
            first = out.pop(0)
            first.state = out[0].state
            out[0].start, out[0].start_s = first.start, first.start_s
            out[0].loc_kind, out[0].loc = first.loc_kind, first.loc
            out[0].absorb(first)
            out[0].glitch = True
        if len(out) >= 2 and out[-1].duration_s < min_width_s:
            out[-2].absorb(out.pop())
            out[-1].glitch = True
        return out


def segment(chunks: Iterable[Chunk], *, nominal_voltage: float | None = None, min_width_s: float = 0.0,
            threshold: float | None = None, hysteresis: float = 0.0, partial: str = "error",
            path: str = "trace") -> SegmentResult:
    """Windows from the marker's rising to falling edges, with energy, charge and flags.

    partial: what to do with a window cut by the trace's start or end (an odd number of edges):
    "error" (default: TraceError naming the unmatched edge's line) or "drop" (warning).
    """
    _check_settings(nominal_voltage, min_width_s, threshold, hysteresis, partial)
    seg = _Segmenter(nominal_voltage, threshold, hysteresis, path)
    for c in chunks:
        seg.feed(c)
    if seg.total == 0:
        raise TraceError(path, None, "expected samples, found none in the trace")
    R, names = _debounced_runs(seg, min_width_s)
    warnings = list(seg.warnings)
    highs = _high_runs(R, seg.total, partial, path, warnings)
    windows = _windows(R, highs, names)
    _check_windows(windows, seg.source or path)
    warnings += _trace_warnings(seg, R, windows, min_width_s, path)
    period = min(seg.periods) if seg.periods else None
    uniform = len(seg.periods) == 1 and seg.last_t is None
    return SegmentResult(windows, warnings, seg.total, period if uniform else None, seg.supplies)


def _check_settings(nominal_voltage, min_width_s, threshold, hysteresis, partial) -> None:
    """ValueError naming the setting (and its command-line flag) that is out of range."""
    if partial not in ("error", "drop"):
        raise ValueError(f"partial (--partial): expected 'error' or 'drop', got {partial!r}")
    checks = [("nominal voltage (--voltage)", nominal_voltage, "a finite number > 0", lambda v: 0 < v < math.inf),
              ("min_width_s (--min-width)", min_width_s, "a finite number >= 0", lambda v: 0 <= v < math.inf),
              ("threshold (--threshold)", threshold, "a finite number", math.isfinite),
              ("hysteresis (--hysteresis)", hysteresis, "a finite number >= 0", lambda v: 0 <= v < math.inf)]
    for name, value, what, ok in checks:
        if value is not None and not ok(value):
            raise ValueError(f"{name}: expected {what}, got {value}")


MAX_WINDOW_S = 9.2e9     # durations are stored as integer nanoseconds (int64): 2^63 ns is 292 years


def _check_windows(windows: "Windows", path: str) -> None:
    """Every window's values finite (and their sums over the windows, which the statistics take), its
    duration storable, its energy positive: a window that used no energy, or gave some back, is no
    operation's energy (TraceError naming the window)."""
    cols = windows.cols
    where = lambda i: _where(cols["loc_kind"][i], cols["loc"][i])       # noqa: E731
    flat = np.flatnonzero(cols["duration_s"] == 0)
    if len(flat):
        i = int(flat[0])
        raise TraceError(path, where(i), f"expected a positive duration in every window, found 0 s in window "
                         f"{windows.first_index + i} (per-sample times read in chunks of one sample: give a larger "
                         "chunk_samples)")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        power = cols["energy_j"] / cols["duration_s"]
        checks = [("start time", cols["start_s"], "s"), ("duration", cols["duration_s"], "s"),
                  ("energy", cols["energy_j"], "J"), ("average current", cols["avg_current_a"], "A"),
                  ("average power", power, "W")]
        checks += [(f"energy of supply '{nm}'", cols["E." + nm], "J") for nm in windows.supplies]
        for what, values, unit in checks:
            bad = np.flatnonzero(~np.isfinite(values))
            if len(bad) or not np.isfinite(np.sum(values)):
                i = int(bad[0]) if len(bad) else int(np.argmax(np.abs(values)))
                raise TraceError(path, where(i), f"expected a finite {what} in every window and in their sum, "
                                 f"found {float(values[i]):.6g} {unit} in window {windows.first_index + i} "
                                 "(values so large that the sums overflow: check the trace's units and scale)")
    long = np.flatnonzero(cols["duration_s"] > MAX_WINDOW_S)
    if len(long):
        i = int(long[0])
        raise TraceError(path, where(i), f"expected windows shorter than {MAX_WINDOW_S:.3g} s (durations are "
                         f"stored in integer nanoseconds), found {float(cols['duration_s'][i]):.6g} s in window "
                         f"{windows.first_index + i}: check the time column's scale")
    bad = np.flatnonzero(~(cols["energy_j"] > 0))
    if len(bad):
        i = int(bad[0])
        e = float(cols["energy_j"][i])
        why = ("no current flows in it: is the current column the supply's?" if e == 0 else
               "its current is below zero on average: reversed current leads, a wrong sign in the scale, or an "
               "analyzer zero offset larger than the signal")
        raise TraceError(path, where(i), f"expected a positive energy in every window, found {e:.6g} J in window "
                                         f"{windows.first_index + i}: {why}")


def _debounced_runs(seg: "_Segmenter", min_width_s: float) -> tuple[dict, list[str]]:
    """The trace's runs as arrays (with a glitch column), debounced when min_width_s asks, and the
    supply names."""
    R = seg.merged()
    names = [k[2:] for k in R if k.startswith("E.")]
    R["glitch"] = np.zeros(len(R["state"]), dtype=bool)
    if min_width_s > 0 and (R["dur"] < min_width_s).any():
        R = _arrays(seg.debounce(seg.run_objects(R), min_width_s), names)
    return R, names


def _high_runs(R: dict, samples_total: int, partial: str, path: str, warnings: list[str]) -> np.ndarray:
    """Indexes of the high runs that are whole windows; a window cut by the trace's start or end
    raises (partial="error") or is dropped with a warning appended to warnings."""
    state = R["state"]
    where = lambda i: _where(R["loc_kind"][i], R["loc"][i])       # noqa: E731
    if len(state) == 1:
        level = "high" if state[0] == 1 else "low"
        raise TraceError(path, f"{where(0)}…end", f"expected marker edges (rising then falling), found none in "
                         f"{samples_total:,} samples: the marker stays {level}")
    highs = np.flatnonzero(state == 1)
    if state[0] == 1:
        msg = (f"a rising edge before the falling edge at {where(1)}: the trace starts inside a marker "
               "window (an odd number of edges)")
        if partial == "error":
            raise TraceError(path, where(1), f"expected {msg}; use --partial drop to drop that window")
        warnings.append(f"{path}: dropped the window cut by the trace's start (falling edge at {where(1)})")
        highs = highs[1:]
    if state[-1] == 1 and len(highs) and highs[-1] == len(state) - 1:
        last = len(state) - 1
        msg = (f"a falling edge after the rising edge at {where(last)}: the trace ends inside a marker "
               "window (an odd number of edges)")
        if partial == "error":
            raise TraceError(path, where(last), f"expected {msg}; use --partial drop to drop that window")
        warnings.append(f"{path}: dropped the window cut by the trace's end (rising edge at {where(last)})")
        highs = highs[:-1]
    return highs


def _windows(R: dict, highs: np.ndarray, names: list[str]) -> Windows:
    """The columns of the windows (runs highs): energy in total and per supply, average current."""
    energy = {nm: R["E." + nm][highs] for nm in names}
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum([energy[nm] for nm in names], axis=0)
    dur, nsamp, charge = R["dur"][highs], R["n"][highs], R["charge"][highs]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        avg_i = np.where(dur > 0, charge / dur, np.nan)
    neg = np.any([energy[nm] < 0 for nm in names], axis=0) if len(names) > 1 else np.zeros(len(highs), dtype=bool)
    return Windows({"start_s": R["t"][highs], "duration_s": dur, "energy_j": total, "avg_current_a": avg_i,
                    "samples": nsamp, "glitch": R["glitch"][highs], "x": R["x"][highs] > 0, "neg": neg,
                    "loc_kind": R["loc_kind"][highs], "loc": R["loc"][highs],
                    **{"E." + nm: energy[nm] for nm in names}}, names)


def _trace_warnings(seg: "_Segmenter", R: dict, windows: Windows, min_width_s: float, path: str) -> list[str]:
    """Warnings about the whole trace: nominal voltages used, unknown marker states, debounced
    glitches, approximate windows."""
    warnings = []
    glitch_runs = int(R["glitch"].sum())
    for name in sorted(seg.nominal_used):
        warnings.append(f"{path}: supply '{name}' has no logged voltage; energy uses the nominal "
                        f"{seg.nominal_voltage:g} V (a warning: the real supply may differ)")
    if seg.x_total:
        warnings.append(f"{path}: {seg.x_total} samples had an unknown marker state (X); their windows are flagged")
    if glitch_runs:
        warnings.append(f"{path}: {glitch_runs} windows or gaps had glitches shorter than {min_width_s:g} s "
                        "merged (debounce)")
    for name, (count, where) in seg.negative.items():
        warnings.append(f"{path}: {count} {name} samples inside marker windows are below zero (the first at "
                        f"{where}): kept as read, as an analyzer's zero offset gives small negative readings near "
                        "zero; large ones mean reversed leads or a wrong zero")
    neg = windows.column("neg")
    if neg.any():
        low = {nm: float(windows.column("E." + nm)[neg].min()) for nm in windows.supplies}
        which = ", ".join(f"'{nm}' (lowest {v:.3g} J)" for nm, v in low.items() if v < 0)
        warnings.append(f"{path}: {int(neg.sum())} windows have a negative energy on supply {which}, flagged "
                        "negative-supply: most likely that supply draws next to nothing and the analyzer's zero "
                        "offset dominates its reading; its share of the split is not meaningful there")
    napprox = int(windows.column("approximate").sum())
    if napprox:
        warnings.append(f"{path}: {napprox} windows are shorter than {APPROXIMATE_PERIODS} sampling periods: "
                        "their values are approximate")
    return warnings


def _arrays(runs: list[_Run], names: list[str]) -> dict:
    """Runs (after debouncing) back as arrays."""
    return {"state": np.array([r.state for r in runs], dtype=np.int8), "start": np.array([r.start for r in runs]),
            "t": np.array([r.start_s for r in runs]), "n": np.array([r.samples for r in runs]),
            "dur": np.array([r.duration_s for r in runs]), "charge": np.array([r.charge for r in runs]),
            "x": np.array([r.x_samples for r in runs]), "glitch": np.array([r.glitch for r in runs]),
            "loc_kind": np.array([r.loc_kind for r in runs], dtype=np.int8),
            "loc": np.array([r.loc for r in runs]),
            **{"E." + nm: np.array([r.energy[nm] for r in runs]) for nm in names}}


def summarize_energy(windows) -> dict:
    """Median, RSD etc. of energy, duration and average current over the windows, the count of
    approximate windows, and the split of energy over supplies (median per window and share)."""
    def stats(xs):
        return summarize(xs.tolist()).as_dict()
    e, d = column(windows, "energy_j"), column(windows, "duration_s")
    out = {"n": len(windows),
           "energy_j": stats(e),
           "duration_s": stats(d),
           "avg_current_a": stats(column(windows, "avg_current_a")),
           "avg_power_w": stats(e[d > 0] / d[d > 0]),
           "approximate": int(column(windows, "approximate").sum()),
           "flagged": int(column(windows, "flagged").sum())}
    names = windows.supplies if isinstance(windows, Windows) else (list(windows[0].supplies) if len(windows) else [])
    if len(names) > 1:
        total = float(e.sum())
        out["supplies"] = {}
        for n in names:
            en = column(windows, "E." + n)
            out["supplies"][n] = {"median_j": float(np.median(en)),
                                  "share_pct": 100.0 * float(en.sum()) / total if total else None}
    return out


def match_plan(windows: list[Window], planned: list[dict], path: str) -> list[tuple[dict, list[Window]]]:
    """Assign windows to the planned sequence of cells, in order: each planned item says how many
    repetitions it ran (`repeat`) and, where known, its expected duration per repetition
    (`expected_s`). The count must match exactly; a window whose duration is far (outside ×0.5…×2)
    from its cell's expected duration is reported as an order mismatch. Nothing is guessed: any
    mismatch raises PlanMismatch listing what was found."""
    want = sum(p["repeat"] for p in planned)
    if len(windows) != want:
        detail = ", ".join(f"{p['label']}×{p['repeat']}" for p in planned[:8]) + (" …" if len(planned) > 8 else "")
        raise PlanMismatch(f"{path}: the run planned {want} repetitions ({detail}) but the trace has "
                           f"{len(windows)} marker windows; nothing stored")
    out, i, problems, n_bad = [], 0, [], 0
    for p in planned:
        ws = windows[i:i + p["repeat"]]
        exp = p.get("expected_s")
        if exp:
            d = column(ws, "duration_s")
            bad = np.flatnonzero((d < 0.5 * exp) | (d > 2.0 * exp))
            n_bad += len(bad)
            for j in bad[:max(0, 5 - len(problems))]:
                w = ws[int(j)]
                problems.append(f"window {w.index} ({w.where}) lasts {w.duration_s:.6g} s but "
                                f"{p['label']} was timed at {exp:.6g} s")
        out.append((p, ws))
        i += p["repeat"]
    if n_bad:
        raise PlanMismatch(f"{path}: windows do not match the run's order: " + "; ".join(problems)
                           + (f"; and {n_bad - len(problems)} more" if n_bad > len(problems) else "") + "; nothing stored")
    return out

"""Segmentation of a trace into per-repetition windows, and the energy of each window.

A window runs from a rising edge of the marker to the next falling edge (the DUT raises a GPIO
before an operation and lowers it after, seed 003). The trace is read once, chunk by chunk, and
cut into *runs*: maximal stretches of samples with the same marker state. Every run keeps only
sums (energy per supply, charge, sample count, unknown-marker samples), so memory grows with the
number of edges, never with the number of samples; a chunk is processed with a handful of numpy
passes (no per-sample Python).

Integration is the rectangle rule: a sample stands for the interval from it to the next sample,
energy Σ V·I·Δt (per-sample V when the trace logs it, else the nominal supply voltage, with a
warning). Each further supply of the trace (`current.NAME` / `voltage.NAME` channels) is integrated
the same way, which gives the host / secure-element energy split of seed 003.

Marker states: a digital marker gives 0/1/X per sample; X (unknown, PPK2's `X`, a glitchy logic
level) holds the previous state and flags the window. An analog marker (a GPIO logged as a
voltage) becomes digital with a threshold and hysteresis: high at or above threshold + h/2, low at
or below threshold − h/2, unchanged in between.

Debounce: a run shorter than `min_width_s` is a glitch; it is merged with its neighbours (a short
high pulse disappears, a short low dip inside a window is bridged) and the window is flagged.
Windows shorter than 20 sampling periods are flagged approximate (seed 003).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from ..stats import summarize
from .trace import MARKER_X, Chunk, TraceError

APPROXIMATE_PERIODS = 20     # seed 003: values under 20 sampling periods are approximate
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
    flags: list[str] = field(default_factory=list)       # glitch, x-state
    supplies: dict[str, float] = field(default_factory=dict)   # energy per supply (J)

    def as_dict(self) -> dict:
        return {"index": self.index, "start_s": self.start_s, "duration_s": self.duration_s,
                "energy_j": self.energy_j, "avg_current_a": self.avg_current_a, "samples": self.samples,
                "approximate": self.approximate, "where": self.where, "flags": list(self.flags),
                "supplies": dict(self.supplies)}


@dataclass
class SegmentResult:
    windows: list[Window]
    warnings: list[str]
    samples_total: int
    sample_period_s: float | None
    supplies: list[str]


@dataclass
class _Run:
    state: int
    start: int            # global index of the first sample
    start_s: float
    where: str
    samples: int = 0
    duration_s: float = 0.0
    charge: float = 0.0
    energy: dict = field(default_factory=dict)
    x_samples: int = 0
    glitch: bool = False

    def absorb(self, other: "_Run") -> None:
        self.samples += other.samples
        self.duration_s += other.duration_s
        self.charge += other.charge
        for k, v in other.energy.items():
            self.energy[k] = self.energy.get(k, 0.0) + v
        self.x_samples += other.x_samples
        self.glitch = self.glitch or other.glitch


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
        self.runs: list[_Run] = []
        self.state: int | None = None     # marker state of the last sample seen
        self.total = 0
        self.last_t: float | None = None  # time of the last sample (non-uniform traces)
        self.periods: set[float] = set()
        self.warnings: list[str] = []
        self.supplies: list[str] = []
        self.nominal_used: set[str] = set()
        self.x_total = 0

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
                raise TraceError(self.path, None, "a marker channel (digital, or analog with a threshold): "
                                 "the trace has none; see the format's marker option")
        if self.threshold is None:
            raise TraceError(self.path, None, "a threshold for the analog marker channel (--threshold V, "
                             "optionally --hysteresis V)")
        hi = self.threshold + self.hysteresis / 2
        lo = self.threshold - self.hysteresis / 2
        s = np.full(len(analog), -1, dtype=np.int8)
        s[analog >= hi] = 1
        s[analog <= lo] = 0
        bad = ~np.isfinite(analog)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TraceError(self.path, c.where(i), f"a finite marker value, found {analog[i]}")
        return _forward_fill(s, carry), None

    def dts(self, c: Chunk) -> np.ndarray | float:
        if c.t is None:
            self.periods.add(float(c.dt))
            return float(c.dt)
        t = c.t
        d = np.empty(len(t), dtype=np.float64)
        d[:-1] = np.diff(t)
        # the last sample's interval: the chunk's median step (the next chunk's first time is unknown)
        d[-1] = float(np.median(d[:-1])) if len(t) > 1 else (self.periods and min(self.periods) or 0.0)
        if len(t) > 1 and (d[:-1] <= 0).any():
            i = int(np.flatnonzero(d[:-1] <= 0)[0]) + 1
            raise TraceError(self.path, c.where(i), f"increasing timestamps, found {t[i]} after {t[i - 1]}")
        if self.last_t is not None and len(t) and t[0] <= self.last_t:
            raise TraceError(self.path, c.where(0), f"increasing timestamps, found {t[0]} after {self.last_t}")
        if len(t) > 1:
            self.periods.add(float(np.median(d[:-1])))
        self.last_t = float(t[-1]) if len(t) else self.last_t
        return d

    def supply_energy(self, c: Chunk, dt) -> dict[str, np.ndarray]:
        out = {MAIN: self._power(c.current, c.voltage, MAIN, c) * dt}
        for key, cur in c.extra.items():
            if not key.startswith("current."):
                continue
            name = key[len("current."):]
            out[name] = self._power(cur, c.extra.get("voltage." + name), name, c) * dt
        if not self.supplies:
            self.supplies = list(out)
        return out

    def _power(self, current, voltage, name, c) -> np.ndarray:
        if voltage is not None:
            return current * voltage
        if self.nominal_voltage is None:
            raise TraceError(self.path, None, f"a voltage for supply '{name}': the trace logs none, "
                             "give the nominal supply voltage (--voltage V)")
        self.nominal_used.add(name)
        return current * self.nominal_voltage

    def feed(self, c: Chunk) -> None:
        n = len(c)
        if n == 0:
            return
        cur = c.current
        if not np.isfinite(cur).all():
            i = int(np.flatnonzero(~np.isfinite(cur))[0])
            raise TraceError(self.path, c.where(i), f"a finite current, found {cur[i]}")
        states, x = self.states(c)
        dt = self.dts(c)
        energy = self.supply_energy(c, dt)
        charge = cur * dt
        # run boundaries inside this chunk: where the state differs from the previous sample
        prev = self.state if self.state is not None else int(states[0])
        change = np.flatnonzero(np.diff(states, prepend=np.int8(prev)) != 0)
        bounds = np.concatenate(([0], change, [n])) if (len(change) == 0 or change[0] != 0) else np.concatenate((change, [n]))
        starts = bounds[:-1]
        seg_energy = {k: np.add.reduceat(v, starts) if isinstance(v, np.ndarray) else v for k, v in energy.items()}
        seg_charge = np.add.reduceat(charge, starts)
        seg_n = np.diff(bounds)
        if isinstance(dt, float):
            seg_dur = seg_n * dt
        else:
            seg_dur = np.add.reduceat(dt, starts)
        seg_x = np.add.reduceat(x.astype(np.int64), starts) if x is not None else None
        continues = bool(self.runs) and (len(change) == 0 or change[0] != 0)
        for j, s in enumerate(starts):
            s = int(s)
            if j > 0 or not continues:
                t = float(c.t[s]) if c.t is not None else c.t0 + c.dt * s
                self.runs.append(_Run(int(states[s]), self.total + s, t, c.where(s)))
            r = self.runs[-1]
            r.samples += int(seg_n[j])
            r.duration_s += float(seg_dur[j])
            r.charge += float(seg_charge[j])
            for k, v in seg_energy.items():
                r.energy[k] = r.energy.get(k, 0.0) + float(v[j])
            if seg_x is not None:
                r.x_samples += int(seg_x[j])
        self.state = int(states[-1])
        self.total += n
        if x is not None:
            self.x_total += int(x.sum())

    # -- after the last chunk -----------------------------------------------------------------
    def debounce(self, min_width_s: float) -> list[_Run]:
        if min_width_s <= 0:
            return self.runs
        out: list[_Run] = []
        for r in self.runs:
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
            out[0].start, out[0].start_s, out[0].where = first.start, first.start_s, first.where
            out[0].absorb(first)
            out[0].glitch = True
        if len(out) >= 2 and out[-1].duration_s < min_width_s:
            out[-2].absorb(out.pop())
            out[-1].glitch = True
        return out


def segment(chunks: Iterable[Chunk], *, nominal_voltage: float | None = None, min_width_s: float = 0.0,
            threshold: float | None = None, hysteresis: float = 0.0, partial: str = "error",
            path: str = "trace", extra_channels=()) -> SegmentResult:
    """Windows from the marker's rising to falling edges, with energy, charge and flags.

    partial: what to do with a window cut by the trace's start or end (an odd number of edges):
    "error" (default: TraceError naming the unmatched edge's line) or "drop" (warning).
    """
    if partial not in ("error", "drop"):
        raise ValueError(f"partial: expected 'error' or 'drop', got {partial!r}")
    if hysteresis < 0:
        raise ValueError(f"hysteresis: must be >= 0, got {hysteresis}")
    seg = _Segmenter(nominal_voltage, threshold, hysteresis, path)
    for c in chunks:
        seg.feed(c)
    if seg.total == 0:
        raise TraceError(path, None, "samples: the trace has none")
    runs = seg.debounce(min_width_s)
    highs = [r for r in runs if r.state == 1]
    if not highs or len(runs) == 1:
        level = "high" if runs[0].state == 1 else "low"
        raise TraceError(path, f"{runs[0].where}…end", f"marker edges (rising then falling), found none in "
                         f"{seg.total:,} samples: the marker stays {level}")
    warnings = list(seg.warnings)
    if runs[0].state == 1:
        msg = (f"a rising edge before the falling edge at {runs[1].where}: the trace starts inside a marker "
               "window (an odd number of edges)")
        if partial == "error":
            raise TraceError(path, runs[1].where, f"expected {msg}; use partial=drop to drop that window")
        warnings.append(f"{path}: dropped the window cut by the trace's start (falling edge at {runs[1].where})")
        highs = highs[1:]
    if runs[-1].state == 1 and highs and highs[-1] is runs[-1]:
        msg = (f"a falling edge after the rising edge at {runs[-1].where}: the trace ends inside a marker "
               "window (an odd number of edges)")
        if partial == "error":
            raise TraceError(path, runs[-1].where, f"expected {msg}; use partial=drop to drop that window")
        warnings.append(f"{path}: dropped the window cut by the trace's end (rising edge at {runs[-1].where})")
        highs = highs[:-1]
    period = min(seg.periods) if seg.periods else None
    uniform = len(seg.periods) == 1 and seg.last_t is None
    windows = []
    for i, r in enumerate(highs):
        flags = (["glitch"] if r.glitch else []) + (["x-state"] if r.x_samples else [])
        total = sum(r.energy.values())
        windows.append(Window(index=i, start_s=r.start_s, duration_s=r.duration_s, energy_j=total,
                              avg_current_a=r.charge / r.duration_s if r.duration_s > 0 else math.nan,
                              samples=r.samples, approximate=r.samples < APPROXIMATE_PERIODS,
                              where=r.where, flags=flags, supplies=dict(r.energy)))
    for name in sorted(seg.nominal_used):
        warnings.append(f"{path}: supply '{name}' has no logged voltage; energy uses the nominal "
                        f"{seg.nominal_voltage:g} V (a warning: the real supply may differ)")
    if seg.x_total:
        warnings.append(f"{path}: {seg.x_total} samples had an unknown marker state (X); their windows are flagged")
    glitches = sum(1 for r in runs if r.glitch)
    if glitches:
        warnings.append(f"{path}: {glitches} glitches shorter than {min_width_s:g} s merged (debounce)")
    napprox = sum(1 for w in windows if w.approximate)
    if napprox:
        warnings.append(f"{path}: {napprox} windows are shorter than {APPROXIMATE_PERIODS} sampling periods: "
                        "their values are approximate")
    return SegmentResult(windows, warnings, seg.total, period if uniform else None, seg.supplies)


def summarize_energy(windows: list[Window]) -> dict:
    """Median, RSD etc. of energy, duration and average current over the windows, the count of
    approximate windows, and the split of energy over supplies (median per window and share)."""
    def stats(xs):
        return summarize(xs).as_dict()
    out = {"n": len(windows),
           "energy_j": stats([w.energy_j for w in windows]),
           "duration_s": stats([w.duration_s for w in windows]),
           "avg_current_a": stats([w.avg_current_a for w in windows]),
           "avg_power_w": stats([w.energy_j / w.duration_s for w in windows if w.duration_s > 0]),
           "approximate": sum(1 for w in windows if w.approximate),
           "flagged": sum(1 for w in windows if w.flags)}
    names = list(windows[0].supplies) if windows else []
    if len(names) > 1:
        total = sum(w.energy_j for w in windows)
        out["supplies"] = {n: {"median_j": summarize([w.supplies[n] for w in windows]).median,
                               "share_pct": 100.0 * sum(w.supplies[n] for w in windows) / total if total else None}
                           for n in names}
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
    out, i, problems = [], 0, []
    for p in planned:
        ws = windows[i:i + p["repeat"]]
        exp = p.get("expected_s")
        if exp:
            for w in ws:
                if not (0.5 * exp <= w.duration_s <= 2.0 * exp):
                    problems.append(f"window {w.index} ({w.where}) lasts {w.duration_s:.6g} s but "
                                    f"{p['label']} was timed at {exp:.6g} s")
        out.append((p, ws))
        i += p["repeat"]
    if problems:
        raise PlanMismatch(f"{path}: windows do not match the run's order: " + "; ".join(problems[:5])
                           + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "") + "; nothing stored")
    return out

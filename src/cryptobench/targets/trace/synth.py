"""Synthetic power traces of known energy, in every format cryptobench reads.

A `PulsePlan` is a rectangular current: `lead_s` at `low_a`, then `n` windows of `width_s` at
`high_a` (marker high) each followed by `gap_s` at `low_a` (marker low), sampled every `dt` at supply
voltage `v` (minus `v_droop` while a window runs). An optional second supply (`second`) draws its own
currents in the same windows. Widths and gaps are whole numbers of samples, so the energy of a
window is exactly V·I·width: `expected(plan)` gives the analytic values that a reader + segmenter
must reproduce (a sample i stands for the interval [i·dt, (i+1)·dt)).

    plan = PulsePlan(n=100, width_s=1e-3, gap_s=2e-3, high_a=0.02, low_a=0.001, dt=1e-5, v=3.3)
    write_n6705_dlog("x.dlog", plan)          # streamed: bounded memory for any length
    expected(plan)["energy_j"]                # [6.6e-05, …]

Writers: write_n6705_csv, write_n6705_dlog, write_ppk2_csv, write_saleae_pair, write_generic_csv,
write_jls. Each writes in chunks of samples, so a 100-million-sample trace needs little memory.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .formats.generic_csv import write_rows
from ...core.extras import require

CHUNK = 1 << 20


@dataclass
class Supply:
    """A further supply measured in the same trace (e.g. a secure element beside the MCU)."""
    name: str = "se"
    high_a: float = 0.005
    low_a: float = 0.0002
    v: float = 1.8


@dataclass
class PulsePlan:
    n: int = 10                      # windows (marker pulses)
    width_s: float = 1e-3            # each window
    gap_s: float = 1e-3              # low time after each window
    high_a: float = 0.02             # current inside a window
    low_a: float = 0.001             # current outside
    dt: float = 1e-5                 # sample period
    v: float = 3.3                   # supply voltage
    lead_s: float | None = None      # low time before the first window (default gap_s)
    v_droop: float = 0.0             # the voltage is v - v_droop inside a window
    second: Supply | None = None     # a second supply
    marker_high_v: float = 3.3       # level of an analog marker (GPIO logged as a voltage)
    t0: float = 0.0                  # time of sample 0 (s), for formats with time stamps

    def __post_init__(self):
        self.width_n = self._samples(self.width_s, "width_s")
        self.gap_n = self._samples(self.gap_s, "gap_s")
        self.lead_n = self._samples(self.gap_s if self.lead_s is None else self.lead_s, "lead_s", allow_zero=True)
        if self.width_n < 1 or self.gap_n < 1 or self.n < 0:
            raise ValueError("PulsePlan: width_s and gap_s must be at least one sample, n >= 0")

    def _samples(self, seconds: float, name: str, allow_zero=False) -> int:
        k = round(seconds / self.dt)
        if abs(k * self.dt - seconds) > 1e-9 * max(seconds, self.dt) or (k == 0 and not allow_zero and seconds):
            raise ValueError(f"PulsePlan: {name} = {seconds} s is not a whole number of samples of {self.dt} s")
        return k

    @property
    def period_n(self) -> int:
        return self.width_n + self.gap_n

    @property
    def total(self) -> int:
        """Samples in the trace."""
        return self.lead_n + self.n * self.period_n

    def window_starts(self) -> np.ndarray:
        """Sample index of the first sample of every window."""
        return self.lead_n + self.period_n * np.arange(self.n, dtype=np.int64)

    def samples(self, start: int, stop: int) -> dict:
        """The samples [start, stop): marker (uint8), current, voltage (float64), and the second supply's."""
        i = np.arange(start, stop, dtype=np.int64) - self.lead_n
        high = (i >= 0) & (i % self.period_n < self.width_n) & (i // self.period_n < self.n)
        out = {"marker": high.astype(np.uint8),
               "current": np.where(high, self.high_a, self.low_a),
               "voltage": np.where(high, self.v - self.v_droop, self.v)}
        if self.second is not None:
            out["current2"] = np.where(high, self.second.high_a, self.second.low_a)
            out["voltage2"] = np.full(len(i), self.second.v)
        out["time"] = self.t0 + self.dt * np.arange(start, stop, dtype=np.float64)
        return out

    def chunks(self, size: int = CHUNK):
        for start in range(0, self.total, size):
            yield start, self.samples(start, min(self.total, start + size))


def expected(plan: PulsePlan) -> dict:
    """The analytic values: count, per-window start, duration and energy (J), per supply."""
    width = plan.width_n * plan.dt
    e = (plan.v - plan.v_droop) * plan.high_a * width
    out = {"count": plan.n, "samples": plan.total, "sample_period_s": plan.dt,
           "start_s": list(plan.t0 + plan.window_starts() * plan.dt),
           "duration_s": [width] * plan.n, "energy_j": [e] * plan.n, "supplies": {}}
    if plan.second is not None:
        out["supplies"][plan.second.name] = [plan.second.v * plan.second.high_a * width] * plan.n
    return out


def _write_rows(fh, columns: list[np.ndarray], fmts: list[str], delimiter=","):
    """Rows of columns, each formatted with its printf format (generic_csv.write_rows joins them)."""
    write_rows(fh, [np.char.mod(f, c) for f, c in zip(fmts, columns)], delimiter)


# ------------------------------------------------------------------------------------ formats

def write_generic_csv(path, plan: PulsePlan, *, time: bool = True, marker: str | None = "digital",
                      current_unit: float = 1.0, delimiter: str = ",", chunk: int = CHUNK) -> dict:
    """Columns time_s, current_a (in units of `current_unit` A), voltage_v, marker (0/1, or volts when
    marker='analog'), and current_NAME, voltage_NAME for a second supply. Returns the reader options."""
    names = (["time_s"] if time else []) + ["current_a", "voltage_v"] + (["marker"] if marker else [])
    if plan.second is not None:
        names += [f"current_{plan.second.name}", f"voltage_{plan.second.name}"]
    with open(path, "w", newline="\n") as fh:
        fh.write(delimiter.join(names) + "\n")
        for _, s in plan.chunks(chunk):
            cols, fmts = [], []
            if time:
                cols.append(s["time"]); fmts.append("%.9f")
            cols += [s["current"] / current_unit, s["voltage"]]; fmts += ["%.9g", "%.6g"]
            if marker == "analog":
                cols.append(s["marker"] * plan.marker_high_v); fmts.append("%.4f")
            elif marker:
                cols.append(s["marker"]); fmts.append("%d")
            if plan.second is not None:
                cols += [s["current2"] / current_unit, s["voltage2"]]; fmts += ["%.9g", "%.6g"]
            _write_rows(fh, cols, fmts, delimiter)
    opts = {"current_col": "current_a", "voltage_col": "voltage_v", "current_scale": current_unit}
    opts.update({"time_col": "time_s"} if time else {"sample_period": plan.dt})
    if marker:
        opts.update(marker_col="marker", marker_kind="analog" if marker == "analog" else "digital")
    if plan.second is not None:
        opts.update(extra_current=f"{plan.second.name}:current_{plan.second.name}",
                    extra_voltage=f"{plan.second.name}:voltage_{plan.second.name}")
    if delimiter != ",":
        opts["delimiter"] = delimiter
    return opts


def write_ppk2_csv(path, plan: PulsePlan, *, marker_bit: int = 0, bits: str | None = "D0-D7",
                   other_bits: str = "0", chunk: int = CHUNK) -> None:
    """Timestamp(ms),Current(uA)[,D0-D7 | ,D0,…,D7] as nRF Connect's Power Profiler exports it; the
    marker on input `marker_bit`, the other inputs `other_bits` ('0' or '-' for not logged)."""
    header = ["Timestamp(ms)", "Current(uA)"] + ({"D0-D7": ["D0-D7"], "separate": [f"D{i}" for i in range(8)],
                                                  None: []}[bits])
    with open(path, "w", newline="\n") as fh:
        fh.write(",".join(header) + "\n")
        for _, s in plan.chunks(chunk):
            cols, fmts = [s["time"] * 1e3, s["current"] * 1e6], ["%.6f", "%.3f"]
            m = np.where(s["marker"] == 1, "1", "0")
            if bits == "D0-D7":
                cells = np.char.add(np.char.add(other_bits * marker_bit, m), other_bits * (7 - marker_bit))
                cols.append(cells); fmts.append("%s")
            elif bits == "separate":
                for i in range(8):
                    cols.append(m if i == marker_bit else np.full(len(m), other_bits)); fmts.append("%s")
            _write_rows(fh, cols, fmts)


def write_n6705_csv(path, plan: PulsePlan, *, interval_style: str = "comma", minmax: bool = False,
                    chunk: int = CHUNK) -> dict:
    """A 14585A-style data-logger CSV: channel 1 the supply, channel 2's voltage the analog marker,
    channel 3 the second supply (if any). Returns the reader options."""
    interval = {"comma": f"Sample interval,{plan.dt:.9g}", "colon": f"Sample interval:,{plan.dt:.6E}"}[interval_style]
    chans = [1, 2] + ([3] if plan.second is not None else [])
    names = ["Sample"]
    for c in chans:
        for q in ("Curr", "Volt"):
            names += [f"{q} avg {c}"] + ([f"{q} min {c}", f"{q} max {c}"] if minmax else [])
    with open(path, "w", newline="\n") as fh:
        fh.write("Keysight Technologies 14585A Control and Analysis Software (synthetic)\n"
                 f"Data logger export,cryptobench synth\n{interval}\nSense,Curr & Volt\n\n")
        fh.write(",".join(names) + "\n")
        for start, s in plan.chunks(chunk):
            per = {1: (s["current"], s["voltage"]), 2: (np.zeros(len(s["marker"])), s["marker"] * plan.marker_high_v)}
            if plan.second is not None:
                per[3] = (s["current2"], s["voltage2"])
            cols, fmts = [np.arange(start, start + len(s["marker"]))], ["%d"]
            for c in chans:
                for x in per[c]:
                    cols += [x] * (3 if minmax else 1); fmts += ["%.9g"] * (3 if minmax else 1)
            _write_rows(fh, cols, fmts)
    opts = {"marker_column": "Volt avg 2"}
    if plan.second is not None:
        opts.update(extra_current=f"{plan.second.name}:Curr avg 3", extra_voltage=f"{plan.second.name}:Volt avg 3")
    return opts


def dlog_header(channels: list[int], dt: float, duration_s: float, minmax: bool = False) -> bytes:
    """An N6705 .dlog XML header in the layout the open-source readers parse (docs/trace-formats.md)."""
    xml = ['<?xml version="1.0" encoding="UTF-8"?>', "<dlog>"]
    for c in channels:
        xml += [f'<channel id="{c}">', "<ident>", "<model>N6781A</model>", f"<slot>{c}</slot>", "</ident>",
                "<sense_curr>1</sense_curr>", "<sense_volt>1</sense_volt>", "<sense_pow>0</sense_pow>",
                "</channel>"]
    xml += ["<frame>", f"<tint>{dt!r}</tint>", f"<time>{int(np.ceil(duration_s))}</time>",
            f"<sense_minmax>{1 if minmax else 0}</sense_minmax>", "</frame>", "</dlog>"]
    return ("\n".join(xml) + "\n").encode("ascii")


def write_n6705_dlog(path, plan: PulsePlan, *, minmax: bool = False, chunk: int = CHUNK) -> dict:
    """A .dlog: XML header, 8 bytes, then big-endian float32 frames volt1, curr1, volt2, curr2[, volt3,
    curr3] (channel 2's voltage = the analog marker, channel 3 = the second supply). Streamed in
    chunks of `chunk` frames: bounded memory for any length. Returns the reader options."""
    chans = [1, 2] + ([3] if plan.second is not None else [])
    reps = 3 if minmax else 1
    width = 2 * len(chans) * reps
    with open(path, "wb") as f:
        f.write(dlog_header(chans, plan.dt, plan.total * plan.dt, minmax))
        f.write(bytes(8))
        for _, s in plan.chunks(chunk):
            k = len(s["marker"])
            frames = np.empty((k, width), dtype=">f4")
            per = {1: (s["voltage"], s["current"]), 2: (s["marker"] * plan.marker_high_v, np.zeros(k))}
            if plan.second is not None:
                per[3] = (s["voltage2"], s["current2"])
            j = 0
            for c in chans:
                for x in per[c]:
                    for _ in range(reps):
                        frames[:, j] = x
                        j += 1
            frames.tofile(f)
    opts = {"marker_column": "volt2"}
    if plan.second is not None:
        opts.update(extra_current=f"{plan.second.name}:curr3", extra_voltage=f"{plan.second.name}:volt3")
    return opts


def write_saleae_pair(digital_path, current_path, plan: PulsePlan, *, channel: int = 0, channels: int = 2,
                      time_offset: float = 0.0) -> dict:
    """A Logic 2 digital CSV export (marker on `Channel {channel}`, one row per edge, the first row the
    initial state) and a generic CSV of the current; the Logic 2 times are the current trace's times
    plus `time_offset`. Returns the options to read the pair with format 'saleae'."""
    current_opts = write_generic_csv(current_path, plan, time=True, marker=None)
    starts = plan.window_starts()
    edges = np.sort(np.concatenate([starts, starts + plan.width_n]))
    times = np.concatenate([[0], edges]) * plan.dt + plan.t0 + time_offset
    states = np.concatenate([[0], np.tile([1, 0], plan.n)]).astype(int)
    if len(edges) and edges[0] == 0:        # a window from the first sample: the initial row holds its state
        times, states = times[1:], states[1:]
    with open(digital_path, "w", newline="\n") as fh:
        fh.write("Time [s]," + ",".join(f"Channel {c}" for c in range(channels)) + "\n")
        cols = [times] + [states if c == channel else np.zeros(len(times), dtype=int) for c in range(channels)]
        _write_rows(fh, cols, ["%.9f"] + ["%d"] * channels)
    opts = {"current_file": str(current_path), "marker_channel": f"Channel {channel}"}
    if time_offset:
        opts["time_offset"] = time_offset
    opts.update({f"current.{k}": v for k, v in current_opts.items()})
    return opts


def write_jls(path, plan: PulsePlan, *, chunk: int = CHUNK) -> None:
    """A Joulescope-style JLS v2 file: signals current, voltage (float32) and gpi[0] (u1, the marker)."""
    pyjls = require("pyjls", "lab", "writing Joulescope JLS files")
    rate = round(1.0 / plan.dt)
    if abs(rate * plan.dt - 1.0) > 1e-9:
        raise ValueError(f"write_jls: 1/dt = {1.0 / plan.dt} Hz is not a whole number of Hz")
    chunk = max(8, chunk - chunk % 8)
    with pyjls.Writer(str(path)) as w:
        w.source_def(source_id=1, name="JS220-synthetic", vendor="Jetperch", model="JS220", version="synth",
                     serial_number="000000")
        w.signal_def(1, source_id=1, sample_rate=rate, name="current", units="A")
        w.signal_def(2, source_id=1, sample_rate=rate, name="voltage", units="V")
        w.signal_def(3, source_id=1, data_type=pyjls.DataType.U1, sample_rate=rate, name="gpi[0]", units="")
        for start, s in plan.chunks(chunk):
            w.fsr_f32(1, start, s["current"].astype(np.float32))
            w.fsr_f32(2, start, s["voltage"].astype(np.float32))
            w.fsr(3, start, np.packbits(s["marker"], bitorder="little"))


__all__ = ["PulsePlan", "Supply", "expected", "write_generic_csv", "write_ppk2_csv", "write_n6705_csv",
           "write_n6705_dlog", "write_saleae_pair", "write_jls", "dlog_header"]

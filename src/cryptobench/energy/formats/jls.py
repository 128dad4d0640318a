"""`jls`: Joulescope JLS v2 recordings (Joulescope UI "Record" or the `joulescope` / `pyjoulescope_driver`
record tools), read with Jetperch's `pyjls` package.

A JLS v2 file holds sources (instruments) and signals. Joulescope writes its fixed-sample-rate
signals as `current` (A, float32), `voltage` (V, float32), `power`, `current_range`, and the
general-purpose inputs `gpi[0]` … `gpi[3]` and `trigger_in` as 1-bit (u1) signals. Each is read with
`Reader.fsr(signal_id, start_sample, length)`; u1 data comes back packed little-endian (8 samples
a byte), u4 two samples a byte, low nibble first.

Options: current (signal, default `current`), voltage (default `voltage` when present), marker
(default `gpi[0]` when present; a u1/u4/u8 signal -> marker 0/1, a float signal -> marker_analog),
chunk_samples. A signal may be named `source.signal` when a file holds several instruments.
"""
from __future__ import annotations

import numpy as np

from ...extras import MissingExtra, require
from ..trace import Chunk, TraceError, TraceInfo
from ._common import check_file, chunk_size

NAME = "jls"
DESCRIPTION = "Joulescope JLS v2 recording (signals current, voltage, gpi[0…3]/trigger_in) via pyjls"
DEFAULT_CHUNK = 1 << 20
OPTIONS = {
    "current": "signal of the current (default 'current')",
    "voltage": "signal of the voltage (default 'voltage' when present)",
    "marker": "signal of the marker (default 'gpi[0]' when present)",
    "chunk_samples": f"samples per chunk (default {DEFAULT_CHUNK})",
}


def _reader(path):
    try:
        pyjls = require("pyjls", "lab", "reading Joulescope JLS files")
    except MissingExtra as exc:
        raise TraceError(path, None, str(exc)) from None
    try:
        return pyjls.Reader(str(path))
    except Exception as exc:
        raise TraceError(path, None, f"expected a readable JLS v2 file, found one pyjls cannot open ({exc})") from None


def _kind(data_type: int) -> tuple[str, int]:
    """('f', bits) | ('u', bits) | ('i', bits) of a pyjls data type."""
    import pyjls
    name = pyjls.data_type_as_str(data_type)
    return name[0], int(name[1:])


def _lookup(path, reader, spec, what):
    try:
        sig = reader.signal_lookup(spec)
    except Exception:
        names = [s.name for s in reader.signals.values() if s.signal_id != 0]
        raise TraceError(path, None, f"expected a signal {spec!r} ({what}), found signals: "
                                     f"{', '.join(map(repr, names))}") from None
    if sig.signal_type != 0:
        raise TraceError(path, None, f"expected {spec!r} ({what}) to be a fixed-sample-rate signal, "
                                     f"found a variable-rate one")
    return sig


def _has(reader, spec) -> bool:
    try:
        reader.signal_lookup(spec)
        return True
    except Exception:
        return False


def open_trace(path, **options):
    path = check_file(path)
    block = chunk_size(options, DEFAULT_CHUNK)
    block = max(8, block - block % 8)           # whole bytes of packed u1/u4 data
    with _reader(path) as r:
        sigs = {"current": _lookup(path, r, options.get("current", "current"), "the current")}
        v = options.get("voltage")
        if v is not None or _has(r, "voltage"):
            sigs["voltage"] = _lookup(path, r, v if v is not None else "voltage", "the voltage")
        m = options.get("marker")
        if m is not None or _has(r, "gpi[0]"):
            sigs["marker"] = _lookup(path, r, m if m is not None else "gpi[0]", "the marker")
        kinds = {role: _kind(s.data_type) for role, s in sigs.items()}
        if kinds["current"][0] != "f":
            raise TraceError(path, None, f"expected a float current signal, found {sigs['current'].name!r} "
                                         f"of type {kinds['current'][0]}{kinds['current'][1]}")
        rates = {role: s.sample_rate for role, s in sigs.items()}
        if len(set(rates.values())) != 1 or not rates["current"]:
            raise TraceError(path, None, "expected one sample rate for the signals read, found " +
                             ", ".join(f"{sigs[k].name} {v} Hz" for k, v in rates.items()))
        lengths = {role: s.length for role, s in sigs.items()}
        n = min(lengths.values())
        sources = {sid: s for sid, s in r.sources.items() if sid != 0}
    dt = 1.0 / rates["current"]
    notes = [f"{sigs['current'].sample_rate} Hz; {n} samples"]
    notes += [f"source {s.name or sid}: {s.vendor or ''} {s.model or ''} {s.serial_number or ''}".rstrip()
              for sid, s in sources.items()]
    if max(lengths.values()) - n > 8:
        notes.append("signal lengths differ: " + ", ".join(f"{sigs[k].name} {v}" for k, v in lengths.items()) +
                     f"; read the common {n} samples")
    if n == 0:
        raise TraceError(path, None, f"expected samples in signal {sigs['current'].name!r}, found none")
    channels = ["current"] + (["voltage"] if "voltage" in sigs else [])
    if "marker" in sigs:
        channels.append("marker" if kinds["marker"][0] in "ui" else "marker_analog")
    info = TraceInfo(path=str(path), format=NAME, sample_period_s=dt, channels=channels, notes=notes)
    ids = {role: s.signal_id for role, s in sigs.items()}
    return info, _chunks(path, ids, kinds, n, dt, block)


def _read(path, r, sid, kind, start, k):
    try:
        y = r.fsr(sid, start, k)
    except Exception as exc:
        raise TraceError(path, f"sample {start}", f"expected {k} samples of signal {sid} from sample {start}, "
                                                  f"pyjls could not read them ({exc})") from None
    letter, bits = kind
    if letter == "f":
        return np.asarray(y, dtype=np.float64)
    if bits == 1:
        return np.unpackbits(np.asarray(y, dtype=np.uint8), count=k, bitorder="little")
    if bits == 4:
        y = np.asarray(y, dtype=np.uint8)
        out = np.empty(len(y) * 2, dtype=np.uint8)
        out[0::2], out[1::2] = y & 0x0F, y >> 4
        return out[:k]
    return np.asarray(y)[:k]


def _chunks(path, ids, kinds, n, dt, block):
    with _reader(path) as r:
        for start in range(0, n, block):
            k = min(block, n - start)
            chunk = Chunk(current=_read(path, r, ids["current"], kinds["current"], start, k), t0=start * dt, dt=dt)
            if "voltage" in ids:
                chunk.voltage = _read(path, r, ids["voltage"], kinds["voltage"], start, k)
            if "marker" in ids:
                m = _read(path, r, ids["marker"], kinds["marker"], start, k)
                if kinds["marker"][0] == "f":
                    chunk.marker_analog = m
                else:
                    chunk.marker = (m != 0).astype(np.uint8)
            yield chunk

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

The input is never written: pyjls repairs a file that was not closed properly (a recording cut
off) in place, so such a file is copied into a private temporary folder and the copy is repaired
and read, with a warning; a file closed properly is opened in place, read-only.
"""
from __future__ import annotations

import contextlib
import io
import shutil
import struct
import tempfile
import weakref
from pathlib import Path

import numpy as np

from ....core.extras import MissingExtra, require
from ..trace import Chunk, TraceError, TraceInfo
from ._common import check_file, chunk_size, show_names

NAME = "jls"
DESCRIPTION = "Joulescope JLS v2 recording (signals current, voltage, gpi[0…3]/trigger_in) via pyjls"
DEFAULT_CHUNK = 1 << 20
OPTIONS = {
    "current": "signal of the current (default 'current')",
    "voltage": "signal of the voltage (default 'voltage' when present)",
    "marker": "signal of the marker (default 'gpi[0]' when present)",
    "chunk_samples": f"samples per chunk (default {DEFAULT_CHUNK})",
}

# JLS v2 layout (jetperch/jls include/jls/format.h): a 32-byte file header (16-byte identification,
# u64 file length written on close, u32 version, u32 CRC-32C of the 28 bytes before it), then 32-byte
# chunk headers (u64 next, u64 prev, u8 tag, u8, u16 meta, u32 payload length, u32 previous payload
# length, u32 CRC-32C of the 28 bytes before it); a file closed properly ends with an END chunk.
_FILE_ID = bytes([0x6a, 0x6c, 0x73, 0x66, 0x6d, 0x74, 0x0d, 0x0a, 0x20, 0x0a, 0x20, 0x1a, 0x20, 0x20, 0xb2, 0x1c])
_TAG_END = 0xFF


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _closed_properly(path: Path) -> bool:
    """Whether the file was closed properly: its header's length is its size and it ends with an
    END chunk. pyjls opens such a file read-only; any other it "repairs", writing to it in place
    (jls reader.c: the END chunk is the last valid chunk header before the end of the file)."""
    size = path.stat().st_size
    if size < 64 or size % 8:
        return False
    with open(path, "rb") as f:
        head = f.read(32)
        f.seek(size - 32)
        tail = f.read(32)
    if len(head) < 32 or len(tail) < 32 or head[:16] != _FILE_ID:
        return False
    length, _, crc = struct.unpack("<QII", head[16:])
    if length != size or crc != _crc32c(head[:28]):
        return False
    tag, payload, crc = tail[16], struct.unpack("<I", tail[20:24])[0], struct.unpack("<I", tail[28:])[0]
    return tag == _TAG_END and payload == 0 and crc == _crc32c(tail[:28])


class _Source:
    """The file pyjls reads: the input itself when it was closed properly (pyjls opens it read-only),
    else a private copy in a temporary folder, which pyjls may repair: an input file is never written."""

    def __init__(self, path: Path):
        self.path, self.read_path, self.repaired = path, path, False
        if _closed_properly(path):
            return
        with open(path, "rb") as f:
            if f.read(16) != _FILE_ID:
                raise TraceError(path, "byte 0", "expected a readable JLS v2 file, found no JLS file header "
                                                 "(the file does not start with 'jlsfmt')")
        folder = tempfile.mkdtemp(prefix="cryptobench-jls-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        self.read_path = Path(folder) / path.name
        try:
            shutil.copyfile(path, self.read_path)
        except OSError as exc:
            raise TraceError(path, None, f"expected room for a private copy of this JLS file, which was not "
                                         f"closed properly (pyjls repairs such a file), found: {exc}") from None
        self.repaired = True

    def warning(self) -> str:
        return (f"{self.path}: the recording was not closed properly (cut off, or the recorder stopped): read "
                "from a private copy that pyjls repaired, the file itself is unchanged; samples after the last "
                "complete block of the file are missing")


@contextlib.contextmanager
def _quiet():
    """pyjls logs its C library's messages to stderr: keep them out of the one-line errors."""
    with contextlib.redirect_stderr(io.StringIO()):
        yield


def _pyjls(path):
    try:
        return require("pyjls", "lab", "reading Joulescope JLS files")
    except MissingExtra as exc:
        raise TraceError(path, None, str(exc)) from None


@contextlib.contextmanager
def _reader(source: _Source):
    pyjls = _pyjls(source.path)
    try:
        with _quiet():
            reader = pyjls.Reader(str(source.read_path))
    except Exception as exc:
        found = ("one that was not closed properly (truncated?) and that pyjls cannot repair" if source.repaired
                 else "one pyjls cannot open")
        raise TraceError(source.path, None, f"expected a readable JLS v2 file, found {found} ({exc})") from None
    try:
        yield reader
    finally:
        with _quiet():
            reader.close()


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
                                     f"{show_names(names)}") from None
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
    _pyjls(path)                                # the missing extra first, whatever the file holds
    source = _Source(path)
    with _reader(source) as r, _quiet():
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
    if source.repaired:
        notes.append("not closed properly: read from a private copy repaired by pyjls")
    info = TraceInfo(path=str(path), format=NAME, sample_period_s=dt, channels=channels, notes=notes)
    ids = {role: s.signal_id for role, s in sigs.items()}
    return info, _chunks(source, ids, kinds, n, dt, block)


def _read(path, r, sid, kind, start, k):
    try:
        with _quiet():
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


def _chunks(source: _Source, ids, kinds, n, dt, block):
    path = source.path
    with _reader(source) as r:
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
            if start == 0 and source.repaired:
                chunk.warnings.append(source.warning())
            yield chunk

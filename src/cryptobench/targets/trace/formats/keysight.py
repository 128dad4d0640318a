"""Keysight N6705 DC Power Analyzer data logger: `n6705-csv` (CSV export) and `n6705-dlog` (.dlog).

n6705-csv, from the 14585A Control and Analysis Software or the analyzer's own data-logger export:
a preamble of `key,value` lines, among them the sample interval in seconds (`Sample interval,0.0001`
or `Sample interval:,1.024E-05`; a unit after the number, s/ms/us/µs, is honoured), then the header
line `Sample,Curr avg 1,Volt avg 1,…` (also `Curr min N`/`Curr max N`/`Volt min N`/`Volt max N`), then
one row per sample. Time is t0 = 0, dt = the sample interval; the `Sample` column (the sample
index) only has to increase from row to row (a repeated or out-of-order row is an error).

n6705-dlog, the analyzer's binary data-log file: an XML header (root element <dlog>) listing each
output <channel id="N"> with <sense_volt>/<sense_curr> (1 = logged) and a <frame> with <tint> (the
sample interval, s) and <sense_minmax>; after the line `</dlog>` come 8 bytes that are not samples,
then big-endian float32 samples, one frame per sample time holding every logged trace: for each
channel in header order its voltage (if logged) and then its current (if logged); with
sense_minmax = 1 each trace is three values (avg, min, max). Trace names here: `volt1`, `curr1`,
`volt2`, … (`curr1_min`, `curr1_max` with min/max); the CSV names `Curr avg 1`, `Volt min 2` … are
accepted as aliases. (Layout as read by the open-source readers cited in docs/trace-formats.md;
Keysight does not publish it.)

Options (both): current (default the first Curr avg N / currN of a channel other than the marker's:
the marker channel logs a GPIO, not the supply), voltage (default the matching
Volt avg N / voltN, when logged), marker_column (a trace holding an analog marker -> marker_analog,
e.g. `Volt avg 2` when the DUT's GPIO drives channel 2's voltage sense), extra_current=NAME:COLUMN,
extra_voltage=NAME:COLUMN (other supplies -> extra['current.NAME'] / ['voltage.NAME']), chunk_samples.
Every value read (CSV cell or float32) must be finite.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from ..trace import Chunk, TraceError, TraceInfo
from ._common import (DEFAULT_CSV_CHUNK, check_file, check_text, chunk_size, clean, open_text,
                      opt_supplies, read_header, show, show_names, split_header)
from ._fastcsv import open_table

CSV_NAME, DLOG_NAME = "n6705-csv", "n6705-dlog"
CSV_DESCRIPTION = "Keysight N6705 / 14585A data-logger CSV export (Sample interval preamble, Sample,Curr avg 1,… rows)"
DLOG_DESCRIPTION = "Keysight N6705 data-logger .dlog file (XML header, big-endian float32 frames)"
# 1 Mi frames: 8 MiB float64 arrays stay below glibc's mmap threshold and are reused from the heap;
# 4 Mi (32 MiB arrays) are mmapped afresh every chunk and page-faulted, ~3x slower on a cold process
DEFAULT_DLOG_CHUNK = 1 << 20
OPTIONS = {
    "current": "trace of the main supply's current (default: the first Curr avg N / currN)",
    "voltage": "trace of its voltage (default: Volt avg N / voltN of the same channel, when logged)",
    "marker_column": "trace holding an analog marker (e.g. 'Volt avg 2' / volt2) -> marker_analog",
    "extra_current": "further supplies: NAME:TRACE[,NAME:TRACE…] -> extra['current.NAME']",
    "extra_voltage": "their voltages: NAME:TRACE[,…] -> extra['voltage.NAME']",
    "chunk_samples": "samples per chunk (default 262144 for CSV, 1048576 for dlog)",
}
CSV_OPTIONS = DLOG_OPTIONS = OPTIONS

_UNITS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_CSV_TRACE = re.compile(r"^(curr|volt|power)\s+(avg|min|max)\s+(\d+)$", re.IGNORECASE)


def _trace_key(name: str) -> str:
    """'Curr avg 1' -> 'curr1', 'Volt min 2' -> 'volt2_min', 'curr1' -> 'curr1'."""
    m = _CSV_TRACE.match(name.strip())
    if m:
        kind, stat, ch = m.group(1).lower(), m.group(2).lower(), m.group(3)
        return f"{kind}{ch}" + ("" if stat == "avg" else f"_{stat}")
    return name.strip().lower()


def _channel_of(key: str) -> str | None:
    """'curr2' -> '2', 'volt1_min' -> '1'."""
    m = re.match(r"(?:curr|volt|power)(\d+)", key)
    return m.group(1) if m else None


def _choose(path, where, names: list[str], options) -> dict:
    """{role: index into names} for current, voltage, marker and extras, from the options."""
    keys = [_trace_key(n) for n in names]

    def find(value, what):
        k = _trace_key(str(value))
        if k in keys:
            return keys.index(k)
        raise TraceError(path, where, f"expected a trace {value!r} ({what}), found traces: "
                                      f"{show_names(names)}")

    roles = {}
    if options.get("marker_column") is not None:
        roles["marker"] = find(options["marker_column"], "option marker_column")
    if options.get("current") is not None:
        roles["current"] = find(options["current"], "option current")
    else:
        roles["current"] = _default_current(path, where, names, keys, roles.get("marker"))
    if roles["current"] == roles.get("marker"):
        raise TraceError(path, where, f"expected the current (option current) and the marker (option "
                                      f"marker_column) to be different traces, found {names[roles['current']]!r} "
                                      "for both")
    if options.get("voltage") is not None:
        roles["voltage"] = find(options["voltage"], "option voltage")
    else:
        want = "volt" + keys[roles["current"]][4:].split("_")[0]
        if want in keys:
            roles["voltage"] = keys.index(want)
    for opt, prefix in (("extra_current", "current."), ("extra_voltage", "voltage.")):
        for supply, trace in opt_supplies(options, opt):
            roles[prefix + supply] = find(trace, f"option {opt}")
    return roles


def _default_current(path, where, names, keys, marker) -> int:
    """The first average current trace of a channel other than the marker's: the marker channel
    logs the DUT's GPIO, not its supply."""
    marker_ch = _channel_of(keys[marker]) if marker is not None else None
    avg = [i for i, k in enumerate(keys) if re.fullmatch(r"curr\d+", k) and _channel_of(k) != marker_ch]
    if avg:
        return avg[0]
    if marker_ch is None:
        raise TraceError(path, where, f"expected a current trace ('Curr avg N' / currN), found traces: "
                                      f"{show_names(names)}")
    ch = 2 if marker_ch == "1" else 1
    want = f"Curr avg {ch}" if any(_CSV_TRACE.match(n.strip()) for n in names) else f"curr{ch}"
    raise TraceError(path, where, f"expected the supply's current trace {want!r} (a 'Curr avg N' / currN of a "
                                  f"channel other than the marker's channel {marker_ch}), found traces: "
                                  f"{show_names(names)}")


def _channels(roles) -> list[str]:
    out = ["current"] + (["voltage"] if "voltage" in roles else []) + (["marker_analog"] if "marker" in roles else [])
    return out + [r for r in roles if "." in r]


def _fill(chunk: Chunk, roles, column):
    if "voltage" in roles:
        chunk.voltage = column(roles["voltage"])
    if "marker" in roles:
        chunk.marker_analog = column(roles["marker"])
    for role, i in roles.items():
        if "." in role:
            chunk.extra[role] = column(i)


# ------------------------------------------------------------------------------------------- CSV

def _interval(line: str) -> float | None:
    rest = line.strip().strip('"')[len("sample interval"):]
    m = _NUMBER.search(rest)
    if not m:
        return None
    value = float(m.group(0))
    unit = rest[m.end():].strip(' ,;:\t"').split(",")[0].strip().strip('"').lower()
    return value * _UNITS.get(unit, 1.0)


def _check_values(options):
    for opt in ("extra_current", "extra_voltage"):
        opt_supplies(options, opt)


MAX_PREAMBLE = 1000         # lines above the header; real exports have a dozen


def _preamble(path):
    """(sample interval s, header line number, header line, preamble lines) of an n6705-csv file."""
    interval, preamble, n = None, [], 0
    with open_text(path) as fh:
        for n in range(1, MAX_PREAMBLE + 1):
            line = read_header(path, fh, n)
            if not line:
                break
            key = clean(line.split(",")[0]).lower()
            if key == "sample":
                break
            preamble.append(line.strip())
            if key.startswith("sample interval"):
                interval = _interval(line)
                if interval is None or not (0 < interval < math.inf):
                    raise TraceError(path, f"line {n}", f"expected a sample interval in seconds, found {show(line)}")
        else:
            raise TraceError(path, f"line {n}", f"expected a header line starting 'Sample,' within the first "
                                                f"{MAX_PREAMBLE} lines, found none")
    if not line:
        raise TraceError(path, f"line {max(n - 1, 1)}",
                         "expected a header line starting 'Sample,' (Sample,Curr avg 1,Volt avg 1,…), "
                         "found end of file")
    if interval is None:
        raise TraceError(path, f"line {n}", "expected a 'Sample interval' line in the preamble "
                                            "above the header, found none")
    return interval, n, line, preamble


def open_csv(path, **options):
    path = check_file(path)
    _check_values(options)
    rows = chunk_size(options, DEFAULT_CSV_CHUNK)
    check_text(path)
    interval, header_line, header, preamble = _preamble(path)
    columns = split_header(path, header, ",", header_line)
    roles = _choose(path, f"line {header_line}", columns, options)
    info = TraceInfo(path=str(path), format=CSV_NAME, sample_period_s=interval, channels=_channels(roles),
                     notes=[f"preamble: {p}" for p in preamble if p][:12])
    return info, _csv_chunks(path, header_line, columns, roles, interval, rows)


def _csv_chunks(path, header_line, columns, roles, dt, rows):
    used = sorted(set(roles.values()) | {0})          # column 0 is `Sample`, checked to increase
    pos = {c: j for j, c in enumerate(used)}
    n_done, last = 0, None
    with open_table(path, header_line, columns, ",", rows, used) as table:
        for block in table.blocks():
            values = block.floats(used)
            last = _check_sample_index(path, block, values[:, pos[0]], last)
            column = lambda i: np.ascontiguousarray(values[:, pos[i]])
            chunk = Chunk(current=column(roles["current"]), t0=n_done * dt, dt=dt)
            chunk.line0, chunk.lines = block.chunk_lines()
            _fill(chunk, roles, column)
            table.mark_truncated(chunk, path)
            n_done += len(chunk)
            yield chunk
    if n_done == 0:
        raise TraceError(path, f"line {header_line + 1}", "expected data rows below the header, found none")


def _check_sample_index(path, block, index: np.ndarray, last):
    """The `Sample` column must increase from row to row (a repeated or out-of-order row would
    shift every later sample's time); returns its last value."""
    prev = np.concatenate([[index[0] - 1 if last is None else last], index[:-1]])
    bad = np.flatnonzero(index <= prev)
    if len(bad):
        i = int(bad[0])
        raise TraceError(path, f"line {block.line_of(i)}",
                         f"expected the Sample column to increase from row to row, found {float(index[i]):.9g} "
                         f"after {float(prev[i]):.9g} (a repeated or out-of-order row?)")
    return index[-1]


# ------------------------------------------------------------------------------------------ dlog

_END = b"</dlog>"


def read_dlog_header(path):
    """(xml root, offset of the first sample frame) of a .dlog file."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
        start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:16]
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise TraceError(path, "byte 0", "expected a .dlog XML header in UTF-8, found UTF-16 text (byte-order "
                                             f"mark {head[:2].hex(' ').upper()})")
        if not start.startswith(b"<"):
            raise TraceError(path, "byte 0", f"expected a .dlog XML header ('<?xml …' or '<dlog>'), found {start!r}")
        while _END not in head:
            more = f.read(1 << 16)
            if not more:
                raise TraceError(path, f"byte {len(head)}", "expected the end of the XML header ('</dlog>'), "
                                                            "found end of file")
            head += more
            if len(head) > (64 << 20):
                raise TraceError(path, "byte 0", "expected a .dlog XML header ('<dlog>…</dlog>'), found none "
                                                 "in the first 64 MiB")
    end = head.index(_END) + len(_END)
    if head[end:end + 2] == b"\r\n":
        end += 2
    elif head[end:end + 1] == b"\n":
        end += 1
    text = head[:end].decode("utf-8", errors="replace")
    # element names may start with a digit (<1ua>), which is not XML: prefix them
    text = re.sub(r"<(/?)(\d)", r"<\1_\2", text)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        what = re.sub(r": line \d+, column \d+$", "", str(exc.msg))
        raise TraceError(path, f"line {line}", f"expected a well-formed XML header, found: {what} "
                                               f"(column {col})") from None
    if root.tag != "dlog":
        raise TraceError(path, "line 1", f"expected the root element <dlog>, found <{root.tag}>")
    return root, end + 8


def dlog_traces(path, root):
    """(names of the traces in frame order, sample interval s, notes)."""
    channels = root.findall("channel") or root.findall(".//channel")
    if not channels:
        raise TraceError(path, None, "expected <channel> elements in the .dlog header, found none")
    frame = root.find("frame")
    tint = frame.find("tint") if frame is not None else None
    try:
        dt = float(tint.text)
    except (AttributeError, TypeError, ValueError):
        found = "none" if tint is None else repr(tint.text)
        raise TraceError(path, None, f"expected the sample interval <frame><tint>seconds</tint> in the "
                                         f".dlog header, found {found}") from None
    if not 0 < dt < math.inf:
        raise TraceError(path, None, f"expected a sample interval <tint> > 0, found {dt}")
    minmax = frame.findtext("sense_minmax", "0").strip() == "1"
    names, notes = [], [f"sample interval {dt:.9g} s (<tint>)"]
    for ch in channels:
        cid = (ch.get("id") or "").strip()
        model = ch.findtext("ident/model", "").strip()
        for kind, tag in (("volt", "sense_volt"), ("curr", "sense_curr")):
            if ch.findtext(tag, "0").strip() == "1":
                names += [f"{kind}{cid}"] + ([f"{kind}{cid}_min", f"{kind}{cid}_max"] if minmax else [])
        if ch.findtext("sense_pow", "0").strip() == "1":
            notes.append(f"channel {cid}: power logging is on; power frames are not part of the known layout")
        if model:
            notes.append(f"channel {cid}: {model}")
    if not names:
        raise TraceError(path, None, "expected at least one channel with <sense_volt>1 or <sense_curr>1, "
                                         "found none")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TraceError(path, None, f"expected every <channel id> once, found traces {', '.join(twice)} twice "
                                     "(a repeated channel id)")
    return names, dt, notes


def open_dlog(path, **options):
    path = check_file(path)
    _check_values(options)
    block = chunk_size(options, DEFAULT_DLOG_CHUNK)
    root, offset = read_dlog_header(path)
    names, dt, notes = dlog_traces(path, root)
    roles = _choose(path, None, names, options)
    frame_bytes = 4 * len(names)
    size = path.stat().st_size
    if size < offset:
        raise TraceError(path, f"byte {size}", "expected 8 bytes after the XML header, then sample frames; "
                                               "found end of file")
    n_frames, rest = divmod(size - offset, frame_bytes)
    if rest:
        raise TraceError(path, f"byte {offset + n_frames * frame_bytes}",
                         f"expected a complete frame of {frame_bytes} bytes ({len(names)} float32 traces: "
                         f"{', '.join(names)}), found {rest} bytes at the end of the file (truncated?)")
    if n_frames == 0:
        raise TraceError(path, f"byte {offset}", "expected sample frames after the header, found none")
    notes.insert(0, f"traces in each frame: {', '.join(names)}; {n_frames} frames from byte {offset}")
    info = TraceInfo(path=str(path), format=DLOG_NAME, sample_period_s=dt, channels=_channels(roles), notes=notes)
    return info, _dlog_chunks(path, offset, n_frames, names, roles, dt, block)


def _dlog_chunks(path, offset, n_frames, names, roles, dt, block):
    done, width = 0, len(names)
    buf = np.empty(min(block, max(n_frames, 1)) * width, dtype=">f4")    # reused: no per-chunk allocation
    with open(path, "rb") as f:
        f.seek(offset)
        while done < n_frames:
            k = min(block, n_frames - done)
            got = f.readinto(memoryview(buf[:k * width]).cast("B"))
            if got != k * width * 4:      # the file shrank while being read
                raise TraceError(path, f"byte {offset + done * width * 4 + got}",
                                 f"expected {k} more frames, found end of file")
            frames = buf[:k * width].reshape(k, width)
            byte0 = offset + done * width * 4

            def column(i):
                with np.errstate(invalid="ignore"):    # a signalling NaN of a spoiled file: _finite names it
                    values = frames[:, i].astype(np.float64)
                return _finite(path, values, names[i], byte0 + 4 * i, width * 4)
            chunk = Chunk(current=column(roles["current"]), t0=done * dt, dt=dt)
            chunk.byte0, chunk.sample_bytes = byte0, width * 4
            _fill(chunk, roles, column)
            done += k
            yield chunk


def _finite(path, values: np.ndarray, name: str, byte0: int, frame_bytes: int) -> np.ndarray:
    """The trace's values, every one finite (the analyzer never logs NaN or inf); else a TraceError
    at the value's byte."""
    # one pass: a NaN or inf makes the sum so, and float32 values cannot overflow a float64 sum
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(np.add.reduce(values))
    if not finite:
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise TraceError(path, f"byte {byte0 + i * frame_bytes}",
                         f"expected a finite float32 for trace {name}, found {float(values[i])}")
    return values

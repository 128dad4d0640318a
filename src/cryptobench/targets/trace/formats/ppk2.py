"""`ppk2`: Nordic Power Profiler Kit II, CSV exported by nRF Connect for Desktop's Power Profiler.

    Timestamp(ms),Current(uA),D0-D7
    0,1.234,00000000
    0.01,20000.000,10000000

The header is the subset the user ticked in the export dialog, in this order: `Timestamp(ms)`,
`Current(uA)`, `D0-D7` (the 8 digital inputs as one 8-character cell) and `D0,D1,…,D7` (one cell
each). In the `D0-D7` cell the first (leftmost) character is D0, the last D7; each character is
`0`, `1`, `X` (both levels within the sample: the app averages) or `-` (no digital data). This
follows the app's exporter (pc-nrfconnect-ppk, src/actions/exportChartAction.ts).

Options: marker_bit (0-7, default 0), chunk_samples. Times ms -> s, currents µA -> A. A `-` on the
marker bit is an error ("marker bit D3 not logged"); `X` is MARKER_X.
"""
from __future__ import annotations

import numpy as np

from ..trace import MARKER_X, Chunk, TraceError, TraceInfo
from ._common import (DEFAULT_CSV_CHUNK, TimeOrder, check_file, check_text, chunk_size, estimate_period,
                      open_text, opt_int, peek_times, read_header, show, split_header, uniform_or_times)
from ._fastcsv import open_table

NAME = "ppk2"
DESCRIPTION = "Nordic Power Profiler Kit II CSV export (Timestamp(ms),Current(uA)[,D0-D7]); marker = a digital input"
OPTIONS = {
    "marker_bit": "digital input holding the marker, 0-7 (default 0: D0)",
    "chunk_samples": f"rows per chunk (default {DEFAULT_CSV_CHUNK})",
}
KNOWN = ["Timestamp(ms)", "Current(uA)", "D0-D7"] + [f"D{i}" for i in range(8)]
_CODE = np.full(256, 255, dtype=np.uint8)       # character -> marker state (255: invalid)
_CODE[ord("0")], _CODE[ord("1")], _CODE[ord("X")], _CODE[ord("x")] = 0, 1, MARKER_X, MARKER_X
_UNLOGGED = 254
_CODE[ord("-")] = _UNLOGGED


def open_trace(path, **options):
    path = check_file(path)
    bit = opt_int(options, "marker_bit", 0, lo=0, hi=7)
    rows = chunk_size(options, DEFAULT_CSV_CHUNK)
    check_text(path)
    with open_text(path) as fh:
        header = read_header(path, fh)
    columns = split_header(path, header, ",") if header.strip() else []
    expected = "expected the PPK2 header 'Timestamp(ms),Current(uA)[,D0-D7][,D0,…,D7]'"
    if "Timestamp(ms)" not in columns or "Current(uA)" not in columns:
        raise TraceError(path, "line 1", f"{expected}, found {show(header) if header else 'an empty file'}")
    unknown = [c for c in columns if c not in KNOWN]
    if unknown or len(set(columns)) != len(columns):
        raise TraceError(path, "line 1", f"{expected}, found {show(header)} "
                                         f"(unexpected column {(unknown or columns)[0]!r})")
    t_col, i_col = columns.index("Timestamp(ms)"), columns.index("Current(uA)")
    if "D0-D7" in columns:
        marker = ("string", columns.index("D0-D7"))
    elif f"D{bit}" in columns:
        marker = ("cell", columns.index(f"D{bit}"))
    elif any(c.startswith("D") for c in columns):
        raise TraceError(path, "line 1", f"expected a column 'D0-D7' or 'D{bit}' for the marker (option "
                                         f"marker_bit={bit}), found {show(header)}")
    else:
        marker = None
    t = peek_times(path, lambda: open_text(path), 1, t_col, ",", 1e-3)
    period = estimate_period(t)
    notes = [f"sample period {period:.9g} s (from the first {len(t)} time stamps)" if period
             else "time stamps not uniform: per-sample times"]
    if marker is None:
        notes.append("no digital inputs exported: no marker")
    info = TraceInfo(path=str(path), format=NAME, sample_period_s=period,
                     channels=["current"] + (["marker"] if marker else []), notes=notes)
    return info, _chunks(path, columns, t_col, i_col, marker, bit, period, rows)


def _chunks(path, columns, t_col, i_col, marker, bit, period, rows):
    n_done, order = 0, TimeOrder(path)
    text = [marker[1]] if marker is not None else []
    with open_table(path, 1, columns, ",", rows, [t_col, i_col], text) as table:
        for block in table.blocks():
            values = block.floats([t_col, i_col])
            chunk = Chunk(current=values[:, 1] * 1e-6)
            t = values[:, 0] * 1e-3
            order.check(t, block, 1e-3)
            chunk.t0, chunk.dt, chunk.t = uniform_or_times(t, period)
            chunk.line0, chunk.lines = block.chunk_lines()
            if marker is not None:
                chunk.marker = _marker(path, block, marker, bit, columns)
            table.mark_truncated(chunk, path)
            n_done += len(chunk)
            yield chunk
    if n_done == 0:
        raise TraceError(path, "line 2", "expected data rows below the header, found none")


def _marker(path, block, marker, bit, columns) -> np.ndarray:
    kind, col = marker
    width = 8 if kind == "string" else 1
    quick = _marker_bytes(block, col, width, bit)
    if quick is not None:
        return quick
    cells = block.strings(col, width + 1)             # one spare character: a longer cell is caught
    codes = np.ascontiguousarray(cells).view(np.uint32).reshape(len(cells), width + 1)
    states = _CODE[np.minimum(codes[:, :width], 255)]
    bad = (codes[:, width] != 0) | np.any(states == 255, axis=1)
    if np.any(bad):
        i = int(np.argmax(bad))
        what = "8 characters of 0, 1, X or -" if width == 8 else "0, 1, X or -"
        raise TraceError(path, f"line {block.line_of(i)}",
                         f"expected {what} in column {columns[col]!r}, found {str(cells[i])!r}")
    m = states[:, bit if width == 8 else 0]
    unlogged = m == _UNLOGGED
    if np.any(unlogged):
        i = int(np.argmax(unlogged))
        raise TraceError(path, f"line {block.line_of(i)}",
                         f"marker bit D{bit} not logged: expected 0, 1 or X for D{bit} in column "
                         f"{columns[col]!r}, found {str(cells[i])!r} (choose marker_bit=N of a logged input)")
    return m.astype(np.uint8)


def _marker_bytes(block, col: int, width: int, bit: int):
    """The marker states straight from the cells' bytes where the block offers them (the fast CSV
    path) and every cell is `width` ASCII characters, each 0, 1, X or -, with D{bit} logged; else
    None, and _marker reads the cells as text (the same states, or its error naming the line)."""
    body = block.ascii_cells(col, width) if hasattr(block, "ascii_cells") else None
    if body is None or body.shape[1] != width:
        return None
    if _all_binary(body):                           # the usual: every character 0 or 1, no look-up needed
        return body[:, bit if width == 8 else 0] - np.uint8(ord("0"))
    states = _CODE[body]
    m = states[:, bit if width == 8 else 0]
    if np.any(states == 255) or np.any(m == _UNLOGGED):
        return None
    return np.ascontiguousarray(m)


_ONES, _ZEROS = np.uint64(0x0101010101010101), np.uint64(0x3030303030303030)


def _all_binary(body: np.ndarray) -> bool:
    """Whether every byte of the (rows, 1 or 8) ASCII cells is '0' or '1': eight at a time as one
    64-bit word, where a byte of '0' (0x30) or '1' (0x31) leaves 0x30 once its low bit is masked."""
    if body.shape[1] == 8 and body.flags.c_contiguous:
        return bool(np.all((body.view(np.uint64) & ~_ONES) == _ZEROS))
    return bool(np.all((body | np.uint8(1)) == np.uint8(ord("1"))))

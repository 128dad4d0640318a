"""`generic-csv`: any delimited text table with a header row, mapped to the trace by column names.

    time_s,current_a,voltage_v,marker
    0.000000,0.00100,3.30,0
    0.000010,0.02000,3.30,1

Options (column names as in the header, matched exactly, then case-insensitively):
  current_col (required), time_col, voltage_col, marker_col, marker_kind=digital|analog,
  current_scale (multiplier to amperes, default 1: e.g. 1e-6 for a µA column), voltage_scale,
  time_scale (multiplier to seconds, e.g. 1e-3 for ms), sample_period (s; when there is no time
  column), delimiter (default ','), extra_current=NAME:COL, extra_voltage=NAME:COL, chunk_samples.

A digital marker cell is 0 or 1 (also 0.0/1.0, L/H); anything else (X, -, empty) is MARKER_X.
An analog marker is a number per row, thresholded later by the segmenter.
"""
from __future__ import annotations

import numpy as np

from ..trace import MARKER_X, Chunk, TraceError, TraceInfo
from ._common import (DEFAULT_CSV_CHUNK, TimeOrder, check_file, check_text, chunk_size,
                      estimate_period, find_column, open_text, opt_float, opt_str, opt_supplies, peek_times,
                      read_header, split_header, uniform_or_times)
from ._fastcsv import open_table

NAME = "generic-csv"
DESCRIPTION = "any CSV with a header row; columns mapped by options (current_col=…, time_col=… or sample_period=…)"
OPTIONS = {
    "current_col": "column of the current (required)",
    "time_col": "column of the time stamps (else sample_period)",
    "voltage_col": "column of the supply voltage (V, times voltage_scale)",
    "marker_col": "column of the marker",
    "marker_kind": "digital (0/1/X, default) or analog (a voltage, thresholded by the segmenter)",
    "current_scale": "multiplier from the current column to amperes (default 1)",
    "voltage_scale": "multiplier from the voltage column to volts (default 1)",
    "time_scale": "multiplier from the time column to seconds (default 1)",
    "sample_period": "seconds between rows when there is no time column",
    "delimiter": "field delimiter (default ','; 'tab' for a tab)",
    "extra_current": "further supplies: NAME:COLUMN[,NAME:COLUMN…] -> extra['current.NAME'] (times current_scale)",
    "extra_voltage": "their voltages: NAME:COLUMN[,…] -> extra['voltage.NAME'] (times voltage_scale)",
    "chunk_samples": f"rows per chunk (default {DEFAULT_CSV_CHUNK})",
}


def _delimiter(options) -> str:
    d = opt_str(options, "delimiter", ",")
    d = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "space": " "}.get(d, d)
    if len(d) != 1:
        raise ValueError(f"option delimiter: expected one character (or 'tab'), got {d!r}")
    return d


def open_trace(path, **options):
    path = check_file(path)
    current_col = options.get("current_col")
    if current_col is None:
        raise ValueError(f"{NAME}: option current_col is required (the column of the current); "
                         f"valid options: {', '.join(OPTIONS)}")
    delimiter = _delimiter(options)
    kind = opt_str(options, "marker_kind", "digital").lower()
    if kind not in ("digital", "analog"):
        raise ValueError(f"option marker_kind: expected digital or analog, got {kind!r}")
    i_scale = opt_float(options, "current_scale", 1.0)
    v_scale = opt_float(options, "voltage_scale", 1.0)
    t_scale = opt_float(options, "time_scale", 1.0, positive=True)
    period = opt_float(options, "sample_period", None, positive=True)
    if options.get("time_col") is not None and period is not None:
        raise ValueError("options time_col and sample_period exclude each other")
    if options.get("time_col") is None and period is None:
        raise ValueError(f"{NAME}: give time_col (a column of time stamps) or sample_period (seconds per row)")
    rows = chunk_size(options, DEFAULT_CSV_CHUNK)

    check_text(path)
    with open_text(path) as fh:
        header = read_header(path, fh)
    if not header.strip():
        raise TraceError(path, "line 1", "expected a header row naming the columns, found an empty line"
                         if header else "expected a header row naming the columns, found an empty file")
    columns = split_header(path, header, delimiter)
    col = {"current": find_column(path, 1, columns, current_col, "option current_col")}
    for key, opt in (("time", "time_col"), ("voltage", "voltage_col"), ("marker", "marker_col")):
        if options.get(opt) is not None:
            col[key] = find_column(path, 1, columns, options[opt], f"option {opt}")
    extras = [("current." + n, find_column(path, 1, columns, c, "option extra_current"))
              for n, c in opt_supplies(options, "extra_current")]
    extras += [("voltage." + n, find_column(path, 1, columns, c, "option extra_voltage"))
               for n, c in opt_supplies(options, "extra_voltage")]

    notes = []
    if "time" in col:
        t = peek_times(path, lambda: open_text(path), 1, col["time"], delimiter, t_scale)
        period = estimate_period(t)
        notes.append("per-sample time stamps; sample period " +
                     (f"{period:.9g} s (from the first {len(t)} rows)" if period else "not uniform"))
    channels = ["current"] + (["voltage"] if "voltage" in col else [])
    if "marker" in col:
        channels.append("marker" if kind == "digital" else "marker_analog")
    channels += [name for name, _ in extras]
    info = TraceInfo(path=str(path), format=NAME, sample_period_s=period, channels=channels, notes=notes)
    return info, _chunks(path, info, columns, col, extras, delimiter, kind, i_scale, v_scale, t_scale,
                         period, rows)


def _scaled(column: np.ndarray, scale: float) -> np.ndarray:
    """column * scale, contiguous; a scale of 1 (the default) leaves the values as they are
    (x * 1.0 == x exactly), no copy where the column is already contiguous (the fast path's)."""
    return np.ascontiguousarray(column) if scale == 1.0 else column * scale


def _chunks(path, info, columns, col, extras, delimiter, kind, i_scale, v_scale, t_scale, period, rows):
    numeric = [col["current"]] + [col[k] for k in ("time", "voltage") if k in col] + [c for _, c in extras]
    if "marker" in col and kind == "analog":
        numeric.append(col["marker"])
    numeric = sorted(set(numeric))
    pos = {c: j for j, c in enumerate(numeric)}
    n_done, x_count, order = 0, 0, TimeOrder(path)
    text = [col["marker"]] if "marker" in col and kind == "digital" else []
    with open_table(path, 1, columns, delimiter, rows, numeric, text) as table:
        for block in table.blocks():
            values = block.floats(numeric)
            chunk = Chunk(current=_scaled(values[:, pos[col["current"]]], i_scale))
            chunk.line0, chunk.lines = block.chunk_lines()
            if "time" in col:
                t = values[:, pos[col["time"]]] * t_scale
                order.check(t, block, t_scale)
                chunk.t0, chunk.dt, chunk.t = uniform_or_times(t, period)
            else:
                chunk.t0, chunk.dt = n_done * period, period
            if "voltage" in col:
                chunk.voltage = _scaled(values[:, pos[col["voltage"]]], v_scale)
            if "marker" in col:
                if kind == "analog":
                    chunk.marker_analog = values[:, pos[col["marker"]]]
                else:
                    chunk.marker = block.digital(col["marker"])
                    x_count += int(np.count_nonzero(chunk.marker == MARKER_X))
            for name, c in extras:
                chunk.extra[name] = values[:, pos[c]] * (i_scale if name.startswith("current.") else v_scale)
            table.mark_truncated(chunk, path)
            n_done += len(chunk)
            yield chunk
    if n_done == 0:
        raise TraceError(path, "line 2", "expected data rows below the header, found none")
    if x_count:
        info.notes.append(f"{x_count} marker cells were neither 0 nor 1 (read as X)")


def write_rows(fh, cells: list[np.ndarray], delimiter: str = ",") -> None:
    """Rows of already formatted columns (arrays of str, one per column), joined through numpy's string ops
    (no per-row Python): the one writer of generic-csv rows, for synthetic traces (synth.write_generic_csv)
    and live captures (live_n6705.write_capture_csv)."""
    rows = cells[0]
    for column in cells[1:]:
        rows = np.char.add(np.char.add(rows, delimiter), column)
    fh.write("\n".join(rows.tolist()) + "\n")

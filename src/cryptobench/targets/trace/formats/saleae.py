"""`saleae`: a Saleae Logic 2 digital CSV export (the marker) joined by time with a current trace
recorded by another instrument (any other format of this package).

Logic 2 "Export Raw Data" → CSV, digital channels:

    Time [s],Channel 0,Channel 1
    0.000000000,0,1
    0.001000000,1,1
    0.002000000,0,1

One row per time at which any exported channel changes; the first row is the state at the start of
the capture. Cells are 0, 1 or X (no data: channel off or a gap in the capture); channel columns
carry the names given in Logic 2 (`Channel 0` … by default).

For every sample of the current trace, the marker is the state of the last row at or before the
sample's time (after adding `time_offset`; "at" within 0.1 % of a sample period, as printed time
stamps are rounded); samples before the first row are MARKER_X. Both
recordings must share a time zero (e.g. both armed by the same trigger); `time_offset` (s) is added
to the current trace's times to express them on the Logic 2 time axis.

Options: current_file (required), current_format (default generic-csv), marker_channel (default
`Channel 0`; `0` means `Channel 0`), time_offset (s, default 0), chunk_samples, and any option of the
current trace's reader prefixed `current.` (e.g. `current.current_col=I`).
The transitions are kept in memory (one row per edge); the current trace is streamed.
"""
from __future__ import annotations

import numpy as np

from ..trace import MARKER_X, TraceError, TraceInfo
from ._common import (CsvTable, check_file, check_text, digital_cells, find_column, open_text, opt_float,
                      opt_str, read_header, show, split_header)

NAME = "saleae"
DESCRIPTION = "Saleae Logic 2 digital CSV (the marker) joined by time with a current trace (current_file=…, current_format=…)"
OPTIONS = {
    "current_file": "the current trace to join (required)",
    "current_format": "its format (default generic-csv)",
    "marker_channel": "the digital channel holding the marker (default 'Channel 0'; 0 means 'Channel 0')",
    "time_offset": "seconds added to the current trace's times to put them on the Logic 2 time axis (default 0)",
    "chunk_samples": "samples per chunk, passed to the current trace's reader",
    "current.*": "any option of the current trace's reader, e.g. current.current_col=I",
}
PREFIX = "current."


def read_transitions(path, channel) -> tuple[np.ndarray, np.ndarray, str]:
    """(times s, states 0/1/MARKER_X, channel name) of a Logic 2 digital CSV export."""
    check_text(path)
    with open_text(path) as fh:
        header = read_header(path, fh)
        columns = split_header(path, header, ",") if header.strip() else []
        if not columns or not columns[0].lower().startswith("time"):
            raise TraceError(path, "line 1", "expected a Logic 2 digital CSV header 'Time [s],Channel 0,…', "
                                             f"found {show(header) if header else 'an empty file'}")
        name = f"Channel {channel}" if str(channel).strip().isdigit() else str(channel)
        col = find_column(path, 1, columns, name, "option marker_channel")
        if col == 0:
            raise TraceError(path, "line 1", f"expected a channel column for the marker, found the time column {name!r}")
        times, states, lines = [], [], []
        for block in CsvTable(path, fh, 1, columns, ",", 1 << 18).blocks():
            times.append(block.floats([0])[:, 0])
            states.append(digital_cells(block.strings(col)))
            lines.append([block.line_of(i) for i in range(len(block))])
    if not times:
        raise TraceError(path, "line 2", "expected at least one row (the initial state), found none")
    t, s = np.concatenate(times), np.concatenate(states)
    # Logic 2 writes one row per time at which a channel changes: a repeated time stamp would hide
    # the change between the two rows (a window vanishes, or two merge)
    back = np.flatnonzero(np.diff(t) <= 0)
    if len(back):
        i = int(back[0]) + 1
        line = [x for part in lines for x in part][i]
        found = (f"found {float(t[i]):.9g} twice in a row (one row per change is expected)" if t[i] == t[i - 1]
                 else f"found {float(t[i]):.9g} after {float(t[i - 1]):.9g}")
        raise TraceError(path, f"line {line}", f"expected time stamps in increasing order, {found}")
    return t, s, columns[col]


def open_trace(path, open_any, **options):
    """The Logic 2 export joined with the current trace, which `open_any` (formats.open_trace) opens."""
    path = check_file(path)
    current_file = options.get("current_file")
    if current_file is None:
        raise ValueError(f"{NAME}: option current_file is required (the current trace to join with the "
                         f"Logic 2 export); valid options: {', '.join(OPTIONS)}")
    current_format = opt_str(options, "current_format", "generic-csv")
    if current_format == NAME:
        raise ValueError("option current_format: the current trace cannot itself be a saleae join")
    offset = opt_float(options, "time_offset", 0.0)
    sub = {k[len(PREFIX):]: v for k, v in options.items() if k.startswith(PREFIX)}
    if "chunk_samples" in options:
        sub.setdefault("chunk_samples", options["chunk_samples"])
    t_edges, s_edges, channel = read_transitions(path, options.get("marker_channel", "Channel 0"))
    cinfo, cchunks = open_any(current_file, current_format, **sub)
    notes = [f"marker: {channel} of {path} ({len(t_edges)} rows, {t_edges[0]:.9g} s to {t_edges[-1]:.9g} s)",
             f"current: {cinfo.path} ({cinfo.format})" + (f", time offset {offset:g} s" if offset else "")]
    notes += [f"current trace: {n}" for n in cinfo.notes]
    channels = [c for c in cinfo.channels if c not in ("marker", "marker_analog")] + ["marker"]
    info = TraceInfo(path=str(path), format=NAME, sample_period_s=cinfo.sample_period_s, channels=channels,
                     nominal_voltage=cinfo.nominal_voltage, notes=notes)
    return info, _chunks(info, cinfo, cchunks, t_edges, s_edges, offset)


def _chunks(info, cinfo, cchunks, t_edges, s_edges, offset):
    before = after = 0
    n_notes = len(cinfo.notes)
    for chunk in cchunks:
        t = chunk.times() + offset
        # "at or before" within 0.1 % of a sample period: a uniform chunk's times t0 + i*dt are not
        # bit-identical to the time stamps printed in the files
        eps = 1e-3 * (chunk.dt if chunk.dt else (float(np.median(np.diff(t))) if len(t) > 1 else 0.0))
        k = np.searchsorted(t_edges, t + eps, side="right") - 1
        marker = s_edges[np.maximum(k, 0)].astype(np.uint8)
        marker[k < 0] = MARKER_X
        before += int(np.count_nonzero(k < 0))
        after += int(np.count_nonzero(t > t_edges[-1]))
        chunk.marker, chunk.marker_analog = marker, None
        # locations in the current trace's file would be misread as lines of the Logic 2 export:
        # leave Chunk.where() to name the time instead, and errors about the samples name the
        # current trace's file (Chunk.source)
        chunk.line0 = chunk.lines = chunk.byte0 = chunk.sample_bytes = None
        chunk.source = chunk.source or cinfo.path
        yield chunk
    info.notes += [f"current trace: {n}" for n in cinfo.notes[n_notes:]]
    if before:
        info.notes.append(f"{before} current samples lie before the Logic 2 export's first row: marker X")
    if after:
        info.notes.append(f"{after} current samples lie after the Logic 2 export's last row (marker holds its "
                          "last state)")

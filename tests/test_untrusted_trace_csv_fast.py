"""The CSV readers' fast path (pyarrow's parser, targets/trace/formats/_fastcsv.py) gives exactly what the
line-by-line reader gives: the same samples, line numbers, notes and warnings for good files, and the
same file:line error for every spoilt one, wherever in a block the spoilt line falls."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptobench.targets.trace.formats import _fastcsv, open_trace
from cryptobench.targets.trace.trace import TraceError

pytest.importorskip("pyarrow")

GENERIC = {"current_col": "current_a", "voltage_col": "voltage_v", "time_col": "time_s", "marker_col": "marker"}


def _generic(n=200) -> list[str]:
    rows = ["time_s,current_a,voltage_v,marker"]
    rows += [f"{i * 1e-5:.6f},{0.001 + 0.02 * ((i // 10) % 2):.6g},3.3,{(i // 10) % 2}" for i in range(n)]
    return rows


def _ppk2(n=200) -> list[str]:
    return ["Timestamp(ms),Current(uA),D0-D7"] + [f"{i * 0.01:.3f},{1000 + 20000 * ((i // 10) % 2):.3f},"
                                                  f"{(i // 10) % 2}0000000" for i in range(n)]


def _n6705(n=200) -> list[str]:
    return ["Keysight 14585A", "Sample interval,1e-05", "", "Sample,Curr avg 1,Volt avg 1,Volt avg 2"] + \
        [f"{i},{0.001 + 0.02 * ((i // 10) % 2):.6g},3.3,{3.3 * ((i // 10) % 2):.2f}" for i in range(n)]


FORMATS = {"generic-csv": (_generic, GENERIC, 1), "ppk2": (_ppk2, {}, 1),
           "n6705-csv": (_n6705, {"marker_column": "Volt avg 2"}, 4)}


def _read(path, fmt, opts, *, fast: bool, monkeypatch):
    """(what the reader yields, or its error) with or without the fast path."""
    monkeypatch.setattr(_fastcsv, "pa", _fastcsv.pa if fast else None)
    try:
        info, chunks = open_trace(path, fmt, chunk_samples=37, **opts)
        out = []
        for c in chunks:
            out.append((c.current.tolist(), None if c.marker is None else c.marker.tolist(),
                        None if c.marker_analog is None else c.marker_analog.tolist(),
                        None if c.t is None else c.t.tolist(), c.t0, c.dt, c.line0,
                        None if c.lines is None else c.lines.tolist(), list(c.warnings)))
        return "ok", out, list(info.notes)
    except TraceError as exc:
        return "error", str(exc)


def _same(tmp_path, monkeypatch, fmt, lines, name="t.csv", ending="\n", tail="\n"):
    path = tmp_path / name
    path.write_bytes((ending.join(lines) + tail).encode("utf-8", errors="surrogateescape"))
    _, opts, _ = FORMATS[fmt]
    slow = _read(path, fmt, opts, fast=False, monkeypatch=monkeypatch)
    fast = _read(path, fmt, opts, fast=True, monkeypatch=monkeypatch)
    assert fast == slow
    return fast


SPOILS = {
    "nan": lambda cells: [cells[0], "nan"] + cells[2:],
    "inf": lambda cells: [cells[0], "-inf"] + cells[2:],
    "1e400": lambda cells: [cells[0], "1e400"] + cells[2:],
    "bad cell": lambda cells: [cells[0], "abc"] + cells[2:],
    "empty cell": lambda cells: [cells[0], ""] + cells[2:],
    "quoted": lambda cells: [cells[0], f'"{cells[1]}"'] + cells[2:],
    "blank padded": lambda cells: [cells[0], f" {cells[1]} "] + cells[2:],
    "too many": lambda cells: cells + ["1"],
    "too few": lambda cells: cells[:-1],
    "hex": lambda cells: [cells[0], "0x10"] + cells[2:],
    "bom": lambda cells: ["\ufeff" + cells[0]] + cells[1:],
    "null": lambda cells: [cells[0], "NULL"] + cells[2:],
    "marker X": lambda cells: cells[:-1] + ["X"],
    "marker H": lambda cells: cells[:-1] + ["H"],
    "marker long": lambda cells: cells[:-1] + ["1" * 20],
    "latin1": lambda cells: cells[:-1] + ["\udcb5"],
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("spoil", SPOILS)
@pytest.mark.parametrize("at", [0, 36, 37, 73, 150, 199])
def test_a_spoilt_row_reads_the_same(tmp_path, monkeypatch, fmt, spoil, at):
    make, _, header_lines = FORMATS[fmt]
    lines = make()
    i = header_lines + at
    lines[i] = ",".join(SPOILS[spoil](lines[i].split(",")))
    _same(tmp_path, monkeypatch, fmt, lines)


@pytest.mark.parametrize("spoil", [None, "nan", "bad cell", "too many", "blank padded", "empty lines"])
@pytest.mark.parametrize("at", [0, 36, 37, 199])
def test_a_tab_delimited_file_reads_the_same(tmp_path, monkeypatch, spoil, at):
    lines = [line.replace(",", "\t") for line in _generic()]
    if spoil == "empty lines":
        lines.insert(1 + at, "")
    elif spoil:
        lines[1 + at] = "\t".join(SPOILS[spoil](lines[1 + at].split("\t")))
    path = tmp_path / "t.tsv"
    path.write_text("\n".join(lines) + "\n")
    opts = dict(GENERIC, delimiter="tab")
    fast = _read(path, "generic-csv", opts, fast=True, monkeypatch=monkeypatch)
    assert fast == _read(path, "generic-csv", opts, fast=False, monkeypatch=monkeypatch)
    assert (fast[0] == "ok") == (spoil in (None, "blank padded", "empty lines"))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("layout", ["plain", "crlf", "lone cr", "no final newline", "empty lines", "blank line",
                                    "two spoilt"])
def test_line_ends_and_empty_lines_read_the_same(tmp_path, monkeypatch, fmt, layout):
    make, _, header_lines = FORMATS[fmt]
    lines = make()
    ending, tail = "\n", "\n"
    if layout == "crlf":
        ending = tail = "\r\n"
    elif layout == "lone cr":
        lines[header_lines + 100] += "\r" + lines[header_lines + 101]
        del lines[header_lines + 101]
    elif layout == "no final newline":
        tail = ""
    elif layout == "empty lines":
        for k in (150, 74, 37, 10):
            lines.insert(header_lines + k, "")
    elif layout == "blank line":
        lines.insert(header_lines + 50, "   ")
    elif layout == "two spoilt":             # a field count error after a bad number in one block
        lines[header_lines + 40] = lines[header_lines + 40].replace(",", ",abc", 1)
        lines[header_lines + 60] += ",9"
    result = _same(tmp_path, monkeypatch, fmt, lines, ending=ending, tail=tail)
    if layout in ("plain", "crlf", "no final newline"):
        assert result[0] == "ok"


def test_the_fast_path_reads_plain_blocks(tmp_path, monkeypatch):
    """A plain file goes through pyarrow (FastBlock), not the line reader."""
    path = tmp_path / "t.csv"
    path.write_text("\n".join(_generic(500)) + "\n")
    seen = []
    real = _fastcsv.FastCsvTable._parse
    monkeypatch.setattr(_fastcsv.FastCsvTable, "_parse",
                        lambda self, *a: seen.append(real(self, *a)) or seen[-1])
    info, chunks = open_trace(path, "generic-csv", chunk_samples=64, **GENERIC)
    got = np.concatenate([c.current for c in chunks])
    assert len(got) == 500 and len(seen) == 8 and all(t is not None for t in seen)     # pyarrow's tables


CORPUS = Path(__file__).parent / "hostile" / "traces"
CORPUS_OPTIONS = {"generic-csv": GENERIC, "ppk2": {}, "n6705-csv": {"marker_column": "Volt avg 2"}}


@pytest.mark.parametrize("case", sorted(f"{fmt}/{p.name}" for fmt in CORPUS_OPTIONS
                                        for p in (CORPUS / fmt).iterdir()))
def test_the_hostile_corpus_reads_the_same(monkeypatch, case):
    fmt = case.split("/")[0]
    path = CORPUS / case

    def read(fast):
        monkeypatch.setattr(_fastcsv, "pa", _fastcsv.pa if fast else None)
        try:
            info, chunks = open_trace(path, fmt, **CORPUS_OPTIONS[fmt])
            return [(c.current.tolist(), c.line0, c.warnings) for c in chunks], info.notes
        except TraceError as exc:
            return str(exc)
    assert read(True) == read(False)


@pytest.mark.parametrize("delimiter", [";", "|", "µ", " "])
def test_other_delimiters_read_the_same(tmp_path, monkeypatch, delimiter):
    lines = [line.replace(",", delimiter) for line in _generic()]
    lines[40] = lines[40].replace(delimiter, delimiter + "abc", 1)
    path = tmp_path / "t.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    opts = dict(GENERIC, delimiter=delimiter)
    fast = _read(path, "generic-csv", opts, fast=True, monkeypatch=monkeypatch)
    assert fast == _read(path, "generic-csv", opts, fast=False, monkeypatch=monkeypatch)
    assert fast[0] == "error" and ":line 41:" in fast[1]

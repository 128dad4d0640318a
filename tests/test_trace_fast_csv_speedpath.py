"""The speed path of the CSV fast reader (targets/trace/formats/_fastcsv.py): pyarrow parses the next block
in a worker thread while the caller works on this one, reads go straight into fresh buffers, the
field count is left to pyarrow, text columns come as bytes and ppk2's marker is read from them.
None of it may change what a reader yields or which file:line error it raises."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from cryptobench.targets.trace.formats import _fastcsv, open_trace
from cryptobench.targets.trace.trace import TraceError
from test_untrusted_trace_csv_fast import FORMATS, GENERIC, _generic, _ppk2, _read

pytest.importorskip("pyarrow")


def _both(tmp_path, monkeypatch, fmt, lines, tail="\n"):
    path = tmp_path / f"{fmt}.csv"
    path.write_bytes(("\n".join(lines) + tail).encode("utf-8", errors="surrogateescape"))
    _, opts, _ = FORMATS[fmt]
    fast = _read(path, fmt, opts, fast=True, monkeypatch=monkeypatch)
    assert fast == _read(path, fmt, opts, fast=False, monkeypatch=monkeypatch)
    return fast


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_truncation_warning_is_on_the_last_chunk_only(tmp_path, monkeypatch, fmt):
    """The last block's bytes are read (and parsed ahead) while the one before is still with the
    caller: the warning of a missing final line end must still go on the last chunk alone."""
    make, _, _ = FORMATS[fmt]
    got = _both(tmp_path, monkeypatch, fmt, make(300), tail="")
    assert got[0] == "ok" and len(got[1]) > 2
    warned = [i for i, chunk in enumerate(got[1]) if chunk[-1]]
    assert warned == [len(got[1]) - 1]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("spoil", ["extra field", "missing field", "empty line", "trailing delimiter"])
@pytest.mark.parametrize("where", [0, 36, 37, 150, -1])
def test_field_counts_are_judged_as_the_line_reader_does(tmp_path, monkeypatch, fmt, spoil, where):
    """No byte count of delimiters any more: pyarrow refuses a row of the wrong width (an empty line
    among them) and the line reader judges the block, skipping empty lines or naming the line."""
    make, _, header_lines = FORMATS[fmt]
    lines = make(200)
    i = header_lines + (where % 200)
    lines[i] = {"extra field": lines[i] + ",1", "missing field": lines[i].rsplit(",", 1)[0],
                "empty line": "", "trailing delimiter": lines[i] + ","}[spoil]
    got = _both(tmp_path, monkeypatch, fmt, lines)
    if spoil != "empty line":
        assert got[0] == "error" and f":line {i + 1}:" in got[1]


def test_a_single_column_file_with_an_empty_line(tmp_path, monkeypatch):
    """One column: an empty line is no wrong field count to pyarrow but an empty number, refused."""
    path = tmp_path / "one.csv"
    rows = ["current_a"] + [f"{0.001 * (1 + i % 3):.3f}" for i in range(100)]
    rows[50] = ""
    path.write_text("\n".join(rows) + "\n")
    opts = {"current_col": "current_a", "sample_period": 1e-5}
    fast = _read(path, "generic-csv", opts, fast=True, monkeypatch=monkeypatch)
    assert fast == _read(path, "generic-csv", opts, fast=False, monkeypatch=monkeypatch)
    assert fast[0] == "ok" and sum(len(c[0]) for c in fast[1]) == 99


@pytest.mark.parametrize("cell,ok", [("10000000", True), ("0-0X0000", True), ("X0000000", True),
                                     ("-0000000", False), ("1000000", False), ("100000000", False),
                                     ("1000Z000", False), ("1000µ00", False)])
def test_ppk2_markers_from_bytes_match_the_text_reading(tmp_path, monkeypatch, cell, ok):
    """ppk2's marker read from the cells' bytes gives the states, or the error, the text path gives
    (D0 is the bit read: '-' there is an unlogged bit, elsewhere it is allowed)."""
    lines = _ppk2(200)
    head, rest = lines[120].rsplit(",", 1)
    lines[120] = f"{head},{cell}"
    got = _both(tmp_path, monkeypatch, "ppk2", lines)
    assert (got[0] == "ok") == ok
    if not ok:
        assert ":line 121:" in got[1]


def test_non_ascii_text_cells_go_to_the_line_reader(tmp_path, monkeypatch):
    """Text columns come from pyarrow as bytes (no UTF-8 check): a marker cell that is not plain
    ASCII, or not UTF-8 at all, is read by the line reader, as before."""
    lines = _generic(5000)
    lines[30] = lines[30].rsplit(",", 1)[0] + ",µ"
    lines[4000] = lines[4000].rsplit(",", 1)[0] + ",\udcff"    # a lone 0xFF byte, past the 64 KiB check_text reads
    got = _both(tmp_path, monkeypatch, "generic-csv", lines)
    assert got[0] == "ok" and "marker cells were neither 0 nor 1" in " ".join(got[2])


def test_blocks_across_many_small_reads(tmp_path, monkeypatch):
    """Reads smaller than a block: each new buffer starts with the unfinished block's bytes."""
    monkeypatch.setattr(_fastcsv, "READ_BYTES", 97)
    lines = _generic(1000)
    lines[777] = lines[777].replace(",3.3,", ",3.3x,")
    got = _both(tmp_path, monkeypatch, "generic-csv", lines)
    assert got[0] == "error" and ":line 778:" in got[1]
    good = _both(tmp_path, monkeypatch, "generic-csv", _generic(1000))
    assert good[0] == "ok" and sum(len(c[0]) for c in good[1]) == 1000


def test_an_error_after_good_blocks_comes_after_them(tmp_path, monkeypatch):
    """The block after the current one is parsed ahead, but its error waits its turn: every chunk
    before the bad block reaches the caller first."""
    lines = _generic(400)
    lines[301] = lines[301].replace(",3.3,", ",abc,")
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    seen = []
    info, chunks = open_trace(path, "generic-csv", chunk_samples=100, **GENERIC)
    with pytest.raises(TraceError, match=":line 302:"):
        for c in chunks:
            seen.append(len(c))
    assert seen == [100, 100, 100]


def test_leaving_early_stops_the_worker(tmp_path):
    """A caller that stops after the first chunk (an error of its own) leaves no thread behind."""
    path = tmp_path / "t.csv"
    path.write_text("\n".join(_generic(2000)) + "\n")
    before = threading.active_count()
    info, chunks = open_trace(path, "generic-csv", chunk_samples=100, **GENERIC)
    first = next(chunks)
    assert len(first) == 100 and threading.active_count() <= before + 1
    chunks.close()
    assert threading.active_count() == before


def test_float_columns_are_contiguous(tmp_path):
    """FastBlock.floats gives each column as one contiguous run (no strided copies downstream)."""
    path = tmp_path / "t.csv"
    path.write_text("\n".join(_generic(300)) + "\n")
    with _fastcsv.open_table(path, 1, ["time_s", "current_a", "voltage_v", "marker"], ",", 128,
                             [0, 1, 2], [3]) as table:
        blocks = list(table.blocks())
        values = [b.floats([0, 1, 2]) for b in blocks]
    assert all(isinstance(b, _fastcsv.FastBlock) for b in blocks)
    assert [v.shape for v in values] == [(128, 3), (128, 3), (44, 3)]
    assert all(v[:, j].flags.c_contiguous for v in values for j in range(3))
    assert np.allclose(np.concatenate([v[:, 2] for v in values]), 3.3)

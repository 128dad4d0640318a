"""Outputs are checked before any work and never replace an input or the database; files are
written whole or not at all."""
import os

import pytest

from cryptobench.core.errors import UsageError
from cryptobench.core.files import check_output, read_utf8, write_atomic


def test_an_output_never_replaces_an_input_or_the_database(tmp_path):
    db, trace = tmp_path / "results.sqlite", tmp_path / "t.csv"
    db.write_bytes(b"db")
    trace.write_text("t,v\n")
    for out in (db, trace, tmp_path / "sub" / ".." / "t.csv"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(UsageError, match="an output never replaces"):
            check_output(out, "--json", force=True, protected=((db, "the results database"), (trace, "the trace")))
    os.link(db, tmp_path / "hard.sqlite")                     # another name of the same file
    with pytest.raises(UsageError, match="the results database"):
        check_output(tmp_path / "hard.sqlite", "--out", force=True, protected=((db, "the results database"),))
    assert db.read_bytes() == b"db" and trace.read_text() == "t,v\n"


def test_an_existing_output_is_replaced_only_with_force(tmp_path):
    out = tmp_path / "r.json"
    assert check_output(out, "--json") == out                 # new: fine
    out.write_text("old")
    with pytest.raises(UsageError, match="exists; give --force"):
        check_output(out, "--json")
    assert check_output(out, "--json", force=True) == out
    write_atomic(out, "new", "--json")
    assert out.read_text() == "new"


def test_unwritable_places_are_refused_up_front(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        check_output(tmp_path / "nope" / "r.json", "--json")
    with pytest.raises(UsageError, match="is a directory"):
        check_output(tmp_path, "--out")
    with pytest.raises(UsageError, match="cannot write in"):
        check_output("/proc/r.json", "--json")                # a place nobody can create files in


def test_read_utf8_names_the_line_of_a_bad_byte(tmp_path):
    f = tmp_path / "s.toml"
    f.write_bytes(b"a = 1\nb = \"\xff\"\n")
    with pytest.raises(UsageError, match=r"s\.toml:2: not UTF-8 text \(byte 0xff\)"):
        read_utf8(f)

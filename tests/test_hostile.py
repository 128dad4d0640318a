"""The hostile-input corpus (tests/hostile/README.md): every file gets a one-line error naming the
file, the line and what was expected, and no input file is ever written; and property tests
(Hypothesis) over the trace readers."""
import contextlib
import functools
import hashlib
import io
import os
import re
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cryptobench.core.errors import UsageError
from cryptobench.runner.suites import load_suite

CORPUS = Path(__file__).parent / "hostile"


def _cases(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).iterdir())


def _expected(path: Path) -> tuple[str, str]:
    first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace").lstrip("\ufeff")
    m = re.match(r"#\s*expect:\s*(\d*):\s*(.*)$", first)
    assert m, f"{path}: first line must be '# expect: LINE: FRAGMENT'"
    return m.group(1), m.group(2).strip()


def _check(path: Path, load) -> None:
    line, fragment = _expected(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(UsageError) as err:
        load(path)
    message = str(err.value)
    assert "\n" not in message, message
    assert str(path) + (f":{line}:" if line else "") in message, message
    assert fragment in message, message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("path", _cases("suites"), ids=lambda p: p.name)
def test_hostile_suites(path):
    _check(path, lambda p: load_suite(str(p)))


@pytest.mark.parametrize("path", _cases("recipes"), ids=lambda p: p.name)
def test_hostile_recipes(path):
    from cryptobench.targets.mcu.firmware.recipes import load_recipe
    _check(path, lambda p: load_recipe(str(p)))


@pytest.mark.parametrize("path", _cases("references"), ids=lambda p: p.name)
def test_hostile_references(path):
    from cryptobench.references import load_reference
    _check(path, load_reference)


@pytest.mark.e2e
def test_run_text_never_reaches_the_terminal_as_control_characters(tmp_path):
    """A label (or a file name, a firmware's output) with escape sequences is printed with the
    control characters shown, in every format; JSON keeps the exact text, escaped by JSON."""
    import json
    from conftest import cli
    db = tmp_path / "r.sqlite"
    label = "X\x1b]0;pwned\x07Y\x9b31m[/]"
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2", "--label", label, "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    for fmt in ("table", "md", "csv"):
        out = cli("show", "latest", "--format", fmt, "--db", str(db)).stdout
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, fmt
        assert fmt == "csv" or "X\\x1b]0;pwned\\x07Y\\x9b31m" in out, fmt     # (show's CSV has no label)
    doc = json.loads(cli("show", "latest", "--format", "json", "--db", str(db)).stdout)
    assert doc["run"]["label"] == label
    err = cli("show", "1", "--db", str(tmp_path / "bad\x1b[2J.sqlite")).stderr
    assert "\x1b" not in err and "bad\\x1b[2J.sqlite" in err


# ------------------------------------------------------------------------------------- traces
# tests/hostile/traces/FORMAT/: hostile power-analyzer traces (written by tests/hostile/make_traces.py).
# Each is imported with `cryptobench energy import` (in-process): exit code 2 and one line on stderr
# naming the file and the place (`PATH:line N:`, `PATH:byte N:`, or `PATH:` where there is none or a
# time), with the fragment; the input's bytes and mtime unchanged. n6705-csv files carry their
# expectation on their first line (`# expect: LINE: FRAGMENT`, the format's preamble allows it);
# every other case is in TRACE_TABLE as FORMAT/FILE: (WHERE, FRAGMENT). Logic 2 cases: a `dig-` file
# is the digital export, read with saleae/current.csv; a `cur-` file is the current trace, read with
# saleae/digital.csv; the error names the case's file.

TRACES = CORPUS / "traces"

# format: (reader options, further flags of `energy import`)
TRACE_FORMATS = {
    "generic-csv": ({"current_col": "current_a", "voltage_col": "voltage_v", "time_col": "time_s",
                     "marker_col": "marker"}, []),
    "ppk2": ({}, ["--voltage", "3.3"]),
    "n6705-csv": ({"marker_column": "Volt avg 2"}, ["--threshold", "1.65"]),
    "n6705-dlog": ({"marker_column": "volt2"}, ["--threshold", "1.65"]),
    "saleae": ({"current.current_col": "current_a", "current.voltage_col": "voltage_v",
                "current.time_col": "time_s"}, []),
    "jls": ({}, []),
}
TRACE_PARTNERS = {"saleae/digital.csv", "saleae/current.csv"}     # the valid halves of the Logic 2 pairs

_FINITE = "expected a finite number in column"
_NEGATIVE = "expected a positive energy in every window, found -2.64e-06 J in window 1: its current is below zero"
_TEXT = "expected a text file, found a NUL byte"
_UTF16 = "expected a text file in UTF-8, found UTF-16"
TRACE_TABLE = {
    "generic-csv/binary-garbage.csv": ("byte 8", _TEXT),
    "generic-csv/crlf-bad-cell.csv": ("line 7", "expected a number in column 'current_a', found 'abc'"),
    "generic-csv/duplicate-row.csv": ("line 13", "expected time stamps in increasing order, found 0.0001 twice"),
    "generic-csv/empty.csv": ("line 1", "expected a header row naming the columns, found an empty file"),
    "generic-csv/garbage-text.csv": ("byte 0", "expected a text file in UTF-8, found byte 0x80"),
    "generic-csv/header-only.csv": ("line 2", "expected data rows below the header, found none"),
    "generic-csv/huge-current.csv": ("line 16", "expected a current within ±1e+06 A, found 1e+308"),
    "generic-csv/huge-numbers.csv": ("line 16", f"{_FINITE} 'current_a', found '1e400'"),
    "generic-csv/inf-current-last-row.csv": ("line 29", f"{_FINITE} 'current_a', found 'inf'"),
    "generic-csv/latin1.csv": ("byte 15", "expected a text file in UTF-8, found byte 0xB5"),
    "generic-csv/nan-time.csv": ("line 10", f"{_FINITE} 'time_s', found 'nan'"),
    "generic-csv/nan-voltage.csv": ("line 15", f"{_FINITE} 'voltage_v', found 'nan'"),
    "generic-csv/negative-current.csv": ("line 14", _NEGATIVE),
    "generic-csv/no-edges.csv": ("line 2…end", "expected marker edges (rising then falling), found none"),
    "generic-csv/odd-edges.csv": ("line 22", "an odd number of edges); use --partial drop"),
    "generic-csv/shuffled-rows.csv": ("line 15", "expected time stamps in increasing order, found 0.00012 after "
                                                 "0.00013"),
    "generic-csv/truncated-mid-row.csv": ("line 20", "expected 4 fields"),
    "generic-csv/utf16.csv": ("byte 0", _UTF16),
    "generic-csv/wrong-delimiter.csv": ("line 1", "expected a column 'current_a' (option current_col)"),
    "generic-csv/zero-current.csv": ("line 14", "expected a positive energy in every window, found 0 J"),
    "ppk2/binary-garbage.csv": ("byte 8", _TEXT),
    "ppk2/crlf-bad-cell.csv": ("line 7", "expected a number in column 'Current(uA)', found 'abc'"),
    "ppk2/duplicate-row.csv": ("line 13", "expected time stamps in increasing order, found 0.1 twice"),
    "ppk2/empty.csv": ("line 1", "expected the PPK2 header 'Timestamp(ms),Current(uA)"),
    "ppk2/header-only.csv": ("line 2", "expected data rows below the header, found none"),
    "ppk2/huge-numbers.csv": ("line 16", f"{_FINITE} 'Current(uA)', found '1e400'"),
    "ppk2/inf-current-last-row.csv": ("line 29", f"{_FINITE} 'Current(uA)', found 'inf'"),
    "ppk2/marker-not-logged.csv": ("line 9", "marker bit D0 not logged"),
    "ppk2/nan-time.csv": ("line 10", f"{_FINITE} 'Timestamp(ms)', found 'nan'"),
    "ppk2/negative-current.csv": ("line 14", _NEGATIVE),
    "ppk2/shuffled-rows.csv": ("line 15", "expected time stamps in increasing order, found 0.12 after 0.13"),
    "ppk2/truncated-mid-row.csv": ("line 20", "expected 3 fields"),
    "ppk2/utf16.csv": ("byte 0", _UTF16),
    "ppk2/wrong-delimiter.csv": ("line 1", "expected the PPK2 header"),
    "n6705-csv/binary-garbage.csv": ("byte 8", _TEXT),
    "n6705-csv/empty.csv": ("line 1", "expected a header line starting 'Sample,'"),
    "n6705-csv/utf16.csv": ("byte 0", _UTF16),
    "n6705-dlog/binary-garbage.dlog": ("byte 0", "expected a .dlog XML header"),
    "n6705-dlog/duplicate-channel.dlog": ("", "expected every <channel id> once"),
    "n6705-dlog/empty.dlog": ("byte 0", "expected a .dlog XML header"),
    "n6705-dlog/inf-current-last-frame.dlog": ("byte 902", "expected a finite float32 for trace curr1, found inf"),
    "n6705-dlog/missing-current-channel.dlog": ("", "expected the supply's current trace 'curr1'"),
    "n6705-dlog/nan-voltage.dlog": ("byte 674", "expected a finite float32 for trace volt1, found nan"),
    "n6705-dlog/negative-current.dlog": ("byte 658", _NEGATIVE),
    "n6705-dlog/no-frames.dlog": ("byte 466", "expected sample frames after the header, found none"),
    "n6705-dlog/scpi-overflow.dlog": ("byte 690", "expected a current within ±1e+06 A, found 9.9e+37"),
    "n6705-dlog/tint-inf.dlog": ("", "expected a sample interval <tint> > 0, found inf"),
    "n6705-dlog/truncated-frame.dlog": ("byte 898", "expected a complete frame of 16 bytes"),
    "n6705-dlog/truncated-header.dlog": ("byte 233", "expected the end of the XML header"),
    "n6705-dlog/utf16.dlog": ("byte 0", "expected a .dlog XML header in UTF-8, found UTF-16"),
    "n6705-dlog/xml-error.dlog": ("line 25", "expected a well-formed XML header, found: mismatched tag"),
    "saleae/cur-duplicate-row.csv": ("line 13", "expected time stamps in increasing order, found 0.0001 twice"),
    "saleae/cur-inf-last-row.csv": ("line 29", f"{_FINITE} 'current_a', found 'inf'"),
    "saleae/cur-nan-voltage.csv": ("line 15", f"{_FINITE} 'voltage_v', found 'nan'"),
    "saleae/cur-negative-current.csv": ("", _NEGATIVE),
    "saleae/dig-binary-garbage.csv": ("byte 8", _TEXT),
    "saleae/dig-duplicate-time.csv": ("line 5", "expected time stamps in increasing order, found 8e-05 twice"),
    "saleae/dig-empty.csv": ("line 1", "expected a Logic 2 digital CSV header"),
    "saleae/dig-header-only.csv": ("line 2", "expected at least one row (the initial state)"),
    "saleae/dig-inf-last-row.csv": ("line 8", f"{_FINITE} 'Time [s]', found 'inf'"),
    "saleae/dig-nan-time.csv": ("line 4", f"{_FINITE} 'Time [s]', found 'nan'"),
    "saleae/dig-shuffled.csv": ("line 4", "expected time stamps in increasing order, found 4e-05 after 8e-05"),
    "saleae/dig-truncated-mid-row.csv": ("line 5", "expected 3 fields"),
    "saleae/dig-utf16.csv": ("byte 0", _UTF16),
    "saleae/dig-wrong-delimiter.csv": ("line 1", "expected a column 'Channel 0' (option marker_channel)"),
    "jls/binary-garbage.jls": ("byte 0", "found no JLS file header"),
    "jls/empty.jls": ("byte 0", "found no JLS file header"),
    "jls/huge-current.jls": ("", "expected a current within ±1e+06 A, found 3e+38"),
    "jls/nan-current.jls": ("", "expected a finite current, found nan"),
    "jls/negative-current.jls": ("", _NEGATIVE),
    "jls/no-marker.jls": ("", "expected a marker channel"),
    "jls/truncated-header.jls": ("", "not closed properly (truncated?) and that pyjls cannot repair"),
    "jls/truncated.jls": ("", "not closed properly (truncated?) and that pyjls cannot repair"),
    "jls/utf16.jls": ("byte 0", "found no JLS file header"),
}


def trace_case(case: str) -> dict:
    """How to import corpus file FORMAT/FILE: argv for `cryptobench energy import`, the file the
    error must name, where and what, and every file the import reads (none may change)."""
    fmt, name = case.split("/")
    path = TRACES / case
    options, flags = TRACE_FORMATS[fmt]
    options, trace, files = dict(options), path, [path]
    if fmt == "saleae":
        partner = TRACES / fmt / ("digital.csv" if name.startswith("cur-") else "current.csv")
        trace, current = (partner, path) if name.startswith("cur-") else (path, partner)
        options["current_file"] = str(current)
        files.append(partner)
    if case in TRACE_TABLE:
        where, fragment = TRACE_TABLE[case]
    else:
        line, fragment = _expected(path)
        where = f"line {line}" if line else ""
    argv = ["energy", "import", str(trace), "--format", fmt, *flags]
    for key, value in options.items():
        argv += ["--option", f"{key}={value}"]
    return {"argv": argv, "named": str(path), "where": where, "fragment": fragment, "files": files}


def _trace_cases() -> list[str]:
    return sorted(f"{d.name}/{f.name}" for d in TRACES.iterdir() for f in d.iterdir()
                  if f"{d.name}/{f.name}" not in TRACE_PARTNERS)


def _fingerprint(files) -> list:
    return [(hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) for f in files]


@pytest.mark.parametrize("case", _trace_cases())
def test_hostile_traces(case, capsys):
    from cryptobench.cli.main import main
    c = trace_case(case)
    before = _fingerprint(c["files"])
    code = main(c["argv"])
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert err.count("\n") == 1 and err.startswith("cryptobench: error: "), err
    assert c["named"] + (f":{c['where']}:" if c["where"] else ":") in err, err
    assert c["fragment"] in err, err
    assert "Traceback" not in err and "np.float64" not in err
    assert _fingerprint(c["files"]) == before


def test_hostile_traces_cover_every_format_and_file():
    cases = _trace_cases()
    assert {c.split("/")[0] for c in cases} == set(TRACE_FORMATS)
    assert set(TRACE_TABLE) <= set(cases), set(TRACE_TABLE) - set(cases)
    for case in cases:                      # every case has its expectation: the table or its first line
        assert case in TRACE_TABLE or case.startswith("n6705-csv/"), case
    for partner in TRACE_PARTNERS:
        assert (TRACES / partner).is_file()


def test_hostile_trace_partners_import(capsys):
    """The Logic 2 pair the saleae cases spoil is itself a good trace: each error is the spoiling's."""
    from cryptobench.cli.main import main
    argv = trace_case("saleae/cur-nan-voltage.csv")["argv"]
    argv[argv.index("--option") + 1:] = [a.replace("cur-nan-voltage.csv", "current.csv") for a in
                                         argv[argv.index("--option") + 1:]]
    assert main(argv) == 0, capsys.readouterr().err
    assert "3 windows" in capsys.readouterr().out


# ---------------------------------------------------------------------------- property tests
# Every trace reader, through the segmenter, on a valid trace spoilt at random: truncated, bytes
# overwritten or random, numeric specials spliced into cells (or float32 frames), rows (frames)
# shuffled or repeated. Whatever comes, the only exception is TraceError, its message is one line
# naming the file, the input is never written, and what is accepted has finite, positive windows.

SPECIALS = ["nan", "NaN", "inf", "-inf", "-0", "1e308", "-1e308", "1e400", "", "0", "-1", "1e-320", "x"]
FLOAT_SPECIALS = [float("nan"), float("inf"), -float("inf"), -0.0, 3.0e38, -1.0, 0.0, 1e-45]
# 25 examples per test keep the file at a few seconds; CRYPTOBENCH_HYPOTHESIS_EXAMPLES=2000 for a long hunt
PROPERTY = settings(max_examples=int(os.environ.get("CRYPTOBENCH_HYPOTHESIS_EXAMPLES", "25")), deadline=None,
                    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_WORK = tempfile.TemporaryDirectory(prefix="cryptobench-hostile-")


@functools.lru_cache(maxsize=None)
def _valid(fmt: str) -> tuple[dict, dict, list]:
    """A small valid trace of `fmt`: ({file name: bytes}, reader options, import keywords)."""
    from cryptobench.targets.trace import synth
    plan = synth.PulsePlan(n=3, width_s=4e-5, gap_s=4e-5, dt=1e-5)
    folder = Path(_WORK.name) / f"valid-{fmt}"
    folder.mkdir()
    kw = {"nominal_voltage": 3.3} if fmt == "ppk2" else {"threshold": 1.65} if fmt.startswith("n6705") else {}
    names = {"generic-csv": "t.csv", "ppk2": "t.csv", "n6705-csv": "t.csv", "n6705-dlog": "t.dlog", "jls": "t.jls"}
    if fmt == "saleae":
        options = synth.write_saleae_pair(folder / "digital.csv", folder / "current.csv", plan)
        options.pop("current_file")
    else:
        writer = {"generic-csv": synth.write_generic_csv, "ppk2": synth.write_ppk2_csv, "jls": synth.write_jls,
                  "n6705-csv": synth.write_n6705_csv, "n6705-dlog": synth.write_n6705_dlog}[fmt]
        options = writer(folder / names[fmt], plan) or {}
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    return files, options, kw


def _import_spoilt(fmt: str, target: str, data: bytes) -> None:
    """Write the valid trace of `fmt` with file `target` replaced by `data`, import it, check."""
    from cryptobench.targets.trace.formats import open_trace
    from cryptobench.targets.trace.importer import import_trace
    from cryptobench.targets.trace.trace import TraceError
    files, options, kw = _valid(fmt)
    folder = Path(tempfile.mkdtemp(dir=_WORK.name))
    paths = {name: folder / name for name in files}
    for name, path in paths.items():
        path.write_bytes(data if name == target else files[name])
    before = _fingerprint(paths.values())
    trace = paths["digital.csv" if fmt == "saleae" else target]
    if fmt == "saleae":
        options = dict(options, current_file=str(paths["current.csv"]))
    try:
        info, chunks = open_trace(trace, fmt, **options)
        imported = import_trace(info, chunks, **kw)
    except TraceError as exc:
        message = str(exc)
        assert "\n" not in message and "np.float64" not in message, message
        assert any(str(p) in message for p in paths.values()), message
    else:
        energy = imported["windows"].column("energy_j")
        assert np.isfinite(energy).all() and (energy > 0).all()
    assert _fingerprint(paths.values()) == before


def _target(fmt: str) -> st.SearchStrategy:
    names = sorted(_valid(fmt)[0])
    return st.sampled_from(names)


ALL_TRACE_FORMATS = sorted(TRACE_FORMATS)
TEXT_FORMATS = ["generic-csv", "ppk2", "n6705-csv", "saleae"]


@pytest.mark.parametrize("fmt", ALL_TRACE_FORMATS)
@PROPERTY
@given(data=st.data())
def test_property_truncated_anywhere(fmt, data):
    target = data.draw(_target(fmt))
    valid = _valid(fmt)[0][target]
    cut = data.draw(st.integers(0, len(valid) - 1))
    _import_spoilt(fmt, target, valid[:cut])


@pytest.mark.parametrize("fmt", ALL_TRACE_FORMATS)
@PROPERTY
@given(data=st.data())
def test_property_random_bytes(fmt, data):
    target = data.draw(_target(fmt))
    valid = bytearray(_valid(fmt)[0][target])
    if data.draw(st.booleans()):
        spoilt = data.draw(st.binary(max_size=3000))
    else:
        for pos, value in data.draw(st.lists(st.tuples(st.integers(0, len(valid) - 1), st.integers(0, 255)),
                                             min_size=1, max_size=8)):
            valid[pos] = value
        spoilt = bytes(valid)
    _import_spoilt(fmt, target, spoilt)


@pytest.mark.parametrize("fmt", ALL_TRACE_FORMATS)
@PROPERTY
@given(data=st.data())
def test_property_numeric_specials(fmt, data):
    target = data.draw(_target(fmt))
    valid = _valid(fmt)[0][target]
    if target.endswith(".csv"):
        lines = valid.decode().split("\n")
        for _ in range(data.draw(st.integers(1, 3))):
            i = data.draw(st.integers(0, len(lines) - 1))
            cells = lines[i].split(",")
            cells[data.draw(st.integers(0, len(cells) - 1))] = data.draw(st.sampled_from(SPECIALS))
            lines[i] = ",".join(cells)
        spoilt = "\n".join(lines).encode()
    else:                                    # float32 specials at 4-byte boundaries of the data
        spoilt = bytearray(valid)
        start = valid.index(b"</dlog>") + 16 if fmt == "n6705-dlog" else 0
        for _ in range(data.draw(st.integers(1, 3))):
            at = start + 4 * data.draw(st.integers(0, (len(valid) - start) // 4 - 1))
            spoilt[at:at + 4] = struct.pack(">f" if fmt == "n6705-dlog" else "<f",
                                            data.draw(st.sampled_from(FLOAT_SPECIALS)))
        spoilt = bytes(spoilt)
    _import_spoilt(fmt, target, spoilt)


@pytest.mark.parametrize("fmt", TEXT_FORMATS + ["n6705-dlog"])
@PROPERTY
@given(data=st.data())
def test_property_rows_shuffled_and_repeated(fmt, data):
    target = data.draw(_target(fmt))
    valid = _valid(fmt)[0][target]
    if fmt == "n6705-dlog":                  # frames of 4 float32 after the header and its 8 bytes
        start = valid.index(b"</dlog>\n") + 16
        rows, head, join = [valid[i:i + 16] for i in range(start, len(valid), 16)], [valid[:start]], b"".join
    else:
        lines = valid.split(b"\n")
        first = next(i for i, l in enumerate(lines) if l.startswith(b"Sample,")) + 1 if fmt == "n6705-csv" else 1
        rows, head, join = lines[first:], lines[:first], b"\n".join
    if data.draw(st.booleans()):
        rows = data.draw(st.permutations(rows))
    else:
        rows = list(rows)
        for i in data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=4)):
            rows.insert(i, rows[i])
    _import_spoilt(fmt, target, join(head + rows))


@pytest.mark.slow
@PROPERTY
@given(fmt=st.sampled_from(ALL_TRACE_FORMATS), cut=st.integers(0, 4000), data=st.data())
def test_property_the_command_line_never_shows_a_traceback(fmt, cut, data):
    """The same through `cryptobench energy import`: exit 0, or 2 with one line naming the file."""
    from cryptobench.cli.main import main
    files, options, kw = _valid(fmt)
    target = data.draw(_target(fmt))
    folder = Path(tempfile.mkdtemp(dir=_WORK.name))
    for name, content in files.items():
        (folder / name).write_bytes(content[:cut] if name == target else content)
    trace = folder / ("digital.csv" if fmt == "saleae" else target)
    options = dict(options, current_file=str(folder / "current.csv")) if fmt == "saleae" else options
    argv = ["energy", "import", str(trace), "--format", fmt] + [a for k, v in options.items()
                                                                for a in ("--option", f"{k}={v}")]
    argv += {"ppk2": ["--voltage", "3.3"], "n6705-csv": ["--threshold", "1.65"],
             "n6705-dlog": ["--threshold", "1.65"]}.get(fmt, [])
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("warning: ")]
    assert code in (0, 2), err.getvalue()
    if code == 2:
        assert len(lines) == 1 and str(folder) in lines[0], err.getvalue()


@pytest.mark.parametrize("path", _cases("profiles"), ids=lambda p: p.name)
def test_hostile_power_profiles(path):
    from cryptobench.targets.power import load_profile

    def load(p):
        try:
            load_profile(str(p))
        except ValueError as exc:            # the model commands turn it into a usage error (exit 2)
            raise UsageError(str(exc)) from None
    _check(path, load)


# --- property tests over the TOML loaders ---------------------------------------------------------
# A valid suite, recipe, reference and power profile, spoilt at random: truncated anywhere, random
# bytes written over a stretch, a value replaced by a numeric special or another type, lines
# shuffled or repeated. Whatever comes, the loader answers with its one-line error naming the file
# (UsageError; ValueError for power profiles, which the model commands turn into one) or loads it,
# and the file's bytes never change.

TOML_VALUES = ["nan", "inf", "-inf", "-0", "1e308", "-5", "0", "true", '"three"', "[]", "{}", '"../../../etc/passwd"',
               "64.5", '"\\u001b]0;x\\u0007"', "[1, 1]", "9999999999999999999999"]


def _toml_loaders() -> dict:
    from cryptobench.targets.power import load_profile
    from cryptobench.targets.mcu.firmware.recipes import RECIPES_DIR, load_recipe
    from cryptobench.references import DATA_DIR, load_reference
    from cryptobench.runner.suites import SUITES_DIR, load_suite
    profile = b'supply_v = 3.0\nactive_current_a = 0.003\nidle_current_a = 1e-6\n[peripherals]\naes = 0.001\n'
    return {"suite": ((SUITES_DIR / "nxp-imxrt.toml").read_bytes(), lambda p: load_suite(str(p))),
            "recipe": ((RECIPES_DIR / "monocypher.toml").read_bytes(), lambda p: load_recipe(str(p))),
            "reference": ((DATA_DIR / "nxp-imxrt.toml").read_bytes()[:6000].rsplit(b"\n[[row]]", 1)[0] + b"\n",
                          load_reference),
            "profile": (profile, lambda p: load_profile(str(p)))}


TOML_KINDS = ["suite", "recipe", "reference", "profile"]


def _load_spoilt(kind: str, data: bytes) -> None:
    valid, load = _toml_loaders()[kind]
    folder = Path(tempfile.mkdtemp(dir=_WORK.name))
    path = folder / f"spoilt-{kind}.toml"
    path.write_bytes(data)
    before = path.read_bytes()
    try:
        load(path)
    except (UsageError, ValueError) as exc:
        message = str(exc)
        assert "\n" not in message and str(path) in message, message
    assert path.read_bytes() == before


@pytest.mark.parametrize("kind", TOML_KINDS)
@PROPERTY
@given(data=st.data())
def test_property_toml_truncated_or_overwritten(kind, data):
    valid = _toml_loaders()[kind][0]
    cut = data.draw(st.integers(0, len(valid)))
    spoilt = valid[:cut]
    if data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(valid)))
        noise = data.draw(st.binary(min_size=1, max_size=40))
        spoilt = valid[:at] + noise + valid[at + len(noise):]
    _load_spoilt(kind, spoilt)


@pytest.mark.parametrize("kind", TOML_KINDS)
@PROPERTY
@given(data=st.data())
def test_property_toml_values_replaced(kind, data):
    lines = _toml_loaders()[kind][0].decode().split("\n")
    assignments = [i for i, line in enumerate(lines) if re.match(r'^\s*"?[\w-]+"?\s*=', line)]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.sampled_from(assignments))
        key = lines[i].split("=", 1)[0]
        lines[i] = f"{key}= {data.draw(st.sampled_from(TOML_VALUES))}"
    _load_spoilt(kind, "\n".join(lines).encode())


@pytest.mark.parametrize("kind", TOML_KINDS)
@PROPERTY
@given(data=st.data())
def test_property_toml_lines_shuffled_and_repeated(kind, data):
    lines = _toml_loaders()[kind][0].decode().split("\n")
    picked = data.draw(st.lists(st.sampled_from(range(len(lines))), min_size=1, max_size=len(lines) + 10))
    _load_spoilt(kind, "\n".join(lines[i] for i in picked).encode())

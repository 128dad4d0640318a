"""Trace readers (cryptobench.targets.trace.formats) against synthetic traces of known energy (energy.synth):
sample count, period, currents, voltages and marker states; per-window energy against the analytic
plan; chunking; and malformed files naming the file, the line or byte, and what was expected."""
import re

import numpy as np
import pytest

from cryptobench.targets.trace import synth
from cryptobench.targets.trace.formats import FORMATS, OPTIONS, open_trace
from cryptobench.targets.trace.trace import MARKER_X, TraceError

PLAN = synth.PulsePlan(n=7, width_s=3e-4, gap_s=5e-4, high_a=0.02, low_a=0.001, dt=1e-5, v=3.3,
                       v_droop=0.05, second=synth.Supply(name="se", high_a=0.005, low_a=0.0002, v=1.8))
SIMPLE = synth.PulsePlan(n=7, width_s=3e-4, gap_s=5e-4, high_a=0.02, low_a=0.001, dt=1e-5, v=3.3)
THRESHOLD = PLAN.marker_high_v / 2


# ----------------------------------------------------------------------------------- helpers

def read_all(path, fmt, **options):
    info, chunks = open_trace(path, fmt, **options)
    chunks = list(chunks)
    cat = lambda get: np.concatenate([get(c) for c in chunks]) if chunks and get(chunks[0]) is not None else None
    out = {"info": info, "chunks": chunks, "current": cat(lambda c: c.current), "voltage": cat(lambda c: c.voltage),
           "marker": cat(lambda c: c.marker), "marker_analog": cat(lambda c: c.marker_analog),
           "t": np.concatenate([c.times() for c in chunks])}
    for key in (chunks[0].extra if chunks else {}):
        out[key] = np.concatenate([c.extra[key] for c in chunks])
    return out


def marker_of(r):
    if r["marker"] is not None:
        return r["marker"]
    return (r["marker_analog"] > THRESHOLD).astype(np.uint8)


def windows(marker, volts, amps, dt):
    """[(duration s, energy J)] per contiguous run of marker == 1: Σ V·I·dt over its samples."""
    high = np.concatenate([[0], (marker == 1).astype(np.int8), [0]])
    starts, stops = np.flatnonzero(np.diff(high) == 1), np.flatnonzero(np.diff(high) == -1)
    return [((b - a) * dt, float(np.sum(volts[a:b] * amps[a:b]) * dt)) for a, b in zip(starts, stops)]


def check_against_plan(r, plan, *, voltage=True, supplies=()):
    exp = synth.expected(plan)
    s = plan.samples(0, plan.total)
    assert len(r["current"]) == plan.total == exp["samples"]
    assert r["info"].sample_period_s == pytest.approx(plan.dt, rel=1e-9)
    np.testing.assert_allclose(r["current"], s["current"], rtol=1e-6)
    np.testing.assert_allclose(r["t"], s["time"], rtol=0, atol=1e-3 * plan.dt)
    m = marker_of(r)
    np.testing.assert_array_equal(m, s["marker"])
    v = r["voltage"] if voltage else np.full(plan.total, plan.v - plan.v_droop)
    if voltage:
        np.testing.assert_allclose(r["voltage"], s["voltage"], rtol=1e-6)
    got = windows(m, v, r["current"], plan.dt)
    assert len(got) == exp["count"]
    assert [d for d, _ in got] == pytest.approx(exp["duration_s"], rel=1e-9)
    assert [e for _, e in got] == pytest.approx(exp["energy_j"], rel=1e-6)
    for name in supplies:
        e2 = windows(m, r[f"voltage.{name}"], r[f"current.{name}"], plan.dt)
        assert [e for _, e in e2] == pytest.approx(exp["supplies"][name], rel=1e-6)


def write(fmt, tmp_path, plan=PLAN, **kw):
    """Write `plan` in format `fmt`; (path, reader options)."""
    if fmt == "generic-csv":
        p = tmp_path / "trace.csv"
        return p, synth.write_generic_csv(p, plan, **kw)
    if fmt == "ppk2":
        p = tmp_path / "ppk2.csv"
        synth.write_ppk2_csv(p, plan, **kw)
        return p, {}
    if fmt == "n6705-csv":
        p = tmp_path / "n6705.csv"
        return p, synth.write_n6705_csv(p, plan, **kw)
    if fmt == "n6705-dlog":
        p = tmp_path / "n6705.dlog"
        return p, synth.write_n6705_dlog(p, plan, **kw)
    if fmt == "saleae":
        p = tmp_path / "digital.csv"
        return p, synth.write_saleae_pair(p, tmp_path / "current.csv", plan, **kw)
    if fmt == "jls":
        p = tmp_path / "trace.jls"
        synth.write_jls(p, plan, **kw)
        return p, {}
    raise AssertionError(fmt)


def expect_error(path, fmt, where, *texts, **options):
    """Open and read everything; a TraceError naming path, `where` and every text must come."""
    with pytest.raises(TraceError) as ei:
        info, chunks = open_trace(path, fmt, **options)
        for _ in chunks:
            pass
    msg = str(ei.value)
    assert str(path) in msg
    if where is not None:
        assert ei.value.where == where, msg
        assert f"{path}:{where}:" in msg
    for t in texts:
        assert t in msg, msg
    return ei.value


def lines_of(path):
    return path.read_text().splitlines(keepends=True)


def replace_cell(path, line_no, col, value, delimiter=","):
    lines = lines_of(path)
    cells = lines[line_no - 1].rstrip("\n").split(delimiter)
    cells[col] = value
    lines[line_no - 1] = delimiter.join(cells) + "\n"
    path.write_text("".join(lines))


def cut_mid_row(path, line_no):
    """Truncate the file inside line `line_no`, before its last delimiter."""
    lines = lines_of(path)
    keep = lines[line_no - 1]
    path.write_text("".join(lines[:line_no - 1]) + keep[:keep.rfind(",")])


# ------------------------------------------------------------------------------ the formats

def test_formats_registered():
    assert set(FORMATS) == {"ppk2", "n6705-csv", "n6705-dlog", "saleae", "generic-csv", "jls"}
    assert all(isinstance(d, str) and d and "\n" not in d for d in FORMATS.values())
    assert all("chunk_samples" in OPTIONS[f] for f in FORMATS)


@pytest.mark.parametrize("fmt", ["generic-csv", "n6705-csv", "n6705-dlog", "saleae"])
def test_reads_plan_with_two_supplies(tmp_path, fmt):
    path, opts = write(fmt, tmp_path)
    r = read_all(path, fmt, **opts)
    check_against_plan(r, PLAN, supplies=["se"])
    assert r["info"].format == fmt
    assert {"current", "voltage", "current.se", "voltage.se"} <= set(r["info"].channels)
    assert ("marker" in r["info"].channels) or ("marker_analog" in r["info"].channels)


@pytest.mark.parametrize("fmt", ["ppk2", "jls"])
def test_reads_plan_single_supply(tmp_path, fmt):
    path, opts = write(fmt, tmp_path, SIMPLE)
    r = read_all(path, fmt, **opts)
    check_against_plan(r, SIMPLE, voltage=(fmt == "jls"))
    assert "marker" in r["info"].channels
    assert r["marker"].dtype == np.uint8


@pytest.mark.parametrize("fmt", ["generic-csv", "ppk2", "n6705-csv", "n6705-dlog", "saleae", "jls"])
def test_small_chunks_equal_one_chunk(tmp_path, fmt):
    plan = SIMPLE if fmt in ("ppk2", "jls") else PLAN
    path, opts = write(fmt, tmp_path, plan)
    whole = read_all(path, fmt, chunk_samples=1 << 20, **opts)
    small = read_all(path, fmt, chunk_samples=37, **opts)
    assert len(whole["chunks"]) == 1
    assert len(small["chunks"]) > 10
    assert all(len(c) <= 37 for c in small["chunks"])
    for key in ("current", "voltage", "marker", "marker_analog", "t", "current.se", "voltage.se"):
        if whole.get(key) is None:
            assert small.get(key) is None
        else:
            np.testing.assert_allclose(small[key], whole[key], rtol=1e-12, atol=1e-15)
    check_against_plan(small, plan, voltage=fmt != "ppk2", supplies=["se"] if plan.second else [])


def test_chunk_locations_csv_and_dlog(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    r = read_all(path, "generic-csv", chunk_samples=50, **opts)
    k = 0
    for c in r["chunks"]:
        assert c.where(0) == f"line {k + 2}"                 # header is line 1, sample 0 is line 2
        k += len(c)
    path, opts = write("n6705-dlog", tmp_path)
    r = read_all(path, "n6705-dlog", chunk_samples=50, **opts)
    first, width = r["chunks"][0].byte0, r["chunks"][0].sample_bytes
    assert width == 6 * 4 and first == path.stat().st_size - PLAN.total * width
    assert r["chunks"][1].where(3) == f"byte {first + 53 * width}"


# ------------------------------------------------------------------------------------- options

@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_unknown_option_names_valid_ones(tmp_path, fmt):
    path, opts = write(fmt, tmp_path, SIMPLE)
    with pytest.raises(ValueError) as ei:
        open_trace(path, fmt, bogus=1, **opts)
    msg = str(ei.value)
    assert "bogus" in msg and fmt in msg
    for name in OPTIONS[fmt]:
        assert name in msg


def test_unknown_format():
    with pytest.raises(ValueError, match="valid: ppk2"):
        open_trace("x", "nope")


def test_missing_file_is_trace_error(tmp_path):
    for fmt in FORMATS:
        opts = {"current_col": "I", "sample_period": 1e-5} if fmt == "generic-csv" else {}
        if fmt == "saleae":
            opts = {"current_file": str(tmp_path / "c.csv")}
        expect_error(tmp_path / "absent.trace", fmt, None, "no such file", **opts)


# ------------------------------------------------------------------------------- generic-csv

def test_generic_missing_options(tmp_path):
    path, _ = write("generic-csv", tmp_path)
    with pytest.raises(ValueError, match="current_col is required.*valid options: current_col"):
        open_trace(path, "generic-csv", time_col="time_s")
    with pytest.raises(ValueError, match="time_col .* or sample_period"):
        open_trace(path, "generic-csv", current_col="current_a")
    with pytest.raises(ValueError, match="marker_kind"):
        open_trace(path, "generic-csv", current_col="current_a", time_col="time_s", marker_kind="maybe")


def test_generic_missing_column_names_header(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    expect_error(path, "generic-csv", "line 1", "expected a column 'I_mA' (option current_col)",
                 "'time_s'", "'current_a'", **dict(opts, current_col="I_mA"))


def test_generic_non_numeric_cell_deep_in_file(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    replace_cell(path, 402, 1, "abc")                       # data row 400, across 37-row chunk boundaries
    expect_error(path, "generic-csv", "line 402", "expected a number in column 'current_a', found 'abc'",
                 chunk_samples=37, **opts)
    expect_error(path, "generic-csv", "line 402", "found 'abc'", **opts)


def test_generic_cells_python_would_accept_but_not_a_number(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    replace_cell(path, 90, 1, "1_000")
    expect_error(path, "generic-csv", "line 90", "found '1_000'", **opts)


def test_generic_column_by_number(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text("a,b\n1,2\n3,4\n")
    r = read_all(p, "generic-csv", current_col=1, sample_period=1.0)
    np.testing.assert_allclose(r["current"], [2, 4])
    expect_error(p, "generic-csv", "line 1", "expected a column '5'", current_col=5, sample_period=1.0)


def test_generic_empty_cell(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    replace_cell(path, 77, 2, "")
    expect_error(path, "generic-csv", "line 77", "expected a number in column 'voltage_v', found ''", **opts)


def test_generic_truncated_mid_row(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    cut_mid_row(path, 300)
    err = expect_error(path, "generic-csv", "line 300", "expected 6 fields", "found 5", "truncated",
                       chunk_samples=64, **opts)
    assert "time_s,current_a" in err.expected


def test_generic_row_with_extra_field(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    lines = lines_of(path)
    lines[149] = lines[149].rstrip("\n") + ",9\n"
    path.write_text("".join(lines))
    expect_error(path, "generic-csv", "line 150", "expected 6 fields", "found 7", **opts)


def test_generic_empty_lines_keep_line_numbers(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    lines = lines_of(path)
    lines.insert(10, "\n")                                    # a blank line 11
    lines.insert(200, "\n")
    path.write_text("".join(lines))
    r = read_all(path, "generic-csv", chunk_samples=64, **opts)
    check_against_plan(r, PLAN, supplies=["se"])
    replace_cell(path, 350, 1, "1,5")                         # a decimal comma: too many fields
    expect_error(path, "generic-csv", "line 350", "expected 6 fields", chunk_samples=64, **opts)


def test_generic_empty_file_and_header_only(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("")
    expect_error(p, "generic-csv", "line 1", "empty file", current_col="I", sample_period=1e-5)
    p.write_text("I,V\n")
    expect_error(p, "generic-csv", "line 2", "expected data rows", current_col="I", sample_period=1e-5)


def test_generic_sample_period_scale_delimiter_and_analog_marker(tmp_path):
    p = tmp_path / "ua.csv"
    opts = synth.write_generic_csv(p, PLAN, time=False, marker="analog", current_unit=1e-6, delimiter=";")
    assert opts["sample_period"] == PLAN.dt and opts["delimiter"] == ";"
    r = read_all(p, "generic-csv", **opts)
    assert r["marker"] is None and r["marker_analog"].max() == pytest.approx(PLAN.marker_high_v)
    assert "marker_analog" in r["info"].channels
    check_against_plan(r, PLAN, supplies=["se"])
    assert r["chunks"][0].t is None and r["chunks"][0].dt == PLAN.dt


def test_generic_time_scale_and_non_uniform_times(tmp_path):
    p = tmp_path / "ms.csv"
    p.write_text("t_ms,I\n0,1\n1,2\n2.5,3\n3,4\n")
    r = read_all(p, "generic-csv", time_col="t_ms", current_col="I", time_scale=1e-3)
    assert r["info"].sample_period_s is None
    np.testing.assert_allclose(r["chunks"][0].t, [0, 1e-3, 2.5e-3, 3e-3])
    np.testing.assert_allclose(r["current"], [1, 2, 3, 4])


def test_time_going_backwards_across_chunks(tmp_path):
    path, opts = write("generic-csv", tmp_path)
    replace_cell(path, 65, 0, "0.000100000")                   # row 63; chunks of 32 rows: 2nd row of a chunk
    expect_error(path, "generic-csv", "line 65", "expected time stamps in increasing order", "found 0.0001 after",
                 chunk_samples=32, **opts)
    replace_cell(path, 65, 0, "0.000630000")                   # first row of a chunk vs the previous chunk
    lines = lines_of(path)
    assert lines[65].startswith("0.000640000")
    replace_cell(path, 66, 0, "0.000620000")
    expect_error(path, "generic-csv", "line 66", "found 0.00062 after 0.00063", chunk_samples=64, **opts)
    p2, _ = write("ppk2", tmp_path, SIMPLE)
    replace_cell(p2, 200, 0, "0.5")
    expect_error(p2, "ppk2", "line 200", "expected time stamps in increasing order", "found 0.5 after 1.97",
                 chunk_samples=50)


def test_generic_digital_marker_cells(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("I,M\n1,0\n1,1\n1,X\n1,-\n1,\n1,1.0\n1,0.0\n1, 1\n1,\"0\"\n")
    r = read_all(p, "generic-csv", current_col="I", marker_col="M", sample_period=1e-3)
    np.testing.assert_array_equal(r["marker"], [0, 1, MARKER_X, MARKER_X, MARKER_X, 1, 0, 1, 0])
    assert any("3 marker cells" in n for n in r["info"].notes)


def test_generic_quoted_numbers_and_crlf(tmp_path):
    p = tmp_path / "q.csv"
    p.write_bytes(b'"time","I"\r\n"0","0.5"\r\n"0.001","0.25"\r\n')
    r = read_all(p, "generic-csv", time_col="time", current_col="I")
    np.testing.assert_allclose(r["current"], [0.5, 0.25])


# ---------------------------------------------------------------------------------------- ppk2

def test_ppk2_bit_order_d0_is_leftmost(tmp_path):
    p = tmp_path / "bits.csv"
    p.write_text("Timestamp(ms),Current(uA),D0-D7\n0,1.5,10000000\n0.01,2.5,00000001\n0.02,3,X000000X\n")
    r0 = read_all(p, "ppk2")
    np.testing.assert_array_equal(r0["marker"], [1, 0, MARKER_X])
    np.testing.assert_allclose(r0["current"], [1.5e-6, 2.5e-6, 3e-6])
    np.testing.assert_allclose(r0["t"], [0, 1e-5, 2e-5], atol=1e-12)
    r7 = read_all(p, "ppk2", marker_bit=7)
    np.testing.assert_array_equal(r7["marker"], [0, 1, MARKER_X])


@pytest.mark.parametrize("bits", ["D0-D7", "separate"])
def test_ppk2_marker_on_other_bit(tmp_path, bits):
    p = tmp_path / "b3.csv"
    synth.write_ppk2_csv(p, SIMPLE, marker_bit=3, bits=bits, other_bits="-")
    r = read_all(p, "ppk2", marker_bit=3)
    check_against_plan(r, SIMPLE, voltage=False)
    expect_error(p, "ppk2", "line 2", "marker bit D1 not logged", marker_bit=1)


def test_ppk2_unlogged_marker_bit_deep_in_file(tmp_path):
    path, _ = write("ppk2", tmp_path, SIMPLE)
    replace_cell(path, 500, 2, "0-000000")
    expect_error(path, "ppk2", "line 500", "marker bit D1 not logged", "'0-000000'", marker_bit=1, chunk_samples=64)
    read_all(path, "ppk2", marker_bit=0)                      # D0 is logged in that row: fine


def test_ppk2_no_digital_columns(tmp_path):
    path, _ = write("ppk2", tmp_path, SIMPLE, bits=None)
    r = read_all(path, "ppk2")
    assert r["marker"] is None and r["info"].channels == ["current"]
    assert any("no digital" in n for n in r["info"].notes)


def test_ppk2_wrong_header(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("Time,Current\n0,1\n")
    expect_error(p, "ppk2", "line 1", "expected the PPK2 header 'Timestamp(ms),Current(uA)", "'Time,Current'")
    p.write_text("Timestamp(ms),Current(uA),Voltage(mV)\n0,1,2\n")
    expect_error(p, "ppk2", "line 1", "unexpected column 'Voltage(mV)'")


def test_ppk2_bad_cells_and_truncation(tmp_path):
    path, _ = write("ppk2", tmp_path, SIMPLE)
    original = path.read_text()
    replace_cell(path, 123, 2, "0100")
    expect_error(path, "ppk2", "line 123", "expected 8 characters of 0, 1, X or - in column 'D0-D7', found '0100'")
    path.write_text(original)
    replace_cell(path, 123, 2, "000000001")
    expect_error(path, "ppk2", "line 123", "found '000000001'")
    path.write_text(original)
    replace_cell(path, 321, 1, "12,5")
    expect_error(path, "ppk2", "line 321", "expected 3 fields", "found 4")
    path.write_text(original)
    replace_cell(path, 321, 1, "1.2.3")
    expect_error(path, "ppk2", "line 321", "expected a number in column 'Current(uA)', found '1.2.3'",
                 chunk_samples=100)
    path.write_text(original)
    cut_mid_row(path, 444)
    expect_error(path, "ppk2", "line 444", "expected 3 fields", "found 2", "truncated")


def test_ppk2_non_uniform_times_give_per_sample_t(tmp_path):
    p = tmp_path / "nu.csv"
    p.write_text("Timestamp(ms),Current(uA)\n0,1\n0.01,1\n0.03,1\n0.04,1\n")
    r = read_all(p, "ppk2")
    assert r["info"].sample_period_s is None
    np.testing.assert_allclose(r["chunks"][0].t, [0, 1e-5, 3e-5, 4e-5])


# ----------------------------------------------------------------------------------- n6705-csv

def test_n6705_csv_interval_forms(tmp_path):
    path, opts = write("n6705-csv", tmp_path, interval_style="colon")
    assert "Sample interval:," in path.read_text()
    r = read_all(path, "n6705-csv", **opts)
    check_against_plan(r, PLAN, supplies=["se"])
    text = path.read_text()
    path.write_text(text.replace(re.search(r"Sample interval:,[^\n]*", text).group(0), "Sample interval,10,us"))
    assert read_all(path, "n6705-csv", **opts)["info"].sample_period_s == pytest.approx(1e-5)


def test_n6705_csv_defaults_and_minmax(tmp_path):
    path, _ = write("n6705-csv", tmp_path, minmax=True)
    header = [l for l in lines_of(path) if l.startswith("Sample,")][0]
    assert "Curr min 1" in header and "Volt max 2" in header
    r = read_all(path, "n6705-csv")                           # defaults: Curr avg 1 and Volt avg 1
    assert r["info"].channels == ["current", "voltage"] and r["marker_analog"] is None
    s = PLAN.samples(0, PLAN.total)
    np.testing.assert_allclose(r["current"], s["current"])
    np.testing.assert_allclose(r["voltage"], s["voltage"])
    r2 = read_all(path, "n6705-csv", current="Curr avg 3", marker_column="volt2")      # dlog-style alias
    np.testing.assert_allclose(r2["current"], s["current2"])
    np.testing.assert_allclose(r2["voltage"], s["voltage2"])                           # Volt avg 3 follows
    np.testing.assert_array_equal(marker_of(r2), s["marker"])


def test_n6705_csv_malformed(tmp_path):
    path, opts = write("n6705-csv", tmp_path)
    original = path.read_text()
    header_line = next(i for i, l in enumerate(lines_of(path), 1) if l.startswith("Sample,"))
    assert header_line == 6
    replace_cell(path, 400, 3, "n/a")
    expect_error(path, "n6705-csv", "line 400", "expected a number in column 'Curr avg 2', found 'n/a'",
                 chunk_samples=37, current="Curr avg 2")
    path.write_text(original)
    cut_mid_row(path, 250)
    expect_error(path, "n6705-csv", "line 250", "expected 7 fields", "truncated", **opts)
    path.write_text(original.replace("Sample,Curr avg 1", "Index,Curr avg 1"))
    expect_error(path, "n6705-csv", None, "expected a header line starting 'Sample,'")
    path.write_text(original.replace("Sample interval,", "Interval,"))
    expect_error(path, "n6705-csv", "line 6", "expected a 'Sample interval' line")
    path.write_text(original.replace("Sample interval,1e-05", "Sample interval,fast"))
    expect_error(path, "n6705-csv", "line 3", "expected a sample interval in seconds, found 'Sample interval,fast'")
    path.write_text(original)
    expect_error(path, "n6705-csv", "line 6", "expected a trace 'Curr avg 9' (option current)", "'Curr avg 1'",
                 current="Curr avg 9")
    expect_error(path, "n6705-csv", "line 6", "(option extra_current)", extra_current="se:Curr avg 7")
    path.write_text(original.replace("Curr avg", "Amps"))
    expect_error(path, "n6705-csv", "line 6", "expected a current trace ('Curr avg N'")
    with pytest.raises(ValueError, match="NAME:COLUMN"):
        open_trace(path, "n6705-csv", extra_current="Curr avg 3")


# ---------------------------------------------------------------------------------- n6705-dlog

def test_dlog_layout_and_names(tmp_path):
    path, opts = write("n6705-dlog", tmp_path)
    data = path.read_bytes()
    end = data.index(b"</dlog>\n") + len(b"</dlog>\n")
    frames = np.frombuffer(data[end + 8:], dtype=">f4").reshape(-1, 6)    # volt1 curr1 volt2 curr2 volt3 curr3
    s = PLAN.samples(0, PLAN.total)
    np.testing.assert_allclose(frames[:, 1], s["current"], rtol=1e-6)
    np.testing.assert_allclose(frames[:, 0], s["voltage"], rtol=1e-6)
    r = read_all(path, "n6705-dlog")                                       # defaults: curr1, volt1
    assert r["info"].channels == ["current", "voltage"]
    assert "volt1, curr1, volt2, curr2, volt3, curr3" in r["info"].notes[0]
    r2 = read_all(path, "n6705-dlog", current="Curr avg 3", voltage="Volt avg 3", marker_column="Volt avg 2")
    np.testing.assert_allclose(r2["current"], s["current2"], rtol=1e-6)


def test_dlog_minmax(tmp_path):
    path, opts = write("n6705-dlog", tmp_path, minmax=True)
    r = read_all(path, "n6705-dlog", **opts)
    check_against_plan(r, PLAN, supplies=["se"])
    assert "curr1_min" in r["info"].notes[0]
    read_all(path, "n6705-dlog", current="Curr max 1")


def test_dlog_writer_streams_in_chunks(tmp_path):
    a, b = tmp_path / "a.dlog", tmp_path / "b.dlog"
    synth.write_n6705_dlog(a, PLAN, chunk=1 << 20)
    synth.write_n6705_dlog(b, PLAN, chunk=13)
    assert a.read_bytes() == b.read_bytes()


def test_dlog_truncated_frame(tmp_path):
    path, opts = write("n6705-dlog", tmp_path)
    data = path.read_bytes()
    first = len(data) - PLAN.total * 24
    path.write_bytes(data[:first + 100 * 24 + 10])
    expect_error(path, "n6705-dlog", f"byte {first + 100 * 24}", "expected a complete frame of 24 bytes",
                 "found 10 bytes", "truncated", **opts)
    path.write_bytes(data[:first - 3])
    expect_error(path, "n6705-dlog", f"byte {first - 3}", "expected 8 bytes after the XML header")


def test_dlog_without_frames(tmp_path):
    path, _ = write("n6705-dlog", tmp_path)
    data = path.read_bytes()
    first = len(data) - PLAN.total * 24
    path.write_bytes(data[:first])
    expect_error(path, "n6705-dlog", f"byte {first}", "expected sample frames after the header, found none")


def test_dlog_bad_headers(tmp_path):
    path, opts = write("n6705-dlog", tmp_path)
    data = path.read_bytes()
    path.write_bytes(b"Sample,Curr avg 1\n0,1\n")
    expect_error(path, "n6705-dlog", "byte 0", "expected a .dlog XML header", "Sample,Curr")
    path.write_bytes(data[:200])
    expect_error(path, "n6705-dlog", "byte 200", "expected the end of the XML header ('</dlog>'), found end of file")
    path.write_bytes(data.replace(b"<tint>1e-05</tint>", b"<tint>soon</tint>"))
    expect_error(path, "n6705-dlog", None, "expected the sample interval <frame><tint>", "'soon'")
    broken = data.replace(b"</ident>", b"</idnet>", 1)
    path.write_bytes(broken)
    line = broken[:broken.index(b"</idnet>")].count(b"\n") + 1
    expect_error(path, "n6705-dlog", f"line {line}", "expected a well-formed XML header", "mismatched tag")
    path.write_bytes(data.replace(b"<sense_curr>1</sense_curr>", b"<sense_curr>0</sense_curr>")
                     .replace(b"<sense_volt>1</sense_volt>", b"<sense_volt>0</sense_volt>"))
    expect_error(path, "n6705-dlog", None, "expected at least one channel with <sense_volt>1")
    path.write_bytes(data)
    expect_error(path, "n6705-dlog", None, "expected a trace 'volt7' (option marker_column)", "'curr1'",
                 marker_column="volt7")


def test_dlog_digit_element_names(tmp_path):
    """Real headers carry elements like <1ua> that are not XML names; the readers rename them."""
    path, _ = write("n6705-dlog", tmp_path, SIMPLE)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"<sense_pow>0</sense_pow>", b"<1ua>0</1ua><2ua>1</2ua>"))
    assert len(read_all(path, "n6705-dlog")["current"]) == SIMPLE.total


# -------------------------------------------------------------------------------------- saleae

def test_saleae_marker_channel_alias_and_offset(tmp_path):
    d, c = tmp_path / "d.csv", tmp_path / "c.csv"
    opts = synth.write_saleae_pair(d, c, PLAN, channel=1, channels=3, time_offset=2.5)
    assert opts["time_offset"] == 2.5 and opts["marker_channel"] == "Channel 1"
    r = read_all(d, "saleae", **dict(opts, marker_channel=1))
    check_against_plan(r, PLAN, supplies=["se"])
    r0 = read_all(d, "saleae", **dict(opts, marker_channel=0))
    assert not np.any(r0["marker"] == 1)


def test_saleae_chunks_locate_by_time(tmp_path):
    d, c = tmp_path / "d.csv", tmp_path / "c.csv"
    opts = synth.write_saleae_pair(d, c, PLAN)
    chunk = read_all(d, "saleae", chunk_samples=100, **opts)["chunks"][1]
    assert chunk.where(5).startswith("t = ") and chunk.where(5).endswith(" s")     # not a line of the other file


def test_saleae_samples_before_first_row_are_x(tmp_path):
    d, c = tmp_path / "d.csv", tmp_path / "c.csv"
    opts = synth.write_saleae_pair(d, c, PLAN)
    r = read_all(d, "saleae", **dict(opts, time_offset=-1e-4))          # current starts 10 samples earlier
    assert np.all(r["marker"][:10] == MARKER_X) and r["marker"][10] == 0
    assert any("before the Logic 2 export's first row" in n for n in r["info"].notes)


def test_saleae_x_cells_and_custom_names(tmp_path):
    d, c = tmp_path / "d.csv", tmp_path / "c.csv"
    c.write_text("t,I\n0,1\n0.001,1\n0.002,1\n0.003,1\n0.004,1\n")
    d.write_text("Time [s],GPIO trig,Channel 1\n0,0,0\n0.001,1,0\n0.0025,X,0\n0.0035,0,1\n")
    r = read_all(d, "saleae", current_file=str(c), marker_channel="GPIO trig",
                 **{"current.time_col": "t", "current.current_col": "I"})
    np.testing.assert_array_equal(r["marker"], [0, 1, 1, MARKER_X, 0])


def test_saleae_errors(tmp_path):
    d, c = tmp_path / "d.csv", tmp_path / "c.csv"
    opts = synth.write_saleae_pair(d, c, PLAN)
    with pytest.raises(ValueError, match="current_file is required"):
        open_trace(d, "saleae")
    with pytest.raises(ValueError, match="format generic-csv: unknown option 'colour'.*current_col"):
        open_trace(d, "saleae", **dict(opts, **{"current.colour": "red"}))
    expect_error(d, "saleae", "line 1", "expected a column 'Channel 5' (option marker_channel)",
                 **dict(opts, marker_channel=5))
    original = d.read_text()
    lines = original.splitlines(keepends=True)
    lines[5], lines[6] = lines[6], lines[5]                             # time goes backwards at line 7
    d.write_text("".join(lines))
    expect_error(d, "saleae", "line 7", "expected time stamps in increasing order", **opts)
    d.write_text("Seconds,Channel 0\n0,1\n")
    expect_error(d, "saleae", "line 1", "expected a Logic 2 digital CSV header 'Time [s],Channel 0,…'", **opts)
    d.write_text(original)
    replace_cell(c, 333, 1, "lots")                                     # errors in the current trace name its file
    with pytest.raises(TraceError) as ei:
        for _ in open_trace(d, "saleae", chunk_samples=50, **opts)[1]:
            pass
    assert ei.value.path == str(c) and ei.value.where == "line 333" and "found 'lots'" in str(ei.value)


# ----------------------------------------------------------------------------------------- jls

def test_jls_signals_and_options(tmp_path):
    path, _ = write("jls", tmp_path, SIMPLE)
    r = read_all(path, "jls", marker="gpi[0]", voltage="voltage", current="current")
    check_against_plan(r, SIMPLE)
    expect_error(path, "jls", None, "expected a signal 'gpi[3]' (the marker)", "'current'", "'gpi[0]'",
                 marker="gpi[3]")
    r2 = read_all(path, "jls", marker="voltage")                         # a float marker is analog
    assert r2["marker"] is None and r2["marker_analog"] is not None


def test_jls_corrupt_files(tmp_path):
    path, _ = write("jls", tmp_path, SIMPLE)
    data = path.read_bytes()
    path.write_bytes(b"not a jls file at all" * 10)
    expect_error(path, "jls", None, "expected a readable JLS v2 file")
    path.write_bytes(data[:200])
    expect_error(path, "jls", None, "expected a readable JLS v2 file")


# --------------------------------------------------------------------------------------- synth

def test_synth_expected_is_analytic():
    exp = synth.expected(PLAN)
    assert exp["count"] == 7 and exp["samples"] == PLAN.total == 50 + 7 * 80
    assert exp["duration_s"][0] == pytest.approx(3e-4)
    assert exp["energy_j"][0] == pytest.approx((3.3 - 0.05) * 0.02 * 3e-4)
    assert exp["supplies"]["se"][0] == pytest.approx(1.8 * 0.005 * 3e-4)
    assert exp["start_s"][1] - exp["start_s"][0] == pytest.approx(8e-4)
    with pytest.raises(ValueError, match="whole number of samples"):
        synth.PulsePlan(width_s=1.5e-5, dt=1e-5)


# ------------------------------------------------------------------- hostile input (regressions)

def _stamp(path):
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_size


@pytest.mark.parametrize("cut", [1, 10, 100, 500, 1500, 3000])
def test_jls_not_closed_properly_is_never_written(tmp_path, capsys, cut):
    """pyjls repairs a truncated file in place: the reader gives it a private copy instead."""
    path, _ = write("jls", tmp_path, SIMPLE)
    path.write_bytes(path.read_bytes()[:-cut])
    before = _stamp(path)
    try:
        r = read_all(path, "jls")
    except TraceError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        assert "not closed properly" in str(exc) or "no JLS file header" in str(exc), str(exc)
    else:
        assert any("not closed properly" in w and "unchanged" in w for c in r["chunks"] for w in c.warnings)
    assert _stamp(path) == before
    assert capsys.readouterr().err == ""            # pyjls's log lines stay off stderr
    assert not list(tmp_path.glob("*.jls.*"))


def test_jls_truncated_by_one_byte_reads_from_a_repaired_copy(tmp_path, monkeypatch):
    import gc
    import tempfile
    path, _ = write("jls", tmp_path, SIMPLE)
    path.write_bytes(path.read_bytes()[:-1])
    before = _stamp(path)
    private = tmp_path / "private"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    r = read_all(path, "jls")
    assert len(r["current"]) == SIMPLE.total
    assert "not closed properly" in " ".join(r["info"].notes)
    assert _stamp(path) == before
    del r
    gc.collect()
    assert list(private.iterdir()) == []            # the private copy is gone once read


def test_jls_closed_properly_is_opened_in_place(tmp_path, monkeypatch):
    from cryptobench.targets.trace.formats import jls
    path, _ = write("jls", tmp_path, SIMPLE)
    assert jls._closed_properly(path)
    monkeypatch.setattr(jls.shutil, "copyfile", lambda *a: pytest.fail("copied a proper file"))
    read_all(path, "jls")
    path.write_bytes(b"jlsfmt" + bytes(200))
    expect_error(path, "jls", "byte 0", "no JLS file header")


def _nan_cell(path, line_no, col):
    replace_cell(path, line_no, col, "nan")


@pytest.mark.parametrize("fmt, col, name", [("generic-csv", 2, "voltage_v"), ("n6705-csv", 2, "Volt avg 1")])
def test_nan_voltage_names_file_line_and_column(tmp_path, fmt, col, name):
    path, opts = write(fmt, tmp_path)
    _nan_cell(path, 77, col)
    expect_error(path, fmt, "line 77", f"expected a finite number in column {name!r}, found 'nan'",
                 chunk_samples=50, **opts)


def test_nan_and_inf_in_dlog_frames_name_the_byte(tmp_path):
    path, opts = write("n6705-dlog", tmp_path)
    data = bytearray(path.read_bytes())
    first = len(data) - PLAN.total * 24
    data[first + 40 * 24:first + 40 * 24 + 4] = np.array([np.nan], dtype=">f4").tobytes()   # volt1, frame 40
    path.write_bytes(bytes(data))
    expect_error(path, "n6705-dlog", f"byte {first + 40 * 24}", "expected a finite float32 for trace volt1, found nan",
                 chunk_samples=16, **opts)
    data[first + 40 * 24:first + 40 * 24 + 4] = np.array([3.3], dtype=">f4").tobytes()
    data[-4:] = np.array([np.inf], dtype=">f4").tobytes()                                   # curr3, last frame
    path.write_bytes(bytes(data))
    expect_error(path, "n6705-dlog", f"byte {len(data) - 4}", "trace curr3, found inf", **opts)
    read_all(path, "n6705-dlog", marker_column="volt2")          # a trace not read may hold anything


@pytest.mark.parametrize("fmt, col, name, line", [("generic-csv", 0, "time_s", 88), ("ppk2", 0, "Timestamp(ms)", 88),
                                                  ("generic-csv", 0, "time_s", None)])
def test_nan_time_names_its_line(tmp_path, fmt, col, name, line):
    path, opts = write(fmt, tmp_path, SIMPLE)
    line = line or len(lines_of(path))            # the last row
    _nan_cell(path, line, col)
    expect_error(path, fmt, f"line {line}", f"expected a finite number in column {name!r}, found 'nan'", **opts)


def test_huge_numbers_are_not_finite(tmp_path):
    path, opts = write("generic-csv", tmp_path, SIMPLE)
    replace_cell(path, 30, 1, "1e400")
    expect_error(path, "generic-csv", "line 30", "column 'current_a', found '1e400'", **opts)


def test_repeated_time_stamp_is_a_repeated_row(tmp_path):
    for fmt in ("generic-csv", "ppk2"):
        path, opts = write(fmt, tmp_path, SIMPLE)
        lines = lines_of(path)
        path.write_text("".join(lines[:60] + [lines[59]] + lines[60:]))
        err = expect_error(path, fmt, "line 61", "expected time stamps in increasing order", "twice in a row", **opts)
        assert "np.float64" not in str(err)


def test_n6705_csv_without_the_supply_current_is_an_error(tmp_path):
    """The marker channel's current was taken as the supply's: 0 J windows and exit 0."""
    path, opts = write("n6705-csv", tmp_path, SIMPLE)
    text = path.read_text().replace("Sample,Curr avg 1,Volt avg 1,", "Sample,Volt avg 1,")
    rows = [l if not l[:1].isdigit() else ",".join(l.split(",")[:1] + l.split(",")[2:]) for l in text.splitlines()]
    path.write_text("\n".join(rows) + "\n")
    expect_error(path, "n6705-csv", "line 6", "expected the supply's current trace 'Curr avg 1'",
                 "other than the marker's channel 2", **opts)
    expect_error(path, "n6705-csv", "line 6", "different traces", current="Volt avg 2", **opts)
    r = read_all(path, "n6705-csv", current="Curr avg 2", **opts)      # said explicitly: taken
    assert r["info"].channels[0] == "current"


def test_n6705_default_current_skips_the_marker_channel(tmp_path):
    path, _ = write("n6705-csv", tmp_path)
    r = read_all(path, "n6705-csv", marker_column="Volt avg 1")        # the marker on channel 1
    np.testing.assert_allclose(r["current"], 0.0)                      # so channel 2's current (the synth's zeros)
    np.testing.assert_allclose(r["voltage"], PLAN.samples(0, PLAN.total)["marker"] * PLAN.marker_high_v)


def test_n6705_csv_sample_index_must_increase(tmp_path):
    path, opts = write("n6705-csv", tmp_path, SIMPLE)
    lines = lines_of(path)
    path.write_text("".join(lines[:99] + [lines[98]] + lines[99:]))
    expect_error(path, "n6705-csv", "line 100", "expected the Sample column to increase", "repeated", **opts)
    lines[120], lines[121] = lines[121], lines[120]
    path.write_text("".join(lines))
    expect_error(path, "n6705-csv", "line 122", "found 114 after 115", chunk_samples=30, **opts)


def test_saleae_repeated_nan_and_inf_time_stamps(tmp_path):
    path, opts = write("saleae", tmp_path, SIMPLE)
    lines = lines_of(path)
    path.write_text("".join(lines[:4] + [lines[3]] + lines[4:]))           # a row twice: two edges merged
    err = expect_error(path, "saleae", "line 5", "twice in a row", **opts)
    assert "np.float64" not in str(err)
    path.write_text("".join(lines))
    replace_cell(path, 4, 0, "nan")
    expect_error(path, "saleae", "line 4", "expected a finite number in column 'Time [s]', found 'nan'", **opts)
    path.write_text("".join(lines))
    replace_cell(path, len(lines), 0, "inf")                                # the last row
    expect_error(path, "saleae", f"line {len(lines)}", "found 'inf'", **opts)
    path.write_text("".join(lines))
    replace_cell(path, 4, 0, "0.0001")                                      # backwards: plain numbers
    err = expect_error(path, "saleae", "line 4", "found 0.0001 after 0.0005", **opts)
    assert "np.float64" not in str(err)


def test_saleae_current_file_errors_name_the_current_file(tmp_path):
    path, opts = write("saleae", tmp_path, SIMPLE)
    current = tmp_path / "current.csv"
    n = len(lines_of(current))
    replace_cell(current, n, 1, "inf")                                     # the current trace's last row
    with pytest.raises(TraceError) as ei:
        for _ in open_trace(path, "saleae", **opts)[1]:
            pass
    assert ei.value.path == str(current) and f"{current}:line {n}:" in str(ei.value), str(ei.value)
    assert "column 'current_a', found 'inf'" in str(ei.value)


def test_text_encodings_and_binary(tmp_path):
    path, opts = write("generic-csv", tmp_path, SIMPLE)
    text = path.read_text()
    path.write_bytes(text.encode("utf-16"))
    expect_error(path, "generic-csv", "byte 0", "expected a text file in UTF-8, found UTF-16", **opts)
    path.write_bytes(text.encode("utf-16-le"))
    expect_error(path, "generic-csv", "byte 1", "NUL byte", **opts)
    path.write_bytes(text.replace("\n", "\r\n").encode())                  # CRLF reads as LF
    check_against_plan(read_all(path, "generic-csv", **opts), SIMPLE)
    path.write_bytes(b"x" * 70000 + b"\n1,2\n")
    expect_error(path, "generic-csv", "line 1", "a line of more than", **opts)


def test_unreadable_file_is_a_trace_error(tmp_path, monkeypatch):
    from cryptobench.targets.trace import formats

    def reader(path, **options):
        def chunks():
            raise PermissionError(13, "Permission denied", str(path))
            yield
        return None, chunks()
    monkeypatch.setitem(formats._READERS, "generic-csv", (reader, "", formats.OPTIONS["generic-csv"]))
    _, chunks = open_trace(tmp_path / "t.csv", "generic-csv")
    with pytest.raises(TraceError, match=r"t\.csv: expected a readable file, found: Permission denied"):
        list(chunks)


def test_option_values_must_be_finite(tmp_path):
    path, opts = write("generic-csv", tmp_path, SIMPLE)
    with pytest.raises(ValueError, match="option current_scale: expected a finite number"):
        open_trace(path, "generic-csv", **{**opts, "current_scale": float("inf")})
    with pytest.raises(ValueError, match="option chunk_samples: expected an integer"):
        open_trace(path, "generic-csv", **{**opts, "chunk_samples": float("inf")})

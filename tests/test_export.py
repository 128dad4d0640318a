"""`cryptobench export`: stored runs as one flat table in parquet, csv or json, read back with
pandas, pyarrow and DuckDB; --samples; run selection (ids, ranges, latest); errors; atomic writes;
free text (a label with <script> and unicode) surviving every format."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import subprocess
import sys
from argparse import Namespace

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import ROOT, cli
from cryptobench.core.errors import UsageError
from cryptobench.cli.export import run as cmd_export
from cryptobench.report.export import CELL_COLUMNS, SAMPLE_COLUMNS, build_table
from cryptobench.stats.results import derive, per_op_seconds
from cryptobench.store.database import Store
from cryptobench.core.records import FAILED, Cell, Conditions, Params, Plan, Run
from storeutil import save_cell_at

LABEL = "<script>alert('x')</script> & “µ-label” 日本 ✓"

HOST_CONDITIONS = {
    "host": {"hostname": "bench", "os": "Linux 6.1", "cpu": {"model": "Test CPU 9000", "arch": "x86_64"},
             "cryptobench": "0.1.0", "git_revision": "abc123"},
    "harness": {"harness": "cbh-host", "compiler": "gcc 12.2.0", "cflags": "-O2 -g", "clock": "CLOCK_MONOTONIC_RAW"},
    "engines": {"openssl-hw": {"version": "OpenSSL 3.0.19", "extensions_enabled": ["AES-NI"]},
                "mbedtls": {"version": "mbed TLS 2.28.3"},
                "libsodium": {"version": "1.0.18"}},
}


def _samples(t: float, n: int, k: int = 4):
    """n samples of k operations around t seconds per operation, not all equal."""
    return [[k, int(round(t * k * 1e9 * (1 + 0.01 * ((i * 7) % 5 - 2)))), 1000 * (i + 1)] for i in range(n)]


def _stored_run(db, cells, label=None, conditions=None, suite=None, status="complete"):
    """cells: (op, engine, params, seconds per op, number of samples), or a dict for a finished cell
    stored as is (e.g. unsupported)."""
    store = Store(db)
    plan = {"suite": suite, "baseline": None, "options": {"repeat": 3}, "groups": []}
    if label:
        plan["label"] = label
    rid = store.create_run(Plan.from_json({**plan, "suite": suite}), conditions if conditions is not None else HOST_CONDITIONS)
    for seq, c in enumerate(cells):
        if isinstance(c, dict):
            save_cell_at(store, rid, seq, c)
            continue
        op, engine, params, t, n = c
        samples = _samples(t, n)
        save_cell_at(store, rid, seq, {"op": op, "params": params, "engine": engine, "target": "host",
                                   "provenance": "measured", "status": "ok", "kat": "pass", "detail": "2 vectors",
                                   "samples": samples, "result": derive(op, params, samples, {"counter": "tsc"}, False)})
    store.set_status(rid, status)
    store.close()
    return rid


def _unsupported(op, engine, params):
    return {"op": op, "params": params, "engine": engine, "target": "host", "provenance": "none",
            "status": "unsupported", "kat": "n/a", "detail": "not in this library", "samples": None, "result": None}


@pytest.fixture
def two_runs(tmp_path):
    db = tmp_path / "runs.sqlite"
    _stored_run(db, [("sha256", "openssl-hw", {"bytes": 64}, 2e-7, 5),
                     ("sha256", "mbedtls", {"bytes": 64}, 9e-7, 5),
                     ("sha256", "openssl-hw", {"bytes": 1024}, 1e-6, 7),
                     ("sha256", "mbedtls", {"bytes": 1024}, 6e-6, 7)])
    _stored_run(db, [("ecdh-shared-secret", "libsodium", {"curve": "x25519"}, 5e-5, 3),
                     ("aes-gcm-encrypt", "openssl-hw", {"key_bits": 256, "bytes": 16384, "aad_bytes": 0}, 3e-6, 4),
                     _unsupported("aes-gcm-encrypt", "libsodium", {"key_bits": 256, "bytes": 16384, "aad_bytes": 0})],
                label=LABEL, suite="default")
    return db


def _ok(proc):
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


def _export(db, *args):
    return cli("export", *args, "--db", str(db))


def _one_line_error(proc, *needles):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("cryptobench: error: ")
    for n in needles:
        assert n in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def _stored_medians(db):
    store = Store(db)
    out = {}
    for rid in (1, 2):
        for c in store.load_run(rid).cells:
            if c.result is not None:
                out[(rid, c.op, c.params.key, c.engine)] = c.result.time_s["median"]
    store.close()
    return out


@pytest.mark.e2e
def test_every_format_gives_the_same_table(two_runs, tmp_path):
    db = two_runs
    files = {}
    for fmt in ("parquet", "csv", "json"):
        files[fmt] = tmp_path / f"all.{fmt}"
        proc = _ok(_export(db, "1", "2", "--format", fmt, "--out", str(files[fmt])))
        assert proc.stdout == ""
        assert proc.stderr.strip() == f"exported 7 rows from runs 1, 2 to {files[fmt]}"
    a = pd.read_parquet(files["parquet"])
    b = pd.read_csv(files["csv"], keep_default_na=False, na_values=[""])    # else pandas reads kat "n/a" as NaN
    c = pd.read_json(files["json"], precise_float=True)     # pandas' fast float parser rounds the last digit
    expected = [name for name, *_ in CELL_COLUMNS]
    params = ["param_aad_bytes", "param_bytes", "param_curve", "param_key_bits"]
    i = expected.index("params_json") + 1
    expected = expected[:i] + params + expected[i:]
    for df in (a, b, c):
        assert list(df.columns) == expected
        assert len(df) == 7
    # the same values whichever the format
    for col in ("run_id", "op", "engine", "params_json", "status", "kat", "device", "compiler"):
        assert a[col].tolist() == b[col].tolist() == c[col].tolist(), col
    # but CSV text that begins with - (and = + @ TAB CR) carries a leading ' for spreadsheets (docs/export.md)
    assert a["cflags"].tolist() == c["cflags"].tolist() and set(a["cflags"]) == {"-O2 -g"}
    assert b["cflags"].tolist() == ["'" + v for v in a["cflags"]]
    for col in ("median_s", "ci95_lo_s", "ops_per_s", "throughput_bytes_per_s", "cycles_per_op", "param_bytes"):
        for x, y, z in zip(a[col], b[col], c[col]):
            assert (pd.isna(x) and pd.isna(y) and pd.isna(z)) or (x == y == z), (col, x, y, z)
    # per-row content
    row = a[(a.run_id == 1) & (a.engine == "mbedtls") & (a.param_bytes == 1024)].iloc[0]
    assert row.op == "sha256" and row.op_title and row.params_json == '{"bytes": 1024}'
    assert row.engine_version == "mbed TLS 2.28.3"
    assert row.device == "Test CPU 9000" and row.host_cpu_model == "Test CPU 9000"
    assert row.compiler == "gcc 12.2.0" and row.cflags == "-O2 -g" and row.harness == "cbh-host"
    assert row.throughput_bytes_per_s == pytest.approx(1024 / row.median_s)
    assert row.n == 7 and row.k == 4
    assert row.ci95_lo_s <= row.median_s <= row.ci95_hi_s
    uns = a[a.status == "unsupported"].iloc[0]
    assert pd.isna(uns.median_s) and pd.isna(uns.n) and uns.detail == "not in this library"
    x = a[a.op == "ecdh-shared-secret"].iloc[0]
    assert x.params_json == '{"curve": "x25519"}' and x.param_curve == "x25519" and pd.isna(x.param_bytes)
    assert a.param_curve.isna().sum() == 6
    assert json.loads(x.engine_conditions_json) == {"version": "1.0.18"}


@pytest.mark.slow
def test_parquet_types_metadata_and_duckdb(two_runs, tmp_path):
    db = two_runs
    out = tmp_path / "all.parquet"
    _ok(_export(db, "1-2", "--format", "parquet", "--out", str(out)))
    assert out.read_bytes()[:4] == b"PAR1"
    table = pq.read_table(out)
    schema = table.schema
    types = {name: typ for name, typ, *_ in CELL_COLUMNS}
    arrow = {"int64": "int64", "float64": "double", "string": "string", "bool": "bool"}
    for name, typ in types.items():
        assert str(schema.field(name).type) == arrow[typ], name
    assert str(schema.field("param_bytes").type) == "int64"      # ints stay ints, nulls allowed
    assert str(schema.field("param_key_bits").type) == "int64"
    meta = {k.decode(): v.decode() for k, v in schema.metadata.items()}
    assert meta["cryptobench.format"] == "cryptobench-export/1"
    assert meta["cryptobench.version"]
    assert re.match(r"\d{4}-\d\d-\d\dT", meta["cryptobench.exported"])
    assert [r["id"] for r in json.loads(meta["cryptobench.runs"])] == [1, 2]
    assert json.loads(meta["cryptobench.runs"])[1]["label"] == LABEL
    assert json.loads(meta["cryptobench.core.conditions"])["1"]["host"]["cpu"]["model"] == "Test CPU 9000"
    assert json.loads(meta["cryptobench.units"])["median_s"] == "s"

    # DuckDB reads the file directly; the medians are the stored ones
    stored = _stored_medians(db)
    rows = duckdb.sql(f"select run_id, op, params_json, engine, median_s from '{out}' "
                      "where status = 'ok' order by run_id, cell_seq").fetchall()
    assert len(rows) == len(stored) == 6
    for rid, op, params, engine, median in rows:
        assert median == stored[(rid, op, params, engine)]
    per_engine = dict(duckdb.sql(f"select engine, median(median_s) from '{out}' where run_id = 1 "
                                 "and param_bytes = 64 group by engine").fetchall())
    assert per_engine == {"openssl-hw": stored[(1, "sha256", '{"bytes": 64}', "openssl-hw")],
                          "mbedtls": stored[(1, "sha256", '{"bytes": 64}', "mbedtls")]}
    # the schema of the fixed columns does not depend on which runs are exported
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    _ok(_export(db, "1", "--format", "parquet", "--out", str(one)))
    _ok(_export(db, "2", "--format", "parquet", "--out", str(two)))
    fixed = lambda p: [(f.name, str(f.type)) for f in pq.read_schema(p) if not f.name.startswith("param_")]
    assert fixed(one) == fixed(two) == fixed(out)
    # and DuckDB can stack them
    assert duckdb.sql(f"select count(*) from read_parquet(['{one}', '{two}'], union_by_name = true)").fetchall() == [(7,)]


@pytest.mark.slow
def test_json_loads_in_pandas_and_duckdb(two_runs, tmp_path):
    out = tmp_path / "all.json"
    _ok(_export(two_runs, "1", "2", "--format", "json", "--out", str(out)))
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(doc, list) and len(doc) == 7 and all(isinstance(r, dict) for r in doc)
    assert pd.read_json(out).shape[0] == 7
    got = duckdb.sql(f"select engine, count(*) from read_json_auto('{out}') group by engine order by engine").fetchall()
    assert got == [("libsodium", 2), ("mbedtls", 2), ("openssl-hw", 3)]
    # the same keys in every record, null where a cell has nothing
    assert len({tuple(r) for r in doc}) == 1
    assert all(v is None or not isinstance(v, float) or math.isfinite(v) for r in doc for v in r.values())


@pytest.mark.slow
def test_csv_and_json_default_to_stdout(two_runs):
    proc = _ok(_export(two_runs, "1", "--format", "csv"))
    df = pd.read_csv(io.StringIO(proc.stdout))
    assert len(df) == 4 and df.columns[0] == "run_id"
    assert proc.stderr.strip() == "exported 4 rows from run 1 to stdout"
    proc = _ok(_export(two_runs, "2", "--format", "json"))
    assert [r["op"] for r in json.loads(proc.stdout)] == ["ecdh-shared-secret", "aes-gcm-encrypt", "aes-gcm-encrypt"]


@pytest.mark.e2e
def test_samples_one_row_per_sample(two_runs, tmp_path):
    db = two_runs
    out = tmp_path / "samples.parquet"
    proc = _ok(_export(db, "1", "2", "--format", "parquet", "--samples", "--out", str(out)))
    store = Store(db)
    runs = [store.load_run(1), store.load_run(2)]
    total = sum(len(c.samples or []) for r in runs for c in r.cells)
    assert total == 5 + 5 + 7 + 7 + 3 + 4
    assert proc.stderr.startswith(f"exported {total} rows from runs 1, 2 to ")
    df = pd.read_parquet(out)
    assert len(df) == total
    expected = [name for name, *_ in SAMPLE_COLUMNS]
    i = expected.index("params_json") + 1
    assert list(df.columns) == expected[:i] + ["param_aad_bytes", "param_bytes", "param_curve", "param_key_bits"] + expected[i:]
    for r in runs:
        for c in r.cells:
            if not c.samples:
                continue
            sub = df[(df.run_id == r.id) & (df.engine == c.engine) & (df.params_json == c.params.key) & (df.op == c.op)]
            assert sub["sample"].tolist() == list(range(len(c.samples)))
            assert sub[["k", "ns", "cycles"]].values.tolist() == c.samples
            assert sub["per_op_s"].tolist() == per_op_seconds(c.op, c.samples)
    # the median of the per-op seconds, in DuckDB, is the stored median
    stored = _stored_medians(db)
    for rid, op, params, engine, med in duckdb.sql(
            f"select run_id, op, params_json, engine, median(per_op_s) from '{out}' group by all").fetchall():
        assert med == pytest.approx(stored[(rid, op, params, engine)], rel=1e-12)
    # csv and json: the same rows
    for fmt, read in (("csv", pd.read_csv), ("json", pd.read_json)):
        f = tmp_path / f"samples.{fmt}"
        _ok(_export(db, "1-2", "--format", fmt, "--samples", "--out", str(f)))
        other = read(f)
        assert list(other.columns) == list(df.columns) and len(other) == total
        assert other["ns"].tolist() == df["ns"].tolist()


@pytest.mark.e2e
def test_run_selection_ranges_latest_and_duplicates(tmp_path):
    db = tmp_path / "runs.sqlite"
    for i in range(4):
        _stored_run(db, [("sha256", "openssl-hw", {"bytes": 64}, 1e-7 * (i + 1), 3)])

    def ids(*refs):
        proc = _ok(_export(db, *refs, "--format", "json"))
        return [r["run_id"] for r in json.loads(proc.stdout)]

    assert ids("2-4") == [2, 3, 4]
    assert ids("latest") == [4]
    assert ids("3-latest") == [3, 4]
    assert ids("2", "1-3", "latest", "2") == [2, 1, 3, 4]       # order kept, duplicates dropped
    assert ids("1,3") == [1, 3]
    assert ids("4", "latest") == [4]
    _one_line_error(_export(db, "2", "9", "--format", "csv"), "no run 9")
    _one_line_error(_export(db, "3-6", "--format", "csv"), "no run 5")
    _one_line_error(_export(db, "4-2", "--format", "csv"), "4-2")
    _one_line_error(_export(db, "first", "--format", "csv"), "'first'")
    # a store that does not exist is not made by a reader (test_untrusted_store.py); an empty one has no runs
    _one_line_error(_export(tmp_path / "empty.sqlite", "latest", "--format", "csv"), "no such store")
    assert not (tmp_path / "empty.sqlite").exists()
    Store(tmp_path / "empty.sqlite").close()
    _one_line_error(_export(tmp_path / "empty.sqlite", "latest", "--format", "csv"), "no runs")


@pytest.mark.e2e
def test_errors_and_atomic_writes(two_runs, tmp_path):
    db = two_runs
    _one_line_error(_export(db, "1", "--format", "parquet"), "--out")
    out = tmp_path / "keep.csv"
    out.write_text("precious\n")
    _one_line_error(_export(db, "1", "--format", "csv", "--out", str(out)), "exists; give --force")
    _one_line_error(_export(db, "1", "7", "--format", "csv", "--out", str(out), "--force"), "no run 7")
    assert out.read_text() == "precious\n"
    _one_line_error(_export(db, "1", "--format", "json", "--out", str(tmp_path / "nodir" / "x.json")), "nodir")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.csv", "runs.sqlite"]
    # --out - pipes parquet when stdout is not a terminal
    proc = subprocess.run([sys.executable, "-m", "cryptobench.cli", "export", "1", "--db", str(db), "--format",
                           "parquet", "--out", "-"], capture_output=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout[:4] == b"PAR1"
    assert pq.read_table(io.BytesIO(proc.stdout)).num_rows == 4


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_parquet_never_goes_to_a_terminal(two_runs):
    args = Namespace(run_ids=["1"], format="parquet", out="-", samples=False, db=str(two_runs))
    with pytest.raises(UsageError, match="terminal"):
        cmd_export(args, _Tty())


def test_a_failed_write_leaves_no_file(two_runs, tmp_path, monkeypatch):
    out = tmp_path / "x.parquet"

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    args = Namespace(run_ids=["1"], format="parquet", out=str(out), samples=False, db=str(two_runs))
    with pytest.raises(UsageError, match="No space left"):
        cmd_export(args, io.StringIO())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite"]


@pytest.mark.slow
def test_label_with_markup_and_unicode_survives_every_format(two_runs, tmp_path):
    for fmt, read in (("parquet", pd.read_parquet), ("csv", pd.read_csv), ("json", pd.read_json)):
        f = tmp_path / f"l.{fmt}"
        _ok(_export(two_runs, "2", "--format", fmt, "--out", str(f)))
        df = read(f)
        assert set(df.run_label) == {LABEL}, fmt
    got = duckdb.sql(f"select distinct run_label from '{tmp_path / 'l.parquet'}'").fetchall()
    assert got == [(LABEL,)]
    proc = _ok(_export(two_runs, "2", "--format", "json"))
    assert json.loads(proc.stdout)[0]["run_label"] == LABEL


def _energy_cell(seq_t, energy):
    op, params = "sha256", {"bytes": 4096}
    samples = _samples(seq_t, 5)
    result = derive(op, params, samples, {"counter": "tsc"}, False)
    result["energy"] = energy
    return {"op": op, "params": params, "engine": "openssl-hw", "target": "host", "provenance": "measured",
            "status": "ok", "kat": "pass", "detail": "", "samples": samples, "result": result}


@pytest.mark.e2e
def test_energy_parallel_and_microcontroller_columns(tmp_path):
    db = tmp_path / "runs.sqlite"
    energy = {"per_op_j": 3.1e-7, "provenance": "measured", "meter": {"name": "rapl", "domain": "package"},
              "stats": {"median": 3.1e-7, "rsd_pct": 2.5, "n": 5}, "idle_power_w": 11.8,
              "gross_per_op_j": 3.0e-6, "uncertainty_per_op_j": 4e-8, "flags": ["few-windows"],
              "avg_power_w": 1.1, "energy_per_byte_j": 7.5e-11, "mJ_per_Mb": 0.0094, "fom": 12.0,
              "supplies": {"main": {"median_j": 1e-7, "share_pct": 30.0}}}
    _stored_run(db, [_energy_cell(1e-6, energy)])
    _stored_run(db, [_parallel_cell()])           # a scaling cell
    # a simulated microcontroller cell
    mcu_cond = {"host": {"cpu": {"model": "Host CPU"}},
                "target": {"kind": "sim", "board": "sim-ideal", "core": "cortex-m4", "device": "stm32f4",
                           "clock_hz": 48000000, "opt": "Os", "timing": "simulated"},
                "builds": {"mbedtls": {"compiler": "arm-none-eabi-gcc 12.2.1", "cflags": "-mcpu=cortex-m4 -Os",
                                       "library_version": "2.28.10"}}}
    params = {"bytes": 64}
    samples = [[1, 80000, 3840]] * 3
    result = derive("sha256", params, samples, {"counter": "model"}, True)
    result.update(stack_bytes=508, heap_bytes=0, code_size={"flash_bytes": 2240, "ram_bytes": 12}, cycles_overhead=9)
    _stored_run(db, [{"op": "sha256", "params": params, "engine": "mbedtls", "target": "sim:cortex-m4:stm32f4",
                      "provenance": "simulated", "status": "ok", "kat": "pass", "detail": "", "samples": samples,
                      "result": result}], conditions=mcu_cond)
    out = tmp_path / "x.parquet"
    _ok(_export(db, "1-3", "--format", "parquet", "--out", str(out)))
    df = pd.read_parquet(out, dtype_backend="pyarrow")
    e, p, m = (df[df.run_id == i].iloc[0] for i in (1, 2, 3))
    assert e.energy_per_op_j == 3.1e-7 and e.energy_meter == "rapl" and e.energy_idle_power_w == 11.8
    assert e.energy_rsd_pct == 2.5 and e.energy_windows == 5 and e.energy_flags == "few-windows"
    assert e.energy_mj_per_mbit == 0.0094 and e.energy_gross_per_op_j == 3.0e-6
    assert json.loads(e.energy_supplies_json) == {"main": {"median_j": 1e-7, "share_pct": 30.0}}
    assert pd.isna(p.energy_per_op_j)
    assert p.parallel_n == 2 == p.param_parallel and p.parallel_cpus == "0 1" and p.parallel_pinned
    assert p.parallel_aggregate_per_s == 9.9e8 and p.parallel_aggregate_ci95_lo_per_s == 9.5e8
    assert p.parallel_efficiency_ci95_hi == 0.95 and p.parallel_overhead_s == pytest.approx(5e-5)
    assert p.parallel_flags == "smt-siblings" and not p.parallel_oversubscribed
    assert m.device == "stm32f4" and m.target_board == "sim-ideal" and m.target_core == "cortex-m4"
    assert m.compiler == "arm-none-eabi-gcc 12.2.1" and m.cflags == "-mcpu=cortex-m4 -Os"
    assert m.engine_version == "2.28.10" and m.stack_bytes == 508 and m.code_flash_bytes == 2240
    assert m.code_ram_bytes == 12 and m.heap_bytes == 0 and m.cycles_per_op == 3840 and m.cycle_counter == "model"
    assert m.target_clock_hz == 48e6 and m.clock == "simulated" and m.host_cpu_model == "Host CPU"
    assert pd.isna(m.harness)
    # a trace import (real command, no harness needed): energy with supplies and a per-window interval
    from cryptobench.targets.trace import synth
    plan = synth.PulsePlan(n=8, width_s=2e-3, gap_s=1e-3, high_a=0.012, low_a=0.002, dt=1e-5,
                           second=synth.Supply(name="se", high_a=0.030, low_a=0.0002, v=1.8))
    trace = tmp_path / "trace.csv"
    opts = synth.write_generic_csv(trace, plan)
    imp = ["energy", "import", str(trace), "--db", str(db), "--format", "generic-csv", "--op", "ecdsa-sign",
           "--engine", "se-like"]
    for k, v in opts.items():
        imp += ["--option", f"{k}={v}"]
    _ok(cli(*imp))
    proc = _ok(_export(db, "latest", "--format", "json"))
    (row,) = json.loads(proc.stdout)
    stored = Store(db).load_run(4).cells[0].energy
    assert row["energy_per_op_j"] == stored.per_op_j and row["energy_windows"] == 8
    assert row["energy_ci95_lo_j"] <= row["energy_per_op_j"] <= row["energy_ci95_hi_j"]
    assert set(json.loads(row["energy_supplies_json"])) == {"main", "se"}
    assert row["param_curve"] == "p256" and row["target"].startswith("trace:")


def _parallel_cell():
    params = {"bytes": 1024, "parallel": 2}
    samples = _samples(2e-6, 6)
    result = derive("sha256", params, samples, {"counter": "tsc"}, False)
    result["parallel"] = {"n": 2, "cpus": [0, 1], "oversubscribed": False, "pinned": True, "unit": "bytes",
                          "units_per_op": 1024.0, "rounds": 3, "overhead_ns": 50000, "exec_time_s": 0.2,
                          "aggregate": 9.9e8, "aggregate_ci95": [9.5e8, 1.01e9], "per_core": 4.95e8,
                          "efficiency": 0.9, "efficiency_ci95": [0.85, 0.95], "flags": ["smt-siblings"]}
    return {"op": "sha256", "params": params, "engine": "openssl-hw", "target": "host", "provenance": "measured",
            "status": "ok", "kat": "pass", "detail": "", "samples": samples, "result": result}


@pytest.mark.e2e
def test_show_csv_and_export_csv_share_column_names_and_values(two_runs):
    """One CSV column set: every column `show --format csv` prints is an export column, and for
    the same run the two commands write the same text in it, row by row."""
    from cryptobench.report.tables import CSV_COLUMNS, ENERGY_CSV_COLUMNS, PARALLEL_CSV_COLUMNS
    export_names = [name for name, *_ in CELL_COLUMNS]
    assert set(CSV_COLUMNS + ENERGY_CSV_COLUMNS + PARALLEL_CSV_COLUMNS) <= set(export_names)
    energy = {"per_op_j": 3.1e-7, "provenance": "measured", "stats": {"median": 3.1e-7, "rsd_pct": 2.5, "n": 5},
              "idle_power_w": 11.8, "gross_per_op_j": 3.0e-6, "flags": ["few-windows"]}
    _stored_run(two_runs, [_energy_cell(1e-6, energy)])                      # run 3: energy columns
    _stored_run(two_runs, [_parallel_cell()])                                # run 4: scaling columns
    seen = set()
    for rid in ("1", "2", "3", "4"):
        shown = _ok(cli("show", rid, "--db", str(two_runs), "--format", "csv")).stdout
        shown = list(csv.DictReader(io.StringIO(shown)))
        exported = list(csv.DictReader(io.StringIO(_ok(_export(two_runs, rid, "--format", "csv")).stdout)))
        assert len(shown) == len(exported) > 0
        names = list(shown[0])
        assert names[:4] == ["run_id", "op", "params_json", "engine"] and set(names) <= set(exported[0])
        for s_row, e_row in zip(shown, exported):
            assert s_row == {n: e_row[n] for n in names}, rid
        seen |= set(names)
    assert {"energy_idle_power_w", "parallel_efficiency", "throughput_bytes_per_s"} <= seen
    assert shown[0]["parallel_oversubscribed"] == "false" and shown[0]["parallel_cpus"] == "0 1"


def test_build_table_types_params_by_their_values():
    cells = [Cell(op="sha256", params=Params(bytes=64, mode="a", ratio=1), engine="e", status=FAILED, kat="fail",
                  detail=None, seq=0),
             Cell(op="no-such-op", params=Params({"ratio": 0.5, "Odd Name": True}), engine="e", status=FAILED,
                  kat="fail", detail="", seq=1)]
    run = Run(id=1, created="t", finished=None, status="complete", suite=None, plan=Plan(), conditions=Conditions(),
              cells=cells)
    columns, rows = build_table([run])
    types = dict(columns)
    assert types["param_bytes"] == "int64" and types["param_mode"] == "string"
    assert types["param_ratio"] == "float64" and types["param_odd_name"] == "bool"
    assert rows[0]["param_ratio"] == 1.0 and isinstance(rows[0]["param_ratio"], float)
    assert rows[1]["op_title"] is None and rows[1]["detail"] is None and rows[1]["param_bytes"] is None
    run.cells[1].params = Params()
    columns, rows = build_table([run])
    assert rows[1]["params_json"] == "{}" and rows[1]["param_mode"] is None


def test_docs_describe_every_column():
    doc = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    for name, *_ in CELL_COLUMNS + SAMPLE_COLUMNS:
        assert f"`{name}`" in doc, name


@pytest.mark.e2e
def test_a_real_run_exports_its_conditions(tmp_path, harness):
    db = tmp_path / "runs.sqlite"
    _ok(cli("run", "--db", str(db), "--quiet", "--op", "sha256", "--param", "bytes=64,1024", "--engine", "openssl-hw",
            "--engine", "openssl-sw", "--repeat", "3", "--min-time", "0.001", "--label", LABEL))
    out = tmp_path / "r.parquet"
    _ok(_export(db, "latest", "--format", "parquet", "--out", str(out)))
    stored = Store(db).load_run(1)
    cond = stored.conditions
    df = pd.read_parquet(out)
    assert len(df) == len(stored.cells) == 4
    assert set(df.compiler) == {cond.harness["compiler"]} and set(df.cflags) == {cond.harness["cflags"]}
    assert set(df.device) == {cond.host["cpu"]["model"]}
    assert set(df.engine_version) == {cond.engines["openssl-hw"]["version"]}
    assert set(df.run_label) == {LABEL}
    for c in stored.cells:
        got = duckdb.sql(f"select median_s, cycles_per_op from '{out}' where engine = '{c.engine}' "
                         f"and param_bytes = {c.params['bytes']}").fetchall()
        assert got == [(c.result.time_s["median"], c.result.cycles["per_op_median"])]

"""`cryptobench export --format bencher | github-action-benchmark` (report/export_ci.py): the output is
validated against JSON Schemas written from the formats' documentation, and its values against the
stored run they came from (a simulated target and a host run); a failed cell is left out and named
on stderr."""
from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import cli
from cryptobench.core.records import Cell, Params
from cryptobench.report.export_ci import benchmark_name
from cryptobench.store.database import Store
from storeutil import save_cell_at, stored_run

# Bencher Metric Format, as bencher.dev/docs/reference/bencher-metric-format publishes its JSON Schema
# (benchmark -> measure -> metric, `value` required, `lower_value` / `upper_value` optional numbers),
# with what cryptobench adds to it: no other key in a metric, and the bounds given together.
BMF_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "patternProperties": {".+": {
        "type": "object",
        "minProperties": 1,
        "patternProperties": {".+": {
            "type": "object",
            "properties": {"value": {"type": "number"}, "lower_value": {"type": "number"},
                           "upper_value": {"type": "number"}},
            "required": ["value"],
            "additionalProperties": False,
            "dependencies": {"lower_value": ["upper_value"], "upper_value": ["lower_value"]},
        }},
    }},
    "additionalProperties": False,
}

# github-action-benchmark's customSmallerIsBetter input: the action's BenchmarkResult (src/extract.ts:
# name, value, unit required; range and extra optional strings), as a JSON array.
GAB_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "unit": {"type": "string"},
                       "value": {"type": "number"}, "range": {"type": "string", "pattern": "^± "},
                       "extra": {"type": "string"}},
        "required": ["name", "unit", "value"],
        "additionalProperties": False,
    },
}

SIM = {"kind": "sim", "core": "cortex-m4", "device": "stm32f407", "clock_hz": 168e6}
SIM_CELLS = [("sha256", "mbedtls", {"bytes": 1024}, 2e-5),
             ("aes-gcm-encrypt", "mbedtls", {"bytes": 64, "key_bits": 128, "aad_bytes": 0}, 1e-6)]
ENERGY = {"per_op_j": 1e-6, "provenance": "measured", "ci95": [0.9e-6, 1.1e-6]}


def _export(db, run, fmt, *more):
    return cli("export", str(run), "--format", fmt, "--db", str(db), *more)


@pytest.fixture
def sim_run(db):
    run = stored_run(db, SIM_CELLS, target=SIM)
    failed = {"op": "sha512", "params": {"bytes": 64}, "engine": "mbedtls", "target": "sim",
              "provenance": "simulated", "status": "failed", "kat": "fail", "detail": "output mismatch",
              "samples": None, "result": None}
    store = Store(db)
    save_cell_at(store, run.id, len(SIM_CELLS), failed)
    store.close()
    return Store(db).load_run(run.id)


@pytest.fixture
def host_run(db):
    return stored_run(db, [("sha256", "openssl", {"bytes": 1024}, 2e-6)], extra=lambda *a: {"energy": ENERGY})


def test_bencher_simulated_run_is_bmf_with_exact_values_and_no_interval(db, sim_run):
    p = _export(db, sim_run.id, "bencher")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, BMF_SCHEMA)
    assert set(doc) == {"sha256/bytes=1024/mbedtls/sim", "aes-gcm-encrypt/key_bits=128/bytes=64/aad_bytes=0/mbedtls/sim"}
    for (op, engine, params, t), cell in zip(SIM_CELLS, sim_run.cells):
        m = doc[benchmark_name(cell)]
        assert set(m) == {"latency", "cycles", "stack-bytes", "code-bytes"}
        assert m["cycles"]["value"] == pytest.approx(cell.result.cycles["per_op_median"])
        assert m["cycles"]["value"] == pytest.approx(t * SIM["clock_hz"])
        assert m["latency"]["value"] == pytest.approx(cell.result.time_s["median"] * 1e9)
        assert m["stack-bytes"] == {"value": 600} and m["code-bytes"] == {"value": 2000}
        assert all("lower_value" not in v for v in m.values())       # deterministic: no band
    # the failed cell: not in the JSON, named on stderr in one line
    assert not any(k.startswith("sha512") for k in doc)
    left = [line for line in p.stderr.splitlines() if line.startswith("left out")]
    assert left == [f"left out (run {sim_run.id}, failed): sha512 bytes=64 mbedtls sim: output mismatch"]


def test_bencher_host_run_has_the_repeat_interval_and_energy(db, host_run):
    p = _export(db, host_run.id, "bencher")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, BMF_SCHEMA)
    m = doc["sha256/bytes=1024/openssl/host"]
    value, (lo, hi), _ = host_run.cells[0].reported_time()
    assert m["latency"] == pytest.approx({"value": value * 1e9, "lower_value": lo * 1e9, "upper_value": hi * 1e9})
    assert m["latency"]["lower_value"] < m["latency"]["value"] < m["latency"]["upper_value"]
    assert m["energy-joules"] == pytest.approx({"value": 1e-6, "lower_value": 0.9e-6, "upper_value": 1.1e-6})
    assert "cycles" not in m          # tsc ticks are time at a fixed rate, not the core's cycles


def test_github_action_benchmark_entries_per_cell_and_measure(db, sim_run, host_run):
    sim = _export(db, sim_run.id, "github-action-benchmark")
    host = _export(db, host_run.id, "github-action-benchmark")
    assert sim.returncode == 0 and host.returncode == 0, sim.stderr + host.stderr
    sim_doc, host_doc = json.loads(sim.stdout), json.loads(host.stdout)
    jsonschema.validate(sim_doc, GAB_SCHEMA)
    jsonschema.validate(host_doc, GAB_SCHEMA)
    by_name = {e["name"]: e for e in sim_doc}
    assert len(by_name) == len(sim_doc) == 2 * 4          # unique names: 2 ok cells × 4 measures
    cyc = by_name["sha256/bytes=1024/mbedtls/sim (cycles)"]
    assert cyc["unit"] == "cycles" and cyc["value"] == pytest.approx(2e-5 * 168e6) and "range" not in cyc
    assert "provenance: simulated" in cyc["extra"] and "clock: 168 MHz" in cyc["extra"]
    assert by_name["sha256/bytes=1024/mbedtls/sim (stack-bytes)"]["unit"] == "bytes"
    assert not any(e["name"].startswith("sha512") for e in sim_doc)
    (lat,) = [e for e in host_doc if e["name"] == "sha256/bytes=1024/openssl/host (latency)"]
    value, (lo, hi), estimator = host_run.cells[0].reported_time()
    assert lat["unit"] == "ns" and lat["value"] == pytest.approx(value * 1e9)
    half = float(lat["range"].removeprefix("± "))
    assert half == pytest.approx(max(value - lo, hi - value) * 1e9, rel=1e-5)
    assert "provenance: measured" in lat["extra"] and f"estimator: {estimator}" in lat["extra"]
    assert "device: Test CPU" in lat["extra"]


def test_names_follow_the_catalog_order_and_the_cell_target():
    cell = Cell(op="aes-gcm-encrypt", params=Params({"aad_bytes": 16, "bytes": 64, "key_bits": 256}),
                engine="mbedtls", target="sim:cortex-m4:stm32f407")
    assert benchmark_name(cell) == "aes-gcm-encrypt/key_bits=256/bytes=64/aad_bytes=16/mbedtls/sim:cortex-m4:stm32f407"


def test_control_characters_in_names_are_shown_not_sent(db):
    run = stored_run(db, [("sha256", "evil\x1b]0;pwned\x07", {"bytes": 64}, 1e-6)])
    for fmt in ("bencher", "github-action-benchmark"):
        p = _export(db, run.id, fmt)
        assert p.returncode == 0, p.stderr
        assert "\x1b" not in p.stdout and "\x07" not in p.stdout
        text = json.dumps(json.loads(p.stdout))
        assert "evil\\\\x1b]0;pwned\\\\x07" in text


def test_the_same_cell_in_two_runs_is_refused(db):
    a = stored_run(db, [("sha256", "openssl", {"bytes": 64}, 1e-6)])
    b = stored_run(db, [("sha256", "openssl", {"bytes": 64}, 1e-6)])
    p = cli("export", str(a.id), str(b.id), "--format", "bencher", "--db", str(db))
    assert p.returncode == 2 and p.stdout == ""
    assert f"sha256/bytes=64/openssl/host is in runs {a.id} and {b.id}" in p.stderr


def test_samples_and_out_file(db, host_run, tmp_path):
    p = _export(db, host_run.id, "bencher", "--samples")
    assert p.returncode == 2 and "--samples" in p.stderr
    out = tmp_path / "bmf.json"
    p = _export(db, host_run.id, "bencher", "--out", str(out))
    assert p.returncode == 0 and p.stdout == ""
    jsonschema.validate(json.loads(out.read_text()), BMF_SCHEMA)


@pytest.mark.slow
def test_a_real_simulated_run_exports_its_exact_figures(db):
    """The simulator really run (sim:cortex-m4 on the STM32F407's profile): the names carry the
    cell's target, the figures are the stored cell's, the instructions are there and nothing has a band."""
    run = cli("run", "--target", "sim:cortex-m4", "--device", "stm32f407", "--op", "sha256", "--param", "bytes=64",
              "--engine", "mbedtls", "--db", str(db), "--quiet")
    assert run.returncode == 0, run.stderr
    cell = Store(db).load_run(1).cells[0]
    bmf = json.loads(_export(db, 1, "bencher").stdout)
    jsonschema.validate(bmf, BMF_SCHEMA)
    m = bmf["sha256/bytes=64/mbedtls/sim:cortex-m4:stm32f407"]
    assert m == {"latency": {"value": pytest.approx(cell.result.time_s["median"] * 1e9)},
                 "cycles": {"value": cell.result.cycles["per_op_median"]},
                 "instructions": {"value": cell.result.sim["instructions_per_op"]},
                 "stack-bytes": {"value": cell.result.stack_bytes},
                 "code-bytes": {"value": cell.result.code_size["flash_bytes"]}}
    gab = json.loads(_export(db, 1, "github-action-benchmark").stdout)
    jsonschema.validate(gab, GAB_SCHEMA)
    assert len(gab) == 5 and not any("range" in e for e in gab)
    assert all("cycle counter: model" in e["extra"] and "simulator error band: " in e["extra"] for e in gab)

"""`cryptobench compare`: a stored run beside a published reference, joined on op and parameters,
common units, ratios, per-cycle figures where both sides have a clock, unmatched rows listed."""
import json

import pytest

from conftest import cli

from cryptobench.analysis.compare import compare, tables
from cryptobench.references import load_reference
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from cryptobench.core.records import Plan
from storeutil import save_cell_at

REF = """
[reference]
name = "mini"
title = "A two-table study"
document = "Test document"
seed = "none"

[[source]]
id = "hw"
engine_kind = "on-chip accelerator"
engine = "AES engine"
device = "MCU"
clock_hz = 48000000

[[source]]
id = "sw"
engine_kind = "sw library"
engine = "mbed TLS 2.7.9"
device = "MCU"
clock_hz = 48000000

[[row]]
table = "Table 1"
label = "SHA-256 64 B"
op = "sha256"
params = { bytes = 64 }
source = "hw"
metric = "duration"
value = 20.0
unit = "us"

[[row]]
table = "Table 1"
label = "SHA-256 64 B"
op = "sha256"
params = { bytes = 64 }
source = "sw"
metric = "duration"
value = 100.0
unit = "us"

[[row]]
table = "Table 1"
label = "SHA-256 8000 B"
op = "sha256"
params = { bytes = 8000 }
source = "sw"
metric = "duration"
value = 4.0
unit = "ms"

[[row]]
table = "Table 1"
label = "SHA-256 64 B improvement"
op = "sha256"
params = { bytes = 64 }
source = "hw"
metric = "duration_improvement"
value = 5.0
unit = "x"
derived = "t_sw / t_hw"

[[row]]
table = "Table 2"
label = "throughput 1 KiB"
op = "sha256"
params = { bytes = 1024 }
source = "sw"
metric = "throughput"
value = 500.0
unit = "KB/s"
"""


def _stored_run(db, cells, target=None, extra=None):
    store = Store(db)
    plan = {"suite": None, "baseline": None, "options": {"engines": sorted({c[1] for c in cells}), "repeat": 3},
            "groups": []}
    cond = {"host": {}}
    if target:
        cond["target"] = target
    rid = store.create_run(Plan.from_json({**plan, "suite": None}), cond)
    for seq, (op, engine, params, t) in enumerate(cells):
        samples = [[1, int(t * 1e9), 0]] * 3
        save_cell_at(store, rid, seq, {"op": op, "params": params, "engine": engine, "target": "host",
                                   "provenance": "measured", "status": "ok", "kat": "pass", "detail": "",
                                   "samples": samples, "result": {**derive(op, params, samples, {}, True),
                                                                  **(extra or {}).get(engine, {})}})
    store.set_status(rid, "complete")
    return store.load_run(rid)


def test_compare_joins_converts_and_lists_the_unmatched(tmp_path):
    ref_path = tmp_path / "mini.toml"
    ref_path.write_text(REF)
    ref = load_reference(ref_path)
    run = _stored_run(tmp_path / "r.sqlite", [("sha256", "openssl-hw", {"bytes": 64}, 2e-6),
                                              ("sha256", "mbedtls", {"bytes": 64}, 5e-6),
                                              ("sha256", "mbedtls", {"bytes": 1024}, 1e-3),
                                              ("sha256", "mbedtls", {"bytes": 16}, 1e-6)])
    doc = compare(run, ref)
    assert doc["against"] == "sw"                       # the study's software library by default
    g = next(g for g in doc["groups"] if g["params"] == {"bytes": 64})
    assert g["published"] == {"hw": pytest.approx(20e-6), "sw": pytest.approx(100e-6)}
    assert g["ratio"]["openssl-hw"] == pytest.approx(0.02) and g["ratio"]["mbedtls"] == pytest.approx(0.05)
    thr = next(g for g in doc["groups"] if g["metric"] == "throughput")
    assert thr["published"]["sw"] == pytest.approx(500e3) and thr["yours"]["mbedtls"] == pytest.approx(1.024e6)
    assert [u["label"] for u in doc["unmatched_published"]] == ["SHA-256 8000 B"]
    assert [u["params"] for u in doc["unmatched_yours"]] == [{"bytes": 16}]
    assert doc["not_comparable"][0]["metric"] == "duration_improvement"
    t = tables(doc)
    assert t[0].headers[:4] == ["operation", "parameters", "published hw (µs)", "published sw (µs)"]
    assert "cycles" not in " ".join(t[0].headers)  # the host's TSC is not a core clock
    assert compare(run, ref, "hw")["groups"][0]["ratio"]["openssl-hw"] == pytest.approx(0.1)


BAND = {"engine": "cc26x2-crypto", "class": "sha-2", "model": "cc26x2-crypto v1", "pct": 56.0, "rows": 6,
        "median_ratio": 0.84, "against": "TI SWRA667 Tables 10, 11", "source": "bench/accel_vs_published --write-bands"}


def test_a_modelled_engine_is_divided_by_the_published_hardware_and_carries_its_band(tmp_path):
    ref_path = tmp_path / "mini.toml"
    ref_path.write_text(REF)
    run = _stored_run(tmp_path / "r.sqlite", [("sha256", "cc26x2-crypto", {"bytes": 64}, 10e-6),
                                              ("sha256", "mbedtls", {"bytes": 64}, 50e-6)],
                      extra={"cc26x2-crypto": {"engine_band": BAND}})
    doc = compare(run, load_reference(ref_path))
    assert doc["against_of"] == {"cc26x2-crypto": "hw", "mbedtls": "sw"}
    g = next(g for g in doc["groups"] if g["params"] == {"bytes": 64})
    assert g["ratio"]["cc26x2-crypto"] == pytest.approx(10e-6 / 20e-6)      # modeled / published hw
    assert g["ratio"]["mbedtls"] == pytest.approx(50e-6 / 100e-6)           # simulated / published sw
    table = tables(doc)[0]
    assert "cc26x2-crypto / published hw" in table.headers and "mbedtls / published sw" in table.headers
    assert any(n.startswith("cc26x2-crypto: modeled, ±56 % against TI SWRA667 Tables 10, 11") for n in table.notes)
    chosen = compare(run, load_reference(ref_path), "sw")                  # --against: every engine by it
    assert chosen["against_of"] == {"cc26x2-crypto": "sw", "mbedtls": "sw"}


def test_per_cycle_figures_when_both_sides_have_a_clock(tmp_path):
    ref_path = tmp_path / "mini.toml"
    ref_path.write_text(REF)
    run = _stored_run(tmp_path / "r.sqlite", [("sha256", "mbedtls", {"bytes": 64}, 50e-6)],
                      target={"kind": "sim", "clock_hz": 64000000})
    doc = compare(run, load_reference(ref_path))
    g = doc["groups"][0]
    assert g["published_cycles"]["sw"] == pytest.approx(4800) and g["your_cycles"]["mbedtls"] == pytest.approx(3200)
    assert g["cycle_ratio"]["mbedtls"] == pytest.approx(3200 / 4800)
    assert any("cycles" in c for c in tables(doc)[0].headers)


@pytest.mark.e2e
def test_compare_cli_and_errors(tmp_path):
    ref_path = tmp_path / "mini.toml"
    ref_path.write_text(REF)
    db = tmp_path / "r.sqlite"
    _stored_run(db, [("sha256", "mbedtls", {"bytes": 64}, 5e-6)])
    r = cli("compare", "latest", "--reference", str(ref_path), "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "published sw" in r.stdout and "mbedtls / published sw" in r.stdout and "SHA-256 8000 B" in r.stdout
    j = json.loads(cli("compare", "latest", "--reference", str(ref_path), "--db", str(db), "--format", "json").stdout)
    assert j["reference"]["provenance"] == "published"
    bad = cli("compare", "latest", "--reference", "no-such-study", "--db", str(db))
    assert bad.returncode == 2 and "unknown reference" in bad.stderr
    bad = cli("compare", "latest", "--reference", str(ref_path), "--against", "nope", "--db", str(db))
    assert bad.returncode == 2 and "has no source 'nope'" in bad.stderr


def test_a_ratio_a_modelled_engine_enters_carries_the_two_cells_bands_added():
    from cryptobench.report.verdicts import improvement_text
    from cryptobench.stats.results import ratio_band
    sw = {"error_band": {"pct": 7.0}}
    hw = {"error_band": {"pct": 7.0}, "engine_band": {"pct": 74.0}}
    assert ratio_band(sw, hw) == {"pct": 81.0, "text": "±81 % (the two cells' bands added)"}
    assert ratio_band(sw, {"engine_band": {"unvalidated": True}})["unvalidated"]
    assert ratio_band(sw, sw) is None                     # two simulated software cells: no combined band
    assert ratio_band({}, {}) is None                     # measured host cells: their interval says it
    comp = {"duration_improvement": 5.71, "ci95": [5.70, 5.72], "band": ratio_band(sw, hw)}
    assert improvement_text(comp) == "5.710 [5.700–5.720] ±81 %"
    assert improvement_text({**comp, "band": {"unvalidated": True}}).endswith(" unvalidated")

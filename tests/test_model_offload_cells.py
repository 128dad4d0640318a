"""`model offload RUN`: the accelerator against software over a stored run's cells (issue 34 item 5):
the fits, the crossover, the interrupt's latency, errors, the JSON and the figure."""
from __future__ import annotations

import json

import pytest

from conftest import cli
from cryptobench.analysis.models.offload_cells import RETURN_CYCLES, interrupt_latency, offload_view
from cryptobench.core.records import Plan
from cryptobench.targets.mcu.sim.exceptions import ENTRY_CYCLES
from storeutil import save_cell_at

LENGTHS = (16, 64, 256, 1024, 4096)
CLOCK = 48e6
# HW: 30 µs set-up + 0.5 µs per block; SW: 10 µs + 2 µs per block -> equal at 20 / 1.5 blocks = 213.33 B
HW, SW = (30e-6, 0.5e-6), (10e-6, 2e-6)


def _line(setup, per_block, lengths=LENGTHS):
    return [{"x": float(n), "y": setup + per_block * n / 16} for n in lengths]


def _store(db, engines=(("hw", HW), ("sw", SW)), target=True, watts=None, builds=None):
    """A complete stored run of aes-cbc-encrypt cells on a simulated cc2652 (cortex-m4 at 48 MHz)."""
    from cryptobench.store.database import Store
    store = Store(db)
    names = [e for e, _ in engines]
    plan = {"suite": None, "baseline": None, "options": {"engines": names, "repeat": 2}, "groups": []}
    cond = {"host": {}, "harness": {}, "engines": {}}
    if builds:
        cond["builds"] = builds
    if target:
        cond["target"] = {"kind": "sim", "core": "cortex-m4", "device": "cc2652", "clock_hz": CLOCK}
    rid = store.create_run(Plan.from_json(plan), cond)
    seq = 0
    for engine, (a, b) in engines:
        for n in LENGTHS:
            t = a + b * n / 16
            result = {"n": 2, "k": 1, "single_shot": True,
                      "time_s": {"median": t, "mean": t, "stdev": 0.0, "rsd_pct": 0.0, "min": t, "max": t,
                                 "ci95": [t, t], "ci_coverage": 0.5}, "outliers": 0, "ops_per_s": 1 / t, "flags": []}
            if watts is not None:
                result["energy"] = {"per_op_j": t * watts, "provenance": "modeled", "flags": []}
            save_cell_at(store, rid, seq, {"op": "aes-cbc-encrypt", "params": {"key_bits": 128, "bytes": n},
                                           "engine": engine, "target": "sim:cortex-m4:cc2652",
                                           "provenance": "simulated", "status": "ok", "kat": "pass",
                                           "detail": "synthetic", "samples": [[1, int(t * 1e9), 0]] * 2,
                                           "result": result})
            seq += 1
    store.set_status(rid, "complete")
    store.close()
    return rid


def test_the_fits_recover_the_exact_lines():
    v = offload_view(_line(*SW), _line(*HW), 16, None, "polling")
    for role, (a, b) in (("sw", SW), ("hw", HW)):
        assert v["fits"][role]["setup_s"] == pytest.approx(a, rel=1e-12)
        assert v["fits"][role]["per_block_s"] == pytest.approx(b, rel=1e-12)
        assert v["fits"][role]["rms_residual_s"] == pytest.approx(0.0, abs=1e-18)


def test_the_crossover_from_the_fits_and_the_swept_sizes():
    v = offload_view(_line(*SW), _line(*HW), 16, None, "polling")
    cx = v["crossover"]
    assert cx["status"] == "from" and cx["bytes_exact"] == pytest.approx(20 / 1.5 * 16)
    assert cx["first_payload"] == 224                       # the first whole block above 213.3 B
    assert v["first_swept_win_bytes"] == 256                # 16 and 64 B: SW faster; from 256 B on: HW
    assert [r["hw_wins"] for r in v["rows"]] == [False, False, True, True, True]
    # HW faster per block and to set up: it wins at every length; slower per block and to set up: never
    assert offload_view(_line(20e-6, 1e-6), _line(5e-6, 0.1e-6), 16, None, "polling")["crossover"]["status"] == "always"
    assert offload_view(_line(5e-6, 0.1e-6), _line(20e-6, 1e-6), 16, None, "polling")["crossover"]["status"] == "never"


def test_interrupt_completion_adds_exactly_the_entry_and_return_cycles():
    lat = interrupt_latency("cortex-m4", CLOCK)
    assert lat["cycles"] == ENTRY_CYCLES["cortex-m4"] + RETURN_CYCLES
    assert lat["seconds"] == pytest.approx(lat["cycles"] / CLOCK)
    poll = offload_view(_line(*SW), _line(*HW), 16, lat, "polling")
    intr = offload_view(_line(*SW), _line(*HW), 16, lat, "interrupt")
    for p, i in zip(poll["rows"], intr["rows"]):
        assert i["hw_s"] - p["hw_s"] == pytest.approx(lat["cycles"] / CLOCK, rel=1e-9)
        assert p["hw_interrupt_s"] == i["hw_interrupt_s"]
    assert intr["crossover"]["bytes_exact"] == pytest.approx((20e-6 + lat["seconds"]) / 1.5e-6 * 16)
    with pytest.raises(ValueError, match="core"):
        interrupt_latency("cortex-a53", CLOCK)


@pytest.mark.e2e
def test_cli_table_and_json_over_a_stored_run(tmp_path):
    db = tmp_path / "r.sqlite"
    _store(db, watts=10e-3)
    p = cli("model", "offload", "latest", "--op", "aes-cbc-encrypt", "--hw", "hw", "--sw", "sw", "--param",
            "key_bits=128", "--completion", "interrupt", "--db", str(db), "--json", str(tmp_path / "o.json"))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "device cc2652, core cortex-m4 at 48 MHz" in out and "completion: interrupt" in out
    assert "least squares over 5 simulated cells of hw, key_bits=128, bytes 16,64,256,1024,4096" in out
    assert "set-up 30 µs + 0.5 µs per 16-byte block" in out and "set-up 10 µs + 2 µs per 16-byte block" in out
    assert "interrupt completion adds 24 cycles = 0.5 µs (modeled)" in out
    assert "SW µJ" in out and "provenance: modeled (fits, latency, crossover) from simulated cells" in out
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["provenance"] == "modeled" and doc["completion"] == "interrupt"
    assert set(doc) >= {"run", "op", "sw", "hw", "conditions", "cells", "fits", "interrupt_latency", "rows",
                        "crossover", "first_swept_win_bytes", "time_provenance", "energy_provenance"}
    assert doc["conditions"] == {"device": "cc2652", "core": "cortex-m4", "clock_hz": CLOCK, "board": None}
    assert doc["crossover"]["bytes_exact"] == pytest.approx((20e-6 + 0.5e-6) / 1.5e-6 * 16)
    row = doc["rows"][0]
    assert set(row) >= {"bytes", "sw_s", "hw_polling_s", "hw_interrupt_s", "ratio", "hw_wins", "sw_j", "hw_j"}
    assert doc["time_provenance"] == ["simulated"] and doc["energy_provenance"] == ["modeled"]


@pytest.mark.e2e
@pytest.mark.parametrize("extra, needle", [
    (["--hw", "nope", "--sw", "sw", "--op", "aes-cbc-encrypt"], "nope"),
    (["--hw", "hw", "--sw", "sw", "--op", "sha256"], "sha256"),
    (["--hw", "hw", "--sw", "sw"], "--op"),
    (["--hw", "hw", "--sw", "sw", "--op", "aes-cbc-encrypt", "--setup-us", "3"], "--setup-us"),
    (["--hw", "hw", "--sw", "sw", "--op", "aes-cbc-encrypt", "--figure", "x.pdf"], ".svg or .png"),
])
def test_cli_usage_errors_are_one_line_exit_2(tmp_path, extra, needle):
    db = tmp_path / "r.sqlite"
    _store(db)
    p = cli("model", "offload", "latest", *extra, "--db", str(db), cwd=tmp_path)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("cryptobench: error:") and needle in p.stderr


@pytest.mark.e2e
def test_interrupt_completed_cells_are_not_given_the_latency_twice(tmp_path):
    db = tmp_path / "r.sqlite"
    _store(db, builds={"hw": {"library": "hw", "driver_completion": "interrupt"}, "sw": {"library": "sw"}})
    p = cli("model", "offload", "latest", "--op", "aes-cbc-encrypt", "--hw", "hw", "--sw", "sw", "--db", str(db))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "completed by interrupt" in p.stderr and "model crossover" in p.stderr
    _store(db2 := tmp_path / "p.sqlite", builds={"hw": {"library": "hw", "driver_completion": "polling"}})
    p = cli("model", "offload", "latest", "--op", "aes-cbc-encrypt", "--hw", "hw", "--sw", "sw", "--db", str(db2))
    assert p.returncode == 0 and "driver mode: polling (the recipe's completion" in p.stdout


@pytest.mark.e2e
def test_cli_flag_only_form_refuses_run_options():
    p = cli("model", "offload", "--hw", "cc26x2-crypto", "--setup-us", "1", "--per-block-us", "1",
            "--overhead-us", "1", "--profile", "cc2652")
    assert p.returncode == 2 and "need a RUN" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_interrupt_needs_a_core_and_clock(tmp_path):
    db = tmp_path / "r.sqlite"
    _store(db, target=False)
    common = ("model", "offload", "latest", "--op", "aes-cbc-encrypt", "--hw", "hw", "--sw", "sw", "--db", str(db))
    assert cli(*common).returncode == 0
    p = cli(*common, "--completion", "interrupt")
    assert p.returncode == 2 and "core and clock" in p.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("name, magic", [("o.svg", b"<?xml"), ("o.png", b"\x89PNG")])
def test_the_figure_is_written(tmp_path, name, magic):
    pytest.importorskip("matplotlib")
    db = tmp_path / "r.sqlite"
    _store(db)
    p = cli("model", "offload", "latest", "--op", "aes-cbc-encrypt", "--hw", "hw", "--sw", "sw", "--db", str(db),
            "--figure", str(tmp_path / name))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / name).read_bytes().startswith(magic) and f"figure: {tmp_path / name}" in p.stdout

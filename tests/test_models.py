"""`cryptobench model`: the Pisa Cortex-A53 paper's eq. 1 and Tables IV-V, the TI CC13x2/CC26x2
report's §4 polling vs blocking, the crossover solver, the setup + per-block fit and the battery view.
Behaviour only."""
import json
import math

import pytest

from conftest import cli
from cryptobench.analysis.models import OffloadModel, crossover, fit_setup_per_block, solve_latency, throughput
from cryptobench.analysis.models.accelerator import accelerator_model, additional_latency
from cryptobench.analysis.models.battery import battery_view, capacity_j, parse_rate
from cryptobench.core.records import Plan
from storeutil import save_cell_at

# The Pisa Cortex-A53 paper's Table IV (HW rows: TH, P, E) and Table V (HW column), transcribed as a fallback
# for when references/data/pisa-a53.toml is not there (or lacks them); stated AL from §III.
PISA_FALLBACK = {
    "aes": {"th": 1339.53, "p_mw": 18, "e": 0.00656, "fom": 204119.60, "q": 128, "al": 48.89e-9},   # Table IV/V row AES-ECB-256
    "sha": {"th": 1515.79, "p_mw": 8.91, "e": 0.00371, "fom": 408293.46, "q": 512, "al": 124.44e-9},  # row SHA256
}


def _pisa():
    vals = {k: dict(v) for k, v in PISA_FALLBACK.items()}
    try:
        from cryptobench.references import load_reference
        ref = load_reference("pisa-a53")
    except Exception:
        return vals, "fallback"
    used = False
    for r in ref.rows:
        if r.source.engine_kind in ("sw library", "cpu extensions"):
            continue
        key = "aes" if "aes" in r.label.lower() else "sha" if "sha" in r.label.lower() else None
        if key is None:
            continue
        table = r.table.replace(" ", "").upper()
        if table == "TABLEIV" and r.metric == "throughput" and r.unit == "Mbps":
            vals[key]["th"] = r.value; used = True
        elif table == "TABLEIV" and r.metric == "energy_per_bit" and r.unit == "mJ/Mb":
            vals[key]["e"] = r.value; used = True
        elif table == "TABLEV" and r.metric == "fom":
            vals[key]["fom"] = r.value; used = True
    return vals, "file" if used else "fallback"


@pytest.mark.parametrize("alg", ["aes", "sha"])
def test_table_v_hw_fom_follows_from_table_iv(alg):
    vals, _ = _pisa()
    v = vals[alg]
    assert v["th"] / v["e"] == pytest.approx(v["fom"], rel=0.01)


@pytest.mark.parametrize("alg,cycles", [("aes", 14), ("sha", 64)])
def test_back_solved_latency_is_consistent_with_table_iv(alg, cycles):
    v = _pisa()[0][alg]
    L = solve_latency(v["q"], v["th"] * 1e6, 300e6, v["al"])
    assert L == pytest.approx(cycles, abs=0.01)                     # AES-256: 14 rounds; SHA-256: 64 rounds
    assert throughput(v["q"], L, 300e6, v["al"]) / 1e6 == pytest.approx(v["th"], rel=1e-9)
    # Table IV's E is the module's power over its own latency: P·L·Tclk / Q (mJ/Mb)
    m = accelerator_model(round(L), 300e6, v["q"], v["q"], v["q"], 9.6e9, 3.6e9, v["p_mw"] * 1e-3, al_s=v["al"])
    assert m["energy_core"] == pytest.approx(v["e"], rel=0.01)
    assert m["fom_core"] == pytest.approx(v["fom"], rel=0.01)


def test_al_from_dma_bandwidths_matches_the_stated_values():
    assert additional_latency(128, 128, 9.6e9, 3.6e9) == pytest.approx(48.89e-9, abs=0.01e-9)
    assert additional_latency(512, 256, 9.6e9, 3.6e9) == pytest.approx(124.44e-9, abs=0.01e-9)
    assert additional_latency(256, 1042, 9.6e9, 3.6e9) == pytest.approx(316.11e-9, abs=0.01e-9)


@pytest.mark.e2e
def test_cli_accelerator_and_pisa_table():
    p = cli("model", "accelerator", "--latency-cycles", "14", "--clock", "300MHz", "--block-bits", "128",
            "--dma-mm2s", "9.6G", "--dma-s2mm", "3.6G", "--power", "18mW")
    assert p.returncode == 0, p.stderr
    assert "1339.53 Mbps" in p.stdout and "provenance: modeled" in p.stdout
    p = cli("model", "accelerator", "--pisa")
    assert p.returncode == 0, p.stderr
    assert "ECDSA-P521" in p.stdout and "provenance: modeled" in p.stdout


# ------------------------------------------- the TI CC13x2/CC26x2 report §4: polling vs blocking
def test_offload_crossover_matches_the_closed_form():
    # E_poll - E_block = V[(Ia - Ii)·W - Ia·ovh] = 0  =>  W* = Ia·ovh/(Ia - Ii); n* = W*/t_blk · 16
    ia, ii, ovh, tb = 2.9e-3, 0.59e-3, 35e-6, 0.5e-6
    m = OffloadModel(60e-6, tb, 16, ovh, ia, ii, 0.5e-3, 3.3)
    exact = ia * ovh / (ia - ii) / tb * 16
    cx = m.crossover()
    assert cx["bytes_exact"] == pytest.approx(exact, rel=1e-12)
    assert cx["bytes"] == 16 * math.ceil(exact / 16) == 1408
    below, at = cx["bytes"] - 16, cx["bytes"]
    assert m.blocking(below)["energy_j"] > m.polling(below)["energy_j"]
    assert m.blocking(at)["energy_j"] <= m.polling(at)["energy_j"]
    assert m.blocking(at)["time_s"] - m.polling(at)["time_s"] == pytest.approx(ovh)
    # the peripheral's own current cancels out
    assert OffloadModel(60e-6, tb, 16, ovh, ia, ii, 5e-3, 3.3).crossover()["bytes"] == 1408


def test_offload_never_when_idle_is_not_cheaper():
    assert OffloadModel(1e-6, 1e-6, 16, 1e-6, 1e-3, 1e-3).crossover()["bytes"] is None


@pytest.mark.e2e
def test_cli_offload_with_profile():
    p = cli("model", "offload", "--setup-us", "60", "--per-block-us", "0.5", "--overhead-us", "35",
            "--profile", "cc2652")
    assert p.returncode == 0, p.stderr
    assert "blocking uses less energy from" in p.stdout and "provenance: modeled" in p.stdout


# ------------------------------------------------------------------------ stored synthetic sweeps
LENGTHS = (1024, 4096, 16384, 32768, 65536)


def _store_run(db, engines, provenance="measured", target="host"):
    """engines: name -> (setup s, per byte s, ci half-width s, watts or None); every cell's time has
    `provenance` (measured on the host, simulated on a sim target)."""
    from cryptobench.store.database import Store
    store = Store(db)
    plan = {"suite": None, "baseline": None, "options": {"engines": list(engines), "repeat": 5, "warmup": 0,
                                                          "min_time": 0.0, "single": False}, "groups": []}
    rid = store.create_run(Plan.from_json({**plan, "suite": None}), {"host": {}, "harness": {}, "engines": {}})
    seq = 0
    for engine, (a, b, half, watts) in engines.items():
        for n in LENGTHS:
            t = a + b * n
            result = {"n": 5, "k": 1, "single_shot": False,
                      "time_s": {"median": t, "mean": t, "stdev": 0.0, "rsd_pct": 0.0, "min": t - half,
                                 "max": t + half, "ci95": [t - half, t + half], "ci_coverage": 0.94},
                      "outliers": 0, "ops_per_s": 1 / t, "flags": []}
            if watts is not None:
                result["energy"] = {"per_op_j": t * watts, "provenance": "measured", "flags": []}
            save_cell_at(store, rid, seq, {"op": "aes-ecb-encrypt", "params": {"key_bits": 128, "bytes": n},
                                       "engine": engine, "target": target, "provenance": provenance,
                                       "status": "ok", "kat": "pass", "detail": "synthetic",
                                       "samples": [[1, int(t * 1e9), 0]] * 5, "result": result})
            seq += 1
    store.set_status(rid, "complete")
    store.close()
    return rid


@pytest.mark.e2e
def test_crossover_on_a_stored_run_with_its_interval(tmp_path):
    db = tmp_path / "r.sqlite"
    # A: 10 µs + 1 ns/B; B: 30 µs + 0.5 ns/B, each ±0.5 µs: time crossover 20 µs / 0.5 ns = 40000 B,
    # earliest (B low, A high) 19 µs / 0.5 ns = 38000 B, latest 21 µs / 0.5 ns = 42000 B.
    # Energy: A at 10 mW, B at 5 mW: 0.1 µJ + 10 pJ/B vs 0.15 µJ + 2.5 pJ/B -> 0.05 µJ / 7.5 pJ = 6666.7 B
    _store_run(db, {"sw": (10e-6, 1e-9, 0.5e-6, 10e-3), "hw": (30e-6, 0.5e-9, 0.5e-6, 5e-3)})
    from cryptobench.analysis.models.crossover import sweep_from_run
    from cryptobench.store.database import Store
    run = Store(db).load_run(1)
    a, b = sweep_from_run(run, "aes-ecb-encrypt", "sw"), sweep_from_run(run, "aes-ecb-encrypt", "hw")
    t = crossover(a["time"], b["time"])
    assert t["crossover"]["x"] == pytest.approx(40000)
    assert t["interval"] == [pytest.approx(38000), pytest.approx(42000)]
    assert t["linear_fit"]["x"] == pytest.approx(40000)
    e = crossover(a["energy"], b["energy"])
    assert e["crossover"]["x"] == pytest.approx(0.05e-6 / 7.5e-12)
    p = cli("model", "crossover", "1", "--op", "aes-ecb-encrypt", "--a", "sw", "--b", "hw", "--db", str(db),
            "--json", str(tmp_path / "c.json"))
    assert p.returncode == 0, p.stderr
    assert "B is cheaper from 40000 bytes" in p.stdout and "[38000, 42000]" in p.stdout
    assert "provenance: modeled" in p.stdout
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["provenance"] == "modeled" and doc["time"]["crossover"]["x"] == pytest.approx(40000)


@pytest.mark.e2e
def test_crossover_with_a_profile_states_the_current_voltage_and_source(tmp_path):
    db = tmp_path / "r.sqlite"
    _store_run(db, {"sw": (10e-6, 1e-9, 0.0, None), "hw": (30e-6, 0.5e-9, 0.0, None)})
    p = cli("model", "crossover", "1", "--op", "aes-ecb-encrypt", "--a", "sw", "--b", "hw", "--profile", "cc2652",
            "--db", str(db))
    assert p.returncode == 0, p.stderr
    assert "modeled energy t · V · I: 3.1 mA (active) at a 3.3 V supply (the current measured at 3.3 V); " \
           "source: active 3.10 mA at 3.3 V" in p.stdout


def test_crossover_of_model_functions_and_never():
    from cryptobench.analysis.models import linear_curve
    xs = [16, 64, 256, 1024]
    r = crossover(linear_curve(lambda n: 1 + n, xs), linear_curve(lambda n: 2 + 2 * n, xs))
    assert r["crossover"]["status"] == "never"
    r = crossover(linear_curve(lambda n: 5 + n, xs), linear_curve(lambda n: 1 + n, xs))
    assert r["crossover"]["status"] == "always"


def test_fit_of_exact_setup_and_per_block():
    pts = [(n, 12e-6 + 0.4e-6 * math.ceil(n / 16)) for n in (16, 100, 1024, 4096)]
    f = fit_setup_per_block(pts, 16)
    assert f["setup_s"] == pytest.approx(12e-6) and f["per_block_s"] == pytest.approx(0.4e-6)
    assert all(abs(p["residual_s"]) < 1e-15 for p in f["points"]) and f["r2"] == pytest.approx(1.0)


@pytest.mark.e2e
def test_cli_fit_on_a_stored_run(tmp_path):
    db = tmp_path / "r.sqlite"
    _store_run(db, {"hw": (30e-6, 0.5e-9, 0.0, None)})
    p = cli("model", "accelerator", "--fit", "latest", "--op", "aes-ecb-encrypt", "--engine", "hw",
            "--block-bytes", "16", "--db", str(db))
    assert p.returncode == 0, p.stderr
    assert "setup 30 µs" in p.stdout and "per block (16 B) 8 ns" in p.stdout and "provenance: modeled" in p.stdout
    assert "provenance measured (target host)" in p.stdout and " measured µs " in p.stdout


@pytest.mark.e2e
def test_cli_fit_labels_simulated_inputs_simulated_and_its_output_modeled(tmp_path):
    db = tmp_path / "r.sqlite"
    _store_run(db, {"hw": (30e-6, 0.5e-9, 0.0, None)}, provenance="simulated", target="sim:cortex-m4:cc2652")
    p = cli("model", "accelerator", "--fit", "latest", "--op", "aes-ecb-encrypt", "--engine", "hw",
            "--db", str(db), "--json", str(tmp_path / "f.json"))
    assert p.returncode == 0, p.stderr
    assert "measured" not in p.stdout
    assert ("inputs: the cells' median times, provenance simulated (target sim:cortex-m4:cc2652); "
            "setup, per-block cost and fit: modeled") in p.stdout
    assert " simulated µs " in p.stdout and "provenance: modeled (from simulated times)" in p.stdout
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["provenance"] == "modeled" and doc["input_provenance"] == ["simulated"]
    # the crossover says where its times come from as well
    _store_run(tmp_path / "x.sqlite", {"sw": (10e-6, 1e-9, 0.0, None), "hw": (30e-6, 0.5e-9, 0.0, None)},
               provenance="simulated", target="sim:cortex-m4:cc2652")
    p = cli("model", "crossover", "1", "--op", "aes-ecb-encrypt", "--a", "sw", "--b", "hw",
            "--db", str(tmp_path / "x.sqlite"))
    assert p.returncode == 0 and "time provenance of the inputs: simulated" in p.stdout and "measured" not in p.stdout


# --------------------------------------------------------------------------------------- battery
def test_battery_arithmetic():
    assert capacity_j(230, 3.0) == pytest.approx(230 * 3.6 * 3.0)           # 2484 J
    assert parse_rate("aes-ecb-encrypt,bytes=64=2/min") == ("aes-ecb-encrypt", {"bytes": "64"}, 120.0)
    v = battery_view({"hw": {"x": 1e-6}}, [("x", 3600)], 2484.0, baseline_w=3e-6)
    r = v["rows"][0]
    assert r["crypto_j_per_day"] == pytest.approx(3600 * 24 * 1e-6)        # 0.0864 J
    base = 3e-6 * 86400                                                      # 0.2592 J
    assert r["share"] == pytest.approx(0.0864 / (0.0864 + base))
    assert r["battery_days"] == pytest.approx(2484.0 / (0.0864 + base))


@pytest.mark.e2e
def test_cli_battery(tmp_path):
    db = tmp_path / "r.sqlite"
    _store_run(db, {"sw": (10e-6, 1e-9, 0.0, 10e-3), "hw": (30e-6, 0.5e-9, 0.0, None)})
    p = cli("model", "battery", "latest", "--rate", "aes-ecb-encrypt,bytes=1024=3600/h", "--battery-mah", "230",
            "--battery-v", "3.0", "--baseline-ua", "1", "--profile", "cc2652", "--db", str(db),
            "--json", str(tmp_path / "b.json"))
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "b.json").read_text())
    rows = {r["engine"]: r for r in doc["rows"]}
    e_sw = (10e-6 + 1e-9 * 1024) * 10e-3                                      # stored (measured)
    assert rows["sw"]["crypto_j_per_day"] == pytest.approx(3600 * 24 * e_sw)
    e_hw = (30e-6 + 0.5e-9 * 1024) * 3.3 * 3.10e-3      # modeled from cc2652: TI's measured 3.10 mA at 3.3 V
    assert rows["hw"]["crypto_j_per_day"] == pytest.approx(3600 * 24 * e_hw)
    assert rows["sw"]["share"] == pytest.approx(3600 * 24 * e_sw / (3600 * 24 * e_sw + 1e-6 * 3.0 * 86400))
    assert "provenance: modeled" in p.stdout


@pytest.mark.e2e
def test_cli_battery_states_its_baseline_and_labels_a_crypto_only_share(tmp_path):
    db = tmp_path / "r.sqlite"
    _store_run(db, {"sw": (10e-6, 1e-9, 0.0, 10e-3)})
    common = ("model", "battery", "latest", "--rate", "aes-ecb-encrypt,bytes=1024=3600/h", "--battery-mah", "230",
              "--battery-v", "3.0", "--db", str(db))
    # no --baseline-ua: 0 µA is assumed, said so, and the 100 % share is called crypto-only
    p = cli(*common, "--json", str(tmp_path / "zero.json"))
    assert p.returncode == 0, p.stderr
    assert "baseline (the rest of the device: sleep/idle, radio, sensors): 0 µA assumed (the default; " \
           "set --baseline-ua)" in p.stdout
    assert "share*" in p.stdout and "100%" in p.stdout
    assert "* crypto-only share under a 0 µA baseline assumption" in p.stdout
    doc = json.loads((tmp_path / "zero.json").read_text())
    assert doc["baseline"]["current_ua"] == 0 and doc["baseline"]["given"] is False
    assert doc["share_is"].startswith("crypto-only") and doc["rows"][0]["share"] == 1.0
    # a baseline given: its current, voltage and where the voltage comes from; a real share, no footnote
    p = cli(*common, "--baseline-ua", "1", "--json", str(tmp_path / "one.json"))
    assert p.returncode == 0, p.stderr
    assert "1 µA (--baseline-ua) at 3 V (--battery-v): 3 µW, 0.2592 J/day" in p.stdout
    assert "share*" not in p.stdout and "crypto-only share under" not in p.stdout
    doc = json.loads((tmp_path / "one.json").read_text())
    assert doc["baseline"]["given"] is True and doc["baseline"]["voltage_v"] == 3.0
    assert doc["share_is"] == "crypto's share of the device's energy with a 1 µA baseline"
    assert doc["rows"][0]["share"] < 1
    p = cli(*common, "--baseline-ua", "-1")
    assert p.returncode == 2 and p.stderr.strip() == \
        "cryptobench: error: --baseline-ua: expected a finite current >= 0 µA, got -1.0"


# ------------------------------------------------------------------------------------ CLI errors
@pytest.mark.e2e
@pytest.mark.parametrize("args", [
    ["model"],
    ["model", "accelerator", "--clock", "300MHz"],
    ["model", "accelerator", "--clock", "fast", "--block-bits", "128"],
    ["model", "accelerator", "--latency-cycles", "14", "--clock", "300MHz", "--block-bits", "128"],
    ["model", "offload", "--setup-us", "1", "--per-block-us", "1", "--overhead-us", "1"],
    ["model", "battery", "latest", "--rate", "aes-ecb-encrypt=fast", "--battery-mah", "230", "--battery-v", "3"],
    ["model", "battery", "latest", "--rate", "aes-ecb-encrypt=1/h"],
])
def test_cli_errors_are_one_line_exit_2(args, tmp_path):
    p = cli(*args, "--db", str(tmp_path / "x.sqlite")) if args[1:2] in (["battery"],) else cli(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("cryptobench: error:")


@pytest.mark.e2e
def test_crossover_unknown_engine_is_one_line(tmp_path):
    db = tmp_path / "r.sqlite"
    _store_run(db, {"sw": (10e-6, 1e-9, 0.0, None)})
    p = cli("model", "crossover", "1", "--op", "aes-ecb-encrypt", "--a", "sw", "--b", "nope", "--db", str(db))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "nope" in p.stderr

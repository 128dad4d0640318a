"""The relative view (the ZHAW IoT study's figure 2: engine / baseline) and scaling over cores (the
Pisa Cortex-A53 paper's Tables I-III: --parallel). Behaviour only: no test depends on how fast this machine is."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from cryptobench.core.records import Plan
from storeutil import save_cell_at

from conftest import ROOT, cli

SCHEMA = json.loads((ROOT / "docs" / "result.schema.json").read_text())
CPUS = sorted(os.sched_getaffinity(0))


def _doc(db, run="latest", *extra):
    proc = cli("show", str(run), "--db", str(db), "--format", "json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ------------------------------------------------------------------------------- relative view
def _synthetic_run(db: Path) -> int:
    """A stored run with known medians: base 1 µs, fast 0.5 µs, slow 3 µs (every sample alike, so
    the bootstrap interval is the point itself); energies 1 µJ and 2 µJ per op."""
    from cryptobench.store.database import Store
    store = Store(db)
    plan = {"suite": None, "baseline": "base", "options": {"engines": ["base", "fast", "slow", "none"],
                                                            "repeat": 5, "warmup": 0, "min_time": 0.0,
                                                            "single": False}, "groups": []}
    cond = {"host": {"os": "Linux test", "cpu": {"model": "test", "arch": "x86_64", "crypto_flags": []},
                     "cryptobench": "test"}, "harness": {}, "engines": {}}
    rid = store.create_run(Plan.from_json({**plan, "suite": None}), cond)

    def cell(op, params, engine, ns, energy=None, status="ok"):
        samples = [[10, ns * 10, 0]] * 5 if status == "ok" else None
        result = None
        if status == "ok":
            t = ns / 1e9
            result = {"n": 5, "k": 10, "single_shot": False,
                      "time_s": {"median": t, "mean": t, "stdev": 0.0, "rsd_pct": 0.0, "min": t, "max": t,
                                 "ci95": [t, t], "ci_coverage": 0.94},
                      "outliers": 0, "ops_per_s": 1 / t, "throughput_Bps": None, "KBps": None, "KiBps": None,
                      "cycles": {"counter": "none", "per_op_median": None}, "cycles_per_byte": None,
                      "halved": False, "flags": []}
            if energy is not None:
                result["energy"] = {"per_op_j": energy, "provenance": "measured", "flags": [],
                                    "per_op_windows_j": [energy] * 5}
        return {"op": op, "params": params, "engine": engine, "target": "host",
                "provenance": "measured" if status == "ok" else "none", "status": status,
                "kat": "pass" if status == "ok" else "n/a",
                "detail": "synthetic" if status == "ok" else "no such op here", "samples": samples,
                "result": result}

    seq = 0
    for nbytes in (64, 1024):
        for engine, ns, en in (("base", 1000, 1e-6), ("fast", 500, None), ("slow", 3000, 2e-6)):
            save_cell_at(store, rid, seq, cell("sha256", {"bytes": nbytes}, engine, ns * nbytes // 64,
                                           en * nbytes / 64 if en else None))
            seq += 1
        save_cell_at(store, rid, seq, cell("sha256", {"bytes": nbytes}, "none", 0, status="unsupported"))
        seq += 1
    save_cell_at(store, rid, seq, cell("ecdsa-sign", {"curve": "p256"}, "base", 0, status="failed"))
    save_cell_at(store, rid, seq + 1, cell("ecdsa-sign", {"curve": "p256"}, "slow", 9000))
    store.set_status(rid, "complete")
    store.close()
    return rid


@pytest.mark.e2e
def test_relative_view_of_known_medians(tmp_path):
    db = tmp_path / "db.sqlite"
    rid = _synthetic_run(db)
    proc = cli("show", str(rid), "--relative-to", "base", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Relative to base: SHA-256" in out and "engine / base" in out
    assert "×0.500 [0.500–0.500]" in out and "×3.00 [3.00–3.00]" in out      # time: slower = above 1
    assert "×2.00 [2.00–2.00]" in out                                        # energy of slow / base
    assert "no baseline" in out                                              # ecdsa: the baseline failed
    assert "none: unsupported — no such op here" in out
    # the normal tables are not repeated in the relative view
    assert "Impr." not in out

    doc = _doc(db, rid, "--relative-to", "base")
    jsonschema.validate(doc, SCHEMA)
    rel = doc["relative"]
    assert rel["baseline"] == "base"
    rows = {(r["op"], r["params"].get("bytes"), r["engine"]): r for r in rel["rows"]}
    assert rows[("sha256", 64, "slow")]["time_ratio"] == pytest.approx(3.0)
    assert rows[("sha256", 1024, "fast")]["time_ratio"] == pytest.approx(0.5)
    assert rows[("sha256", 1024, "fast")]["energy_ratio"] is None
    assert rows[("sha256", 64, "slow")]["energy_ratio"] == pytest.approx(2.0)
    assert rows[("sha256", 64, "none")]["status"] == "unsupported"
    assert rows[("ecdsa-sign", None, "slow")]["status"] == "no-baseline"
    # the relative view is the inverse of the stored comparisons' Duration Improvement
    comps = {(c["op"], c["params"].get("bytes"), c["engine"]): c for c in doc["comparisons"]}
    assert comps[("sha256", 64, "slow")]["duration_improvement"] == pytest.approx(1 / 3.0)

    csv = cli("show", str(rid), "--relative-to", "base", "--db", str(db), "--format", "csv")
    lines = csv.stdout.splitlines()
    assert lines[0].startswith("run,op,params,engine,baseline,status,time_ratio")
    assert len(lines) == 1 + len(rel["rows"])
    md = cli("show", str(rid), "--relative-to", "base", "--db", str(db), "--format", "md")
    assert "## Relative to base: SHA-256" in md.stdout and "| bytes | fast time |" in md.stdout


def test_relative_view_reads_the_stored_records(tmp_path):
    """relative() and its CSV straight from Store.load_run's records, without the report layer."""
    from cryptobench.analysis.relative import relative, render_csv
    from cryptobench.store.database import Store
    db = tmp_path / "db.sqlite"
    rid = _synthetic_run(db)
    run = Store(db).load_run(rid)
    rows = {(r["op"], r["params"].get("bytes"), r["engine"]): r for r in relative(run, "base")["rows"]}
    assert rows[("sha256", 64, "slow")]["time_ratio"] == pytest.approx(3.0)
    assert rows[("sha256", 64, "slow")]["energy_ratio"] == pytest.approx(2.0)
    assert rows[("sha256", 1024, "fast")]["energy_ratio"] is None
    assert rows[("sha256", 64, "none")]["status"] == "unsupported"
    assert rows[("ecdsa-sign", None, "slow")]["status"] == "no-baseline"
    assert rows[("ecdsa-sign", None, "slow")]["detail"] == "base: failed — no such op here"
    lines = render_csv(run, "base").splitlines()
    assert lines[0].startswith("run,op,params,engine") and len(lines) == 1 + len(rows)


def test_energy_within_idle_noise_gives_no_energy_ratio_anywhere():
    """Energy.usable is the one rule: a figure flagged not-above-idle enters neither the relative
    view's energy ratio nor the comparisons' Energy Efficiency Improvement."""
    from cryptobench.core.records import Cell, Plan, Run
    from cryptobench.analysis.relative import relative
    from cryptobench.stats.results import comparisons

    def cell(engine, ns, energy):
        t = ns / 1e9
        return Cell(op="sha256", params={"bytes": 64}, engine=engine, samples=[[10, ns * 10, 0]] * 5,
                    result={"time_s": {"median": t, "ci95": [t, t]}, "energy": energy})

    for flags, usable in (([], True), (["not-above-idle"], False)):
        cells = [cell("base", 1000, {"per_op_j": 1e-6, "flags": flags}), cell("slow", 2000, {"per_op_j": 3e-6})]
        run = Run(id=1, plan=Plan(baseline="base"), conditions={}, cells=cells)
        (row,) = relative(run, "base")["rows"]
        (comp,) = comparisons(run.cells, "base")
        assert (row["energy_ratio"] is not None) == usable
        assert ("energy_efficiency_improvement" in comp) == usable
        assert row["time_ratio"] == pytest.approx(2.0) and comp["duration_improvement"] == pytest.approx(0.5)


@pytest.mark.e2e
def test_unknown_relative_engine_is_one_line_listing_the_runs_engines(tmp_path):
    db = tmp_path / "db.sqlite"
    rid = _synthetic_run(db)
    proc = cli("show", str(rid), "--relative-to", "openssl-hw", "--db", str(db))
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "openssl-hw" in err and "base, fast, slow, none" in err


@pytest.mark.e2e
def test_relative_view_of_a_real_run(harness, tmp_path):
    db = tmp_path / "db.sqlite"
    run = cli("run", "--op", "sha256", "--param", "bytes=64,1024", "--engine", "openssl-hw", "--engine",
              "openssl-sw", "--baseline", "openssl-sw", "--repeat", "3", "--min-time", "0.001", "--db", str(db),
              "--quiet")
    assert run.returncode == 0, run.stderr
    assert "Relative to" not in run.stdout                  # only when asked (or the suite says so)
    show = cli("show", "latest", "--relative-to", "openssl-sw", "--db", str(db))
    assert show.returncode == 0, show.stderr
    assert "Relative to openssl-sw: SHA-256" in show.stdout and "openssl-hw time" in show.stdout
    doc = _doc(db, "latest", "--relative-to", "openssl-sw")
    jsonschema.validate(doc, SCHEMA)
    comps = {c["params"]["bytes"]: c for c in doc["comparisons"]}
    for r in doc["relative"]["rows"]:
        assert r["engine"] == "openssl-hw" and r["status"] == "ok"
        assert r["time_ci95"][0] <= r["time_ratio"] <= r["time_ci95"][1]
        assert r["time_ratio"] == pytest.approx(1 / comps[r["params"]["bytes"]]["duration_improvement"])


@pytest.mark.e2e
def test_zhaw_suite_prints_its_tables_then_the_relative_view(harness, tmp_path):
    """zhaw-iot names openssl-hw, openssl-sw, mbedtls, pkcs11 and tpm, baseline openssl-hw; a
    secure-element engine that is unusable here is reported, and the run goes on with the others."""
    from cryptobench.runner.suites import load_suite
    suite = load_suite("zhaw-iot")
    assert suite.engines == ["openssl-hw", "openssl-sw", "mbedtls", "pkcs11", "tpm"]
    assert suite.baseline == "openssl-hw" and suite.relative
    db, out = tmp_path / "db.sqlite", tmp_path / "zhaw.json"
    proc = cli("run", "--suite", "zhaw-iot", "--op", "sha256", "--param", "bytes=32", "--repeat", "5",
               "--db", str(db), "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert {r["engine"] for r in doc["results"]} == set(suite.engines)
    for r in doc["results"]:
        if r["engine"] in ("openssl-hw", "openssl-sw", "mbedtls"):
            assert r["status"] == "ok" and r["single_shot"] is True and r["k"] == 1
    text = proc.stdout                          # the suite's layout (the paper's tables), then the relative view
    assert text.index("Table 3: Absolute execution time") < text.index("Relative to openssl-hw: SHA-256")
    assert "openssl-hw Time [s]" in text and "Table 5: Execution time measurements with the highest RSD" in text
    assert doc["relative"]["baseline"] == "openssl-hw"
    assert {r["engine"] for r in doc["relative"]["rows"]} == set(suite.engines) - {"openssl-hw"}


# ------------------------------------------------------------------------------- scaling
@pytest.fixture(scope="module")
def pisa_parallel(tmp_path_factory, harness):
    tmp = tmp_path_factory.mktemp("pisa")
    db, out = tmp / "db.sqlite", tmp / "pisa.json"
    proc = cli("run", "--suite", "pisa-a53", "--op", "sha256", "--parallel", "1,2", "--repeat", "3",
               "--db", str(db), "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out.read_text()), db


@pytest.mark.slow
def test_parallel_cells_for_each_process_count(pisa_parallel):
    proc, doc, _ = pisa_parallel
    jsonschema.validate(doc, SCHEMA)
    assert doc["run"]["options"]["parallel"] == [1, 2]
    cells = {(r["engine"], r["params"]["parallel"]): r for r in doc["results"]}
    assert set(cells) == {(e, n) for e in ("openssl-hw", "openssl-sw") for n in (1, 2)}
    for (engine, n), r in cells.items():
        assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
        assert r["params"] == {"bytes": 16384, "parallel": n}
        p = r["parallel"]
        assert p["n"] == n and len(p["cpus"]) == n and p["pinned"] is True
        assert p["cpus"][0] in CPUS
        assert p["rounds"] == 3 == len(p["wall_ns"]) == len(p["process_samples"])
        assert all(len(rnd) == n for rnd in p["process_samples"])
        assert len(r["samples"]) == 3 * n                    # every process's own batch times
        assert p["unit"] == "bytes" and p["units_per_op"] == 16384
        assert p["aggregate_Bps"] == pytest.approx(p["aggregate"])
        assert p["per_core"] == pytest.approx(p["aggregate"] / n)
        assert "orchestrator" in p["clock"] and "perf_counter" in p["clock"]
        if n == 1:
            assert p["efficiency"] == 1.0
        else:
            # TH_N / (N · TH_1) by its definition, from this run's N = 1 cell (its value is the machine's:
            # a shared, loaded runner can make it anything, so the test checks what it is, not how big)
            from cryptobench.targets.host.parallel import add_efficiency
            one = cells[(engine, 1)]["parallel"]
            again = add_efficiency({k: v for k, v in p.items() if not k.startswith("efficiency")}, one)
            assert p["efficiency"] > 0 and p["efficiency"] == pytest.approx(again["efficiency"])
            assert "TH_N / (N · TH_1)" in p["efficiency_reference"]
            lo, hi = p["efficiency_ci95"]
            assert lo <= hi
            if len(CPUS) >= 2:
                assert len(set(p["cpus"])) == 2 and p["oversubscribed"] is False
        # the orchestrator's wall time of a round spans the batch of every process in it
        for wall, rnd in zip(p["wall_ns"], p["process_samples"]):
            assert wall >= max(ns for _, ns, _ in rnd)


@pytest.mark.e2e
def test_parallel_prints_seed_004_layout(pisa_parallel):
    proc, _, db = pisa_parallel
    out = proc.stdout                               # the suite's layout: the paper's Tables I-V
    assert "Table II. Performance data for SHA256" in out and "Number of core" in out
    for header in ("openssl-sw Exec. time (s)", "openssl-sw D (Mb)", "openssl-sw TH (Mbps)", "openssl-hw TH (Mbps)"):
        assert header in out, header
    assert "Table IV. Performance data of the hardware engines" in out
    assert "perf_counter" in out                    # the aggregate's clock is labelled
    assert "P (mW)" not in out                      # no energy source: no energy columns, and no Table V
    assert "Table V (FoM = TH / E) is left out" in out
    out = cli("show", "latest", "--db", str(db), "--layout", "default").stdout   # the plain scaling tables
    assert "Table II — SHA-256" in out and "openssl-hw" in out and "openssl-sw" in out
    for header in ("cores", "CPUs", "Exec. time (s)", "D (Mb)", "TH (Mbps)", "TH/core (Mbps)", "efficiency %"):
        assert header in out, header
    assert "Scaling summary (the Pisa paper's Table V layout)" in out and "TH 2 cores" in out
    md = cli("show", "latest", "--db", str(db), "--format", "md", "--layout", "default")
    assert "| cores | CPUs | Exec. time (s) | D (Mb) | TH (Mbps) |" in md.stdout
    csv = cli("show", "latest", "--db", str(db), "--format", "csv")
    head = csv.stdout.splitlines()[0].split(",")
    assert "parallel_n" in head and "parallel_efficiency" in head      # export's names


@pytest.mark.e2e
def test_oversubscribed_when_more_processes_than_cpus(harness, tmp_path):
    allowed = set(CPUS[:2])
    db, out = tmp_path / "db.sqlite", tmp_path / "over.json"
    proc = cli("run", "--op", "sha256", "--param", "bytes=1024", "--engine", "openssl-hw", "--parallel", "1,4",
               "--repeat", "2", "--warmup", "0", "--min-time", "0.005", "--db", str(db), "--json", str(out),
               "--quiet", preexec_fn=lambda: os.sched_setaffinity(0, allowed))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    four = next(r for r in doc["results"] if r["params"]["parallel"] == 4)["parallel"]
    one = next(r for r in doc["results"] if r["params"]["parallel"] == 1)["parallel"]
    assert four["oversubscribed"] is True and "oversubscribed" in four["flags"]
    assert one["oversubscribed"] is False
    assert set(four["available_cpus"]) == allowed
    assert four["cpus"] == [four["available_cpus"][i % len(allowed)] for i in range(4)]   # round-robin
    assert "4 †" in proc.stdout and "oversubscribed" in proc.stdout


@pytest.mark.parametrize("value", ["0", "x", "1,,2", "-1", ""])
def test_bad_parallel_is_a_one_line_usage_error(tmp_path, value):
    proc = cli("run", "--op", "sha256", "--parallel", value, "--db", str(tmp_path / "db.sqlite"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--parallel" in proc.stderr
    assert not (tmp_path / "db.sqlite").exists() or not _cells(tmp_path / "db.sqlite")


@pytest.mark.qemu
def test_parallel_refuses_single_shot_and_other_targets(tmp_path):
    db = str(tmp_path / "db.sqlite")
    single = cli("run", "--suite", "zhaw-iot", "--parallel", "1,2", "--db", db)
    assert single.returncode == 2 and "single-shot" in single.stderr
    mcu = cli("run", "--op", "sha256", "--parallel", "1,2", "--target", "qemu:mps2-an385", "--db", db)
    assert mcu.returncode == 2 and "host" in mcu.stderr


def _cells(db, run_id=None):
    con = sqlite3.connect(db)
    try:
        q = "SELECT cell_key, samples, result, finished FROM cells" + (" WHERE run_id = ?" if run_id else "")
        return {r[0]: (r[1], r[2], r[3]) for r in con.execute(q, (run_id,) if run_id else ())}
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()


@pytest.mark.e2e
def test_interrupted_parallel_run_keeps_its_cells_and_resumes(harness, tmp_path):
    db = tmp_path / "db.sqlite"
    sizes = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--op", "sha256", "--param",
            "bytes=" + ",".join(map(str, sizes)), "--engine", "openssl-hw", "--parallel", "1,2",
            "--repeat", "5", "--warmup", "0", "--min-time", "0.05", "--db", str(db), "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while len(_cells(db)) < 3 and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _cells(db)
    assert 3 <= len(before) < 2 * len(sizes), "the run should have been killed part-way"
    con = sqlite3.connect(db)
    run_id = con.execute("SELECT id FROM runs").fetchone()[0]
    con.close()

    done = cli("run", "--resume", str(run_id), "--db", str(db), "--quiet")
    assert done.returncode == 0, done.stderr
    after = _cells(db, run_id)
    assert len(after) == 2 * len(sizes)
    for key, value in before.items():            # finished cells were kept, not redone
        assert after[key] == value
    doc = _doc(db, run_id)
    jsonschema.validate(doc, SCHEMA)
    assert doc["run"]["status"] == "complete"
    assert [(r["params"]["bytes"], r["params"]["parallel"]) for r in doc["results"]] == \
        [(b, n) for b in sizes for n in (1, 2)]
    for r in doc["results"]:
        assert r["status"] == "ok"
        if r["params"]["parallel"] == 2:          # efficiency against the N = 1 cell, stored or resumed
            assert r["parallel"]["efficiency"] is not None and r["parallel"]["efficiency"] > 0
    again = cli("run", "--resume", str(run_id), "--db", str(db), "--parallel", "1,2")
    assert again.returncode == 2 and "--parallel" in again.stderr


def test_scaling_tables_with_energy_mirror_seed_004():
    """P (mW), E (mJ/Mb or mJ/Op) and FoM = TH / E, from stored figures (no meter needed)."""
    from cryptobench.core.records import Cell, Conditions, Run
    from cryptobench.report.scaling_tables import scaling_tables

    def cell(op, params, n, aggregate, per_op_j, power_w):
        unit = "bytes" if "bytes" in params else "ops"
        return Cell.from_json({"op": op, "params": {**params, "parallel": n}, "engine": "openssl-sw", "target": "host",
                "provenance": "measured", "status": "ok", "kat": "pass", "detail": "", "samples": [],
                "result": {"flags": [],
                           "energy": {"per_op_j": per_op_j, "provenance": "measured", "flags": [],
                                      "avg_power_w": power_w},
                           "parallel": {"n": n, "cpus": list(range(n)), "available_cpus": [0, 1],
                                        "oversubscribed": n > 2, "pinned": True, "unit": unit,
                                        "units_per_op": params.get("bytes", 1), "exec_time_s": 3.0,
                                        "units_total": aggregate * 3.0, "aggregate": aggregate,
                                        "per_core": aggregate / n, "efficiency": 1.0 if n == 1 else 0.9,
                                        "efficiency_ci95": None if n == 1 else [0.85, 0.95],
                                        "flags": ["oversubscribed"] if n > 2 else []}}})

    # the Pisa paper's Table I, 1 core: 305.8 Mbps at 0.98 mJ/Mb; Table III, 1 core: 28.24 Op/s at 10.98 mJ/Op
    aes_bytes = 16384
    aes_j = 0.98e-3 * aes_bytes * 8 / 1e6
    plan = Plan.from_json({"groups": [{"op": "aes-ecb-encrypt", "params": {"bytes": aes_bytes}, "table": "Table I"}],
                           "options": {"engines": ["openssl-sw"], "parallel": [1, 4], "parallel_cpus": [0, 1]}})
    run = Run(id=1, plan=plan, conditions=Conditions(),
              cells=[cell("aes-ecb-encrypt", {"bytes": aes_bytes}, 1, 305.8e6 / 8, aes_j, 0.3),
                     cell("aes-ecb-encrypt", {"bytes": aes_bytes}, 4, 1209.33e6 / 8, aes_j * 1.07 / 0.98, 1.3),
                     cell("ecdsa-sign", {"curve": "p521"}, 1, 28.24, 10.98e-3, 0.31)])
    tables = scaling_tables(run)
    aes = next(t for t in tables if t.key == "aes-ecb-encrypt")
    assert aes.title.startswith("Table I — AES-ECB encrypt")
    assert aes.headers == ["cores", "CPUs", "Exec. time (s)", "D (Mb)", "TH (Mbps)", "TH/core (Mbps)",
                              "efficiency %", "P (mW)", "E (mJ/Mb)", "FoM"]
    row1 = dict(zip(aes.headers, aes.cells[0]))
    assert row1["TH (Mbps)"] == "305.8" and row1["E (mJ/Mb)"] == "0.980" and row1["P (mW)"] == "300.0"
    assert row1["FoM"] == "312.0"                               # the Pisa paper's Table V: 312.04
    row4 = dict(zip(aes.headers, aes.cells[1]))
    assert row4["cores"] == "4 †" and row4["efficiency %"] == "90.0 [85.0–95.0]"
    assert any("oversubscribed" in n for n in aes.notes)
    ecdsa = next(t for t in tables if t.key == "ecdsa-sign")
    assert "TH (Op/s)" in ecdsa.headers and "E (mJ/Op)" in ecdsa.headers and "D (Op)" in ecdsa.headers
    row = dict(zip(ecdsa.headers, ecdsa.cells[0]))
    assert row["FoM"] == "2.572"                                # the Pisa paper's Table V: 2.57
    summary = tables[-1]
    assert summary.key == "summary" and "FoM 4 cores" in summary.headers


@pytest.mark.e2e
def test_parallel_with_an_energy_meter_measures_concurrent_windows(harness, tmp_path):
    from test_meters import FakeRapl      # the same constant-power fake powercap tree
    with FakeRapl(tmp_path / "powercap", watts=10.0) as fake:
        out = tmp_path / "run.json"
        proc = cli("run", "--op", "sha256", "--param", "bytes=1024", "--engine", "openssl-hw", "--parallel", "1,2",
                   "--energy", "rapl", "--repeat", "2", "--warmup", "0", "--min-time", "0.005",
                   "--db", str(tmp_path / "db.sqlite"), "--json", str(out), "--quiet",
                   env={"CRYPTOBENCH_POWERCAP_ROOT": str(fake.root)})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    for r in doc["results"]:
        n = r["params"]["parallel"]
        en = r["energy"]
        assert en["provenance"] == "measured" and f"{n} concurrent pinned processes" in en["method"]
        assert len(en["windows"]) == 5
        # a window's ops are summed over the N processes: at least one batch of k from each
        assert all(w["ops"] >= n * r["k"] for w in en["windows"] if "reset" not in w)
    assert "P (mW)" in proc.stdout and "E (mJ/Mb)" in proc.stdout

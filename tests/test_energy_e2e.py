"""Energy end to end through the real command line: a simulated N6705 (pyvisa-sim) captured, cut
into windows, integrated and stored as a run with the median and RSD of energy; a trace matched to
a stored firmware run's repetitions (count and order checked, nothing stored on a mismatch); and
every trace format without edges or with an odd number of edges refused with file and line."""
import json
import shutil
import sqlite3
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, cli
from test_live_capture import ELOG_WINDOW_J, IDN, SIM, SIM_RESOURCE, _import_line
from test_trace_formats import write

from cryptobench.targets.trace import synth

# end to end: the real command line on stored or measured runs (the slow tier)
pytestmark = pytest.mark.e2e

SCHEMA = json.loads((ROOT / "docs" / "result.schema.json").read_text())


def _runs(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def test_simulated_n6705_capture_segment_store(tmp_path):
    db, out, doc_path = tmp_path / "r.sqlite", tmp_path / "live.csv", tmp_path / "run.json"
    r = cli("energy", "capture", "--instrument", "n6705", "--resource", SIM_RESOURCE, "--backend", SIM,
            "--period", "0.001", "--duration", "0.5", "--records", "100",
            "--channel", "1:iv", "--channel", "2:v:marker", "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = cli(*_import_line(r.stdout), "--threshold", "1.65", "--expect", "5", "--op", "sha256", "--param", "bytes=64",
            "--engine", "se-sha256", "--db", str(db), "--json", str(doc_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(doc_path.read_text())
    jsonschema.validate(doc, SCHEMA)
    (cell,) = doc["results"]
    e = cell["energy"]
    assert cell["provenance"] == e["provenance"] == "measured" and cell["status"] == "ok"
    assert e["per_op_j"] == pytest.approx(ELOG_WINDOW_J, rel=1e-6)
    assert e["stats"]["energy_j"]["n"] == 5 and e["stats"]["energy_j"]["rsd_pct"] == pytest.approx(0, abs=1e-6)
    assert e["stats"]["energy_j"]["median"] == pytest.approx(ELOG_WINDOW_J, rel=1e-6)
    assert len(e["per_window_j"]) == 5 and e["mJ_per_Mb"] > 0
    assert cell["time_s"]["median"] == pytest.approx(0.040, rel=1e-6)        # 40 samples of 1 ms
    trace = doc["conditions"]["trace"]
    assert trace["capture"]["instrument"]["idn"] == IDN and trace["format"] == "generic-csv"
    # the run's plan as `energy import` has always stored it: the trace's one group, and nothing else
    plan = {"suite": None, "baseline": None, "options": {"engines": ["se-sha256"], "repeat": 5},
            "groups": [{"op": "sha256", "params": {"bytes": 64}, "engines": ["se-sha256"]}], "kind": "trace"}
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT plan FROM runs").fetchone()[0] == json.dumps(plan)
    assert doc["run"]["options"] == plan["options"]
    shown = cli("show", "latest", "--db", str(db))
    assert shown.returncode == 0 and "µJ" in shown.stdout and "se-sha256" in shown.stdout


needs_sim = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="gcc-arm-none-eabi is installed by ./setup.sh")


def _trace_for(doc: dict, path: Path, drop: int = 0, swap: bool = False, current_a=0.010, idle_a=0.002):
    """A generic CSV at 1 MS/s whose marker windows last what the simulator saw on the marker GPIO,
    cell after cell, in the run's order (as a power analyzer would have logged the board)."""
    clock = doc["conditions"]["target"]["simulator"]["clock_hz"]
    cells = [r for r in doc["results"] if r["status"] == "ok"]
    if swap:
        cells = cells[::-1]
    widths = [round(c / clock * 1e6) for r in cells for c in r["marker"]["cycles"]]
    widths = widths[:len(widths) - drop]
    t = 0
    with open(path, "w") as f:
        f.write("t,i,m\n")
        for w in widths:
            for k in range(20):
                f.write(f"{t * 1e-6:.6f},{idle_a},0\n")
                t += 1
            for k in range(w):
                f.write(f"{t * 1e-6:.6f},{current_a},1\n")
                t += 1
        for k in range(20):
            f.write(f"{t * 1e-6:.6f},{idle_a},0\n")
            t += 1
    return {(r["op"], r["params"]["bytes"]): 3.3 * current_a * 1e-6 * round(r["marker"]["cycles"][0] / clock * 1e6)
            for r in cells}


@needs_sim
def test_trace_matched_to_a_firmware_run(tmp_path):
    db, doc_path = tmp_path / "r.sqlite", tmp_path / "run.json"
    r = cli("run", "--target", "sim:cortex-m4", "--op", "sha256", "--param", "bytes=64,1024",
            "--engine", "mbedtls", "--db", str(db), "--json", str(doc_path), "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(doc_path.read_text())
    imp = ["energy", "import", None, "--format", "generic-csv", "--option", "time_col=t", "--option", "current_col=i",
           "--option", "marker_col=m", "--voltage", "3.3", "--run", "latest", "--db", str(db)]

    def run_import(path):
        args = list(imp)
        args[2] = str(path)
        return cli(*args)

    # one window short: the count differs, nothing is stored
    _trace_for(doc, tmp_path / "short.csv", drop=1)
    bad = run_import(tmp_path / "short.csv")
    assert bad.returncode == 2 and "planned" in bad.stderr and "nothing stored" in bad.stderr
    assert bad.stdout == ""                             # no window table before (or instead of) the error
    # the cells in the wrong order: durations do not fit, nothing is stored
    _trace_for(doc, tmp_path / "swapped.csv", swap=True)
    bad = run_import(tmp_path / "swapped.csv")
    assert bad.returncode == 2 and "do not match the run's order" in bad.stderr and bad.stdout == ""
    shown = json.loads(cli("show", "latest", "--format", "json", "--db", str(db)).stdout)
    assert all(r.get("energy", {}).get("provenance") != "measured" for r in shown["results"])
    # the right trace: every cell gets its measured energy, time stays the simulated one
    want = _trace_for(doc, tmp_path / "good.csv")
    ok = run_import(tmp_path / "good.csv")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("matched ") and ": storing their energy\n" in ok.stdout
    shown = json.loads(cli("show", "latest", "--format", "json", "--db", str(db)).stdout)
    jsonschema.validate(shown, SCHEMA)
    for r in shown["results"]:
        if r["status"] != "ok":
            continue
        e = r["energy"]
        assert e["provenance"] == "measured" and r["provenance"] == "simulated"
        assert e["per_op_j"] == pytest.approx(want[(r["op"], r["params"]["bytes"])], rel=1e-6)
        assert e["stats"]["energy_j"]["n"] == r["n"]
    assert shown["conditions"]["energy_trace"]["windows"] == sum(r["n"] for r in shown["results"] if r["status"] == "ok")


FORMATS = ["generic-csv", "ppk2", "n6705-csv", "n6705-dlog", "saleae", "jls"]


def _cli_options(fmt, opts):
    args = []
    for k, v in opts.items():
        args += ["--option", f"{k}={v}"]
    if fmt.startswith("n6705"):
        args += ["--threshold", "1.65"]
    return args


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", ["no-edges", "odd-edges"])
def test_every_format_without_proper_edges_is_refused_and_nothing_stored(tmp_path, fmt, case):
    if case == "no-edges":
        plan = synth.PulsePlan(n=0, width_s=1e-4, gap_s=5e-4, dt=1e-5)
    else:                       # the trace starts inside the first window: one edge too few
        plan = synth.PulsePlan(n=3, width_s=1e-4, gap_s=2e-4, lead_s=0.0, dt=1e-5)
    path, opts = write(fmt, tmp_path, plan)
    db = tmp_path / "r.sqlite"
    r = cli("energy", "import", str(path), "--format", fmt, *_cli_options(fmt, opts), "--voltage", "3.3",
            "--op", "sha256", "--param", "bytes=32", "--engine", "x", "--db", str(db))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and str(path) in r.stderr
    if case == "no-edges":
        assert "marker edges" in r.stderr and "found none" in r.stderr
    else:
        assert "odd number of edges" in r.stderr
        assert any(w in r.stderr for w in (":line ", ":byte ", ":t = ")), r.stderr
    assert _runs(db) == 0


def _run_of_one_cell(db: Path, reps: int, per_rep_s: float) -> None:
    """A stored run whose one ok cell was timed `reps` times at `per_rep_s` each (the windows a
    board's marker would have framed)."""
    from storeutil import save_cell_at
    from cryptobench.core.records import Plan
    from cryptobench.store.database import Store
    store = Store(db)
    plan = {"suite": None, "baseline": None, "options": {"engines": ["dev"], "repeat": reps, "warmup": 0,
                                                          "min_time": 0.0, "single": False}, "groups": []}
    rid = store.create_run(Plan.from_json(plan), {"host": {}, "harness": {}, "engines": {}})
    t = per_rep_s
    result = {"n": reps, "k": 1, "single_shot": False,
              "time_s": {"median": t, "mean": t, "stdev": 0.0, "rsd_pct": 0.0, "min": t, "max": t,
                         "ci95": [t, t], "ci_coverage": 0.94}, "outliers": 0, "ops_per_s": 1 / t, "flags": []}
    save_cell_at(store, rid, 0, {"op": "sha256", "params": {"bytes": 64}, "engine": "dev", "target": "board:x",
                                 "provenance": "measured", "status": "ok", "kat": "pass", "detail": "synthetic",
                                 "samples": [[1, int(t * 1e9), 0]] * reps, "result": result})
    store.set_status(rid, "complete")
    store.close()


def test_import_says_first_whether_it_stores_and_prints_no_table_when_it_does_not(tmp_path):
    db = tmp_path / "r.sqlite"
    _run_of_one_cell(db, reps=5, per_rep_s=4e-5)
    short, right, many = tmp_path / "short.csv", tmp_path / "right.csv", tmp_path / "many.csv"
    synth.write_generic_csv(short, synth.PulsePlan(n=3, width_s=4e-5, gap_s=4e-5, dt=1e-5))
    synth.write_generic_csv(right, synth.PulsePlan(n=5, width_s=4e-5, gap_s=4e-5, dt=1e-5))
    opts = synth.write_generic_csv(many, synth.PulsePlan(n=60, width_s=4e-5, gap_s=4e-5, dt=1e-5))
    base = ("--format", "generic-csv", *_cli_options("generic-csv", opts), "--db", str(db))
    table_header = "start s"
    # windows that do not match the run: the one-line error, no window table anywhere, nothing stored
    bad = cli("energy", "import", str(short), *base, "--run", "1")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.splitlines()[-1].startswith("cryptobench: error: ") and "nothing stored" in bad.stderr
    assert "but the trace has 3 marker windows" in bad.stderr and table_header not in bad.stderr
    shown = json.loads(cli("show", "1", "--format", "json", "--db", str(db)).stdout)
    assert all("energy" not in r for r in shown["results"])
    # windows that match: the verdict first, then the table, then stored
    ok = cli("energy", "import", str(right), *base, "--run", "1")
    assert ok.returncode == 0, ok.stderr
    lines = ok.stdout.splitlines()
    assert lines[0] == "matched 5 windows to 1 cells of run 1: storing their energy"
    assert table_header in lines[2] and "stored energy in run 1" in ok.stderr
    # nothing asked to be stored: said first, then the table (at most 50 windows of it)
    p = cli("energy", "import", str(many), *base)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith(f"not stored: 60 windows read from {many} (give --run RUN_ID")
    assert "… 10 more windows" in p.stdout and len(lines) < 60
    # a new run of one cell: said first
    p = cli("energy", "import", str(right), *base, "--op", "sha256", "--param", "bytes=64", "--engine", "dev")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "storing 5 windows as a new run of one cell: sha256 on dev"
    assert _runs(db) == 2

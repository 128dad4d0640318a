"""`report` at scale and the `energy` / `model` commands' lines (issue 30, items 4 and 7).

A report over many runs keeps, per sweep group, the runs' own points only up to MAX_LINES lines;
past that one summary line per engine whose memory does not grow with the runs, and the figure
says so. A report killed with kill -9 leaves its staging folder; the next report into the folder
removes it (and says so) when its process is gone. Every line `energy` and `model` print passes
through the one printable path: a power profile, a trace file name, a stored engine label cannot
reach the terminal raw."""
import html
import os
import re
import signal
import socket
import subprocess
import sys
import time
from statistics import mean

import pytest

from conftest import cli
from cryptobench.cli import main
from cryptobench.core.records import Plan
from cryptobench.report.figures import build_figures
from cryptobench.report.series import Sweeps
from cryptobench.report.sweep_summary import MAX_LINES, OMITTED_KEPT
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from storeutil import save_cell_at

COND = {"host": {"hostname": "test", "cpu": {"model": "Test CPU", "arch": "x86_64"}},
        "harness": {"harness": "cbh-host", "cflags": "-O2", "counter": "tsc", "counter_hz": 2.5e9}}
LENGTHS = (16, 64, 256)
ESC = "\x1b]0;x\x07"                  # sets the terminal's title where it reaches one raw


def _cell(op, engine, n, t, detail=""):
    samples = [[10, int(t * 10 * 1e9 * (1 + 0.01 * (i % 3))), 0] for i in range(5)]
    return {"op": op, "params": {"bytes": n}, "engine": engine, "target": "host", "provenance": "measured",
            "status": "ok", "kat": "pass", "detail": detail, "samples": samples,
            "result": derive(op, {"bytes": n}, samples, {"counter": "tsc"}, False)}


def _sweep_store(db, runs: int, engines=("openssl-sw", "mbedtls"), op="sha256"):
    """`runs` runs of `op` over LENGTHS on `engines`; each run a little slower than the one before
    (so that the spread between runs has a width)."""
    store = Store(db)
    for r in range(runs):
        rid = store.create_run(Plan.from_json({"suite": None, "label": f"run {r + 1}", "groups": [],
                                               "options": {"engines": list(engines), "repeat": 5}}), COND)
        cells = [_cell(op, e, n, (1 + i) * (1e-7 + n * 1e-9) * (1 + 0.1 * r))
                 for n in LENGTHS for i, e in enumerate(engines)]
        for seq, c in enumerate(cells):
            save_cell_at(store, rid, seq, c)
        store.set_status(rid, "complete")
    store.close()
    return db


# --- report memory: a summary past MAX_LINES lines --------------------------------------------------
def test_a_sweep_keeps_the_runs_points_up_to_max_lines_then_only_a_summary(tmp_path):
    runs = MAX_LINES // 2 + 2                  # two engines: MAX_LINES + 4 lines, one per (run, engine)
    db = _sweep_store(tmp_path / "r.sqlite", runs)
    store = Store(db)
    sweeps, held, spreads = Sweeps("time", runs), [], []
    medians = []                               # openssl-sw at 16 B, per run
    for rid in range(1, runs + 1):
        run = store.load_run(rid)
        medians += [c.result.time_s["median"] for c in run.cells if c.engine == "openssl-sw" and c.params["bytes"] == 16]
        sweeps.add(run)
        [g] = sweeps.groups.values()
        held.append(sum(len(s.points) for s in g.series))
        spreads.append(sum(len(line.at) for line in g.summary.lines.values()))
    store.close()
    full = MAX_LINES // 2
    assert held[:full] == [2 * len(LENGTHS) * (i + 1) for i in range(full)]      # every run's points, so far
    assert held[full:] == [0, 0]                      # past MAX_LINES lines: none of them
    assert spreads == [2 * len(LENGTHS)] * runs       # the summary: per engine and length, whatever the runs
    [g] = sweeps.result()
    assert g.summarised and sorted(s.label for s in g.series) == [f"mbedtls ({runs} runs)",
                                                                 f"openssl-sw ({runs} runs)"]
    line = next(s for s in g.series if s.engine == "openssl-sw")
    first = line.points[0]
    assert first.x == 16 and first.y == pytest.approx(mean(medians))
    assert (first.lo, first.hi) == (min(medians), max(medians)) and first.n == runs
    assert g.tally.total == runs * 2 * len(LENGTHS) and g.tally.ns == {5}         # the caption's counts


def _captions(report_dir) -> list[str]:
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    return [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)]


@pytest.mark.slow
def test_a_report_over_many_runs_draws_a_line_per_engine_and_says_so(tmp_path):
    runs = MAX_LINES // 2 + 1
    db = _sweep_store(tmp_path / "r.sqlite", runs)
    assert main(["report", f"1-{runs}", "--out", str(tmp_path / "many"), "--db", str(db), "--quiet"]) == 0
    [cap] = [c for c in _captions(tmp_path / "many") if "duration vs payload length" in c]
    assert f"{2 * runs} engine–run lines over {runs} runs are more than the {MAX_LINES}" in cap
    assert "mean of the runs' medians" in cap and "not a confidence interval" in cap
    assert "one line per engine;" in cap and "one line per engine and run" not in cap
    svg = next((tmp_path / "many" / "figures").glob("duration-*.svg")).read_text(encoding="utf-8")
    assert f"openssl-sw ({runs} runs)" in svg and "(run 1)" not in svg
    # a few runs: a line per engine and run, as before
    assert main(["report", "1-2", "--out", str(tmp_path / "few"), "--db", str(db), "--quiet"]) == 0
    [cap] = [c for c in _captions(tmp_path / "few") if "duration vs payload length" in c]
    assert "one line per engine and run" in cap and "mean of the runs' medians" not in cap


def test_reasons_for_cells_left_out_are_kept_up_to_a_limit_and_the_rest_counted(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid = store.create_run(Plan.from_json({"suite": None, "groups": [], "options": {"engines": ["openssl-sw"]}}), COND)
    lengths = [16 * (i + 1) for i in range(OMITTED_KEPT + 12)]
    for seq, n in enumerate(lengths):
        c = _cell("sha256", "openssl-sw", n, 1e-7 + n * 1e-9)
        if seq >= 2:                                   # two points drawn, the rest failed, each its own reason
            c.update(status="failed", detail=f"harness error {seq}", result=None, samples=None)
        save_cell_at(store, rid, seq, c)
    run = store.load_run(rid)
    store.close()
    [fig] = [f for f in build_figures([run]) if f.kind == "duration"]
    assert f"and {len(lengths) - 2 - OMITTED_KEPT} more cell(s) for other reasons" in fig.caption
    assert fig.caption.count("harness error") == OMITTED_KEPT


# --- staging folders a killed report left -------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:64]


def test_the_next_report_removes_staging_folders_whose_process_is_gone(tmp_path, capsys):
    db = _sweep_store(tmp_path / "r.sqlite", 1)
    out = tmp_path / "rep\x1b[2J"                       # a folder name shown in the note: printable
    out.mkdir()
    dead = _dead_pid()
    stale = [out / f".report-{dead}@{_host()}-abc123.tmp", out / f".report-old-{dead}@{_host()}-x_9.tmp"]
    kept = [out / f".report-{os.getppid()}@{_host()}-live.tmp",      # a live process: its report is running
            out / f".report-{dead}@another-host-abc.tmp",           # another host's pid says nothing here
            out / ".report-legacy.tmp"]                              # not named by a process: not ours to judge
    for d in stale + kept:
        (d / "figures").mkdir(parents=True)
        (d / "figures" / "half.png").write_bytes(b"x")
    assert main(["report", "1", "--out", str(out), "--db", str(db), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("note: removed 2 staging folders")
    assert f"process {dead}, no longer running" in err and "\\x1b[2J" in err and "\x1b" not in err
    assert not any(d.exists() for d in stale) and all(d.exists() for d in kept)
    assert (out / "report.html").exists()
    # nothing stale: nothing said
    assert main(["report", "1", "--out", str(out), "--db", str(db), "--quiet", "--force"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.e2e
def test_a_report_killed_with_kill_9_leaves_a_folder_the_next_report_removes(tmp_path):
    db = _sweep_store(tmp_path / "r.sqlite", 6, engines=("openssl-sw", "mbedtls", "libsodium"))
    out = tmp_path / "rep"
    proc = subprocess.Popen([sys.executable, "-m", "cryptobench.cli", "report", "1-6", "--out", str(out),
                             "--db", str(db), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120                   # a hang guard only
    while not list(out.glob(".report-*.tmp")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the report ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    [left] = out.glob(".report-*.tmp")
    assert left.name.startswith(f".report-{proc.pid}@")
    done = cli("report", "1", "--out", str(out), "--db", str(db), "--quiet", timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == (f"note: removed 1 staging folder that a killed report left in {out} "
                                   f"(process {proc.pid}, no longer running)")
    assert sorted(p.name for p in out.iterdir()) == ["figures", "report.html", "tables"]


# --- energy and model lines -----------------------------------------------------------------------------
def _profile(tmp_path):
    path = tmp_path / "evil.toml"
    path.write_text('name = "evil\\u001b]0;x\\u0007"\nsource = "src\\u001b[2J"\nsupply_v = 3.0\n'
                    'active_current_a = 0.003\n[peripherals]\n"aes\\u001b[31m" = 0.001\n', encoding="utf-8")
    return path


def _no_raw_controls(text: str) -> None:
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), repr(text)


def test_energy_model_shows_a_hostile_profiles_name_and_peripherals_escaped(tmp_path):
    before = _profile(tmp_path).read_bytes()
    proc = cli("energy", "model", "--profile", str(tmp_path / "evil.toml"), "--time", "1e-3",
               "--peripheral", "aes\x1b[31m")
    assert proc.returncode == 0, proc.stderr
    _no_raw_controls(proc.stdout + proc.stderr)
    assert proc.stdout.startswith("evil\\x1b]0;x\\x07: ")
    assert "aes\\x1b[31m" in proc.stdout and "src\\x1b[2J" in proc.stdout
    assert (tmp_path / "evil.toml").read_bytes() == before


@pytest.mark.e2e
def test_energy_model_and_model_crossover_of_a_run_with_hostile_engine_labels(tmp_path):
    engines = ("openssl-sw", "evil" + ESC)
    db = _sweep_store(tmp_path / "r.sqlite", 1, engines=engines)
    _profile(tmp_path)
    proc = cli("energy", "model", "--profile", str(tmp_path / "evil.toml"), "--run", "1", "--db", str(db),
               "--baseline", "openssl-sw")
    assert proc.returncode == 0, proc.stderr
    _no_raw_controls(proc.stdout + proc.stderr)
    assert "evil\\x1b]0;x\\x07" in proc.stdout
    proc = cli("model", "crossover", "1", "--op", "sha256", "--a", "openssl-sw", "--b", engines[1],
               "--profile", str(tmp_path / "evil.toml"), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    _no_raw_controls(proc.stdout + proc.stderr)
    assert "evil\\x1b]0;x\\x07" in proc.stdout


def test_energy_import_shows_a_hostile_trace_file_name_and_supply_escaped(tmp_path):
    from cryptobench.targets.trace import synth
    trace = tmp_path / f"trace{ESC}.csv"
    plan = synth.PulsePlan(n=5, width_s=1e-3, gap_s=1e-3, dt=1e-4, second=synth.Supply(name="se\x1b[31m"))
    options = synth.write_generic_csv(trace, plan)
    before = trace.read_bytes()
    args = [a for k, v in options.items() for a in ("--option", f"{k}={v}")]
    proc = cli("energy", "import", str(trace), "--format", "generic-csv", *args)
    assert proc.returncode == 0, proc.stderr
    _no_raw_controls(proc.stdout + proc.stderr)
    assert "trace\\x1b]0;x\\x07.csv" in proc.stdout and "not stored: 5 windows" in proc.stdout
    assert "supply se\\x1b[31m" in proc.stdout
    assert trace.read_bytes() == before

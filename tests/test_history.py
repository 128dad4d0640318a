"""`cryptobench history` (analysis/history.py, docs/gate.md "History"): one op's value over stored runs,
ordered by the library's commit (a git repository made here) or else by time, change points on any
change of a deterministic value and on diff's significant changes of a measured one, the --param
filter, the report's history figure, and usage errors in one line."""
import json
import os
import random
import subprocess

import pytest

from conftest import cli

from cryptobench.core.records import Cell, Plan
from cryptobench.stats.results import derive
from cryptobench.store.database import Store

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t",
       "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
SIM = {"kind": "sim", "board": "sim-m4", "cpu": "cortex-m4", "opt": "-O2", "libraries": ["tiny"], "core": "cortex-m4",
       "device": "stm32f407",
       "clock_hz": 16e6}


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=ENV).stdout.strip()


@pytest.fixture
def commits(tmp_path):
    """A library repository with three commits, oldest first."""
    repo = tmp_path / "lib"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    out = []
    for i in range(3):
        (repo / "lib.c").write_text(f"int v(void) {{ return {i}; }}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"c{i}")
        out.append(git(repo, "rev-parse", "HEAD"))
    return repo, out


def store_run(db, values, commit=None, repo=None, simulated=True, version="1.0", n=3, seed=0, stack=600):
    """A run of sha256 cells: {bytes: cycles per op} on the simulator (identical samples), or
    measured host cells ({bytes: seconds}, n noisy samples) without a commit."""
    store = Store(db)
    groups = [{"op": "sha256", "params": {"bytes": b}, "engines": ["tiny"]} for b in values]
    plan = {"options": {"engines": ["tiny"], "repeat": n}, "groups": groups, **({"target": SIM} if simulated else {})}
    build = {"library": "tiny", "library_version": version, "compiler": "arm-none-eabi-gcc 12.2", "cflags": "-O2",
             "ldflags": "", "counter": "dwt", "console": "semihosting",
             **({"library_commit": commit, "library_ref": "x", "library_repo": str(repo)} if commit else {})}
    cond = {"host": {"cpu": {"model": "Test CPU"}}, "harness": {"counter": "tsc", "counter_hz": 2.4e9},
            **({"target": SIM, "builds": {"tiny": build}} if simulated else {"engines": {"tiny": {"version": version}}})}
    rid = store.create_run(Plan.from_json(plan), cond)
    rng = random.Random(seed)
    for seq, (b, v) in enumerate(values.items()):
        if simulated:
            samples = [[1, int(v / 16e6 * 1e9), int(v)] for _ in range(n)]
            result = derive("sha256", {"bytes": b}, samples, {"counter": "model", "counter_hz": 16e6}, True)
            result.update(stack_bytes=stack, code_size={"flash_bytes": 2000, "ram_bytes": 8})
        else:
            samples = [[1, int(v * rng.gauss(1, 0.01) * 1e9), 0] for _ in range(n)]
            result = derive("sha256", {"bytes": b}, samples, {"counter": "none", "counter_hz": 0}, True)
        store.save_cell(rid, Cell.from_json({"op": "sha256", "params": {"bytes": b}, "engine": "tiny",
                                             "target": "sim:cortex-m4:stm32f407" if simulated else "host",
                                             "provenance": "simulated" if simulated else "measured", "status": "ok",
                                             "kat": "pass", "detail": "", "samples": samples, "result": result,
                                             "seq": seq}))
    store.set_status(rid, "complete")
    store.close()
    return rid


def history(db, *args):
    proc = cli("history", "--op", "sha256", *args, "--db", str(db), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["series"]


def test_ordered_by_commit_when_every_run_recorded_one(tmp_path, commits):
    repo, (c0, c1, c2) = commits
    db = tmp_path / "db.sqlite"
    r2 = store_run(db, {64: 1200}, c2, repo)        # stored newest commit first
    r0 = store_run(db, {64: 1000}, c0, repo)
    r1 = store_run(db, {64: 1000}, c1, repo)
    (s,) = history(db)
    assert s["order"] == "commit"
    assert [p["run_id"] for p in s["points"]] == [r0, r1, r2]
    assert [p["library_commit"] for p in s["points"]] == [c0, c1, c2]
    assert [p["change_point"] for p in s["points"]] == [False, False, True]
    assert s["points"][2]["change"] == pytest.approx(0.2)


def test_ordered_by_time_without_commits_or_repository(tmp_path, commits):
    repo, (c0, c1, _) = commits
    db = tmp_path / "db.sqlite"
    ra = store_run(db, {64: 1000}, c1, tmp_path / "gone")     # the repository is not reachable here
    rb = store_run(db, {64: 1000}, c0, tmp_path / "gone")
    (s,) = history(db)
    assert s["order"] == "time" and "not reachable" in s["order_why"]
    assert [p["run_id"] for p in s["points"]] == [ra, rb]
    db2 = tmp_path / "db2.sqlite"
    store_run(db2, {64: 1000}, c1, repo)
    store_run(db2, {64: 1000})                                 # no commit recorded
    (s,) = history(db2)
    assert s["order"] == "time" and "not every run" in s["order_why"]


def test_a_deterministic_value_steps_on_any_change(tmp_path):
    db = tmp_path / "db.sqlite"
    for v in (1000, 1000, 1001, 1001, 990):
        store_run(db, {64: v})
    (s,) = history(db)
    assert [p["change_point"] for p in s["points"]] == [False, False, True, False, True]
    assert all(p["deterministic"] for p in s["points"])
    (st,) = history(db, "--metric", "stack")
    assert not any(p["change_point"] for p in st["points"])


def test_a_measured_value_steps_only_beyond_the_noise(tmp_path):
    db = tmp_path / "db.sqlite"
    for i, t in enumerate((1e-5, 1.002e-5, 0.999e-5, 1.3e-5)):       # 1 % noise, then +30 %
        store_run(db, {64: t}, simulated=False, n=25, seed=i)
    (s,) = history(db, "--metric", "time")
    assert [p["change_point"] for p in s["points"]] == [False, False, False, True]
    assert not any(p["deterministic"] for p in s["points"])
    assert s["points"][3]["verdict"] == "slower"


def test_the_param_filter_keeps_one_series(tmp_path):
    db = tmp_path / "db.sqlite"
    store_run(db, {64: 1000, 1024: 9000})
    store_run(db, {64: 1000, 1024: 9100})
    assert len(history(db)) == 2
    (s,) = history(db, "--param", "bytes=1024")
    assert s["params"] == {"bytes": 1024} and [p["value"] for p in s["points"]] == [9000, 9100]
    assert len(history(db, "--target", "sim:cortex-m4")) == 2           # a core takes its cells' targets
    assert cli("history", "--op", "sha256", "--target", "host", "--db", str(db)).returncode == 2


def test_table_md_and_csv_formats(tmp_path, commits):
    repo, (c0, c1, _) = commits
    db = tmp_path / "db.sqlite"
    store_run(db, {64: 1000}, c0, repo)
    store_run(db, {64: 1100}, c1, repo, version="1.1")
    md = cli("history", "--op", "sha256", "--db", str(db), "--format", "md")
    assert md.returncode == 0, md.stderr
    assert c1[:12] in md.stdout and "◆ changed" in md.stdout and "+10.00 %" in md.stdout and "ordered by commit" in md.stdout
    csv = cli("history", "--op", "sha256", "--db", str(db), "--format", "csv")
    assert csv.returncode == 0 and csv.stdout.splitlines()[0].startswith("series,run,date,library,commit")
    table = cli("history", "--op", "sha256", "--db", str(db))
    assert table.returncode == 0 and "1.1" in table.stdout


@pytest.mark.parametrize("args, expected", [
    (["--op", "nope"], "--op: unknown operation 'nope'"),
    (["--op", "sha256", "--param", "curve=p256"], "--param: sha256 has no parameter 'curve'"),
    (["--op", "sha256", "--param", "bytes"], "--param: expected KEY=VALUE"),
    (["--op", "sha256", "--metric", "joules"], "argument --metric: invalid choice"),
    (["--op", "sha256", "--engine", "nobody"], "history: no stored run has an ok sha256 cell"),
    ([], "the following arguments are required: --op"),
])
def test_usage_errors_exit_2_in_one_line(tmp_path, args, expected):
    db = tmp_path / "db.sqlite"
    store_run(db, {64: 1000})
    proc = cli("history", *args, "--db", str(db))
    assert proc.returncode == 2, proc.stdout
    assert expected in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_the_history_figure_marks_the_change_points(tmp_path, commits):
    from cryptobench.analysis.history import build_series
    from cryptobench.report.figures import KINDS, history_figures
    repo, (c0, c1, c2) = commits
    db = tmp_path / "db.sqlite"
    ids = [store_run(db, {64: v}, c, repo) for v, c in ((1000, c0), (1000, c1), (1100, c2))]
    store = Store(db, create=False)
    runs = [store.load_run(i) for i in ids]
    store.close()
    (fig,) = history_figures(build_series(runs, "sha256", "cycles"), set())
    assert fig.kind == "history" and "history" in KINDS
    assert fig.id.startswith("history-sha256-cycles-tiny-")
    ax = fig.fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"run {i}\n{c[:12]}" for i, c in zip(ids, (c0, c1, c2))]
    steps = [c for c in ax.collections if c.get_label() == "change point"]
    assert len(steps) == 1 and [tuple(o) for o in steps[0].get_offsets()] == [(2.0, 1100.0)]
    assert "+10.0 %" in [t.get_text() for t in ax.texts]
    assert f"run {ids[2]} ({c2[:12]}): +10.00 %" in fig.caption and "ordered by commit" in fig.caption
    assert "provenance: simulated" in fig.caption.lower()


@pytest.mark.e2e
def test_report_with_history_writes_the_figure(tmp_path, commits):
    repo, cs = commits
    db = tmp_path / "db.sqlite"
    for v, c in zip((1000, 1000, 1050), cs):
        store_run(db, {64: v}, c, repo)
    proc = cli("report", "1-3", "--out", str(tmp_path / "rep"), "--history", "sha256", "--db", str(db), "--quiet")
    assert proc.returncode == 0, proc.stderr
    figs = sorted(p.name for p in (tmp_path / "rep" / "figures").glob("history-*"))
    assert figs == ["history-sha256-cycles-tiny-r1-2-3.png", "history-sha256-cycles-tiny-r1-2-3.svg"]
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "History over the runs" in html and f"at commit {cs[2][:12]} (x)" in html
    bad = cli("report", "1-3", "--out", str(tmp_path / "rep2"), "--history", "aes-gcm-encrypt", "--db", str(db))
    assert bad.returncode == 2 and bad.stderr.strip().startswith("cryptobench: error: --history: no ok aes-gcm-encrypt")


def test_runs_from_two_repositories_say_so_naming_both(tmp_path, commits):
    """Issue 43: one run from another repository (a fork's checkout) is not "the repository is not
    reachable here": the series names both, by their last component, and still orders by commit
    where one of them holds every run's commit."""
    repo, (c0, c1, _) = commits
    fork = tmp_path / "fork"
    subprocess.run(["git", "clone", "-q", str(repo), str(fork)], check=True, capture_output=True)
    db = tmp_path / "db.sqlite"
    store_run(db, {64: 1000}, c1, repo)
    store_run(db, {64: 1000}, c0, fork)
    (s,) = history(db)
    assert s["order"] == "commit" and s["order_why"] in ("commit order of lib", "commit order of fork")
    db2 = tmp_path / "db2.sqlite"
    store_run(db2, {64: 1000}, c1, tmp_path / "gone" / "mbedtls")
    store_run(db2, {64: 1000}, c0, tmp_path / "elsewhere" / "mbedtls-fork")
    (s,) = history(db2)
    assert s["order"] == "time" and "runs came from 2 repositories (mbedtls, mbedtls-fork)" in s["order_why"]
    assert str(tmp_path) not in s["order_why"]


def test_markdown_lets_no_recorded_text_link_embed_mention_or_format(tmp_path, commits):
    from mdcheck import live_spots
    repo, (c0, c1, _) = commits
    db = tmp_path / "db.sqlite"
    store_run(db, {64: 1000}, c0, repo, version="![x](http://evil.example/p.png)")
    store_run(db, {64: 1100}, c1, repo, version="@octocat [x](javascript:alert(1)) **bold** <img src=x> a|b `c`")
    md = cli("history", "--op", "sha256", "--db", str(db), "--format", "md")
    assert md.returncode == 0, md.stderr
    assert live_spots(md.stdout, ("evil.example", "octocat", "javascript", "<img", "**bold**")) == [], md.stdout
    assert str(tmp_path) not in md.stdout and "commit order of `lib`" in md.stdout

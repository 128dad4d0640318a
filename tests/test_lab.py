"""labgrid places as targets, and one run spread over several, against a lab really started on
localhost (conftest.qemu_lab: labgrid-coordinator, labgrid-exporter with ser2net, two places whose
boards are QEMU machines behind a pty and a REST power/flash port). The leases themselves are
also tested without a lab."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, cli
from cryptobench.targets.mcu.lab.leases import Leases, drop_hold, holds, record_hold
from cryptobench.core.records import Cell, Group, Params, Plan
from cryptobench.store.database import Store

LIBS = ["--engine", "mbedtls", "--engine", "bearssl", "--engine", "monocypher"]
OPS = ["--op", "sha256", "--op", "sha512", "--op", "aes-gcm-encrypt"]


def lab_run(lab, db, target, *extra, env=None):
    return cli("run", "--target", target, *LIBS, *OPS, "--db", str(db), "--format", "json", *extra,
               env={**lab.env, **(env or {})})


def cells_of(db) -> dict:
    """cell_key -> (target, status, kat, stack, code size) of the latest run in `db`."""
    store = Store(db)
    run = store.load_run(store.resolve_run_id("latest"))
    out = {}
    for c in run.cells:
        r = c.result.to_json() if c.result else {}
        out[c.key] = (c.target, c.status, c.kat, r.get("stack_bytes"), json.dumps(r.get("code_size"), sort_keys=True))
    return out


def same_cells(a: dict, b: dict) -> bool:
    """The same cells with the same results, wherever each was measured."""
    return {k: v[1:] for k, v in a.items()} == {k: v[1:] for k, v in b.items()}


@pytest.fixture(scope="module")
def reference(qemu_lab, tmp_path_factory):
    """The suite measured on one place: what every spread run must reproduce."""
    db = tmp_path_factory.mktemp("ref") / "one.sqlite"
    proc = lab_run(qemu_lab, db, "labgrid:qemu-a")
    assert proc.returncode == 0, proc.stderr
    return db, cells_of(db)


@pytest.mark.lab
def test_one_place_measures_with_its_own_drivers_and_is_released(qemu_lab, reference):
    db, cells = reference
    assert len(cells) == 9 and {v[0] for v in cells.values()} == {"labgrid:qemu-a"}
    assert {v[1] for v in cells.values()} <= {"ok", "unsupported"} and sum(v[1] == "ok" for v in cells.values()) >= 6
    target = Store(db).load_run(1).conditions["target"]
    assert target["kind"] == "labgrid" and target["places"] == ["qemu-a"] and target["board"] == "netduinoplus2"
    assert target["timing"].startswith("none: the places' boards are QEMU machines")
    place = target["place_details"]["qemu-a"]
    assert place["tags"] == {"board": "netduinoplus2"} and place["emulated"] and place["labgrid"]
    assert {r["cls"] for r in place["resources"]} == {"NetworkSerialPort", "NetworkPowerPort", "QEMUFlashPort"}
    assert next(r for r in place["resources"] if r["cls"] == "NetworkSerialPort")["protocol"] == "rfc2217"
    assert qemu_lab.acquired_by("qemu-a") is None
    state = qemu_lab.board_state("qemu-a")
    assert state["flashes"] >= 6 and not state["powered"]          # released with the board switched off
    assert holds(Store(db), qemu_lab.address) == []


@pytest.mark.lab
@pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])
def test_a_suite_spread_over_two_places_measures_each_cell_once(qemu_lab, reference, store_kind, tmp_path, request):
    db = request.getfixturevalue("pg_db") if store_kind == "postgres" else tmp_path / "two.sqlite"
    proc = lab_run(qemu_lab, db, "labgrid:qemu-*")
    assert proc.returncode == 0, proc.stderr
    cells = cells_of(db)
    assert same_cells(cells, reference[1])
    assert {v[0] for v in cells.values()} == {"labgrid:qemu-a", "labgrid:qemu-b"}    # both places measured
    assert "units per place: qemu-a " in proc.stderr
    store = Store(db)
    assert {r[0] for r in store.backend.execute("SELECT state FROM leases WHERE run_id = 1")} == {"done"}
    assert sorted(store.load_run(1).conditions["target"]["place_details"]) == ["qemu-a", "qemu-b"]
    assert qemu_lab.acquired_by("qemu-a") is None and qemu_lab.acquired_by("qemu-b") is None


@pytest.mark.lab
def test_a_killed_worker_s_unit_is_measured_again_on_the_other_place(qemu_lab, reference, tmp_path):
    db = tmp_path / "kill.sqlite"
    run = subprocess.Popen([sys.executable, "-m", "cryptobench.cli", "run", "--target", "labgrid:qemu-a,qemu-b",
                            *LIBS, *OPS, "--lease-timeout", "3", "--db", str(db), "--format", "json"],
                           cwd=ROOT, env={**os.environ, **qemu_lab.env}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    killed = None
    while killed is None and run.poll() is None:        # the first unit qemu-b's worker holds: kill it mid-unit
        try:
            with sqlite3.connect(db, timeout=0.2) as con:
                row = con.execute("SELECT unit, owner FROM leases WHERE place = 'qemu-b' AND state = 'leased'").fetchone()
        except sqlite3.OperationalError:                  # not created yet, or busy
            row = None
        if row:
            os.kill(int(row[1].rsplit(":", 1)[1]), signal.SIGKILL)
            killed = row[0]
        time.sleep(0.02)
    out, err = run.communicate()
    err = " ".join(err.split())              # the log is wrapped to the terminal's width
    assert killed, f"qemu-b's worker never held a unit: {err}"
    assert run.returncode == 0, err
    assert "worker for place qemu-b stopped (killed by signal 9)" in err
    assert "released labgrid place qemu-b, which its worker left acquired" in err
    cells = cells_of(db)
    assert same_cells(cells, reference[1])                              # nothing lost, nothing twice
    store = Store(db)
    unit = store.backend.execute("SELECT place, attempts, state FROM leases WHERE unit = ?", (killed,)).fetchone()
    assert tuple(unit) == ("qemu-a", 2, "done")
    assert f"measuring {killed} again" in err
    assert qemu_lab.acquired_by("qemu-b") is None and holds(store, qemu_lab.address) == []


@pytest.mark.lab
def test_a_worker_from_elsewhere_joins_a_running_run(qemu_lab, reference, tmp_path):
    """`python -m cryptobench.targets.mcu.lab.worker --run N --place P`, as another machine sharing the store
    and the coordinator would start it, takes units of a run another process is measuring."""
    db = tmp_path / "join.sqlite"
    env = {**os.environ, **qemu_lab.env}
    run = subprocess.Popen([sys.executable, "-m", "cryptobench.cli", "run", "--target", "labgrid:qemu-a", *LIBS, *OPS,
                            "--db", str(db), "--format", "json"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    while run.poll() is None:
        try:
            with sqlite3.connect(db, timeout=0.2) as con:
                if con.execute("SELECT COUNT(*) FROM leases WHERE state = 'leased'").fetchone()[0]:
                    break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    joiner = subprocess.run([sys.executable, "-m", "cryptobench.targets.mcu.lab.worker", "--run", "1", "--place", "qemu-b"],
                            cwd=ROOT, env={**env, "CRYPTOBENCH_DB": str(db)}, capture_output=True, text=True)
    _, err = run.communicate()
    assert run.returncode == 0, err
    assert joiner.returncode == 0 and "qemu-b: " in joiner.stderr and "unit(s) measured" in joiner.stderr, joiner.stderr
    cells = cells_of(db)
    assert same_cells(cells, reference[1])
    assert {v[0] for v in cells.values()} == {"labgrid:qemu-a", "labgrid:qemu-b"}
    assert qemu_lab.acquired_by("qemu-b") is None


@pytest.mark.lab
def test_sigterm_releases_every_place_and_resume_completes_the_run(qemu_lab, reference, tmp_path):
    db = tmp_path / "term.sqlite"
    run = subprocess.Popen([sys.executable, "-m", "cryptobench.cli", "run", "--target", "labgrid:qemu-*",
                            *LIBS, *OPS, "--db", str(db), "--format", "json"], cwd=ROOT,
                           env={**os.environ, **qemu_lab.env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while run.poll() is None:
        try:
            with sqlite3.connect(db, timeout=0.2) as con:
                if con.execute("SELECT COUNT(*) FROM leases WHERE state = 'done'").fetchone()[0] >= 2:
                    break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate()
    err = " ".join(err.split())
    assert run.returncode == 130, err
    assert "interrupted: finished cells of run 1 are stored" in err
    assert qemu_lab.acquired_by("qemu-a") is None and qemu_lab.acquired_by("qemu-b") is None
    store = Store(db)
    assert store.load_run(1).status == "interrupted" and holds(store, qemu_lab.address) == []
    resumed = cli("run", "--resume", "1", "--db", str(db), "--format", "json", env=qemu_lab.env)
    assert resumed.returncode == 0, resumed.stderr
    assert same_cells(cells_of(db), reference[1])


@pytest.mark.lab
def test_a_place_a_killed_run_left_acquired_is_reported_and_taken_back(qemu_lab, tmp_path):
    db = tmp_path / "left.sqlite"
    store = Store(db)
    dead = subprocess.Popen(["true"])
    dead.wait()
    qemu_lab.client("-p", "qemu-b", "acquire")
    store.backend.execute("INSERT INTO runs (created, status, plan, conditions) VALUES ('x', 'interrupted', '{}', '{}')")
    store.backend.db.commit()
    record_hold(store, qemu_lab.address, "qemu-b", 1)
    store.backend.execute("UPDATE holds SET pid = ?", (dead.pid,))
    store.backend.db.commit()
    proc = cli("run", "--target", "labgrid:qemu-b", "--engine", "mbedtls", "--op", "sha256", "--db", str(db),
               "--format", "json", env=qemu_lab.env)
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert f"labgrid place qemu-b was not released by run 1 (process {dead.pid} on" in said
    assert "releasing it and taking it" in said
    assert qemu_lab.acquired_by("qemu-b") is None and holds(store, qemu_lab.address) == []


@pytest.mark.lab
def test_a_place_someone_else_holds_is_a_one_line_error(qemu_lab, tmp_path):
    qemu_lab.client("-p", "qemu-b", "acquire")
    try:
        proc = cli("run", "--target", "labgrid:qemu-b", "--engine", "mbedtls", "--op", "sha256",
                   "--db", str(tmp_path / "busy.sqlite"), env={**qemu_lab.env, "LG_USERNAME": "someone-else"})
    finally:
        qemu_lab.client("-p", "qemu-b", "release")
    assert proc.returncode != 0
    assert "labgrid place qemu-b is acquired by " in " ".join(proc.stderr.split()) and "Traceback" not in proc.stderr


@pytest.mark.lab
@pytest.mark.parametrize("target,env,expect", [
    ("labgrid:nowhere", {}, "labgrid: no place 'nowhere' on 127.0.0.1:"),
    ("labgrid:zz-*", {}, "labgrid: no place matches 'zz-*'"),
    ("labgrid:qemu-a", {"LG_COORDINATOR": "127.0.0.1:1"}, "labgrid coordinator at 127.0.0.1:1: cannot connect"),
    ("labgrid:qemu-a", {"LG_ENV": "/nonexistent/env.yaml", "LG_COORDINATOR": ""}, "LG_ENV=/nonexistent/env.yaml: no such file"),
])
def test_bad_labgrid_targets_are_one_line_errors(qemu_lab, tmp_path, target, env, expect):
    db = tmp_path / "bad.sqlite"
    proc = cli("run", "--target", target, "--engine", "mbedtls", "--op", "sha256", "--db", str(db),
               env={**qemu_lab.env, **env})
    assert proc.returncode == 2 and expect in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not db.exists()


@pytest.mark.lab
def test_an_untagged_place_and_port_with_a_place_are_refused(qemu_lab, tmp_path):
    qemu_lab.client("-p", "untagged", "create")
    try:
        proc = cli("run", "--target", "labgrid:untagged", "--engine", "mbedtls", "--op", "sha256",
                   "--db", str(tmp_path / "u.sqlite"), env=qemu_lab.env)
    finally:
        qemu_lab.client("-p", "untagged", "delete")
    assert proc.returncode == 2 and "has no 'board' tag naming its board" in " ".join(proc.stderr.split())
    proc = cli("run", "--target", "labgrid:qemu-a", "--port", "/dev/ttyACM0", "--engine", "mbedtls", "--op", "sha256",
               "--db", str(tmp_path / "p.sqlite"), env=qemu_lab.env)
    assert proc.returncode == 2 and "--port: applies to board:NAME targets only (a board's serial port; a labgrid place's comes from the place)" in proc.stderr


# --- the leases alone --------------------------------------------------------------------------
def _plan(libraries=("lib1", "lib2"), ops=("sha256", "sha512")) -> Plan:
    plan = Plan(groups=[Group(op=o, params=Params({"bytes": 64}), engines=list(libraries)) for o in ops])
    plan.options.engines = list(libraries)
    return plan


def test_leases_hand_each_unit_to_one_worker_and_refuse_a_worker_that_lost_it(tmp_path, monkeypatch):
    store = Store(tmp_path / "l.sqlite")
    plan = _plan()
    run_id = store.create_run(plan, {})
    leases = Leases(store, run_id)
    assert leases.prepare(plan) == 4
    first = leases.take("w1", "a", lease_s=60)
    second = leases.take("w2", "b", lease_s=60)
    assert (first.unit, second.unit) == ("lib1 sha256", "lib1 sha512") and first.attempts == 1
    cell = Cell(op="sha256", params=Params({"bytes": 64}), engine="lib1", target="labgrid:a", provenance="measured",
                status="ok", kat="pass", detail="")
    assert leases.finish(first.unit, "w1", [cell])
    assert leases.counts() == {"todo": 2, "leased": 1, "done": 1, "expired": 0}
    # w2 goes silent: once its lease has expired, w3 takes the unit and w2's cells are refused
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 120)
    taken = leases.take("w3", "a", lease_s=60)
    assert (taken.unit, taken.attempts, taken.previous) == ("lib1 sha512", 2, "w2")
    assert not leases.finish("lib1 sha512", "w2", [cell]) and leases.finish("lib1 sha512", "w3", [])
    assert leases.by_place() == {"a": 2}
    assert store.done_keys(run_id) == {cell.key}


def test_prepare_marks_finished_units_done_and_give_back_frees_a_unit(tmp_path):
    store = Store(tmp_path / "p.sqlite")
    plan = _plan(libraries=("lib1",))
    run_id = store.create_run(plan, {})
    store.save_cell(run_id, Cell(op="sha256", params=Params({"bytes": 64}), engine="lib1", target="labgrid:a",
                                 provenance="measured", status="ok", kat="pass", detail=""))
    leases = Leases(store, run_id)
    assert leases.prepare(plan) == 1                     # a resumed run: only sha512 is left
    taken = leases.take("w1", "a", 60)
    leases.give_back(taken.unit, "w1")
    assert leases.take("w2", "b", 60).unit == taken.unit and leases.take("w3", "b", 60) is None
    record_hold(store, "c:1", "a", run_id)
    assert [h["place"] for h in holds(store, "c:1")] == ["a"] and holds(store, "other:2") == []
    drop_hold(store, "c:1", "a")
    assert holds(store, "c:1") == []


@pytest.mark.lab
def test_diff_pairs_the_same_cell_from_two_places_and_sums_up_by_place(tmp_path):
    store = Store(tmp_path / "d.sqlite")
    for place, ns in (("qemu-a", 1000), ("qemu-b", 1100)):
        run_id = store.create_run(Plan(target={"kind": "labgrid", "places": [place]}), {})
        for op, extra in (("sha256", 0), ("sha512", 50)):
            store.save_cell(run_id, Cell(op=op, params=Params({"bytes": 64}), engine="mbedtls",
                                         target=f"labgrid:{place}", provenance="measured", status="ok", kat="pass",
                                         detail="", samples=[[1, ns + extra + i, ns + i] for i in range(20)]))
        store.set_status(run_id, "complete")
    proc = cli("diff", "1", "2", "--db", str(tmp_path / "d.sqlite"), "--format", "json")
    doc = json.loads(proc.stdout)
    assert [r["status_a"] for r in doc["rows"]] == ["ok", "ok"]           # paired, not "only in A/B"
    assert {(r["place_a"], r["place_b"], r["target"]) for r in doc["rows"]} == {
        ("qemu-a", "qemu-b", "labgrid:qemu-a → labgrid:qemu-b")}
    (group,) = doc["by_place"]
    assert group["place_a"] == "qemu-a" and group["place_b"] == "qemu-b" and group["cells"] == group["timed"] == 2
    assert 1.09 < group["min_ratio"] <= group["median_ratio"] <= group["max_ratio"] < 1.11
    shown = cli("diff", "1", "2", "--by-place", "--db", str(tmp_path / "d.sqlite"), env={"COLUMNS": "120"})
    assert "by place" in shown.stdout and "qemu-a" in shown.stdout and "qemu-b" in shown.stdout, shown.stderr

"""The one Runner around any Target, driven by a test double (as hyperfine's MockExecutor): the
lifecycle is the Runner's (create, resume, SIGTERM, status, close), measuring is the target's."""
import dataclasses
import os
import signal

import pytest

from cryptobench.core.records import Cell, Plan
from cryptobench.runner.runner import Runner
from cryptobench.store.database import Store

PLAN = Plan.from_json({"suite": None, "options": {"engines": ["mock"]},
                       "groups": [{"op": "sha256", "params": {"bytes": n}, "engines": ["mock"]} for n in (16, 32, 64)]})


def _cell(seq, group, status="ok"):
    return Cell(op=group.op, params=group.params, engine="mock", target="mock", provenance="measured",
                status=status, kat="pass", detail="mock", samples=[[1, 100, 0]], seq=seq)


class MockTarget:
    """Measures the plan's cells the session has not finished; `stop_after` cells, then `stop`
    (a KeyboardInterrupt, a SIGTERM sent to ourselves, or an error)."""
    kind = "mock"

    def __init__(self, stop_after=None, stop=None, fail_open=False):
        self.stop_after, self.stop, self.fail_open = stop_after, stop, fail_open
        self.calls, self.sessions = [], []

    def open(self):
        self.calls.append("open")
        if self.fail_open:
            raise RuntimeError("the device is not there")
        return {"host": {"os": "mock"}, "target": {"kind": "mock"}}

    def measure(self, session):
        self.calls.append("measure")
        self.sessions.append(session)
        done = session.done_keys()
        measured = 0
        for seq, group in enumerate(PLAN.groups):
            if Cell(group.op, group.params, "mock").key in done:
                continue
            if self.stop_after is not None and measured == self.stop_after:
                self.stop()
            session.save_cell(_cell(seq, group))
            measured += 1

    def close(self):
        self.calls.append("close")


def _interrupt():
    raise KeyboardInterrupt


def _sigterm():
    os.kill(os.getpid(), signal.SIGTERM)


def test_a_run_is_created_measured_completed_and_the_target_closed(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    target = MockTarget()
    run = store.load_run(Runner(store, PLAN, target).run())
    assert target.calls == ["open", "measure", "close"]
    assert run.status == "complete" and len(run.cells) == 3
    assert run.conditions == {"host": {"os": "mock"}, "target": {"kind": "mock"}}
    assert target.sessions[0].previous_conditions == {}


@pytest.mark.parametrize("stop", [_interrupt, _sigterm], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_keeps_its_finished_cells_and_resumes_the_rest(tmp_path, stop):
    store = Store(tmp_path / "r.sqlite")
    before = signal.getsignal(signal.SIGTERM)
    target = MockTarget(stop_after=2, stop=stop)
    with pytest.raises(KeyboardInterrupt):
        Runner(store, PLAN, target).run()
    assert target.calls == ["open", "measure", "close"]
    assert signal.getsignal(signal.SIGTERM) is before            # the Runner's handler is gone again
    run = store.load_run(1)
    assert run.status == "interrupted" and len(run.cells) == 2
    again = MockTarget()
    assert Runner(store, PLAN, again).run(1) == 1
    run = store.load_run(1)
    assert run.status == "complete" and len(run.cells) == 3
    assert again.sessions[0].previous_conditions == {"host": {"os": "mock"}, "target": {"kind": "mock"}}


def test_a_target_that_cannot_open_is_closed_and_no_run_is_stored(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    target = MockTarget(fail_open=True)
    with pytest.raises(RuntimeError, match="not there"):
        Runner(store, PLAN, target).run()
    assert target.calls == ["open", "close"]
    assert store.backend.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_the_plan_chooses_its_target_in_one_place():
    from cryptobench.core.errors import UsageError
    from cryptobench.targets.select import target_for
    from cryptobench.targets.host.target import HostTarget
    from cryptobench.targets.mcu.target import McuTarget
    assert isinstance(target_for(Plan.from_json({"options": {}, "groups": []})), HostTarget)
    mcu = {"options": {}, "groups": [], "target": {"kind": "qemu", "board": "mps2-an386", "libraries": []}}
    assert isinstance(target_for(Plan.from_json(mcu)), McuTarget)
    with pytest.raises(UsageError, match="nothing to resume"):
        target_for(Plan.from_json({"kind": "trace", "options": {}, "groups": []}))


@pytest.mark.subprocess
def test_an_imported_trace_is_a_target_that_yields_its_cells(tmp_path):
    from cryptobench.targets.trace.target import TraceTarget
    store = Store(tmp_path / "r.sqlite")
    group = PLAN.groups[0]
    trace = {"path": "t.csv", "format": "generic-csv", "sample_period_s": 1e-5, "channels": ["I"]}
    plan = dataclasses.replace(PLAN, kind="trace")
    run = store.load_run(Runner(store, plan, TraceTarget([_cell(7, group)], trace)).run())
    assert run.status == "complete" and [c.params for c in run.cells] == [group.params]
    assert [c.seq for c in run.cells] == [0]                     # the trace target numbers its cells
    assert run.conditions["trace"] == trace and "os" in run.conditions.host
    assert run.plan.kind == "trace" and run.plan.to_json() == plan.to_json()


class FailingTarget(MockTarget):
    """Measures one cell, then gives up as a board that went away does."""

    def measure(self, session):
        session.save_cell(_cell(0, PLAN.groups[0]))
        raise RuntimeError("the board stopped answering")


def test_a_target_that_fails_midway_leaves_the_run_interrupted_not_running(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    with pytest.raises(RuntimeError, match="stopped answering"):
        Runner(store, PLAN, FailingTarget()).run()
    run = store.load_run(1)
    assert run.status == "interrupted" and len(run.cells) == 1       # --resume completes it
    assert store.backend.execute("SELECT COUNT(*) FROM locks").fetchone()[0] == 0


def test_one_process_at_a_time_resumes_a_run(tmp_path):
    import subprocess
    import sys
    from cryptobench.store.database import RunLocked
    store = Store(tmp_path / "r.sqlite")
    with pytest.raises(KeyboardInterrupt):
        Runner(store, PLAN, MockTarget(stop_after=1, stop=_interrupt)).run()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        store.lock_run(1, pid=other.pid)                      # another process is resuming run 1
        target = MockTarget()
        with pytest.raises(RunLocked, match=f"process {other.pid}"):
            Runner(store, PLAN, target).run(1)
        assert "measure" not in target.calls and store.load_run(1).status == "interrupted"
    finally:
        other.kill()
        other.wait()
    logged = []
    assert Runner(store, PLAN, MockTarget(), log=logged.append).run(1) == 1     # its process is gone: taken over
    assert any("taking over the lock" in line for line in logged)
    assert store.load_run(1).status == "complete"


def test_resume_measures_failed_cells_again(tmp_path):
    store = Store(tmp_path / "r.sqlite")

    class OneFails(MockTarget):
        def __init__(self, failing_seq=None):
            super().__init__()
            self.failing_seq = failing_seq

        def measure(self, session):
            done = session.done_keys()
            for seq, group in enumerate(PLAN.groups):
                if Cell(group.op, group.params, "mock").key not in done:
                    session.save_cell(_cell(seq, group, status="failed" if seq == self.failing_seq else "ok"))

    Runner(store, PLAN, OneFails(failing_seq=1)).run()
    assert [c.status for c in store.load_run(1).cells] == ["ok", "failed", "ok"]
    Runner(store, PLAN, OneFails()).run(1)                     # this time the cell succeeds
    assert [c.status for c in store.load_run(1).cells] == ["ok", "ok", "ok"]


def test_exit_status_says_what_was_measured():
    from cryptobench.cli.run import EXIT_NOTHING_MEASURED, EXIT_SOME_FAILED, exit_status
    from cryptobench.core.records import Run
    run = lambda *statuses: Run(id=1, plan=PLAN, conditions={}, cells=[
        _cell(i, PLAN.groups[i], status=s) for i, s in enumerate(statuses)])
    assert exit_status(run("ok", "unsupported", "ok")) == 0
    assert exit_status(run("ok", "failed", "ok")) == EXIT_SOME_FAILED
    assert exit_status(run("failed", "unsupported", "failed")) == EXIT_NOTHING_MEASURED

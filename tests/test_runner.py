"""The one Runner around any Target, driven by a test double (as hyperfine's MockExecutor): the
lifecycle is the Runner's (create, resume, SIGTERM, status, close), measuring is the target's."""
import dataclasses
import os
import signal

import pytest

from cryptobench.records import Cell, Plan
from cryptobench.runner import Runner
from cryptobench.store import Store

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
    assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_the_plan_chooses_its_target_in_one_place():
    from cryptobench.errors import UsageError
    from cryptobench.targets import target_for
    from cryptobench.targets.host import HostTarget
    from cryptobench.targets.mcu import McuTarget
    assert isinstance(target_for(Plan.from_json({"options": {}, "groups": []})), HostTarget)
    mcu = {"options": {}, "groups": [], "target": {"kind": "qemu", "board": "mps2-an386", "libraries": []}}
    assert isinstance(target_for(Plan.from_json(mcu)), McuTarget)
    with pytest.raises(UsageError, match="nothing to resume"):
        target_for(Plan.from_json({"kind": "trace", "options": {}, "groups": []}))


def test_an_imported_trace_is_a_target_that_yields_its_cells(tmp_path):
    from cryptobench.targets.trace import TraceTarget
    store = Store(tmp_path / "r.sqlite")
    group = PLAN.groups[0]
    trace = {"path": "t.csv", "format": "generic-csv", "sample_period_s": 1e-5, "channels": ["I"]}
    plan = dataclasses.replace(PLAN, kind="trace")
    run = store.load_run(Runner(store, plan, TraceTarget([_cell(7, group)], trace)).run())
    assert run.status == "complete" and [c.params for c in run.cells] == [group.params]
    assert [c.seq for c in run.cells] == [0]                     # the trace target numbers its cells
    assert run.conditions["trace"] == trace and "os" in run.conditions.host
    assert run.plan.kind == "trace" and run.plan.to_json() == plan.to_json()

"""Plans bigger than a harness process's slots (issue 30, item 7): the host harness says in its hello
how many cells one process holds set up at once (max_slots, cbh's MAX_SLOTS), and a run with more
cells per engine spreads them over groups of processes instead of failing "too many slots"."""
from collections import defaultdict

import pytest

from cryptobench.cli import main
from cryptobench.targets.host.engines import ENGINES
from cryptobench.core.errors import HarnessError
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.store.database import Store
from cryptobench.targets.host import target as host


def test_the_harness_says_its_slot_limit_and_keeps_it(harness):
    proc = ENGINES["openssl-sw"].start()
    try:
        limit = proc.hello["max_slots"]
        assert limit == host.DEFAULT_MAX_SLOTS == 4096
        for slot in range(1, limit + 1):
            proc.setup(slot, "openssl", "sha256", {"bytes": 16})
        try:
            proc.setup(limit + 1, "openssl", "sha256", {"bytes": 16})
        except HarnessError as exc:
            assert "too many slots" in str(exc)
        else:
            raise AssertionError("the harness took one slot more than its hello says")
    finally:
        proc.close()


@pytest.mark.e2e
def test_a_plan_beyond_the_slot_limit_is_spread_over_processes(tmp_path, harness, monkeypatch, capsys):
    monkeypatch.setattr(host, "SLOT_LIMIT", 3)            # 2 cells per process (one slot kept for the reference)
    live: dict = defaultdict(set)                          # process -> its slots set up now
    most = []
    setup, teardown = HarnessProcess.setup, HarnessProcess.teardown

    def counted_setup(self, slot, *args):
        setup(self, slot, *args)
        live[id(self)].add(slot)
        most.append(len(live[id(self)]))

    def counted_teardown(self, slot):
        teardown(self, slot)
        live[id(self)].discard(slot)
    monkeypatch.setattr(HarnessProcess, "setup", counted_setup)
    monkeypatch.setattr(HarnessProcess, "teardown", counted_teardown)
    db = tmp_path / "r.sqlite"
    code = main(["run", "--op", "sha256", "--param", "bytes=16,32,64,128,256", "--engine", "openssl-sw",
                 "--repeat", "3", "--min-time", "0.001", "--db", str(db), "--quiet"])
    assert code == 0, capsys.readouterr().err
    run = Store(db).load_run(1)
    assert [c.status for c in run.cells] == ["ok"] * 5, [c.detail for c in run.cells]
    assert max(most) <= 3                                  # no process held more than its limit
    assert run.conditions["sampling"]["process_groups"] == {"openssl-sw": 3}
    from cryptobench.stats.noise import SLOT as REFERENCE_SLOT      # the reference loop's, kept until the end
    assert set().union(*live.values()) <= {REFERENCE_SLOT}   # every cell's slot torn down


def test_a_plan_within_the_limit_uses_one_group(tmp_path, harness, capsys):
    db = tmp_path / "r.sqlite"
    assert main(["run", "--op", "sha256", "--param", "bytes=16,32", "--engine", "openssl-sw", "--repeat", "3",
                 "--min-time", "0.001", "--db", str(db), "--quiet"]) == 0, capsys.readouterr().err
    run = Store(db).load_run(1)
    assert "process_groups" not in run.conditions["sampling"] and run.conditions["harness"]["max_slots"] == 4096

"""Text from outside reaches a terminal inert (issue 30, item 4): labgrid place names and the
coordinator's words in a lab worker's lines and in the run's log, labels in diff/compare Markdown
headers, and C1 controls in JSON output all pass the one printable path (core/printable.py)."""
import contextlib
import io
import json
import re

from rich.console import Console

from cryptobench.cli import main
from cryptobench.cli.run import run_log
from cryptobench.targets.mcu.lab import worker
from cryptobench.core.records import Group, Params, Plan
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from storeutil import save_cell_at

PLACE = "bench\x1b]0;pwned\x07-\x1b[2J\x9b31m"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")        # what must never reach a terminal


def _lab_run(db) -> int:
    plan = Plan(groups=[Group(op="sha256", params=Params({"bytes": 64}), engines=["mbedtls"])],
                target={"kind": "labgrid", "places": [PLACE], "coordinator": "127.0.0.1:1", "lease_s": 30})
    plan.options.engines = ["mbedtls"]
    store = Store(db)
    run_id = store.create_run(plan, {})
    store.close()
    return run_id


class _HostileLab:
    """A coordinator that names the place's holder with escapes (its words are outside text too)."""

    def __init__(self, address=None):
        self.address = address or "127.0.0.1:1"

    def info(self, name):
        return type("Info", (), {"acquired": "evil\x1b[31m/host", "tags": {}, "resources": [], "emulated": False})()

    def who(self):
        return "me/here"

    def close(self):
        pass


def test_a_lab_workers_lines_show_a_place_name_inert(tmp_path, monkeypatch, capsys):
    db = tmp_path / "lab.sqlite"
    run_id = _lab_run(db)
    monkeypatch.setattr(worker, "Lab", _HostileLab)
    assert worker.main(["--run", str(run_id), "--place", PLACE, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert not RAW.search(err), repr(err)
    assert err.count("\n") == 1 and "\\x1b]0;pwned\\x07" in err and "evil\\x1b[31m/host" in err


class _Proc:
    def __init__(self, lines):
        self.stderr = iter(lines)


def test_the_runs_log_relays_a_workers_lines_inert():
    from cryptobench.targets.mcu.lab.target import LabTarget
    buf = io.StringIO()
    log = run_log(Console(file=buf, force_terminal=True, width=200))
    target = LabTarget.__new__(LabTarget)
    target.log = log
    target._relay(PLACE, _Proc([f"{PLACE}: flashing \x1b[5mfirmware\x1b[0m :smile: [bold]x[/bold]\n"]))
    log(f"labgrid place {PLACE} was not released by run 1")
    shown = buf.getvalue()
    assert "\x1b]0;" not in shown and "\x07" not in shown and "\x9b" not in shown and "\x1b[2J" not in shown
    assert "\\x1b]0;pwned\\x07" in shown and "[bold]x[/bold]" in shown and ":smile:" in shown


def _labelled_runs(db, label):
    store = Store(db)
    for _ in range(2):
        rid = store.create_run(Plan.from_json({"suite": None, "label": label, "groups": [],
                                               "options": {"engines": ["mbedtls"], "repeat": 3}}), {})
        samples = [[4, 4000 + 10 * i, 0] for i in range(5)]
        save_cell_at(store, rid, 0, {"op": "sha256", "params": {"bytes": 64}, "engine": "mbedtls", "target": "host",
                                     "provenance": "measured", "status": "ok", "kat": "pass", "detail": label,
                                     "samples": samples,
                                     "result": derive("sha256", {"bytes": 64}, samples, {"counter": "tsc"}, False)})
        store.set_status(rid, "complete")
    store.close()


def _stdout(argv) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def test_labels_reach_markdown_and_json_output_inert(tmp_path):
    db = tmp_path / "r.sqlite"
    label = "run\x1b]0;pwned\x07\x9b2J 日本"
    _labelled_runs(db, label)
    code, md = _stdout(["diff", "1", "2", "--format", "md", "--db", str(db)])
    assert code in (0, 1) and not RAW.search(md) and "\\x1b]0;pwned\\x07" in md
    for argv in (["show", "1", "--format", "json"], ["show", "1-2", "--format", "json"],
                 ["export", "1-2", "--format", "json"]):
        code, text = _stdout(argv + ["--db", str(db)])
        assert code == 0 and not RAW.search(text), argv
        doc = json.loads(text)                     # the same JSON value: escapes, not changes
        assert json.dumps(label)[1:-1] in json.dumps(doc), argv

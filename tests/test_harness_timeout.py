"""A harness that stops answering (a hung TPM or PKCS#11 device behind it): every read of a reply
has a deadline, the process is killed and names what it was waiting for, and the run goes on.

The hanging harnesses here are small Python scripts speaking docs/protocol.md: one that answers
`hello` and nothing after it, and a proxy in front of the real host harness that swallows one
kind of request of one engine (so that verification passes and the other cells are real)."""
import stat
import sys
import textwrap

import pytest

from cryptobench.core.errors import HarnessError, UsageError
from cryptobench.targets.host.harness import HarnessProcess, REPLY_TIMEOUT_ENV, asked_s, configured_reply_timeout_s
from cryptobench.runner.plan import build_plan
from cryptobench.runner.runner import Runner
from cryptobench.store.database import Store

from conftest import cli


def _script(path, body: str):
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# answers hello, then any request but `idle` is never answered
SILENT = """
    import json, sys, threading, time
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "hello":
            print(json.dumps({"t": "hello", "proto": 1, "harness": "fake"}), flush=True)
        elif req["cmd"] == "idle":
            time.sleep(req["ns"] / 1e9)
            print(json.dumps({"t": "idle", "ns": req["ns"]}), flush=True)
        elif req["cmd"] == "quit":
            break
        else:
            threading.Event().wait()       # a device that never answers
"""

# forwards everything to the real harness, except that the request FAKE_HANG names
# ("engine:cmd" or "engine:cmd:op"; sample and teardown find the engine and op by slot) is never
# answered
PROXY = """
    import json, os, subprocess, sys, threading
    real = subprocess.Popen([os.environ["FAKE_REAL_HARNESS"]], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)

    def replies():
        for line in real.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()

    threading.Thread(target=replies, daemon=True).start()
    engine, cmd, *op = os.environ["FAKE_HANG"].split(":")
    slots = {}
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "setup":
            slots[req["slot"]] = (req["engine"], req["op"])
        got_engine, got_op = slots.get(req.get("slot"), (req.get("engine"), req.get("op")))
        if (req["cmd"], got_engine) == (cmd, engine) and (not op or got_op == op[0]):
            threading.Event().wait()
        real.stdin.write(line)
        real.stdin.flush()
    real.stdin.close()
    real.wait()
"""


@pytest.fixture
def silent(tmp_path):
    return _script(tmp_path / "cbh-silent", SILENT)


@pytest.mark.e2e
def test_a_harness_that_never_answers_is_stopped_with_the_reason(silent):
    proc = HarnessProcess(path=silent, reply_timeout_s=1)
    assert proc.hello["harness"] == "fake"
    with pytest.raises(HarnessError) as exc:
        proc.sample(1, 10, 2)
    assert str(exc.value) == "harness cbh-silent: no reply to 'sample' within 1 s; the process was stopped"
    assert proc.proc.poll() is not None                      # killed, not left hanging
    assert proc.stopped == str(exc.value)
    # a stopped process is never used again: every later request says why, at once
    with pytest.raises(HarnessError) as later:
        proc.supports("mbedtls", "sha256", {"bytes": 64})
    assert str(later.value) == ("harness cbh-silent: no reply to 'sample' within 1 s; the process was stopped, "
                                "so it takes no more requests")
    proc.teardown(1)                   # teardown and close stay quiet on a stopped process
    proc.close()


@pytest.mark.e2e
def test_a_harness_silent_from_the_start_fails_to_start(tmp_path):
    mute = _script(tmp_path / "cbh-mute", "import threading\nthreading.Event().wait()\n")
    with pytest.raises(HarnessError, match=r"^harness cbh-mute: no reply to 'hello' within 1 s; "
                                           r"the process was stopped$"):
        HarnessProcess(path=mute, reply_timeout_s=1)


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_request_that_asks_for_time_gets_it_on_top_of_the_timeout(silent):
    assert asked_s({"cmd": "idle", "ns": 1_500_000_000}) == 1.5
    assert asked_s({"cmd": "window", "slot": 1, "k": 4, "min_ns": 2_000_000_000}) == 2.0
    assert asked_s({"cmd": "calibrate", "slot": 1, "min_ns": 10_000_000}) == 0.01
    assert asked_s({"cmd": "sample", "slot": 1, "k": 4, "n": 2}) == 0.0
    with HarnessProcess(path=silent, reply_timeout_s=1) as proc:
        assert proc.idle(1_500_000_000) == 1_500_000_000     # longer than the timeout, as asked


@pytest.mark.subprocess
def test_the_reply_timeout_comes_from_the_environment(silent, monkeypatch):
    monkeypatch.delenv(REPLY_TIMEOUT_ENV, raising=False)
    assert configured_reply_timeout_s() == 600
    monkeypatch.setenv(REPLY_TIMEOUT_ENV, "2.5")
    with HarnessProcess(path=silent) as proc:
        assert proc.reply_timeout_s == 2.5
    for bad in ("soon", "0", "-3", "nan", "inf"):
        monkeypatch.setenv(REPLY_TIMEOUT_ENV, bad)
        with pytest.raises(UsageError) as exc:
            configured_reply_timeout_s()
        assert str(exc.value) == f"{REPLY_TIMEOUT_ENV}={bad!r} is not a number of seconds above 0 and at most 86400 (unset: 600)"


@pytest.mark.e2e
def test_a_bad_reply_timeout_stops_the_run_before_it_starts(tmp_path):
    proc = cli("run", "--op", "sha256", "--db", str(tmp_path / "db.sqlite"), env={REPLY_TIMEOUT_ENV: "soon"})
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"cryptobench: error: {REPLY_TIMEOUT_ENV}='soon' is not a number of seconds above 0 "
                                   "and at most 86400 (unset: 600)")


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_gate_replaces_a_checker_process_that_was_stopped(silent, monkeypatch):
    from cryptobench.targets.host.verifier import Verifier
    monkeypatch.setenv("CRYPTOBENCH_HARNESS", str(silent))
    monkeypatch.setenv(REPLY_TIMEOUT_ENV, "1")
    verifier = Verifier({}, vectors=[])
    try:
        first = verifier.proc("openssl-hw")
        with pytest.raises(HarnessError, match="no reply to 'supports' within 1 s"):
            first.supports("openssl", "sha256", {"bytes": 64})
        second = verifier.proc("openssl-hw")
        assert second is not first and second.stopped is None and second.proc.poll() is None
    finally:
        verifier.close()


# --- whole runs ------------------------------------------------------------------------------------
def _run_with_hang(tmp_path, monkeypatch, harness, hang: str, processes: int) -> dict:
    monkeypatch.setenv("CRYPTOBENCH_HARNESS", str(_script(tmp_path / "cbh", PROXY)))
    monkeypatch.setenv("FAKE_REAL_HARNESS", str(harness))
    monkeypatch.setenv("FAKE_HANG", hang)
    # short enough for a test, long beside any real reply here (milliseconds)
    monkeypatch.setenv(REPLY_TIMEOUT_ENV, "5")
    plan = build_plan(None, engines=["openssl-hw", "mbedtls"], ops=["sha256", "aes-ecb-encrypt", "sha512"],
                      param_overrides={"bytes": [64]}, repeat=3, min_time=0.002, warmup=0,
                      sampling={"processes": processes, "seed": 1})
    store = Store(tmp_path / "db.sqlite")
    run = store.load_run(Runner(store, plan).run())
    assert run.status == "complete"
    return {(c.op, c.engine): c for c in run.cells}


@pytest.mark.e2e
def test_an_engine_hanging_while_sampled_fails_its_cells_and_the_run_completes(tmp_path, monkeypatch, harness):
    # every mbedtls sample hangs: the first one visited is stopped after the timeout, the other
    # mbedtls cells share that killed process and fail at once with the same reason
    cells = _run_with_hang(tmp_path, monkeypatch, harness, "mbedtls:sample", processes=2)
    assert len(cells) == 6
    for op in ("sha256", "aes-ecb-encrypt", "sha512"):
        ok = cells[(op, "openssl-hw")]
        assert ok.status == "ok" and len(ok.samples) == 3, ok.detail
        failed = cells[(op, "mbedtls")]
        assert failed.status == "failed" and failed.kat == "pass" and not failed.samples
        assert failed.detail.startswith("timing failed: harness cbh: no reply to 'sample' within 5 s; "
                                           "the process was stopped"), failed.detail


@pytest.mark.e2e
def test_an_engine_hanging_once_while_set_up_costs_that_cell_only(tmp_path, monkeypatch, harness):
    # mbedtls hangs on setting up sha256 (its first cell): the later mbedtls cells get a fresh
    # process and are timed
    cells = _run_with_hang(tmp_path, monkeypatch, harness, "mbedtls:setup:sha256", processes=1)
    failed = cells[("sha256", "mbedtls")]
    assert failed.status == "failed" and not failed.samples
    assert failed.detail == "timing failed: harness cbh: no reply to 'setup' within 5 s; the process was stopped"
    for key, cell in cells.items():
        if key != ("sha256", "mbedtls"):
            assert cell.status == "ok" and len(cell.samples) == 3, (key, cell.detail)


# answers every request, but with the wrong types in the fields the orchestrator counts on
WRONG_TYPES = """
    import json, sys
    replies = {"calibrate": {"t": "calibrate", "k": "x"}, "idle": {"t": "idle", "ns": -5},
               "window": {"t": "window", "k": 1, "ops": 0, "ns": 10}}
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "hello":
            print(json.dumps({"t": "hello", "proto": 1, "harness": "fake"}), flush=True)
        elif req["cmd"] == "sample":
            print(json.dumps({"t": "sample", "k": 0, "ns": 100}), flush=True)
            print(json.dumps({"t": "done"}), flush=True)
        elif req["cmd"] == "setup":
            print("[1, 2]", flush=True)
        elif req["cmd"] == "quit":
            break
        else:
            print(json.dumps(replies[req["cmd"]]), flush=True)
"""


@pytest.mark.subprocess
def test_replies_with_wrong_types_are_harness_errors_naming_the_field(tmp_path):
    proc = HarnessProcess(path=_script(tmp_path / "wrong", WRONG_TYPES))
    try:
        for call, field in ((lambda: proc.calibrate(1, 1000), "k='x'"), (lambda: proc.sample(1, 1, 1), "k=0"),
                            (lambda: proc.idle(1000), "ns=-5"), (lambda: proc.window(1, 1, 10), "ops=0")):
            with pytest.raises(HarnessError, match=f"replied {field}.*expected a whole number"):
                call()
        with pytest.raises(HarnessError, match="where a JSON object was expected"):
            proc.setup(1, "x", "sha256", {})
    finally:
        proc.close()


@pytest.mark.e2e
def test_a_harness_that_cannot_be_started_is_a_harness_error(tmp_path):
    not_executable = tmp_path / "cbh-host"
    not_executable.write_text("not a program\n")
    with pytest.raises(HarnessError, match="cannot start the harness .*cbh-host"):
        HarnessProcess(path=not_executable)
    proc = cli("list", "engines", env={"CRYPTOBENCH_HARNESS": str(not_executable)})
    assert "Traceback" not in proc.stderr

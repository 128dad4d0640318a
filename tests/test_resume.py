"""An interrupted run keeps every finished cell, and --resume completes it."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, cli

# end to end: the real command line on stored or measured runs (the slow tier)
pytestmark = pytest.mark.e2e


def _cells(db, run_id=None):
    con = sqlite3.connect(db)
    try:
        q = "SELECT cell_key, samples, finished FROM cells" + (" WHERE run_id = ?" if run_id else "")
        return {r[0]: (r[1], r[2]) for r in con.execute(q, (run_id,) if run_id else ())}
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()


def _partial(db):
    con = sqlite3.connect(db)
    try:
        return {r[0]: json.loads(r[1]) for r in con.execute("SELECT cell_key, samples FROM cells WHERE status = 'partial'")}
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()


ENV = {**os.environ, "CRYPTOBENCH_CHECKPOINT_S": "0.3"}     # store the rounds often, so the test waits little


def test_killed_run_keeps_samples_and_resumes(tmp_path, harness):
    """kill -9 mid-sampling: the rounds stored so far are kept as partial cells; --resume goes on
    sampling them (the stored samples stay, new ones are added) and completes every cell."""
    db = tmp_path / "db.sqlite"
    suite = tmp_path / "sweep.toml"
    suite.write_text('[suite]\nwarmup = 0\nmin_time = 0.001\nbudget = 20\nprecision = 0.001\n\n[[bench]]\n'
                     'op = "sha256"\nbytes = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]\n')
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--suite", str(suite), "--engine", "openssl-hw",
            "--engine", "mbedtls", "--db", str(db), "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    # wait (without a speed expectation) until the sampled rounds have reached the store, then kill hard
    while len(_partial(db)) < 24 and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _partial(db)
    assert len(before) == 24, "the run should have been killed while sampling"
    con = sqlite3.connect(db)
    run_id, status = con.execute("SELECT id, status FROM runs").fetchone()
    con.close()
    assert status == "running"

    done = cli("run", "--resume", str(run_id), "--db", str(db), "--quiet")
    assert done.returncode == 0, done.stderr
    after = _cells(db, run_id)
    assert len(after) == 24 and not _partial(db)
    for key, samples in before.items():          # stored samples were kept, and more were taken
        final = json.loads(after[key][0])
        assert final[:len(samples)] == samples and len(final) > len(samples)
    doc = json.loads(cli("show", str(run_id), "--db", str(db), "--format", "json").stdout)
    assert doc["run"]["status"] == "complete"
    assert [r["params"]["bytes"] for r in doc["results"]][::2] == [16, 32, 64, 128, 256, 512, 1024, 2048,
                                                                  4096, 8192, 16384, 32768]
    again = cli("run", "--resume", str(run_id), "--db", str(db))
    assert again.returncode == 2 and "already complete" in again.stderr


def test_ctrl_c_marks_the_run_interrupted_and_keeps_the_rounds(tmp_path, harness):
    db = tmp_path / "db.sqlite"
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--op", "sha256", "--param",
            "bytes=16,32,64,128,256,512,1024,2048", "--engine", "openssl-hw", "--budget", "120",
            "--precision", "0.001", "--db", str(db), "--quiet"]
    # Ctrl-C reaches a process only where SIGINT is not ignored: a suite started in the background of a
    # non-interactive shell hands SIG_IGN down, and Python then leaves it so; the run gets the default back
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while len(_partial(db)) < 8 and proc.poll() is None:
        time.sleep(0.05)
    ended_by_itself = proc.poll() is not None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate()
    # a run with a 120 s budget and a precision it cannot reach ends only when interrupted
    assert not ended_by_itself, f"the run ended (code {proc.returncode}) before it was interrupted: {err[-2000:]}"
    assert proc.returncode == 130, err[-2000:]
    assert "--resume" in err
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    con.close()
    assert len(_partial(db)) == 8

"""An interrupted run keeps every finished cell, and --resume completes it."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from conftest import ROOT, cli


def _cells(db, run_id=None):
    con = sqlite3.connect(db)
    try:
        q = "SELECT cell_key, samples, finished FROM cells" + (" WHERE run_id = ?" if run_id else "")
        return {r[0]: (r[1], r[2]) for r in con.execute(q, (run_id,) if run_id else ())}
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()


def test_killed_run_keeps_cells_and_resumes(tmp_path, harness):
    db = tmp_path / "db.sqlite"
    suite = tmp_path / "sweep.toml"
    suite.write_text('[suite]\nrepeat = 5\nwarmup = 0\nmin_time = 0.05\n\n[[bench]]\nop = "sha256"\n'
                     'bytes = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]\n')
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--suite", str(suite), "--engine", "openssl-hw",
            "--engine", "mbedtls", "--db", str(db), "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # wait (without a speed expectation) until a few cells are stored, then kill the run hard
    while len(_cells(db)) < 4 and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _cells(db)
    assert 4 <= len(before) < 24, "the run should have been killed part-way"
    con = sqlite3.connect(db)
    run_id, status = con.execute("SELECT id, status FROM runs").fetchone()
    con.close()
    assert status == "running"

    done = cli("run", "--resume", str(run_id), "--db", str(db), "--quiet")
    assert done.returncode == 0, done.stderr
    after = _cells(db, run_id)
    assert len(after) == 24
    for key, value in before.items():          # finished cells were kept, not redone
        assert after[key] == value
    doc = json.loads(cli("show", str(run_id), "--db", str(db), "--format", "json").stdout)
    assert doc["run"]["status"] == "complete"
    assert [r["params"]["bytes"] for r in doc["results"]][::2] == [16, 32, 64, 128, 256, 512, 1024, 2048,
                                                                  4096, 8192, 16384, 32768]
    again = cli("run", "--resume", str(run_id), "--db", str(db))
    assert again.returncode == 2 and "already complete" in again.stderr


def test_ctrl_c_marks_the_run_interrupted(tmp_path, harness):
    db = tmp_path / "db.sqlite"
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--op", "sha256", "--param",
            "bytes=16,32,64,128,256,512,1024,2048", "--engine", "openssl-hw", "--min-time", "0.05",
            "--repeat", "5", "--db", str(db), "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while len(_cells(db)) < 2 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate()
    assert proc.returncode == 130
    assert "--resume" in err
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    con.close()

"""The store never writes to a file that is not a cryptobench database, maps the file system's
refusals to one-line errors, and lets one process at a time measure a run."""
import hashlib
import sqlite3
import subprocess
import sys

import pytest

from conftest import cli
from cryptobench.core.errors import UsageError
from cryptobench.core.records import Plan
from cryptobench.store.database import RunLocked, Store


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.e2e
def test_another_programs_database_is_refused_and_not_written(tmp_path):
    other = tmp_path / "other_app.sqlite"
    con = sqlite3.connect(str(other))
    con.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    con.execute("INSERT INTO users VALUES (1, 'ada')")
    con.commit()
    con.close()
    before = _digest(other)
    for args in (["show", "latest"], ["run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "1"],
                 ["export", "latest", "--format", "csv"]):
        proc = cli(*args, "--db", str(other))
        assert proc.returncode == 2, args
        assert "not a cryptobench database" in proc.stderr and "users" in proc.stderr and "Traceback" not in proc.stderr
    assert _digest(other) == before


@pytest.mark.parametrize("content", [b"garbage, not sqlite\n", b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_file_that_is_not_a_database_is_a_one_line_error(tmp_path, content):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(content)
    proc = cli("show", "latest", "--db", str(bad))
    assert proc.returncode == 2 and str(bad) in proc.stderr and "Traceback" not in proc.stderr
    assert bad.read_bytes() == content


def test_a_directory_as_database_is_refused(tmp_path):
    with pytest.raises(UsageError, match="not a file"):
        Store(tmp_path)


def test_a_refused_write_names_the_database(tmp_path, monkeypatch):
    store = Store(tmp_path / "r.sqlite")

    class ReadOnly:
        def __getattr__(self, name):
            return getattr(store_db, name)

        def execute(self, *a):
            raise sqlite3.OperationalError("attempt to write a readonly database")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    store_db = store.backend.db
    monkeypatch.setattr(store.backend, "db", ReadOnly())
    with pytest.raises(UsageError, match=r"r\.sqlite: cannot write \(a new run\): the database is read-only"):
        store.create_run(Plan(), {})


def test_one_process_at_a_time_measures_a_run_and_a_stale_lock_is_taken_over(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    run_id = store.create_run(Plan(), {})
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert store.lock_run(run_id, pid=other.pid) is None           # the other process takes it
        with pytest.raises(RunLocked, match=f"process {other.pid}"):
            store.lock_run(run_id)
    finally:
        other.kill()
        other.wait()
    note = store.lock_run(run_id)                                       # its process is gone: stale
    assert note and "taking over" in note and str(other.pid) in note
    assert store.lock_run(run_id) is None                               # ours already: nothing to say
    store.unlock_run(run_id)


def test_the_heartbeat_refreshes_this_process_lock_only(tmp_path):
    from cryptobench.store.database import heartbeat
    store = Store(tmp_path / "r.sqlite")
    mine, theirs = store.create_run(Plan(), {}), store.create_run(Plan(), {})
    store.lock_run(mine)
    store.lock_run(theirs, pid=1)                         # another process's lock
    with store.backend.transaction():
        store.backend.execute("UPDATE locks SET heartbeat = 0")
    assert heartbeat(store.path, mine) and heartbeat(store.path, theirs)
    beats = dict(store.backend.execute("SELECT run_id, heartbeat FROM locks").fetchall())
    assert beats[mine] > 0 and beats[theirs] == 0

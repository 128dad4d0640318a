"""Store locations, secrets and faults (issue 30, items 5-7): one parser of a store location, one
redaction of its secrets in every message, no secret in a child's environment, readers that
never create a store, a lost PostgreSQL connection made again (on a real server restarted
mid-run), a killed run shown as interrupted at once, a harness that never answers its handshake,
and the CRYPTOBENCH_*_S numbers refused with one line."""
import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from conftest import cli, started_postgres
from cryptobench.core.errors import HarnessError, UsageError
from cryptobench.core.records import Plan
from cryptobench.store.database import Store
from cryptobench.store.location import parse_location, redact

SECRET = "Zq9xK7wP"          # a password no message may hold, in any test below


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _script(path, body: str):
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _one_line_error(proc, code: int = 2) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("cryptobench: error: ")
    assert proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr


# --- 5. secrets ---------------------------------------------------------------------------------
@pytest.mark.parametrize("url, label", [
    (f"postgresql://lab:{SECRET}@db:5432/bench", "postgresql://lab:***@db:5432/bench"),
    (f"postgresql://lab@db/bench?password={SECRET}", "postgresql://lab@db/bench?password=***"),
    (f"postgresql://db/bench?sslmode=require&password={SECRET}&connect_timeout=5",
     "postgresql://db/bench?sslmode=require&password=***&connect_timeout=5"),
    (f"postgres://db/bench?sslpassword={SECRET}&passfile=/home/{SECRET}/.pgpass",
     "postgres://db/bench?sslpassword=***&passfile=***"),
    (f"postgresql://lab:{SECRET[:4]}%2F{SECRET[4:]}@db/bench", "postgresql://lab:***@db/bench"),
    (f"postgresql://db/bench?pass%77ord={SECRET}", "postgresql://db/bench?pass%77ord=***"),   # an encoded key
])
def test_a_store_url_is_labelled_without_its_secrets(url, label):
    location = parse_location(url)
    assert location.kind == "postgresql" and location.url == url and location.label == label
    assert location.secrets                              # the password as written and as libpq reads it
    for secret in location.secrets:                      # a driver's error quoting the URL or the password
        echoed = location.redact(f'connection failed: "{url}" said {secret}')
        assert secret not in echoed and SECRET[:4] not in echoed and label in echoed


@pytest.mark.parametrize("url", [
    f"postgresql://lab:{SECRET[:4]}/{SECRET[4:]}@db/bench",       # unencoded '/': libpq would read a host 'lab'
    f"postgresql://lab:{SECRET[:4]}@{SECRET[4:]}@db/bench",       # a second '@'
    f"postgresql://lab:{SECRET[:4]}?{SECRET[4:]}@db/bench",       # unencoded '?'
    f"postgresql://lab:{SECRET[:4]} {SECRET[4:]}@db/bench",       # a space
    f"postgresql://db/bench?password={SECRET[:4]}@{SECRET[4:]}",  # an '@' in a parameter
    f"postgresql://db/bench?password={SECRET[:4]}&{SECRET[4:]}",  # an unencoded '&' in a value
])
def test_a_url_libpq_would_read_differently_is_refused_with_nothing_of_the_password(url):
    with pytest.raises(UsageError) as exc:
        parse_location(url)
    assert SECRET[:4] not in str(exc.value) and SECRET[4:] not in str(exc.value)
    assert "percent-encode" in str(exc.value)


def test_the_one_redaction_hides_every_form():
    text = (f"postgresql://u:{SECRET}@h/db mysql://u:{SECRET}@h/db host=h password={SECRET} "
            f"password='{SECRET} x' sslpassword={SECRET}")
    assert SECRET not in redact(text)
    assert redact("postgresql://lab@db/bench and /var/lib/x.sqlite") == "postgresql://lab@db/bench and /var/lib/x.sqlite"


@pytest.mark.e2e
def test_a_password_in_the_query_never_reaches_an_error_of_a_server_that_is_not_there(tmp_path):
    url = f"postgresql://lab@127.0.0.1:{_free_port()}/bench?password={SECRET}"
    for args in (["list", "runs", "--db", url], ["show", "1", "--db", url], ["run", "--op", "sha256", "--engine",
                                                                             "openssl-sw", "--repeat", "1", "--db", url]):
        proc = cli(*args)
        assert "cannot connect" in _one_line_error(proc)
        assert SECRET not in proc.stdout + proc.stderr and "password=***" in proc.stderr
    proc = cli("list", "runs", env={"CRYPTOBENCH_DB": url.replace("?", f"?sslpassword={SECRET}&")})
    assert SECRET not in proc.stdout + proc.stderr and "cannot connect" in _one_line_error(proc)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_a_run_on_a_server_prints_the_url_without_its_password(pg_db, harness):
    url = f"{pg_db}?password={SECRET}"            # trust authentication: the server never asks for it
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--param", "bytes=64", "--repeat", "3",
               "--db", url, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert f"stored as run 1 in {pg_db}?password=***" in proc.stderr
    listed = cli("list", "runs", "--db", url)
    # the header, folded to the table's width
    assert listed.returncode == 0 and f"in{pg_db}?password=***" in "".join(listed.stdout.split())
    assert SECRET not in proc.stdout + proc.stderr + listed.stdout + listed.stderr


SNOOP = """
    import json, os, sys
    # what this harness process was started with, then the real harness in its place
    with open(os.path.join(os.environ["SNOOP_DIR"], f"env-{os.getpid()}.json"), "w") as f:
        json.dump(sorted(os.environ), f)
    os.execv(os.environ["SNOOP_REAL"], [os.environ["SNOOP_REAL"]])
"""


@pytest.mark.e2e
def test_no_harness_inherits_a_secret_variable(tmp_path, harness):
    snoop = _script(tmp_path / "cbh-snoop", SNOOP)
    db = tmp_path / "r.sqlite"
    env = {"CRYPTOBENCH_HARNESS": str(snoop), "SNOOP_REAL": str(harness), "SNOOP_DIR": str(tmp_path),
           "CRYPTOBENCH_DB": str(db), "PGPASSWORD": SECRET, "PGPASSFILE": str(tmp_path / "pgpass"),
           "CRYPTOBENCH_PKCS11_PIN": SECRET}
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--engine", "mbedtls", "--param", "bytes=64",
               "--repeat", "3", "--quiet", env=env)
    assert proc.returncode == 0, proc.stderr
    seen = [json.loads(p.read_text()) for p in tmp_path.glob("env-*.json")]
    assert seen, "no harness was started through the snooping one"
    for names in seen:
        assert "SNOOP_DIR" in names             # the environment is there, the secrets are not
        assert not {"CRYPTOBENCH_DB", "PGPASSWORD", "PGPASSFILE", "CRYPTOBENCH_PKCS11_PIN"} & set(names)
    assert db.exists()                          # the run itself did use CRYPTOBENCH_DB


def test_every_child_gets_its_environment_from_one_function(monkeypatch):
    from cryptobench.targets.host.harness import environment_with
    from cryptobench.core.processes import STORE_CREDENTIALS, child_environment
    for name in ("CRYPTOBENCH_DB", "PGPASSWORD", "PGPASSFILE", "CRYPTOBENCH_PKCS11_PIN"):
        monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("CRYPTOBENCH_HARMLESS", "1")
    env = child_environment()
    assert SECRET not in env.values() and env["CRYPTOBENCH_HARMLESS"] == "1"
    # the pkcs11 harness gets its PIN back by name; a lab worker (cryptobench's own) the store's credentials
    assert environment_with({"CRYPTOBENCH_PKCS11_PIN": "1234"})["CRYPTOBENCH_PKCS11_PIN"] == "1234"
    worker = child_environment({"CRYPTOBENCH_DB": "postgresql://db/x"}, keep=STORE_CREDENTIALS)
    assert worker["PGPASSWORD"] == SECRET and "CRYPTOBENCH_PKCS11_PIN" not in worker


# --- 6. one store location parser; readers never create a store ---------------------------------
@pytest.mark.e2e
@pytest.mark.parametrize("location", ["mysql://u@h/db", f"mysql://u:{SECRET}@h/db", "postgresql:/x", "postgres:x",
                                      "sqlite:///x.sqlite", "sqlite:x.sqlite", "POSTGRESQL://u@h/db",
                                      f"host=h dbname=d password={SECRET}"])
def test_a_location_that_is_neither_a_file_nor_a_postgresql_url_is_one_line_and_creates_nothing(tmp_path, location):
    for args in (["show", "1"], ["list", "runs"], ["run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "1"]):
        proc = cli(*args, "--db", location)
        assert "not a store location" in _one_line_error(proc) or "key=value" in proc.stderr
        assert SECRET not in proc.stderr
    proc = cli("list", "runs", env={"CRYPTOBENCH_DB": location})
    assert "CRYPTOBENCH_DB" in _one_line_error(proc)
    assert list(tmp_path.iterdir()) == []                    # no folder named after the URL


READERS = [["list", "runs"], ["show", "1"], ["show", "latest", "--format", "json"], ["export", "1", "--format", "csv"],
           ["diff", "1", "2"], ["compare", "1", "--reference", "pisa-a53"], ["model", "crossover", "1", "--op", "sha256", "--a", "openssl-sw", "--b", "mbedtls"],
           ["db", "migrate"]]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_a_reader_of_a_missing_store_says_so_and_creates_nothing(tmp_path, args):
    missing = tmp_path / "x" / "a" / "b.sqlite"
    proc = cli(*args, "--db", str(missing))
    assert f"{missing}: no such store" in _one_line_error(proc)
    assert not (tmp_path / "x").exists() and list(tmp_path.iterdir()) == []


def test_report_of_a_missing_store_writes_no_report(tmp_path):
    proc = cli("report", "1", "--out", str(tmp_path / "rep"), "--db", str(tmp_path / "none.sqlite"))
    assert "no such store" in _one_line_error(proc) and list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_a_reader_of_an_empty_file_or_database_writes_nothing(tmp_path, pg_db):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    proc = cli("list", "runs", "--db", str(empty))
    assert "no cryptobench store there" in _one_line_error(proc) and empty.read_bytes() == b""
    proc = cli("show", "latest", "--db", pg_db)
    assert "no cryptobench store there" in _one_line_error(proc)
    import psycopg
    with psycopg.connect(pg_db) as conn:
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0] == 0


@pytest.mark.e2e
def test_a_writer_still_makes_a_new_store(tmp_path, harness):
    db = tmp_path / "new" / "r.sqlite"
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--param", "bytes=64", "--repeat", "3",
               "--db", str(db), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert f"stored as run 1 in {db}" in proc.stderr and cli("list", "runs", "--db", str(db)).returncode == 0


# --- 7. faults -----------------------------------------------------------------------------------
# forwards every request to the real harness; the HOLD_AT-th `sample` request waits, after saying
# so (file `held`), until the file `release` appears: the test restarts the server meanwhile
GATE = """
    import json, os, pathlib, subprocess, sys, threading, time
    real = subprocess.Popen([os.environ["GATE_REAL"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1)

    def replies():
        for line in real.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()

    threading.Thread(target=replies, daemon=True).start()
    gate, hold_at, samples = pathlib.Path(os.environ["GATE_DIR"]), int(os.environ["GATE_HOLD_AT"]), 0
    for line in sys.stdin:
        if json.loads(line)["cmd"] == "sample":
            samples += 1
            if samples == hold_at:
                (gate / "held").touch()
                while not (gate / "release").exists():
                    time.sleep(0.05)
        real.stdin.write(line)
        real.stdin.flush()
    real.stdin.close()
    real.wait()
"""
REPEAT = 40


@pytest.fixture
def own_server():
    """A PostgreSQL server of this test's own, to stop and start under a run."""
    yield from started_postgres("the test")


class _Stderr:
    """A child's stderr, read as it comes, so that a test can wait for a line."""

    def __init__(self, proc):
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(iter(proc.stderr.readline, "")), daemon=True).start()

    def wait_for(self, text: str, proc) -> None:
        while not any(text in line for line in self.lines):
            assert proc.poll() is None, "".join(self.lines)[-3000:]
            time.sleep(0.05)


def _wait_for_file(path, proc, err) -> None:
    while not path.exists():
        assert proc.poll() is None, "".join(err.lines)[-3000:]
        time.sleep(0.05)


def _gated_run(tmp_path, harness, url, **env):
    """A run of two cells of REPEAT samples each through the gate, every round stored at once."""
    gate = _script(tmp_path / "cbh-gate", GATE)
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--op", "sha256", "--engine", "openssl-sw", "--param",
            "bytes=64,128", "--repeat", str(REPEAT), "--warmup", "0", "--processes", "1", "--db", url, "--quiet"]
    full = {**os.environ, "CRYPTOBENCH_HARNESS": str(gate), "GATE_REAL": str(harness), "GATE_DIR": str(tmp_path),
            "GATE_HOLD_AT": "9", "CRYPTOBENCH_CHECKPOINT_S": "0.001", **env}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=full)
    err = _Stderr(proc)
    _wait_for_file(tmp_path / "held", proc, err)
    return proc, err


def _samples(url) -> dict:
    import psycopg
    with psycopg.connect(url) as conn:
        return {k: (s, json.loads(n)) for k, s, n in conn.execute("SELECT cell_key, status, samples FROM cells")}


@pytest.mark.e2e
def test_a_server_restarted_mid_run_is_reconnected_and_no_sample_is_lost(tmp_path, harness, own_server):
    url = own_server.create_database("restarted")
    proc, err = _gated_run(tmp_path, harness, url)
    try:
        stored = _samples(url)
        assert stored and all(s == "partial" for s, _ in stored.values())      # rounds stored before the restart
        own_server.halt()
        (tmp_path / "release").touch()
        err.wait_for("was lost while writing", proc)                          # it waits for the server ...
        own_server.start()
        proc.wait(timeout=600)                                                 # (a hang guard)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(err.lines)
    assert proc.returncode == 0, text[-3000:]
    assert "retrying for up to 60 s" in text and "connected to" in text and "again" in text
    cells = _samples(url)
    assert len(cells) == 2 and all(s == "ok" and len(n) == REPEAT for s, n in cells.values())   # none lost or doubled


@pytest.mark.e2e
def test_a_server_that_stays_away_stops_the_run_interrupted_with_exit_1(tmp_path, harness, own_server):
    url = own_server.create_database("gone")
    proc, err = _gated_run(tmp_path, harness, url, CRYPTOBENCH_STORE_RETRY_S="1")
    try:
        own_server.halt()
        (tmp_path / "release").touch()
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
        own_server.start()
    text = "".join(err.lines)
    assert proc.returncode == 1 and "Traceback" not in text, text[-3000:]
    last = text.strip().splitlines()[-1]
    assert last.startswith("cryptobench: error: postgresql://") and "lost while writing cells" in last
    assert "not made again within 1 s" in last and "run 1 stops here, interrupted" in last and "--resume 1" in last
    listed = cli("list", "runs", "--db", url)
    assert "interrupted" in listed.stdout and "running" not in listed.stdout        # its process is gone
    kept = _samples(url)
    assert kept and all(s == "partial" for s, _ in kept.values())
    resumed = cli("run", "--resume", "1", "--db", url, "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert all(s == "ok" and len(n) == REPEAT for s, n in _samples(url).values())


def _lock_of(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT pid FROM locks").fetchone()
    except sqlite3.OperationalError:
        return None
    finally:
        con.close()


@pytest.mark.e2e
def test_a_killed_run_is_listed_interrupted_at_once(tmp_path, harness):
    db = tmp_path / "r.sqlite"
    args = [sys.executable, "-m", "cryptobench.cli", "run", "--op", "sha256", "--param", "bytes=64,128",
            "--engine", "openssl-sw", "--budget", "600", "--precision", "0.0001", "--db", str(db), "--quiet"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while _lock_of(db) is None and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    assert "running" in cli("list", "runs", "--db", str(db)).stdout
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    listed = cli("list", "runs", "--db", str(db))              # its heartbeat is still fresh: the pid says it
    assert "interrupted" in listed.stdout and "running" not in listed.stdout


def test_a_process_id_given_to_a_newer_process_does_not_hold_the_run(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    run_id = store.create_run(Plan(), {})
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        store.lock_run(run_id, pid=other.pid)
        assert store.run_summaries()[0]["status"] == "running"
        # as if the lock had been taken an hour before that process started: a process of another run
        # had the id then, and this one only got it since
        with store.backend.transaction():
            store.backend.execute("UPDATE locks SET started = started - 3600")
        assert store.run_summaries()[0]["status"] == "interrupted"
        assert "taking over" in store.lock_run(run_id)
    finally:
        other.kill()
        other.wait()


@pytest.mark.e2e
def test_a_harness_that_never_answers_its_handshake_has_its_own_deadline(tmp_path, monkeypatch):
    from cryptobench.targets.host.harness import HarnessProcess
    mute = _script(tmp_path / "cbh-mute", "import time\ntime.sleep(600)\n")
    monkeypatch.setenv("CRYPTOBENCH_HANDSHAKE_TIMEOUT_S", "1")
    monkeypatch.delenv("CRYPTOBENCH_REPLY_TIMEOUT_S", raising=False)          # 600 s: not the one that applies
    with pytest.raises(HarnessError, match=r"no reply to 'hello' within 1 s; the process was stopped"):
        HarnessProcess(path=mute)
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "1", "--db", str(tmp_path / "r.sqlite"),
               "--quiet", env={"CRYPTOBENCH_HARNESS": str(mute), "CRYPTOBENCH_HANDSHAKE_TIMEOUT_S": "1"})
    assert proc.returncode == 3 and "no reply to 'hello' within 1 s" in proc.stdout + proc.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["CRYPTOBENCH_CHECKPOINT_S", "CRYPTOBENCH_HANDSHAKE_TIMEOUT_S",
                                  "CRYPTOBENCH_REPLY_TIMEOUT_S", "CRYPTOBENCH_STORE_RETRY_S"])
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", "0", "1e9"])
def test_a_bad_number_in_the_environment_stops_a_run_with_one_line_and_no_other_command(tmp_path, name, value):
    db = tmp_path / "r.sqlite"
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "1", "--db", str(db),
               env={name: value})
    line = _one_line_error(proc)
    assert f"{name}={value!r} is not a number of seconds above 0 and at most" in line
    assert not db.exists()
    assert cli("list", "suites", env={name: value}).returncode == 0        # a command that does not use it works


def test_the_env_number_parser_takes_a_good_value(monkeypatch):
    from cryptobench.stats.sampling import CHECKPOINT
    monkeypatch.setenv("CRYPTOBENCH_CHECKPOINT_S", " 0.25 ")
    assert CHECKPOINT.value() == 0.25
    monkeypatch.delenv("CRYPTOBENCH_CHECKPOINT_S")
    assert CHECKPOINT.value() == 5.0

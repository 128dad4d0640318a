import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "build" / "host" / "cbh"


def tree_status() -> str | None:
    """`git status --porcelain` of the repository (None outside a git checkout): what the suite
    must leave as it found it (tests/test_zz_tree_unchanged.py)."""
    if not (ROOT / ".git").exists():
        return None
    return subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=True).stdout


# the tiers (pyproject.toml's markers) and their rule, hooks included: a test that starts a process is
# in a tier that the fast one (`-m "not slow"`) leaves out (tests/tiers.py)
from tiers import cli_helper, pytest_collection_modifyitems, pytest_runtest_call  # noqa: E402,F401
from tiers import pytest_runtest_protocol  # noqa: E402,F401


# the tree as the session found it: a developer's uncommitted edits are theirs, not the suite's
TREE_AT_START = tree_status()

# pycryptodome's first use of a native module runs `file -b` on the interpreter (platform.architecture,
# cached by pycryptodome afterwards): loaded here, once, so no fast-tier test that happens to be a
# worker's first user of it is taken for one that starts a process
import Crypto.Cipher.AES  # noqa: E402,F401


@pytest.fixture(scope="session", autouse=True)
def _no_terminal_size():
    """COLUMNS and LINES are unset for the whole session, before any fixture (a module's that runs
    the command line too): a table is as wide as a test says, never as the terminal, nor as readline
    says (loaded in pytest's process, it exports them, and so to pytest-xdist's workers)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("COLUMNS", raising=False)
        mp.delenv("LINES", raising=False)
        yield


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Every test runs with its working directory in its own temporary folder: a relative path a
    command writes lands there, never in the repository (tests name the tree by ROOT)."""
    monkeypatch.chdir(tmp_path)


def pytest_sessionfinish(session, exitstatus):
    """The tree as the session found it, checked once every test is done: under pytest-xdist on the
    controller (whose workers' tests end in no set order), and in any run that leaves out
    tests/test_zz_tree_unchanged.py (the fast tier does: it runs git). A file a test created in the
    tree is named, and the run fails."""
    if hasattr(session.config, "workerinput") or TREE_AT_START is None:
        return
    now = tree_status()
    if now != TREE_AT_START:
        before, after = set(TREE_AT_START.splitlines()), set(now.splitlines())
        lines = [f"  + {line}" for line in sorted(after - before)] + [f"  - {line}" for line in sorted(before - after)]
        session.config.get_terminal_writer().line(
            "the suite changed the repository tree (git status --porcelain):\n" + "\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@cli_helper
def cli(*args, env=None, timeout=None, **kw):
    """Run the real command line in a subprocess, in the test's working directory (its temporary
    folder); returns CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "cryptobench.cli", *args], capture_output=True,
                          text=True, env=full_env, timeout=timeout, **kw)


def make_host(*targets: str, only_if_missing: Path | None = None) -> None:
    """`make -C harness/host` into build/host (the default target, or `targets`), one process at a
    time: pytest-xdist's workers build there too, so each waits on a lock file beside the output
    (an flock, released when the process ends however it ends). With `only_if_missing`, nothing
    is run while that file is there."""
    HARNESS.parent.mkdir(parents=True, exist_ok=True)
    with open(HARNESS.parent / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if only_if_missing is not None and only_if_missing.exists():
            return
        subprocess.run(["make", "-s", "-C", str(ROOT / "harness" / "host"), f"BUILD={HARNESS.parent}", *targets],
                       check=True, capture_output=True)


@pytest.fixture(scope="session")
def harness():
    """The real host harness, built by the project's Makefile if it is not there yet."""
    make_host(only_if_missing=HARNESS)
    return HARNESS


@pytest.fixture
def db(tmp_path):
    return tmp_path / "results.sqlite"


def started_postgres(for_what: str):
    """A real PostgreSQL server (cryptobench/devtools/pgserver.py), stopped when the generator ends; its
    failure to start fails the test that needs it (never a skip)."""
    from cryptobench.devtools.pgserver import PostgresServer
    try:
        server = PostgresServer()
    except Exception as exc:       # noqa: BLE001 - said whole, then the test fails
        pytest.fail(f"could not start PostgreSQL for {for_what}: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres():
    """One server for the session's tests."""
    yield from started_postgres("the tests")


@pytest.fixture
def pg_db(postgres, request):
    """A fresh database on that server, named after the test."""
    import re
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return postgres.create_database(name)


@pytest.fixture(scope="session")
def qemu_lab(tmp_path_factory):
    """A labgrid lab really started on localhost (cryptobench/devtools/qemulab.py): a coordinator, an
    exporter (ser2net serving each board's serial line) and two places, qemu-a and qemu-b, whose boards
    are QEMU netduinoplus2 machines with a REST power switch and a flash port. Its failure to start
    fails the tests that need it."""
    from cryptobench.devtools.qemulab import QemuLab
    try:
        lab = QemuLab(["qemu-a", "qemu-b"], workdir=tmp_path_factory.mktemp("lab")).start()
    except Exception as exc:       # noqa: BLE001 - said whole, then the test fails
        pytest.fail(f"could not start the labgrid lab for the tests: {exc}")
    yield lab
    lab.stop()

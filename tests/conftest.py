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


# tiers (pyproject.toml's markers): a test in one of these is slow too, so `-m "not slow"` leaves them all out
SLOW_TIERS = ("e2e", "qemu", "lab")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(tier) for tier in SLOW_TIERS) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


# the tree as the session found it: a developer's uncommitted edits are theirs, not the suite's
TREE_AT_START = tree_status()


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Every test runs with its working directory in its own temporary folder: a relative path a
    command writes lands there, never in the repository (tests name the tree by ROOT)."""
    monkeypatch.chdir(tmp_path)


def cli(*args, env=None, timeout=None, **kw):
    """Run the real command line in a subprocess, in the test's working directory (its temporary
    folder); returns CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "cryptobench.cli", *args], capture_output=True,
                          text=True, env=full_env, timeout=timeout, **kw)


@pytest.fixture(scope="session")
def harness():
    """The real host harness, built by the project's Makefile if it is not there yet."""
    if not HARNESS.exists():
        subprocess.run(["make", "-s", "-C", str(ROOT / "harness" / "host"), f"BUILD={HARNESS.parent}"],
                       check=True)
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

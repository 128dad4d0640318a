import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "build" / "host" / "cbh"


def cli(*args, env=None, timeout=None, **kw):
    """Run the real command line in a subprocess; returns CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "cryptobench.cli", *args], capture_output=True,
                          text=True, env=full_env, cwd=ROOT, **kw)


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

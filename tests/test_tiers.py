"""The suite's tiers hold (tests/tiers.py, pyproject.toml's markers): a test that starts the command
line or any other process is out of the fast tier (`-m "not slow"`), by the collection hook where
its source shows it and by the running test's failure where it does not; the two tiers together
are the whole suite, nothing skipped or lost between them."""
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import tokenize
import tomllib

import pytest

import tiers
from conftest import ROOT, cli


def _names_cli():
    return cli("--version")


def _through_a_helper():
    return _names_cli()


def _runs_make():
    subprocess.run(["make", "-v"], capture_output=True)


def _forks():
    if os.fork() == 0:
        os._exit(0)


def _imports_cli_itself():
    from conftest import cli as the_cli
    return the_cli("--help")


def _pure():
    return sorted({3, 1, 2})


# held in a dict, so that no test here names them (a test naming one would be tiered by it)
SAMPLES = {"cli": _names_cli, "helper": _through_a_helper, "make": _runs_make, "fork": _forks,
           "local import": _imports_cli_itself, "pure": _pure}


@pytest.mark.parametrize("sample, tiers_found", [("cli", {"cli"}), ("helper", {"cli"}), ("make", {"subprocess"}),
                                                 ("fork", {"subprocess"}), ("local import", {"cli"}),
                                                 ("pure", set())])
def test_a_function_is_tiered_by_what_its_source_names_helpers_followed(sample, tiers_found):
    assert tiers.uses(SAMPLES[sample]) == tiers_found


def test_the_guard_says_which_marker_a_test_that_started_something_lacks():
    started = tiers.Watch()
    started.started = ["make -s", "cc -c", "git status", "git status", "ld -o"]
    assert "@pytest.mark.subprocess" in tiers.missing_tier({"slow"}, started)
    assert "cc -c, git status, ld -o and 1 more" in tiers.missing_tier(set(), started)
    for tier in ("subprocess", "cli", "e2e", "qemu", "lab"):
        assert tiers.missing_tier({tier}, started) is None
    called = tiers.Watch()
    called.cli = 1
    assert "@pytest.mark.cli" in tiers.missing_tier({"subprocess", "slow"}, called)
    assert tiers.missing_tier({"cli"}, called) is None
    assert tiers.missing_tier(set(), tiers.Watch()) is None


def test_a_process_start_is_seen_by_the_audit_hook_with_its_program_named():
    """The audit events the standard library raises when it starts a process, raised here by hand
    (nothing is started) while a watch of the test's own is the running one: it lists each by its
    program and first word."""
    watch, outer = tiers.Watch(), tiers._watch
    tiers._watch = watch
    try:
        sys.audit("subprocess.Popen", "/usr/bin/make", ["/usr/bin/make", "-s", "all"], None, None)
        sys.audit("os.system", b"gcc -c x.c")
        sys.audit("os.posix_spawn", "/bin/sh", ["sh", "-c", "true"], None)
        sys.audit("os.fork")
        sys.audit("open", "/dev/null", "r", 0)               # not a process
    finally:
        tiers._watch = outer
    assert watch.started == ["make -s", "gcc -c", "sh -c", "os.fork"]
    assert outer is not None and outer.started == []


def test_every_tier_is_a_registered_marker_and_the_readme_names_the_fast_tiers_command():
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    registered = {line.split(":")[0] for line in markers}
    assert set(tiers.SLOW_TIERS) | {"slow"} <= registered
    readme = (ROOT / "README.md").read_text()
    assert 'pytest -n auto -m "not slow"' in readme
    for tier in tiers.SLOW_TIERS:
        assert f"`{tier}`" in readme


def test_pytest_xdist_is_there_for_the_fast_tiers_cores(pytestconfig):
    assert pytestconfig.pluginmanager.hasplugin("xdist")


# --- the suite as collected ---------------------------------------------------------------------

DUMP_PLUGIN = '''
import inspect, json, os

def _source(fn):
    try:
        return inspect.getsource(inspect.unwrap(fn))
    except (OSError, TypeError):
        return ""

def pytest_collection_finish(session):
    rows = []
    for item in session.items:
        info = item._fixtureinfo
        fixtures = [_source(fd.func) for name in item.fixturenames for fd in info.name2fixturedefs.get(name, ())]
        rows.append({"nodeid": item.nodeid, "markers": sorted({m.name for m in item.iter_markers()}),
                     "source": "\\n".join([_source(item.obj), *fixtures])})
    with open(os.environ["TIER_DUMP"], "w") as out:
        json.dump(rows, out)
'''


def _code_only(source: str) -> str:
    """The source without its comments and strings (a docstring may say "cli(")."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline))
    except (tokenize.TokenError, IndentationError):
        return source
    return " ".join(t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.STRING))


def test_the_fast_tier_holds_no_test_that_names_the_cli_helper_or_starts_a_process(tmp_path):
    """The whole suite collected as the fast tier (`-m "not slow"`, in a child pytest): no test left
    in it names the cli helper or a process-starting call in its body or its fixtures' (read as
    text, apart from tiers.py's look at the syntax), every test in a process tier is slow, and the
    fast and slow tiers add up to the whole suite."""
    (tmp_path / "tierdump.py").write_text(DUMP_PLUGIN)
    dump = tmp_path / "fast.json"
    env = {**os.environ, "TIER_DUMP": str(dump),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env.pop(tiers.RECORD_ENV, None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "tierdump",
                           "-p", "no:cacheprovider", "-p", "no:xdist", "-m", "not slow", "--rootdir", str(ROOT),
                           "-c", str(ROOT / "pyproject.toml"), str(ROOT / "tests")],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)   # as ./run-tests.sh
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    counted = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", proc.stdout)
    assert counted, proc.stdout[-2000:]
    fast, total, slow = map(int, counted.groups())
    rows = json.loads(dump.read_text())
    assert len(rows) == fast and fast + slow == total and fast > 1000 and slow > 500
    evidence = re.compile(r"\bcli \(|\bsubprocess \.|\bos \. (system|popen|fork|posix_spawn|exec\w*|spawn\w*) \(")
    named = [r["nodeid"] for r in rows if evidence.search(_code_only(r["source"]))]
    assert named == [], f"in the fast tier, yet naming cli() or a process start: {named[:10]}"
    in_process_tier = [r["nodeid"] for r in rows if set(r["markers"]) & set(tiers.PROCESS_TIERS)]
    assert in_process_tier == []
    assert all("slow" not in r["markers"] for r in rows)


INNER_CONFTEST = '''
import subprocess, sys
sys.path.insert(0, {tests!r})
from tiers import cli_helper, pytest_collection_modifyitems, pytest_runtest_call, pytest_runtest_protocol

@cli_helper
def cli(*args):
    return subprocess.run([sys.executable, "-c", "pass"])
'''

INNER_TESTS = '''
import importlib, sys
import pytest
from conftest import cli

def start():
    importlib.import_module("subprocess").run([sys.executable, "-c", "pass"])

def test_names_cli():
    cli("run")

def test_starts_through_code_it_calls():
    start()

def test_calls_cli_out_of_sight():
    getattr(importlib.import_module("conftest"), "cli")()

@pytest.mark.subprocess
def test_marked():
    start()

def test_pure():
    assert sorted([2, 1]) == [1, 2]
'''


def _inner(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k != tiers.RECORD_ENV}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "-p", "no:xdist", *args], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=600)


def test_a_test_that_starts_a_process_unseen_fails_naming_its_marker_in_either_tier(tmp_path):
    """A small suite with the tiers' hooks: a test naming cli() is tiered at collection; one whose
    process start the source hides (code under test starts it) fails in the fast tier and in the
    full run, saying which marker it lacks, as does one calling cli() out of sight."""
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST.format(tests=str(tiers.TESTS)))
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n" + "".join(f"    {m}\n" for m in markers))

    fast = _inner(tmp_path, "-m", "not slow")
    out = fast.stdout
    assert fast.returncode == 1, out + fast.stderr
    assert "2 failed, 1 passed, 2 deselected" in out
    assert ("test_inner.py::test_starts_through_code_it_calls started a process (python -c) but is in the fast "
            "tier: mark it @pytest.mark.subprocess") in out
    assert ("test_inner.py::test_calls_cli_out_of_sight started the command line (the cli helper) without the "
            "`cli` marker: mark it @pytest.mark.cli") in out
    assert {line.split()[1] for line in out.splitlines() if line.startswith("FAILED ")} == {
        "test_inner.py::test_starts_through_code_it_calls", "test_inner.py::test_calls_cli_out_of_sight"}

    full = _inner(tmp_path)
    assert full.returncode == 1 and "2 failed, 3 passed" in full.stdout, full.stdout + full.stderr

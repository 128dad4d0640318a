"""The suite's tiers (pyproject.toml's markers) and the rule that keeps the fast tier fast: a test
that starts a process (the command line, a compiler, make, a server, the harness) is in a tier
that `-m "not slow"` leaves out.

Three things hold it (conftest.py imports this module's hooks):
- at collection, a test is tiered by what it is seen to use: the `cli` helper (conftest.cli) in
  its body, a fixture's or a helper function's of the tests (followed through), is the `cli` tier;
  the `subprocess` module or os.system/fork/exec/spawn there is the `subprocess` tier, and so is a
  fixture that builds or starts something (PROCESS_FIXTURES); every tier in SLOW_TIERS adds `slow`;
- while a test runs (its fixtures' set-up too), an audit hook (sys.addaudithook) sees every process
  it starts, in-process code under test included: a test that started one without a process tier,
  or called the cli helper without the `cli` marker, fails and says which marker it needs, so a
  new such test cannot land in the fast tier unnoticed (in either tier: the full suite checks too);
- tests/test_tiers.py collects the suite and checks that no fast-tier test names the cli helper or
  a process-starting call in its source.

With CRYPTOBENCH_TIERS_RECORD=DIR the running tests are not failed but listed, one JSON line per test
in DIR/<pid>.jsonl (what each started, whether it called cli): how the tiers were first drawn.
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# tiers a test is in besides the fast one; each of them is slow too, so `-m "not slow"` leaves them out
SLOW_TIERS = ("e2e", "qemu", "lab", "cli", "subprocess")
# the tiers whose tests may start processes (e2e, qemu and lab tests all do)
PROCESS_TIERS = SLOW_TIERS
# fixtures that build or start something (conftest.py): a test that uses one starts processes
PROCESS_FIXTURES = ("harness", "postgres", "pg_db", "qemu_lab")
# what starting a process raises as an audit event (the subprocess module, os, multiprocessing's fork)
SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn",
                          "os.fork", "os.forkpty"})
# os's functions that start a process, seen in a test's source
OS_SPAWNS = frozenset({"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve",
                       "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve",
                       "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe"})
RECORD_ENV = "CRYPTOBENCH_TIERS_RECORD"

CLI_HELPERS: set[int] = set()       # id() of the functions that start the command line (conftest.cli)


def cli_helper(fn):
    """Registers `fn` as a helper that starts the command line: a test that names it is in the cli
    tier, and calling it is counted against the running test."""
    CLI_HELPERS.add(id(fn))

    def counted(*args, **kw):
        watch = _watch
        if watch is not None:
            watch.cli += 1
        return fn(*args, **kw)
    counted.__wrapped__ = fn
    counted.__doc__ = fn.__doc__
    counted.__name__ = fn.__name__
    CLI_HELPERS.add(id(counted))
    return counted


# --- what a test's source uses ------------------------------------------------------------------

_seen: dict[int, frozenset[str]] = {}


def _source_tree(fn) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None


_in_tests: dict[str, bool] = {}


def _ours(obj) -> bool:
    """A function of the test suite (tests/), whose own body counts as the caller's."""
    code = getattr(obj, "__code__", None)
    if code is None:
        return False
    if code.co_filename not in _in_tests:
        _in_tests[code.co_filename] = Path(code.co_filename).resolve().is_relative_to(TESTS)
    return _in_tests[code.co_filename]


def _ours_class(cls) -> bool:
    return any(_ours(getattr(m, "__func__", m)) for m in vars(cls).values() if inspect.isfunction(
        getattr(m, "__func__", m)))


def uses(fn) -> frozenset[str]:
    """The tiers a function's source puts its caller in ("cli", "subprocess"), following the suite's
    own functions it names (a module's helper, one imported from another test module)."""
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    key = id(fn)
    if key in _seen:
        return _seen[key]
    _seen[key] = frozenset()                 # a recursive helper: what the rest of it finds
    found: set[str] = set()
    tree = _source_tree(fn)
    nodes = list(ast.walk(tree)) if tree is not None else []
    names = dict(getattr(fn, "__globals__", {}))
    for node in nodes:                       # `from conftest import cli` inside the function
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in sys.modules:
            for alias in node.names:
                names[alias.asname or alias.name] = getattr(sys.modules[node.module], alias.name, None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("subprocess", "os"):
                    names[alias.asname or alias.name] = sys.modules[alias.name]
    for node in nodes:
        if isinstance(node, ast.Name):
            obj = names.get(node.id)
            if obj is None:
                continue
            if id(obj) in CLI_HELPERS:
                found.add("cli")
            elif obj is subprocess or getattr(obj, "__module__", None) == "subprocess":
                found.add("subprocess")
            elif inspect.isfunction(obj) and obj is not fn and _ours(obj):
                found |= uses(obj)
            elif inspect.isclass(obj) and obj.__module__ in sys.modules and _ours_class(obj):
                for member in vars(obj).values():          # a helper class of the tests: its methods
                    member = getattr(member, "__func__", member)
                    if inspect.isfunction(member) and _ours(member):
                        found |= uses(member)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            obj = names.get(node.value.id)
            if (obj is os and node.attr in OS_SPAWNS) or (obj is subprocess):
                found.add("subprocess")
    _seen[key] = frozenset(found)
    return _seen[key]


def item_uses(item) -> set[str]:
    """The tiers an item's test function and the fixtures it uses put it in."""
    found = set(uses(item.obj)) if inspect.isfunction(getattr(item, "obj", None)) or inspect.ismethod(
        getattr(item, "obj", None)) else set()
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        if name in PROCESS_FIXTURES:
            found.add("subprocess")
        for fixturedef in (info.name2fixturedefs.get(name, ()) if info else ()):
            func = getattr(fixturedef, "func", None)
            if func is not None and _ours(inspect.unwrap(func)):
                found |= uses(func)
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        for tier in sorted(item_uses(item)):
            if not item.get_closest_marker(tier):
                item.add_marker(getattr(pytest.mark, tier))
        if any(item.get_closest_marker(tier) for tier in SLOW_TIERS) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


# --- what a running test starts -----------------------------------------------------------------

class Watch:
    def __init__(self):
        self.started: list[str] = []
        self.cli = 0


_watch: Watch | None = None
_lock = threading.Lock()


def _name(event: str, args: tuple) -> str:
    """A short name for what an audit event starts: the program and its first word."""
    try:
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            words = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or [])
            words = [os.fsdecode(w) for w in words[:2]] or [os.fsdecode(executable)]
        elif event == "os.system":
            words = os.fsdecode(args[0]).split()[:2]
        elif event in ("os.posix_spawn", "os.exec"):
            words = [os.fsdecode(w) for w in list(args[1] or [args[0]])[:2]]
        elif event == "os.spawn":
            words = [os.fsdecode(w) for w in list(args[2] or [args[1]])[:2]]
        else:
            return event
    except Exception:                        # noqa: BLE001 - a name only, never the test's failure
        return event
    if words:
        words[0] = os.path.basename(words[0])
    return " ".join(words)[:60]


def _audit(event, args):
    watch = _watch
    if watch is not None and event in SPAWN_EVENTS:
        name = _name(event, args)
        with _lock:
            watch.started.append(name)


if not getattr(sys, "_cryptobench_tiers_hook", False):      # once per process: hooks cannot be removed
    sys.addaudithook(_audit)
    sys._cryptobench_tiers_hook = True


def missing_tier(markers: set[str], watch: Watch) -> str | None:
    """What a test that ran with `markers` and started what `watch` saw lacks, in a sentence; None
    when it is tiered as it must be."""
    if watch.cli and "cli" not in markers:
        return ("started the command line (the cli helper) without the `cli` marker: mark it "
                "@pytest.mark.cli (tests/tiers.py finds cli() named in a test, its fixtures and helpers)")
    if watch.started and not markers & set(PROCESS_TIERS):
        shown = sorted(set(watch.started))
        more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
        return (f"started a process ({', '.join(shown[:3])}{more}) but is in the fast tier: mark it "
                f"@pytest.mark.subprocess (or another of {', '.join(PROCESS_TIERS)}; pyproject.toml's markers)")
    return None


def _record(item, watch: Watch, markers: set[str]) -> None:
    folder = Path(os.environ[RECORD_ENV])
    folder.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"nodeid": item.nodeid, "started": sorted(set(watch.started)), "cli": watch.cli,
                       "markers": sorted(markers)})
    with open(folder / f"{os.getpid()}.jsonl", "a") as out:
        out.write(line + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _watch
    _watch = Watch()
    try:
        return (yield)
    finally:
        _watch = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield                           # the test's own failure first
    watch = _watch
    if watch is not None:
        markers = {m.name for m in item.iter_markers()}
        if os.environ.get(RECORD_ENV):
            if watch.started or watch.cli:
                _record(item, watch, markers)
        else:
            problem = missing_tier(markers, watch)
            if problem:
                pytest.fail(f"{item.nodeid} {problem}", pytrace=False)
    return result

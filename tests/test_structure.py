"""`python -m cryptobench.devtools.structure` on a small package built for the test."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cryptobench.devtools import structure

SRC = Path(__file__).resolve().parents[1] / "src"


def _function(name, lines, above="", on_def=""):
    """A function `lines` long from its def line to its last body line."""
    head = (f"{above}\n" if above else "") + f"def {name}():{on_def}\n"
    return head + '    """Docstring lines count."""\n' + "    x = 1\n" * (lines - 2)


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """pkg: a <-> b (module level), c <-> d (d's half deferred), core.errors -> cli.main (upward),
    an import under TYPE_CHECKING that would close a cycle if it counted, and long functions."""
    monkeypatch.chdir(tmp_path)  # paths print relative to the current directory
    _write(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "from . import b\nfrom . import typed\n",
        "b.py": "import os\nimport pkg.a\n",
        "c.py": "from pkg import d\n",
        "d.py": "def late():\n    from .c import x\n    return x\n",
        "core/__init__.py": "",
        "core/errors.py": "from ..cli.main import main\n",
        "cli/__init__.py": "",
        "cli/main.py": "def main():\n    pass\n",
        "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
        "sub/__init__.py": "",
        "sub/e.py": "from ..core import errors\nfrom ..c import something\n",
        "longs.py": "\n".join([
            _function("no_reason", 61),
            _function("with_reason", 61, above="# long: one table of test vectors"),
            _function("fits", 60),
            _function("empty_reason", 61, on_def="  # long:"),
            "class K:\n    @staticmethod\n    " + _function("method", 61, on_def="  # long: a state machine")
            .replace("\n", "\n    ").rstrip(),
            "",
        ]),
    })
    return tmp_path / "pkg"


def _run(capsys, *args):
    status = structure.main([*map(str, args)])
    return status, capsys.readouterr().out


def test_text_report(pkg, capsys):
    status, out = _run(capsys, pkg, "--no-fail")
    assert status == 0
    assert "import cycles: 2\n" in out
    assert "cycle 1: 2 modules, 2 edges (0 deferred)\n" in out
    assert "    pkg.a -> pkg.b  (pkg/a.py:1)\n" in out
    assert "    pkg.b -> pkg.a  (pkg/b.py:2)\n" in out
    assert "cycle 2: 2 modules, 2 edges (1 deferred); a cycle only through deferred imports" in out
    assert "    pkg.d -> pkg.c  (pkg/d.py:2)  [deferred, in late()]\n" in out
    assert "pkg.typed" not in out.split("deferred imports")[0]  # TYPE_CHECKING closes no cycle
    assert "deferred imports (inside functions): 1 in 1 modules" in out
    assert "  d: c\n" in out
    assert "functions over 60 lines: 4 (2 without a reason)\n" in out
    assert "  pkg/longs.py:1 no_reason (61 lines): NO REASON\n" in out
    assert "with_reason (61 lines): one table of test vectors\n" in out
    assert "empty_reason (61 lines): NO REASON\n" in out
    assert " K.method (61 lines): a state machine\n" in out
    assert "fits" not in out
    assert "upward imports: 1\n  core -> cli: pkg.core.errors -> pkg.cli.main  (pkg/core/errors.py:1)\n" in out
    assert ("result: FAIL: 2 import cycle(s), 2 long function(s) without a reason, 1 upward import(s), "
            "8 module(s) outside every layer folder\n") in out


def test_layers_leave_nothing_out(pkg, capsys):
    _, out = _run(capsys, pkg, "--no-fail")
    assert "  core          3  __init__, core, core.errors\n" in out
    assert "  cli           2  cli, cli.main\n" in out
    assert "  unassigned    8  a, b, c, d, longs, sub, sub.e, typed\n" in out   # files at the top, a folder no layer names


def test_exit_status(pkg, capsys):
    assert _run(capsys, pkg)[0] == 1
    clean = pkg.parent / "clean"
    _write(clean, {"__init__.py": "", "core/__init__.py": "",
                   "core/m.py": _function("f", 61, on_def="  # long: a parser table")})
    status, out = _run(capsys, clean)
    assert status == 0
    assert "import cycles: none\n" in out
    assert "result: ok\n" in out


def test_json(pkg, capsys):
    status, out = _run(capsys, pkg, "--json")
    assert status == 1
    report = json.loads(out)
    assert [c["modules"] for c in report["cycles"]] == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]
    assert [c["only_through_deferred"] for c in report["cycles"]] == [False, True]
    assert report["deferred_imports"] == [{"src": "pkg.d", "dst": "pkg.c", "path": "pkg/d.py", "line": 2,
                                           "deferred": True, "function": "late"}]
    reasons = {f["name"]: f["reason"] for f in report["long_functions"]}
    assert reasons == {"no_reason": None, "with_reason": "one table of test vectors",
                       "empty_reason": None, "K.method": "a state machine"}
    assert report["layers"]["modules"]["pkg.sub.e"] == "unassigned"
    assert [(u["src"], u["dst"], u["src_layer"], u["dst_layer"]) for u in report["upward_imports"]] == \
        [("pkg.core.errors", "pkg.cli.main", "core", "cli")]
    assert len(report["failures"]) == 4


def test_relative_imports_resolve(pkg):
    edges = {(e.src, e.dst) for e in structure.import_edges(structure.load(pkg))}
    assert ("pkg.sub.e", "pkg.core.errors") in edges  # from ..core import errors: a submodule
    assert ("pkg.sub.e", "pkg.c") in edges           # from ..c import something: a name in c
    assert ("pkg.a", "pkg.typed") in edges
    assert ("pkg.typed", "pkg.a") not in edges       # under TYPE_CHECKING: never runs
    assert not any(dst == "os" for _, dst in edges)  # outside the package


def test_tarjan():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    components = sorted(structure.strongly_connected(graph))
    assert components == [["a", "b", "c"], ["d", "e"], ["f"]]


def test_module_entry_point(pkg):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "cryptobench.devtools.structure", "--json", str(pkg)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stderr
    assert len(json.loads(done.stdout)["cycles"]) == 2
    done = subprocess.run([sys.executable, "-m", "cryptobench.devtools.structure", str(pkg / "sub" / "e.py")],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "not a package directory" in done.stderr


def test_a_face_and_the_parts_of_a_layer(tmp_path, capsys, monkeypatch):
    """The simulator's package is used through its __init__ only, and the parts of `targets` are
    ordered: an import past the face and a back-arrow from a lower part into a higher one fail."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "pkg"
    _write(root, {"__init__.py": "", "core/__init__.py": "", "report/__init__.py": "",
                  "targets/__init__.py": "", "targets/verify.py": "from .host import engines\n",
                  "targets/host/__init__.py": "", "targets/host/engines.py": "from .. import verify\n",
                  "targets/mcu/__init__.py": "", "targets/mcu/sim/__init__.py": "",
                  "targets/mcu/sim/inner.py": "from ...power import x\n",
                  "targets/power.py": "from .mcu import sim\n",
                  "targets/mcu/transports.py": "from .sim import inner\nfrom . import sim\n",
                  "report/tables.py": "from ..targets.mcu import sim\n"})
    status, out = _run(capsys, root)
    assert status == 1
    report = structure.analyse(root)
    assert [(e["src"], e["dst"]) for e in report["past_faces"]] == [("pkg.targets.mcu.transports",
                                                                     "pkg.targets.mcu.sim.inner")]
    assert sorted((e["src"], e["src_part"], e["dst_part"]) for e in report["back_arrows"]) == [
        ("pkg.targets.mcu.sim.inner", "simulator", "energy"), ("pkg.targets.verify", "targets", "host, traces")]
    assert "imports past a face (targets.mcu.sim): 1" in out and "back-arrows inside a layer (targets): 2" in out


def test_cryptobench_itself_passes_the_check(capsys):
    report = structure.analyse(SRC / "cryptobench")
    assert report["failures"] == [], structure.render(report)

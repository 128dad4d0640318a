"""Every module of the package imports on its own, first, in a fresh interpreter state.

The structure check (devtools/structure.py) reads imports as text and leaves out the implicit
import of a package's `__init__`, so a cycle through an `__init__` that re-exports its
submodules is invisible to it and shows only when one module happens to be imported first. This
test imports each module as the first of the package (the package's modules dropped from
sys.modules in between; third-party ones stay loaded, so it runs in seconds)."""
import importlib
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "cryptobench"
# modules that need an optional extra this machine may lack say so when imported (core/extras.py);
# labgrid's own import registers drivers with labgrid's global factory, which cannot be imported twice
SKIP = {"cryptobench.targets.mcu.lab.qemu_place"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name not in SKIP and not name.endswith("__main__"):
            yield name


def _forget_package():
    for name in [n for n in sys.modules if n == "cryptobench" or n.startswith("cryptobench.")]:
        del sys.modules[name]


@pytest.mark.slow                  # a fresh import of each of the package's modules: tens of seconds
def test_every_module_imports_first():
    failed = []
    saved = {n: m for n, m in sys.modules.items() if n == "cryptobench" or n.startswith("cryptobench.")}
    try:
        for name in _modules():
            _forget_package()
            try:
                importlib.import_module(name)
            except ImportError as exc:
                failed.append(f"{name}: {exc}")
    finally:
        _forget_package()
        sys.modules.update(saved)
    assert not failed, "\n".join(failed)

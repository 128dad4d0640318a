"""The hostile-input corpus (tests/hostile/README.md): every file gets a one-line error naming the
file, the line and what was expected, and no input file is ever written."""
import hashlib
import re
from pathlib import Path

import pytest

from cryptobench.errors import UsageError
from cryptobench.suites import load_suite

CORPUS = Path(__file__).parent / "hostile"


def _cases(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).iterdir())


def _expected(path: Path) -> tuple[str, str]:
    first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace").lstrip("\ufeff")
    m = re.match(r"#\s*expect:\s*(\d*):\s*(.*)$", first)
    assert m, f"{path}: first line must be '# expect: LINE: FRAGMENT'"
    return m.group(1), m.group(2).strip()


def _check(path: Path, load) -> None:
    line, fragment = _expected(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(UsageError) as err:
        load(path)
    message = str(err.value)
    assert "\n" not in message, message
    assert str(path) + (f":{line}:" if line else "") in message, message
    assert fragment in message, message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("path", _cases("suites"), ids=lambda p: p.name)
def test_hostile_suites(path):
    _check(path, lambda p: load_suite(str(p)))


@pytest.mark.parametrize("path", _cases("recipes"), ids=lambda p: p.name)
def test_hostile_recipes(path):
    from cryptobench.firmware.recipes import load_recipe
    _check(path, lambda p: load_recipe(str(p)))


@pytest.mark.parametrize("path", _cases("references"), ids=lambda p: p.name)
def test_hostile_references(path):
    from cryptobench.references import load_reference
    _check(path, load_reference)

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


def test_run_text_never_reaches_the_terminal_as_control_characters(tmp_path):
    """A label (or a file name, a firmware's output) with escape sequences is printed with the
    control characters shown, in every format; JSON keeps the exact text, escaped by JSON."""
    import json
    from conftest import cli
    db = tmp_path / "r.sqlite"
    label = "X\x1b]0;pwned\x07Y\x9b31m[/]"
    proc = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2", "--label", label, "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    for fmt in ("table", "md", "csv"):
        out = cli("show", "latest", "--format", fmt, "--db", str(db)).stdout
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, fmt
        assert fmt == "csv" or "X\\x1b]0;pwned\\x07Y\\x9b31m" in out, fmt     # (show's CSV has no label)
    doc = json.loads(cli("show", "latest", "--format", "json", "--db", str(db)).stdout)
    assert doc["run"]["label"] == label
    err = cli("show", "1", "--db", str(tmp_path / "bad\x1b[2J.sqlite")).stderr
    assert "\x1b" not in err and "bad\\x1b[2J.sqlite" in err

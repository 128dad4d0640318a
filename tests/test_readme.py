"""The README cannot drift from the code: every `cryptobench …` command in its examples is parsed
by the real command line (with --help appended, so nothing runs), and must not be refused."""
import re
import shlex
from pathlib import Path

import pytest

from conftest import ROOT, cli


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    commands = []
    for block in re.findall(r"```(?:\w*)\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)              # continuation lines
        for line in joined.splitlines():
            line = line.split("  #")[0].split(" # ")[0].strip()
            if line.startswith("cryptobench "):
                commands.append(line)
    return commands


def _variant(command: str) -> list[str]:
    """The command's words, a choice written as a|b|c taken as its first alternative."""
    words = shlex.split(command)[1:]
    return [w.split("|")[0] if "|" in w and not w.startswith("-") else w for w in words]


def test_the_readme_has_examples():
    assert len(readme_commands()) >= 15


@pytest.mark.e2e
@pytest.mark.parametrize("command", readme_commands())
def test_every_readme_command_parses(command):
    proc = cli(*_variant(command), "--help")
    assert proc.returncode == 0, f"{command}: {proc.stderr.strip()}"
    assert "Traceback" not in proc.stderr and proc.stdout.startswith("usage: cryptobench")


def test_every_test_has_a_hang_guard(pytestconfig):
    """pytest-timeout is loaded and pyproject.toml's timeout applies: a hung child fails its test
    with a stack dump instead of holding CI (a guard, not a speed target)."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) >= 600
    assert pytestconfig.getini("timeout_method") == "thread"     # SIGALRM is the simulator's deadline's

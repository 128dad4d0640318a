"""The labgrid environment file LG_ENV names is data (issue 30, malformed inputs): an alias bomb, a
recursive alias, deep nesting, a huge file or a FIFO is refused at once; `targets: 5`, a driver
entry that is not a mapping and an unknown resource or driver class are one line naming the file,
the line and what was expected, never a traceback, never ignored. No lab is needed: the file is
checked before the coordinator is asked."""
import os
import textwrap

import pytest

from conftest import cli
from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.lab import places
from cryptobench.targets.mcu.lab.env_file import MAX_BYTES, MAX_NODES, check_env_file

BOMB = "\n".join([f'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
                 + [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
                 + ["targets: {main: {resources: {RemotePlace: {name: p}}, drivers: {SerialDriver: {}}}}",
                    "extra: *l9", ""])

CASES = {
    # name: (file text, fragments of the one line)
    "alias-bomb": (BOMB, ["bomb.yaml:", f"more than {MAX_NODES:,} YAML nodes"]),
    "recursive-alias": ("x: &x [1, *x]\n", ["recursive alias"]),
    "deep": ("[" * 50_000 + "\n", ["nested too deeply"]),
    "targets-5": ("options:\n  coordinator_address: 127.0.0.1:20408\ntargets: 5\n",
                  [":3: targets: expected a mapping of target names"]),
    "target-list": ("targets:\n  - main\n", [":2: targets: expected a mapping"]),
    "not-a-mapping": ("- just\n- a list\n", [":1: the file: expected a mapping with `targets:`"]),
    "empty": ("", ["empty; expected a mapping with `targets:`"]),
    "bad-yaml": ("targets: {main: [\n", ["not valid YAML"]),
    "unknown-driver": ("targets:\n  main:\n    resources:\n      RemotePlace: {name: p}\n    drivers:\n"
                       "      SerialDriver: {}\n      OpenOCDDrvier:\n        config: board.cfg\n",
                       [":7: target 'main': unknown labgrid driver class 'OpenOCDDrvier'"]),
    "unknown-driver-in-list": ("targets:\n  main:\n    drivers:\n      - SerialDriver: {}\n      - cls: NoSuchDriver\n"
                               "        name: x\n", [":5: target 'main': unknown labgrid driver class 'NoSuchDriver'"]),
    "unknown-resource": ("targets:\n  main:\n    resources:\n      RemotePlaec: {name: p}\n",
                         [":4: target 'main': unknown labgrid resource class 'RemotePlaec'"]),
    "driver-args-null": ("targets:\n  main:\n    drivers:\n      - SerialDriver:\n",
                         [":4: target 'main' driver SerialDriver: expected a mapping of its arguments"]),
    "drivers-5": ("targets:\n  main:\n    drivers: 5\n", [":3: target 'main' drivers: expected a mapping of driver"]),
    "options-list": ("options: [1, 2]\ntargets: {}\n", [":1: options: expected a mapping"]),
    "coordinator-not-text": ("options:\n  coordinator_address: [1, 2]\ntargets: {}\n",
                             ["coordinator_address: expected HOST:PORT"]),
}


def _write(tmp_path, name: str, text: str):
    path = tmp_path / ("bomb.yaml" if name == "alias-bomb" else f"{name}.yaml")
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_malformed_environment_file_is_one_line(tmp_path, monkeypatch, name):
    text, fragments = CASES[name]
    path = _write(tmp_path, name, text)
    monkeypatch.setenv("LG_ENV", str(path))
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    with pytest.raises(UsageError) as exc:
        places.coordinator_address()
    line = str(exc.value)
    assert "\n" not in line and line.startswith(f"LG_ENV={path}"), line
    for fragment in fragments:
        assert fragment in line, line


@pytest.mark.lab
@pytest.mark.parametrize("name", ["alias-bomb", "targets-5", "unknown-driver"])
def test_run_on_a_labgrid_target_says_so_before_asking_the_lab(tmp_path, name):
    text, fragments = CASES[name]
    path = _write(tmp_path, name, text)
    env = {k: v for k, v in os.environ.items() if k != "LG_COORDINATOR"}
    for extra in ({}, {"LG_COORDINATOR": "127.0.0.1:9"}):        # also when the coordinator is named apart
        proc = cli("run", "--target", "labgrid:bench-1", "--suite", "default", "--db", str(tmp_path / "r.sqlite"),
                   env={**env, "LG_ENV": str(path), **extra}, timeout=300)     # hang guard only
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert all(f in lines[0] for f in fragments), lines[0]
    assert not (tmp_path / "r.sqlite").exists()


def test_a_huge_file_and_a_fifo_are_refused_unread(tmp_path, monkeypatch):
    huge = tmp_path / "huge.yaml"
    huge.write_text("targets: {}\n" + "# padding\n" * (MAX_BYTES // 10 + 1))
    with pytest.raises(UsageError, match="larger than 1024 KiB"):
        check_env_file(str(huge))
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    monkeypatch.setenv("LG_ENV", str(fifo))
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    with pytest.raises(UsageError, match="not a regular file"):
        places.coordinator_address()
    with pytest.raises(UsageError, match="no such file"):
        check_env_file(str(tmp_path / "missing.yaml"))


def test_a_good_file_with_anchors_loads(tmp_path, monkeypatch):
    path = tmp_path / "lab.yaml"
    path.write_text(textwrap.dedent("""\
        options:
          coordinator_address: "lab.example:20408"
        nucleo-drivers: &nucleo {SerialDriver: {}, OpenOCDDriver: {config: board.cfg}}
        targets:
          nucleo-1:
            resources:
              RemotePlace: {name: nucleo-1}
            drivers: *nucleo
          nucleo-2:
            resources:
              RemotePlace: {name: nucleo-2}
            drivers: *nucleo
          qemu-a:
            resources:
              - RemotePlace: {name: qemu-a}
            drivers:
              - SerialDriver: {}
              - cls: QEMUFlashDriver
                name: flash
          empty:
        """))
    uses = check_env_file(str(path))
    assert [(u.kind, u.name, u.line) for u in uses if u.target == "qemu-a"] == [
        ("resource", "RemotePlace", 15), ("driver", "SerialDriver", 17), ("driver", "QEMUFlashDriver", 18)]
    assert [u.name for u in uses if u.target == "nucleo-2"] == ["RemotePlace", "SerialDriver", "OpenOCDDriver"]
    monkeypatch.setenv("LG_ENV", str(path))
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    assert places.coordinator_address() == "lab.example:20408"
    assert places.lab_environment().config.get_targets()["nucleo-2"]["drivers"]["SerialDriver"] == {}


def test_a_merge_key_labgrid_cannot_read_is_one_line(tmp_path, monkeypatch):
    path = tmp_path / "merge.yaml"
    path.write_text("serial: &s {SerialDriver: {}}\ntargets:\n  main:\n    drivers:\n      <<: *s\n")
    monkeypatch.setenv("LG_ENV", str(path))
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    with pytest.raises(UsageError) as exc:
        places.lab_environment()
    assert str(exc.value).startswith(f"LG_ENV={path}") and "\n" not in str(exc.value)


def test_the_example_in_docs_lab_md_passes_the_checks(tmp_path, monkeypatch):
    import re
    from conftest import ROOT
    doc = (ROOT / "docs" / "lab.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(# lab-env\.yaml.*?)```", doc, re.S).group(1)
    path = tmp_path / "lab-env.yaml"
    path.write_text(example)
    assert {u.name for u in check_env_file(str(path))} == {"RemotePlace", "SerialDriver", "OpenOCDDriver"}
    monkeypatch.setenv("LG_ENV", str(path))
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    assert places.coordinator_address() == "lab-server:20408"

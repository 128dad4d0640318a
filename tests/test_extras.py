"""Optional dependencies (pyproject.toml extras, src/cryptobench/core/extras.py): a feature whose module
is missing stops with one line naming the extra to install; the rest of the tool does not need it.
A module is made missing the way Python itself honours: sys.modules[name] = None."""
import sys
import tomllib

import pytest

from conftest import ROOT
from cryptobench.core.extras import MissingExtra, require

EXTRAS = ("sim", "lab", "serial", "parquet", "figures", "nvml", "reference", "pqc", "store", "labgrid")


def _one_line(text: str, extra: str, module: str) -> None:
    assert "\n" not in text
    assert f"needs the Python module '{module}', which is not installed" in text
    assert text.endswith(f"pip install 'cryptobench[{extra}]'")


@pytest.mark.parametrize("module", ["unicorn", "capstone", "elftools"])
def test_the_simulator_without_its_modules_names_the_sim_extra(monkeypatch, module):
    from cryptobench.targets.mcu.sim.binding import load_library
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtra) as exc:
        load_library()
    _one_line(str(exc.value), "sim", module)
    assert str(exc.value).startswith("the simulator (--target sim:CORE) needs")


def test_the_report_without_matplotlib_names_the_figures_extra(monkeypatch, tmp_path):
    from cryptobench.report.build import build_report
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtra) as exc:
        build_report([], tmp_path / "r")
    _one_line(str(exc.value), "figures", "matplotlib")
    assert not (tmp_path / "r").exists()            # stopped before writing anything


@pytest.mark.parametrize("module", ["pyarrow", "pyarrow.parquet"])
def test_parquet_export_without_pyarrow_names_the_parquet_extra(monkeypatch, module):
    from cryptobench.report.export_write import render_parquet
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtra) as exc:
        render_parquet([("x", "int64")], [{"x": 1}], {})
    _one_line(str(exc.value), "parquet", module)


def test_the_export_command_says_so_before_reading_any_run(monkeypatch, tmp_path, capsys):
    from cryptobench.cli import main
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    db = tmp_path / "none.sqlite"
    assert main(["export", "1", "--format", "parquet", "--out", str(tmp_path / "o.parquet"), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cryptobench: error: export --format parquet needs")
    _one_line(err.rstrip("\n"), "parquet", "pyarrow")
    assert not db.exists() and not (tmp_path / "o.parquet").exists()


def test_the_n6705_without_pyvisa_names_the_lab_extra(monkeypatch):
    from cryptobench.targets.trace.live_n6705 import N6705, InstrumentError
    monkeypatch.setitem(sys.modules, "pyvisa", None)
    with pytest.raises(InstrumentError) as exc:
        N6705("TCPIP0::192.0.2.1::inst0::INSTR").open()
    _one_line(str(exc.value), "lab", "pyvisa")


def test_jls_traces_without_pyjls_name_the_lab_extra(monkeypatch, tmp_path):
    from cryptobench.targets.trace.formats import open_trace
    from cryptobench.targets.trace.synth import PulsePlan, write_jls
    from cryptobench.targets.trace.trace import TraceError
    trace = tmp_path / "t.jls"
    trace.write_bytes(b"\0" * 64)
    monkeypatch.setitem(sys.modules, "pyjls", None)
    with pytest.raises(TraceError) as exc:
        open_trace(trace, "jls")
    assert str(exc.value).startswith(f"{trace}: reading Joulescope JLS files needs")
    _one_line(str(exc.value), "lab", "pyjls")
    with pytest.raises(MissingExtra) as exc:
        write_jls(tmp_path / "w.jls", PulsePlan())
    _one_line(str(exc.value), "lab", "pyjls")
    assert not (tmp_path / "w.jls").exists()


def test_a_board_without_pyserial_names_the_serial_extra(monkeypatch, tmp_path):
    from cryptobench.targets.mcu.board_link import run_on_board
    monkeypatch.setitem(sys.modules, "serial", None)
    with pytest.raises(MissingExtra) as exc:
        run_on_board(tmp_path / "image.elf", None, "/dev/null", flash=False)
    _one_line(str(exc.value), "serial", "serial")


def test_a_broken_install_is_not_reported_as_a_missing_extra(monkeypatch, tmp_path):
    """Only the module asked for (or its package) being absent is a missing extra; a module that is
    there but fails on an import of its own shows that failure."""
    (tmp_path / "cb_half_installed.py").write_text("import cb_dependency_that_is_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as exc:
        require("cb_half_installed", "sim", "a test")
    assert not isinstance(exc.value, MissingExtra) and exc.value.name == "cb_dependency_that_is_not_there"


def test_the_optional_modules_are_extras_and_setup_installs_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    for pkg in ("unicorn", "capstone", "pyelftools", "pyvisa", "pyjls", "pyserial", "pyarrow", "matplotlib"):
        assert pkg not in core, f"{pkg} is optional: it belongs in an extra"
    extras = project["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert extras["all"] == [f"cryptobench[{','.join(EXTRAS)}]"]
    assert "pip install -q -e '.[all,test]'" in (ROOT / "setup.sh").read_text()

"""A microcontroller run's target: one record per transport (core/target_specs.py), each checked
where it is made, stored in the one flat form every version wrote; what planning resolved (the
device profile, the recipes) is carried typed to the target and never resolved again."""
import dataclasses
import json
import subprocess
import sys
from collections import Counter

import pytest

from test_sim import needs_sim
from cryptobench.core.errors import UsageError
from cryptobench.core.records import Conditions, Plan
from cryptobench.core.target_specs import (BoardSpec, LabSpec, McuTargetSpec, QemuSpec, SimSpec, TargetSpecError,
                                           TargetView, target_class)

# the stored form of each kind as a plan writes it: every key, another transport's at its stored
# default, in this order (runs in stores and documents hold exactly this)
QEMU = {"kind": "qemu", "board": "mps2-an386", "cpu": "m4", "opt": "Os", "libraries": ["mbedtls"], "core": None,
        "device": None, "library_source": None, "port": None, "baud": 115200, "no_flash": False, "timeout_s": 300.0,
        "silence_s": 30.0}
SIM = {"kind": "sim", "board": "nucleo-f030r8", "cpu": "m0", "opt": "Os", "libraries": ["mbedtls"],
       "core": "cortex-m0", "device": "stm32f030", "device_options": {"clock": "8MHz"}, "library_source": None,
       "port": None, "baud": 115200, "no_flash": False, "timeout_s": 300.0, "silence_s": 30.0, "profile": True}
LAB = {"kind": "labgrid", "board": "mps2-an386", "cpu": "m4", "opt": "Os", "libraries": ["mbedtls"], "core": None,
       "device": None, "library_source": None, "port": None, "baud": 115200, "no_flash": True, "timeout_s": 300.0,
       "silence_s": 30.0, "places": ["a", "b"], "coordinator": "c:20408", "emulated": True, "lease_s": 30.0}


def _own(d: dict, spec) -> dict:
    return {k: v for k, v in d.items() if k != "kind" and spec.stores(k)}


@pytest.mark.parametrize("stored, spec", [(QEMU, QemuSpec), (SIM, SimSpec), (LAB, LabSpec)])
def test_a_record_built_in_code_writes_the_stored_form_key_for_key(stored, spec):
    built = spec(**_own(stored, spec))
    assert json.dumps(built.to_json()) == json.dumps(stored)
    read = McuTargetSpec.from_json(stored)
    assert type(read) is spec and json.dumps(read.to_json()) == json.dumps(stored)


def test_a_stored_target_is_written_back_as_it_was_read():
    # an older run's order, another transport's keys (a qemu run given --port stored it) and a newer
    # version's key: all kept, in their order
    d = {"libraries": [], "board": "mps2-an386", "zz_newer": [1], "port": "/dev/ttyACM0", "baud": 9600, "kind": "qemu"}
    read = McuTargetSpec.from_json(d)
    assert type(read) is QemuSpec and json.dumps(read.to_json()) == json.dumps(d)
    assert json.dumps(Plan.from_json({"target": d}).to_json()["target"]) == json.dumps(d)
    assert McuTargetSpec.from_json({"board": "x"}).to_json() == {"board": "x"}   # the first versions: no kind, qemu
    lab = McuTargetSpec.from_json({"kind": "labgrid", "places": ["a"], "board": "b"})
    assert dataclasses.replace(lab, place="a").to_json() == {"kind": "labgrid", "places": ["a"], "board": "b",
                                                             "place": "a"}     # a changed field comes after


@pytest.mark.parametrize("d, want", [
    ({"kind": "x\x1b"}, "target kind: expected one of qemu, board, sim, labgrid, got 'x\\x1b'"),
    ({"kind": "qemu", "board": 3}, "target board: expected a board name, got 3"),
    ({"kind": "qemu", "libraries": "mbedtls"}, "target libraries: expected a list of recipe names"),
    ({"kind": "board", "timeout_s": 0}, "target timeout_s: expected seconds > 0, got 0"),
    ({"kind": "board", "baud": "fast"}, "target baud: expected a baud rate > 0, got 'fast'"),
    ({"kind": "qemu", "profile": True}, "target profile: expected true on a sim target (or no key), got True on a "
                                        "qemu target"),
    ({"kind": "sim", "board": "b"}, "target core: expected the simulated core (sim:CORE), got None"),
    ({"kind": "sim", "core": "cortex-m0", "device_options": {"clock": 8}}, "target device_options: expected key=value"),
    ({"kind": "sim", "core": "cortex-m0", "profile": False}, "target profile: expected true on a sim target"),
    ({"kind": "labgrid", "board": "b"}, "target places: a labgrid target names at least one place"),
    ({"kind": "labgrid", "places": ["a"], "lease_s": -1}, "target lease_s: expected seconds > 0, got -1"),
])
def test_a_target_that_is_not_one_is_one_line_naming_the_field(d, want):
    with pytest.raises(TargetSpecError) as err:
        McuTargetSpec.from_json(d)
    assert str(err.value).startswith(want) and "\n" not in str(err.value)


def test_what_each_kind_means_is_its_records():
    qemu, sim = QemuSpec(board="q"), SimSpec(board="b", core="cortex-m0", device="stm32f030",
                                             device_options={"clock": "8MHz"})
    board = BoardSpec(board="n", port="/dev/ttyACM0")
    lab = LabSpec(board="q", places=["a", "b"], emulated=True)
    assert [s.watchdog_s for s in (qemu, board, sim, lab)] == [300.0, 300.0, 600.0, 300.0]
    assert SimSpec(board="b", core="cortex-m0", timeout_s=5).watchdog_s == 5
    assert [s.functional_only for s in (qemu, board, sim, lab)] == [True, False, False, True]
    assert not dataclasses.replace(lab, emulated=False).functional_only
    assert [s.label for s in (qemu, board, sim, lab, dataclasses.replace(lab, place="b"))] == [
        "qemu:q", "board:n", "sim:cortex-m0:stm32f030:clock=8MHz", "labgrid:a,b", "labgrid:b"]
    assert BoardSpec.stores("port") and not QemuSpec.stores("port") and LabSpec.stores("no_flash")
    with pytest.raises(TypeError):
        QemuSpec(board="q", port="/dev/ttyACM0")          # a QEMU machine has no serial port
    with pytest.raises(TargetSpecError, match="target recipes: expected one loaded recipe per library"):
        QemuSpec(board="q", libraries=["a", "b"], recipes=(object(),))


def test_the_stored_conditions_say_what_kind_of_target_ran():
    kinds = {k: Conditions({"target": {"kind": k}}).target for k in ("qemu", "board", "sim", "labgrid", "x")}
    assert isinstance(kinds["sim"], TargetView)
    assert [t.simulated for t in kinds.values()] == [False, False, True, False, False]
    assert [t.qemu for t in kinds.values()] == [True, False, False, False, False]
    assert [t.counts_core_cycles for t in kinds.values()] == [False, True, True, False, False]
    assert [t.on_places for t in kinds.values()] == [False, False, False, True, False]
    assert not Conditions({}).target and not Conditions({}).target.simulated
    assert TargetView({"device_options": {"clock": "8MHz", "ws": "1"}}).device_options_text == "clock=8MHz,ws=1"


def test_target_text_names_its_record_or_the_forms():
    assert target_class("sim:cortex-m0") == (SimSpec, "cortex-m0")
    assert target_class("labgrid:a,b") == (LabSpec, "a,b")
    for bad in ("sim", "qemu:", "x:y", "host"):
        with pytest.raises(UsageError, match=r"^--target: expected host, qemu:BOARD, board:NAME, sim:CORE or "
                                             rf"labgrid:PLACE; got '{bad}'$"):
            target_class(bad)


# --- planning -------------------------------------------------------------------------------------
def _nowhere(spec):
    raise AssertionError("the coordinator is asked only once every option holds")


@pytest.mark.parametrize("target, given, want", [
    ("qemu:mps2-an386", {"port": "/dev/ttyACM0"}, "--port: applies to board:NAME targets only"),
    ("labgrid:a", {"port": "/dev/ttyACM0"}, "--port: applies to board:NAME targets only"),
    ("sim:cortex-m0", {"no_flash": True}, "--no-flash: applies to board:NAME and labgrid:PLACE targets only"),
    ("sim:cortex-m0", {"baud": 9600}, "--baud: applies to board:NAME targets only"),
    ("qemu:mps2-an386", {"device": "stm32f030"}, "--device: applies to sim:CORE targets only"),
    ("qemu:mps2-an386", {"profile": True}, "--profile: applies to sim:CORE targets only"),
    ("board:nucleo-f030r8", {"port": "/dev/x", "lease_timeout": 5.0}, "--lease-timeout: applies to labgrid:PLACE"),
    ("labgrid:a", {"lease_timeout": 0}, "--lease-timeout: must be > 0 seconds, got 0"),
])
def test_an_option_of_another_kind_of_target_is_one_line(target, given, want):
    from cryptobench.runner.mcu_plan import McuOptions, build_mcu_plan
    with pytest.raises(UsageError) as err:
        build_mcu_plan(McuOptions(target=target, ops=("sha256",), **given), find_places=_nowhere)
    text = str(err.value)
    assert text.startswith(want) and "\n" not in text
    assert "applies" not in want or text.endswith(f"; got --target {target}")


def _sim_plan(**more):
    from cryptobench.runner.mcu_plan import McuOptions, build_mcu_plan
    return build_mcu_plan(McuOptions(target="sim:cortex-m0", device="stm32f030:clock=8MHz", ops=("sha256",),
                                     engines=("mbedtls",), **more))


@pytest.mark.subprocess          # planning asks arm-none-eabi-gcc for its version
@needs_sim
def test_the_plan_carries_the_device_and_recipes_it_resolved(monkeypatch):
    from cryptobench.runner import mcu_plan
    from cryptobench.targets.mcu.firmware.recipes import Recipe, builtin_recipes, load_recipe
    plan = _sim_plan()
    t = plan.target
    assert type(t) is SimSpec and t.device == "stm32f030" and t.device_options == {"clock": "8MHz"}
    assert t.resolved_device.name == "stm32f030" and t.resolved_device.clock_hz == 8_000_000
    assert [type(r) for r in t.recipes] == [Recipe] and [r.name for r in t.recipes] == t.libraries == ["mbedtls"]
    assert "resolved_device" not in t.to_json() and "recipes" not in t.to_json()
    # each recipe is read once while planning, the default set's too
    loads = Counter()

    def counted(name):
        loads[name] += 1
        return load_recipe(name)
    monkeypatch.setattr(mcu_plan, "load_recipe", counted)
    qemu = mcu_plan.build_mcu_plan(mcu_plan.McuOptions(target="qemu:mps2-an386", ops=("sha256",)))
    assert set(loads) == set(builtin_recipes()) and set(loads.values()) == {1}
    assert [r.name for r in qemu.target.recipes] == qemu.target.libraries


@needs_sim
def test_planning_a_sim_run_leaves_the_simulators_library_unloaded():
    """Planning checks the device offline; the simulator's shared library is loaded by the first
    image (seen in the process's own memory map; loading it after shows that the check sees it)."""
    script = ("import json\n"
              "from cryptobench.runner.mcu_plan import McuOptions, build_mcu_plan\n"
              "from cryptobench.targets.mcu.sim.binding import library_path, load_library\n"
              "def mapped(): return str(library_path().resolve()) in open('/proc/self/maps').read()\n"
              "build_mcu_plan(McuOptions(target='sim:cortex-m0', device='stm32f030', ops=('sha256',), "
              "engines=('mbedtls',), profile=True))\n"
              "planned = mapped()\n"
              "load_library()\n"
              "print(json.dumps([planned, mapped()]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [False, True]


@pytest.mark.subprocess          # planning asks arm-none-eabi-gcc for its version
@needs_sim
def test_the_target_runs_the_planned_device_and_a_stored_plan_resolves_its_own_once(monkeypatch):
    from cryptobench.targets.mcu import target as mcu_target
    from cryptobench.targets.mcu.sim import devices
    plan = _sim_plan()
    assert mcu_target.McuTarget(plan).transport.spec.resolved_device is plan.target.resolved_device
    stored = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert stored.target.resolved_device is None and stored.target.recipes == ()

    def no_text(spec):
        raise AssertionError(f"the stored device was parsed again from '{spec}'")
    monkeypatch.setattr(devices, "split_spec", no_text)
    dev = mcu_target.McuTarget(stored).transport.spec.resolved_device
    assert (dev.name, dev.options, dev.clock_hz) == ("stm32f030", {"clock": "8MHz"}, 8_000_000)


@pytest.mark.subprocess          # planning asks arm-none-eabi-gcc for its version
@needs_sim
def test_the_target_builds_the_planned_recipes_and_loads_a_stored_plans_by_name(monkeypatch):
    from cryptobench.targets.mcu import target as mcu_target
    from cryptobench.targets.mcu.firmware.recipes import load_recipe
    built, loads = [], []

    class Builder:
        def __init__(self, recipe, *args, **kwargs):
            built.append(recipe)

        def conditions(self):
            return {}
    monkeypatch.setattr(mcu_target, "FirmwareBuilder", Builder)
    monkeypatch.setattr(mcu_target, "resolve", lambda recipe, source: recipe)
    monkeypatch.setattr(mcu_target.McuTarget, "conditions", lambda self, builds: builds)
    monkeypatch.setattr(mcu_target, "load_recipe", lambda name: loads.append(name) or load_recipe(name))
    plan = _sim_plan()
    mcu_target.McuTarget(plan).open()
    assert loads == [] and [r.name for r in built] == ["mbedtls"]
    assert built[0] is not plan.target.recipes[0]        # resolved on a copy: the plan's stays as loaded
    mcu_target.McuTarget(Plan.from_json(plan.to_json())).open()
    assert loads == ["mbedtls"]

"""A microcontroller run's Plan from the command line's options (cli/run.py reads them into
McuOptions): the suite's cells, one engine per library recipe, and the target's record
(core/target_specs.py), with what planning resolved carried in it typed: the recipes loaded once,
a sim target's device profile resolved once. Planning checks everything offline; it starts nothing
(no simulator, no board) and asks a labgrid coordinator only once every option holds."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from ..catalog.ops import get_op
from ..core.errors import UsageError
from ..core.records import Params, Plan
from ..core.target_specs import DEFAULT_BAUD, BoardSpec, McuTargetSpec, QemuSpec, SimSpec, forms_storing, target_class
from ..targets.host.engines import ENGINES
from ..targets.mcu.boards import BOARDS, Board, check_cpu, check_opt, get_board
from ..targets.mcu.firmware.build import toolchain
from ..targets.mcu.firmware.library_ref import resolve_ref
from ..targets.mcu.firmware.recipes import Recipe, builtin_recipes, load_recipe
from ..targets.mcu.firmware.seeded import DEFAULT_SEED as MCU_DEFAULT_SEED
from ..targets.mcu.lab.leases import DEFAULT_LEASE_S
from ..targets.mcu.lab.places import BOARD_TAG, Lab
from ..targets.mcu import sim
from .plan import build_plan, pick_baseline
from .suites import load_suite


@dataclasses.dataclass(frozen=True)
class McuOptions:
    """What the command line asks of a microcontroller run (cli/run.py reads it from argparse)."""
    target: str                          # qemu:BOARD, board:NAME, sim:CORE, labgrid:PLACE[,PLACE…|PATTERN]
    device: str | None = None
    cpu: str | None = None
    opt: str | None = None
    recipes: tuple[str, ...] = ()        # --recipe FILE
    engines: tuple[str, ...] = ()        # --engine: built-in recipe names
    library_source: str | None = None
    library_cc: str | None = None
    port: str | None = None
    baud: int = DEFAULT_BAUD
    no_flash: bool = False
    lease_timeout: float | None = None
    timeout: float = 300.0
    ops: tuple[str, ...] = ()
    suite: str | None = None
    params: dict = dataclasses.field(default_factory=dict)   # --param, split (cli.common.split_params)
    repeat: int | None = None
    baseline: str | None = None
    seed: int | None = None              # --seed: the firmware's inputs (targets/mcu/firmware/seeded.py)
    profile: bool = False                # --profile: each sim cell's per-function profile


@dataclasses.dataclass(frozen=True)
class LabPlaces:
    """The labgrid places a labgrid:SPEC names, as the coordinator describes them."""
    names: list[str]
    coordinator: str
    board: str                           # their `board` tag (one kind per run)
    emulated: bool                       # their boards are QEMU machines


@dataclasses.dataclass(frozen=True)
class Where:
    """Where the image runs, checked: the board it is linked for, the core it is built for, the
    simulator's device profile (None but on sim:CORE), and the kind's own fields of its record."""
    board: Board
    cpu: str
    device: sim.Device | None = None
    fields: dict = dataclasses.field(default_factory=dict)


def build_mcu_plan(o: McuOptions, find_places: Callable[[str], LabPlaces] | None = None) -> Plan:
    """The one boundary where a microcontroller run's options become its plan: every option is
    checked offline first; a labgrid target's places are looked up (`find_places`, default
    lab_places: the coordinator) only once they all hold, and only for the board they carry."""
    spec, name = target_class(o.target)
    _check_options(o, spec)
    opt = check_opt(o.opt)
    offline = OFFLINE.get(spec)          # None: labgrid, whose board only the coordinator knows
    where = offline(o, name) if offline else None
    libs = _mcu_libraries(o, where.device if where else None)
    at = resolve_ref(o.library_source) if o.library_source else None    # DIR@REF: resolved once, here
    plan = _mcu_groups(o, [recipe.name for _, recipe in libs])
    if where is None:                    # every option holds: now the coordinator, for the places' board
        where = _on_places(o, name, find_places or lab_places)
    plan.target = spec(
        board=where.board.name, cpu=where.cpu, opt=opt, libraries=[lib for lib, _ in libs],
        recipes=tuple(recipe for _, recipe in libs),
        library_source=at.repo if at else str(Path(o.library_source).resolve()) if o.library_source else None,
        library_ref=at.ref if at else None, library_commit=at.commit if at else None,
        library_cc=o.library_cc or None, timeout_s=o.timeout, silence_s=min(30.0, o.timeout), **where.fields)
    return plan


def _check_options(o: McuOptions, spec: type[McuTargetSpec]) -> None:
    """--timeout, and the options that only some kinds of target take (their records' fields):
    given for another kind, one line naming the kinds that take it."""
    if o.timeout <= 0:
        raise UsageError(f"--timeout: must be > 0 seconds, got {o.timeout}")
    if o.lease_timeout is not None and o.lease_timeout <= 0:
        raise UsageError(f"--lease-timeout: must be > 0 seconds, got {o.lease_timeout}")
    for flag, field, given in (("--device", "device", o.device is not None), ("--profile", "profile", o.profile),
                               ("--port", "port", o.port is not None), ("--baud", "baud", o.baud != DEFAULT_BAUD),
                               ("--no-flash", "no_flash", o.no_flash),
                               ("--lease-timeout", "lease_s", o.lease_timeout is not None)):
        if given and not spec.stores(field):
            why = {"port": " (a board's serial port; a labgrid place's comes from the place)",
                   "profile": " (the simulator sees every instruction)"}.get(field, "")
            raise UsageError(f"{flag}: applies to {forms_storing(field)} targets only{why}; got --target {o.target}")


def _on_qemu(o: McuOptions, name: str) -> Where:
    board = get_board(name, emulated=True)
    return Where(board, check_cpu(board, o.cpu))


def _on_board(o: McuOptions, name: str) -> Where:
    board = get_board(name, emulated=False)
    cpu = check_cpu(board, o.cpu)
    if not o.port:
        raise UsageError(f"--target {o.target} needs --port (the board's serial port)")
    return Where(board, cpu, fields={"port": o.port, "baud": o.baud, "no_flash": o.no_flash})


def _on_sim(o: McuOptions, name: str) -> Where:
    """The simulated core's device profile, resolved once here (the record carries it), and the
    board its image is linked for. The simulator itself is not started: the first image does."""
    device = sim.get_device(o.device, name)
    board = BOARDS[device.board]
    cpu = sim.CORE_CPU[name]
    if o.cpu and o.cpu != cpu:
        # the simulated core runs its own code and its FPU variant's (m4f on sim:cortex-m4) where
        # the device's board lists that build
        if not (o.cpu.rstrip("f") == cpu and o.cpu in board.cpus):
            raise UsageError(f"--cpu {o.cpu}: the target sim:{name} simulates a {cpu}; valid here: "
                             + ", ".join(c for c in board.cpus if c.rstrip("f") == cpu))
        cpu = o.cpu
    return Where(board, cpu, device, fields={
        "core": name, "device": device.name, "device_options": device.options or None,
        "profile": True if o.profile else None, "resolved_device": device})


def _on_places(o: McuOptions, name: str, find_places: Callable[[str], LabPlaces]) -> Where:
    lab = find_places(name)
    board = get_board(lab.board, emulated=lab.emulated)
    return Where(board, check_cpu(board, o.cpu), fields={
        "no_flash": o.no_flash, "places": lab.names, "coordinator": lab.coordinator, "emulated": lab.emulated,
        "lease_s": o.lease_timeout or DEFAULT_LEASE_S})


# the kinds whose board, core and device the options alone give (labgrid's: the coordinator's tags)
OFFLINE: dict[type[McuTargetSpec], Callable[[McuOptions, str], Where]] = {
    QemuSpec: _on_qemu, BoardSpec: _on_board, SimSpec: _on_sim}


def _mcu_libraries(o: McuOptions, device: sim.Device | None = None) -> list[tuple[str, Recipe]]:
    """The run's library recipes, each as given (a --recipe file, an --engine name) and loaded
    once: --recipe files, then --engine names; default: every built-in whose peripherals the
    target has (a driver recipe's `requires`, the simulator device's `peripheral_models`). An
    --engine whose peripherals the target lacks is refused in one line."""
    if o.library_source and not o.recipes:
        raise UsageError("--library-source needs --recipe FILE (the recipe that says what to build from it)")
    toolchain()
    if o.library_cc:
        toolchain(o.library_cc)
    libs = [(path, load_recipe(path)) for path in o.recipes]
    have = {m["kind"] for m in device.peripheral_models} if device is not None else set()
    if o.engines:
        valid = builtin_recipes()
        for e in o.engines:
            if e not in valid:
                raise UsageError(f"--engine: no library recipe '{e}' for microcontroller targets; valid: {', '.join(valid)}")
            recipe = load_recipe(e)
            missing = [k for k in recipe.requires if k not in have]
            if missing:
                where = f"--device {device.name}" if device is not None else f"--target {o.target}"
                raise UsageError(f"--engine {e}: drives {', '.join(missing)}, which {where} does not have; on the "
                                 "simulator pick a device that models it (cryptobench list targets: 'peripherals "
                                 "modelled')")
            libs.append((e, recipe))
    if libs:
        return libs
    builtins = [(name, load_recipe(name)) for name in builtin_recipes()]
    return [(name, recipe) for name, recipe in builtins if set(recipe.requires) <= have]


def _mcu_groups(o: McuOptions, names: list[str]) -> Plan:
    """The suite's (or --op's) cells, one engine per library recipe, and the baseline library."""
    ops = [get_op(x).id for x in o.ops] if o.ops else None
    suite = load_suite(o.suite or "default") if (o.suite or not ops) else None
    plan = build_plan(suite, ops=ops, param_overrides=o.params, repeat=o.repeat)
    # the suite's benches that set rekey themselves (a study that keyed once, before its timing loop)
    keyed_by_suite = {b.op for b in suite.benches if "rekey" in b.given} if suite else set()
    for g in plan.groups:
        g.engines = names
        if (get_op(g.op).param("rekey") is not None and "rekey" not in o.params
                and g.op not in keyed_by_suite):
            # firmware operations include the key schedule unless --param rekey=0 (or the suite) asks
            # for one kept per cell
            g.params = Params(g.params, rekey=1)
    plan.options.engines = names
    plan.options.seed = MCU_DEFAULT_SEED if o.seed is None else o.seed   # stored: a rerun measures the same inputs
    if o.baseline and o.baseline not in names:
        raise UsageError(f"--baseline: '{o.baseline}' is not one of this run's libraries: {', '.join(names)}")
    engine = ENGINES.get(suite.baseline) if suite and suite.baseline else None   # the suite's host baseline's library
    plan.baseline, plan.baseline_from = pick_baseline(names, o.baseline, engine.harness_engine if engine else None)
    return plan


def lab_places(spec: str) -> LabPlaces:
    """The labgrid places `spec` names and their one board (their `board` tag), from the coordinator."""
    lab = Lab()
    try:
        names = lab.resolve(spec)
        infos = [lab.info(n) for n in names]
    finally:
        lab.close()
    untagged = [i.name for i in infos if not i.board]
    if untagged:
        raise UsageError(f"labgrid place {untagged[0]} has no '{BOARD_TAG}' tag naming its board; set it with "
                         f"`labgrid-client -p {untagged[0]} set-tags {BOARD_TAG}=NAME` (NAME from `cryptobench list "
                         "boards`)")
    kinds = {(i.board, i.emulated) for i in infos}
    if len(kinds) > 1:
        shown = ", ".join(f"{i.name} ({i.board}{', QEMU' if i.emulated else ''})" for i in infos)
        raise UsageError(f"--target labgrid:{spec}: one run measures boards of one kind; these places differ: {shown}")
    board, emulated = kinds.pop()
    return LabPlaces(names, lab.address, board, emulated)

"""A Plan from a suite and the command line's options: the comparison groups (op, params, the
engines that take part) and the options every target reads (repeat, warm-up, min-time, the host
sampler's budget, precision and processes)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..catalog.ops import get_op, resolve_params
from ..targets.host.engines import DEFAULT_ENGINES, ENGINES
from ..core.errors import UsageError
from ..core.records import Group, McuTargetSpec, Options, Params, Plan
from ..stats.sampling import DEFAULT_BUDGET_S, DEFAULT_PRECISION, PER_VISIT, PROCESSES
from .suites import Suite, load_suite
from ..targets.mcu.boards import BOARDS, check_cpu, check_opt, get_board
from ..targets.mcu.firmware.build import toolchain
from ..targets.mcu.firmware.library_ref import resolve_ref
from ..targets.mcu.firmware.recipes import builtin_recipes, load_recipe
from ..targets.mcu.firmware.seeded import DEFAULT_SEED as MCU_DEFAULT_SEED
from ..targets.mcu.lab.leases import DEFAULT_LEASE_S
from ..targets.mcu.lab.places import BOARD_TAG, Lab
from ..targets.mcu.sim.devices import CORE_CPU, get_device


def build_plan(suite: Suite | None, *, engines: list[str] | None = None, ops: list[str] | None = None,
               param_overrides: dict[str, list] | None = None, repeat: int | None = None,
               min_time: float | None = None, warmup: int | None = None, baseline: str | None = None,
               single: bool = False, sampling: dict | None = None) -> Plan:
    """The list of comparison groups to run: each an (op, params) and the engines that take part.
    Every option is by name; None takes the suite's value, then the default. `sampling` (host runs):
    budget_s, precision (a fraction), processes, seed."""
    groups = _unique(_apply_overrides(_groups(suite, ops), param_overrides or {}))
    all_engines = engines or (suite.engines if suite and suite.engines else None) or list(DEFAULT_ENGINES)
    for g in groups:
        g.engines = [e for e in all_engines if g.bench_engines is None or e in g.bench_engines]
    chosen, chosen_from = pick_baseline(all_engines, baseline, suite.baseline if suite else None)
    return Plan(
        suite=suite.name if suite else None,
        title=suite.title if suite else "",
        source=suite.source if suite else "",
        baseline=chosen,
        baseline_from=chosen_from,
        relative=bool(suite.relative) if suite else False,
        layout=suite.layout if suite else None,
        options=_options(suite, all_engines, repeat, min_time, warmup, single, sampling or {}),
        groups=[g for g in groups if g.engines],
        skipped_groups=[f"{g.op} ({', '.join(g.bench_engines)} only)" for g in groups if not g.engines],
    )


# The engine an ad-hoc run's Improvement divides by when none is named: software first, as the
# studies compare (the portable builds are the closest to a microcontroller library), then the
# first engine given. Microcontroller recipes: Mbed TLS, the studies' software library.
DEFAULT_BASELINES = ("openssl-sw", "mbedtls-portable", "openssl-portable", "mbedtls")


def pick_baseline(engines: list[str], given: str | None, suite_baseline: str | None) -> tuple[str | None, str | None]:
    """The baseline of a run of `engines` and who chose it: the option, the suite (where the suite's
    engine takes part), else the default (module comment); none for a single engine."""
    if given:
        return given, "option"
    if suite_baseline and suite_baseline in engines:
        return suite_baseline, "suite"
    if len(engines) < 2:
        return (suite_baseline, "suite") if suite_baseline else (None, None)
    return next((e for e in DEFAULT_BASELINES if e in engines), engines[0]), "default"


def _groups(suite: Suite | None, ops: list[str] | None) -> list[Group]:
    """The suite's benches (those of `ops` only, when given), or each op with its defaults."""
    if suite is None:
        return [Group(op=op.id, params=resolve_params(op, {}, "--op")) for op in (get_op(op_id) for op_id in ops or [])]
    benches = suite.benches
    if ops:
        benches = [b for b in benches if b.op in ops]
        missing = [o for o in ops if o not in {b.op for b in suite.benches}]
        if missing:
            raise UsageError(f"--op: suite '{suite.name}' has no '{missing[0]}'; it has: "
                             + ", ".join(dict.fromkeys(b.op for b in suite.benches)))
    return [Group(op=b.op, params=dict(b.params), table=b.table, bench_engines=b.engines, repeat=b.repeat,
                  warmup=b.warmup, min_time=b.min_time, single=b.single) for b in benches]


def _unique(groups: list[Group]) -> list[Group]:
    """Without the duplicate groups that parameter overrides may create, in order."""
    seen, unique = set(), []
    for g in groups:
        if g.key not in seen:
            seen.add(g.key)
            unique.append(g)
    return unique


def _options(suite: Suite | None, engines: list[str], repeat: int | None, min_time: float | None,
             warmup: int | None, single: bool, sampling: dict) -> Options:
    """The plan's options: the command line's, else the suite's, else the defaults."""
    return Options(
        repeat=repeat if repeat is not None else (suite.repeat if suite else 20),
        warmup=warmup if warmup is not None else (suite.warmup if suite else 2),
        min_time=min_time if min_time is not None else (suite.min_time if suite else 0.001),
        budget_s=sampling.get("budget_s") or (suite.budget if suite and suite.budget else DEFAULT_BUDGET_S),
        precision=sampling.get("precision") or (suite.precision / 100 if suite and suite.precision
                                                 else DEFAULT_PRECISION),
        processes=sampling.get("processes") or PROCESSES,
        per_visit=PER_VISIT,
        seed=sampling.get("seed"),
        engines=engines,
        single=single,
        # the options given on the command line, which override each bench's own repeat or min_time
        overrides=[name for name, value in (("repeat", repeat), ("min_time", min_time)) if value is not None],
        # a fixed n: --repeat, or a suite that gives its study's n and no budget or precision
        fixed_samples=repeat is not None or bool(suite and suite.repeat_set and not suite.budget
                                                  and not suite.precision and not sampling.get("budget_s")
                                                  and not sampling.get("precision")),
    )


def _apply_overrides(groups: list[Group], overrides: dict[str, list]) -> list[Group]:
    out = []
    for g in groups:
        op = get_op(g.op)
        names = [n for n in overrides if op.param(n) is not None]
        if not names:
            out.append(g)
            continue
        combos = [{}]
        for n in names:
            combos = [{**c, n: v} for c in combos for v in overrides[n]]
        for c in combos:
            out.append(dataclasses.replace(g, params=resolve_params(op, {**g.params, **c}, "--param")))
    unknown = [n for n in overrides if not any(get_op(g.op).param(n) for g in groups)]
    if unknown:
        valid = sorted({p for g in groups for p in get_op(g.op).param_names})
        raise UsageError(f"--param: no selected operation has a parameter '{unknown[0]}'; valid: "
                         + ", ".join(valid))
    return out


# --- a microcontroller run's plan ---------------------------------------------------------------
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
    baud: int = 115200
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


def build_mcu_plan(o: McuOptions, find_places=None) -> Plan:
    """The one boundary where a microcontroller run's options become its plan: every option is
    checked offline first; a labgrid target's places are looked up (`find_places`, default
    lab_places: the coordinator) only once they all hold, and only for the board they carry."""
    kind, name = _mcu_kind(o)
    if kind != "labgrid":
        board, cpu, device = _mcu_board(o, kind, name, None)
    opt = check_opt(o.opt)
    if o.timeout <= 0:
        raise UsageError(f"--timeout: must be > 0 seconds, got {o.timeout}")
    if kind == "board" and not o.port:
        raise UsageError(f"--target {o.target} needs --port (the board's serial port)")
    if o.profile and kind != "sim":
        raise UsageError(f"--profile: applies to sim:CORE targets only (the simulator sees every instruction); "
                         f"got --target {o.target}")
    libs = _mcu_libraries(o, device if kind != "labgrid" else None)
    at = resolve_ref(o.library_source) if o.library_source else None    # DIR@REF: resolved once, here
    names = [load_recipe(l).name for l in libs]
    plan = _mcu_groups(o, names)
    lab = None
    if kind == "labgrid":                # every option holds: now the coordinator, for the places' board
        lab = (find_places or lab_places)(name)
        board, cpu, device = _mcu_board(o, kind, name, lab)
    plan.target = McuTargetSpec(
        kind=kind, board=board.name, cpu=cpu, opt=opt, libraries=libs, core=name if kind == "sim" else None,
        device=device.name if device else None, device_options=device.options if device and device.options else None,
        library_source=at.repo if at else str(Path(o.library_source).resolve()) if o.library_source else None,
        library_ref=at.ref if at else None, library_commit=at.commit if at else None,
        library_cc=o.library_cc or None, port=o.port, baud=o.baud, no_flash=o.no_flash, timeout_s=o.timeout,
        silence_s=min(30.0, o.timeout), profile=True if o.profile else None,
        **({"places": lab.names, "coordinator": lab.coordinator, "emulated": lab.emulated,
            "lease_s": o.lease_timeout or DEFAULT_LEASE_S} if lab else {}))
    return plan


def _mcu_kind(o: McuOptions) -> tuple[str, str]:
    """(kind, name) of --target, and --port, --lease-timeout and --device, which depend on it only."""
    kind, _, name = o.target.partition(":")
    labgrid = kind == "labgrid"
    if labgrid and o.port:
        raise UsageError("--port: a labgrid place's serial port comes from the place; leave --port out")
    if o.lease_timeout is not None and (not labgrid or o.lease_timeout <= 0):
        raise UsageError("--lease-timeout: applies to labgrid targets only, and must be > 0 seconds")
    if kind not in ("qemu", "board", "sim", "labgrid") or not name:
        raise UsageError(f"--target: expected host, qemu:BOARD, board:NAME, sim:CORE or labgrid:PLACE; "
                         f"got '{o.target}'")
    if kind != "sim" and o.device:
        raise UsageError("--device applies to sim:CORE targets only")
    return kind, name


def _mcu_libraries(o: McuOptions, device=None) -> list[str]:
    """The run's library recipes (--recipe files, then --engine names; default: every built-in
    whose peripherals the target has: a driver recipe's `requires`, the simulator device's
    `peripheral_models`). An --engine whose peripherals the target lacks is refused in one line."""
    if o.library_source and not o.recipes:
        raise UsageError("--library-source needs --recipe FILE (the recipe that says what to build from it)")
    toolchain()
    if o.library_cc:
        toolchain(o.library_cc)
    libs = list(o.recipes)
    have = {m["kind"] for m in device.peripheral_models} if device is not None else set()
    if o.engines:
        valid = builtin_recipes()
        for e in o.engines:
            if e not in valid:
                raise UsageError(f"--engine: no library recipe '{e}' for microcontroller targets; valid: {', '.join(valid)}")
            missing = [k for k in load_recipe(e).requires if k not in have]
            if missing:
                where = f"--device {device.name}" if device is not None else f"--target {o.target}"
                raise UsageError(f"--engine {e}: drives {', '.join(missing)}, which {where} does not have; on the "
                                 "simulator pick a device that models it (cryptobench list targets: 'peripherals "
                                 "modelled')")
        libs += o.engines
    return libs or [r for r in builtin_recipes() if set(load_recipe(r).requires) <= have]


def _mcu_groups(o: McuOptions, names: list[str]) -> Plan:
    """The suite's (or --op's) cells, one engine per library recipe, and the baseline library."""
    ops = [get_op(x).id for x in o.ops] if o.ops else None
    suite = load_suite(o.suite or "default") if (o.suite or not ops) else None
    plan = build_plan(suite, ops=ops, param_overrides=o.params, repeat=o.repeat)
    for g in plan.groups:
        g.engines = names
        if get_op(g.op).param("rekey") is not None and "rekey" not in o.params:
            # firmware operations include the key schedule unless --param rekey=0 asks for one kept per cell
            g.params = Params(g.params, rekey=1)
    plan.options.engines = names
    plan.options.seed = MCU_DEFAULT_SEED if o.seed is None else o.seed   # stored: a rerun measures the same inputs
    if o.baseline and o.baseline not in names:
        raise UsageError(f"--baseline: '{o.baseline}' is not one of this run's libraries: {', '.join(names)}")
    engine = ENGINES.get(suite.baseline) if suite and suite.baseline else None   # the suite's host baseline's library
    plan.baseline, plan.baseline_from = pick_baseline(names, o.baseline, engine.harness_engine if engine else None)
    return plan


def _mcu_board(o: McuOptions, kind: str, name: str, lab: LabPlaces | None):
    """(board, cpu, device) of the target, --cpu and --device, checked."""
    if kind == "labgrid":
        board = get_board(lab.board, "qemu" if lab.emulated else "board")
        return board, check_cpu(board, o.cpu), None
    if kind != "sim":
        board = get_board(name, kind)
        return board, check_cpu(board, o.cpu), None
    from ..targets.mcu.sim.binding import load_library
    device = get_device(o.device, name)
    board = BOARDS[device.board]
    cpu = CORE_CPU[name]
    if o.cpu and o.cpu != cpu:
        # the simulated core runs its own code and its FPU variant's (m4f on sim:cortex-m4) where
        # the device's board lists that build
        if not (o.cpu.rstrip("f") == cpu and o.cpu in board.cpus):
            raise UsageError(f"--cpu {o.cpu}: the target sim:{name} simulates a {cpu}; valid here: "
                             + ", ".join(c for c in board.cpus if c.rstrip("f") == cpu))
        cpu = o.cpu
    load_library()
    return board, cpu, device


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

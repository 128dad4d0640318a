"""`cryptobench run`: verify, time, store and print a suite or a set of operations, on the host
or a microcontroller target (qemu, a board, the simulator)."""
from __future__ import annotations

import argparse
import math
import textwrap
import sys
from pathlib import Path

from ..catalog.ops import get_op
from ..targets.host.engines import get_engine
from ..core.errors import UsageError
from ..targets.host.harness import HANDSHAKE_TIMEOUT, REPLY_TIMEOUT, build_harness, harness_path
from ..core.printable import printable
from ..core.records import FAILED, Plan
from ..core.target_specs import forms_storing, target_class_of
from ..store.database import Store
from ..runner.suites import MAX_BENCHES, Suite, available_suites, load_suite
from .commands import COMMANDS
from .common import add_db, add_format, add_output, add_param, checked_output, split_params, stderr_console, write_atomic
from .show import add_layout, render_run
from ..analysis.relative import run_engines
from ..core.envnumbers import check_all
from ..report import render_json
from ..runner.mcu_plan import McuOptions, build_mcu_plan
from ..runner.plan import build_plan
from ..runner.runner import Runner
from ..stats.sampling import CHECKPOINT, DEFAULT_BUDGET_S, DEFAULT_PRECISION
from ..store.backends import STORE_RETRY
from ..targets.select import target_for
from ..targets.host.parallel import expand_plan, parse_parallel
from ..targets.verify import load_vectors

NAME = "run"
HELP = COMMANDS[NAME].help
MAX_CELLS = 5_000         # cells a run may plan without --yes (the default suite plans about 200)
EXIT_SOME_FAILED = 1      # some cells failed (the others are stored and printed)
EXIT_NOTHING_MEASURED = 3  # not one cell could be measured (as when a harness cannot start at all)
EXIT_INTERRUPTED = 130    # Ctrl-C or SIGTERM: the finished cells are stored, --resume completes the run


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Options wrapped as usual; the epilog (the suites' values) printed as written."""


def _suite_values() -> str:
    """What each bundled suite sets, for --help: the values the defaults above refer to."""
    lines = ["the suites' values (--suite NAME; options above override them):"]
    for name in available_suites():
        s = load_suite(name)
        sampling = (f"budget {s.budget:g} s, precision ±{s.precision:g} %" if s.budget or s.precision
                    else f"exactly {s.repeat} samples" if s.repeat_set else f"at least {s.repeat} samples")
        lines.append(f"  {name}: baseline {s.baseline or 'none'}; {sampling}; warm-up {s.warmup}; "
                     f"min-time {s.min_time:g} s" + ("; single-shot" if s.single else ""))
    none = Suite("", Path())
    lines += textwrap.wrap("a run without --suite and --op runs 'default'; with --op and no --suite: the ops' default "
                           f"parameters, at least {none.repeat} samples, warm-up {none.warmup}, min-time "
                           f"{none.min_time:g} s, budget {DEFAULT_BUDGET_S:g} s, precision ±{DEFAULT_PRECISION * 100:g} %",
                           78)
    return "\n".join(lines)


DEVICE_HELP = ("device profile for sim:CORE targets (e.g. stm32f030, stm32f030:clock=8MHz|reset, ws=N, "
               "prefetch=on|off; default: ideal-…)")


def add_parser(sub) -> None:  # long: the option list, one declaration per option, in --help order
    run = sub.add_parser("run", help=HELP,
                         epilog=_suite_values(), formatter_class=_HelpFormatter)
    run.add_argument("--suite", help="suite name or path to a suite .toml (default: 'default')")
    run.add_argument("--vectors", action="append", metavar="PATH",
                     help="a folder of your own known-answer vectors (*.json, the format of "
                          "src/cryptobench/catalog/vectors/README.md), or one such file, checked against the catalog "
                          "and then run with the bundled ones (repeatable; docs/own-library.md)")
    run.add_argument("--engine", action="append", help="engine to run (repeatable; default: every usable host engine)")
    run.add_argument("--op", action="append", help="operation id (repeatable)")
    add_param(run)
    run.add_argument("--repeat", type=int, help="exactly this many samples per cell (fixed; default: adaptive, "
                                                "until --precision or --budget, with the suite's repeat, else 20, as the least n)")
    run.add_argument("--precision", metavar="PCT", help="host runs: sample until every cell's 95 %% repeat interval "
                     "is within ±PCT of its estimate (default: the suite's, else 1%%)")
    run.add_argument("--budget", metavar="SECONDS", type=float, help="host runs: the whole run takes at most about "
                     "this long; cells not within --precision by then say so (default: the suite's, else 60)")
    run.add_argument("--processes", type=int, metavar="N", help="host runs: harness processes per library engine, "
                     "taking turns by round (default 4; docs/statistics.md)")
    run.add_argument("--seed", type=int, help="host runs: seed of the shuffled order of each round (default: "
                     "random, recorded in the run); microcontroller runs: seed of each cell's ECC inputs and of "
                     "the firmware's random stream (default 1, recorded in the run and each cell)")
    run.add_argument("--warmup", type=int, help="warm-up samples per cell, discarded (default: the suite's, else 2)")
    run.add_argument("--min-time", type=float, help="seconds one sample (a batch of k operations) lasts at least "
                     "(default: the suite's, else 0.001)")
    run.add_argument("--single", action="store_true", help="k = 1: time every operation on its own (latency)")
    run.add_argument("--baseline", help="engine the others are compared with (Duration Improvement)")
    add_db(run)
    add_output(run, "--json", "also write the result document (docs/schema.md)")
    run.add_argument("--yes", action="store_true", help="run a plan even when it is very large (more than "
                     f"{MAX_CELLS:,} cells, or sweeps of more than {MAX_BENCHES:,} benches)")
    run.add_argument("--resume", metavar="RUN_ID", help="complete an interrupted run, and measure again the cells "
                     "that failed")
    add_format(run)
    add_layout(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--label", help="a name for this run, shown by show, report and diff (e.g. 'before patch')")
    run.add_argument("--parallel", metavar="N[,N…]",
                     help="scaling over cores (the Pisa paper): run every cell in N harness processes at once, each "
                          "pinned to its own CPU, e.g. 1,2,4; aggregate and per-core throughput, parallel "
                          "efficiency (host target; N above the CPU count is run and labelled oversubscribed)")
    run.add_argument("--relative-to", metavar="ENGINE",
                     help="after the tables, every engine's median time (and energy) / ENGINE's (the ZHAW IoT study's figure 2)")
    run.add_argument("--energy", choices=["rapl", "perf", "nvml", "auto"],
                     help="also measure energy per operation with a host meter: rapl (powercap sysfs), perf "
                          "(power/energy-* events), nvml (NVIDIA GPUs), auto (first usable); see docs/energy-meters.md")
    mcu = run.add_argument_group("microcontroller targets (--engine then names library recipes)")
    mcu.add_argument("--target", default="host",
                     help="host (default), qemu:BOARD (functional: no timings), board:NAME with --port, "
                          "sim:CORE (cycle-approximate simulator, with --device), or labgrid:PLACE[,PLACE…|PATTERN] "
                          "(boards in a labgrid lab, LG_COORDINATOR; docs/lab.md)")
    mcu.add_argument("--device", metavar="NAME[:k=v,…]", help=DEVICE_HELP)
    mcu.add_argument("--cpu", help="core to build for: m0, m0plus, m3, m4, m4f, m7, m33, m33f (default: the board's)")
    mcu.add_argument("--opt", help="optimisation level: O0, Os (default), O2, O3")
    mcu.add_argument("--recipe", action="append", metavar="FILE",
                     help="a library recipe .toml of your own (repeatable; default: every built-in recipe)")
    mcu.add_argument("--library-source", metavar="DIR[@REF]",
                     help="your own library tree for --recipe; DIR@REF: a git repository at a branch, tag or commit, "
                          "exported into the cache and its commit recorded (docs/own-library.md)")
    mcu.add_argument("--library-cc", metavar="GCC", help="another GCC-compatible cross compiler for the "
                     "libraries' own sources (the harness and glue keep arm-none-eabi-gcc); recorded in the conditions")
    mcu.add_argument("--profile", action="store_true",
                     help="sim:CORE targets: store each cell's per-function profile (cycles, instructions and "
                          "calls per ELF function of its median timed repetition; slower simulation)")
    mcu.add_argument("--port", help="serial port of a board: target (e.g. /dev/ttyACM0)")
    mcu.add_argument("--baud", type=int, default=115200, help="serial baud rate (default 115200)")
    mcu.add_argument("--no-flash", action="store_true", help="the board is already flashed with the image")
    mcu.add_argument("--lease-timeout", type=float, default=None, metavar="S",
                     help="labgrid targets: a place's worker that is silent this long loses its unit to another "
                          "place (default 60)")
    mcu.add_argument("--timeout", type=float, default=300.0,
                     help="watchdog per firmware image in seconds (default 300; silence for min(30, this) also ends it)")


def _mcu_plan(args) -> Plan:
    """The plan of a microcontroller run: the options as plan.build_mcu_plan takes them (argparse's
    namespace is only read)."""
    return build_mcu_plan(McuOptions(
        target=args.target, device=args.device, cpu=args.cpu, opt=args.opt, recipes=tuple(args.recipe or ()),
        engines=tuple(args.engine or ()), library_source=args.library_source, library_cc=args.library_cc,
        port=args.port, baud=args.baud, no_flash=args.no_flash, lease_timeout=args.lease_timeout,
        timeout=args.timeout, ops=tuple(args.op or ()), suite=args.suite, params=split_params(args.param),
        repeat=args.repeat, baseline=args.baseline, seed=args.seed, profile=args.profile))


def run(args, out) -> int:
    # a bad CRYPTOBENCH_*_S stops the run before any harness starts or anything is stored
    check_all(REPLY_TIMEOUT, HANDSHAKE_TIMEOUT, CHECKPOINT, STORE_RETRY)
    _check_combinations(args)
    checked_output(args, "--json")     # checked now: a run never ends in "cannot write" after its work
    if not args.resume and args.target != "host":
        plan = _sized(_labelled(_with_vectors(_mcu_plan(args), args), args.label), args)
        store = Store(args.db)          # opened once the plan stands: bad options create no database
        return _finish(store, _execute(store, plan, None, quiet=args.quiet), args, out)
    if args.resume:
        store = Store(args.db, create=False)      # the run to resume is in a store that exists
        run_id, plan = _resumed(store, args.resume)
    else:
        run_id, plan = None, _sized(_labelled(_with_vectors(_host_plan(args), args), args.label), args)
        store = Store(args.db)
    if args.relative_to and args.relative_to not in plan.options.engines:
        raise UsageError(f"--relative-to: '{args.relative_to}' is not one of this run's engines: "
                         + ", ".join(plan.options.engines))
    if not harness_path().exists():
        sys.stderr.write(f"building the host harness ({harness_path()}) …\n")
        build_harness()
    for note in plan.skipped_groups:
        sys.stderr.write(f"note: not planned for the selected engines: {note}\n")
    return _finish(store, _execute(store, plan, run_id, quiet=args.quiet), args, out)


def _check_combinations(args) -> None:
    """Options that exclude each other, refused before anything starts."""
    if args.energy and args.target != "host":
        raise UsageError("--energy measures host energy meters; it applies to --target host only")
    if args.energy and args.resume:
        raise UsageError("--energy with --resume: a resumed run keeps its own plan's energy setting")
    if args.parallel is not None and args.target != "host":
        raise UsageError("--parallel runs host harness processes; it applies to --target host only")
    if args.profile and args.resume:
        raise UsageError("--profile with --resume: a resumed run keeps its own plan's profile setting")
    spec = target_class_of(args.target)            # None: the host (or no kind: planning says so)
    if args.profile and not args.resume and not (spec and spec.stores("profile")):
        raise UsageError(f"--profile: applies to {forms_storing('profile')} targets only (the simulator sees every "
                         f"instruction); got --target {args.target}")
    if args.parallel is not None and args.resume:
        raise UsageError("--parallel with --resume: a resumed run keeps its own plan's process counts")
    if args.relative_to:
        get_engine(args.relative_to, "--relative-to")
    if args.resume:
        given = [flag for flag, value in (("--label", args.label), ("--op", args.op), ("--engine", args.engine),
                                          ("--suite", args.suite), ("--param", args.param), ("--repeat", args.repeat),
                                          ("--warmup", args.warmup), ("--min-time", args.min_time),
                                          ("--single", args.single), ("--baseline", args.baseline),
                                          ("--budget", args.budget), ("--precision", args.precision),
                                          ("--processes", args.processes), ("--seed", args.seed)) if value]
        if given:
            raise UsageError(f"{given[0]} with --resume: a resumed run keeps its own plan (operations, engines, "
                             "options and label); start a new run to change them")


def _labelled(plan: Plan, label: str | None) -> Plan:
    if label:
        plan.label = label
    return plan


def _resumed(store: Store, ref: str) -> tuple[int, Plan]:
    """The run --resume names and its stored plan; a complete run with no failed cell is refused."""
    run_id = store.resolve_run_id(ref)
    stored = store.load_run(run_id)
    if stored.status == "complete" and not any(c.status == FAILED for c in stored.cells):
        raise UsageError(f"run {run_id} is already complete, with no failed cell; nothing to resume")
    return run_id, stored.plan


def _sized(plan: Plan, args) -> Plan:
    """A plan larger than MAX_CELLS runs only with --yes: the user sees its size before it starts."""
    cells = sum(len(g.engines) for g in plan.groups)
    if cells > MAX_CELLS and not args.yes:
        raise UsageError(f"this run plans {cells:,} cells ({len(plan.groups):,} operations × parameters on "
                         f"{len(plan.options.engines)} engine(s)), more than {MAX_CELLS:,}; narrow it with --op, "
                         "--engine or --param, or give --yes to run it")
    return plan



def _with_vectors(plan: Plan, args) -> Plan:
    """--vectors PATH: the user's known-answer vectors, checked now (a UsageError naming the file,
    the line, the vector and the field) and named in the plan, so that a resumed run checks the
    same ones."""
    if args.vectors:
        dirs = [str(Path(d).resolve()) for d in args.vectors]
        load_vectors(extra=dirs)
        plan.options.extra["vectors"] = dirs
    return plan


def _host_plan(args) -> Plan:
    """A new host run's plan from the suite and the options, checked."""
    engines = [get_engine(e).name for e in args.engine] if args.engine else None
    ops = [get_op(o).id for o in args.op] if args.op else None
    suite = load_suite(args.suite or "default", None if args.yes else MAX_BENCHES) if (args.suite or not ops) else None
    if args.baseline:
        get_engine(args.baseline, "--baseline")
    for flag, value in (("--repeat", args.repeat), ("--warmup", args.warmup)):
        if value is not None and value < (1 if flag == "--repeat" else 0):
            raise UsageError(f"{flag}: must be {'>= 1' if flag == '--repeat' else '>= 0'}, got {value}")
    if args.min_time is not None and not (math.isfinite(args.min_time) and args.min_time >= 0):
        raise UsageError(f"--min-time: must be a finite number of seconds >= 0, got {args.min_time}")
    counts = None
    if args.parallel is not None:
        counts = parse_parallel(args.parallel)
    plan = build_plan(suite, engines=engines, ops=ops, param_overrides=split_params(args.param),
                      repeat=args.repeat, min_time=args.min_time, warmup=args.warmup, baseline=args.baseline,
                      single=args.single, sampling=_sampling_options(args))
    if counts:
        plan = expand_plan(plan, counts)
    if args.energy:
        plan.options.energy = args.energy
        plan.options.extra["energy_windows"] = 5
    if not plan.groups:
        raise UsageError("nothing to run: no selected operation applies to the selected engines")
    return plan


def _sampling_options(args) -> dict:
    """--budget, --precision, --processes, --seed, checked."""
    out = {}
    if args.budget is not None:
        if not (math.isfinite(args.budget) and args.budget > 0):
            raise UsageError(f"--budget: must be a finite number of seconds > 0, got {args.budget:g}")
        out["budget_s"] = float(args.budget)
    if args.precision is not None:
        text = str(args.precision).strip().removesuffix("%").strip()
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > 0 and value < 100):
            raise UsageError(f"--precision: expected a percentage between 0 and 100, like 1% or 0.5, "
                             f"got {args.precision!r}")
        out["precision"] = value / 100
    if args.processes is not None:
        if args.processes < 1:
            raise UsageError(f"--processes: must be >= 1, got {args.processes}")
        out["processes"] = args.processes
    if args.seed is not None:
        out["seed"] = args.seed
    return out


def _finish(store: Store, run_id: int, args, out) -> int:
    run = store.load_run(run_id)
    # the relative view after the tables: asked for, or the suite's own (relative = true: its baseline)
    relative_to = getattr(args, "relative_to", None) or (run.plan.baseline if run.plan.relative and run.plan.baseline
                                                         else None)
    if relative_to and relative_to not in run_engines(run):
        sys.stderr.write(f"note: no relative view: {relative_to} is not one of this run's engines\n")
        relative_to = None
    render_run(run, args.format, out, relative_to=relative_to, layout=args.layout)
    if args.json:
        write_atomic(Path(args.json), render_json(run, relative_to=relative_to) + "\n", "--json")
    sys.stderr.write(f"stored as run {run_id} in {printable(store.label)}\n")
    return exit_status(run)


def exit_status(run) -> int:
    """0: every cell measured (or unsupported by its engine, which is an answer too); 1: some
    failed (their reasons are in the table); 3: not one cell measured. README "Exit codes"."""
    failed = sum(c.status == FAILED for c in run.cells)
    if failed and not any(c.ok for c in run.cells):
        sys.stderr.write(f"nothing measured: all {failed} planned cell(s) failed; `cryptobench run --resume {run.id}` "
                         "tries them again\n")
        return EXIT_NOTHING_MEASURED
    if failed:
        sys.stderr.write(f"{failed} cell(s) failed (reasons in the table); `cryptobench run --resume {run.id}` "
                         "measures them again\n")
        return EXIT_SOME_FAILED
    return 0


def _execute(store: Store, plan: Plan, run_id: int | None, quiet: bool) -> int:
    console = stderr_console()
    progress, on_event = (_mcu_progress if plan.target else _host_progress_bar)(
        plan, console, not quiet and console.is_terminal)
    log = run_log(progress.console)
    runner = Runner(store, plan, target_for(plan, progress=on_event, log=log), log=log)
    try:
        with progress:
            return runner.run(run_id)
    except KeyboardInterrupt:
        rid = run_id or store.resolve_run_id("latest")
        sys.stderr.write(f"\ninterrupted: finished cells of run {rid} are stored (cells still sampling as partial); "
                         f"complete it with `cryptobench run --resume {rid}`\n")
        raise SystemExit(EXIT_INTERRUPTED)


def run_log(console):
    """The run's log lines (a target's notes, a lab worker's relayed lines, place names) on the
    progress bar's console: outside text, printed inert (printable) and never read as markup."""
    return lambda line: console.print(printable(line), markup=False, highlight=False, emoji=False)


def _mcu_progress(plan: Plan, console, show: bool):
    """A microcontroller run's bar: cells done of all, the operation being built and run."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    total = len(plan.groups) * len(plan.options.engines)
    progress = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, disable=not show)
    task = progress.add_task("starting", total=total)

    def on_group(group: dict, phase, n=1):          # McuTarget's progress: {"op", "params": {"library"}}
        label = group["op"] + " " + " ".join(f"{k}={v}" for k, v in group["params"].items())
        if phase == "start":
            progress.update(task, description=escape(printable(label, keep_newlines=False)[:48]))
        else:
            progress.advance(task, n)
    return progress, on_group


def _host_progress_bar(plan: Plan, console, show: bool):
    """A host run's bar: verification, then sampling with the time left (_host_progress)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    progress = Progress(TextColumn("{task.description:<44}"), BarColumn(), TextColumn("{task.fields[eta]}"),
                        TimeElapsedColumn(), console=console, disable=not show)
    task = progress.add_task("starting engines", total=1.0, eta="")
    return progress, lambda kind, payload: _host_progress(progress, task, kind, payload)


def _host_progress(progress, task, kind: str, payload) -> None:
    """A host run's progress line: verifying and setting up (cells done of all), then sampling
    (rounds, cells within the precision, and the time left until the budget or the last round)."""
    if kind == "prepare":
        done, total, label = payload
        progress.update(task, description=f"verify {done}/{total} {label}"[:44], completed=done / max(total, 1) * 0.1,
                        eta="")
        return
    p = payload
    frac = 0.1
    if p.eta_s is not None and p.elapsed_s + p.eta_s > 0:
        frac = 0.1 + 0.9 * p.elapsed_s / (p.elapsed_s + p.eta_s)
    within = f", {p.converged}/{p.cells} within target" if p.block_rounds and p.eta_is_bound else ""
    progress.update(task, description=f"sampling: round {p.rounds_done}{within}"[:44], completed=min(frac, 1.0),
                    eta=(f"ETA {'≤ ' if p.eta_is_bound else ''}{p.eta_s:.0f} s" if p.eta_s is not None else ""))

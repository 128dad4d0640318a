"""The `cryptobench` command line: list, run, show."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from . import __version__
from .catalog import OPS, get_op
from .engines import ENGINES, get_engine, probe_engines
from .errors import HarnessError, UsageError
from .harness import build_harness, harness_path
from .store import Store
from .suites import available_suites, load_suite


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line with exit code 2."""

    def error(self, message):
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="cryptobench", description="What a cryptographic operation costs, where it could run.")
    p.add_argument("--version", action="version", version=f"cryptobench {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=OneLineParser)

    ls = sub.add_parser("list", help="list suites, engines or operations")
    ls.add_argument("what", choices=["suites", "engines", "ops", "references"])

    run = sub.add_parser("run", help="verify, time, store and print a suite or a set of operations")
    run.add_argument("--suite", help="suite name or path to a suite .toml (default: 'default')")
    run.add_argument("--engine", action="append", help="engine to run (repeatable; default: every usable host engine)")
    run.add_argument("--op", action="append", help="operation id (repeatable)")
    run.add_argument("--param", action="append", default=[], metavar="KEY=VALUE[,VALUE…]",
                     help="set or sweep an operation parameter, e.g. bytes=64,8000,16000")
    run.add_argument("--repeat", type=int, help="exactly this many samples per cell (fixed; default: adaptive, "
                                                "until --precision or --budget, with the suite's repeat as the least n)")
    run.add_argument("--precision", metavar="PCT", help="host runs: sample until every cell's 95 %% repeat interval "
                     "is within ±PCT of its estimate (default: the suite's, else 1%%)")
    run.add_argument("--budget", metavar="SECONDS", type=float, help="host runs: the whole run takes at most about "
                     "this long; cells not within --precision by then say so (default: the suite's, else 60)")
    run.add_argument("--processes", type=int, metavar="N", help="host runs: harness processes per library engine, "
                     "taking turns by round (default 4; docs/statistics.md)")
    run.add_argument("--seed", type=int, help="host runs: seed of the shuffled order of each round (default: "
                     "random, recorded in the run)")
    run.add_argument("--warmup", type=int, help="warm-up samples per cell (discarded)")
    run.add_argument("--min-time", type=float, help="seconds one sample (a batch of k operations) lasts at least "
                     "(default 0.001)")
    run.add_argument("--single", action="store_true", help="k = 1: time every operation on its own (latency)")
    run.add_argument("--baseline", help="engine the others are compared with (Duration Improvement)")
    run.add_argument("--db", help="SQLite result database (default: $CRYPTOBENCH_DB or the user data dir)")
    run.add_argument("--json", metavar="FILE", help="also write the result document (docs/schema.md)")
    run.add_argument("--resume", metavar="RUN_ID", help="complete an interrupted run")
    run.add_argument("--format", choices=["table", "md", "csv", "json"], default="table")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--label", help="a name for this run, shown by show, report and diff (e.g. 'before patch')")
    run.add_argument("--parallel", metavar="N[,N…]",
                     help="scaling over cores (seed 004): run every cell in N harness processes at once, each "
                          "pinned to its own CPU, e.g. 1,2,4; aggregate and per-core throughput, parallel "
                          "efficiency (host target; N above the CPU count is run and labelled oversubscribed)")
    run.add_argument("--relative-to", metavar="ENGINE",
                     help="after the tables, every engine's median time (and energy) / ENGINE's (seed 003 fig. 2)")
    run.add_argument("--energy", choices=["rapl", "perf", "nvml", "auto"],
                     help="also measure energy per operation with a host meter: rapl (powercap sysfs), perf "
                          "(power/energy-* events), nvml (NVIDIA GPUs), auto (first usable); see docs/energy-meters.md")
    mcu = run.add_argument_group("microcontroller targets (--engine then names library recipes)")
    mcu.add_argument("--target", default="host",
                     help="host (default), qemu:BOARD (functional: no timings), board:NAME with --port, "
                          "or sim:CORE (cycle-approximate simulator, with --device)")
    mcu.add_argument("--device", help="device profile for sim:CORE targets (e.g. stm32f030, cc2652; default: ideal-…)")
    mcu.add_argument("--cpu", help="core to build for: m0, m0plus, m3, m4, m4f, m7 (default: the board's)")
    mcu.add_argument("--opt", help="optimisation level: O0, Os (default), O2, O3")
    mcu.add_argument("--recipe", action="append", metavar="FILE",
                     help="a library recipe .toml of your own (repeatable; default: every built-in recipe)")
    mcu.add_argument("--library-source", metavar="DIR", help="your own library tree for --recipe")
    mcu.add_argument("--port", help="serial port of a board: target (e.g. /dev/ttyACM0)")
    mcu.add_argument("--baud", type=int, default=115200, help="serial baud rate (default 115200)")
    mcu.add_argument("--no-flash", action="store_true", help="the board is already flashed with the image")
    mcu.add_argument("--timeout", type=float, default=300.0,
                     help="watchdog per firmware image in seconds (default 300; silence for min(30, this) also ends it)")

    from .energy.commands import add_energy_parser
    add_energy_parser(sub, OneLineParser)
    from .models_cli import add_model_parser
    add_model_parser(sub, OneLineParser)

    cmp_ = sub.add_parser("compare", help="a stored run beside a study's published results (references/)")
    cmp_.add_argument("run_id", metavar="RUN_ID|latest")
    cmp_.add_argument("--reference", required=True, help="a study: ti-cc26x2, nxp-imxrt, cifra-aead, zhaw-iot, "
                      "pisa-a53 (`cryptobench list references`), or a reference .toml")
    cmp_.add_argument("--against", metavar="SOURCE", help="the published source the ratios divide by "
                      "(default: the study's software library)")
    cmp_.add_argument("--format", choices=["table", "md", "csv", "json"], default="table")
    cmp_.add_argument("--db")

    from .diff import add_diff_parser
    add_diff_parser(sub)
    from .export import add_export_parser
    add_export_parser(sub)
    from .report.command import add_report_parser
    add_report_parser(sub)

    show = sub.add_parser("show", help="print a stored run")
    show.add_argument("run_id", metavar="RUN_ID|latest")
    show.add_argument("--format", choices=["table", "md", "csv", "json"], default="table")
    show.add_argument("--relative-to", metavar="ENGINE",
                      help="the relative view: every engine's median time (and energy) / ENGINE's, per op "
                           "(seed 003 figure 2); ENGINE must be one of the run's engines")
    show.add_argument("--db")
    return p


def _split_params(items: list[str]) -> dict[str, list]:
    out = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key or not values:
            raise UsageError(f"--param: expected KEY=VALUE[,VALUE…], got {item!r}")
        out[key.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return out


def cmd_list(args, out) -> int:
    if args.what == "suites":
        for name in available_suites():
            s = load_suite(name)
            out.write(f"{name:<12} {len(s.benches):>4} cells/engine  {s.title}\n")
    elif args.what == "references":
        from .references import available_references, load_reference
        for name in available_references():
            ref = load_reference(name)
            out.write(f"{name:<12} {len(ref.rows):>4} values  {ref.title}\n")
    elif args.what == "ops":
        for op in OPS.values():
            params = ", ".join(f"{p.name}={p.default}" + (f" ({'/'.join(map(str, p.choices))})" if p.choices else "")
                               for p in op.params)
            out.write(f"{op.id:<26} {op.title}" + (f"  [{params}]" if params else "") + "\n")
    else:
        states = probe_engines(list(ENGINES))
        for name, engine in ENGINES.items():
            info, why = states[name]
            status = "usable" if why is None else f"NOT usable: {why}"
            version = info.get("version", "")
            out.write(f"{name:<11} {status}\n            {engine.description}\n"
                      + (f"            {version}\n" if version else ""))
    return 0


def _render(run: dict, fmt: str, out, relative_to: str | None = None, only_relative: bool = False) -> None:
    """The run's tables; with `relative_to`, its relative view too (after the tables, or alone with
    `only_relative`: `show --relative-to`)."""
    from . import report
    if relative_to:
        from .relative import check_baseline
        check_baseline(run, relative_to)
    if fmt == "table":
        from rich.console import Console
        console = Console(file=out)
        if not console.is_terminal:
            console = Console(file=out, width=200)
        report.render_rich(run, console, relative_to=relative_to, only_relative=only_relative)
    elif fmt == "md":
        out.write(report.render_markdown(run, relative_to=relative_to, only_relative=only_relative) + "\n")
    elif fmt == "csv":
        if relative_to and only_relative:
            from .relative import render_csv
            out.write(render_csv(run, relative_to))
        else:
            out.write(report.render_csv(run))
    else:
        out.write(report.render_json(run, relative_to=relative_to) + "\n")


def _mcu_plan(args) -> dict:
    """The plan of a microcontroller run: the suite's cells, one engine per library recipe."""
    from .firmware.build import toolchain
    from .firmware.recipes import builtin_recipes, load_recipe
    from .runner import build_plan
    from .targets.boards import check_cpu, check_opt, get_board
    kind, _, name = args.target.partition(":")
    if kind not in ("qemu", "board", "sim") or not name:
        raise UsageError(f"--target: expected host, qemu:BOARD, board:NAME or sim:CORE; got '{args.target}'")
    device = None
    if kind == "sim":
        from .sim.devices import CORE_CPU, get_device
        device = get_device(args.device, name)
        from .targets.boards import BOARDS
        board = BOARDS[device.board]
        if args.cpu and args.cpu != CORE_CPU[name]:
            raise UsageError(f"--cpu {args.cpu}: the target sim:{name} simulates a {CORE_CPU[name]}")
        cpu = CORE_CPU[name]
        from .sim.engine import load_library
        load_library()
    else:
        if args.device:
            raise UsageError("--device applies to sim:CORE targets only")
        board = get_board(name, kind)
        cpu = check_cpu(board, args.cpu)
    opt = check_opt(args.opt)
    if args.timeout <= 0:
        raise UsageError(f"--timeout: must be > 0 seconds, got {args.timeout}")
    if kind == "board" and not args.port:
        raise UsageError(f"--target {args.target} needs --port (the board's serial port)")
    if args.library_source and not args.recipe:
        raise UsageError("--library-source needs --recipe FILE (the recipe that says what to build from it)")
    toolchain()
    libs = list(args.recipe or [])
    if args.engine:
        valid = builtin_recipes()
        for e in args.engine:
            if e not in valid:
                raise UsageError(f"--engine: no library recipe '{e}' for microcontroller targets; valid: {', '.join(valid)}")
        libs += args.engine
    if not libs:
        libs = builtin_recipes()
    names = [load_recipe(l).name for l in libs]
    ops = [get_op(o).id for o in args.op] if args.op else None
    suite = load_suite(args.suite or "default") if (args.suite or not ops) else None
    plan = build_plan(suite, None, ops, _split_params(args.param), args.repeat, None, None, None, False)
    for g in plan["groups"]:
        g["engines"] = names
        if get_op(g["op"]).param("rekey") is not None:
            g["params"]["rekey"] = 1      # firmware operations include the key schedule
    plan["options"]["engines"] = names
    plan["baseline"] = None
    plan["target"] = {"kind": kind, "board": board.name, "cpu": cpu, "opt": opt, "libraries": libs,
                      "core": name if kind == "sim" else None, "device": device.name if device else None,
                      "library_source": str(Path(args.library_source).resolve()) if args.library_source else None,
                      "port": args.port, "baud": args.baud, "no_flash": args.no_flash,
                      "timeout_s": args.timeout, "silence_s": min(30.0, args.timeout)}
    return plan


def cmd_run(args, out) -> int:
    from .harness import configured_reply_timeout_s
    from .runner import Runner, build_plan
    configured_reply_timeout_s()       # a bad CRYPTOBENCH_REPLY_TIMEOUT_S stops the run before any harness starts
    if args.energy and args.target != "host":
        raise UsageError("--energy measures host energy meters; it applies to --target host only")
    if args.energy and args.resume:
        raise UsageError("--energy with --resume: a resumed run keeps its own plan's energy setting")
    if args.parallel is not None and args.target != "host":
        raise UsageError("--parallel runs host harness processes; it applies to --target host only")
    if args.parallel is not None and args.resume:
        raise UsageError("--parallel with --resume: a resumed run keeps its own plan's process counts")
    if args.relative_to:
        get_engine(args.relative_to, "--relative-to")
    if args.label and args.resume:
        raise UsageError("--label with --resume: a resumed run keeps its own label")
    if not args.resume and args.target != "host":
        plan = _mcu_plan(args)
        if args.label:
            plan["label"] = args.label
        store = Store(args.db)
        rid = _execute(store, plan, None, quiet=args.quiet)
        return _finish(store, rid, args, out)
    if args.resume:
        store = Store(args.db)
        run_id = store.resolve_run_id(args.resume)
        stored = store.load_run(run_id)
        if stored["status"] == "complete":
            raise UsageError(f"run {run_id} is already complete; nothing to resume")
        plan = stored["plan"]
    else:
        engines = [get_engine(e).name for e in args.engine] if args.engine else None
        ops = [get_op(o).id for o in args.op] if args.op else None
        suite = load_suite(args.suite or "default") if (args.suite or not ops) else None
        if args.baseline:
            get_engine(args.baseline, "--baseline")
        for flag, value in (("--repeat", args.repeat), ("--warmup", args.warmup)):
            if value is not None and value < (1 if flag == "--repeat" else 0):
                raise UsageError(f"{flag}: must be {'>= 1' if flag == '--repeat' else '>= 0'}, got {value}")
        if args.min_time is not None and args.min_time < 0:
            raise UsageError(f"--min-time: must be >= 0 seconds, got {args.min_time}")
        counts = None
        if args.parallel is not None:
            from .scaling import parse_parallel
            counts = parse_parallel(args.parallel)
        plan = build_plan(suite, engines, ops, _split_params(args.param), args.repeat, args.min_time,
                          args.warmup, args.baseline, args.single, sampling=_sampling_options(args))
        if counts:
            from .scaling import expand_plan
            plan = expand_plan(plan, counts)
        if args.energy:
            plan["options"].update(energy=args.energy, energy_windows=5)
        run_id = None
        if not plan["groups"]:
            raise UsageError("nothing to run: no selected operation applies to the selected engines")
        if args.label:
            plan["label"] = args.label
        store = Store(args.db)
    if args.relative_to and args.relative_to not in plan["options"]["engines"]:
        raise UsageError(f"--relative-to: '{args.relative_to}' is not one of this run's engines: "
                         + ", ".join(plan["options"]["engines"]))
    if not harness_path().exists():
        sys.stderr.write(f"building the host harness ({harness_path()}) …\n")
        build_harness()
    for note in plan.get("skipped_groups", []):
        sys.stderr.write(f"note: not planned for the selected engines: {note}\n")
    runner_run_id = _execute(store, plan, run_id, quiet=args.quiet)
    return _finish(store, runner_run_id, args, out)


def _sampling_options(args) -> dict:
    """--budget, --precision, --processes, --seed, checked."""
    out = {}
    if args.budget is not None:
        if not args.budget > 0:
            raise UsageError(f"--budget: must be > 0 seconds, got {args.budget:g}")
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
    from .relative import run_engines
    relative_to = getattr(args, "relative_to", None) or (run["plan"]["baseline"] if run["plan"].get("relative")
                                                         and run["plan"].get("baseline") else None)
    if relative_to and relative_to not in run_engines(run):
        sys.stderr.write(f"note: no relative view: {relative_to} is not one of this run's engines\n")
        relative_to = None
    _render(run, args.format, out, relative_to=relative_to)
    if args.json:
        from .report import render_json
        Path(args.json).write_text(render_json(run, relative_to=relative_to) + "\n")
    sys.stderr.write(f"stored as run {run_id} in {store.path}\n")
    return 0


def _execute(store: Store, plan: dict, run_id: int | None, quiet: bool) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    console = Console(stderr=True)
    show = not quiet and console.is_terminal
    if plan.get("target"):
        from .mcu_runner import McuRunner
        total = len(plan["groups"]) * len(plan["options"]["engines"])
        progress = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, disable=not show)
        task = progress.add_task("starting", total=total)

        def on_group(group, phase, n=1):
            label = group["op"] + " " + " ".join(f"{k}={v}" for k, v in group["params"].items())
            if phase == "start":
                progress.update(task, description=label[:48])
            else:
                progress.advance(task, n)
        runner = McuRunner(store, plan, progress=on_group, log=lambda s: progress.console.print(s))
    else:
        from .runner import Runner
        progress = Progress(TextColumn("{task.description:<44}"), BarColumn(), TextColumn("{task.fields[eta]}"),
                            TimeElapsedColumn(), console=console, disable=not show)
        task = progress.add_task("starting engines", total=1.0, eta="")
        runner = Runner(store, plan, progress=lambda kind, payload: _host_progress(progress, task, kind, payload),
                        log=lambda s: progress.console.print(s, markup=False, highlight=False))
    try:
        with progress:
            return runner.run(run_id)
    except KeyboardInterrupt:
        rid = run_id or store.resolve_run_id("latest")
        sys.stderr.write(f"\ninterrupted: finished cells of run {rid} are stored (cells still sampling as partial); "
                         f"complete it with `cryptobench run --resume {rid}`\n")
        raise SystemExit(130)


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


def _model(args, out) -> int:
    from .models_cli import cmd_model
    return cmd_model(args, out)


def _energy(args, out) -> int:
    from .energy.commands import cmd_energy
    return cmd_energy(args, out)


def cmd_compare(args, out) -> int:
    from . import compare as cmp
    from .references import load_reference
    store = Store(args.db)
    run = store.load_run(store.resolve_run_id(args.run_id))
    ref = load_reference(args.reference)
    if args.against and args.against not in ref.sources:
        raise UsageError(f"--against: {ref.name} has no source '{args.against}'; it has: {', '.join(ref.sources)}")
    doc = cmp.compare(run, ref, args.against)
    if args.format == "json":
        out.write(json.dumps(doc, indent=1, default=str) + "\n")
        return 0
    ts = cmp.tables(doc)
    if args.format == "csv":
        import csv
        w = csv.writer(out)
        for t in ts:
            w.writerow(["table"] + t["columns"])
            for r in t["rows"]:
                w.writerow([t["title"]] + r)
        return 0
    if args.format == "md":
        out.write("\n".join(f"- {l.strip()}" for l in cmp.text_lines(doc)) + "\n\n")
        for t in ts:
            out.write(f"## {t['title']}\n\n| " + " | ".join(t["columns"]) + " |\n|" + "|".join("---" for _ in t["columns"])
                      + "|\n" + "".join("| " + " | ".join(r) + " |\n" for r in t["rows"]) + "\n")
        out.write("\n".join(f"- {l.strip()}" for l in cmp.unmatched_lines(doc)) + "\n")
        return 0
    from rich.console import Console
    from rich.table import Table
    console = Console(file=out)
    if not console.is_terminal:
        console = Console(file=out, width=200)
    for line in cmp.text_lines(doc):
        console.print(line, highlight=False, markup=False)
    for t in ts:
        table = Table(title=t["title"], title_justify="left")
        for i, col in enumerate(t["columns"]):
            table.add_column(col, justify="left" if i < 2 else "right")
        for r in t["rows"]:
            table.add_row(*r)
        console.print(table)
    for line in cmp.unmatched_lines(doc):
        console.print(line, highlight=False, markup=False, style="dim")
    return 0


def cmd_show(args, out) -> int:
    store = Store(args.db)
    run = store.load_run(store.resolve_run_id(args.run_id))
    _render(run, args.format, out, relative_to=args.relative_to, only_relative=bool(args.relative_to))
    return 0


def _diff(args, out) -> int:
    from .diff import cmd_diff
    return cmd_diff(args, out)


def _export(args, out) -> int:
    from .export import cmd_export
    return cmd_export(args, out)


def _report(args, out) -> int:
    from .report.command import cmd_report
    return cmd_report(args, out)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        commands = {"list": cmd_list, "run": cmd_run, "show": cmd_show, "compare": cmd_compare, "energy": _energy,
                    "model": _model, "diff": _diff, "export": _export, "report": _report}
        return commands[args.command](args, sys.stdout)
    except UsageError as exc:
        sys.stderr.write(f"cryptobench: error: {exc}\n")
        return exc.exit_code
    except HarnessError as exc:
        sys.stderr.write(f"cryptobench: harness error: {exc}\n")
        return 3
    except BrokenPipeError:
        # the reader went away (`cryptobench show 1 | head`): not an error of ours, and nothing more to say
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 141


if __name__ == "__main__":
    raise SystemExit(main())

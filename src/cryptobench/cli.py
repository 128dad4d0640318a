"""The `cryptobench` command line: list, run, show."""
from __future__ import annotations

import argparse
import json
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
    ls.add_argument("what", choices=["suites", "engines", "ops"])

    run = sub.add_parser("run", help="verify, time, store and print a suite or a set of operations")
    run.add_argument("--suite", help="suite name or path to a suite .toml (default: 'default')")
    run.add_argument("--engine", action="append", help="engine to run (repeatable; default: every usable host engine)")
    run.add_argument("--op", action="append", help="operation id (repeatable)")
    run.add_argument("--param", action="append", default=[], metavar="KEY=VALUE[,VALUE…]",
                     help="set or sweep an operation parameter, e.g. bytes=64,8000,16000")
    run.add_argument("--repeat", type=int, help="samples per cell after warm-up")
    run.add_argument("--warmup", type=int, help="warm-up samples per cell (discarded)")
    run.add_argument("--min-time", type=float, help="seconds one sample (a batch of k operations) lasts at least")
    run.add_argument("--single", action="store_true", help="k = 1: time every operation on its own (latency)")
    run.add_argument("--baseline", help="engine the others are compared with (Duration Improvement)")
    run.add_argument("--db", help="SQLite result database (default: $CRYPTOBENCH_DB or the user data dir)")
    run.add_argument("--json", metavar="FILE", help="also write the result document (docs/schema.md)")
    run.add_argument("--resume", metavar="RUN_ID", help="complete an interrupted run")
    run.add_argument("--format", choices=["table", "md", "csv", "json"], default="table")
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    show = sub.add_parser("show", help="print a stored run")
    show.add_argument("run_id", metavar="RUN_ID|latest")
    show.add_argument("--format", choices=["table", "md", "csv", "json"], default="table")
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


def _render(run: dict, fmt: str, out) -> None:
    from . import report
    if fmt == "table":
        from rich.console import Console
        console = Console(file=out)
        if not console.is_terminal:
            console = Console(file=out, width=200)
        report.render_rich(run, console)
    elif fmt == "md":
        out.write(report.render_markdown(run) + "\n")
    elif fmt == "csv":
        out.write(report.render_csv(run))
    else:
        out.write(report.render_json(run) + "\n")


def cmd_run(args, out) -> int:
    from .runner import Runner, build_plan
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
        plan = build_plan(suite, engines, ops, _split_params(args.param), args.repeat, args.min_time,
                          args.warmup, args.baseline, args.single)
        run_id = None
        if not plan["groups"]:
            raise UsageError("nothing to run: no selected operation applies to the selected engines")
        store = Store(args.db)
    if not harness_path().exists():
        sys.stderr.write(f"building the host harness ({harness_path()}) …\n")
        build_harness()
    for note in plan.get("skipped_groups", []):
        sys.stderr.write(f"note: not planned for the selected engines: {note}\n")
    runner_run_id = _execute(store, plan, run_id, quiet=args.quiet)
    run = store.load_run(runner_run_id)
    _render(run, args.format, out)
    if args.json:
        from .report import render_json
        Path(args.json).write_text(render_json(run) + "\n")
    sys.stderr.write(f"stored as run {runner_run_id} in {store.path}\n")
    return 0


def _execute(store: Store, plan: dict, run_id: int | None, quiet: bool) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from .runner import Runner
    total = len(plan["groups"])
    console = Console(stderr=True)
    progress = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, disable=quiet or not console.is_terminal)
    task = progress.add_task("starting engines", total=total)
    holder = {}

    def on_group(group, phase):
        label = group["op"] + " " + " ".join(f"{k}={v}" for k, v in group["params"].items())
        if phase == "start":
            progress.update(task, description=label[:48])
        else:
            progress.advance(task)

    runner = Runner(store, plan, progress=on_group)
    try:
        with progress:
            holder["id"] = runner.run(run_id)
    except KeyboardInterrupt:
        rid = run_id or store.resolve_run_id("latest")
        sys.stderr.write(f"\ninterrupted: finished cells of run {rid} are stored; complete it with "
                         f"`cryptobench run --resume {rid}`\n")
        raise SystemExit(130)
    return holder["id"]


def cmd_show(args, out) -> int:
    store = Store(args.db)
    run = store.load_run(store.resolve_run_id(args.run_id))
    _render(run, args.format, out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return {"list": cmd_list, "run": cmd_run, "show": cmd_show}[args.command](args, sys.stdout)
    except UsageError as exc:
        sys.stderr.write(f"cryptobench: error: {exc}\n")
        return exc.exit_code
    except HarnessError as exc:
        sys.stderr.write(f"cryptobench: harness error: {exc}\n")
        return 3


if __name__ == "__main__":
    raise SystemExit(main())

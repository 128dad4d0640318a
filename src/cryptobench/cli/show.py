"""`cryptobench show RUN…`: print stored runs (their tables, or their relative view)."""
from __future__ import annotations

import json

from ..core.errors import UsageError
from ..core.printable import printable_json
from ..core.records import Run
from ..store.database import Store
from .commands import COMMANDS
from .common import add_db, add_format, add_runs, console_for, resolve_runs
from ..runner.suites import LAYOUT_NAMES
from .. import report
from ..analysis.relative import check_baseline, render_csv
from ..report import layouts
from ..report.layouts import layout_for, render_json

NAME = "show"
HELP = COMMANDS[NAME].help


def add_layout(parser) -> None:
    parser.add_argument("--layout", choices=list(LAYOUT_NAMES), metavar="{" + ",".join(LAYOUT_NAMES) + "}",
                        help="print the tables as a study lays them out (docs/layouts.md): ti, nxp, cifra, zhaw, "
                             "pisa, pqm4, or default (the plain per-operation tables). Default: the run's suite's layout "
                             "(the five study suites name theirs) for --format table and md, else the plain "
                             "tables; csv and json keep their data forms unless --layout is given (json: the "
                             "tables as data)")


def add_parser(sub) -> None:
    show = sub.add_parser("show", help=HELP)
    add_runs(show)
    add_format(show)
    show.add_argument("--relative-to", metavar="ENGINE",
                      help="the relative view: every engine's median time (and energy) / ENGINE's, per op "
                           "(the ZHAW IoT study's figure 2); ENGINE must be one of the run's engines")
    add_layout(show)
    add_db(show)


def run(args, out) -> int:
    store = Store(args.db, create=False)      # only reads: never creates a store
    ids = resolve_runs(store, args.run_ids)
    if len(ids) > 1 and args.format == "csv":
        raise UsageError(f"show --format csv prints one run; for runs {', '.join(map(str, ids))} use "
                         "`cryptobench export RUN… --format csv` (one table, a run column)")
    if len(ids) > 1 and args.format == "json":
        if args.layout and args.layout != "default":
            docs = [{"run": i, "layout": args.layout, "tables": json.loads(render_json(store.load_run(i), args.layout))}
                    for i in ids]
            out.write(printable_json(json.dumps(docs, indent=1, ensure_ascii=False)) + "\n")
            return 0
        docs = [json.loads(report.render_json(store.load_run(i), relative_to=args.relative_to)) for i in ids]
        out.write(json.dumps(docs, indent=1) + "\n")
        return 0
    for n, run_id in enumerate(ids):
        if n:
            out.write("\n")
        render_run(store.load_run(run_id), args.format, out, relative_to=args.relative_to,
                   only_relative=bool(args.relative_to) and not args.layout, layout=args.layout)
    return 0


def chosen_layout(run: Run, fmt: str, layout: str | None, only_relative: bool) -> str | None:
    """The study layout to print, None for the plain output: the one --layout names, else (table and
    md output, and not the relative view alone) the run's suite's."""
    if layout:
        return None if layout == "default" else layout
    if only_relative or fmt not in ("table", "md"):
        return None
    name = layout_for(run)
    return None if name == "default" else name


def render_run(run: Run, fmt: str, out, relative_to: str | None = None, only_relative: bool = False,
               layout: str | None = None) -> None:
    """The run's tables (a study's layout: `layout`, else the suite's for table and md output); with
    `relative_to`, its relative view too (after the tables, or alone with `only_relative`:
    `show --relative-to`)."""
    if relative_to:
        check_baseline(run, relative_to)
    name = chosen_layout(run, fmt, layout, only_relative)
    if name:
        _render_layout(run, fmt, out, name, relative_to)
        return
    if fmt == "table":
        console = console_for(out)
        report.render_rich(run, console, relative_to=relative_to, only_relative=only_relative)
    elif fmt == "md":
        out.write(report.render_markdown(run, relative_to=relative_to, only_relative=only_relative) + "\n")
    elif fmt == "csv":
        if relative_to and only_relative:
            out.write(render_csv(run, relative_to))
        else:
            out.write(report.render_csv(run))
    else:
        out.write(report.render_json(run, relative_to=relative_to) + "\n")


def _render_layout(run: Run, fmt: str, out, name: str, relative_to: str | None) -> None:
    """A study's layout of the run in `fmt` (json: the tables as data; csv: every table, a column naming it)."""
    if fmt == "table":
        layouts.render_rich(run, console_for(out), name, relative_to=relative_to)
    elif fmt == "md":
        out.write(layouts.render_markdown(run, name, relative_to=relative_to) + "\n")
    elif fmt == "csv":
        out.write(layouts.render_csv(run, name))
    else:
        out.write(layouts.render_json(run, name) + "\n")

"""`cryptobench show RUN…`: print stored runs (their tables, or their relative view)."""
from __future__ import annotations

import json

from ..errors import UsageError
from ..records import Run
from ..store import Store
from .common import add_db, add_format, add_runs, console_for, resolve_runs

NAME = "show"


def add_parser(sub) -> None:
    show = sub.add_parser("show", help="print stored runs")
    add_runs(show)
    add_format(show)
    show.add_argument("--relative-to", metavar="ENGINE",
                      help="the relative view: every engine's median time (and energy) / ENGINE's, per op "
                           "(the ZHAW IoT study's figure 2); ENGINE must be one of the run's engines")
    add_db(show)


def run(args, out) -> int:
    store = Store(args.db)
    ids = resolve_runs(store, args.run_ids)
    if len(ids) > 1 and args.format == "csv":
        raise UsageError(f"show --format csv prints one run; for runs {', '.join(map(str, ids))} use "
                         "`cryptobench export RUN… --format csv` (one table, a run column)")
    if len(ids) > 1 and args.format == "json":
        from .. import report
        docs = [json.loads(report.render_json(store.load_run(i), relative_to=args.relative_to)) for i in ids]
        out.write(json.dumps(docs, indent=1) + "\n")
        return 0
    for n, run_id in enumerate(ids):
        if n:
            out.write("\n")
        render_run(store.load_run(run_id), args.format, out, relative_to=args.relative_to,
                   only_relative=bool(args.relative_to))
    return 0


def render_run(run: Run, fmt: str, out, relative_to: str | None = None, only_relative: bool = False) -> None:
    """The run's tables; with `relative_to`, its relative view too (after the tables, or alone with
    `only_relative`: `show --relative-to`)."""
    from .. import report
    if relative_to:
        from ..relative import check_baseline
        check_baseline(run, relative_to)
    if fmt == "table":
        console = console_for(out)
        report.render_rich(run, console, relative_to=relative_to, only_relative=only_relative)
    elif fmt == "md":
        out.write(report.render_markdown(run, relative_to=relative_to, only_relative=only_relative) + "\n")
    elif fmt == "csv":
        if relative_to and only_relative:
            from ..relative import render_csv
            out.write(render_csv(run, relative_to))
        else:
            out.write(report.render_csv(run))
    else:
        out.write(report.render_json(run, relative_to=relative_to) + "\n")

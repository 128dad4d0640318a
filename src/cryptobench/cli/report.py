"""`cryptobench report RUN… --out DIR`: the HTML report, its figures and table files (report/build.py).

The runs are read a run at a time (Store.iter_cells): their plans and conditions first, each run's
cells while its tables and figures are made. DIR is checked before anything is read
(report/folder.py): a folder that holds a report already needs --force, and the new report is
swapped in whole."""
from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from pathlib import Path

from ..analysis.history import build_series
from ..catalog.ops import get_op
from ..core.errors import UsageError
from ..report.build import build_report, check_baseline
from ..core.printable import printable
from ..report.folder import check_folder, remove_stale, staged
from ..store.database import Store
from .commands import COMMANDS
from .common import add_db, add_runs, resolve_runs
from ..references import load_reference

NAME = "report"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    r = sub.add_parser("report", help=HELP)
    add_runs(r)
    r.add_argument("--out", required=True, metavar="DIR", help="directory to write report.html, figures/ and tables/ to")
    r.add_argument("--force", action="store_true",
                   help="replace the report DIR holds already (report.html, figures/, tables/), whole")
    r.add_argument("--baseline", metavar="ENGINE",
                   help="engine the relative heat-map and crossovers divide by (default: each run's baseline)")
    r.add_argument("--reference", action="append", default=[], metavar="NAME",
                   help="draw a study's published points beside yours in the duration, energy and cycles figures "
                        "(repeatable; `cryptobench list references`, or a reference .toml)")
    r.add_argument("--history", action="append", default=[], metavar="OP",
                   help="add a figure of OP's value over the runs, per engine, target and parameters, in the "
                        "library's commit order (else time) with change points marked (repeatable; docs/gate.md, History)")
    r.add_argument("--title", help="report title (default: from the runs)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    add_db(r)


def run(args, out) -> int:
    out_dir = Path(args.out)
    check_folder(out_dir, args.force)
    store = Store(args.db, create=False)      # only reads: never creates a store
    try:
        runs = [store.load_run(i, cells=False) for i in resolve_runs(store, args.run_ids)]
        check_baseline(runs, args.baseline, store.cell_engines)
        references = [load_reference(name) for name in dict.fromkeys(args.reference)]
        history = _history(store, runs, args.history)
        stale = remove_stale(out_dir)        # staging folders of a report killed earlier (report/folder.py)
        if stale:
            sys.stderr.write(f"note: {printable(stale, keep_newlines=False)}\n")
        with staged(out_dir) as stage, _progress(args.quiet) as progress:
            summary = build_report(runs, stage, args.baseline, args.title, progress, references,
                                   cells_of=lambda r: store.iter_cells(r.id), history=history)
    finally:
        store.close()
    where = lambda name: printable(str(out_dir / name), keep_newlines=False)        # noqa: E731
    out.write(f"wrote {where('report.html')} ({summary['n_figures']} figures, {summary['n_tables']} tables; "
              f"PNG/SVG in {where('figures')}, Markdown/CSV/LaTeX in {where('tables')})\n")
    return 0


def _history(store, runs: list, ops: list[str]) -> list:
    """The series of each --history OP over the report's runs: cycles where its cells have them,
    else the printed time (analysis/history.py)."""
    series = []
    for op in dict.fromkeys(get_op(o, "--history").id for o in ops):
        with_cells = [replace(r, cells=[c for c in store.iter_cells(r.id) if c.op == op]) for r in runs]
        found = build_series(with_cells, op, "cycles") or build_series(with_cells, op, "time")
        if not found:
            raise UsageError(f"--history: no ok {op} cell with cycles or a time in runs "
                             + ", ".join(str(r.id) for r in runs))
        series += found
    return series


@contextlib.contextmanager
def _progress(quiet: bool):
    """progress(what, total=None) for build_report: a bar on stderr while it is a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("report", total=None)

        def progress(what, total=None):
            what = printable(what, keep_newlines=False)[:60].replace("[", "\\[")
            if total is not None:
                bar.update(task, total=total, advance=1, description=what)
            else:
                bar.update(task, description=what)
        yield progress

"""`cryptobench report RUN… --out DIR`: the HTML report, its figures and table files (report/build.py)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from ..report.build import build_report, check_baseline
from ..store import Store
from .common import add_db, add_runs, resolve_runs

NAME = "report"


def add_parser(sub) -> None:
    r = sub.add_parser("report", help="a self-contained HTML report with figures (PNG, SVG) and tables "
                                      "(Markdown, CSV, LaTeX) from stored runs")
    add_runs(r)
    r.add_argument("--out", required=True, metavar="DIR", help="directory to write report.html, figures/ and tables/ to")
    r.add_argument("--baseline", metavar="ENGINE",
                   help="engine the relative heat-map and crossovers divide by (default: each run's baseline)")
    r.add_argument("--reference", action="append", default=[], metavar="NAME",
                   help="draw a study's published points beside yours in the duration, energy and cycles figures "
                        "(repeatable; `cryptobench list references`, or a reference .toml)")
    r.add_argument("--title", help="report title (default: from the runs)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    add_db(r)


def run(args, out) -> int:
    store = Store(args.db, create=False)      # only reads: never creates a store
    runs = [store.load_run(i) for i in resolve_runs(store, args.run_ids)]
    check_baseline(runs, args.baseline)
    from ..references import load_reference
    references = [load_reference(name) for name in dict.fromkeys(args.reference)]
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: exists and is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot create ({exc.strerror})")

    if args.quiet or not sys.stderr.isatty():
        summary = build_report(runs, out_dir, args.baseline, args.title, references=references)
    else:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("report", total=None)

            def progress(what, total=None):
                if total is not None:
                    bar.update(task, total=total, advance=1, description=what[:60])
                else:
                    bar.update(task, description=what[:60])
            summary = build_report(runs, out_dir, args.baseline, args.title, progress, references)
    out.write(f"wrote {summary['html']} ({summary['n_figures']} figures, {summary['n_tables']} tables; "
              f"PNG/SVG in {out_dir / 'figures'}, Markdown/CSV/LaTeX in {out_dir / 'tables'})\n")
    return 0

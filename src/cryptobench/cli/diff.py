"""`cryptobench diff RUN_A RUN_B`: per cell, the change from A to B and whether it is beyond both
runs' variation (diff.py); exit 1 on a significant regression beyond --threshold."""
from __future__ import annotations

import json
import sys

from ..analysis.diff import check_alpha, diff, header_lines, parse_threshold, render_csv, render_md
from ..report.diff_terminal import render_rich
from ..core.errors import UsageError
from ..core.printable import printable
from ..store.database import Store
from .commands import COMMANDS
from .common import add_db, add_format, resolve_one_run

NAME = "diff"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    d = sub.add_parser("diff", help=HELP)
    d.add_argument("run_a", metavar="RUN_A", help="the reference run (an id or 'latest')")
    d.add_argument("run_b", metavar="RUN_B", help="the run under test (an id or 'latest')")
    d.add_argument("--threshold", default="5%", metavar="PCT",
                   help="smallest change that counts, e.g. 5%% or 0.05 (default 5%%)")
    d.add_argument("--alpha", type=float, default=0.01,
                   help="significance level of the two-sided test (default 0.01; docs/diff.md)")
    d.add_argument("--by-place", action="store_true",
                   help="also sum the pairs up per pair of labgrid places (board-to-board spread; docs/lab.md)")
    d.add_argument("--strict", action="store_true",
                   help="refuse (exit 2) when the runs were measured with different methods or nothing was compared")
    add_format(d)
    add_db(d)


def run(args, out) -> int:
    threshold = parse_threshold(args.threshold)
    alpha = check_alpha(args.alpha)
    store = Store(args.db, create=False)      # only reads: never creates a store
    run_a = store.load_run(resolve_one_run(store, args.run_a, "RUN_A"))
    run_b = store.load_run(resolve_one_run(store, args.run_b, "RUN_B"))
    doc = diff(run_a, run_b, threshold, alpha)
    if args.strict and doc["method_warnings"]:
        raise UsageError("--strict: the runs are not comparable: " + "; ".join(doc["method_warnings"]))
    if args.format == "json":
        out.write(json.dumps(doc, indent=1, default=str) + "\n")
    elif args.format == "csv":
        for line in header_lines(doc):
            if line.startswith("warning"):
                sys.stderr.write(printable(line, keep_newlines=False) + "\n")
        render_csv(doc, out)
    elif args.format == "md":
        render_md(doc, out, places=args.by_place)
    else:
        render_rich(doc, out, places=args.by_place)
    return 1 if doc["regressions"] else 0

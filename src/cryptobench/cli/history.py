"""`cryptobench history --op OP`: one operation's value over the stored runs, ordered by the
library's commit (else the run's time), with change points marked (analysis/history.py,
docs/gate.md "History")."""
from __future__ import annotations

import json
from dataclasses import replace

from ..analysis.diff import check_alpha, parse_threshold
from ..analysis.history import METRICS, as_json, build_series, history_table
from ..catalog.ops import get_op
from ..core.errors import UsageError
from ..core.printable import printable_json
from ..core.table import Csv, Markdown, markdown_inert
from ..report.terminal import print_table
from ..store.database import Store
from .commands import COMMANDS
from .common import add_db, add_format, add_param, console_for, key_values

NAME = "history"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    h = sub.add_parser("history", help=HELP)
    h.add_argument("--op", required=True, help="the operation (cryptobench list ops)")
    add_param(h, help="only cells with this parameter value, e.g. bytes=64 (repeatable; KEY=V1,V2 takes either)")
    h.add_argument("--engine", help="only this engine (library)")
    h.add_argument("--target", help="only this target, e.g. sim:cortex-m4 or host")
    h.add_argument("--metric", choices=list(METRICS), default="cycles",
                   help="the value followed: cycles (default), time, stack or code-size")
    h.add_argument("--threshold", default="5%", metavar="PCT",
                   help="measured values: smallest change that is a step, as diff's (default 5%%)")
    h.add_argument("--alpha", type=float, default=0.01, help="measured values: the test's level, as diff's (0.01)")
    add_format(h)
    add_db(h)


def run(args, out) -> int:
    op = get_op(args.op).id
    params = key_values(args.param, "--param", lists=",")
    if not set(params) <= set(get_op(op).param_names):
        bad = sorted(set(params) - set(get_op(op).param_names))[0]
        raise UsageError(f"--param: {op} has no parameter '{bad}'; valid: {', '.join(get_op(op).param_names)}")
    threshold, alpha = parse_threshold(args.threshold), check_alpha(args.alpha)
    store = Store(args.db, create=False)      # only reads: never creates a store
    try:
        # a run at a time, only the op's cells kept: a store of many runs is not loaded whole
        runs = [replace(run, cells=[c for c in store.iter_cells(run.id) if c.op == op])
                for run in (store.load_run(r["id"], cells=False) for r in store.run_summaries())]
    finally:
        store.close()
    series = build_series(runs, op, args.metric, params, args.engine, args.target, threshold, alpha)
    if not series:
        raise UsageError(f"history: no stored run has an ok {op} cell with {args.metric}"
                         + (" matching the filters" if params or args.engine or args.target else ""))
    if args.format == "json":
        out.write(printable_json(json.dumps(as_json(series), indent=1, ensure_ascii=False)) + "\n")
    elif args.format == "csv":
        out.write("".join(Csv(title_column="series").render(history_table(s)) for s in series))
    elif args.format == "md":
        # every text a run recorded is inert (markdown_inert), so the rest needs no escaping
        md = Markdown(escape=str, prose=str)
        out.write("\n".join(md.render(history_table(s, markdown_inert, lambda t: markdown_inert(t, in_table=True)))
                             for s in series))
    else:
        console = console_for(out)
        for s in series:
            print_table(console, history_table(s))
    return 0

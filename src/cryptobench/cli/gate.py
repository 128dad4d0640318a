"""`cryptobench gate BASE HEAD`: exact changes of deterministic figures, named by function, and
diff's test for measured times; exit 0 pass, 1 regression, 2 usage error, 4 refused (the runs'
conditions differ). docs/gate.md."""
from __future__ import annotations

import json

from ..analysis.gate import DEFAULT_LIMITS, METRICS, REFUSED, gate, parse_limit
from ..analysis.diff import check_alpha
from ..core.errors import UsageError
from ..report.gate_render import render_md, render_terminal
from ..store.database import Store
from ..store.run_file import load_run_file
from .commands import COMMANDS
from .common import add_db, add_format, resolve_one_run

NAME = "gate"
HELP = COMMANDS[NAME].help
EXIT_REFUSED = 4        # the runs' conditions differ: not comparable (distinct from 1, a regression)


def add_parser(sub) -> None:
    g = sub.add_parser("gate", help=HELP)
    g.add_argument("base", metavar="BASE", nargs="?", help="the reference run: an id or 'latest' in --db")
    g.add_argument("head", metavar="HEAD", nargs="?", help="the run under test: an id or 'latest' in --db")
    g.add_argument("--json", action="append", metavar="FILE",
                   help="a run document (`run --json`); give it twice, BASE's first, instead of two stored runs")
    for m in METRICS:
        g.add_argument(m.flag, default=DEFAULT_LIMITS[m.name], metavar="N%|N",
                       help=f"growth of {m.label} allowed before a regression: N%% of BASE or N {m.unit} "
                            f"(default {DEFAULT_LIMITS[m.name].replace('%', '%%')}: any growth fails)")
    g.add_argument("--max-time", default=DEFAULT_LIMITS["time"], metavar="N%|N",
                   help="measured cells: slowdown allowed (N%% of BASE, or N seconds) before a significant one "
                        "is a regression (default 5%%, as diff's --threshold)")
    g.add_argument("--alpha", type=float, default=0.01, help="measured cells: significance level (default 0.01)")
    g.add_argument("--fail-on-missing", action="store_true",
                   help="a cell present on one side only is a regression (default: reported only)")
    add_format(g, ("table", "md", "json"))
    add_db(g)


def run(args, out) -> int:
    limits = {m.name: parse_limit(getattr(args, m.flag[2:].replace("-", "_")), m.flag) for m in METRICS}
    limits["time"] = parse_limit(args.max_time, "--max-time")
    alpha = check_alpha(args.alpha)
    if args.json:
        if len(args.json) != 2:
            raise UsageError(f"--json: give it twice (BASE's document, then HEAD's), got {len(args.json)}")
        if args.base or args.head:
            raise UsageError("give BASE and HEAD as run ids, or --json BASE_FILE --json HEAD_FILE, not both")
        base, head = (load_run_file(p, "--json") for p in args.json)
        names = list(args.json)
    else:
        if not (args.base and args.head):
            raise UsageError("gate: give BASE and HEAD (run ids or 'latest'), or --json BASE_FILE --json HEAD_FILE")
        store = Store(args.db, create=False)      # only reads: never creates a store
        base = store.load_run(resolve_one_run(store, args.base, "BASE"))
        head = store.load_run(resolve_one_run(store, args.head, "HEAD"))
        names = [None, None]
    doc = gate(base, head, limits, alpha, args.fail_on_missing, *names)
    if args.format == "json":
        out.write(json.dumps(doc, indent=1, default=str) + "\n")
    elif args.format == "md":
        render_md(doc, out)
    else:
        render_terminal(doc, out)
    if doc["verdict"] == REFUSED:
        return EXIT_REFUSED
    return 1 if doc["regressions"] else 0

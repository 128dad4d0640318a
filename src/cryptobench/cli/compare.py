"""`cryptobench compare RUN --reference STUDY`: a stored run beside a study's published results."""
from __future__ import annotations

import json

from ..core.errors import UsageError
from ..core.printable import printable
from ..core.table import Csv, Markdown
from ..report.terminal import print_lines, print_table
from ..store.database import Store
from .commands import COMMANDS
from .common import add_db, add_format, add_runs, console_for, resolve_one_run
from ..analysis import compare as cmp
from ..references import load_reference

NAME = "compare"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    cmp_ = sub.add_parser("compare", help=HELP)
    add_runs(cmp_, "run_id", one=True, metavar="RUN_ID")
    cmp_.add_argument("--reference", required=True, help="a study: ti-cc26x2, nxp-imxrt, cifra-aead, zhaw-iot, "
                      "pisa-a53 (`cryptobench list references`), or a reference .toml")
    cmp_.add_argument("--against", metavar="SOURCE", help="the published source every engine's ratios divide by "
                      "(default: the study's software library, and its hardware for an engine the simulator "
                      "models, so that column reads modeled / published hardware)")
    cmp_.add_argument("-v", "--verbose", action="store_true", help="list every published row not compared, "
                      "not one line per operation and reason (--format json always lists them)")
    add_format(cmp_)
    add_db(cmp_)


def run(args, out) -> int:
    store = Store(args.db, create=False)      # only reads: never creates a store
    run = store.load_run(resolve_one_run(store, args.run_id, "compare"))
    ref = load_reference(args.reference)
    if args.against and args.against not in ref.sources:
        raise UsageError(f"--against: {ref.name} has no source '{args.against}'; it has: {', '.join(ref.sources)}")
    doc = cmp.compare(run, ref, args.against)
    if args.format == "json":
        out.write(json.dumps(doc, indent=1, default=str) + "\n")
        return 0
    ts = cmp.tables(doc)
    if args.format == "csv":
        csv = Csv(title_column="table")
        out.write("".join(csv.render(t) for t in ts))
        return 0
    if args.format == "md":
        lines = lambda ls: "\n".join(f"- {printable(l.strip(), keep_newlines=False)}" for l in ls)    # noqa: E731
        out.write(lines(cmp.text_lines(doc)) + "\n\n")
        out.write("".join(Markdown().render(t) + "\n" for t in ts))
        out.write(lines(cmp.unmatched_lines(doc, args.verbose)) + "\n")
        return 0
    console = console_for(out)
    print_lines(console, cmp.text_lines(doc))
    for t in ts:
        print_table(console, t)
    print_lines(console, cmp.unmatched_lines(doc, args.verbose), style="dim")
    return 0

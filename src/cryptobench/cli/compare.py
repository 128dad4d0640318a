"""`cryptobench compare RUN --reference STUDY`: a stored run beside a study's published results."""
from __future__ import annotations

import json

from ..errors import UsageError
from ..store import Store
from .common import add_db, add_format, add_runs, console_for, resolve_one_run

NAME = "compare"


def add_parser(sub) -> None:
    cmp_ = sub.add_parser("compare", help="a stored run beside a study's published results (references/)")
    add_runs(cmp_, "run_id", one=True, metavar="RUN_ID")
    cmp_.add_argument("--reference", required=True, help="a study: ti-cc26x2, nxp-imxrt, cifra-aead, zhaw-iot, "
                      "pisa-a53 (`cryptobench list references`), or a reference .toml")
    cmp_.add_argument("--against", metavar="SOURCE", help="the published source the ratios divide by "
                      "(default: the study's software library)")
    add_format(cmp_)
    add_db(cmp_)


def run(args, out) -> int:
    from .. import compare as cmp
    from ..references import load_reference
    store = Store(args.db)
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
    from rich.table import Table
    console = console_for(out)
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

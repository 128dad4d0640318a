"""`cryptobench diff` on a terminal: each cell pair on one line with its change and verdict, at any
width the console has.

print_table splits a table too wide for the terminal into parts that each repeat the key
columns; for a diff that put a cell's change and verdict in a second part, a screen or hundreds
of lines below its times (issue 31). The diff table instead gives up what matters least, in this
order, until it fits:

  1. every column (what a wide terminal and the markdown form show);
  2. the target column, where every row has the same target (the title names it);
  3. the p column (a note says where it is: --format json or csv);
  4. op, params, engine (and target) in one "cell" column.

The first of these whose rows each fit on one line wins; else the first that fits with names
wrapped at spaces but change and verdict whole (a row's first line carries them). Where none
fits (a console under about 60 columns), each pair is one text line led by its verdict and change.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..analysis.diff import columns, diff_table, fmt_change, fmt_p, fmt_times, header_lines, not_compared_notes, params_text, place_table, summary_line, table_title
from ..core.table import LEFT, STYLES, Column, Table
from .terminal import column_widths, console_for, print_lines, print_table

UNLIMITED = 10 ** 6        # a width every table fits in whole: its columns' full widths
P_NOTE = "p: each test's p value is in --format json and csv"


@dataclass(frozen=True)
class Layout:
    """Which of the diff table's columns a terminal gets."""

    target: bool     # a target column (else the title names the one target every row has)
    p: bool          # the p column
    one_name: bool   # op, params, engine (and target) in one "cell" column


def layouts(doc: dict) -> list[Layout]:
    """The layouts to try, widest first (module docstring)."""
    uniform = len({r["target"] for r in doc["rows"]}) == 1
    out = [Layout(True, True, False)]
    if uniform:
        out.append(Layout(False, True, False))
    return out + [Layout(not uniform, False, False), Layout(not uniform, False, True)]


def _name(r: dict, layout: Layout) -> str:
    bits = [r["op"], params_text(r["params"]), r["engine"]] + ([r["target"]] if layout.target else [])
    return " ".join(b for b in bits if b)


def layout_table(doc: dict, layout: Layout) -> Table:
    """The diff table with the columns `layout` keeps."""
    if layout == Layout(True, True, False):
        return diff_table(doc)
    full = columns(doc)                 # op params engine target | A B change p verdict
    names = [Column("cell", LEFT)] if layout.one_name else full[:3] + (full[3:4] if layout.target else [])
    title = table_title(doc) + ("" if layout.target else f" · target {doc['rows'][0]['target']}")
    table = Table(title, names + full[4:7] + (full[7:8] if layout.p else []) + full[8:])
    for r in doc["rows"]:
        if layout.one_name:
            key = [_name(r, layout)]
        else:
            key = [r["op"], params_text(r["params"]), r["engine"]] + ([r["target"]] if layout.target else [])
        table.add(key + fmt_times(r["estimate_a_s"], r["estimate_b_s"]) + [fmt_change(r["change"])]
                  + ([fmt_p(r["p"])] if layout.p else []) + [r["verdict"]], style=r["kind"])
    table.notes = not_compared_notes(doc) + ([] if layout.p else [P_NOTE])
    return table


def fits(table: Table, width: int, whole: bool) -> bool:
    """Whether `table` fits in `width`: each row on one line (whole), or with only its name
    columns wrapped, change (a number, never wrapped) and verdict (the last column) whole."""
    widths = column_widths(table, width)
    if widths is None:
        return False
    full = column_widths(table, UNLIMITED)
    return widths == full if whole else widths[-1] >= full[-1]


def table_for(doc: dict, width: int) -> Table | None:
    """The widest layout's table that fits `width` (module docstring); None where none does."""
    tables = [layout_table(doc, layout).printable() for layout in layouts(doc)]
    for whole in (True, False):
        for table in tables:
            if fits(table, width, whole):
                return table
    return None


def pair_line(r: dict) -> str:
    """One cell pair as a line of text, verdict and change first: the form for a very narrow console."""
    a, b = fmt_times(r["estimate_a_s"], r["estimate_b_s"])
    return (f"{r['verdict']}, {fmt_change(r['change'])}: {r['op']} {params_text(r['params'])} {r['engine']} "
            f"{r['target']}: {a} → {b} (p {fmt_p(r['p'])})")


def _print_pairs(console, doc: dict) -> None:
    a, b = (columns(doc)[i].label for i in (4, 5))
    print_lines(console, [f"{table_title(doc)} (verdict, change: cell: {a} → {b})"])
    for r in doc["rows"]:
        print_lines(console, [pair_line(r)], style=STYLES.get(r["kind"]) or None)
    print_lines(console, (f"  {n}" for n in not_compared_notes(doc)), style="dim")


def render_rich(doc: dict, out, places: bool = False) -> None:
    console = console_for(out)
    for line in header_lines(doc):
        print_lines(console, [line], style="yellow" if line.startswith("warning") else None)
    table = table_for(doc, console.width) if doc["rows"] else diff_table(doc)
    if table is None:
        _print_pairs(console, doc)
    else:
        print_table(console, table)
    if places:
        print_table(console, place_table(doc))
    print_lines(console, [summary_line(doc)])

"""The gate's document (analysis/gate.py) as text: a headline verdict, the libraries on both
sides, a table of the changed cells, and per changed cell the functions its change is in — on a
terminal, or as Markdown fit for a pull-request comment.

Every text a run, library, recipe or label chose (op, engine, target and function names,
versions, sources, file names, condition values, error details) reaches the output only through
the `data` function each builder takes: the terminal's prints it as it is (printable), the
comment's makes it inert (markdown_inert: a code span, no link, image, mention or formatting;
local paths shortened). What is not passed through `data` is this module's own words and numbers
it formatted itself."""
from __future__ import annotations

from typing import Callable

from ..analysis.gate import UNFIGURED, cell_text
from ..core.table import LEFT, Column, Markdown, Table, html_inert, markdown_inert
from .terminal import console_for, print_lines, print_table

Data = Callable[[object], str]
# the comment's last line, written once all of it is: gate.sh posts a gate.md only when it ends so
MD_END = "<!-- cryptobench gate: end of comment -->"

SHOWN = ("regression", "improvement", "changed", "added", "removed", "other")    # the kinds the table lists
UNITS = {"cycles": "cycles", "instructions": "insns", "stack": "B", "code_size": "B"}


def num(x) -> str:
    """An exact figure as is: an integer without a decimal point, a halved op's .5 kept."""
    if x is None or isinstance(x, bool) or not isinstance(x, (int, float)):
        return "—"
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def signed(x) -> str:
    return "—" if x is None else ("+" if x > 0 else "") + num(x)


def pct(p) -> str:
    if p is None:
        return "—"
    return f"{p:+.2f} %" if abs(p) >= 0.01 or p == 0 else f"{p:+.2g} %"


def change_text(m: dict) -> str:
    """'+12 cycles (+0.07 %)': a figure's exact change with its size in % of BASE."""
    if m["verdict"] in UNFIGURED:
        return "—"
    return f"{signed(m['change'])} {UNITS.get(m['metric'], m['unit'])} ({pct(m['change_pct'])})"


def cell_name(r: dict, data: Data = str) -> str:
    return data(cell_text(r))


# the cell verdicts that are this module's own words; any other (a failed side's detail, why a
# figure is not one) quotes the run and goes through `data`
OWN_VERDICTS = ("regression", "improvement", "unchanged", "changed within threshold",
                "functions changed, totals the same", "only in HEAD", "only in BASE")


def verdict_text(r: dict, data: Data = str) -> str:
    return r["verdict"] if r["verdict"] in OWN_VERDICTS else data(r["verdict"])


def side_name(side: dict, data: Data = str) -> str:
    """'run 3', or a document's file and the run id it holds."""
    return f"{data(side['file'])} (run {side['id']})" if side.get("file") else f"run {side['id']}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def headline(doc: dict, data: Data = str) -> str:
    """The verdict in one line: PASS, FAIL or REFUSED, and what it counted."""
    sides = f"{side_name(doc['base'], data)} → {side_name(doc['head'], data)}"
    if doc["verdict"] == "refused":
        why = ("the runs' conditions differ, nothing was compared" if doc.get("refused_for") != "figures"
               else "figures that are not figures, the gate cannot pass")
        return f"cryptobench gate: REFUSED ({sides}): {why}"
    c = doc["counts"]
    bits = [_plural(c["regression"], "regression"), _plural(c["improvement"], "improvement")]
    if c["changed"]:
        bits.append(f"{c['changed']} changed within thresholds")
    bits.append(f"{c['unchanged']} unchanged")
    if c["added"] or c["removed"]:
        bits.append(f"{c['added']} added, {c['removed']} removed")
    if c["other"]:
        bits.append(f"{c['other']} not compared")
    return f"cryptobench gate: {doc['verdict'].upper()} ({sides}): " + ", ".join(bits)


def info_lines(doc: dict, data: Data = str) -> list[str]:
    """The libraries BASE → HEAD, the thresholds, and (refused) each reason."""
    out = []
    for lib in doc["libraries"]:
        line = f"{data(lib['name'])} {data(lib['base']) if lib['base'] else '(absent)'} → " \
               f"{data(lib['head']) if lib['head'] else '(absent)'}"
        if "source_base" in lib:
            line += f" (source {data(lib['source_base']) if lib['source_base'] else '—'} → " \
                    f"{data(lib['source_head']) if lib['source_head'] else '—'})"
        out.append(line)
    out.append("limits (growth allowed before a regression): "
               + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in doc["limits"].items())
               + "; deterministic figures (simulated cycles and instructions, stack, code size) compared exactly, "
               f"measured times by diff's test at alpha {doc['alpha']:g}")
    out += [f"refused: {data(why)}" for why in doc["refusal"]]
    return out


def _side(m: dict, side: str, data: Data) -> str:
    """A figure, or why it is not one (a figure that is not one has no number to show)."""
    if m[side] is not None or m["verdict"] not in UNFIGURED:
        return num(m[side])
    why = m["why"].split(": ", 1)[-1]
    return data(why) if m["why"].startswith(side.upper()) else "—"


def changes_table(doc: dict, data: Data = str) -> Table:
    """A row per changed figure of each listed cell (and one per cell added, removed or failed)."""
    table = Table("changed cells", [Column("cell", LEFT), Column("metric", LEFT), Column("BASE"), Column("HEAD"),
                                    Column("change"), Column("verdict", LEFT, styled=True)])
    for r in doc["cells"]:
        if r["kind"] not in SHOWN and not any(m["verdict"] in UNFIGURED for m in r["metrics"]):
            continue
        style = r["kind"] if r["kind"] in ("regression", "improvement") else "other"
        shown = [m for m in r["metrics"] if m["verdict"] != "same"]
        for m in shown:
            table.add([cell_name(r, data), m["metric"].replace("_", " "), _side(m, "base", data),
                       _side(m, "head", data), change_text(m), m["verdict"]],
                      style="regression" if m["verdict"] in ("regression", UNFIGURED[0]) else
                      "improvement" if m["verdict"] == "improvement" else "other")
        t = r["measured"]
        if t and t["kind"] in ("regression", "improvement"):
            table.add([cell_name(r, data), f"time ({data(t['estimator_b'] or 'median')})", f"{t['estimate_a_s']:.4g} s",
                       f"{t['estimate_b_s']:.4g} s", f"{t['change'] * 100:+.1f} % (p {t['p']:.2g})", t["verdict"]],
                      style=t["kind"])
        if not shown and not (t and t["kind"] in ("regression", "improvement")):
            table.add([cell_name(r, data), "—", "", "", "", verdict_text(r, data)], style=style)
    return table


def function_table(rows: list[dict], ops_in_window: int, data: Data = str) -> Table:
    """The functions whose cycles, instructions or calls changed, largest |Δcycles| first."""
    title = "functions by cycles" + (f" (the window holds {ops_in_window} operations)" if ops_in_window != 1 else "")
    table = Table(title, [Column("function", LEFT), Column("cycles BASE"), Column("cycles HEAD"), Column("Δ cycles"),
                          Column("Δ instructions"), Column("calls BASE"), Column("calls HEAD")])
    for f in rows:
        table.add([data(f["function"]), num(f["cycles_base"]), num(f["cycles_head"]), signed(f["cycles_change"]),
                   signed(f["instructions_change"]), num(f["calls_base"]), num(f["calls_head"])])
    return table


def size_table(rows: list[dict], data: Data = str) -> Table:
    table = Table("functions by size", [Column("function", LEFT), Column("bytes BASE"), Column("bytes HEAD"),
                                        Column("Δ bytes")])
    for f in rows:
        table.add([data(f["function"]), num(f["bytes_base"]), num(f["bytes_head"]), signed(f["bytes_change"])])
    return table


def attribution_parts(r: dict, data: Data = str) -> tuple[list[Table], list[str]]:
    """A changed cell's attribution tables and notes (the notes are this module's words)."""
    a = r["attribution"]
    tables = []
    if a.get("functions") is not None:
        tables.append(function_table(a["functions"], int(a.get("ops_in_window", 1)), data))
    if a.get("sizes") is not None:
        tables.append(size_table(a["sizes"], data))
    return tables, [a[k] for k in ("functions_note", "sizes_note") if a.get(k)]


def summary_text(r: dict, data: Data = str) -> str:
    """A changed cell in one line: its name and each changed figure."""
    changes = [(f"{m['metric'].replace('_', ' ')} " if m["unit"] == "B" else "") + change_text(m)    # "+12 cycles"
               for m in r["metrics"] if m["verdict"] not in ("same", *UNFIGURED)]
    return f"{cell_name(r, data)}: {verdict_text(r, data)}" + (" — " + ", ".join(changes) if changes else "")


def _cell(text: object) -> str:
    return markdown_inert(text, in_table=True)


def render_md(doc: dict, out) -> None:
    """Markdown for a pull-request comment: a bold headline, the libraries and limits, the table of
    changed cells, and per changed cell a collapsible <details> with its functions; MD_END last.
    Every text from a run is markdown_inert (in a <summary>, which is raw HTML: html_inert); the
    rest is this module's words and numbers, which hold no Markdown."""
    md = Markdown(heading=None, escape=str, prose=str)       # the cells are inert already
    out.write(f"**{headline(doc, markdown_inert)}**\n\n")
    out.write("".join(f"- {line}\n" for line in info_lines(doc, markdown_inert)) + "\n")
    table = changes_table(doc, _cell) if doc["verdict"] != "refused" or doc.get("refused_for") == "figures" else None
    if table is not None and not table.rows:
        out.write("No cell changed.\n\n")
    elif table is not None:
        out.write(md.render(table) + "\n")
        for r in doc["cells"]:
            tables, notes = attribution_parts(r, _cell)
            if not (tables or notes):
                continue
            out.write(f"<details><summary>{summary_text(r, html_inert)}</summary>\n\n")
            out.write("".join(md.render(t, caption=t.title) + "\n" for t in tables))
            out.write("".join(f"- {n}\n" for n in notes) + ("\n" if notes else ""))
            out.write("</details>\n\n")
    out.write(MD_END + "\n")


def render_terminal(doc: dict, out) -> None:
    console = console_for(out)
    print_lines(console, [headline(doc)], style="bold")
    print_lines(console, info_lines(doc))
    if doc["verdict"] == "refused" and doc.get("refused_for") != "figures":
        return
    table = changes_table(doc)
    if table.rows:
        print_table(console, table)
    for r in doc["cells"]:
        tables, notes = attribution_parts(r)
        if tables or notes:
            print_lines(console, [summary_text(r)], style="bold")
            for t in tables:
                print_table(console, t)
            print_lines(console, [f"  {n}" for n in notes], style="dim")

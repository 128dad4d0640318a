"""The gate's document (analysis/gate.py) as text: a headline verdict, the libraries on both
sides, a table of the changed cells, and per changed cell the functions its change is in — on a
terminal, or as Markdown fit for a pull-request comment (every text from a run escaped with
markdown_escape: op names, labels and function names are data)."""
from __future__ import annotations

from ..core.printable import printable
from ..core.table import LEFT, Column, Markdown, Table, markdown_escape
from .terminal import console_for, print_lines, print_table

SHOWN = ("regression", "improvement", "changed", "added", "removed", "other")    # the kinds the table lists
UNITS = {"cycles": "cycles", "instructions": "insns", "stack": "B", "code_size": "B"}


def num(x) -> str:
    """An exact figure as is: an integer without a decimal point, a halved op's .5 kept."""
    if x is None:
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
    return f"{signed(m['change'])} {UNITS.get(m['metric'], m['unit'])} ({pct(m['change_pct'])})"


def cell_name(r: dict) -> str:
    params = " ".join(f"{k}={v}" for k, v in r["params"].items())
    return " ".join(x for x in (r["op"], params, r["engine"], r["target"]) if x)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def headline(doc: dict) -> str:
    """The verdict in one line: PASS, FAIL or REFUSED, and what it counted."""
    sides = f"{doc['base']['name']} → {doc['head']['name']}"
    if doc["verdict"] == "refused":
        return f"cryptobench gate: REFUSED ({sides}): the runs' conditions differ, nothing was compared"
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


def info_lines(doc: dict) -> list[str]:
    """The libraries BASE → HEAD, the thresholds, and (refused) each difference in conditions."""
    out = []
    for lib in doc["libraries"]:
        line = f"{lib['name']} {lib['base'] or '(absent)'} → {lib['head'] or '(absent)'}"
        if "source_base" in lib:
            line += f" (source {lib['source_base'] or '—'} → {lib['source_head'] or '—'})"
        out.append(line)
    out.append("limits (growth allowed before a regression): "
               + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in doc["limits"].items())
               + "; deterministic figures (simulated cycles and instructions, stack, code size) compared exactly, "
               f"measured times by diff's test at alpha {doc['alpha']:g}")
    out += [f"refused: {why}" for why in doc["refusal"]]
    return out


def changes_table(doc: dict) -> Table:
    """A row per changed figure of each listed cell (and one per cell added, removed or failed)."""
    table = Table("changed cells", [Column("cell", LEFT), Column("metric", LEFT), Column("BASE"), Column("HEAD"),
                                    Column("change"), Column("verdict", LEFT, styled=True)])
    for r in doc["cells"]:
        if r["kind"] not in SHOWN:
            continue
        style = r["kind"] if r["kind"] in ("regression", "improvement") else "other"
        shown = [m for m in r["metrics"] if m["verdict"] != "same"]
        for m in shown:
            table.add([cell_name(r), m["metric"].replace("_", " "), num(m["base"]), num(m["head"]), change_text(m),
                       m["verdict"]], style=m["verdict"] if m["verdict"] in ("regression", "improvement") else "other")
        t = r["measured"]
        if t and t["kind"] in ("regression", "improvement"):
            table.add([cell_name(r), f"time ({t['estimator_b'] or 'median'})", f"{t['estimate_a_s']:.4g} s",
                       f"{t['estimate_b_s']:.4g} s", f"{t['change'] * 100:+.1f} % (p {t['p']:.2g})", t["verdict"]],
                      style=t["kind"])
        if not shown and not (t and t["kind"] in ("regression", "improvement")):
            table.add([cell_name(r), "—", "", "", "", r["verdict"]], style=style)
    return table


def function_table(rows: list[dict], ops_in_window: int) -> Table:
    """The functions whose cycles, instructions or calls changed, largest |Δcycles| first."""
    title = "functions by cycles" + (f" (the window holds {ops_in_window} operations)" if ops_in_window != 1 else "")
    table = Table(title, [Column("function", LEFT), Column("cycles BASE"), Column("cycles HEAD"), Column("Δ cycles"),
                          Column("Δ instructions"), Column("calls BASE"), Column("calls HEAD")])
    for f in rows:
        table.add([f["function"], num(f["cycles_base"]), num(f["cycles_head"]), signed(f["cycles_change"]),
                   signed(f["instructions_change"]), num(f["calls_base"]), num(f["calls_head"])])
    return table


def size_table(rows: list[dict]) -> Table:
    table = Table("functions by size", [Column("function", LEFT), Column("bytes BASE"), Column("bytes HEAD"),
                                        Column("Δ bytes")])
    for f in rows:
        table.add([f["function"], num(f["bytes_base"]), num(f["bytes_head"]), signed(f["bytes_change"])])
    return table


def attribution_parts(r: dict) -> tuple[list[Table], list[str]]:
    """A changed cell's attribution tables and notes."""
    a = r["attribution"]
    tables = []
    if a.get("functions") is not None:
        tables.append(function_table(a["functions"], a.get("ops_in_window", 1)))
    if a.get("sizes") is not None:
        tables.append(size_table(a["sizes"]))
    return tables, [a[k] for k in ("functions_note", "sizes_note") if a.get(k)]


def summary_text(r: dict) -> str:
    """A changed cell in one line: its name and each changed figure."""
    changes = [(f"{m['metric'].replace('_', ' ')} " if m["unit"] == "B" else "") + change_text(m)    # "+12 cycles"
               for m in r["metrics"] if m["verdict"] != "same"]
    return f"{cell_name(r)}: {r['verdict']}" + (" — " + ", ".join(changes) if changes else "")


def render_md(doc: dict, out) -> None:
    """Markdown for a pull-request comment: a bold headline, the libraries and limits, the table of
    changed cells, and per changed cell a collapsible <details> with its functions."""
    esc = lambda t: markdown_escape(printable(t, keep_newlines=False))       # noqa: E731
    md = Markdown(heading=None, escape=esc, prose=esc)
    out.write(f"**{esc(headline(doc))}**\n\n")
    out.write("".join(f"- {esc(line)}\n" for line in info_lines(doc)) + "\n")
    if doc["verdict"] == "refused":
        return
    table = changes_table(doc)
    if not table.rows:
        out.write("No cell changed.\n")
        return
    out.write(md.render(table) + "\n")
    for r in doc["cells"]:
        tables, notes = attribution_parts(r)
        if not (tables or notes):
            continue
        out.write(f"<details><summary>{esc(summary_text(r))}</summary>\n\n")
        out.write("".join(md.render(t, caption=t.title) + "\n" for t in tables))
        out.write("".join(f"- {esc(n)}\n" for n in notes) + ("\n" if notes else ""))
        out.write("</details>\n\n")


def render_terminal(doc: dict, out) -> None:
    console = console_for(out)
    print_lines(console, [headline(doc)], style="bold")
    print_lines(console, info_lines(doc))
    if doc["verdict"] == "refused":
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

"""One table model for every command's output, and the renderers that print it.

A command builds `Table`s: a title, columns (header text, alignment, unit of the raw values), rows
of cell text already formatted (with the raw values behind them where the builder has them, and
an optional style word such as "regression"), and notes printed under the table. It never writes
a format itself. The renderers:

  terminal  terminal.print_table(console, table): a rich table and its notes, dim, fitted to the
            console's width without cutting a cell (terminal.console_for(out) makes the one
            console every command prints on)
  Markdown  Markdown(...).render(table)       GitHub pipe tables
  CSV       Csv(...).render(table)            a header line and a line per row
  LaTeX     Latex().render(table, caption, label)   a booktabs table
  JSON      to_json(tables) / as_dict(table)  the model itself, raw values included

Markdown, CSV and LaTeX are line formats that differ only in a table's pieces: `Markup.render`
puts begin (a title; a tabular environment), header, divider, rows and end (notes; a caption)
together, and each format supplies only the pieces it has (the arrangement of hyperfine's
MarkupExporter). Every piece returns finished text, line ends included.

Escaping is the renderer's, chosen by whoever prints: `markdown_escape` and `latex_escape` make
any run text (a label, a device name) inert in the report's files; command output escapes the
pipes of Markdown cells so that a cell cannot split a row (`escape_pipes`).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .printable import printable, printable_json, without_local_paths

LEFT, RIGHT = "left", "right"

# what a row's style word looks like in the terminal (cells of `styled` columns only)
STYLES = {"regression": "bold red", "improvement": "green", "unchanged": "", "other": "yellow"}


# ------------------------------------------------------------------------------------ the model
@dataclass(frozen=True)
class Column:
    label: str                 # the header as printed
    align: str = RIGHT         # LEFT or RIGHT
    unit: str = ""             # unit of the column's raw values, where they have one
    styled: bool = False       # the terminal prints this column's cells in their row's style
    group: str = ""            # columns of one group (an engine's time and RSD) stay side by side
                               # when a narrow terminal splits the table (print_table)


@dataclass
class Row:
    cells: list[str]           # formatted text, one per column
    values: list | None = None  # the raw values behind the cells (numbers, None), when known
    style: str = ""            # a word of STYLES, or ""


@dataclass
class Table:
    title: str
    columns: list[Column]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    key: str = ""              # what the table is of: an op id, "summary", "crossover", …

    @property
    def headers(self) -> list[str]:
        return [c.label for c in self.columns]

    @property
    def cells(self) -> list[list[str]]:
        return [r.cells for r in self.rows]

    def printable(self, newlines_in_cells: bool = False) -> "Table":
        """A copy whose every text (title, headers, cells, notes) shows control characters as
        visible escapes: what every renderer prints (printable.py). A CSV cell may keep its line
        breaks (the csv module quotes them); elsewhere they are shown as \\n."""
        p = lambda t: printable(t, keep_newlines=False)
        cell = lambda t: printable(t, keep_newlines=newlines_in_cells)
        return Table(p(self.title), [Column(p(c.label), c.align, c.unit, c.styled, c.group) for c in self.columns],
                     [Row([cell(t) for t in r.cells], r.values, r.style) for r in self.rows],
                     [p(n) for n in self.notes], self.key)

    def add(self, cells: Sequence[str], values: Sequence | None = None, style: str = "") -> Row:
        """Append a row; it must have a cell (and a value, when given) per column."""
        if len(cells) != len(self.columns) or (values is not None and len(values) != len(self.columns)):
            raise ValueError(f"table {self.title!r}: a row of {len(cells)} cells for {len(self.columns)} columns")
        row = Row([str(c) for c in cells], None if values is None else list(values), style)
        self.rows.append(row)
        return row


def columns(labels: Iterable[str], left: int = 1, units: Sequence[str] | None = None) -> list[Column]:
    """Columns whose first `left` are aligned left (names, parameters) and the rest right (numbers)."""
    labels = list(labels)
    units = list(units) if units is not None else [""] * len(labels)
    return [Column(label, LEFT if i < left else RIGHT, unit) for i, (label, unit) in enumerate(zip(labels, units))]


def csv_text(value: Any) -> str:
    """A raw value as a cell: as csv.writer writes it (None empty, numbers as str gives them)."""
    return "" if value is None else value if isinstance(value, str) else str(value)


def data_table(title: str, names: Sequence[str], records: Iterable[Sequence], text=csv_text) -> Table:
    """A table of raw values, one column per name and one row per record (the data CSVs)."""
    table = Table(title, [Column(n, LEFT) for n in names])
    for values in records:
        table.add([text(v) for v in values], values)
    return table


# ------------------------------------------------------------------------------------ escaping
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
# Characters pdfLaTeX does not take as UTF-8 input without extra packages
_LATEX_UNICODE = {"µ": r"\textmu{}", "×": r"$\times$", "–": "--", "—": "---", "†": r"\dag{}", "·": r"\textperiodcentered{}",
                  "≥": r"$\geq$", "≤": r"$\leq$", "±": r"$\pm$", "⇄": r"$\rightleftarrows$", "…": r"\ldots{}",
                  "°": r"\textdegree{}", "→": r"$\to$"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch) or _LATEX_UNICODE.get(ch) or ch for ch in str(text))


# plain text that GitHub or GitLab would read as markup: the characters that open a link, an
# image, emphasis, strikethrough, code or a table cell (backslash-escaped: CommonMark shows an
# escaped punctuation character as itself), and what their reference and autolink filters find in
# rendered text, where a backslash no longer is (an @mention, #123, !1, $1, ~label, a bare URL or
# address): those get a zero-width space after their first character, as GitHub's own bots write them
# (an '@' or '#' then reads as written, and no filter finds a name or a number right after it)
_MD_PUNCTUATION = re.compile(r"([\\`*_\[\]~|])")
_MD_LIVE = re.compile(r"(?<=[@#!$%~])(?=[\w-])|(?<=\w:)(?=//)|(?<=www)(?=\.)", re.I)
_ZWSP = "\u200b"


def markdown_escape(text: str) -> str:
    """A text as inert Markdown (a table cell, a heading, a list item): on one line, shown as
    written, and unable to link, embed, mention, reference or format. HTML-looking text is made
    inert with entities, `&` too (an entity such as &#64; would otherwise spell an '@')."""
    text = printable(str(text), keep_newlines=False).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_LIVE.sub(_ZWSP, _MD_PUNCTUATION.sub(r"\\\1", text))


_BACKTICKS = re.compile("`+")


def markdown_inert(text: object, in_table: bool = False) -> str:
    """Text that others chose (a function, version, label, path, error message, engine name) as
    Markdown that can neither link, embed, mention nor format: one inline code span whose fence is
    longer than any run of backticks in the text. GFM makes no link, image, autolink, emphasis,
    HTML, @mention or #123 / !1 / ~label reference inside a code span, and a backslash there is
    literal. Control characters are shown as escapes and a newline as \\n (a code span cannot
    hold a line), absolute local paths as their last component; in a pipe-table cell each `|` is
    written `\\|`, which GFM's table splits on first (and cmark-gfm shows as `|` in the span)."""
    shown = without_local_paths(printable(str(text), keep_newlines=False))
    if in_table:
        shown = shown.replace("|", "\\|")
    if not shown:
        return ""
    fence = "`" * (max(map(len, _BACKTICKS.findall(shown)), default=0) + 1)
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""      # one space each side is stripped
    return f"{fence}{pad}{shown}{pad}{fence}"


def html_inert(text: object) -> str:
    """markdown_inert for raw HTML (a <summary>): the text HTML-escaped in a <code> element, which
    GitHub's and GitLab's mention and reference filters skip."""
    shown = without_local_paths(printable(str(text), keep_newlines=False))
    return "<code>" + shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;") \
        + "</code>"


def escape_pipes(text: str) -> str:
    """A Markdown cell of command output: only its pipes escaped, so that it stays one cell."""
    return str(text).replace("|", "\\|")


def _as_is(text: str) -> str:
    return str(text)


# ------------------------------------------------------------------------------------ line formats
class Markup:
    """A line format: `render` puts the pieces together; a format overrides the ones it has."""

    def begin(self, table: Table, caption: str | None) -> str:
        return ""

    def header(self, table: Table) -> str:
        return ""

    def divider(self, table: Table) -> str:
        return ""

    def row(self, table: Table, row: Row) -> str:
        raise NotImplementedError

    def end(self, table: Table, caption: str | None, label: str | None) -> str:
        return ""

    def body(self, table: Table) -> str:
        """Header, divider and rows: the table without what comes before and after it."""
        return self.header(table) + self.divider(table) + "".join(self.row(table, r) for r in table.rows)

    newlines_in_cells = False      # Csv: True

    def render(self, table: Table, caption: str | None = None, label: str | None = None) -> str:
        table = table.printable(self.newlines_in_cells)
        caption = printable(caption, keep_newlines=False) if caption is not None else None
        return self.begin(table, caption) + self.body(table) + self.end(table, caption, label)


class Markdown(Markup):
    """GitHub pipe tables: `heading` before the title ("##"; None: no title), `escape` for header
    and body cells, `prose` for the title, caption and notes (the report's files pass
    markdown_escape for both). The divider right-aligns the columns aligned right."""

    def __init__(self, heading: str | None = "##", escape: Callable[[str], str] = escape_pipes,
                 prose: Callable[[str], str] = _as_is):
        self.heading, self.escape, self.prose = heading, escape, prose

    def _line(self, texts: Iterable[str]) -> str:
        return "| " + " | ".join(self.escape(t) for t in texts) + " |\n"

    def begin(self, table, caption):
        title = f"{self.heading} {self.prose(table.title)}\n\n" if self.heading else ""
        return title + (f"{self.prose(caption)}\n\n" if caption else "")

    def header(self, table):
        return self._line(table.headers)

    def divider(self, table):
        return "|" + "|".join("---:" if c.align == RIGHT else "---" for c in table.columns) + "|\n"

    def row(self, table, row):
        return self._line(row.cells)

    def end(self, table, caption, label):
        return "\n" + "".join(f"- {self.prose(n)}\n" for n in table.notes) if table.notes else ""


# A spreadsheet reads a cell that begins with one of these as a formula (or, TAB and CR, as the
# start of one after it trims them): `=HYPERLINK(…)` in a run label would run when the CSV is opened.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# a number as csv_text writes one (str of an int or float), or a signed percentage of a table
# ("-12.5 %"): a spreadsheet reads it as that number, never as a formula
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?( ?%)?")


def spreadsheet_safe(text: str) -> str:
    """A CSV cell that no spreadsheet reads as a formula (OWASP's CSV injection rule): text that
    begins with = + - @ TAB or CR gets a leading single quote, which spreadsheets show as text;
    a number (-1.5e-07, -12.5 %) stays a number."""
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


class Csv(Markup):
    """A header line of column labels and a line per row of cells; with `title_column`, a first
    column of that name holds each row's table title (several tables in one file). Every cell,
    header and title passes `spreadsheet_safe`: every CSV cryptobench writes (export, show,
    compare, diff, the report's tables) opens in a spreadsheet as data."""
    newlines_in_cells = True

    def __init__(self, lineterminator: str = "\r\n", title_column: str | None = None):
        self.lineterminator, self.title_column = lineterminator, title_column

    def _record(self, items: Sequence[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator=self.lineterminator).writerow([spreadsheet_safe(t) for t in items])
        return buf.getvalue()

    def rows_text(self, table: Table) -> str:
        """The table's rows alone (no header): the lines a streamed export appends batch by batch."""
        table = table.printable(self.newlines_in_cells)
        return "".join(self.row(table, r) for r in table.rows)

    def header(self, table):
        return self._record(([self.title_column] if self.title_column else []) + table.headers)

    def row(self, table, row):
        return self._record(([table.title] if self.title_column else []) + row.cells)


class Latex(Markup):
    """A booktabs table (\\usepackage{booktabs}): the caption (the title, then `caption`), the
    label and the notes below it; every text escaped."""

    @staticmethod
    def _line(texts: Iterable[str]) -> str:
        return " & ".join(latex_escape(t) for t in texts) + " \\\\\n"

    def begin(self, table, caption):
        spec = "".join("r" if c.align == RIGHT else "l" for c in table.columns)
        return "\\begin{table}[htbp]\n\\centering\n\\small\n" f"\\begin{{tabular}}{{{spec}}}\n\\toprule\n"

    def header(self, table):
        return self._line(table.headers)

    def divider(self, table):
        return "\\midrule\n"

    def row(self, table, row):
        return self._line(row.cells)

    def end(self, table, caption, label):
        text = latex_escape(table.title) + (". " + latex_escape(caption) if caption else "")
        out = ["\\bottomrule", "\\end{tabular}", f"\\caption{{{text}}}"]
        if label:
            out.append(f"\\label{{tab:{re.sub(r'[^a-z0-9-]', '-', label.lower())}}}")
        if table.notes:
            out.append("\\par\\footnotesize " + " \\\\ ".join(latex_escape(n) for n in table.notes))
        return "\n".join(out + ["\\end{table}"]) + "\n"


# ------------------------------------------------------------------------------------ JSON
def as_dict(table: Table) -> dict:
    """The table as plain data: columns with alignment and unit, rows with cells (and raw values
    and style where they have them), notes."""
    rows = []
    for r in table.rows:
        row: dict = {"cells": r.cells}
        if r.values is not None:
            row["values"] = r.values
        if r.style:
            row["style"] = r.style
        rows.append(row)
    return {"title": table.title, "key": table.key,
            "columns": [{"label": c.label, "align": c.align, "unit": c.unit, **({"group": c.group} if c.group else {})}
                        for c in table.columns],
            "rows": rows, "notes": table.notes}


def to_json(tables: Sequence[Table]) -> str:
    return printable_json(json.dumps([as_dict(t) for t in tables], indent=1, ensure_ascii=False, default=str))

"""Tables on a terminal of any width >= 80 columns, without cutting a name or a number.

rich shortens a cell with "…" when a table is wider than the console. `print_table` never lets it:
it gives every column an explicit width that its longest cell fits in, and when the columns do
not fit side by side it

  1. lets left-aligned text (names, parameters) and headers wrap at spaces,
  2. splits the table into parts that each repeat the leading key columns (the parameters that
     name a row) and carry whole column groups (an engine's time and RSD stay together; the
     Improvement columns, one group coming last, go to a later part: "ratio columns in a second
     table"; a group wider than the terminal is split into its columns),
  3. and only where one group beside the keys is still too wide, prints each row as a record:
     a line naming it, then "label: value" lines (psql's expanded display).

Numbers are never wrapped: a right-aligned cell is as wide as its text.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

from ..core.printable import PrintableLines, printable
from ..core.table import LEFT, STYLES, Column, Table


def _words(text: str) -> list[str]:
    return text.split() or [""]


def _longest_word(text: str) -> int:
    return max(cell_len(w) for w in _words(text))


@dataclass
class _Widths:
    full: list[int]    # each column on one line: its longest cell or header
    least: list[int]   # the narrowest it may be: numbers whole, text and headers wrapped at spaces


def _widths(table: Table) -> _Widths:
    full, least = [], []
    for i, col in enumerate(table.columns):
        cells = [r.cells[i] for r in table.rows]
        full.append(max([cell_len(col.label)] + [cell_len(c) for c in cells]))
        wrap = col.align == LEFT
        least.append(max([_longest_word(col.label)] + [_longest_word(c) if wrap else cell_len(c) for c in cells]))
    return _Widths(full, least)


def _frame(n: int) -> int:
    """Columns rich spends on borders and padding around n columns: '│ ' + ' │ ' … + ' │'."""
    return 3 * n + 1


def column_widths(table: Table, width: int) -> list[int] | None:
    """A width for each column so that the table fits in `width` with no cell cut; None where
    even wrapped at spaces it does not fit. Spare room goes first to text cells (so names stay on
    one line), then to headers."""
    w = _widths(table)
    room = width - _frame(len(table.columns))
    if sum(w.least) > room:
        return None
    if sum(w.full) <= room:
        return w.full
    out = list(w.least)
    spare = room - sum(out)
    # text cells whole first, then headers whole, narrowest need first
    cell_full = [max([w.least[i]] + [cell_len(r.cells[i]) for r in table.rows]) for i in range(len(out))]
    for target in (cell_full, w.full):
        for i in sorted(range(len(out)), key=lambda i: target[i] - out[i]):
            grow = min(max(0, target[i] - out[i]), spare)
            out[i] += grow
            spare -= grow
    return out


def _key_count(table: Table) -> int:
    """The leading left-aligned columns: what names a row (parameters, an operation, an engine)."""
    n = 0
    for col in table.columns:
        if col.align != LEFT or n == len(table.columns) - 1:
            break
        n += 1
    return n


def _units(columns: list[Column], start: int) -> list[list[int]]:
    """The column indices from `start` on, in runs that stay together: consecutive columns of one
    non-empty group, every other column on its own."""
    units: list[list[int]] = []
    for i in range(start, len(columns)):
        g = columns[i].group
        if units and g and columns[units[-1][-1]].group == g:
            units[-1].append(i)
        else:
            units.append([i])
    return units


def _subtable(table: Table, idx: list[int], title: str) -> Table:
    out = Table(title, [table.columns[i] for i in idx], key=table.key)
    for r in table.rows:
        out.add([r.cells[i] for i in idx], None if r.values is None else [r.values[i] for i in idx], r.style)
    return out


def split_to_fit(table: Table, width: int) -> list[Table] | None:
    """The table as parts that each fit in `width`, every part repeating the key columns; None
    where a single column group beside the keys does not fit."""
    if column_widths(table, width) is not None:
        return [table]
    keys = list(range(_key_count(table)))
    fits = lambda idx: column_widths(_subtable(table, keys + idx, ""), width) is not None
    parts: list[list[int]] = []
    for unit in _units(table.columns, len(keys)):
        # a group too wide for one part is split into its columns; a column too wide: records
        whole = fits(unit)
        for n, piece in enumerate([unit] if whole else [[i] for i in unit]):
            if parts and (whole or n > 0) and fits(parts[-1] + piece):
                parts[-1] += piece
            elif fits(piece):
                parts.append(list(piece))
            else:
                return None
    n = len(parts)
    return [_subtable(table, keys + p, table.title if i == 0 else f"{table.title} ({i + 1}/{n})" if table.title
                      else f"({i + 1}/{n})")
            for i, p in enumerate(parts)]


def _print_rich(console, table: Table, widths: list[int], styles: dict) -> None:
    from rich.table import Table as RichTable
    from rich.text import Text
    # every text as Text: run text such as "[/]" in a label is printed, never read as rich markup
    out = RichTable(title=Text(table.title) if table.title else None, title_justify="left", show_lines=False)
    for col, w in zip(table.columns, widths):
        # the width fits every right-aligned cell whole, so only text and headers wrap
        out.add_column(Text(col.label), justify=col.align, width=w, overflow="fold")
    for row in table.rows:
        out.add_row(*(Text(text, style=styles.get(row.style, "") if col.styled else "")
                      for col, text in zip(table.columns, row.cells)))
    console.print(out)


def _print_records(console, table: Table) -> None:
    """Each row as a record: the key columns on one line, then 'label: value' per other column."""
    from rich.text import Text
    keys = _key_count(table)
    if table.title:
        console.print(Text(table.title))
    for row in table.rows:
        head = " · ".join(f"{c.label} {t}" for c, t in zip(table.columns[:keys], row.cells[:keys]))
        console.print(Text(f"─ {head}" if head else "─", style="bold"))
        for col, text in zip(table.columns[keys:], row.cells[keys:]):
            console.print(Text(f"  {col.label}: {text}"), overflow="fold")


def console_for(out):
    """The rich console every command prints on: the terminal's width on a terminal; into a file
    or pipe $COLUMNS where it is set, else 200 columns."""
    import os
    from rich.console import Console
    if isinstance(out, PrintableLines):
        out = out.raw                  # the console's own codes pass; its tables are printable already
    console = Console(file=out)
    if console.is_terminal:
        return console
    columns = os.environ.get("COLUMNS", "")
    return Console(file=out, width=int(columns) if columns.isdigit() and int(columns) >= 40 else 200)


def print_lines(console, lines, style: str | None = None) -> None:
    """Lines of text as they are: no markup, no highlighting."""
    for line in lines:
        console.print(printable(line), style=style, highlight=False, markup=False)


def print_table(console, table: Table, styles: dict | None = None) -> None:
    """The table (title above, left-justified) and its notes, indented and dim; split into parts,
    or printed as records, where the console is too narrow for it whole (module docstring)."""
    styles = STYLES if styles is None else styles
    table = table.printable()
    parts = split_to_fit(table, console.width)
    if parts is None:
        _print_records(console, table)
    else:
        for part in parts:
            _print_rich(console, part, column_widths(part, console.width), styles)
    print_lines(console, (f"  {n}" for n in table.notes), style="dim")

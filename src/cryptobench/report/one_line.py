"""A listing whose every row stays on one line at any width >= 40 columns: columns separated by two
spaces, and where the rows are wider than the terminal the text columns named shrinkable give up
characters (ending in "…"), in the order given, down to their floor; the rest are never cut (an id,
a count, a date). `list runs` prints its runs this way: a run that wraps over many lines hides the
ones beside it."""
from __future__ import annotations

from rich.cells import cell_len, set_cell_size

from ..core.printable import printable

GAP = 2                   # spaces between columns


def cut(text: str, width: int) -> str:
    """`text` in at most `width` cells, ending in "…" where cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(width - 1, 0)) + "…" if width > 0 else ""


def fitted_widths(widths: list[int], floors: list[tuple[int, int]], total: int) -> list[int]:
    """Each column's width so that they fit in `total` with the gaps, shrinking the columns of
    `floors` ((index, narrowest) in the order to shrink; an index may come again with a lower floor)
    as little as needed."""
    out = list(widths)
    over = sum(out) + GAP * (len(out) - 1) - total
    for i, floor in floors:
        if over <= 0:
            break
        give = min(over, max(out[i] - floor, 0))
        out[i] -= give
        over -= give
    return out


def one_line_rows(header: list[str], rows: list[list[str]], right: set[int], floors: list[tuple[int, int]],
                  total: int) -> list[str]:
    """The header and each row on one line in `total` columns (printable, no line breaks)."""
    rows = [[printable(c, keep_newlines=False) for c in r] for r in rows]
    widths = [max(cell_len(r[i]) for r in [header] + rows) for i in range(len(header))]
    widths = fitted_widths(widths, floors, total)
    lines = []
    for r in [header] + rows:
        cells = [cut(c, w) for c, w in zip(r, widths)]
        cells = [" " * (w - cell_len(c)) + c if i in right else c + " " * (w - cell_len(c))
                 for i, (c, w) in enumerate(zip(cells, widths))]
        lines.append((" " * GAP).join(cells).rstrip())
    return lines

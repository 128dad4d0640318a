"""The report's table files: each `Table` (core/table.py) as Markdown, CSV and LaTeX text. Every
text is escaped for its format: run text (labels, device names, library versions) is data, never
markup."""
from __future__ import annotations

import re

# the escapes are this module's API too
from ..core.table import Csv, Latex, Markdown, Table, latex_escape, markdown_escape  # noqa: F401

_MARKDOWN = Markdown(heading="###", escape=markdown_escape, prose=markdown_escape)


def to_markdown(table: Table, caption: str | None = None) -> str:
    return _MARKDOWN.render(table, caption)


def to_csv(table: Table) -> str:
    return Csv().render(table)


def to_latex(table: Table, caption: str | None = None, label: str | None = None) -> str:
    """A booktabs table (\\usepackage{booktabs}); the caption and notes below it."""
    return Latex().render(table, caption, label)


def slug(text: str, limit: int = 60) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    return s[:limit].rstrip("-") or "table"

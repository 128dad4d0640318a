"""Reports from stored runs: tables laid out as the studies print them (tables.py, built on the table
model and renderers of table.py) in the terminal, Markdown, CSV and JSON; the HTML report with its
figures (html.py, figures/) and table files (table_files.py)."""
from .tables import (CSV_COLUMNS, build_tables, conditions_lines, fmt_num, pick_unit, render_csv,  # noqa: F401
                     render_json, render_markdown, render_rich)

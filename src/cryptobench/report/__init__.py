"""Reports from stored runs: tables laid out as the studies print them (tables.py) in the terminal,
Markdown, CSV and JSON; the HTML report with its figures (html.py, figures/) and table files (table_files.py)."""
from .tables import render_csv, render_json, render_markdown, render_rich  # noqa: F401  (cli.show uses them)

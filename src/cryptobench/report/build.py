"""The HTML report of stored runs (`cryptobench report`): its figures and table files.

DIR/report.html        one self-contained file (figures embedded as SVG data: URIs, no script, no network)
DIR/figures/ID.png|svg every figure on its own, for papers and slides
DIR/tables/*.md|csv|tex every table on its own; tables.md and tables.tex hold them all
"""
from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

from .. import __version__
from ..core.errors import UsageError
from ..core.extras import require
from ..core.files import atomic_file, write_atomic
from ..store.database import now
from ..core.quantity import fmt_num
from ..catalog.ops import OPS
from ..core.records import Run, outcome
from .html import render_pieces, run_tables_html
from ..core.table import Table, columns
from .table_files import latex_escape, markdown_escape, slug, to_csv, to_latex, to_markdown
from ..analysis.relative import relative, relative_tables, run_engines
from .captions import conditions_caption
from .series import Sweeps
from .tables import build_tables, conditions_lines


def check_baseline(runs: list[Run], baseline: str | None, engines_of=None) -> None:
    """--baseline names an engine of the runs; `engines_of(run_id)`: the engines its cells name,
    for runs loaded without their cells (default: the run's own cells)."""
    if not baseline:
        return
    engines = sorted({e for r in runs for e in run_engines(r)}
                     | ({e for r in runs for e in engines_of(r.id)} if engines_of else set()))
    if baseline not in engines:
        raise UsageError(f"--baseline: '{baseline}' is not an engine of run(s) "
                         f"{', '.join(str(r.id) for r in runs)}: {', '.join(engines)}")


def _figure_bytes(fig) -> tuple[bytes, bytes]:
    """PNG (for files and slides) and SVG with text kept as text (small; embedded in the HTML)."""
    import matplotlib
    png, svg = io.BytesIO(), io.BytesIO()
    fig.fig.savefig(png, format="png", dpi=150)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": fig.id}):
        fig.fig.savefig(svg, format="svg", metadata={"Date": None})
    return png.getvalue(), svg.getvalue()


def _write(path: Path, data: bytes | str) -> None:
    write_atomic(path, data, "--out")


def _run_heading(run: Run) -> str:
    label = run.plan.label
    what = run.suite or ("trace import" if "trace" in run.conditions else "ad hoc")
    return f"Run {run.id}" + (f" “{label}”" if label else "") + f" — {what}, {run.created}"


def _run_tables(run: Run, baseline: str | None, references=()) -> tuple[list[Table], list[str]]:
    """The run's tables, and a line per operation left out. An operation no engine measured (every
    cell unsupported or failed) gets no table: it would be a table of lengths only. A relative table
    without a single ratio (e.g. the baseline lacks the operation) is left out the same way."""
    measured = {c.op for c in run.cells if c.ok}
    tables = [t for t in build_tables(run, references) if t.key not in OPS or t.key in measured]
    skipped = [_skipped_line(run, op) for op in dict.fromkeys(c.op for c in run.cells) if op not in measured]
    base = baseline if baseline in run_engines(run) else run.plan.baseline
    if base and base in run_engines(run) and len(run_engines(run)) > 1:
        view = relative(run, base)
        ratios = {r["op"] for r in view["rows"] if r["time_ratio"] is not None or r["energy_ratio"] is not None}
        for t in relative_tables(run, base, view):           # titled "Relative to BASE: …" already
            if t.key in ratios:
                tables.append(t)
            elif t.key in measured:
                skipped.append(f"no relative table for {OPS[t.key].title}: no engine has a ratio to {base}")
    return tables, skipped


def _skipped_line(run: Run, op_id: str) -> str:
    """Why an operation has no table: what became of its cells, with the reasons given."""
    cells = [c for c in run.cells if c.op == op_id]
    whys = list(dict.fromkeys(f"{outcome(c)}{' — ' + c.detail if c.detail else ''}" for c in cells))
    more = f"; and {len(whys) - 2} other reason(s)" if len(whys) > 2 else ""
    return (f"no table for {OPS[op_id].title}: no engine measured it ({len(cells)} cell(s): "
            + "; ".join(whys[:2]) + more + ")")


def _crossover_table(rows: list[dict]) -> Table | None:
    from .figures.crossover import drawn
    if not rows:
        return None

    def length(r, what):
        if r.get(f"{what}_x") is None:
            return "—"
        if not drawn(r.get(what)):
            return "not resolved"
        lo, hi = r.get(f"{what}_lo"), r.get(f"{what}_hi")
        return fmt_num(r[f"{what}_x"]) + (f" [{fmt_num(lo)}–{fmt_num(hi)}]" if lo is not None and hi is not None else "")

    energy = any(r.get("energy_text") for r in rows)
    labels = ["run", "operation", "parameters", "A (baseline)", "B", "time: crossover B", "time"]
    labels += ["energy: crossover B", "energy"] if energy else []
    table = Table("Crossover lengths (bytes) between each engine B and the baseline A", columns(labels),
                  notes=["provenance: modeled — where the lines through the measured medians cross; the interval "
                         "in brackets uses the 95 % CI bounds of both curves (analysis/models/crossover.py, docs/models.md)",
                         "not resolved: the 95 % CIs allow the crossover anywhere in the measured range or none "
                         "at all, so no length is given (nor drawn in the figure)"],
                  key="crossover")
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in (r.get("params") or {}).items())
        row = [str(r["run"]), r["title"], params, r["a"], r["b"], length(r, "time"), r.get("time_text") or ""]
        if energy:
            row += [length(r, "energy"), r.get("energy_text") or ""]
        table.add(row)
    return table


def build_report(runs: list[Run], out_dir: Path, baseline: str | None = None, title: str | None = None,
                 progress=None, references: list | tuple = (), cells_of=None, history: list | tuple = ()) -> dict:
    """Writes everything into out_dir; returns a summary {html, figures: [...], tables: [...]} of the
    paths written. `runs` may come without their cells and `cells_of(run)` give them (the store reads
    them a run at a time: Store.iter_cells): one run's cells are held at a time, each figure is
    written and dropped as it is drawn, and the page is written a piece at a time, so memory does
    not grow with the runs (only the sweep figures' points do, a few numbers per cell). `history`:
    the series (analysis/history.py) of `report --history OP`, a figure each."""
    require("matplotlib", "figures", "the HTML report's figures (cryptobench report)")
    fig_dir, tab_dir = out_dir / "figures", out_dir / "tables"
    fig_dir.mkdir(parents=True, exist_ok=True)
    tab_dir.mkdir(parents=True, exist_ok=True)
    step = progress or (lambda what, total=None: None)
    cells_of = cells_of or (lambda run: run.cells)
    figures, files = _FigureFiles(fig_dir, step), _TableFiles(tab_dir)
    sweeps = [Sweeps(metric, len(runs)) for metric in ("time", "energy", "cycles")]
    spool = out_dir / ".run-tables.html.part"       # the runs' table sections, until the page is written
    sections, crossings = [], []
    try:
        with open(spool, "w", encoding="utf-8") as tables_html:
            for i, head in enumerate(runs):
                step(f"run {head.id} ({i + 1}/{len(runs)}): tables and figures", len(runs))
                section, rows = _one_run(replace(head, cells=list(cells_of(head))), baseline, files, figures, sweeps,
                                        references)
                tables_html.write(run_tables_html(section))
                sections.append({**section, "tables": [], "n_tables": len(section["tables"])})
                crossings += rows
        extra = _across_runs(runs, sweeps, crossings, figures, files, references, step)
        if history:
            from .figures import history_figures
            for f in history_figures(list(history), figures.used):
                figures.add(f)
        files.write_collections()
        step("writing report.html")
        doc = _document(runs, title, len(figures.shown), sections, figures.shown, extra)
        with atomic_file(out_dir / "report.html") as f:
            for piece in render_pieces({**doc, "tables_html": spool}):
                f.write(piece.encode("utf-8"))
    finally:
        spool.unlink(missing_ok=True)
        files.discard()
    return {"html": out_dir / "report.html", "figures": figures.written, "tables": files.written,
            "n_figures": len(figures.shown), "n_tables": len(files.written) // 3}


def _one_run(run: Run, baseline: str | None, files: "_TableFiles", figures: "_FigureFiles",
             sweeps: list, references=()) -> tuple[dict, list[dict]]:
    """One run, its cells loaded: its tables written, its own figures drawn and written, its points
    added to the sweeps. Returns its section of the page (its tables with it) and its crossover rows."""
    from .figures import run_figures
    from .figures.crossover import crossover_groups
    from .figures.heatmap import baseline_runs
    caption = conditions_caption(run)
    run_tables, skipped = _run_tables(run, baseline, references)
    files.begin_run(_run_heading(run), caption, skipped)
    # a table's own files carry the run's conditions; the page and the collections say them once per
    # run, and each table there only names its run
    tables = [files.emit(t, f"run{run.id}", caption, f"Run {run.id} (its conditions are listed once, above).")
              for t in run_tables]
    for sweep in sweeps:
        sweep.add(run, caption)
    cache: dict = {}
    for f in run_figures(run, baseline, figures.used, cache):
        figures.add(f)
    rows = [row for _, b, _ in baseline_runs([run], baseline) for g in crossover_groups(run, b, cache)
            for row in g["rows"]]
    return ({"id": run.id, "heading": _run_heading(run), "conditions": conditions_lines(run), "tables": tables,
             "skipped": skipped}, rows)


def _across_runs(runs: list[Run], sweeps: list, crossings: list[dict], figures: "_FigureFiles",
                 files: "_TableFiles", references, step) -> list[dict]:
    """What draws on every run: the sweep figures (written) and the crossover table (returned, as
    the page's extra tables)."""
    from .figures import figures_of_sweeps
    step("figures over all runs")
    for sweep in sweeps:
        for f in figures_of_sweeps(sweep, figures.used, references):
            figures.add(f)
    cross = _crossover_table(crossings)
    if not cross:
        return []
    files.begin_run("All runs", "", [])
    return [files.emit(cross, "crossover", "Runs " + ", ".join(str(r.id) for r in runs))]


class _FigureFiles:
    """The report's figure files: each figure as PNG and SVG under fig_dir as soon as it is drawn
    (then its matplotlib figure is dropped); the page reads the SVG back when it is written."""

    def __init__(self, fig_dir: Path, step):
        self.fig_dir, self.step = fig_dir, step
        self.used: set = set()                 # figure ids taken (style.unique_id)
        self.written: list[Path] = []
        self.shown: list[dict] = []            # the figures as the page shows them, in KINDS order when read

    def add(self, f) -> None:
        from .figures import KINDS
        self.step(f"figure {len(self.shown) + 1}: {f.id}")
        png, svg = _figure_bytes(f)
        f.fig.clear()
        f.fig = None
        _write(self.fig_dir / f"{f.id}.png", png)
        _write(self.fig_dir / f"{f.id}.svg", svg)
        self.written += [self.fig_dir / f"{f.id}.png", self.fig_dir / f"{f.id}.svg"]
        self.shown.append({"id": f.id, "kind": f.kind, "title": f.title, "caption": f.caption,
                           "provenance": f.provenance, "image_path": self.fig_dir / f"{f.id}.svg",
                           "mime": "image/svg+xml", "files": [f"figures/{f.id}.png", f"figures/{f.id}.svg"]})
        self.shown.sort(key=lambda d: KINDS.index(d["kind"]))      # stable: drawing order within a kind


class _TableFiles:
    """The report's table files: each table as .md, .csv and .tex under a unique stem, and the
    collections tables.md and tables.tex of them all (written as they grow, renamed at the end)."""

    def __init__(self, tab_dir: Path):
        self.tab_dir = tab_dir
        self.written: list[Path] = []
        self.seen: set[str] = set()
        self.md = open(tab_dir / ".tables.md.part", "w", encoding="utf-8")
        self.tex = open(tab_dir / ".tables.tex.part", "w", encoding="utf-8")
        self.tex.write("% \\usepackage{booktabs}\n")
        self.first = True

    def _collect(self, md: str, tex: str) -> None:
        """One more piece of each collection (pieces apart by a line break, as they always were)."""
        sep = "" if self.first else "\n"
        self.md.write(sep + md)
        self.tex.write(sep + tex)
        self.first = False

    def begin_run(self, heading: str, conditions: str, skipped: list[str]) -> None:
        """A run's heading, conditions and left-out operations, once, before its tables in the collections."""
        notes = "".join(f"- {markdown_escape(n)}\n" for n in skipped)
        self._collect(f"## {markdown_escape(heading)}\n\n" + (f"{markdown_escape(conditions)}\n" if conditions else "")
                      + (f"\n{notes}" if notes else ""),
                      f"\\paragraph{{{latex_escape(heading)}}} {latex_escape(conditions)}"
                      + "".join(f" {latex_escape(n)}." for n in skipped) + "\n")

    def emit(self, table: Table, prefix: str, caption: str, short: str | None = None) -> dict:
        """Writes one table's files (with `caption`); adds it to the collections with `short` (the run's
        conditions stand once above its tables there). Returns the table as the HTML shows it."""
        stem = f"{prefix}-{slug(table.title)}"
        n = 2
        while stem in self.seen:
            stem, n = f"{prefix}-{slug(table.title)}-{n}", n + 1
        self.seen.add(stem)
        short = caption if short is None else short
        _write(self.tab_dir / f"{stem}.md", to_markdown(table, caption))
        _write(self.tab_dir / f"{stem}.csv", to_csv(table))
        _write(self.tab_dir / f"{stem}.tex", to_latex(table, caption, label=stem))
        self.written.extend(self.tab_dir / f"{stem}.{ext}" for ext in ("md", "csv", "tex"))
        self._collect(to_markdown(table, short), to_latex(table, short, label=stem))
        return {"table": table, "id": stem, "caption": short,
                "files": [f"tables/{stem}.{ext}" for ext in ("md", "csv", "tex")]}

    def write_collections(self) -> None:
        for part, name in ((self.md, "tables.md"), (self.tex, "tables.tex")):
            part.close()
            os.replace(part.name, self.tab_dir / name)

    def discard(self) -> None:
        """A report that stopped half-way: its unfinished collections removed."""
        for part in (self.md, self.tex):
            part.close()
            Path(part.name).unlink(missing_ok=True)


def _document(runs: list[Run], title: str | None, n_figures: int, run_sections: list[dict],
              html_figs: list[dict], extra: list[dict]) -> dict:
    """What the HTML page shows: title, subtitle, the runs' sections, figures and extra tables."""
    ids = ", ".join(str(r.id) for r in runs)
    title = title or ("cryptobench report: run " if len(runs) == 1 else "cryptobench report: runs ") + ids
    return {"title": title,
            "subtitle": f"{n_figures} figures and {sum(r['n_tables'] for r in run_sections) + len(extra)} tables "
                        f"from stored run(s) {ids}; generated {now()} by cryptobench {__version__}. Every figure "
                        "states its provenance (measured, simulated, modeled, published) and its conditions.",
            "runs": run_sections, "figures": html_figs, "extra_tables": extra,
            "footer": "Self-contained: figures are embedded; this file loads nothing from the network."}

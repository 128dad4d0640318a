"""The report as one self-contained HTML file: inline CSS, figures embedded as data: URIs, no script,
no network. Every piece of text that came from a run (device names, library versions, labels,
details) goes through `esc`; a Content-Security-Policy that allows no script and no remote
resource is the second line of defence."""
from __future__ import annotations

import base64
from html import escape
from pathlib import Path

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

KIND_TITLES = [
    ("duration", "Duration vs payload length"),
    ("energy", "Energy vs payload length"),
    ("cycles", "Cycles vs payload length (microcontroller targets)"),
    ("heatmap", "Relative to a baseline engine"),
    ("energy-split", "Energy split between supplies"),
    ("scaling", "Scaling over cores"),
    ("crossover", "Crossover lengths"),
    ("distribution", "Per-execution distributions (ML-DSA signing)"),
    ("history", "History over the runs (report --history OP)"),
]

STYLE = """
body { font-family: "DejaVu Sans", system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 1em 2em;
       color: #1b1b1b; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-top: 1.5em; font-size: 1.1em; }
.meta, .conditions, figcaption, .notes { color: #444; font-size: 0.9em; }
.conditions { list-style: none; padding-left: 0; font-family: "DejaVu Sans Mono", monospace; font-size: 0.8em; }
.conditions li { margin: 0.15em 0; white-space: pre-wrap; word-break: break-word; }
figure { margin: 1.5em 0; padding: 0.5em; border: 1px solid #e2e2e2; border-radius: 4px; }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto; }
figcaption { margin-top: 0.5em; }
.prov { display: inline-block; font-size: 0.75em; padding: 0 0.5em; border-radius: 3px; background: #eef;
        margin-right: 0.3em; text-transform: uppercase; letter-spacing: 0.03em; }
.prov.measured { background: #dff0d8; } .prov.simulated { background: #fcf3cf; }
.prov.modeled { background: #f9e0e0; } .prov.published { background: #e0e8f9; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #888; background: #f6f6f6; }
.tablewrap { overflow-x: auto; }
nav ul { columns: 2; }
.files { font-size: 0.85em; color: #555; }
"""


def esc(text) -> str:
    return escape("" if text is None else str(text), quote=True)


def data_uri(mime: str, payload: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(payload).decode('ascii')}"


def _prov_badges(provenance) -> str:
    return "".join(f'<span class="prov {esc(p)}">{esc(p)}</span>' for p in provenance)


def figure_html(fig: dict) -> str:
    """fig: id, kind, title, caption, provenance, image (bytes, or image_path: the file to read them
    from when the page is written), mime, files (relative paths)."""
    files = " · ".join(f'<a href="{esc(f)}">{esc(f.rsplit(".", 1)[-1].upper())}</a>' for f in fig.get("files", []))
    image = fig["image"] if "image" in fig else Path(fig["image_path"]).read_bytes()
    return (f'<figure class="cb-figure" id="fig-{esc(fig["id"])}" data-kind="{esc(fig["kind"])}">'
            f'<img src="{data_uri(fig["mime"], image)}" alt="{esc(fig["title"])}">'
            f'<figcaption>{_prov_badges(fig["provenance"])}<strong>{esc(fig["title"])}.</strong> '
            f'{esc(fig["caption"])}' + (f' <span class="files">({files})</span>' if files else "")
            + "</figcaption></figure>")


def table_html(entry: dict) -> str:
    """entry: table (a report.table.Table), id, caption, files (relative paths)."""
    table = entry["table"]
    head = "".join(f"<th>{esc(c)}</th>" for c in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in table.cells)
    notes = "".join(f"<li>{esc(n)}</li>" for n in table.notes)
    caption = f'<p class="notes">{esc(entry["caption"])}</p>' if entry.get("caption") else ""
    files = " · ".join(f'<a href="{esc(f)}">{esc(f.rsplit(".", 1)[-1])}</a>' for f in entry.get("files", []))
    return (f'<h3 id="tab-{esc(entry["id"])}">{esc(table.title)}</h3>{caption}'
            f'<div class="tablewrap"><table class="cb-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>"
            + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + (f'<p class="files">files: {files}</p>' if files else ""))


def _run_conditions_html(r: dict) -> str:
    """A run's heading, its conditions (once for the whole page) and the operations it has no table for."""
    skipped = "".join(f"<li>{esc(s)}</li>" for s in r.get("skipped", []))
    return (f'<h3 id="run-{esc(r["id"])}">{esc(r["heading"])}</h3><ul class="conditions">'
            + "".join(f"<li>{esc(line)}</li>" for line in r["conditions"]) + "</ul>"
            + (f'<ul class="notes skipped">{skipped}</ul>' if skipped else ""))


def run_tables_html(r: dict) -> str:
    """A run's tables section (empty for a run without tables): r has id, heading, tables."""
    if not r["tables"]:
        return ""
    return "\n".join([f'<section id="tables-run-{esc(r["id"])}"><h2>Tables of run {esc(r["id"])}</h2>'
                      f'<p class="notes">{esc(r["heading"])}: conditions under '
                      f'<a href="#run-{esc(r["id"])}">Runs and their conditions</a>.</p>',
                      *[table_html(t) for t in r["tables"]], "</section>"]) + "\n"


def _n_tables(r: dict) -> int:
    return r["n_tables"] if "n_tables" in r else len(r["tables"])


def _head(doc: dict, kinds: list) -> list[str]:
    """The page's head, title and contents."""
    figures = doc["figures"]
    nav = ["<nav><h2>Contents</h2><ul>", '<li><a href="#runs">Runs and their conditions</a></li>']
    nav += [f'<li><a href="#sec-{k}">{esc(t)}</a> ({sum(f["kind"] == k for f in figures)})</li>' for k, t in kinds]
    if doc.get("extra_tables"):
        nav.append('<li><a href="#sec-extra">Crossover lengths (table)</a></li>')
    nav += [f'<li><a href="#tables-run-{esc(r["id"])}">Tables of run {esc(r["id"])}</a> ({_n_tables(r)})</li>'
            for r in doc["runs"] if _n_tables(r)]
    nav.append("</ul></nav>")
    return ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(doc['title'])}</title><style>{STYLE}</style></head><body>",
            f"<h1>{esc(doc['title'])}</h1>", f'<p class="meta">{esc(doc["subtitle"])}</p>', *nav]


def render_pieces(doc: dict):
    """The page a piece at a time, each ending in a line break (the report writes them as they come:
    a figure's SVG is read from its file when its turn comes, never all at once). doc: title,
    subtitle, runs [{id, heading, conditions [lines], skipped [lines], and tables [...] or
    n_tables}], figures [...], extra_tables [...] (tables not tied to one run, e.g. crossovers), and
    tables_html: a file that holds the runs' table sections already rendered (run_tables_html),
    else each run's `tables` are rendered here.

    The page: contents; each run's conditions once ("Runs"); the figures by kind; the extra tables;
    then each run's tables, which name their run instead of repeating its conditions."""
    figures = doc["figures"]
    kinds = [(k, t) for k, t in KIND_TITLES if any(f["kind"] == k for f in figures)]
    lines = [*_head(doc, kinds), '<section id="runs"><h2>Runs and their conditions</h2>',
             *(_run_conditions_html(r) for r in doc["runs"]), "</section>"]
    yield "".join(f"{line}\n" for line in lines)
    for kind, title in kinds:
        yield f'<section id="sec-{kind}"><h2>{esc(title)}</h2>\n'
        yield from (figure_html(f) + "\n" for f in figures if f["kind"] == kind)
        yield "</section>\n"
    if doc.get("extra_tables"):
        yield "".join(f"{line}\n" for line in ['<section id="sec-extra"><h2>Crossover lengths</h2>',
                                               *(table_html(t) for t in doc["extra_tables"]), "</section>"])
    if doc.get("tables_html") is not None:
        # small pieces: a 1 Mi-character piece of text with a "µ" or "→" in it takes 2-4 MiB as
        # a str and again as the bytes it is written as, the only part of the page that grew a
        # report's peak memory with the number of runs (bench/export_scale)
        with open(doc["tables_html"], encoding="utf-8") as f:
            while chunk := f.read(1 << 16):
                yield chunk
    else:
        yield from (run_tables_html(r) for r in doc["runs"])
    yield f'<footer class="meta"><p>{esc(doc.get("footer", ""))}</p></footer></body></html>\n'


def render(doc: dict) -> str:
    return "".join(render_pieces(doc))

"""The table model and its renderers (core/table.py): what each format writes for one table,
escaping of hostile text, styles in the terminal, and raw values in CSV and JSON."""
import csv
import io
import html
import json
import re

import pytest
from markdown_it import MarkdownIt

from cryptobench.core.table import (LEFT, RIGHT, Column, Csv, Latex, Markdown, Table, as_dict, columns,
                                      csv_text, data_table, markdown_escape, to_json)
from cryptobench.core.printable import printable
from cryptobench.report.terminal import console_for, print_table

HOSTILE = "<script>x</script> a|b [red]r[/red] \\ 50%_&"


def _table() -> Table:
    t = Table("Title <i>", columns(["op", "t (µs)", "verdict"], units=["", "µs", ""]), notes=["note | 1"], key="sha256")
    t.columns[2] = Column("verdict", LEFT, styled=True)
    t.add(["sha256", "1.5", "slower"], values=["sha256", 1.5e-6, "slower"], style="regression")
    t.add([HOSTILE, "2", "same"])
    return t


def test_columns_align_names_left_and_numbers_right():
    cols = columns(["operation", "parameters", "a", "b"], left=2, units=["", "", "s", "%"])
    assert [c.align for c in cols] == [LEFT, LEFT, RIGHT, RIGHT] and cols[3].unit == "%"
    t = _table()
    assert t.headers == ["op", "t (µs)", "verdict"] and t.cells[0] == ["sha256", "1.5", "slower"]
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        t.add(["x", "y"])


def test_markdown_for_commands_escapes_pipes_and_aligns_the_divider():
    text = Markdown().render(_table())
    lines = text.splitlines()
    assert lines[:2] == ["## Title <i>", ""]
    assert lines[2] == "| op | t (µs) | verdict |" and lines[3] == "|---|---:|---|"
    assert lines[5] == "| " + HOSTILE.replace("|", "\\|") + " | 2 | same |"     # one cell, still
    assert lines[5].count(" | ") == 2
    assert lines[-2:] == ["", "- note | 1"] and text.endswith("\n")
    assert not Markdown(heading=None).render(_table()).startswith("##")


def test_markdown_for_report_files_escapes_everything():
    text = Markdown(heading="###", escape=markdown_escape, prose=markdown_escape).render(_table(), "cap <b>")
    assert "<" not in text and ">" not in text
    assert text.startswith("### Title &lt;i&gt;\n\ncap &lt;b&gt;\n\n")
    assert r"&lt;script&gt;x&lt;/script&gt; a\|b \[red\]r\[/red\] \\ 50%\_&amp;" in text
    assert r"- note \| 1" in text


def test_csv_writes_cells_and_quotes_what_needs_it():
    t = _table()
    rows = list(csv.reader(io.StringIO(Csv().render(t), newline="")))
    assert rows == [t.headers] + t.cells
    assert Csv().render(t).endswith("\r\n") and Csv(lineterminator="\n").render(t).count("\r") == 0
    titled = list(csv.reader(io.StringIO(Csv(title_column="table").render(t))))
    assert titled[0] == ["table"] + t.headers and titled[1][:2] == ["Title <i>", "sha256"]


def test_data_tables_write_raw_values_as_the_csv_module_does():
    records = [[1, None, 0.1, 1e-07, True, "a,b", 'q"uote', "line\nbreak"], [2, 3, float("inf"), 0, False, "", "", ""]]
    names = ["a", "b", "c", "d", "e", "f", "g", "h"]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(names)
    w.writerows(records)
    t = data_table("raw", names, records)
    assert Csv().render(t) == buf.getvalue()
    assert t.rows[0].values == records[0] and csv_text(None) == "" and csv_text(0.1) == "0.1"


def test_latex_escapes_and_takes_the_column_alignment():
    tex = Latex().render(_table(), "run 1", label="x y")
    assert r"\begin{tabular}{lrl}" in tex and r"\toprule" in tex and r"\midrule" in tex
    assert r"Title \textless{}i\textgreater{}. run 1" in tex and r"\label{tab:x-y}" in tex
    assert r"t (\textmu{}s)" in tex and r"a\textbar{}b" in tex and r"50\%\_\&" in tex
    assert r"\par\footnotesize note \textbar{} 1" in tex and tex.endswith("\\end{table}\n")


def test_json_keeps_raw_values_units_and_styles():
    doc = json.loads(to_json([_table()]))
    assert doc == [as_dict(_table())]
    t = doc[0]
    assert t["key"] == "sha256" and t["columns"][1] == {"label": "t (µs)", "align": "right", "unit": "µs"}
    assert t["rows"][0] == {"cells": ["sha256", "1.5", "slower"], "values": ["sha256", 1.5e-6, "slower"],
                            "style": "regression"}
    assert t["rows"][1] == {"cells": [HOSTILE, "2", "same"]} and t["notes"] == ["note | 1"]


def test_terminal_styles_only_styled_columns_and_prints_notes_as_text():
    from rich.console import Console
    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=True, color_system="standard")
    t = Table("T", columns(["op", "verdict"]), notes=["[bold]not markup[/bold]"])
    t.columns[1] = Column("verdict", LEFT, styled=True)
    t.add(["sha256", "slower"], style="regression")
    print_table(console, t)
    out = buf.getvalue()
    assert "\x1b[1;31mslower" in out                       # bold red: the regression's style
    assert "\x1b[1;31msha256" not in out
    assert "[bold]not markup[/bold]" in out                # a note is text, never markup
    plain = io.StringIO()
    assert console_for(plain).width == 200 and not console_for(plain).is_terminal


HOSTILE_MD = ["![x](http://evil.example/p.png)", "@octocat [x](javascript:alert(1)) **bold**", "<img src=x>",
              "`code` and ``two``", "a|b", "line\nbreak", "#12 !3 $4 ~label", "see https://evil.example/x",
              "www.evil.example", "mail me@evil.example", "&#64;octocat", "_under_ ~~gone~~", "<https://x.example>",
              "[ref]: http://evil.example", "\\[x](y)"]


# what GitHub's and GitLab's filters link in rendered text: a mention, an issue, merge request,
# snippet or label reference, a bare URL or www. address, an e-mail address
LIVE_IN_TEXT = re.compile(r"(?<![\w`])[@#!$~][\w-]|https?://|www\.|[\w.+-]+@[\w-]+\.\w", re.I)


@pytest.mark.parametrize("hostile", HOSTILE_MD)
def test_markdown_escape_leaves_text_that_cannot_act(hostile):
    """Every Markdown output's cells, headings and notes (show, diff, compare, report): parsed, the
    text links, embeds, mentions, references and formats nothing, and reads as written."""
    from mdcheck import live_spots
    t = Table(hostile, columns([hostile, "n"]), notes=[hostile])
    t.add([hostile, "1"])
    text = Markdown(heading="###", escape=markdown_escape, prose=markdown_escape).render(t, hostile)
    structure = [spot for spot in live_spots(text) if not spot.startswith("text outside a code span")]
    assert structure == [], text                       # no link, image, autolink or HTML
    parsed = MarkdownIt("commonmark").enable("table").parse(text)
    texts = [c.content for t in parsed for c in (t.children or []) if c.type == "text"]
    emphasis = [c.type for t in parsed for c in (t.children or []) if c.type in ("em_open", "strong_open", "s_open")]
    assert emphasis == [] and not any(LIVE_IN_TEXT.search(t) for t in texts), texts
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    plain = html.unescape(re.sub(r"<[^>]+>", "", rendered)).replace("\u200b", "")
    assert printable(hostile, keep_newlines=False) in plain

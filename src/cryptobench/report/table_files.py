"""One report table ({"title", "columns", "rows", "notes"}, as tables.build_tables makes them) as
Markdown, CSV or LaTeX text. Every cell is escaped for its format: run text (labels, device names,
library versions) is data, never markup."""
from __future__ import annotations

import csv
import io
import re

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
# Characters pdfLaTeX does not take as UTF-8 input without extra packages
_LATEX_UNICODE = {"µ": r"\textmu{}", "×": r"$\times$", "–": "--", "—": "---", "†": r"\dag{}", "·": r"\textperiodcentered{}",
                  "≥": r"$\geq$", "≤": r"$\leq$", "±": r"$\pm$", "⇄": r"$\rightleftarrows$", "…": r"\ldots{}",
                  "°": r"\textdegree{}", "→": r"$\to$"}


def latex_escape(text: str) -> str:
    out = []
    for ch in str(text):
        out.append(_LATEX_SPECIAL.get(ch) or _LATEX_UNICODE.get(ch) or ch)
    return "".join(out)


def markdown_escape(text: str) -> str:
    """A table cell in GitHub Markdown: pipes escaped, HTML-looking text made inert, no line breaks."""
    text = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return text.replace("<", "&lt;").replace(">", "&gt;")


def to_markdown(table: dict, caption: str | None = None) -> str:
    cols = table["columns"]
    out = [f"### {markdown_escape(table['title'])}", ""]
    if caption:
        out += [markdown_escape(caption), ""]
    out += ["| " + " | ".join(markdown_escape(c) for c in cols) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(cols))) + "|"]
    out += ["| " + " | ".join(markdown_escape(v) for v in row) + " |" for row in table["rows"]]
    if table.get("notes"):
        out += [""] + [f"- {markdown_escape(n)}" for n in table["notes"]]
    return "\n".join(out) + "\n"


def to_csv(table: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(table["columns"])
    for row in table["rows"]:
        w.writerow(row)
    return buf.getvalue()


def to_latex(table: dict, caption: str | None = None, label: str | None = None) -> str:
    """A booktabs table (\\usepackage{booktabs}); the caption and notes below it."""
    cols = table["columns"]
    spec = "l" + "r" * (len(cols) - 1)
    out = [r"\begin{table}[htbp]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
           " & ".join(latex_escape(c) for c in cols) + r" \\", r"\midrule"]
    out += [" & ".join(latex_escape(v) for v in row) + r" \\" for row in table["rows"]]
    out += [r"\bottomrule", r"\end{tabular}"]
    text = latex_escape(table["title"]) + (". " + latex_escape(caption) if caption else "")
    out.append(rf"\caption{{{text}}}")
    if label:
        out.append(rf"\label{{tab:{re.sub(r'[^a-z0-9-]', '-', label.lower())}}}")
    if table.get("notes"):
        out.append(r"\par\footnotesize " + r" \\ ".join(latex_escape(n) for n in table["notes"]))
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def slug(text: str, limit: int = 60) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    return s[:limit].rstrip("-") or "table"

"""Whether Markdown text lets hostile text act: parsed with markdown-it-py (CommonMark with GFM
tables; rich depends on it, so it is in every environment cryptobench's tests run in), the places
a text from a run could link, embed, mention or format are looked at: links, images and autolinks,
raw HTML outside our <details>/<summary>/<code>, and any text outside a code span that holds one
of the hostile needles or a GFM autolink, @mention or #123 / !1 / ~label / $snippet reference."""
from __future__ import annotations

import re

from markdown_it import MarkdownIt

# what GitHub and GitLab would turn into a link or a reference in plain text
_LIVE = re.compile(r"(?<![\w`])[@#!~$%&][\w-]|https?:|www\.|javascript:|mailto:", re.I)
_OUR_HTML = re.compile(r"</?(details|summary)>|<!-- cryptobench gate: end of comment -->|<code>[^<]*</code>")


def _walk(tokens):
    for t in tokens:
        yield t
        yield from _walk(t.children or [])


def live_spots(md: str, needles: tuple[str, ...] = ()) -> list[str]:
    """Each place where text could act (empty: none)."""
    out = []
    parser = MarkdownIt("commonmark").enable("table")
    for t in _walk(parser.parse(md)):
        if t.type in ("link_open", "image"):
            out.append(f"{t.type}: {t.attrs}")
        elif t.type == "html_inline":
            out.append(f"inline HTML: {t.content!r}")
        elif t.type == "html_block":
            rest = _OUR_HTML.sub("", t.content)
            if "<" in rest or any(n in rest for n in needles):
                out.append(f"HTML block: {t.content!r}")
        elif t.type == "text" and (any(n in t.content for n in needles) or _LIVE.search(t.content)):
            out.append(f"text outside a code span: {t.content!r}")
    return out

"""A failed cell's note on one line: its reason, with what the harness or the target said (the
`msg`, `why` or `error` field of the last protocol line quoted in it) rather than the protocol
lines themselves, printable and at most LIMIT characters. The stored detail keeps it all
(`show --format json`, `export`)."""
from __future__ import annotations

import json
import re

from ..core.printable import printable

LIMIT = 200                       # characters of a failure note under a table
FIELDS = ("msg", "why", "error")  # where a harness or an image says what went wrong
_OBJECT = re.compile(r"\{[^{}]*\}")
TAIL = "last lines:"              # targets/mcu/target.py quotes the image's last console lines after this


def said_in(text: str) -> str | None:
    """The message field of the last JSON object in `text` that has one."""
    said = None
    for m in _OBJECT.finditer(text):
        try:
            obj = json.loads(m.group())
        except ValueError:
            continue
        if isinstance(obj, dict):
            said = next((str(obj[f]) for f in FIELDS if isinstance(obj.get(f), (str, int, float))), said)
    return said


def failure_note(detail: str, limit: int = LIMIT) -> str:
    """`detail` on one line: the reason before any quoted protocol lines, then what they said."""
    detail = detail or ""
    head, _, tail = detail.partition(TAIL)
    if not tail and "{" in detail:
        head, tail = detail[:detail.index("{")], detail[detail.index("{"):]
    said = said_in(tail) if tail else None
    text = head.strip().rstrip(";:,").strip() if tail else detail
    if said:
        text += f"; the target said: {said}"
    elif tail:
        text += f"; {TAIL} {tail.strip()}"
    text = printable(" ".join(text.split()), keep_newlines=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"

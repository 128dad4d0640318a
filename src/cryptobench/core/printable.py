"""Text from outside (run labels, file names, firmware output, a harness's messages, labgrid place
names) made safe to print: control characters would let a label set the terminal's title, move the
cursor or clear the screen (`--label $'X\\e]0;pwned\\a'`). Every renderer, every error line and every
log line passes its text through `printable` (table.py, cli/main.py, the run's and a lab
worker's log); JSON output through `printable_json`."""
from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, the C1 controls (0x80-0x9f: \x9b is a one-byte CSI), and
# the lone surrogates that stand for undecodable bytes of a command line or file name (surrogateescape)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _shown(m: re.Match) -> str:
    code = ord(m.group())
    if 0xdc80 <= code <= 0xdcff:          # an undecodable byte, kept by surrogateescape: show the byte
        return f"\\x{code - 0xdc00:02x}"
    return f"\\x{code:02x}" if code <= 0xff else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = True) -> str:
    """`text` with every control character shown as a visible escape (ESC -> "\\x1b"), so nothing
    reaches the terminal as a command and nothing is silently lost."""
    out = _CONTROL.sub(_shown, text)
    return out if keep_newlines else out.replace("\n", "\\n")


def quoted(value: object, limit: int = 60) -> str:
    """A value read from a user's file, for an error line: printable, on one line, at most `limit`
    characters (then "…"), in single quotes."""
    text = printable(value if isinstance(value, str) else repr(value), keep_newlines=False)
    return "'" + text[:limit] + ("…" if len(text) > limit else "") + "'"


# what JSON (ensure_ascii=False) leaves raw but a terminal may act on: DEL, the C1 controls, lone surrogates
_JSON_RAW = re.compile("[\x7f-\x9f\ud800-\udfff]")


def printable_json(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False, which escapes only C0 controls) with DEL, the
    C1 controls and lone surrogates written as \\u escapes: the same JSON value, inert in a terminal."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class PrintableLines:
    """A text stream whose every write passes through `printable` (line breaks kept): a command
    whose lines quote text from outside (a power profile's name, a trace's metadata, an engine
    label of a stored run) writes to this instead of stdout, so no line of it can reach the
    terminal raw, whichever f-string it came from. `raw` is the stream itself, for a rich console
    (report.terminal.console_for): its tables are printable already and its colour codes must pass."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(printable(text))

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        try:
            return self.raw.isatty()
        except (AttributeError, ValueError):
            return False


# An absolute local path (a runner's cache, a home folder, the library's checkout): `/` or `~/` and
# at least two components, starting the text, after a space, quote, bracket, `=` or a one-letter
# flag (-I/abs). Not the middle of a relative path (src/x.c) nor a URL (the `/` after `:` or `/`).
_SEGMENT = r"[^\s/'\"`()\[\],;:|<>]+"
_LOCAL_PATH = re.compile(rf"(?:(?<![^\s='\"(\[,])|(?<=-[A-Za-z]))~?(?:/{_SEGMENT}){{2,}}/?|~/{_SEGMENT}/?")


def without_local_paths(text: str) -> str:
    """`text` with each absolute local path shortened to its last component ("…/mbedtls"): what a
    comment posted for others shows of this machine's folders (docs/gate.md, "What the comment shows")."""
    return _LOCAL_PATH.sub(lambda m: "…/" + m.group().rstrip("/").rsplit("/", 1)[-1], text)

"""Text from outside (run labels, file names, firmware output, a harness's messages) made safe to
print: control characters would let a label set the terminal's title, move the cursor or clear the
screen (`--label $'X\\e]0;pwned\\a'`). Every renderer and every error line passes its text through
`printable` (report/table.py, cli/main.py)."""
from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and the C1 controls (0x80-0x9f: \x9b is a one-byte CSI)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str, keep_newlines: bool = True) -> str:
    """`text` with every control character shown as a visible escape (ESC -> "\\x1b"), so nothing
    reaches the terminal as a command and nothing is silently lost."""
    out = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return out if keep_newlines else out.replace("\n", "\\n")

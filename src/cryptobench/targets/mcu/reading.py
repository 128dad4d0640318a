"""What one firmware image's report says about its cells' cycles (a transport's `reading`)."""
from __future__ import annotations

from collections.abc import Mapping


class Reading:
    """What one image's report says about its cells' cycles: the console's own counts."""

    def cycles(self, n: int, line: Mapping) -> tuple[list, object]:
        """Cell n's cycles per repetition and the counter's own overhead."""
        return line["cyc"], line.get("overhead")

    def annotate(self, n: int, op: str, params: Mapping, result: dict) -> None:
        """Add what this transport knows beyond cycles to cell n's result."""

"""Where two byte strings first differ, for a cross-check failure's one line: the offset and the
bytes around it in both (hex), never the two strings cut off before the difference."""
from __future__ import annotations

AROUND = 8            # bytes shown either side of the first difference


def first_difference(got: bytes, expected: bytes) -> int | None:
    """The offset of the first byte that differs (the shorter's length where one is a prefix of the
    other); None where they are equal."""
    if got == expected:
        return None
    return next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))


def _window(data: bytes, at: int) -> str:
    lo, hi = max(at - AROUND, 0), min(at + AROUND + 1, len(data))
    mid = f"[{data[at]:02x}]" if at < len(data) else "[end]"
    return ("…" if lo else "") + data[lo:at].hex() + mid + data[at + 1:hi].hex() + ("…" if hi < len(data) else "")


def difference_text(got: bytes, expected: bytes) -> str:
    """"first difference at byte 37 of 64: got …0011[22]33…, expected …0011[ff]33…" (the differing
    byte in brackets, AROUND bytes either side; lengths named where they differ)."""
    at = first_difference(got, expected)
    if at is None:
        return "no difference"
    sizes = f"{len(expected)}" if len(got) == len(expected) else f"{len(expected)} (got {len(got)} bytes)"
    return f"first difference at byte {at} of {sizes}: got {_window(got, at)}, expected {_window(expected, at)}"

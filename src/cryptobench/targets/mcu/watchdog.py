"""The console watchdog QEMU and a board share: read a firmware image's console until its end
line, a fault, `timeout_s` in all, or `silence_s` without output, feeding each line to the
report. The reader is the only difference: QEMU's stdout or a serial port."""
from __future__ import annotations

import time
from typing import Callable

from .firmware.protocol import FirmwareReport, LineSplitter


def watch_console(read: Callable[[], bytes | None], report: FirmwareReport, timeout_s: float, silence_s: float,
                  silent_why: str = "hang or lockup", on_line: Callable[[str], None] = lambda line: None) -> None:
    """Feed `report` from `read` (b"": nothing yet; None: the console ended) until the image is
    done or a watchdog fires; the report's problem then says which, `silent_why` naming what
    silence may mean on this transport."""
    start = last = time.monotonic()
    lines = LineSplitter()
    while True:
        now = time.monotonic()
        if now - start > timeout_s:
            report.problem = f"watchdog: no end after {timeout_s:.0f} s"
            break
        if now - last > silence_s:
            report.problem = f"watchdog: no output for {silence_s:.0f} s ({silent_why})"
            break
        chunk = read()
        if chunk is None:
            break
        if not chunk:
            continue
        last = time.monotonic()
        if _feed(report, lines.feed(chunk), on_line):
            return
    if rest := lines.rest():              # the image ended mid-line
        _feed(report, [rest], on_line)


def _feed(report: FirmwareReport, raws: list[bytes], on_line: Callable[[str], None]) -> bool:
    """True once a line says the image is done (lines after it are not read)."""
    for raw in raws:
        text = raw.replace(b"\r", b"").decode("utf-8", "replace")   # a serial console's CRLF
        on_line(text)
        if report.feed(text):
            return True
    return False

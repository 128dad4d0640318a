"""Reading what a firmware image reports (push-mode JSON Lines, docs/protocol.md) from any
transport: QEMU's semihosting output, a serial port, the simulator."""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field


# Bounds on what an image may make the host hold (a recipe's library is code from others: it could
# print forever). The longest line cryptobench's firmware writes is a cell with its output's hex
# (64 KiB of output: 128 KiB of hex); a plan holds far fewer known answers and cells than these.
MAX_LINE_BYTES = 1 << 20
MAX_KATS = 10_000
MAX_CELLS = 1 << 20


class LineSplitter:
    """Console bytes to whole lines, in bounded memory: a line longer than MAX_LINE_BYTES is cut to
    its first bytes and the rest of it, up to its newline, is dropped (never held, never joined
    again and again)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES):
        self.max_line = max_line
        self.buf = bytearray()
        self.dropping = False          # inside an over-long line: skip to its newline

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = []
        while chunk:
            cut = chunk.find(b"\n")
            part, chunk = (chunk, b"") if cut < 0 else (chunk[:cut], chunk[cut + 1:])
            if not self.dropping:
                self.buf += part[:self.max_line + 1 - len(self.buf)]
                if len(self.buf) > self.max_line:
                    lines.append(bytes(self.buf[:300]) + b" [line cut: longer than the 1 MiB a line may hold]")
                    self.buf.clear()
                    self.dropping = True
            if cut >= 0:
                if not self.dropping:
                    lines.append(bytes(self.buf))
                self.buf.clear()
                self.dropping = False
        return lines

    def rest(self) -> bytes:
        """What follows the last newline (the image ended mid-line)."""
        return b"" if self.dropping else bytes(self.buf)


@dataclass
class FirmwareReport:
    hello: dict = field(default_factory=dict)
    kats: list[dict] = field(default_factory=list)
    cells: dict[int, dict] = field(default_factory=dict)
    end: dict | None = None
    fault: dict | None = None
    problem: str = ""                          # why the report is incomplete, when it is
    tail: deque = field(default_factory=lambda: deque(maxlen=8))   # last console lines
    # a serial line may still hold what the previous image printed (its end line too): with
    # after_hello, nothing before this image's hello line counts
    after_hello: bool = False

    def feed(self, raw: str) -> bool:
        """Take one console line; True once the image has said it is done (end or fault)."""
        text = raw.strip()
        if not text:
            return False
        self.tail.append(text[:300])
        if not text.startswith("{"):
            return False
        try:
            msg = json.loads(text)
        except json.JSONDecodeError:
            return False                          # a garbled line stays in the tail, nothing else
        kind = msg.get("t")
        if self.after_hello and not self.hello and kind != "hello":
            return False
        if kind == "hello":
            self.hello = msg
        elif kind == "kat":
            self.kats.append(msg)
            if len(self.kats) > MAX_KATS:
                return self._too_much(f"more than {MAX_KATS:,} known-answer lines")
        elif kind == "cell" and isinstance(msg.get("i"), int):
            self.cells[msg["i"]] = msg
            if len(self.cells) > MAX_CELLS:
                return self._too_much(f"more than {MAX_CELLS:,} cells")
        elif kind == "end":
            self.end = msg
            return True
        elif kind == "fault":
            self.fault = msg
            if msg.get("kind") == "exit":             # a library called exit(code) (newlib_stubs.c's _exit)
                self.problem = (f"the library called exit({int(msg.get('code', 0))}) (from pc=0x"
                                f"{int(msg.get('pc', 0)):08x}): it gave up, e.g. malloc found no memory")
            else:
                self.problem = (f"the target faulted ({msg.get('kind')} at pc=0x{int(msg.get('pc', 0)):08x}, "
                                f"lr=0x{int(msg.get('lr', 0)):08x})")
            return True
        return False

    def _too_much(self, what: str) -> bool:
        """An image that reports more than any plan holds is stopped (its report is not complete)."""
        self.problem = f"the image reported {what}, more than any plan holds: stopped"
        return True

    @property
    def complete(self) -> bool:
        return self.end is not None

    def last_lines(self) -> str:
        return " | ".join(self.tail) if self.tail else "(no output)"

    def kats_for(self, op: str) -> list[dict]:
        return [k for k in self.kats if k.get("op") == op]

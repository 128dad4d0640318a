"""Reading what a firmware image reports (push-mode JSON Lines, docs/protocol.md) from any
transport: QEMU's semihosting output, a serial port, the simulator."""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field


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
        elif kind == "cell" and isinstance(msg.get("i"), int):
            self.cells[msg["i"]] = msg
        elif kind == "end":
            self.end = msg
            return True
        elif kind == "fault":
            self.fault = msg
            self.problem = (f"the target faulted ({msg.get('kind')} at pc=0x{int(msg.get('pc', 0)):08x}, "
                            f"lr=0x{int(msg.get('lr', 0)):08x})")
            return True
        return False

    @property
    def complete(self) -> bool:
        return self.end is not None

    def last_lines(self) -> str:
        return " | ".join(self.tail) if self.tail else "(no output)"

    def kats_for(self, op: str) -> list[dict]:
        return [k for k in self.kats if k.get("op") == op]

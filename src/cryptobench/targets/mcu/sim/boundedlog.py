"""Logs of a run that stay bounded whatever the image does: the first and the last entries are
kept, the ones between counted (and, for segments, summed). An image that calls SYS_WRITEC in a
loop forever costs the host the same memory after a second as after an hour."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


class HeadTail:
    """The first `head` and the last `tail` of a stream of items, and how many there were."""

    def __init__(self, head: int, tail: int):
        self.head, self.tail = head, tail
        self.first: list = []
        self.last: deque = deque()
        self.count = 0

    def append(self, item) -> None:
        self.count += 1
        if len(self.first) < self.head:
            self.first.append(item)
            return
        self.last.append(item)
        if len(self.last) > self.tail:
            self.dropped_item(self.last.popleft())

    def dropped_item(self, item) -> None:
        """An item leaves the log (a subclass sums it)."""

    @property
    def dropped(self) -> int:
        return self.count - len(self.first) - len(self.last)

    def items(self) -> list:
        """The kept items in order: the first ones, then the last ones."""
        return self.first + list(self.last)

    def __len__(self) -> int:
        return len(self.first) + len(self.last)

    def __iter__(self):
        return iter(self.items())


@dataclass
class SegmentSummary:
    """The segments not listed: how many, their cycles and instructions in all, the shortest and
    longest."""
    count: int = 0
    cycles: int = 0
    instructions: int = 0
    min_cycles: int | None = None
    max_cycles: int | None = None

    def add(self, seg: dict) -> None:
        c = seg["cycles"]
        self.count += 1
        self.cycles += c
        self.instructions += seg["instructions"]
        self.min_cycles = c if self.min_cycles is None else min(self.min_cycles, c)
        self.max_cycles = c if self.max_cycles is None else max(self.max_cycles, c)


class SegmentLog(HeadTail):
    """Segments ({label, cycles, instructions}) with the ones between head and tail summarised."""

    def __init__(self, head: int, tail: int):
        super().__init__(head, tail)
        self.summary = SegmentSummary()

    def dropped_item(self, item) -> None:
        self.summary.add(item)


@dataclass
class ConsoleLog:
    """Console text by stream: the first `head` and the last `tail` characters kept (in chunks of
    (stream, text)), the rest counted."""
    head: int
    tail: int
    first: list = field(default_factory=list)
    last: deque = field(default_factory=deque)
    first_chars: int = 0
    last_chars: int = 0
    chars: int = 0
    writes: int = 0

    def append(self, stream: str, text: str) -> None:
        if not text:
            return
        self.writes += 1
        self.chars += len(text)
        room = self.head - self.first_chars
        if room > 0:
            kept = text[:room]
            self._add(self.first, stream, kept)
            self.first_chars += len(kept)
            text = text[room:]
        if text:
            self._add_tail(stream, text[-self.tail:] if self.tail else "")

    @staticmethod
    def _add(chunks, stream: str, text: str) -> None:
        """One more piece of text, joined to the last chunk while it is short and on the same
        stream (a character at a time stays a few chunks, not one per call)."""
        if chunks and chunks[-1][0] == stream and len(chunks[-1][1]) < 4096:
            chunks[-1] = (stream, chunks[-1][1] + text)
        else:
            chunks.append((stream, text))

    def _add_tail(self, stream: str, text: str) -> None:
        if not text:
            return
        self._add(self.last, stream, text)
        self.last_chars += len(text)
        while self.last_chars > self.tail:
            extra = self.last_chars - self.tail
            s, t = self.last[0]
            if len(t) <= extra:
                self.last.popleft()
                self.last_chars -= len(t)
            else:
                self.last[0] = (s, t[extra:])
                self.last_chars -= extra

    @property
    def dropped(self) -> int:
        return self.chars - self.first_chars - self.last_chars

    def chunks(self) -> list[tuple[str, str]]:
        """The kept text as (stream, text) in order; where characters were dropped, a chunk of
        stream "gap" stands for them."""
        gap = [("gap", f"{self.dropped} characters")] if self.dropped else []
        return self.first + gap + list(self.last)

    def __bool__(self) -> bool:
        return self.chars > 0

    def ends_with_newline(self) -> bool:
        kept = self.last or self.first
        return bool(kept) and kept[-1][1].endswith("\n")

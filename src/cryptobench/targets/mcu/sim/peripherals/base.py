"""What a peripheral model is, and the time it lives in.

A model sees the core's accesses to its registers with `now`, the model's cycle count at the
accessing instruction (stamp.py: the same count a DWT read there would give, on both executors).
It keeps its own state machine in those cycles: an operation started at cycle t that the manual
says takes L cycles is done at t + L, so a status register read before then says busy and one
after says done, and a polling loop spins exactly as long as the engine works. A write the
hardware would stall (the manual's "wait states are inserted" on a busy engine) returns the
cycles the core waits, which the run adds to its count.

A model that moves data itself (an engine's own DMA) reads and writes the image's memory through
`Memory`. Its interrupt line is `irq_pending(now)`; `next_event(now)` is when it will next raise
it (for a core waiting in WFI). `active` records the cycles it worked, for the energy of the
states the run went through (CPU active, CPU asleep, peripheral active).

Its registers are data (registers.py): the class's `registers` map declares each one (offset,
name, access, reset value, the handler or attribute a read and a store reach), and `read`,
`write` and `read_horizon` dispatch through it."""
from __future__ import annotations

import bisect

from dataclasses import dataclass, field
from typing import Protocol

from .registers import AccessLog, RegisterMap


class Memory(Protocol):
    """The image's memory as a model's DMA sees it."""

    def read(self, addr: int, n: int) -> bytes: ...

    def write(self, addr: int, data: bytes) -> None: ...


class PeripheralError(Exception):
    """A use of a model that the manual calls an error the hardware cannot report through a
    register (e.g. a DMA address outside memory): the run stops with this one line."""


@dataclass
class ActiveTime:
    """The cycles a model worked, as merged [start, end) intervals (added in time order)."""
    spans: list = field(default_factory=list)
    _starts: list = field(default_factory=list, repr=False)   # each span's start (for bisect)
    _before: list = field(default_factory=list, repr=False)   # cycles of work in the spans before each

    def add(self, start: int, end: int) -> None:
        if end <= start:
            return
        if self.spans and start <= self.spans[-1][1]:
            self.spans[-1] = (self.spans[-1][0], max(self.spans[-1][1], end))
        else:
            done = self._before[-1] + self.spans[-1][1] - self.spans[-1][0] if self.spans else 0
            self.spans.append((start, end))
            self._starts.append(start)
            self._before.append(done)

    def within(self, a: int, b: int) -> int:
        """Cycles of work inside [a, b)."""
        return sum(max(0, min(e, b) - max(s, a)) for s, e in self.spans)

    def until(self, t: int) -> int:
        """Cycles of work before cycle t (within(0, t), in log time: read at every counter read)."""
        i = bisect.bisect_right(self._starts, t)
        if i == 0:
            return 0
        s, e = self.spans[i - 1]
        return self._before[i - 1] + min(e, t) - s


class Peripheral:
    """One memory-mapped model. Subclasses set the class attributes, `registers` among them."""
    kind = ""             # devices.toml `peripheral_models` kind, e.g. "stm32f4-hash"
    title = ""            # e.g. "STM32F4 HASH"
    size = 0x400          # bytes of address space its registers take
    source = ""           # the manual and sections its registers and behaviour follow
    latency_source = ""   # where each latency comes from, and its confidence
    # the version of its timing: bump it with any change to a latency, so that the bands measured on
    # the old one (engine_bands.toml, bench/accel_vs_published) read "unvalidated" until the bench reruns
    model_version = 1
    options: dict = {}    # extra devices.toml keys the model takes (name -> what it is), e.g. a clock
    registers: RegisterMap | None = None    # its register declarations (registers.py)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.registers is not None:       # the handlers' names resolved on this class, checked
            cls.registers = cls.registers.bind(cls)

    def __init__(self, base: int, irq: int | None, memory: Memory | None = None):
        self.base, self.irq, self.memory = base, irq, memory
        self.active = ActiveTime()
        self.access_log = AccessLog()      # undeclared and unmodelled offsets it was accessed at

    def covers(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size

    def read(self, offset: int, size: int, now: int) -> int:
        return self.registers.read(self, offset, size, now)

    def write(self, offset: int, size: int, value: int, now: int) -> int:
        """Handles a store; returns the cycles the core is stalled by it (0 normally)."""
        self.check_store(offset, size)
        return self.registers.write(self, offset, value & 0xFFFFFFFF, now)

    def check_store(self, offset: int, size: int) -> None:
        """Every model's registers take 32-bit stores only (each manual says so of its map)."""
        if size != 4:
            raise PeripheralError(f"{self.title}: a {size}-byte store at offset 0x{offset:x}; {self.registers.stores}")

    def read_horizon(self, offset: int, size: int, now: int) -> int:
        """The first cycle >= now at which a read of `size` bytes at `offset` could give another value
        than at now or have an effect, no access with an effect coming meanwhile (registers.py,
        PeripheralBus.read_horizon); now: no guarantee."""
        return self.registers.horizon(self, offset, now)

    def irq_pending(self, now: int) -> bool:
        return self.irq_since(now) is not None

    def irq_since(self, now: int) -> int | None:
        """The cycle the interrupt line last went high, if it is high at `now` (else None). The
        simulator takes an interrupt once per rise: a handler clears its source as drivers do."""
        return None

    def next_event(self, now: int) -> int | None:
        """The cycle at which the model next raises its interrupt line (None: no event coming)."""
        return None

    @classmethod
    def attached(cls, spec: dict) -> str:
        """What a device profile's entry (`spec`) attaches to the model, for the cells it serves (a
        bus controller's targets); "" for none."""
        return ""

    def describe(self) -> str:
        """`title (source)`: what served a cell, for its served_by and conditions."""
        return f"{self.title} ({self.source})"

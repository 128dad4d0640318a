"""The NVIC's view of the peripheral models' interrupt lines, for any run on either executor
(the machine, machine.py, whichever client built the image).

Enabling: NVIC_ISER/ICER words (ARMv7-M ARM B3.4.4, B3.4.5; ARMv6-M ARM B3.4): external
interrupt n is bit n % 32 of word n // 32 and exception number 16 + n. A model's line is taken
once per rise (a handler clears its source, as drivers do), and once more where the line is
enabled again while it is still high: an interrupt becomes pending whenever "the NVIC detects that
the interrupt signal is HIGH and the interrupt is not active", so a level-sensitive line held high
is pending again whatever ICPR or the enable bit did meanwhile (ARM Cortex-M4 Devices Generic User
Guide, DUI 0553, 4.2.9 "Level-sensitive and pulse interrupts" and 4.2.10 "Hardware and software
control of interrupts"), which TI's PKA drivers rely on ("the PKA interrupt
is level triggered and will run immediately once enabled", ECDHCC26X2.c). All external interrupts have one
priority here (the NVIC's priority registers are not modelled): the lowest number goes first.
Two models may share a line (the STM32F4's HASH and RNG on HASH_RNG, interrupt 80, RM0090 12.2):
the line is high while either source is, and each source's rise is taken once (an entry while
both are high serves both: the handler reads both status registers, as on silicon).

Sleep: WFI puts the core to sleep until an interrupt that can wake it (ARMv7-M ARM B1.5.19:
"Wait For Interrupt"; an enabled interrupt's arrival wakes it). `sleep_until` says when: now,
where a line is already high, else the next event of an enabled model; None where nothing
enabled is coming (the core would sleep forever)."""
from __future__ import annotations

NVIC_ISER, NVIC_ICER, NVIC_WORDS = 0xE000E100, 0xE000E180, 16


def nvic_word(addr: int) -> int | None:
    """The word index of an NVIC ISER/ICER register at `addr`, or None."""
    for base in (NVIC_ISER, NVIC_ICER):
        if base <= addr < base + 4 * NVIC_WORDS and addr % 4 == 0:
            return (addr - base) // 4
    return None


class PeripheralInterrupts:
    """The enabled lines of the models on `bus` (peripherals/registry.py) and the rises taken."""

    def __init__(self, bus):
        self.bus = bus
        self.enabled: set[int] = set()        # external interrupts enabled in the NVIC
        self.served: dict[int, int] = {}      # id(model) -> the rise of its line last taken
        self._high: list = []                 # (irq, rise, model) of the lines due() last saw high
        # a line was enabled once: interrupt completion is on for the rest of the run, even while a
        # handler has disabled every line (the CC26x2 PKA driver masks its level line in its handler)
        self.ever = False

    def write(self, addr: int, value: int) -> bool:
        """A store to the PPB: True when it was an NVIC ISER/ICER word (write 1 to enable or to
        disable; 0s do nothing)."""
        index = nvic_word(addr)
        if index is None:
            return False
        bits = {32 * index + b for b in range(32) if value >> b & 1}
        if addr < NVIC_ICER:
            for model in (self.bus.models if self.bus else ()):
                if model.irq in bits - self.enabled:
                    self.served.pop(id(model), None)    # a line still high is pending again
            self.enabled |= bits
            self.ever = self.ever or bool(bits)
        else:
            self.enabled -= bits
        return True

    def _watched(self):
        return [m for m in (self.bus.models if self.bus else ()) if m.irq in self.enabled]

    def rose(self, model, now: int) -> int | None:
        """The rise of the model's interrupt line not yet taken, if its line is high now."""
        since = model.irq_since(now)
        return since if since is not None and since != self.served.get(id(model)) else None

    def next_due(self, now: int) -> int | None:
        """The first cycle from `now` at which an enabled line is (or goes) high, or None."""
        due = None
        for model in self._watched():
            at = now if self.rose(model, now) is not None else model.next_event(now)
            if at is not None:
                due = at if due is None else min(due, at)
        return due

    def due(self, now: int) -> tuple[int, int] | None:
        """(interrupt, rise) of the first enabled line high at `now` and not yet taken, or None."""
        self._high = sorted(((m.irq, r, m) for m in self._watched() if (r := self.rose(m, now)) is not None),
                            key=lambda h: h[:2])
        return self._high[0][:2] if self._high else None

    def taken(self, irq: int, rise: int) -> None:
        """The entry for line `irq` serves every source due() saw high on it (a shared line)."""
        for line, since, model in self._high:
            if line == irq:
                self.served[id(model)] = since
        self._high = []

    def sleep_until(self, now: int) -> int | None:
        """The cycle a core that executed WFI at `now` wakes at, or None: no enabled interrupt is
        coming, so it would sleep for ever."""
        return self.next_due(now)

"""The random number generator (RNG) of the STM32F4, as ST's RM0090 (Rev 11, chapter 24)
describes it, for timing: a 32-bit value every 40 periods of the RNG clock.

Registers: the class's `registers` map (registers.py): RNG_CR, RNG_SR and RNG_DR (RM0090 24.4;
offsets from the RNG base, 0x50060800 on the F4).

Timing (RM0090 24.3.1): a new 32-bit value every 40 periods of the RNG clock (PLL48CLK, 48 MHz),
in core cycles ceil(40 * core_clock_hz / rng_clock_hz): 150 at the stm32f437 profile's 180 MHz.
The first value is ready that long after RNGEN is set; reading RNG_DR clears DRDY until the next
value, which the model makes ready 40 RNG periods after the read (the conservative reading: the
manual does not say whether the generator runs on while a value waits unread).

Values: a seeded generator (random.Random, seed fixed per model base address), so runs repeat
exactly; the model is for timing, not entropy. Not modelled: the clock and seed error detection
(CECS/SECS/CEIS/SEIS stay 0: the analog noise source and its faults are not simulated)."""
from __future__ import annotations

import math
import random

from .base import Peripheral, PeripheralError
from .registers import NEVER, Access, Register, RegisterMap

CR, SR, DR = 0x00, 0x04, 0x08
CR_RNGEN, CR_IE = 1 << 2, 1 << 3
SR_DRDY = 1
RNG_PERIODS = 40                              # RM0090 24.3.1: RNG clock periods per 32-bit value


class Stm32Rng(Peripheral):
    kind = "stm32f4-rng"
    title = "STM32F4 RNG"
    size = 0x400
    source = "ST RM0090 Rev 11 chapter 24 (RNG)"
    latency_source = ("RM0090 24.3.1: a 32-bit value every 40 periods of the RNG clock (PLL48CLK, 48 MHz), "
                      "converted to core cycles at the profile's core clock; the next value 40 periods after a read")
    options = {"core_clock_hz": "the core clock the RNG clock's periods are converted at",
               "rng_clock_hz": "the RNG clock (PLL48CLK)"}

    # RM0090 24.4 "RNG registers"
    registers = RegisterMap(
        Register(CR, "RNG_CR", Access.RW, bits="RNGEN 2, IE 3", field="cr", write="_write_cr"),
        Register(SR, "RNG_SR", Access.RW, bits="DRDY 0, CECS 1, SECS 2, CEIS 5, SEIS 6 (CEIS/SEIS are cleared by "
                 "writing 0; never set here, so a store changes nothing)", read="_sr", horizon="_sr_horizon"),
        Register(DR, "RNG_DR", Access.RO, bits="the random value (valid while DRDY = 1)", read="_dr",
                 effect="takes the value: DRDY clears until the next is ready"),
        stores="the RNG registers take 32-bit writes (RM0090 24.4)")

    def __init__(self, base: int, irq: int | None, memory=None, core_clock_hz: int = 180_000_000,
                 rng_clock_hz: int = 48_000_000):
        super().__init__(base, irq, memory)
        self.period = math.ceil(RNG_PERIODS * core_clock_hz / rng_clock_hz)   # core cycles per value
        self.registers.reset(self)            # RNG_CR
        self.ready_at: int | None = None      # the cycle the next value is ready (None: RNG off)
        self.gen = random.Random(base)        # deterministic: the same values every run

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _sr(self, o: int, now: int) -> int:
        return SR_DRDY if self._ready(now) else 0

    def _sr_horizon(self, o: int, now: int) -> int:
        return self.ready_at if self.ready_at is not None and self.ready_at > now else NEVER

    def _dr(self, o: int, now: int) -> int:
        if not self._ready(now):
            raise PeripheralError(f"{self.title}: RNG_DR read while DRDY = 0 (RM0090 24.3.1: read it once DRDY "
                                  "is set)")
        value = self.gen.getrandbits(32)
        self._start(now)
        return value

    def _write_cr(self, o: int, value: int, now: int) -> None:
        on = not self.cr & CR_RNGEN and value & CR_RNGEN
        self.cr = value & (CR_RNGEN | CR_IE)
        if on:
            self._start(now)
        elif not self.cr & CR_RNGEN:
            self.ready_at = None

    def irq_since(self, now: int) -> int | None:
        """RNG_CR.IE with DRDY (RM0090 24.3.3: the interrupt is pending while DRDY, SEIS or CEIS is
        set; the error flags stay 0 here): since the value was ready."""
        return self.ready_at if self.cr & CR_IE and self._ready(now) else None

    def next_event(self, now: int) -> int | None:
        if self.cr & CR_IE and self.ready_at is not None and self.ready_at > now:
            return self.ready_at
        return None

    def _ready(self, now: int) -> bool:
        return self.ready_at is not None and now >= self.ready_at

    def _start(self, now: int) -> None:
        self.ready_at = now + self.period
        self.active.add(now, self.ready_at)

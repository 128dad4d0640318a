"""SysTick (ARMv7-M ARM B3.3, ARMv6-M ARM B3.3) on the model's cycle count, for any executor.

The counter decrements once per model cycle (the processor clock; CLKSOURCE = 0, an external
reference clock, is counted at the processor clock too and noted). It is a function of the count,
never stepped: `read(addr, now)` derives CVR from the cycle at which it was last (re)started.
The counter reaches 0 at `start + val0 + n * (RVR + 1)`, n >= 0 (n >= 1 when it started at 0);
the cycle after, it reloads RVR. COUNTFLAG is set by each transition to 0 and cleared by a read
of CSR or a write of CVR; with TICKINT the transition pends exception 15, which `next_wrap`
tells the executor when to take: `wrap_due(now)` is true once the count is past the transition,
i.e. when a read of CVR returns the reloaded value."""
from __future__ import annotations

SYST_CSR, SYST_RVR, SYST_CVR, SYST_CALIB = 0xE000E010, 0xE000E014, 0xE000E018, 0xE000E01C
ENABLE, TICKINT, CLKSOURCE, COUNTFLAG = 1 << 0, 1 << 1, 1 << 2, 1 << 16
MASK24 = 0x00FFFFFF
EXCEPTION = 15


class SysTick:
    def __init__(self) -> None:
        self.csr = 0               # ENABLE, TICKINT, CLKSOURCE as written
        self.rvr = 0
        self.val0 = 0              # the counter's value at `start`
        self.start = 0             # model cycle of the last enable or CVR write
        self.stopped_val = 0       # the counter while disabled
        self.flag_seen = 0         # transitions to 0 already reported by COUNTFLAG
        self.wraps_taken = 0       # transitions whose exception the executor has taken
        self.notes: set[str] = set()

    @property
    def enabled(self) -> bool:
        return bool(self.csr & ENABLE)

    def _wraps(self, now: int) -> int:
        """Transitions to 0 since `start`, up to and including cycle `now`."""
        if not self.enabled or now < self.start:
            return 0
        elapsed, period = now - self.start, self.rvr + 1
        first = self.val0 if self.val0 else period      # from 0 the counter reloads first
        if self.val0 == 0 and self.rvr == 0:
            return 0                                     # RVR 0: the counter stays at 0, no transitions
        return 0 if elapsed < first else 1 + (elapsed - first) // period

    def value(self, now: int) -> int:
        if not self.enabled:
            return self.stopped_val
        elapsed, period = now - self.start, self.rvr + 1
        if elapsed <= self.val0:
            return self.val0 - elapsed
        return self.rvr - ((elapsed - self.val0 - 1) % period)

    def read(self, addr: int, now: int) -> int | None:
        """The register at `addr` at cycle `now`; None for an address that is not SysTick's."""
        if addr == SYST_CSR:
            wraps = self._wraps(now)
            flag = COUNTFLAG if wraps > self.flag_seen else 0
            self.flag_seen = wraps
            return self.csr | flag
        if addr == SYST_RVR:
            return self.rvr
        if addr == SYST_CVR:
            return self.value(now)
        if addr == SYST_CALIB:
            return 1 << 31               # NOREF: no reference clock; TENMS unknown (0)
        return None

    def write(self, addr: int, value: int, now: int) -> bool:
        """A write at cycle `now`; False for an address that is not SysTick's."""
        if addr == SYST_CSR:
            was = self.enabled
            current = self.value(now)
            self.csr = value & (ENABLE | TICKINT | CLKSOURCE)
            if self.enabled and not (value & CLKSOURCE):
                self.notes.add("SysTick CLKSOURCE = 0 (the external reference clock) was counted at the "
                               "processor clock: the reference clock is not modelled")
            if was != self.enabled:
                self._restart(current if not was else 0, now)
                self.stopped_val = current
            return True
        if addr == SYST_RVR:
            self.rvr = value & MASK24
            return True
        if addr == SYST_CVR:                     # any write clears the counter and COUNTFLAG
            self.stopped_val = 0
            self._restart(0, now)
            return True
        return addr == SYST_CALIB

    def _restart(self, val: int, now: int) -> None:
        self.val0, self.start = val, now
        self.flag_seen = self.wraps_taken = 0

    def next_wrap(self) -> int | None:
        """The cycle of the next transition to 0 whose exception is not yet taken (TICKINT on);
        the executor takes it once the count is past that cycle. None: no exception to come."""
        if not (self.enabled and self.csr & TICKINT) or (self.val0 == 0 and self.rvr == 0):
            return None
        period = self.rvr + 1
        first = self.val0 if self.val0 else period
        return self.start + first + self.wraps_taken * period

    def take(self, now: int) -> None:
        """The executor took the exception at cycle `now`: every transition up to `now` is served
        (the pending bit is one bit: wraps missed while it was masked are lost, as on the part)."""
        self.wraps_taken = max(self.wraps_taken + 1, self._wraps(now))


DWT_CTRL, DWT_CYCCNT = 0xE0001000, 0xE0001004
CYCCNTENA = 1 << 0


class CycleCounter:
    """DWT CYCCNT (ARMv7-M ARM C1.8.8): counts the model's cycles while DWT_CTRL.CYCCNTENA is set
    (0 out of reset), wraps at 32 bits, and takes what is written to it. DEMCR.TRCENA, which
    gates the DWT on the part, is not checked."""

    def __init__(self) -> None:
        self.enabled = False
        self.base = 0          # the count at `since` (while enabled) or the held count
        self.since = 0
        self.ctrl = 0

    def read(self, addr: int, now: int) -> int | None:
        if addr == DWT_CYCCNT:
            return (self.base + (now - self.since if self.enabled else 0)) & 0xFFFFFFFF
        if addr == DWT_CTRL:
            return self.ctrl
        return None

    def write(self, addr: int, value: int, now: int) -> bool:
        if addr == DWT_CYCCNT:
            self.base, self.since = value & 0xFFFFFFFF, now
            return True
        if addr == DWT_CTRL:
            held = self.read(DWT_CYCCNT, now)
            self.ctrl, self.enabled = value, bool(value & CYCCNTENA)
            self.base, self.since = held, now
            return True
        return False

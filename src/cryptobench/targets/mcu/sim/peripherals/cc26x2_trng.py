"""The TRNG of TI's CC13x2/CC26x2 as SWCU185G (CC13x2/CC26x2 TRM, revision G), chapter "TRNG"
describes it: free-running oscillators sampled into an LFSR, a 64-bit result in OUT0/OUT1 once
enough samples are gathered. Base 0x4002 8000 (TRM "Memory Map").

Registers: the class's `registers` map (registers.py) declares each, with its fields, at its offset
(TRM TRNG register map, the same offsets as TI's hw_trng.h). IRQFLAGCLR.RDY takes the number and
starts the next. The LFSR readout and the version/option registers are not modelled (read 0).

Timing (TRM CTL/CFG0 field descriptions): after TRNG_EN the first number needs STARTUP_CYCLES x 2^8
samples (0: 2^24); after a number is taken (IRQFLAGCLR.RDY) the next needs MIN_REFILL_CYCLES x 2^6
samples when that field is nonzero (the minimum the TRM allows), else MAX_REFILL_CYCLES x 2^8
(0: 2^24). A sample is taken every SMPL_DIV + 1 cycles of the module clock (TRM SMPL_DIV: "0
indicates that samples are taken every clock cycle"); the module clock is taken to be the 48 MHz
system clock the core runs at (the profile's clock; the TRM's clock chapter feeds the peripheral
bus from it), so one module cycle is one core cycle at the cc2652 profile's 48 MHz. The model keeps
`clock_ratio` (core cycles per TRNG clock cycle) for a profile that clocks them apart.

Values: TIMING-ONLY. OUT0/OUT1 are a deterministic sequence (SHA-256 of a fixed seed and a counter),
not entropy: a run is repeatable and nothing here is random. Not modelled: the FRO alarm/shutdown
machinery (SHUTDOWN_OVF never sets), TEST_MODE and the LFSR registers (read 0)."""
from __future__ import annotations

import hashlib

from .base import ActiveTime, Peripheral, PeripheralError
from .registers import NEVER, STATIC, Access, Register, RegisterMap

OUT0, OUT1, IRQFLAGSTAT, IRQFLAGMASK, IRQFLAGCLR, CTL, CFG0 = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x14, 0x18
ALARMCNT, FROEN, FRODETUNE, ALARMMASK, ALARMSTOP = 0x1C, 0x20, 0x24, 0x28, 0x2C
KEPT = (ALARMCNT, FROEN, FRODETUNE, ALARMMASK, ALARMSTOP)
LFSR0, HWOPT, HWVER0 = 0x30, 0x78, 0x7C
IRQSTATMASK, HWVER1, IRQSET, SWRESET, IRQSTAT = 0x1FD8, 0x1FE0, 0x1FEC, 0x1FF0, 0x1FF8
RDY, NEED_CLOCK = 1, 1 << 31
CTL_TRNG_EN, CTL_TEST_MODE = 1 << 10, 1 << 1
SEED = b"cryptobench cc26x2-trng model: timing only, not entropy"


def startup_samples(ctl: int) -> int:
    n = (ctl >> 16) & 0xFFFF
    return n << 8 if n else 1 << 24


def refill_samples(cfg0: int) -> int:
    lo, hi = cfg0 & 0xFF, (cfg0 >> 16) & 0xFFFF
    return lo << 6 if lo else (hi << 8 if hi else 1 << 24)


class Cc26x2Trng(Peripheral):
    kind = "cc26x2-trng"
    title = "TI CC26x2 TRNG"
    size = 0x2000
    source = "TI SWCU185G (CC13x2/CC26x2 TRM) chapter 'TRNG' (TRNG registers)"
    latency_source = ("SWCU185G TRNG CTL.STARTUP_CYCLES (x 2^8 samples), CFG0.MIN_REFILL_CYCLES (x 2^6) / "
                      "MAX_REFILL_CYCLES (x 2^8), one sample every SMPL_DIV + 1 module clocks; module clock = the "
                      "48 MHz core clock (the profile's assumption); values timing-only")
    clock_ratio = 1

    # the TRM TRNG register map (SWCU185G "TRNG Registers"; hw_trng.h's offsets)
    registers = RegisterMap(
        Register(OUT0, "OUT0", Access.RO, bits="VALUE_31_0 (the number ready while IRQFLAGSTAT.RDY = 1, else the "
                 "last one taken; 0 before any)",
                 read="_out", horizon="_ready_horizon"),
        Register(OUT1, "OUT1", Access.RO, bits="VALUE_63_32", read="_out", horizon="_ready_horizon"),
        Register(IRQFLAGSTAT, "IRQFLAGSTAT", Access.RO, bits="RDY 0, SHUTDOWN_OVF 1, NEED_CLOCK 31",
                 read="_flags_read", horizon="_ready_horizon"),
        Register(IRQFLAGMASK, "IRQFLAGMASK", Access.RW, bits="RDY 0, SHUTDOWN_OVF 1", field="mask", mask=3),
        Register(IRQFLAGCLR, "IRQFLAGCLR", Access.WO, bits="RDY 0 (takes the number: the next is started), "
                 "SHUTDOWN_OVF 1", write="_irqflagclr"),
        Register(CTL, "CTL", Access.RW, bits="STARTUP_CYCLES 31:16, TRNG_EN 10, NO_LFSR_FB 2, TEST_MODE 1",
                 field="ctl", write="_set_ctl"),
        Register(CFG0, "CFG0", Access.RW, bits="MAX_REFILL_CYCLES 31:16, SMPL_DIV 11:8, MIN_REFILL_CYCLES 7:0",
                 field="cfg0", write="_set_cfg0"),
        *(Register(o, name, Access.RW, bits="kept as written (the FRO alarm machinery is not modelled)",
                   read="_kept", write="_keep", horizon=STATIC)
          for o, name in zip(KEPT, ("ALARMCNT", "FROEN", "FRODETUNE", "ALARMMASK", "ALARMSTOP"))),
        Register(LFSR0, "LFSR{n}", Access.RO, count=3, modelled=False),
        Register(HWOPT, "HWOPT", Access.RO, modelled=False),
        Register(HWVER0, "HWVER0", Access.RO, modelled=False),
        Register(IRQSTATMASK, "IRQSTATMASK", Access.RO, bits="IRQFLAGSTAT & IRQFLAGMASK", read="_flags_masked",
                 horizon="_ready_horizon"),
        Register(HWVER1, "HWVER1", Access.RO, modelled=False),
        Register(IRQSET, "IRQSET", Access.WO, bits="RDY 0, SHUTDOWN_OVF 1", write="_irqset"),
        Register(SWRESET, "SWRESET", Access.WO, bits="RESET 0", write="_swreset"),
        Register(IRQSTAT, "IRQSTAT", Access.RO, bits="as IRQFLAGSTAT", read="_flags_read", horizon="_ready_horizon"),
        stores="the TRNG registers take 32-bit writes (SWCU185G TRNG register map)")

    def __init__(self, base: int, irq: int | None, memory=None):
        super().__init__(base, irq, memory)
        self._reset()

    def _reset(self) -> None:
        """The state after reset (SWRESET too: the engine's time and number sequence start again)."""
        self.active = ActiveTime()
        self.registers.reset(self)              # CTL, CFG0, IRQFLAGMASK
        self.kept = {o: 0 for o in KEPT}
        self.ready_at: int | None = None
        self.count = 0
        self.value = 0
        self.taken = 0                      # the last number taken (IRQFLAGCLR.RDY, TRNG_EN cleared): OUT0/OUT1 hold it
        self.irqset = 0
        self.irqset_at = 0                  # the cycle IRQSET last raised a flag (its line's rise)

    def _sample_cycles(self, samples: int) -> int:
        return samples * (((self.cfg0 >> 8) & 0xF) + 1) * self.clock_ratio

    def _next(self, now: int, samples: int) -> None:
        self.ready_at = now + self._sample_cycles(samples)
        self.active.add(now, self.ready_at)
        self.value = int.from_bytes(hashlib.sha256(SEED + self.count.to_bytes(8, "little")).digest()[:8], "little")
        self.count += 1

    def _flags(self, now: int) -> int:
        f = self.irqset
        if self.ready_at is not None:
            f |= RDY if now >= self.ready_at else NEED_CLOCK
        return f

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _out(self, o: int, now: int) -> int:
        # A number stays readable after it is taken until the next one is ready: TI's own driver
        # (SDK TRNGCC26XX.c, TRNGCC26XX_hwiFxn) writes IRQFLAGCLR.RDY and stops the TRNG before it
        # reads OUT0/OUT1; the TRM's "valid when IRQFLAGSTAT.RDY = 1" says when a number is new.
        number = self.value if self.ready_at is not None and now >= self.ready_at else self.taken
        return number & 0xFFFFFFFF if o == OUT0 else number >> 32

    def _ready_horizon(self, o: int, now: int) -> int:
        """OUT0/OUT1 and the flags change when the number under way is ready, and then only by a store."""
        return self.ready_at if self.ready_at is not None and self.ready_at > now else NEVER

    def _flags_read(self, o: int, now: int) -> int:
        return self._flags(now)

    def _flags_masked(self, o: int, now: int) -> int:
        return self._flags(now) & self.mask

    def _kept(self, o: int, now: int) -> int:
        return self.kept[o]

    def _keep(self, o: int, v: int, now: int) -> None:
        self.kept[o] = v

    def _set_ctl(self, o: int, v: int, now: int) -> None:
        if v & CTL_TEST_MODE:
            raise PeripheralError(f"{self.title}: CTL.TEST_MODE is not modelled")
        was_on = self.ctl & CTL_TRNG_EN
        if was_on and v & CTL_TRNG_EN:
            v = (v & ~0xFFFF0000) | (self.ctl & 0xFFFF0000)     # STARTUP_CYCLES ignored while enabled
        self.ctl = v
        if v & CTL_TRNG_EN and not was_on:
            self._next(now, startup_samples(v))
        elif not v & CTL_TRNG_EN:
            if self.ready_at is not None and now >= self.ready_at:
                self.taken = self.value                        # the ready number stays in OUT0/OUT1
            self.ready_at = None                               # "forces all TRNG logic back into idle"

    def _set_cfg0(self, o: int, v: int, now: int) -> None:
        if self.ctl & CTL_TRNG_EN:
            raise PeripheralError(f"{self.title}: CFG0 written while CTL.TRNG_EN = 1; the TRM: 'can only be "
                                  "modified while CTL.TRNG_EN = 0'")
        lo, hi = v & 0xFF, (v >> 16) & 0xFFFF
        if lo and (lo << 6) > ((hi << 8) if hi else 1 << 24):
            raise PeripheralError(f"{self.title}: CFG0 MIN_REFILL_CYCLES x 2^6 = {lo << 6} samples exceeds "
                                  f"MAX_REFILL_CYCLES x 2^8; the TRM: 'no random value will be created'")
        self.cfg0 = v

    def _irqflagclr(self, o: int, v: int, now: int) -> None:
        self.irqset &= ~v
        if v & RDY and self.ready_at is not None and now >= self.ready_at and self.ctl & CTL_TRNG_EN:
            self.taken = self.value
            self._next(now, refill_samples(self.cfg0))

    def _irqset(self, o: int, v: int, now: int) -> None:
        if v & 3 & ~self.irqset:
            self.irqset_at = now
        self.irqset |= v & 3

    def _swreset(self, o: int, v: int, now: int) -> None:
        if v & 1:
            self._reset()

    # ---- the interrupt line --------------------------------------------------------------------
    def irq_since(self, now: int) -> int | None:
        """TRNG_IRQ is IRQFLAGSTAT & IRQFLAGMASK (a level): it rose when the number became ready (or
        IRQSET raised a flag); a handler lowers it by masking RDY or taking the number."""
        if self.mask & RDY and self.ready_at is not None and now >= self.ready_at:
            return self.ready_at
        if self.irqset & self.mask & 3:
            return self.irqset_at
        return None

    def next_event(self, now: int) -> int | None:
        if self.mask & RDY and self.ready_at is not None and self.ready_at > now:
            return self.ready_at
        return None

"""The STM32 I2C controller of the STM32F0/F3/F7/L4/G0/U5 families ("I2C v2", as ST's reference
manuals describe it, e.g. RM0456 for the STM32U5 and RM0351 for the STM32L4), master mode, at the
register level, driving a simulated I2C bus (bus.py) in the core's cycles.

Registers (32-bit, offsets as in RM0456 "I2C registers"): CR1 (PE, TXIE, RXIE, NACKIE, STOPIE,
TCIE, ERRIE), CR2 (SADD, RD_WRN, START, STOP, NBYTES, AUTOEND), TIMINGR (SCLL, SCLH, SDADEL,
SCLDEL, PRESC), ISR (TXE, TXIS, RXNE, NACKF, STOPF, TC, BUSY, DIR), ICR (NACKCF, STOPCF), RXDR,
TXDR. Behaviour (the manuals' "Master communication" flow charts):
* CR2.START with PE set sends a START and the address SADD[7:1] with RD_WRN; NACKed, NACKF is set
  and the controller sends a STOP itself (STOPF);
* writing, TXIS asks for each of the NBYTES bytes in turn (each clocked out in 9 SCL periods once in
  TXDR; the model asks for the next byte when the last has left, a driver's few cycles later than the
  part, whose shift register lets TXDR take it a byte ahead); after the last, AUTOEND sends a STOP (STOPF), else TC is set for a repeated START or STOP;
* reading, RXNE is set as each byte is in (the last NACKed by the controller), RXDR taking it; with
  the next byte's data register still full the controller holds SCL (the next byte waits for the read);
* the SCL period is (SCLL + 1 + SCLH + 1) x (PRESC + 1) / f_I2CCLK (RM0456, "I2C timings"); the
  synchronisation delays and the filters' (t_SYNC1 + t_SYNC2, a few I2CCLK periods) are left out:
  the SCL the registers give at most.
Not modelled: slave mode, 10-bit addresses, RELOAD, SMBus/PEC, timeouts, DMA, the error flags."""
from __future__ import annotations

import math

from ..peripherals.base import Peripheral, PeripheralError
from ..peripherals.registers import Access, Register, RegisterMap
from .atecc import Atecc, on_bus
from .bus import Bus

CR1, CR2, OAR1, OAR2, TIMINGR, TIMEOUTR, ISR, ICR, PECR, RXDR, TXDR = (0x00, 0x04, 0x08, 0x0C, 0x10, 0x14, 0x18,
                                                                      0x1C, 0x20, 0x24, 0x28)
PE = 1
RD_WRN, START, STOP, AUTOEND = 1 << 10, 1 << 13, 1 << 14, 1 << 25
TXE, TXIS, RXNE, NACKF, STOPF, TC, BUSY = 1, 2, 4, 16, 32, 64, 1 << 15
NACKCF, STOPCF = 16, 32


class Stm32I2c(Peripheral):
    kind = "stm32-i2c"
    title = "STM32 I2C"
    size = 0x400
    source = "ST RM0456 (STM32U5) / RM0351 (STM32L4) 'Inter-integrated circuit (I2C) interface', master mode"
    latency_source = ("the bus: UM10204 Rev. 7 Table 10 minima and 9 SCL periods a byte at the TIMINGR period "
                      "(SCLL + 1 + SCLH + 1) x (PRESC + 1) / f_I2CCLK; the targets' own times (sim/i2c)")
    options = {"core_clock_hz": "the core clock the bus's seconds are converted at",
               "i2cclk_hz": "the I2C kernel clock (I2CCLK)",
               "atecc608": "the 7-bit address of an ATECC608 on this controller's bus"}
    registers = RegisterMap(
        Register(CR1, "CR1", Access.RW, bits="PE 0, TXIE 1, RXIE 2, NACKIE 4, STOPIE 5, TCIE 6, ERRIE 7",
                 field="cr1", mask=0x00FFFFFF),
        Register(CR2, "CR2", Access.RW, bits="SADD 9:0, RD_WRN 10, START 13, STOP 14, NBYTES 23:16, AUTOEND 25",
                 read="_cr2", write="_write_cr2"),
        Register(TIMINGR, "TIMINGR", Access.RW, bits="SCLL 7:0, SCLH 15:8, SDADEL 19:16, SCLDEL 23:20, PRESC 31:28",
                 field="timingr"),
        Register(ISR, "ISR", Access.RO, bits="TXE 0, TXIS 1, RXNE 2, NACKF 4, STOPF 5, TC 6, BUSY 15", read="_isr"),
        Register(ICR, "ICR", Access.WO, bits="NACKCF 4, STOPCF 5", write="_write_icr"),
        Register(RXDR, "RXDR", Access.RO, bits="RXDATA 7:0", read="_rxdr", effect="takes the byte: RXNE clears"),
        Register(TXDR, "TXDR", Access.RW, bits="TXDATA 7:0", read="_txdr", write="_write_txdr"),
        Register(OAR1, "OAR1", Access.RW, modelled=False), Register(OAR2, "OAR2", Access.RW, modelled=False),
        Register(TIMEOUTR, "TIMEOUTR", Access.RW, modelled=False), Register(PECR, "PECR", Access.RO, modelled=False),
        stores="the I2C registers take 32-bit writes (RM0456 'I2C registers': accessed by words)")

    def __init__(self, base: int, irq: int | None = None, memory=None, bus: Bus | None = None,
                 core_clock_hz: int = 160_000_000, i2cclk_hz: int = 16_000_000, atecc608: int | None = None):
        super().__init__(base, irq, memory)
        self.bus = bus if bus is not None else Bus(100_000)
        if atecc608:
            self.bus.attach(Atecc(part="ATECC608", address=atecc608))
        self.core_hz, self.i2cclk_hz = core_clock_hz, i2cclk_hz
        self.registers.reset(self)
        self.cr2 = 0
        self.flags = TXE
        self.busy = False
        self.target = None
        self.left = 0                        # bytes of NBYTES still to move
        self.reading = False
        self.byte_end: int | None = None     # the byte on the wire ends then
        self.pending = None                  # "address", "tx" or "rx": what ends at byte_end
        self.tx_byte: int | None = None
        self.rx: int | None = None           # a received byte waiting in RXDR
        self.stop_at: int | None = None

    @classmethod
    def attached(cls, spec: dict) -> str:
        return on_bus(spec["atecc608"], "ATECC608-M0") if spec.get("atecc608") else ""

    # ---- time -----------------------------------------------------------------------------------------
    def scl_hz(self) -> float:
        t = self.timingr
        presc, scll, sclh = (t >> 28) & 0xF, t & 0xFF, (t >> 8) & 0xFF
        return self.i2cclk_hz / ((scll + 1 + sclh + 1) * (presc + 1))

    def _cycles(self, seconds: float) -> int:
        return math.ceil(seconds * self.core_hz)

    def _byte(self, now: int) -> int:
        return now + self._cycles(9 / self.bus.scl_hz)

    def _advance(self, now: int) -> None:
        while True:
            due = [(t, n) for t, n in ((self.byte_end, "byte"), (self.stop_at, "stop")) if t is not None and t <= now]
            if not due:
                return
            t, name = min(due)
            self._on_byte(t) if name == "byte" else self._on_stop(t)

    def _on_byte(self, t: int) -> None:
        what, self.byte_end, self.pending = self.pending, None, None
        at = t / self.core_hz
        if what == "address":
            address = (self.cr2 >> 1) & 0x7F
            self.target = self.bus.targets.get(address) if address else None
            if address == 0 and not self.reading:
                self.bus.general_call_low(at - 9 / self.bus.scl_hz)
            if self.target is None or not self.target.addressed(self.reading, at):
                self.flags |= NACKF                       # NACKed: the controller sends a STOP itself
                self.stop_at = t + self._cycles(self.bus.mode.t_su_sto_s)
                return
        elif what == "tx":
            byte, self.tx_byte = self.tx_byte, None
            if not self.target.write_byte(byte, at):
                self.flags |= NACKF
                self.stop_at = t + self._cycles(self.bus.mode.t_su_sto_s)
                return
            self.left -= 1
        elif what == "rx":
            self.left -= 1
            self.rx = self.target.read_byte(at, self.left > 0)
            self.flags |= RXNE
        self._next(t)

    def _next(self, t: int) -> None:
        """After the address or a byte: the next byte, or the end of NBYTES."""
        if self.left == 0:
            if self.cr2 & AUTOEND:
                self.stop_at = t + self._cycles(self.bus.mode.t_su_sto_s)
            else:
                self.flags |= TC
            return
        if self.reading:
            if self.rx is None:                          # RXDR free: the next byte comes in
                self.pending, self.byte_end = "rx", self._byte(t)
        elif self.tx_byte is not None:
            self.pending, self.byte_end = "tx", self._byte(t)
        else:
            self.flags |= TXIS

    def _on_stop(self, t: int) -> None:
        self.stop_at = None
        self.busy = False
        self.flags |= STOPF
        self.flags &= ~(TXIS | TC)
        if self.target is not None:
            self.target.stop(t / self.core_hz)
        self.target = None
        self.bus.free_at_s = t / self.core_hz + self.bus.mode.t_buf_s

    # ---- the registers' handlers -------------------------------------------------------------------------
    def _cr2(self, o: int, now: int) -> int:
        return self.cr2 & ~(START | STOP)

    def _write_cr2(self, o: int, value: int, now: int) -> None:
        self._advance(now)
        self.cr2 = value & 0x07FFFFFF
        if value & START and self.cr1 & PE:
            self.bus.scl_hz = self.scl_hz()
            try:
                mode = self.bus.mode
            except ValueError as exc:
                raise PeripheralError(f"{self.title}: TIMINGR gives SCL {self.bus.scl_hz / 1e3:.0f} kHz: {exc}") from None
            self.busy, self.reading = True, bool(value & RD_WRN)
            self.left, self.rx, self.tx_byte = (value >> 16) & 0xFF, None, None
            self.flags &= ~(TC | TXIS | STOPF | NACKF)
            begin = max(now, self._cycles(self.bus.free_at_s)) + self._cycles(mode.t_hd_sta_s)
            self.pending, self.byte_end = "address", self._byte(begin)
        if value & STOP and self.busy and self.stop_at is None:
            self.stop_at = max(now, self.byte_end or now) + self._cycles(self.bus.mode.t_su_sto_s)

    def _isr(self, o: int, now: int) -> int:
        self._advance(now)
        return self.flags | (BUSY if self.busy else 0) | (TXE if self.tx_byte is None else 0)

    def _write_icr(self, o: int, value: int, now: int) -> None:
        self._advance(now)
        self.flags &= ~(value & (NACKF | STOPF))

    def _rxdr(self, o: int, now: int) -> int:
        self._advance(now)
        value, self.rx = (self.rx if self.rx is not None else 0), None
        self.flags &= ~RXNE
        if self.busy and self.reading and self.left > 0 and self.byte_end is None and self.stop_at is None:
            self.pending, self.byte_end = "rx", self._byte(now)   # SCL was held for this read
        return value

    def _txdr(self, o: int, now: int) -> int:
        return self.tx_byte or 0

    def _write_txdr(self, o: int, value: int, now: int) -> None:
        self._advance(now)
        if not self.busy or self.reading or not self.flags & TXIS:
            return
        self.flags &= ~TXIS
        self.tx_byte = value & 0xFF
        if self.byte_end is None:
            self.pending, self.byte_end = "tx", self._byte(now)

    def read_horizon(self, offset: int, size: int, now: int) -> int:
        return now                                       # the bus moves the flags: every read reaches the model

    def next_event(self, now: int) -> int | None:
        times = [t for t in (self.byte_end, self.stop_at) if t is not None and t > now]
        return min(times) if times else None

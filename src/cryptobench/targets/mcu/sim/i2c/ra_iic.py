"""The Renesas RA I2C bus interface (IIC) in master mode, at the register level, driving a
simulated I2C bus (bus.py) in the core's cycles.

Registers: the RA6M4's IIC0 block (0x4009F000; IIC1 at +0x100) as its SVD gives it (the `ra6m4`
PAC crate 0.2.0, generated from Renesas's SVD: offsets, fields, reset values): ICCR1, ICCR2,
ICMR1-3, ICFER, ICSER, ICIER, ICSR1, ICSR2, SARL/U0-2, ICBRL, ICBRH, ICDRT, ICDRR. They are 8-bit
registers taking byte accesses. Behaviour follows the RIIC chapter of Renesas's manuals (the RA
parts' IIC is the RX family's RIIC; FSP's r_iic_master cites "36.3.2 Initial Settings" of the RA6M3
manual R01UH0886EJ0100):
* bit rate: SCL = 1 / ([(ICBRH + 1) + (ICBRL + 1)] / IICphi + tr + tf), IICphi = PCLKB / 2^CKS
  (RX23W manual R01UH0823EJ0100 35.2.14, the same RIIC); tr and tf, the board's (pull-ups and bus
  capacitance), are options, 0 by default: the SCL the registers give at most.
* ST (with BBSY = 0) issues a START: t_HD;STA later BBSY, START, MST, TRS and TDRE are set. A byte
  written to ICDRT moves to the shift register when it is free (TDRE set again) and is clocked out
  in 9 SCL periods; ICMR3.ACKBR is the acknowledge it got, NACKF is set on a NACK and, with
  ICFER.NACKE, the transfer stops there (the driver issues SP). TEND is set when the shift register
  has finished with ICDRT empty. The first byte after a START is the address (R/W in bit 0): a read
  address acknowledged turns TRS off and sets RDRF, and the (dummy) read of ICDRR that follows
  starts the reception.
* receiving, each byte takes 9 SCL periods after the previous one, with the acknowledge ICMR3.ACKBT
  gives (0: ACK); RDRF is set when it is in and cleared by reading ICDRR. A byte that would end
  while ICDRR still holds the last one waits (SCL held low) until the read, and with ICMR3.WAIT
  the next byte starts only at the read.
* SP issues a STOP once the byte under way ends: t_SU;STO later STOP is set and BBSY, MST, TRS clear.
* ICSR2 flags are cleared by writing 0 to them (TDRE, TEND and RDRF follow the data registers).
Interrupt request lines (RXI, TXI, TEI, ERI: `lines`), for an ICU model to route; not modelled:
slave mode, arbitration loss, the timeout, SMBus, 10-bit addresses and the noise filter's delay."""
from __future__ import annotations

import math

from ..peripherals.base import Peripheral, PeripheralError
from ..peripherals.registers import Access, Register, RegisterMap
from .atecc import Atecc, on_bus
from .bus import Bus

ICCR1, ICCR2, ICMR1, ICMR2, ICMR3, ICFER, ICSER, ICIER, ICSR1, ICSR2 = range(10)
ICBRL, ICBRH, ICDRT, ICDRR = 0x10, 0x11, 0x12, 0x13
ICE, IICRST = 0x80, 0x40
BBSY, MST, TRS, SP, RS, ST = 0x80, 0x40, 0x20, 0x08, 0x04, 0x02
WAIT, ACKWP, ACKBT, ACKBR = 0x40, 0x10, 0x08, 0x04
NACKE = 0x10
TDRE, TEND, RDRF, NACKF, STOP, START, AL, TMOF = 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01
TIE, TEIE, RIE, NAKIE, SPIE, STIE, ALIE, TMOIE = 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01
# the SVD's reset values (ra6m4 0.2.0: iccr1 0x1F, icmr1 0x08, icmr2 0x06, icfer 0x72, icser 0x09,
# icbrl/icbrh 0xFF, icdrt 0xFF)
RESET = {ICCR1: 0x1F, ICCR2: 0x00, ICMR1: 0x08, ICMR2: 0x06, ICMR3: 0x00, ICFER: 0x72, ICSER: 0x09, ICIER: 0x00,
         ICSR1: 0x00, ICBRL: 0xFF, ICBRH: 0xFF, ICDRT: 0xFF}


ATECC_MODES = {1: 0x00, 2: 0x28, 3: 0x68}       # the profile's atecc608_clock option -> ChipMode (M0, M1, M2)


class RaIic(Peripheral):
    """One IIC channel. `now` is the core's cycle count; the bus runs in seconds (cycles / core clock).
    The registers are bytes: the map below names them four to a word (the class's byte dispatch,
    `read` and `write`, serves them); a wider access is refused in one line."""
    kind = "ra-iic"
    title = "Renesas RA IIC"
    size = 0x100
    source = ("Renesas RA6M4 IIC0 register block as the ra6m4 0.2.0 PAC (Renesas SVD) gives it; RIIC behaviour as "
              "Renesas's RX/RA manuals describe it (RX23W R01UH0823EJ0100 chapter 35)")
    latency_source = ("the bus: UM10204 Rev. 7 Table 10 minima and 9 SCL periods a byte at the RIIC bit rate "
                      "1 / ([(ICBRH + 1) + (ICBRL + 1)] / IICphi + tr + tf); the targets' own times (sim/i2c)")
    options = {"core_clock_hz": "the core clock the bus's seconds are converted at",
               "pclkb_hz": "PCLKB, the IIC's clock (IICphi = PCLKB / 2^CKS)",
               "atecc608": "the 7-bit address of an ATECC608 on this channel's bus",
               "atecc608_clock": "its clock-divider mode: 1 = M0 (ChipMode 0x00), 2 = M1 (0x28), 3 = M2 (0x68)"}
    registers = RegisterMap(
        Register(0x00, "ICCR1 ICCR2 ICMR1 ICMR2", Access.RW, bits="bytes 0-3"),
        Register(0x04, "ICMR3 ICFER ICSER ICIER", Access.RW, bits="bytes 4-7"),
        Register(0x08, "ICSR1 ICSR2 SARL0 SARU0", Access.RW, bits="bytes 8-11 (slave addresses not modelled)"),
        Register(0x0C, "SARL1 SARU1 SARL2 SARU2", Access.RW, bits="bytes 12-15", modelled=False),
        Register(0x10, "ICBRL ICBRH ICDRT ICDRR", Access.RW, bits="bytes 16-19 (ICDRR read: takes the byte)"),
        stores="the IIC registers are 8-bit and take byte accesses (ra6m4 SVD: each register 8 bits wide)")

    def __init__(self, base: int, irq: int | None = None, memory=None, bus: Bus | None = None,
                 core_clock_hz: int = 200_000_000, pclkb_hz: int = 50_000_000, atecc608: int | None = None,
                 atecc608_clock: int = 1, rise_s: float = 0.0, fall_s: float = 0.0):
        super().__init__(base, irq, memory)
        self.bus = bus if bus is not None else Bus(100_000)
        if atecc608:
            if atecc608_clock not in ATECC_MODES:
                raise PeripheralError(f"{self.title}: atecc608_clock {atecc608_clock}; expected 1 (M0), 2 (M1) or 3 (M2)")
            self.bus.attach(Atecc(part="ATECC608", chip_mode=ATECC_MODES[atecc608_clock], address=atecc608))
        self.core_hz, self.pclkb_hz, self.rise_s, self.fall_s = core_clock_hz, pclkb_hz, rise_s, fall_s
        self.reg = dict(RESET)
        self._reset_state()

    def _reset_state(self) -> None:
        self.sr2 = 0
        self.busy = False                # BBSY
        self.master = self.transmit = False
        self.start_at: int | None = None   # a START (or repeated START) under way ends then
        self.stop_at: int | None = None    # a STOP under way ends then
        self.shift_end: int | None = None  # the byte in the shift register ends then
        self.shift_byte: int | None = None
        self.queued: int | None = None     # ICDRT written while the shift register was busy
        self.first = False                 # the next byte sent is an address
        self.target = None
        self.reading = False
        self.rx_end: int | None = None     # the byte being received ends then
        self.rx_started = False            # the dummy read of ICDRR has started the reception
        self.rx_more = True                # the last byte received was acknowledged
        self.rx_got = 0                    # when it ended
        self.drr = 0xFF
        self.ackbr = 0
        self.stalled = False               # NACKE stopped the transfer

    # ---- time ----------------------------------------------------------------------------------------
    def _s(self, cycles: int) -> float:
        return cycles / self.core_hz

    def _cycles(self, seconds: float) -> int:
        return math.ceil(seconds * self.core_hz)

    def scl_hz(self) -> float:
        iicphi = self.pclkb_hz / (1 << ((self.reg[ICMR1] >> 4) & 7))
        period = ((self.reg[ICBRH] & 0x1F) + 1 + (self.reg[ICBRL] & 0x1F) + 1) / iicphi + self.rise_s + self.fall_s
        return 1.0 / period

    def _byte_cycles(self) -> int:
        return self._cycles(9 / self.scl_hz())

    def _set_bus_rate(self) -> None:
        """The bus at the registers' SCL; a rate no I2C mode allows is the run's one-line error."""
        self.bus.scl_hz = self.scl_hz()
        try:
            self.bus.mode
        except ValueError as exc:
            raise PeripheralError(f"{self.title}: ICMR1.CKS, ICBRH and ICBRL give SCL {self.bus.scl_hz / 1e3:.0f} kHz: "
                                  f"{exc}") from None

    def _advance(self, now: int) -> None:
        """Every event that has happened by `now`, in time order."""
        while True:
            events = [(t, name) for t, name in ((self.start_at, "start"), (self.shift_end, "shift"),
                                                (self.rx_end, "rx"), (self.stop_at, "stop")) if t is not None and t <= now]
            if not events:
                return
            t, name = min(events)
            getattr(self, "_on_" + name)(t)

    def _on_start(self, t: int) -> None:
        self.start_at = None
        self.busy = self.master = self.transmit = True
        self.first, self.reading, self.stalled = True, False, False
        self.sr2 |= START | TDRE
        self.sr2 &= ~(TEND | NACKF)
        if self.queued is not None:
            self._shift(self.queued, t)
            self.queued = None

    def _shift(self, byte: int, t: int) -> None:
        self.shift_byte, self.shift_end = byte, t + self._byte_cycles()
        self.sr2 |= TDRE
        self.sr2 &= ~TEND

    def _on_shift(self, t: int) -> None:
        byte, self.shift_byte, self.shift_end = self.shift_byte, None, None
        self._set_bus_rate()
        at = self._s(t)
        if self.first:
            self.first = False
            address, read = byte >> 1, bool(byte & 1)
            if address == 0 and not read:
                self.bus.general_call_low(at - 9 / self.bus.scl_hz)
            self.target = self.bus.targets.get(address) if address else None
            ack = self.target is not None and self.target.addressed(read, at)
            if ack and read:       # RDRF rises with the address's acknowledge: its dummy read starts the reception
                self.reading, self.transmit, self.rx_started = True, False, False
                self.sr2 |= RDRF
        else:
            ack = self.target is not None and self.target.write_byte(byte, at)
        self.ackbr = 0 if ack else 1
        if not ack:
            self.sr2 |= NACKF
            if self.reg[ICFER] & NACKE:
                self.stalled, self.queued = True, None
        if self.reading:
            self.sr2 &= ~TDRE
            return
        if self.queued is not None and not self.stalled:
            self._shift(self.queued, t)
            self.queued = None
        else:
            self.sr2 |= TEND

    def _on_rx(self, t: int) -> None:
        self.rx_end = None
        self.rx_more = not self.reg[ICMR3] & ACKBT       # the acknowledge sent after this byte
        self.drr = self.target.read_byte(self._s(t), self.rx_more) if self.target is not None else 0xFF
        self.rx_got = t
        self.sr2 |= RDRF

    def _on_stop(self, t: int) -> None:
        self.stop_at = None
        self.busy = self.master = self.transmit = self.reading = False
        self.sr2 |= STOP
        self.sr2 &= ~(TDRE | TEND)
        if self.target is not None:
            self.target.stop(self._s(t))
        self.target = None
        self.bus.free_at_s = self._s(t) + self.bus.mode.t_buf_s

    @classmethod
    def attached(cls, spec: dict) -> str:
        """What the profile puts on this channel's bus, for the cells it serves."""
        if not spec.get("atecc608"):
            return ""
        mode = {1: "M0", 2: "M1", 3: "M2"}.get(spec.get("atecc608_clock", 1), "M0")
        return on_bus(spec["atecc608"], f"ATECC608-{mode}")

    # ---- the core's accesses (byte registers) -----------------------------------------------------
    def check_store(self, offset: int, size: int) -> None:
        if size != 1:
            raise PeripheralError(f"{self.title}: a {size}-byte access at offset 0x{offset:x}; {self.registers.stores}")

    def read_horizon(self, offset: int, size: int, now: int) -> int:
        return now                              # the bus moves the flags: every read reaches the model

    def describe(self) -> str:
        targets = "; ".join(on_bus(a, t.timing) for a, t in sorted(self.bus.targets.items()))
        return f"{self.title} ({self.source})" + (f"; {targets}" if targets else "")

    def read(self, offset: int, size: int, now: int) -> int:
        self.check_store(offset, size)
        self._advance(now)
        o = offset
        if o == ICCR2:
            return (BBSY if self.busy else 0) | (MST if self.master else 0) | (TRS if self.transmit else 0)
        if o == ICMR3:
            return (self.reg[ICMR3] & ~ACKBR) | (ACKBR if self.ackbr else 0)
        if o == ICSR2:
            return self.sr2
        if o == ICDRR:
            return self._read_drr(now)
        return self.reg.get(o, 0)

    def _read_drr(self, now: int) -> int:
        value = self.drr
        if not self.reading:
            return value
        if not self.rx_started:                    # the dummy read after the address starts the first byte
            if self.sr2 & RDRF:
                self.sr2 &= ~RDRF
                self.rx_started = True
                self.rx_end = now + self._byte_cycles()
            return value
        if self.sr2 & RDRF:                        # a received byte taken: the next one, if it was ACKed
            self.sr2 &= ~RDRF
            if self.rx_more and self.stop_at is None and self.rx_end is None:
                if self.reg[ICMR3] & WAIT:             # SCL held after the 9th clock until this read
                    self.rx_end = now + self._byte_cycles()
                else:                                  # back to back; held at the 8th clock if read late
                    self.rx_end = max(self.rx_got + self._byte_cycles(), now + self._byte_cycles() // 9)
        return value

    def write(self, offset: int, size: int, value: int, now: int) -> int:
        self.check_store(offset, size)
        self._advance(now)
        o, v = offset, value & 0xFF
        if o == ICCR1:
            self.reg[ICCR1] = (v & 0xF0) | 0x0F
            if v & IICRST:
                self._reset_state()
        elif o == ICCR2:
            self._command(v, now)
        elif o == ICMR3:
            keep = self.reg[ICMR3]
            if not v & ACKWP:
                v = (v & ~ACKBT) | (keep & ACKBT)        # ACKBT changes only with ACKWP set
            self.reg[ICMR3] = v & ~(ACKBR | ACKWP)
        elif o == ICSR2:
            self.sr2 &= v | TDRE | TEND | RDRF           # write 0 clears NACKF, STOP, START, AL, TMOF
        elif o == ICDRT:
            self._write_drt(v, now)
        elif o in self.reg:
            self.reg[o] = v
        return 0

    def _command(self, v: int, now: int) -> None:
        if v & ST and not self.busy and self.start_at is None:
            self._set_bus_rate()
            begin = max(now, self._cycles(self.bus.free_at_s))
            self.start_at = begin + self._cycles(self.bus.mode.t_hd_sta_s)
            return
        ends = max([t for t in (self.shift_end, self.rx_end) if t is not None] + [now])   # the byte under way
        if v & RS and self.busy:
            self.start_at = ends + self._cycles(self.bus.mode.t_hd_sta_s)
            self.reading = False
        if v & SP and self.busy:
            self.stop_at = ends + self._cycles(self.bus.mode.t_su_sto_s)

    def _write_drt(self, v: int, now: int) -> None:
        if not self.master or not self.transmit or self.stalled:
            return
        if self.shift_end is None and self.start_at is None:
            self._shift(v, now)
        else:
            self.queued = v
            self.sr2 &= ~TDRE

    def lines(self, now: int) -> dict:
        """The interrupt request lines as ICIER gates them (RXI, TXI, TEI, ERI)."""
        self._advance(now)
        ie, sr = self.reg[ICIER], self.sr2
        return {"RXI": bool(ie & RIE and sr & RDRF), "TXI": bool(ie & TIE and sr & TDRE),
                "TEI": bool(ie & TEIE and sr & TEND),
                "ERI": bool(ie & (NAKIE | SPIE | STIE | ALIE | TMOIE) & sr & (NACKF | STOP | START | AL | TMOF))}

    def next_event(self, now: int) -> int | None:
        times = [t for t in (self.start_at, self.shift_end, self.rx_end, self.stop_at) if t is not None and t > now]
        return min(times) if times else None

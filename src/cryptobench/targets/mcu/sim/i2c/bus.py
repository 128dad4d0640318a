"""An I2C bus: what a transfer costs on the wire, and which target answers.

Timing follows the I2C-bus specification (NXP UM10204 Rev. 7, 2021, Table 10, "Characteristics of
the SDA and SCL bus lines"): a byte is 9 SCL periods (8 data bits and the acknowledge bit), a
START (or repeated START) holds SDA low t_HD;STA before the first clock, a STOP follows the last
clock after t_SU;STO, and the bus is free t_BUF before the next START. The minima of the mode the
SCL frequency falls in are charged (Standard-mode up to 100 kHz, Fast-mode up to 400 kHz,
Fast-mode Plus up to 1 MHz): a controller that stretches them (its own timing registers) adds its
own on top. Rise and fall times are inside the SCL period the controller generates.

A target sees the bus byte by byte, as a controller model drives it: `addressed` (its address
with the R/W bit, at the time the acknowledge bit is sampled: ACK or NACK), `write_byte` (ACK or
NACK), `read_byte` (the byte it drives, and whether the controller will acknowledge it) and
`stop`. SDA held low longer than a byte's bits (a write to address 0 sends START and eight 0 bits:
SDA low for t_HD;STA + 8 SCL periods) is reported to every target (`sda_low`), which is how
CryptoAuthentication devices wake. `Bus.write` and `Bus.read` run whole transfers on that protocol
with the specification's timing (for tests and for controllers that move whole buffers)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class BusMode:
    name: str
    max_hz: int
    t_hd_sta_s: float        # hold time of a (repeated) START
    t_su_sto_s: float        # set-up time of a STOP
    t_buf_s: float           # bus free time between a STOP and the next START


# UM10204 Rev. 7 Table 10 (minimum values)
MODES = (BusMode("Standard-mode", 100_000, 4.0e-6, 4.0e-6, 4.7e-6),
         BusMode("Fast-mode", 400_000, 0.6e-6, 0.6e-6, 1.3e-6),
         BusMode("Fast-mode Plus", 1_000_000, 0.26e-6, 0.26e-6, 0.5e-6))
BITS_PER_BYTE = 9            # 8 data bits and the acknowledge bit


def mode_of(scl_hz: float) -> BusMode:
    """The I2C mode whose limits a SCL frequency keeps to; above 1 MHz there is none."""
    for m in MODES:
        if scl_hz <= m.max_hz:
            return m
    raise ValueError(f"SCL {scl_hz:g} Hz is above Fast-mode Plus (1 MHz, UM10204); the bus model has no faster mode")


class Target(Protocol):
    address: int                                        # 7-bit

    def sda_low(self, seconds: float, at: float) -> None: ...

    def addressed(self, read: bool, at: float) -> bool: ...

    def write_byte(self, byte: int, at: float) -> bool: ...

    def read_byte(self, at: float, more: bool) -> int: ...

    def stop(self, at: float) -> None: ...


@dataclass
class Transfer:
    """One transfer as the controller sees it: ACK of the address, the bytes acknowledged, the
    bytes read, when each phase ended (seconds)."""
    address_acked: bool
    acked: int                      # bytes after the address that were acknowledged (writes)
    data: bytes                     # bytes read (a NACKed address reads none)
    start_s: float
    end_s: float                    # the STOP's end (or the last clock's, without a STOP)


@dataclass
class Bus:
    """One bus at one SCL frequency; targets by their 7-bit address."""
    scl_hz: float
    targets: dict = field(default_factory=dict)
    free_at_s: float = 0.0          # when the previous STOP's bus-free time ends

    def attach(self, target: Target) -> None:
        if not 0x08 <= target.address <= 0x77:
            raise ValueError(f"7-bit address 0x{target.address:02x} is reserved (UM10204 Table 4: 0x00-0x07 "
                             "and 0x78-0x7F)")
        if target.address in self.targets:
            raise ValueError(f"two targets at 7-bit address 0x{target.address:02x}")
        self.targets[target.address] = target

    @property
    def mode(self) -> BusMode:
        return mode_of(self.scl_hz)

    @property
    def bit_s(self) -> float:
        return 1.0 / self.scl_hz

    def byte_s(self, n: int = 1) -> float:
        return n * BITS_PER_BYTE * self.bit_s

    def _start(self, at: float) -> float:
        """When the START's hold time ends (the first clock), a START at `at` or once the bus is free."""
        return max(at, self.free_at_s) + self.mode.t_hd_sta_s

    def _stop(self, t: float, stop: bool) -> float:
        if not stop:
            return t
        end = t + self.mode.t_su_sto_s
        self.free_at_s = end + self.mode.t_buf_s
        return end

    def general_call_low(self, at: float) -> None:
        """START and a 0x00 address byte: SDA low t_HD;STA + 8 SCL periods, seen by every target."""
        low = self.mode.t_hd_sta_s + 8 * self.bit_s
        for target in self.targets.values():
            target.sda_low(low, at)

    def write(self, address: int, data: bytes, at: float, stop: bool = True) -> Transfer:
        """START, address + W, the bytes until one is NACKed, STOP (unless stop=False: a repeated
        START follows)."""
        t0 = max(at, self.free_at_s)
        t = self._start(at)
        if address == 0:
            self.general_call_low(t0)                    # nobody here acknowledges the general call
        target = self.targets.get(address) if address else None
        t += self.byte_s()                               # the address byte and its acknowledge bit
        if target is None or not target.addressed(False, t):
            return Transfer(False, 0, b"", t0, self._stop(t, stop))
        acked = 0
        for byte in data:
            t += self.byte_s()
            if not target.write_byte(byte, t):
                break                                    # a NACKed byte is still clocked; the controller stops
            acked += 1
        end = self._stop(t, stop)
        if stop:
            target.stop(end)
        return Transfer(True, acked, b"", t0, end)

    def read(self, address: int, n: int, at: float, stop: bool = True) -> Transfer:
        """START, address + R, n bytes (the controller ACKs all but the last), STOP."""
        t0 = max(at, self.free_at_s)
        t = self._start(at) + self.byte_s()
        target = self.targets.get(address)
        if target is None or not target.addressed(True, t):
            return Transfer(False, 0, b"", t0, self._stop(t, stop))
        data = bytearray()
        for i in range(n):
            t += self.byte_s()
            data.append(target.read_byte(t, i < n - 1))
        end = self._stop(t, stop)
        if stop:
            target.stop(end)
        return Transfer(True, 0, bytes(data), t0, end)

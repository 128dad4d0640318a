"""The peripheral models a device profile may list (devices.toml `peripheral_models`), and the
bus a run reaches them through."""
from __future__ import annotations

from . import bitband
from .base import Memory, Peripheral, PeripheralError
from .cc26x2_crypto import Cc26x2Crypto
from .cc26x2_pka import Cc26x2Pka
from .cc26x2_trng import Cc26x2Trng
from .registers import NEVER
from .stm32_cryp import Stm32Cryp
from .stm32_hash import Stm32Hash
from .stm32_rng import Stm32Rng
from .stm32u5_aes import Stm32U5Aes, Stm32U5Saes
from .imxrt_dcp import ImxrtDcp
from ..i2c.ra_iic import RaIic
from ..i2c.stm32_i2c import Stm32I2c

KINDS: dict[str, type[Peripheral]] = {cls.kind: cls for cls in (Stm32Hash, Stm32Cryp, Stm32Rng, Cc26x2Crypto,
                                                                  Cc26x2Trng, Cc26x2Pka, Stm32U5Aes, Stm32U5Saes,
                                                                  ImxrtDcp, RaIic, Stm32I2c)}
BASE_KEYS = ("kind", "base", "irq", "enable", "source")


def check_spec(spec: dict, where: str) -> str | None:
    """What is wrong with one `peripheral_models` entry ({kind, base, irq, source}), or None."""
    if not isinstance(spec, dict):
        return f"{where}: a peripheral_models entry {spec!r}; expected {{ kind, base, irq, source }}"
    kind = spec.get("kind")
    if kind not in KINDS:
        return f"{where}: peripheral kind {kind!r}; expected one of " + ", ".join(KINDS)   # registry order
    base = spec.get("base")
    if not isinstance(base, int) or isinstance(base, bool) or not 0x40000000 <= base < 0x60000000:
        return f"{where}: {kind} base {base!r}; expected an address in the peripheral region 0x40000000-0x5fffffff"
    irq = spec.get("irq")
    if irq is not None and (not isinstance(irq, int) or isinstance(irq, bool) or not 0 <= irq < 480):
        return f"{where}: {kind} irq {irq!r}; expected the NVIC interrupt number (0-479)"
    if not str(spec.get("source", "")).strip():
        return f"{where}: {kind} has no source; expected the manual section giving its address and interrupt"
    enable = spec.get("enable")
    if enable is not None and not (isinstance(enable, list) and len(enable) == 2
                                   and all(isinstance(v, int) and not isinstance(v, bool) for v in enable)
                                   and 0x40000000 <= enable[0] < 0x60000000):
        return (f"{where}: {kind} enable {enable!r}; expected [register address, bit mask] of the clock-enable bit "
                "in the peripheral region")
    for key in spec:
        if key in BASE_KEYS:
            continue
        if key not in KINDS[kind].options:
            return (f"{where}: {kind} has an unknown key {key!r}; expected kind, base, irq, enable, source"
                    + "".join(f", {k} ({what})" for k, what in KINDS[kind].options.items()))
        v = spec[key]
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            return f"{where}: {kind} {key} {v!r}; expected a positive whole number ({KINDS[kind].options[key]})"
    return None


def _options(spec: dict, core_clock_hz: int | None) -> dict:
    """The model-specific keys of one checked spec, as constructor arguments."""
    opts = {k: v for k, v in spec.items() if k not in BASE_KEYS}
    if core_clock_hz and "core_clock_hz" in KINDS[spec["kind"]].options:
        opts["core_clock_hz"] = core_clock_hz
    return opts


class PeripheralBus:
    """A run's peripheral models, found by address, and the pages they and their clock-enable
    registers lie in. What else a page holds reads back what was written (as the peripheral
    region does everywhere else), so a driver's clock-enable write is kept and checked: a model
    whose clock-enable bit (the spec's `enable`: [register, mask]) is clear refuses its accesses,
    as a part's unclocked peripheral ignores them."""

    def __init__(self, specs: list[dict], memory: Memory | None, core_clock_hz: int | None = None,
                 core: str = ""):
        """`core_clock_hz`, where the run knows it (a --device clock= option), overrides a spec's own
        core_clock_hz for the models that convert a peripheral clock to core cycles (the RNG).
        On a Cortex-M3/M4 `core` the pages' bit-band alias (bitband.py) reaches them as well."""
        self.models: list[Peripheral] = [KINDS[s["kind"]](s["base"], s.get("irq"), memory,
                                                          **_options(s, core_clock_hz)) for s in specs]
        self.enable = {id(m): s.get("enable") for m, s in zip(self.models, specs)}
        self.plain: dict[int, int] = {}          # other registers of the pages: byte address -> byte
        self._pages = self._merge([(m.base, m.base + m.size) for m in self.models]
                                  + [(s["enable"][0], s["enable"][0] + 4) for s in specs if s.get("enable")])
        # only an M3/M4 has the alias: elsewhere 0x42000000-0x43ffffff is ordinary peripheral space (the
        # STM32U5's AES and SAES are at 0x420c0000)
        self.bitband = core in bitband.CORES
        spans = [bitband.alias_span(lo, size) for lo, size in self._pages] if self.bitband else []
        self._alias = [s for s in spans if s is not None]

    def __bool__(self) -> bool:
        return bool(self.models)

    def find(self, addr: int) -> Peripheral | None:
        for p in self.models:
            if p.covers(addr):
                return p
        return None

    def owns(self, addr: int) -> bool:
        """Whether `addr` lies in one of the bus's pages (a model's, or a clock-enable register's), or
        in their bit-band alias."""
        return any(lo <= addr < lo + size for lo, size in self._pages + self._alias)

    def access(self, addr: int, size: int, now, value: int | None = None) -> int:
        """One access to the bus's pages: a read's value (value None) or a store's stall cycles.
        `now` is called only for a model's register (it stamps the accessing instruction)."""
        if self.bitband and bitband.is_alias(addr):
            return self._bit_access(addr, size, now, value)
        p = self.find(addr)
        if p is None:
            if value is None:
                return sum(self.plain.get(addr + i, 0) << (8 * i) for i in range(size))
            for i in range(size):
                self.plain[addr + i] = (value >> (8 * i)) & 0xFF
            return 0
        enable = self.enable[id(p)]
        if enable is not None and not self._read_plain(enable[0]) & enable[1]:
            raise PeripheralError(f"{p.title}: accessed at 0x{addr:08x} with its clock off (bit 0x{enable[1]:x} of "
                                  f"0x{enable[0]:08x} clear): enable it first")
        if value is None:
            return p.read(addr - p.base, size, now()) & 0xFFFFFFFF
        return p.write(addr - p.base, size, value, now())

    def read_horizon(self, addr: int, size: int, now: int) -> int:
        """The first cycle >= `now` (an int) at which a read of `size` bytes at `addr` could give another
        value than a read at `now` gave, or have an effect (registers.py), provided no access with an
        effect reaches any of the bus's models meanwhile: no store, and no read whose own horizon was
        its cycle (such a read may move other registers: a FIFO pop starts the next block), so a cache
        of read values is dropped on either. `now` itself: no guarantee. The rest of a page reads back
        what was stored, so its horizon is NEVER (2**64 - 1), as is that of a model register whose
        value only a store changes."""
        if self.bitband and bitband.is_alias(addr):
            addr, _ = bitband.target(addr, size)
        p = self.find(addr)
        if p is None:
            return NEVER if self.owns(addr) else now
        enable = self.enable[id(p)]
        if enable is not None and not self._read_plain(enable[0]) & enable[1]:
            return now                      # the access is refused: nothing to serve again
        return max(now, p.read_horizon(addr - p.base, size, now))

    def undeclared(self) -> list[str]:
        """One line per kind of access the models counted at an offset no register declares, or at a
        register they do not model (registers.py; reserved: reads 0, stores ignored), e.g.
        "STM32F4 HASH: 3 reads of undeclared offset 0x0f0 (reserved: reads 0, stores ignored)"."""
        return [line for p in self.models for line in p.access_log.lines(p.title)]

    def _bit_access(self, alias: int, size: int, now, value: int | None) -> int:
        """A bit-band alias access (bitband.py): the bit read, or a read-modify-write of the word."""
        addr, bit = bitband.target(alias, size)
        word = self.access(addr, size, now)
        if value is None:
            return (word >> bit) & 1
        word = (word | 1 << bit) if value & 1 else (word & ~(1 << bit))
        return self.access(addr, size, now, word)

    def _read_plain(self, addr: int) -> int:
        return sum(self.plain.get(addr + i, 0) << (8 * i) for i in range(4))

    def read(self, p: Peripheral, addr: int, size: int, now: int) -> int:
        return p.read(addr - p.base, size, now) & 0xFFFFFFFF

    def write(self, p: Peripheral, addr: int, size: int, value: int, now: int) -> int:
        """The store's stall cycles (0 normally)."""
        return p.write(addr - p.base, size, value, now)

    def engine_cycles(self, now: int) -> int:
        """Cycles the models worked before `now`, summed over the models (two engines at once count twice)."""
        return sum(m.active.until(now) for m in self.models)

    def pages(self) -> list[tuple[int, int]]:
        """(base, size) of the 4 KiB page runs the models' registers and enable registers lie in, and
        of their bit-band alias (an M3/M4 core's)."""
        return list(self._pages) + list(self._alias)

    @staticmethod
    def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        spans = sorted({(lo & ~0xFFF, (hi + 0xFFF) & ~0xFFF) for lo, hi in ranges})
        out: list[tuple[int, int]] = []
        for lo, hi in spans:
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return [(lo, hi - lo) for lo, hi in out]

    def describe(self) -> list[str]:
        return [p.describe() for p in self.models]


__all__ = ["KINDS", "NEVER", "PeripheralBus", "PeripheralError", "check_spec"]

"""The peripheral bit-band alias of the Cortex-M3 and Cortex-M4: every bit of the first megabyte
of the peripheral region (0x4000 0000-0x400F FFFF) is also a word of its own at 0x4200 0000-
0x43FF FFFF (ARMv7-M ARM B3.5.3 / Arm Cortex-M4 TRM (DDI 0439) 3.7 "Bit-banding"; TI SWCU185G
"Bit-Banding" for the CC26x2's Cortex-M4F). TI's driverlib sets the crypto DMA's channel enables
through it (HWREGBITW), so a model's registers are reached through their alias as well.

  alias = 0x4200 0000 + (byte - 0x4000 0000) * 32 + bit * 4
A read gives the bit (0 or 1); a write of an alias word is a read-modify-write of the bit-band
region with the access's own size ("the bit-band transfer size matches the transfer size of the
instruction making the bit-band access"), bit 0 of the value giving the bit.

Timing: the read half of the read-modify-write is the bus's, and no manual gives its cycles; the
model charges the store as any other store to the register (assumption, lower confidence). The
Cortex-M0, M7, M23 and M33 have no bit-band region: only an M3/M4 device's bus serves it."""
from __future__ import annotations

REGION_LO, REGION_HI = 0x40000000, 0x40100000     # the peripheral bit-band region
ALIAS_LO, ALIAS_HI = 0x42000000, 0x44000000       # its alias
CORES = ("cortex-m3", "cortex-m4")                # the cores with bit-banding (ARMv7-M, optional)


def is_alias(addr: int) -> bool:
    return ALIAS_LO <= addr < ALIAS_HI


def target(alias: int, size: int) -> tuple[int, int]:
    """(address, bit) in the bit-band region that the alias word at `alias` stands for, with the
    address aligned to the access `size` (1, 2 or 4 bytes) and the bit counted from it."""
    offset = alias - ALIAS_LO
    byte = REGION_LO + (offset >> 5)
    bit = (offset >> 2) & 7
    addr = byte & ~(size - 1)
    return addr, (byte - addr) * 8 + bit


def alias_span(lo: int, size: int) -> tuple[int, int] | None:
    """(base, size) of the alias of [lo, lo + size) where that lies in the bit-band region."""
    if not (REGION_LO <= lo and lo + size <= REGION_HI):
        return None
    return ALIAS_LO + (lo - REGION_LO) * 32, size * 32

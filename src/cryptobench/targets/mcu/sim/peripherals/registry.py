"""The peripheral models a device profile may list (devices.toml `peripheral_models`), and the
bus a run reaches them through."""
from __future__ import annotations

from .base import Memory, Peripheral, PeripheralError
from .cc26x2_crypto import Cc26x2Crypto
from .cc26x2_trng import Cc26x2Trng
from .stm32_hash import Stm32Hash

KINDS: dict[str, type[Peripheral]] = {cls.kind: cls for cls in (Stm32Hash, Cc26x2Crypto, Cc26x2Trng)}


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
    return None


class PeripheralBus:
    """A run's peripheral models, found by address."""

    def __init__(self, specs: list[dict], memory: Memory | None):
        self.models: list[Peripheral] = [KINDS[s["kind"]](s["base"], s.get("irq"), memory) for s in specs]

    def __bool__(self) -> bool:
        return bool(self.models)

    def find(self, addr: int) -> Peripheral | None:
        for p in self.models:
            if p.covers(addr):
                return p
        return None

    def read(self, p: Peripheral, addr: int, size: int, now: int) -> int:
        return p.read(addr - p.base, size, now) & 0xFFFFFFFF

    def write(self, p: Peripheral, addr: int, size: int, value: int, now: int) -> int:
        """The store's stall cycles (0 normally)."""
        return p.write(addr - p.base, size, value, now)

    def pages(self) -> list[tuple[int, int]]:
        """(base, size) of the 4 KiB pages the models' registers lie in, merged."""
        spans = sorted({(p.base & ~0xFFF, ((p.base + p.size + 0xFFF) & ~0xFFF)) for p in self.models})
        out: list[tuple[int, int]] = []
        for lo, hi in spans:
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return [(lo, hi - lo) for lo, hi in out]

    def describe(self) -> list[str]:
        return [p.describe() for p in self.models]


__all__ = ["KINDS", "PeripheralBus", "PeripheralError", "check_spec"]

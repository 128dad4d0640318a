"""Device profiles for the simulator (data in devices.toml)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError

DEVICES_FILE = Path(__file__).with_name("devices.toml")
CORE_CPU = {"cortex-m0": "m0", "cortex-m0plus": "m0plus", "cortex-m3": "m3", "cortex-m4": "m4",
            "cortex-m7": "m7", "cortex-m33": "m33"}


@dataclass(frozen=True)
class Device:
    name: str
    title: str
    core: str
    board: str
    clock_hz: int
    flash_ws: int
    prefetch: bool
    flash_width: int
    code_in_flash: bool
    fast_multiplier: bool
    supply_v: float
    active_current_a: float
    source: str
    energy_source: str
    notes: str = ""
    idle_current_a: float = 0.0          # CPU power domain off, a peripheral may run (0: unknown)
    standby_current_a: float = 0.0       # everything off but retention (0: unknown)
    peripherals: dict = field(default_factory=dict)   # name -> extra current (A) while it runs
    current_at_v: float = 0.0            # the voltage the currents were measured at (0: not stated)


def _load() -> dict[str, Device]:
    doc = tomllib.loads(DEVICES_FILE.read_text())
    return {name: Device(name=name, **{k: v for k, v in d.items()}) for name, d in doc["device"].items()}


DEVICES = _load()


def get_device(name: str | None, core: str) -> Device:
    """The --device for a sim:CORE target (default: the ideal zero-wait-state device of that core)."""
    if core not in CORE_CPU:
        raise UsageError(f"--target sim:{core}: unknown core; valid: " + ", ".join(f"sim:{c}" for c in CORE_CPU))
    name = name or "ideal-" + CORE_CPU[core].replace("m", "m", 1)
    if name not in DEVICES:
        raise UsageError(f"--device: unknown device '{name}'; valid: {', '.join(DEVICES)}")
    dev = DEVICES[name]
    if dev.core != core:
        raise UsageError(f"--device {name} has a {dev.core}, not a {core}; devices with a {core}: "
                         + ", ".join(d.name for d in DEVICES.values() if d.core == core))
    return dev

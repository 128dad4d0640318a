"""Device profiles for the simulator (data in devices.toml)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import UsageError
from ....core.target_specs import device_options_text
from .condition import KEYS, resolve, split_spec
from .peripherals.registry import check_spec

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
    # the condition the profile states (condition.py resolves --device NAME:key=value against it)
    clock_source: str = ""               # what gives clock_hz (oscillator, PLL), with its source
    max_clock_hz: int = 0                # the part's maximum core clock (0: not stated)
    max_clock_source: str = ""
    wait_states: list = field(default_factory=list)   # [[max HCLK in Hz, wait states], …] from the RM
    wait_states_source: str = ""         # RM document, section, table and supply range
    prefetch_source: str = ""
    prefetch_at_reset: bool | None = None  # the prefetch bit's reset value (None: not stated)
    prefetch_reset_source: str = ""
    reset_clock_hz: int = 0              # the clock out of reset, before firmware configures one
    reset_clock_source: str = ""
    accelerator: str = ""                # flash accelerator or cache and what the model assumes of it
    accelerator_source: str = ""
    flash_cache: dict = field(default_factory=dict)   # the flash line and caches modelled in cbsim.c (see
                                         # FlashCache; {}: none, fetches charged by timing.block_cost)
    # the fetch unit (docs/sim-model.md "Fetch bandwidth"): flash_width bytes per flash access; where
    # the bound W / (ws + 1) bytes per cycle applies, and why not where it does not
    fetch_source: str = ""
    fetch_shared_port: bool = False      # data reads from flash use the fetch unit's port (they delay
                                         # the prefetch): where the reference manual says so
    # timing-annotated crypto peripherals (peripherals/registry.py): [{kind, base, irq, source}]
    peripheral_models: list = field(default_factory=list)
    condition: dict = field(default_factory=dict)   # resolved: each figure with its source
    options: dict = field(default_factory=dict)     # the --device key=value options it was resolved with


@dataclass(frozen=True)
class FlashCache:
    """A flash memory system cbsim.c models line by line: the line (fetch unit) size, and the
    instruction and data caches in front of flash (lines and ways; 0 lines: none). A line read
    from flash costs the wait states plus `miss_extra` (bus latency beyond the flash, e.g. the
    Cortex-M7's AXI), a hit nothing."""
    line_bytes: int
    icache_lines: int = 0
    icache_ways: int = 0
    dcache_lines: int = 0
    dcache_ways: int = 0
    miss_extra: int = 0
    replacement: str = "lru"
    source: str = ""

    @classmethod
    def of(cls, device: "Device") -> "FlashCache":
        """The profile's flash system; without a flash_cache, its fetch unit alone: lines of
        flash_width bytes, no caches."""
        if device.flash_cache:
            return cls(**device.flash_cache)
        return cls(line_bytes=device.flash_width, source=device.fetch_source)

    def sets(self, lines: int, ways: int) -> int:
        return lines // ways if lines and ways else 0


def _check(name: str, d: dict) -> None:
    """The fetch-unit fields of one profile, or one line naming the file, the profile and what was expected."""
    where = f"{DEVICES_FILE}: [device.{name}]"
    width = d.get("flash_width")
    if not isinstance(width, int) or isinstance(width, bool) or width < 1 or width > 64 or width & (width - 1):
        raise UsageError(f"{where}: flash_width {width!r}; expected the fetch unit's width in bytes, a power of two "
                         "from 1 to 64")
    if not isinstance(d.get("fetch_source"), str) or not d["fetch_source"].strip():
        raise UsageError(f"{where}: fetch_source missing; expected the reference-manual section giving the fetch "
                         "unit's width (or why the fetch bound does not apply)")
    if not isinstance(d.get("fetch_shared_port", False), bool):
        raise UsageError(f"{where}: fetch_shared_port {d['fetch_shared_port']!r}; expected true or false")
    for spec in d.get("peripheral_models", []):
        problem = check_spec(spec, where)
        if problem:
            raise UsageError(problem)
    line = (d.get("flash_cache") or {}).get("line_bytes")
    if line is not None and line != width:
        raise UsageError(f"{where}: flash_cache.line_bytes {line} differs from flash_width {width}; expected one "
                         "fetch width (a line is one flash access)")


def _load() -> dict[str, Device]:
    doc = tomllib.loads(DEVICES_FILE.read_text())
    for name, d in doc["device"].items():
        _check(name, d)
    return {name: Device(name=name, **{k: v for k, v in d.items()}) for name, d in doc["device"].items()}


DEVICES = _load()


def get_device(spec: str | None, core: str) -> Device:
    """The --device NAME[:key=value,…] for a sim:CORE target (default: the ideal zero-wait-state
    device of that core), resolved at the condition its options ask for (condition.py)."""
    check_core(core)
    spec = spec or default_device(core)
    name, opts = split_spec(spec)
    return device_at(core, name, opts, shown=spec)


def device_at(core: str, name: str | None, options: dict | None, shown: str | None = None) -> Device:
    """The profile `name` (None: the core's ideal one) resolved at `options` ({'clock': '8MHz'}):
    what a sim target stores (records.SimSpec's device and device_options), resolved without
    going through its text again; one line naming --device (`shown`, else the name and options)
    where they do not hold."""
    check_core(core)
    name = name or default_device(core)
    opts = dict(options or {})
    shown = shown or device_spec(name, opts)
    for key, value in opts.items():          # a stored target's options: split_spec checked them when planned
        if key not in KEYS:
            raise UsageError(f"--device {shown}: unknown key '{key}'; valid: {', '.join(KEYS)}")
        if not isinstance(value, str):
            raise UsageError(f"--device {shown}: {key} {value!r}; expected the option's text (8MHz, 1, on)")
    if name not in DEVICES:
        raise UsageError(f"--device: unknown device '{name}'; valid: {', '.join(DEVICES)}")
    dev = DEVICES[name]
    if dev.core != core:
        raise UsageError(f"--device {name} has a {dev.core}, not a {core}; devices with a {core}: "
                         + ", ".join(d.name for d in DEVICES.values() if d.core == core))
    return resolve(dev, opts, shown)


def check_core(core: str) -> None:
    if core not in CORE_CPU:
        raise UsageError(f"--target sim:{core}: unknown core; valid: " + ", ".join(f"sim:{c}" for c in CORE_CPU))


def default_device(core: str) -> str:
    """The ideal zero-wait-state profile of a core: what --device defaults to."""
    return "ideal-" + CORE_CPU[core]


def device_spec(name: str, options: dict | None) -> str:
    """'stm32f030:clock=8MHz' from a stored target's device and device_options (for text: a
    label, a message)."""
    opts = device_options_text(options)
    return name + (":" + opts if opts else "")

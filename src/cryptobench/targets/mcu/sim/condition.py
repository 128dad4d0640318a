"""A device profile's operating condition: `--device NAME[:key=value[,key=value]]`.

`clock=` (Hz, kHz or MHz; or `reset`, the part's clock out of reset) picks the core clock and
derives the flash wait states from the profile's wait-state table (the part's reference manual);
`ws=N` and `prefetch=on|off` override them, and an override that contradicts the table is kept but
recorded as such. The resolved condition (clock, clock source, wait states, prefetch, accelerator,
each with its source) is what a run stores in its target conditions."""
from __future__ import annotations

import re
from dataclasses import replace

from ....core.errors import UsageError
from ....core.units import parse_hz as parse_hz_text

KEYS = ("clock", "ws", "prefetch", "cache")
# The ranges an option may take: the native accounting holds them in 32 bits (ws=2^32 would wrap
# to 0), and no Cortex-M part runs above 1 GHz or has more than 15 flash wait states (the widest
# LATENCY field, STM32H7's FLASH_ACR, is 4 bits).
MAX_WS = 15
MAX_CLOCK_HZ = 1_000_000_000


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """'stm32f030:clock=8MHz,ws=0' -> ('stm32f030', {'clock': '8MHz', 'ws': '0'})."""
    name, _, rest = spec.partition(":")
    opts: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))) if rest else ():
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or not value.strip():
            raise UsageError(f"--device {spec}: '{item}' is not key=value; expected NAME[:key=value[,key=value]] "
                             f"with keys {', '.join(KEYS)}")
        if key not in KEYS:
            raise UsageError(f"--device {spec}: unknown key '{key}'; valid: {', '.join(KEYS)}")
        if key in opts:
            raise UsageError(f"--device {spec}: '{key}' given twice")
        opts[key] = value.strip()
    if rest and not opts:
        raise UsageError(f"--device {spec}: nothing after ':'; expected NAME[:key=value[,key=value]]")
    return name, opts


def parse_hz(text: str, spec: str) -> int:
    """'8MHz', '8 mhz', '32768Hz', '800kHz', '48000000' -> Hz (core/units.py reads the number)."""
    try:
        hz = parse_hz_text(text)
    except ValueError:
        raise UsageError(f"--device {spec}: clock '{text}' is not a frequency; expected e.g. 8MHz, 800kHz, "
                         "48000000 (Hz) or reset") from None
    if hz <= 0 or hz != int(hz):
        raise UsageError(f"--device {spec}: clock '{text}' must be a positive whole number of Hz")
    if hz > MAX_CLOCK_HZ:
        raise UsageError(f"--device {spec}: clock '{text}' is out of range; expected 1 Hz to {mhz(MAX_CLOCK_HZ)}")
    return int(hz)


def parse_ws(text: str, spec: str) -> int:
    """'2' -> 2: flash wait states from 0 to MAX_WS, or one line naming the option and the range."""
    if not (text.isascii() and text.isdigit()):
        raise UsageError(f"--device {spec}: ws '{text}' is not a whole number of wait states; expected 0 to {MAX_WS}")
    if int(text) > MAX_WS:
        raise UsageError(f"--device {spec}: ws '{text}' is out of range; expected a whole number of flash wait "
                         f"states from 0 to {MAX_WS}")
    return int(text)


def ws_for(table: list, hz: int) -> int | None:
    """The fewest wait states whose maximum frequency (the RM table: [[max_hz, ws], …]) covers hz;
    None above the table's last row."""
    for max_hz, ws in sorted(table, key=lambda row: row[1]):
        if hz <= max_hz:
            return ws
    return None


def mhz(hz: float) -> str:
    return f"{hz / 1e6:g} MHz"


# long: one table of cases (clock from the profile, an option or reset; wait states from the table or an override; prefetch likewise) in the order they resolve
def resolve(dev, opts: dict[str, str], spec: str):
    """The profile `dev` at the condition `opts` asks for: a Device with clock_hz, flash_ws and
    prefetch set and `condition` (each figure with its source) filled in."""
    cond: dict = {}
    prefetch_default, prefetch_src = dev.prefetch, dev.prefetch_source or dev.source
    clock = opts.get("clock")
    if clock is None:
        hz = dev.clock_hz
        cond["clock_hz"] = {"value": hz, "source": f"the {dev.name} profile (sim/devices.toml)"}
        cond["clock_source"] = {"value": dev.clock_source or "not stated", "source": "the profile"}
    elif clock.lower() == "reset":
        if not dev.reset_clock_hz:
            raise UsageError(f"--device {spec}: the {dev.name} profile states no reset clock (reset_clock_hz in "
                             "sim/devices.toml); give clock=FREQUENCY")
        hz = dev.reset_clock_hz
        cond["clock_hz"] = {"value": hz, "source": "--device option clock=reset: the part's clock out of reset"}
        cond["clock_source"] = {"value": dev.reset_clock_source.split(" (")[0], "source": dev.reset_clock_source}
        if dev.prefetch_at_reset is not None:
            prefetch_default = dev.prefetch_at_reset
            prefetch_src = "clock=reset: the prefetch bit's reset value, " + dev.prefetch_reset_source
    else:
        hz = parse_hz(clock, spec)
        cond["clock_hz"] = {"value": hz, "source": f"--device option clock={clock}"}
        cond["clock_source"] = {"value": "not stated (the option sets the frequency only)",
                                "source": f"--device option clock={clock}"}
    if dev.max_clock_hz and hz > dev.max_clock_hz:
        raise UsageError(f"--device {spec}: {mhz(hz)} is above the {dev.name}'s maximum of {mhz(dev.max_clock_hz)} "
                         f"({dev.max_clock_source or dev.wait_states_source})")
    table_ws = ws_for(dev.wait_states, hz) if dev.wait_states else None
    if dev.wait_states and table_ws is None:
        raise UsageError(f"--device {spec}: {mhz(hz)} is above the last row of the {dev.name}'s wait-state table "
                         f"({dev.wait_states_source})")
    if table_ws is not None:
        ws, ws_src = table_ws, f"{dev.wait_states_source}: {table_ws} WS at {mhz(hz)}"
    else:
        ws, ws_src = dev.flash_ws, f"the {dev.name} profile (no wait-state table: {dev.accelerator or dev.source})"
    if "ws" in opts:
        ws = parse_ws(opts["ws"], spec)
        ws_src = f"--device option ws={ws}"
    cond["flash_ws"] = {"value": ws, "source": ws_src}
    if table_ws is not None and ws != table_ws:
        cond["flash_ws"]["contradicts"] = (f"{dev.wait_states_source} gives {table_ws} WS at {mhz(hz)}"
                                           + ("; fewer than the part needs" if ws < table_ws else ""))
    prefetch = prefetch_default
    if "prefetch" in opts:
        value = opts["prefetch"].lower()
        if value not in ("on", "off"):
            raise UsageError(f"--device {spec}: prefetch '{opts['prefetch']}'; expected on or off")
        prefetch, prefetch_src = value == "on", f"--device option prefetch={value}"
    cond["prefetch"] = {"value": prefetch, "source": prefetch_src}
    cond["accelerator"] = {"value": dev.accelerator or "none", "source": dev.accelerator_source or dev.source}
    flash_cache = _caches(dev, opts, spec, cond)
    return replace(dev, clock_hz=hz, flash_ws=ws, prefetch=prefetch, condition=cond, options=dict(opts),
                   flash_cache=flash_cache)


def _caches(dev, opts: dict[str, str], spec: str, cond: dict) -> dict:
    """The profile's flash caches, or none of them with cache=off (the line buffer and the
    prefetcher stay: they are not caches); recorded in the condition."""
    if "cache" not in opts:
        if dev.flash_cache:
            cond["caches"] = {"value": "on", "source": dev.flash_cache.get("source") or dev.accelerator_source}
        return dev.flash_cache
    value = opts["cache"].lower()
    if value not in ("on", "off"):
        raise UsageError(f"--device {spec}: cache '{opts['cache']}'; expected on or off")
    if not dev.flash_cache:
        raise UsageError(f"--device {spec}: the {dev.name} profile models no flash cache (flash_cache in "
                         "sim/devices.toml); leave out cache=")
    cond["caches"] = {"value": value, "source": f"--device option cache={value}"}
    if value == "on":
        return dev.flash_cache
    return {**dev.flash_cache, "icache_lines": 0, "icache_ways": 0, "dcache_lines": 0, "dcache_ways": 0}


def describe(cond: dict) -> str:
    """One line: '8 MHz (HSI …), 0 flash wait state(s), prefetch on, accelerator none'."""
    if not cond:
        return ""
    ws = cond["flash_ws"]
    text = (f"{mhz(cond['clock_hz']['value'])} from {cond['clock_source']['value']}, {ws['value']} flash wait state(s)"
            + (f" (contradicts {ws['contradicts']})" if ws.get("contradicts") else "")
            + (" (hidden by the accelerator: 0 charged)" if "charged" in ws else "")   # runs stored before model v2
            + f", prefetch {'on' if cond['prefetch']['value'] else 'off'}, accelerator: {cond['accelerator']['value']}"
            + (f", caches {cond['caches']['value']}" if "caches" in cond else ""))
    return text


def sources(cond: dict) -> str:
    """'clock: SOURCE; wait states: SOURCE; …' of a condition."""
    names = (("clock_hz", "clock"), ("clock_source", "clock source"), ("flash_ws", "wait states"),
             ("prefetch", "prefetch"), ("accelerator", "accelerator"), ("caches", "caches"))
    return "; ".join(f"{label}: {cond[k]['source']}" for k, label in names if k in cond)

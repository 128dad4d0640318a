"""The one parser of numbers with units on the command line: clocks, rates, power, durations.

`--device NAME:clock=…` and every `cryptobench model` option read their numbers here, so `8MHz`
means the same everywhere. A number may carry an SI prefix (p n u µ m k K M G) and its unit:
'300e6', '300MHz', '9.6G', '9.6Gbps', '18mW', '48.89ns'.

Frequencies are read without regard to case, and there `m` is mega: '8mhz' and '8mHz' are 8 MHz,
as everyone who types them means (no clock is given in millihertz). Every other unit is
case-sensitive, and `m` is milli there ('18mW' is 0.018 W, '18MW' is 18 MW).
"""
from __future__ import annotations

import math
import re

PREFIX = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
HZ_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}      # a frequency's prefixes, lower-cased
UNITS = ("Hz", "bps", "b/s", "W", "s", "A", "V", "B")
_QUANTITY = re.compile(r"\s*((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([pnuµmkKMG]?)\s*(\S*?)\s*")


def parse_quantity(text: str, unit: str | None = None) -> float:
    """A number in the base unit. `unit` is the one unit allowed (it may be left out of the text),
    None allows any of UNITS. ValueError, with what was expected, on anything else."""
    example = "8MHz, 800kHz or 48000000" if unit == "Hz" else "300MHz, 9.6G, 18mW, 48.89ns"
    m = _QUANTITY.fullmatch(str(text))
    allowed = (unit,) if unit else UNITS
    if m is None:
        raise ValueError(f"'{text}' is not a number (an SI prefix and unit are allowed, e.g. {example})")
    number, prefix, suffix = m.groups()
    if suffix.lower() == "hz" and "Hz" in allowed or (unit == "Hz" and not suffix):
        if prefix.lower() not in HZ_PREFIX:
            raise ValueError(f"'{text}' is not a frequency; expected e.g. {example}")
        value = float(number) * HZ_PREFIX[prefix.lower()]
    elif suffix in allowed or not suffix:
        value = float(number) * PREFIX[prefix]
    else:
        raise ValueError(f"'{text}': unit '{suffix}' is not {' or '.join(allowed)}; expected e.g. {example}")
    if not math.isfinite(value):
        raise ValueError(f"'{text}' is not a finite number")
    return value


def parse_hz(text: str) -> float:
    """A frequency in Hz: '8MHz', '8 mhz', '800kHz', '32768Hz', '48000000', '1.5MHz', '300e6'."""
    return parse_quantity(text, "Hz")

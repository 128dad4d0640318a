"""Host energy meters: RAPL (powercap sysfs), perf power/energy-* events, NVML (docs/energy-meters.md)."""
from __future__ import annotations

from .base import ABSENT, CounterReset, Meter, MeterUnavailable, Reading, estimate_update_period
from .nvml import NvmlMeter
from .perf_energy import PerfEnergyMeter
from .rapl import RaplMeter

METERS = ("rapl", "perf", "nvml")
AUTO_ORDER = ("rapl", "perf", "nvml")


def _make(name: str) -> Meter:
    if name == "rapl":
        return RaplMeter()
    if name == "perf":
        return PerfEnergyMeter()
    if name == "nvml":
        return NvmlMeter()
    raise ValueError(f"unknown energy meter '{name}'; valid: {', '.join(METERS)}, auto")


def get_meter(name: str) -> Meter:
    """The named meter, or for `auto` the first usable of rapl, perf, nvml; MeterUnavailable otherwise."""
    if name != "auto":
        return _make(name)
    reasons = []
    for n in AUTO_ORDER:
        try:
            return _make(n)
        except MeterUnavailable as exc:
            reasons.append(exc)
    raise MeterUnavailable("auto", ABSENT, "no energy meter is usable here: "
                           + "; ".join(f"{e.meter}: {e.kind}: {e.reason}" for e in reasons),
                           " | ".join(f"{e.meter}: {e.remedy}" for e in reasons if e.remedy))


__all__ = ["Meter", "MeterUnavailable", "CounterReset", "Reading", "get_meter", "estimate_update_period",
           "METERS"]

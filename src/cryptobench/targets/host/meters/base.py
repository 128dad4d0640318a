"""The interface every host energy meter has (docs/energy-meters.md).

A meter reads raw energy counters, one per *domain* (a RAPL zone, a perf event, a GPU), stamped
with the monotonic clock; `delta(a, b)` turns two readings into joules per domain, undoing a
counter wrap where the counter's range is known and refusing to guess across a reset
(`CounterReset`: the caller drops that window). A meter that cannot be used here raises
`MeterUnavailable` when it is created, saying whether the source is *absent* (no such hardware or
driver), *not-readable* (it exists but this user may not read it) or *not-supported* (the driver
refuses the request), and what to do about it.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

ABSENT, NOT_READABLE, NOT_SUPPORTED = "absent", "not-readable", "not-supported"


class MeterUnavailable(Exception):
    """The meter cannot be used on this machine: `kind` is absent / not-readable / not-supported."""

    def __init__(self, meter: str, kind: str, reason: str, remedy: str = ""):
        self.meter, self.kind, self.reason, self.remedy = meter, kind, reason, remedy
        super().__init__(f"{meter}: {kind}: {reason}" + (f" — remedy: {remedy}" if remedy else ""))


class CounterReset(Exception):
    """A counter went backwards by less than a wrap would explain, or a domain disappeared between
    two readings: the energy of that window is unknown and must not be guessed."""

    def __init__(self, domain: str, detail: str):
        self.domain, self.detail = domain, detail
        super().__init__(f"{domain}: {detail}")


@dataclass(frozen=True)
class Reading:
    t_ns: int                                   # time.monotonic_ns() when the counters were read
    counters: dict = field(default_factory=dict)  # domain -> raw counter (the meter's unit)
    missing: tuple = ()                         # domains that could not be read this time


class Meter:
    """Base class. Subclasses set the attributes below and implement `_read_counters` and
    `_delta_one`; `main_parts` lists the domains whose sum is the main domain when the main domain
    is not itself a counter (e.g. `package` = package-0 + package-1 on two sockets)."""

    name = "meter"
    provenance = "measured"
    resolution_j = 0.0              # smallest energy step of one counter
    update_period_s = 0.001         # nominal: how often the counter is updated by the hardware/driver
    domains: list = []              # counter domains, in a stable order
    main_domain = ""                # the domain whose energy per operation is reported
    main_parts: list = []           # when main_domain is a sum of counters: those counters
    what = ""                       # one line: what the main domain's energy includes

    def _read_counters(self) -> tuple[dict, tuple]:
        raise NotImplementedError

    def _delta_one(self, domain: str, old: int, new: int) -> float:
        raise NotImplementedError

    def read(self) -> Reading:
        counters, missing = self._read_counters()
        return Reading(time.monotonic_ns(), counters, tuple(missing))

    def delta(self, a: Reading, b: Reading) -> dict:
        """Joules per domain between readings a and b (and the main domain); CounterReset when a
        domain vanished or reset in between."""
        out = {}
        for d in self.domains:
            if d in a.missing or d in b.missing or d not in a.counters or d not in b.counters:
                raise CounterReset(d, "the domain could not be read at one end of the window "
                                      "(it disappeared or its file became unreadable)")
            out[d] = self._delta_one(d, a.counters[d], b.counters[d])
        if self.main_domain not in out:
            out[self.main_domain] = sum(out[p] for p in self.main_parts)
        return out

    def all_domains(self) -> list[str]:
        return list(self.domains) + ([self.main_domain] if self.main_domain not in self.domains else [])

    def describe(self) -> dict:
        """Conditions: what this meter is and reads, for the run's stored conditions."""
        return {"meter": self.name, "provenance": self.provenance, "domains": self.all_domains(),
                "main_domain": self.main_domain, "main_parts": list(self.main_parts) or [self.main_domain],
                "what": self.what, "resolution_j": self.resolution_j,
                "update_period_nominal_s": self.update_period_s}

    def close(self) -> None:
        pass


def estimate_update_period(meter: Meter, budget_s: float | None = None, changes: int = 8) -> float | None:
    """The counter's real update period: poll the main domain's counters and take the median time
    between changes. None when fewer than three changes were seen within the budget (an idle or
    frozen counter: the caller falls back to the nominal period)."""
    budget_s = budget_s if budget_s is not None else max(0.3, 10 * meter.update_period_s)
    parts = list(meter.main_parts) or [meter.main_domain]
    t_end = time.monotonic_ns() + int(budget_s * 1e9)
    last, stamps = None, []
    while time.monotonic_ns() < t_end and len(stamps) < changes + 1:
        r = meter.read()
        value = tuple(r.counters.get(p) for p in parts)
        if last is not None and value != last:
            stamps.append(r.t_ns)
        last = value
        if meter.update_period_s >= 0.01:
            time.sleep(meter.update_period_s / 20)
    gaps = [(b - a) / 1e9 for a, b in zip(stamps, stamps[1:])]
    return statistics.median(gaps) if len(gaps) >= 2 else None

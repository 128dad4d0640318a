"""Linux powercap RAPL: /sys/class/powercap/intel-rapl:N[:M]/energy_uj.

Zones: `intel-rapl:N` are the top-level domains (name `package-N`, or `psys` for the whole
platform on some laptops and servers); `intel-rapl:N:M` are sub-zones of a package (`core`,
`uncore`, `dram`). AMD Zen processors (and Hygon) are served by the same `intel_rapl_msr` driver
under the same `intel-rapl` control type: `package-N` and its `core` sub-zone, no DRAM; there is no
separate `amd-rapl` powercap tree. `intel-rapl-mmio:N` is the same package counter reached
through MMIO (processor_thermal driver): a duplicate, skipped.

Counters are microjoules that wrap at `max_energy_range_uj`. Between two readings at most one
wrap is assumed (a window far shorter than the ~minutes it takes to wrap); a counter that goes
backwards by less than half its range cannot be a wrap and is reported as a reset.

Since CVE-2020-8694 (PLATYPUS) `energy_uj` is readable by root only.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from .base import ABSENT, NOT_READABLE, CounterReset, Meter, MeterUnavailable

DEFAULT_ROOT = "/sys/class/powercap"
ENV_ROOT = "CRYPTOBENCH_POWERCAP_ROOT"
REMEDY_READ = ("run as root, or `sudo chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj` "
               "(root-only since CVE-2020-8694)")
REMEDY_ABSENT = ("load the driver (`sudo modprobe intel_rapl_msr`) on an Intel or AMD Zen machine; "
                 "virtual machines usually expose no RAPL at all")
ZONE_RE = re.compile(r"^intel-rapl:(\d+)(?::(\d+))?$")
MMIO_RE = re.compile(r"^intel-rapl-mmio:\d+(?::\d+)?$")


def _read_text(path: Path) -> str:
    with open(path) as f:
        return f.read()


class RaplMeter(Meter):
    name = "rapl"
    resolution_j = 1e-6             # sysfs unit; the hardware's energy unit is coarser (15.3–61 µJ)
    update_period_s = 0.001         # the RAPL MSRs are updated about every 976 µs

    def __init__(self, sysfs_root: str | os.PathLike | None = None,
                 read_text: Callable[[Path], str] = _read_text):
        self.root = Path(sysfs_root or os.environ.get(ENV_ROOT) or DEFAULT_ROOT)
        self._read = read_text
        self.zones: dict[str, dict] = {}     # domain -> {"path", "zone", "max_range_uj", "name"}
        self.skipped: list[str] = []
        if not self.root.is_dir():
            raise MeterUnavailable(self.name, ABSENT, f"no powercap tree at {self.root}", REMEDY_ABSENT)
        entries = sorted(os.listdir(self.root))
        tops: dict[str, str] = {}
        found = []
        for entry in entries:
            if MMIO_RE.match(entry):
                self.skipped.append(f"{entry} (MMIO duplicate of a package zone)")
                continue
            m = ZONE_RE.match(entry)
            if m:
                found.append((int(m.group(1)), -1 if m.group(2) is None else int(m.group(2)), entry))
        if not found:
            raise MeterUnavailable(self.name, ABSENT, f"{self.root} has no intel-rapl zones", REMEDY_ABSENT)
        for top, sub, entry in sorted(found):
            zdir = self.root / entry
            zname = self._text(zdir / "name", entry) or entry
            if sub < 0:
                domain = zname if zname not in tops.values() else f"{zname}@{entry}"
                tops[str(top)] = domain
            else:
                parent = tops.get(str(top), f"intel-rapl:{top}")
                domain = f"{parent}/{zname}"
            max_range = self._int(zdir / "max_energy_range_uj", entry)
            self._int(zdir / "energy_uj", entry)          # readable now, or MeterUnavailable
            self.zones[domain] = {"path": zdir / "energy_uj", "zone": entry, "name": zname,
                                  "max_range_uj": max_range}
        self.domains = list(self.zones)
        packages = [d for d in self.domains if "/" not in d and d.startswith("package")]
        if packages:
            self.main_domain, self.main_parts = "package", packages
            self.what = ("everything on the socket(s): cores, caches, uncore, integrated GPU"
                         + (" (DRAM is a separate sub-zone)" if any(d.endswith("/dram") for d in self.domains) else ""))
        else:
            self.main_domain, self.main_parts = self.domains[0], []
            self.what = f"RAPL zone {self.domains[0]}"

    def _text(self, path: Path, zone: str) -> str:
        try:
            return self._read(path).strip()
        except PermissionError:
            raise MeterUnavailable(self.name, NOT_READABLE, f"{path}: permission denied", REMEDY_READ)
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise MeterUnavailable(self.name, NOT_READABLE, f"{path}: {exc.strerror or exc}", REMEDY_READ)

    def _int(self, path: Path, zone: str) -> int:
        text = self._text(path, zone)
        if not text:
            raise MeterUnavailable(self.name, NOT_READABLE, f"{path}: missing or empty", REMEDY_READ)
        try:
            return int(text)
        except ValueError:
            raise MeterUnavailable(self.name, NOT_READABLE, f"{path}: not an integer: {text[:40]!r}")

    def _read_counters(self) -> tuple[dict, tuple]:
        counters, missing = {}, []
        for domain, z in self.zones.items():
            try:
                counters[domain] = int(self._read(z["path"]).strip())
            except (OSError, ValueError):
                missing.append(domain)
        return counters, tuple(missing)

    def _delta_one(self, domain: str, old: int, new: int) -> float:
        if new >= old:
            return (new - old) * 1e-6
        max_range = self.zones[domain]["max_range_uj"]
        back = old - new
        if max_range > 0 and back > max_range // 2 and old <= max_range:
            return (new + max_range - old) * 1e-6        # one wrap
        raise CounterReset(domain, f"energy_uj went back from {old} to {new} µJ, less than a wrap at "
                                   f"max_energy_range_uj = {max_range} would: a reset")

    def describe(self) -> dict:
        d = super().describe()
        d.update({"source": str(self.root), "interface": "powercap sysfs energy_uj (µJ)",
                  "zones": {dom: {"zone": z["zone"], "name": z["name"], "max_energy_range_uj": z["max_range_uj"]}
                            for dom, z in self.zones.items()},
                  "skipped": self.skipped,
                  "wrap": "unwrapped with max_energy_range_uj, at most one wrap per window assumed"})
        return d

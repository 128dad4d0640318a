"""perf `power/energy-*` events: the same RAPL counters through the kernel's perf RAPL PMU.

Discovery (sysfs, under `sysfs_root`, default /sys/bus/event_source/devices):
`power/type` (the PMU's perf type number), `power/events/energy-pkg` (`event=0x02`),
`energy-pkg.scale` (joules per count, e.g. 2.3283064365386962890625e-10), `energy-pkg.unit`
(`Joules`), and `power/cpumask` (one CPU per package: events are opened on those CPUs).

Events are opened system-wide (pid = -1, cpu = one per package) with perf_event_open(2) through
ctypes; reading a descriptor gives the 64-bit count. The kernel accumulates the 32-bit MSR into a
64-bit count, so it does not wrap in practice; a count going backwards is a reset.
Opening needs `kernel.perf_event_paranoid` <= 0, or CAP_PERFMON (Linux >= 5.8) / CAP_SYS_ADMIN.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import re
import struct
from pathlib import Path
from typing import Callable

from .base import ABSENT, NOT_READABLE, NOT_SUPPORTED, CounterReset, Meter, MeterUnavailable

DEFAULT_ROOT = "/sys/bus/event_source/devices"
ENV_ROOT = "CRYPTOBENCH_PERF_EVENT_ROOT"
REMEDY_PERM = ("`sudo sysctl kernel.perf_event_paranoid=0`, or run with CAP_PERFMON "
               "(Linux >= 5.8) or CAP_SYS_ADMIN, e.g. as root")
REMEDY_ABSENT = ("needs the kernel's perf RAPL PMU (Intel, AMD Zen with Linux >= 5.8, CONFIG_PERF_EVENTS_INTEL_RAPL); "
                 "virtual machines usually have none")
SYSCALL_NR = {"x86_64": 298, "amd64": 298, "aarch64": 241, "arm64": 241, "riscv64": 241, "i386": 336,
              "i686": 336, "armv7l": 364, "ppc64le": 319, "ppc64": 319, "s390x": 331}
PERF_ATTR_SIZE = 128            # zero-filled beyond the fields set: accepted by every kernel >= 3.x
SHORT = {"energy-pkg": "pkg", "energy-cores": "cores", "energy-ram": "ram", "energy-psys": "psys",
         "energy-gpu": "gpu"}


def perf_event_open(pmu_type: int, config: int, cpu: int) -> int:
    """perf_event_open(attr{type, config}, pid=-1, cpu, group_fd=-1, flags=0) -> fd; OSError on failure."""
    nr = SYSCALL_NR.get(platform.machine())
    if nr is None:
        raise OSError(errno.ENOSYS, f"perf_event_open: no syscall number known for {platform.machine()}")
    attr = ctypes.create_string_buffer(PERF_ATTR_SIZE)
    struct.pack_into("<IIQ", attr, 0, pmu_type, PERF_ATTR_SIZE, config)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(nr), attr, ctypes.c_int(-1), ctypes.c_int(cpu), ctypes.c_int(-1),
                      ctypes.c_ulong(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(fd)


def read_count(fd: int) -> int:
    """The event's 64-bit count (read_format 0: just the value)."""
    return struct.unpack("<Q", os.read(fd, 8))[0]


def _cpus(text: str) -> list[int]:
    out = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


class PerfEnergyMeter(Meter):
    name = "perf"
    update_period_s = 0.001

    def __init__(self, sysfs_root: str | os.PathLike | None = None,
                 open_event: Callable[[int, int, int], int] = perf_event_open,
                 read_fd: Callable[[int], int] = read_count, close_fd: Callable[[int], None] = os.close):
        self.root = Path(sysfs_root or os.environ.get(ENV_ROOT) or DEFAULT_ROOT)
        self._read_fd, self._close_fd = read_fd, close_fd
        pmu = self.root / "power"
        if not (pmu / "type").is_file():
            raise MeterUnavailable(self.name, ABSENT, f"no perf 'power' PMU ({pmu / 'type'} missing)", REMEDY_ABSENT)
        self.pmu_type = int((pmu / "type").read_text().strip())
        cpumask = pmu / "cpumask"
        self.cpus = _cpus(cpumask.read_text()) if cpumask.is_file() else [0]
        self.cpus = self.cpus or [0]
        self.events: dict[str, dict] = {}
        evdir = pmu / "events"
        names = sorted(p.name for p in evdir.iterdir() if p.name.startswith("energy-") and "." not in p.name) \
            if evdir.is_dir() else []
        if not names:
            raise MeterUnavailable(self.name, ABSENT, f"the perf 'power' PMU at {pmu} has no energy-* events",
                                   REMEDY_ABSENT)
        for ev in names:
            spec = (evdir / ev).read_text().strip()
            m = re.search(r"event=(0x[0-9a-fA-F]+|\d+)", spec)
            if not m:
                continue
            scale_file, unit_file = evdir / f"{ev}.scale", evdir / f"{ev}.unit"
            scale = float(scale_file.read_text().strip()) if scale_file.is_file() else 1.0
            unit = unit_file.read_text().strip() if unit_file.is_file() else "Joules"
            if unit.lower() not in ("joules", "j"):
                continue
            self.events[SHORT.get(ev, ev)] = {"event": ev, "config": int(m.group(1), 0), "scale": scale,
                                              "unit": unit, "fds": []}
        if not self.events:
            raise MeterUnavailable(self.name, ABSENT, f"no usable energy-* event under {evdir}", REMEDY_ABSENT)
        try:
            for dom, ev in self.events.items():
                for cpu in self.cpus:
                    try:
                        ev["fds"].append(open_event(self.pmu_type, ev["config"], cpu))
                    except OSError as exc:
                        what = f"perf_event_open(power/{ev['event']}/, cpu {cpu}): {exc.strerror or exc}"
                        if exc.errno in (errno.EACCES, errno.EPERM):
                            raise MeterUnavailable(self.name, NOT_READABLE, what, REMEDY_PERM)
                        raise MeterUnavailable(self.name, NOT_SUPPORTED, what + " — the kernel does not support "
                                               "this event here", REMEDY_ABSENT)
        except MeterUnavailable:
            self.close()
            raise
        self.domains = list(self.events)
        self.main_domain = "pkg" if "pkg" in self.events else ("psys" if "psys" in self.events else self.domains[0])
        self.main_parts = []
        self.resolution_j = min(ev["scale"] for ev in self.events.values())
        self.what = {"pkg": "everything on the socket(s) (energy-pkg, summed over the packages of the cpumask)",
                     "psys": "the whole platform (energy-psys)"}.get(self.main_domain, f"perf {self.main_domain}")

    def _read_counters(self) -> tuple[dict, tuple]:
        counters, missing = {}, []
        for dom, ev in self.events.items():
            try:
                counters[dom] = sum(self._read_fd(fd) for fd in ev["fds"])
            except (OSError, struct.error):
                missing.append(dom)
        return counters, tuple(missing)

    def _delta_one(self, domain: str, old: int, new: int) -> float:
        if new < old:
            raise CounterReset(domain, f"64-bit perf count went back from {old} to {new}")
        return (new - old) * self.events[domain]["scale"]

    def describe(self) -> dict:
        d = super().describe()
        d.update({"source": str(self.root / "power"), "interface": "perf_event_open, PMU 'power'",
                  "pmu_type": self.pmu_type, "cpus": self.cpus,
                  "events": {dom: {"event": f"power/{ev['event']}/", "config": ev["config"], "scale_j": ev["scale"]}
                             for dom, ev in self.events.items()}})
        return d

    def close(self) -> None:
        for ev in self.events.values():
            for fd in ev["fds"]:
                try:
                    self._close_fd(fd)
                except OSError:
                    pass
            ev["fds"] = []

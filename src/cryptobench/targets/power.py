"""Energy from durations and a device's currents (provenance: modeled), and the per-unit figures
every energy reading is reported in (the studies' derived figures: analysis/power.py).

* `modeled_energy`: E = t · V · I for a duration at the device's supply voltage and active
  current (device profiles: src/cryptobench/targets/mcu/sim/devices.toml).
* `per_unit`: energy per operation, per byte, per bit (mJ/Mb), average power, and the figure of
  merit FoM = TH / E of the Pisa Cortex-A53 paper (throughput over energy per bit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.files import read_toml, toml_line
from ..core.quantity import is_amount
from .mcu import sim

STATES = ("active", "idle", "standby")


@dataclass(frozen=True)
class PowerProfile:
    supply_v: float
    active_current_a: float
    idle_current_a: float = 0.0
    standby_current_a: float = 0.0
    peripherals: dict = field(default_factory=dict)     # name -> extra current (A) while it runs
    source: str = ""
    name: str = ""
    current_at_v: float = 0.0                           # the voltage the currents were measured at (0: not stated)

    def inputs_text(self, state: str = "active", peripherals=()) -> str:
        """The current and voltage a modeled figure uses and where they come from, in one phrase."""
        current = self.current(state, peripherals)
        what = state + "".join(f" + {p}" for p in peripherals)
        at = (f"the current measured at {self.current_at_v:g} V" if self.current_at_v
              else "the profile records no voltage the current was measured at")
        return (f"{current * 1e3:g} mA ({what}) at a {self.supply_v:g} V supply ({at}); "
                f"source: {self.source or 'not stated'}")

    def current(self, state: str = "active", peripherals=()) -> float:
        """The device's current in a power state with some peripherals running (A)."""
        if state not in STATES:
            raise ValueError(f"power state: expected one of {', '.join(STATES)}, got '{state}'")
        base = getattr(self, f"{state}_current_a")
        if base <= 0:
            raise ValueError(f"the profile {self.name or ''} has no {state} current: energy in that state "
                             "cannot be modelled (add it to the profile)".replace("  ", " "))
        extra = 0.0
        for p in peripherals:
            if p not in self.peripherals:
                raise ValueError(f"peripheral '{p}': not in the profile {self.name}; it lists "
                                 + (", ".join(self.peripherals) or "none"))
            extra += float(self.peripherals[p])
        return base + extra


def profile_from_device(dev) -> PowerProfile:
    """The power profile of a simulator device (sim/devices.toml)."""
    return PowerProfile(dev.supply_v, dev.active_current_a, dev.idle_current_a, dev.standby_current_a,
                        dict(dev.peripherals), dev.energy_source, dev.name, dev.current_at_v)


def load_profile(ref: str) -> PowerProfile:
    """A device name from sim/devices.toml, or a TOML file with supply_v, active_current_a and
    optionally idle_current_a, standby_current_a, current_at_v, [peripherals], source (errors name
    file and key). current_at_v, the voltage the currents were measured at, must equal supply_v."""
    path = Path(ref)
    if path.suffix == ".toml" or path.exists():
        if not path.exists():
            raise ValueError(f"{ref}: no such power profile file")
        text, doc = read_toml(path, ValueError)
        lines = text.splitlines()
        at = lambda key: f"{ref}:{toml_line(lines, key)}"
        known = {"supply_v", "active_current_a", "idle_current_a", "standby_current_a", "current_at_v", "peripherals",
                 "source", "name"}
        for key in doc:
            if key not in known:
                raise ValueError(f"{at(key)}: unknown key '{key}'; expected {', '.join(sorted(known))}")
        for key in ("supply_v", "active_current_a"):
            if key not in doc:
                raise ValueError(f"{ref}: missing key '{key}' (a number)")
        for key in known - {"peripherals", "source", "name"}:
            if key in doc and not is_amount(doc[key]):
                raise ValueError(f"{at(key)}: key '{key}': expected a finite number >= 0, got {doc[key]!r}")
        peri = doc.get("peripherals", {})
        if not isinstance(peri, dict):
            raise ValueError(f"{at('peripherals')}: [peripherals] must be a table of NAME = current in A")
        for k, v in peri.items():
            if not is_amount(v):
                raise ValueError(f"{at(k)}: peripherals.{k}: expected a finite current >= 0 in A, got {v!r}")
        for key in ("source", "name"):
            if key in doc and not isinstance(doc[key], str):
                raise ValueError(f"{at(key)}: key '{key}': expected a string, got {doc[key]!r}")
        at_v = float(doc.get("current_at_v", 0))
        if at_v and at_v != float(doc["supply_v"]):
            raise ValueError(f"{at('current_at_v')}: the currents were measured at {at_v:g} V but supply_v is "
                             f"{float(doc['supply_v']):g} V: energy at one voltage needs currents measured at it")
        return PowerProfile(float(doc["supply_v"]), float(doc["active_current_a"]), float(doc.get("idle_current_a", 0)),
                            float(doc.get("standby_current_a", 0)), dict(peri), doc.get("source", str(path)),
                            doc.get("name", path.stem), at_v)
    if ref not in sim.DEVICES:
        raise ValueError(f"power profile '{ref}': not a device ({', '.join(sim.DEVICES)}) nor a .toml file")
    return profile_from_device(sim.DEVICES[ref])


def modeled_energy(duration_s: float, profile: PowerProfile, state: str = "active", peripherals=()) -> dict:
    """E = t · V · I(state, peripherals), provenance modeled."""
    try:
        current = profile.current(state, peripherals)
    except ValueError as exc:
        raise ValueError(str(exc).replace("active current: energy in that state", "active current: energy"))
    power = profile.supply_v * current
    extra = f" ({state}" + (" + " + " + ".join(peripherals) if peripherals else "") + ")"
    return {"per_op_j": duration_s * power, "avg_power_w": power, "avg_current_a": current, "provenance": "modeled",
            "method": f"E = t x {profile.supply_v:g} V x {current * 1e3:g} mA{extra}",
            "source": profile.source}


def modeled_states_energy(duration_s: float, asleep_s: float, profile: PowerProfile) -> dict:
    """E = V · (I_active · (t - t_sleep) + I_idle · t_sleep): a core that slept in WFI for
    t_sleep of the operation's t (interrupt completion), provenance modeled. The engine's own
    current is not added (the profiles have none for it; in the polling-vs-blocking comparison
    it cancels out, TI SWRA667 4.3)."""
    active, idle = profile.current("active"), profile.current("idle")
    asleep_s = min(max(asleep_s, 0.0), duration_s)
    energy = profile.supply_v * (active * (duration_s - asleep_s) + idle * asleep_s)
    avg = energy / (profile.supply_v * duration_s) if duration_s else active
    return {"per_op_j": energy, "avg_power_w": energy / duration_s if duration_s else None, "avg_current_a": avg,
            "provenance": "modeled", "states": {"active_s": duration_s - asleep_s, "asleep_s": asleep_s},
            "method": (f"E = {profile.supply_v:g} V x ({active * 1e3:g} mA active x {(duration_s - asleep_s) * 1e6:.4g} us "
                       f"+ {idle * 1e3:g} mA idle x {asleep_s * 1e6:.4g} us asleep in WFI)"),
            "source": profile.source}


def per_unit(energy_per_op_j: float, duration_s: float, nbytes: int | None = None) -> dict:
    """Energy per op / byte / bit, average power, throughput, and FoM = TH / E_bit (the Pisa
    Cortex-A53 paper: throughput in Mb/s over energy in mJ/Mb)."""
    out = {"energy_per_op_j": energy_per_op_j, "avg_power_w": energy_per_op_j / duration_s if duration_s else None}
    if nbytes:
        bits = nbytes * 8
        mj_per_mb = energy_per_op_j * 1e3 / (bits / 1e6)
        th_mbps = bits / duration_s / 1e6 if duration_s else None
        out.update({"energy_per_byte_j": energy_per_op_j / nbytes, "energy_per_bit_j": energy_per_op_j / bits,
                    "mJ_per_Mb": mj_per_mb, "throughput_Mbps": th_mbps,
                    "fom": th_mbps / mj_per_mb if th_mbps and mj_per_mb else None})
    return out

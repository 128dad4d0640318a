"""Power models: energy from durations and a device's currents (provenance: modeled), and the
figures the seeds derive from energy.

* `modeled_energy`: E = t · V · I for a duration at the device's supply voltage and active
  current (device profiles: src/cryptobench/sim/devices.toml).
* `energy_efficiency_improvement`: the TI method (seed 000): (t_sw·I_sw) / (t_hw·I_hw), with an
  interval from the durations' intervals and a relative uncertainty on each current.
* `per_unit`: energy per operation, per byte, per bit (mJ/Mb), average power, and the figure of
  merit FoM = TH / E of seed 004 (throughput over energy per bit).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PowerProfile:
    supply_v: float
    active_current_a: float
    idle_current_a: float = 0.0
    source: str = ""


def modeled_energy(duration_s: float, profile: PowerProfile) -> dict:
    if profile.active_current_a <= 0:
        raise ValueError("the profile has no active current: energy cannot be modelled")
    power = profile.supply_v * profile.active_current_a
    return {"per_op_j": duration_s * power, "avg_power_w": power, "provenance": "modeled",
            "method": f"E = t x {profile.supply_v:g} V x {profile.active_current_a * 1e3:g} mA",
            "source": profile.source}


def energy_efficiency_improvement(t_sw: float, i_sw: float, t_hw: float, i_hw: float,
                                  t_sw_ci: tuple[float, float] | None = None,
                                  t_hw_ci: tuple[float, float] | None = None,
                                  current_rel_unc: float = 0.0) -> dict:
    """TI's Energy Efficiency Improvement (t_sw·I_sw)/(t_hw·I_hw). The interval takes the extreme
    combinations of the durations' intervals and of each current ± current_rel_unc."""
    value = (t_sw * i_sw) / (t_hw * i_hw)
    lo_sw, hi_sw = t_sw_ci or (t_sw, t_sw)
    lo_hw, hi_hw = t_hw_ci or (t_hw, t_hw)
    u = current_rel_unc
    lo = (lo_sw * i_sw * (1 - u)) / (hi_hw * i_hw * (1 + u))
    hi = (hi_sw * i_sw * (1 + u)) / (lo_hw * i_hw * (1 - u)) if u < 1 else float("inf")
    return {"value": value, "ci": [lo, hi], "duration_improvement": t_sw / t_hw, "current_ratio": i_sw / i_hw}


def per_unit(energy_per_op_j: float, duration_s: float, nbytes: int | None = None) -> dict:
    """Energy per op / byte / bit, average power, throughput, and FoM = TH / E_bit (seed 004:
    throughput in Mb/s over energy in mJ/Mb)."""
    out = {"energy_per_op_j": energy_per_op_j, "avg_power_w": energy_per_op_j / duration_s if duration_s else None}
    if nbytes:
        bits = nbytes * 8
        mj_per_mb = energy_per_op_j * 1e3 / (bits / 1e6)
        th_mbps = bits / duration_s / 1e6 if duration_s else None
        out.update({"energy_per_byte_j": energy_per_op_j / nbytes, "energy_per_bit_j": energy_per_op_j / bits,
                    "mJ_per_Mb": mj_per_mb, "throughput_Mbps": th_mbps,
                    "fom": th_mbps / mj_per_mb if th_mbps and mj_per_mb else None})
    return out

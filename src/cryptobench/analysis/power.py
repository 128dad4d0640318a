"""The figures the published studies derive from energy (provenance: modeled).

* `energy_efficiency_improvement`: the TI method (the TI CC13x2/CC26x2 report):
  (t_sw·I_sw) / (t_hw·I_hw), with an interval from the durations' intervals and a relative
  uncertainty on each current.
* `model_run`: modeled energy for every timed cell of a stored run, and that figure against a
  baseline engine. The energy arithmetic itself is targets/power.py's.
"""
from __future__ import annotations

from ..catalog.ops import OPS
from ..core.records import Run
from ..targets.power import PowerProfile, modeled_energy, per_unit


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


def model_run(run: Run, profile: PowerProfile, engine_peripherals: dict[str, list[str]] | None = None,
              baseline: str | None = None, current_rel_unc: float = 0.0) -> dict:
    """Modeled energy for every timed cell of a stored run (durations measured or simulated, the
    profile's active current plus the engine's peripherals), and, against a baseline engine, TI's
    Energy Efficiency Improvement with its interval (the TI CC13x2/CC26x2 report, eq. 2)."""
    engine_peripherals = engine_peripherals or {}
    rows, by_key = [], {}
    for c in run.cells:
        if not c.ok or c.result is None or not c.result.time_s:
            continue
        t = c.result.time_s["median"]
        e = modeled_energy(t, profile, "active", engine_peripherals.get(c.engine, ()))
        nbytes = c.params.get("bytes") if OPS[c.op].payload else None
        e.update({k: v for k, v in per_unit(e["per_op_j"], t, nbytes).items() if k != "energy_per_op_j"})
        row = {"op": c.op, "params": c.params.to_dict(), "engine": c.engine, "time_s": t,
               "time_ci95": c.result.time_s.get("ci95"), "time_provenance": c.provenance, "energy": e}
        rows.append(row)
        by_key[(c.op, c.params.key, c.engine)] = row
    comps = []
    if baseline:
        for (op, pk, engine), row in by_key.items():
            base = by_key.get((op, pk, baseline))
            if engine == baseline or base is None:
                continue
            eei = energy_efficiency_improvement(base["time_s"], base["energy"]["avg_current_a"], row["time_s"],
                                                row["energy"]["avg_current_a"],
                                                tuple(base["time_ci95"]) if base["time_ci95"] else None,
                                                tuple(row["time_ci95"]) if row["time_ci95"] else None,
                                                current_rel_unc)
            comps.append({"op": op, "params": row["params"], "engine": engine, "baseline": baseline, **eei})
    return {"profile": {"name": profile.name, "supply_v": profile.supply_v, "active_current_a": profile.active_current_a,
                        "current_at_v": profile.current_at_v or None, "peripherals": profile.peripherals,
                        "source": profile.source},
            "provenance": "modeled", "rows": rows, "comparisons": comps}



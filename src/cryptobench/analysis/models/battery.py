"""A battery view of a duty cycle: energy per day for crypto, and the share it takes.

    E_day(engine)  = Σ_op rate_op [per hour] · 24 · E_op(engine)
    E_base         = I_baseline · V · 86400 s          (everything else the device does)
    share          = E_day / (E_day + E_base)
    capacity       = mAh · 3.6 · V  J  (or Wh · 3600 J)
    battery life   = capacity / (E_day + E_base)  days
"""
from __future__ import annotations

import re

PER_HOUR = {"s": 3600.0, "min": 60.0, "h": 1.0, "day": 1 / 24, "d": 1 / 24}


def parse_rate(spec: str) -> tuple[str, dict, float]:
    """'OP[,KEY=VALUE…]=N[/s|/min|/h|/day]' -> (op, params, operations per hour)."""
    if "=" not in spec:
        raise ValueError(f"--rate: expected OP=N/h (or OP,KEY=VALUE=N/h), got '{spec}'")
    left, rate = spec.rsplit("=", 1)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(?:/\s*(s|min|h|day|d))?\s*", rate)
    if not m:
        raise ValueError(f"--rate {spec}: '{rate}' is not a rate like 120/h, 2/min, 500/day")
    try:
        n = float(m.group(1))
    except ValueError:
        raise ValueError(f"--rate {spec}: '{m.group(1)}' is not a number")
    if n < 0:
        raise ValueError(f"--rate {spec}: a rate cannot be negative")
    parts = left.split(",")
    op, params = parts[0].strip(), {}
    for p in parts[1:]:
        if "=" not in p:
            raise ValueError(f"--rate {spec}: '{p}' is not KEY=VALUE")
        k, v = p.split("=", 1)
        params[k.strip()] = v.strip()
    if not op:
        raise ValueError(f"--rate {spec}: no operation named")
    return op, params, n * PER_HOUR[m.group(2) or "h"]


def capacity_j(mah: float | None = None, volts: float | None = None, wh: float | None = None) -> float:
    if wh is not None:
        if wh <= 0:
            raise ValueError("--battery-wh must be positive")
        return wh * 3600.0
    if mah is None or volts is None or mah <= 0 or volts <= 0:
        raise ValueError("a battery needs --battery-wh, or --battery-mah with --battery-v (both positive)")
    return mah * 3.6 * volts


def battery_view(per_op_j: dict, rates: list[tuple[str, float]], capacity: float, baseline_w: float = 0.0) -> dict:
    """per_op_j: engine -> {rate key -> J per op}; rates: (rate key, ops per hour).
    Engines lacking an energy for some rated op are listed with what they lack."""
    rows = []
    base_day = baseline_w * 86400.0
    for engine, energies in per_op_j.items():
        missing = [k for k, _ in rates if k not in energies]
        if missing:
            rows.append({"engine": engine, "missing": missing})
            continue
        parts = {k: n * 24 * energies[k] for k, n in rates}
        day = sum(parts.values())
        total = day + base_day
        rows.append({"engine": engine, "crypto_j_per_day": day, "per_op": parts,
                     "baseline_j_per_day": base_day, "share": day / total if total else None,
                     "battery_days": capacity / total if total else None,
                     "crypto_only_days": capacity / day if day else None})
    return {"provenance": "modeled", "capacity_j": capacity, "baseline_w": baseline_w, "rows": rows}

"""From which payload length is engine B cheaper than engine A, in time and in energy.

Each engine is a sweep: payload length -> cost (time or energy), with an optional interval per
point (a stored cell's ci95). Between stored lengths the cost is interpolated linearly (costs of
bulk operations are affine in the length). The crossover is the smallest length from which B's
cost stays at or below A's over the rest of the stored range. Its interval: the same solved on
the bounding curves, B's lower against A's upper (the earliest crossover the intervals allow) and
B's upper against A's lower (the latest). A least-squares line per engine adds an estimate that
may lie outside the stored range (extrapolated, flagged so)."""
from __future__ import annotations

import math

from ...core.records import Run
from ...targets.power import modeled_energy


def linear_curve(fn, lengths) -> list[dict]:
    """A sweep from a model function: length -> cost (no interval)."""
    return [{"x": float(n), "y": float(fn(n))} for n in lengths]


def _solve(a: dict, b: dict, xs: list[float]) -> dict:
    """a, b: x -> cost. The smallest x from which b <= a for every later x."""
    d = [b[x] - a[x] for x in xs]
    last_pos = max((i for i, v in enumerate(d) if v > 0), default=None)
    if last_pos is None:
        return {"status": "always", "x": xs[0], "text": f"<= {xs[0]:g}"}
    if last_pos == len(xs) - 1:
        return {"status": "never", "x": None, "text": f"not within {xs[0]:g}..{xs[-1]:g}"}
    x0, x1, d0, d1 = xs[last_pos], xs[last_pos + 1], d[last_pos], d[last_pos + 1]
    x = x0 + (x1 - x0) * d0 / (d0 - d1)
    return {"status": "crossover", "x": x, "text": f"{x:.6g}"}


def _line(points) -> tuple[float, float] | None:
    n = len(points)
    if n < 2:
        return None
    mx = sum(p["x"] for p in points) / n
    my = sum(p["y"] for p in points) / n
    sxx = sum((p["x"] - mx) ** 2 for p in points)
    if sxx == 0:
        return None
    slope = sum((p["x"] - mx) * (p["y"] - my) for p in points) / sxx
    return my - slope * mx, slope


def crossover(a_points: list[dict], b_points: list[dict]) -> dict:
    """a_points, b_points: [{"x", "y", optional "lo", "hi"}]. Uses the lengths both sweeps have."""
    a = {p["x"]: p for p in a_points}
    b = {p["x"]: p for p in b_points}
    xs = sorted(set(a) & set(b))
    if len(xs) < 1:
        raise ValueError("the two sweeps share no payload length")
    point = _solve({x: a[x]["y"] for x in xs}, {x: b[x]["y"] for x in xs}, xs)
    early = _solve({x: a[x].get("hi", a[x]["y"]) for x in xs}, {x: b[x].get("lo", b[x]["y"]) for x in xs}, xs)
    late = _solve({x: a[x].get("lo", a[x]["y"]) for x in xs}, {x: b[x].get("hi", b[x]["y"]) for x in xs}, xs)
    out = {"provenance": "modeled", "lengths": xs, "crossover": point, "earliest": early, "latest": late,
           "interval": [early["x"] if early["status"] != "never" else None,
                        late["x"] if late["status"] != "never" else None]}
    la, lb = _line(a_points), _line(b_points)
    if la and lb and not math.isclose(la[1], lb[1], rel_tol=1e-12, abs_tol=0.0):
        x = (lb[0] - la[0]) / (la[1] - lb[1])
        if lb[1] < la[1]:
            out["linear_fit"] = {"x": x, "a": {"intercept": la[0], "slope": la[1]},
                                 "b": {"intercept": lb[0], "slope": lb[1]},
                                 "extrapolated": not (xs[0] <= x <= xs[-1]),
                                 "text": f"B cheaper from {x:.6g}" + (" (extrapolated)" if not xs[0] <= x <= xs[-1] else "")}
        else:
            out["linear_fit"] = {"x": x, "text": f"B grows faster: cheaper only below {x:.6g}"}
    return out


def sweep_from_run(run: Run, op: str, engine: str, params: dict | None = None, profile=None,
                   peripherals=()) -> dict:
    """A stored run's cells of `op` on `engine`, by params['bytes']: time (median, ci95) and energy
    (result.energy.per_op_j, its ci95 if stored; else modeled t·V·I with `profile`), with the
    provenance of each (a cell's own: measured on a host or board, simulated on sim:…)."""
    params = params or {}
    time_pts, energy_pts, energy_prov, time_prov, seen = [], [], set(), set(), {}
    for c in run.cells:
        if c.op != op or c.engine != engine or not c.ok:
            continue
        if any(str(c.params.get(k)) != str(v) for k, v in params.items()):
            continue
        if "bytes" not in c.params or c.result is None or not c.result.time_s:
            continue
        x = float(c.params["bytes"])
        if x in seen:
            others = {k: v for k, v in c.params.items() if k != "bytes" and seen[x].get(k) != v}
            raise ValueError(f"{op} on {engine}: several cells at {x:g} bytes (they differ in "
                             f"{', '.join(others) or 'nothing'}): pick one with --param KEY=VALUE")
        seen[x] = c.params
        t = c.result.time_s
        lo, hi = (t.get("ci95") or [t["median"], t["median"]])
        time_pts.append({"x": x, "y": t["median"], "lo": lo, "hi": hi})
        time_prov.add(c.provenance)
        e = c.energy
        if e is not None and e.per_op_j is not None:       # any stored figure, within the idle noise too
            elo, ehi = e.get("ci95") or [e.per_op_j, e.per_op_j]
            energy_pts.append({"x": x, "y": e.per_op_j, "lo": elo, "hi": ehi})
            energy_prov.add(e.provenance)
        elif profile is not None:
            p = modeled_energy(1.0, profile, "active", peripherals)["avg_power_w"]
            energy_pts.append({"x": x, "y": t["median"] * p, "lo": lo * p, "hi": hi * p})
            energy_prov.add("modeled")
    time_pts.sort(key=lambda p: p["x"])
    energy_pts.sort(key=lambda p: p["x"])
    return {"time": time_pts, "energy": energy_pts if len(energy_pts) == len(time_pts) else [],
            "energy_provenance": sorted(energy_prov), "time_provenance": sorted(time_prov)}


def driver_completion(run, engine: str) -> str | None:
    """The completion mode ("polling" / "interrupt") a driver recipe's build records in the run's
    conditions (builds.<engine>.driver_completion); None where not recorded (not a driver recipe)."""
    build = ((run.conditions or {}).get("builds") or {}).get(engine) or {}
    return build.get("driver_completion")

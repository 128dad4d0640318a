"""Energy during a host run (`cryptobench run --energy METER`, docs/energy-meters.md).

* At the start: the meter's real update period (polled), the pipe round trip of one request to the
  harness (`idle` with ns = 0), and IDLE_FIRST idle windows: the harness sleeps a window long
  while the meter is read before the request and after the reply; idle power per domain =
  ΔE / Δt. One more idle window after every comparison group; the baseline a cell uses is the
  median over all idle windows taken so far.
* Per cell, after its timing samples: `windows` energy windows (`window` request: batches of the
  cell's k operations until the window length has passed), interleaved across the group's
  engines. Per window and domain: per-op energy = (ΔE − P_idle·Δt_wall) / ops.
* A window across which a counter reset (or a domain vanished) is dropped and counted, never guessed.

The window lasts at least WINDOW_MIN_S and at least UPDATE_PERIODS update periods of the counter,
so that the counter's granularity (one update at each end) and the pipe round trip stay small.
"""
from __future__ import annotations

import statistics
import time

from ....catalog.ops import OPS
from ....core.errors import HarnessError
from ....stats.summary import summarize
from .base import CounterReset, Meter, estimate_update_period
from ...power import per_unit

WINDOW_MIN_S = 0.1
UPDATE_PERIODS = 20
IDLE_FIRST = 3
ROUND_TRIPS = 9
NOT_ABOVE_IDLE_SIGMAS = 2.0


def _median(xs):
    return statistics.median(xs) if xs else None


class EnergySession:
    def __init__(self, meter: Meter, windows: int = 5, previous: dict | None = None):
        self.meter = meter
        self.windows = windows
        previous = previous or {}
        self.idle_windows: list[dict] = list((previous.get("idle") or {}).get("windows") or [])
        self.dropped = int(previous.get("dropped_windows") or 0)
        self.update_measured = None
        self.window_s = None
        self.round_trips_ns: list[int] = []
        self.started = False
        self.why = ""

    # --- measurements -------------------------------------------------------------------------
    def start(self, proc) -> None:
        """Update period, window length, pipe round trip and the first idle windows."""
        self.update_measured = estimate_update_period(self.meter)
        period = self.update_measured or self.meter.update_period_s
        self.window_s = max(WINDOW_MIN_S, UPDATE_PERIODS * period)
        for _ in range(ROUND_TRIPS):
            t0 = time.monotonic_ns()
            slept = proc.idle(0)
            self.round_trips_ns.append(time.monotonic_ns() - t0 - slept)
        self.started = True
        self.idle(proc, IDLE_FIRST)

    def idle(self, proc, n: int = 1) -> None:
        for _ in range(n):
            a = self.meter.read()
            slept = proc.idle(int(self.window_s * 1e9))
            b = self.meter.read()
            try:
                joules = self.meter.delta(a, b)
            except CounterReset:
                self.dropped += 1
                continue
            self.idle_windows.append({"s": (b.t_ns - a.t_ns) / 1e9, "harness_ns": slept, "j": joules})

    def idle_power(self) -> dict:
        """Median idle power per domain (W) over every idle window so far."""
        out = {}
        for d in self.meter.all_domains():
            ps = [w["j"][d] / w["s"] for w in self.idle_windows if d in w["j"] and w["s"] > 0]
            if ps:
                out[d] = statistics.median(ps)
        return out

    def idle_power_stdev(self, domain: str) -> float:
        ps = [w["j"][domain] / w["s"] for w in self.idle_windows if domain in w["j"] and w["s"] > 0]
        return statistics.stdev(ps) if len(ps) > 1 else 0.0

    def window(self, proc, slot: int, k: int) -> dict:
        """One energy window of a set-up slot: {"ops", "ns", "wall_ns", "j"} or {"reset": why}."""
        a = self.meter.read()
        w = proc.window(slot, k, int(self.window_s * 1e9))
        b = self.meter.read()
        try:
            joules = self.meter.delta(a, b)
        except CounterReset as exc:
            self.dropped += 1
            return {"reset": str(exc), "ops": w["ops"], "ns": w["ns"]}
        return {"ops": w["ops"], "ns": w["ns"], "wall_ns": b.t_ns - a.t_ns, "j": joules}

    # --- results ------------------------------------------------------------------------------
    def cell_energy(self, op_id: str, params: dict, windows: list[dict]) -> tuple[dict | None, str]:
        """result["energy"] of a cell from its windows, or (None, why) when no window is usable."""
        op = OPS[op_id]
        div = 2.0 if op.halve else 1.0
        good = [w for w in windows if "reset" not in w and w["ops"] > 0]
        dropped = len(windows) - len(good)
        if not good:
            return None, (f"energy: all {len(windows)} windows dropped (counter reset)" if windows
                          else "energy: no window measured")
        idle = self.idle_power()
        main = self.meter.main_domain
        per_dom = self._per_domain(good, idle, div)
        p_main = idle.get(main, 0.0)
        net_main = [(w["j"][main] - p_main * w["wall_ns"] / 1e9) / w["ops"] / div for w in good]
        s = summarize(net_main)
        t_op = statistics.median(w["ns"] / 1e9 / w["ops"] / div for w in good)
        window_s = statistics.median(w["wall_ns"] / 1e9 for w in good)
        unc = self._uncertainty(good, window_s, div)
        out = {
            "per_op_j": s.median, "provenance": self.meter.provenance,
            "method": (f"{self.meter.name} counters read before and after windows of ≥ {self.window_s:g} s of "
                       f"back-to-back operations; per op = (ΔE − P_idle·Δt) / ops, {main} domain"
                       + (", whole exchange / 2" if op.halve else "")),
            "meter": {"name": self.meter.name, "domain": main, "domains": self.meter.all_domains(),
                      "what": self.meter.what},
            "stats": {"median": s.median, "mean": s.mean, "stdev": s.stdev,
                      "rsd_pct": 100.0 * s.stdev / abs(s.mean) if s.mean else 0.0,
                      "min": s.min, "max": s.max, "n": s.n},
            "idle_power_w": p_main,
            "uncertainty_per_op_j": unc,
            "gross_per_op_j": per_dom[main]["gross_per_op_j"],
            "time_per_op_s": t_op,
            "window_s": window_s,
            "per_window_j": [w["j"][main] - p_main * w["wall_ns"] / 1e9 for w in good],
            "per_op_windows_j": net_main,
            "windows": [{k: w[k] for k in ("ops", "ns", "wall_ns", "j", "reset") if k in w} for w in windows],
            "dropped_windows": dropped,
            "domains": per_dom,
            "flags": _cell_flags(s, unc, dropped),
        }
        nbytes = params.get("bytes") if op.payload else None
        if s.median > 0 and t_op > 0:
            out.update(_per_unit_fields(s.median, t_op, nbytes))
        return out, ""

    def _per_domain(self, good: list[dict], idle: dict, div: float) -> dict:
        """Per domain: the median net and gross energy per operation, and the idle power subtracted."""
        per_dom = {}
        for d in self.meter.all_domains():
            p = idle.get(d, 0.0)
            net = [(w["j"][d] - p * w["wall_ns"] / 1e9) / w["ops"] / div for w in good]
            gross = [w["j"][d] / w["ops"] / div for w in good]
            per_dom[d] = {"per_op_j": statistics.median(net), "gross_per_op_j": statistics.median(gross),
                          "idle_power_w": p}
        return per_dom

    def _uncertainty(self, good: list[dict], window_s: float, div: float) -> float:
        """How far from zero a per-op figure must be to mean anything: the idle baseline's spread
        over a window plus one counter update at the window's power (a reading is up to one
        update period stale at each end), per operation."""
        main = self.meter.main_domain
        period = self.update_measured or self.meter.update_period_s
        gross_w = statistics.median(w["j"][main] / (w["wall_ns"] / 1e9) for w in good if w["wall_ns"] > 0)
        return ((self.idle_power_stdev(main) * window_s + gross_w * period)
                / statistics.median(w["ops"] / div for w in good))

    def summary(self) -> dict:
        """conditions["energy_meter"]."""
        desc = self.meter.describe()
        idle = self.idle_power()
        main = self.meter.main_domain
        main_ps = [w["j"][main] / w["s"] for w in self.idle_windows if main in w["j"] and w["s"] > 0]
        out = {"meter": self.meter.name, "provenance": self.meter.provenance, "description": desc,
               "domains": self.meter.all_domains(), "main_domain": main,
               "resolution_j": self.meter.resolution_j,
               "update_period_nominal_s": self.meter.update_period_s,
               "update_period_measured_s": self.update_measured,
               "update_period_s": self.update_measured or self.meter.update_period_s,
               "window_s": self.window_s, "windows_per_cell": self.windows,
               "pipe_round_trip_s": (_median(self.round_trips_ns) or 0) / 1e9,
               "pipe_round_trips_ns": self.round_trips_ns,
               "idle": {"n": len(self.idle_windows), "power_w": idle,
                        "rsd_pct": (100 * statistics.stdev(main_ps) / statistics.fmean(main_ps)
                                    if len(main_ps) > 1 and statistics.fmean(main_ps) else None),
                        "windows": self.idle_windows},
               "dropped_windows": self.dropped}
        if self.why:
            out["detail"] = self.why
        return out


def _cell_flags(s, unc: float, dropped: int) -> list[str]:
    """A cell's energy flags: not above the idle baseline, windows dropped, too few windows."""
    flags = []
    if s.median <= NOT_ABOVE_IDLE_SIGMAS * unc or s.median <= 0:
        flags.append("not-above-idle")
    if dropped:
        flags.append("counter-reset")
    if s.n < 3:
        flags.append("few-windows")
    return flags


def _per_unit_fields(per_op_j: float, t_op: float, nbytes) -> dict:
    """Average power over idle while the op runs, and the per-byte / per-bit figures of a payload."""
    u = per_unit(per_op_j, t_op, nbytes)
    out = {"avg_power_w": u["avg_power_w"]}       # extra power over idle while the op runs
    for key in ("energy_per_byte_j", "energy_per_bit_j", "mJ_per_Mb", "throughput_Mbps", "fom"):
        if key in u:
            out[key] = u[key]
    return out


def measure_group(session: EnergySession, procs: dict, slot: int, ks: dict, engines: list[str],
                  failures: dict) -> tuple[dict, dict]:
    """Energy windows of every engine of a group, interleaved A B C, B C A, …; returns
    (windows per engine, why per engine whose windows failed)."""
    windows = {e: [] for e in engines}
    failed = {}
    for rnd in range(session.windows):
        order = engines[rnd % len(engines):] + engines[:rnd % len(engines)] if engines else []
        for e in order:
            if e in failures or e in failed:
                continue
            try:
                windows[e].append(session.window(procs[e], slot, ks[e]))
            except HarnessError as exc:
                failed[e] = f"energy windows failed: {exc}"
    return windows, failed


def energy_line(cond: dict | None) -> str | None:
    """One line for the report's conditions, or None when the run measured no energy."""
    if not cond:
        return None
    main = cond.get("main_domain", "?")
    idle = (cond.get("idle") or {}).get("power_w", {}).get(main)
    period = cond.get("update_period_s")
    return (f"energy: {cond.get('meter')} meter, domain {main} ({(cond.get('description') or {}).get('what', '')}); "
            f"µJ = its energy per operation over the idle baseline"
            + (f" {idle:.3g} W" if idle is not None else "")
            + f" (n={(cond.get('idle') or {}).get('n', 0)} idle windows), windows ≥ {cond.get('window_s') or 0:g} s"
            + (f", counter update ≈ {period * 1e3:.3g} ms" if period else "")
            + f", pipe round trip {cond.get('pipe_round_trip_s', 0) * 1e6:.0f} µs · provenance: measured"
            + (f" · {cond['dropped_windows']} window(s) dropped (counter reset)" if cond.get("dropped_windows") else ""))

"""`cryptobench energy import`: a power-analyzer trace -> windows at the marker's edges -> energy
per repetition -> (optionally) a stored cell with the statistics of time and energy.

Nothing is stored until the whole trace has been read and segmented: a malformed trace or a
window count that does not match `--expect` stores nothing."""
from __future__ import annotations

from .segment import segment, summarize_energy


def import_trace(info, chunks, *, nominal_voltage=None, min_width_s=0.0, threshold=None, hysteresis=0.0,
                 expect: int | None = None, extra_channels=()) -> dict:
    result = segment(chunks, nominal_voltage=nominal_voltage if nominal_voltage is not None else info.nominal_voltage,
                     min_width_s=min_width_s, threshold=threshold, hysteresis=hysteresis,
                     extra_channels=extra_channels)
    windows = result.windows
    if expect is not None and len(windows) != expect:
        from .segment import PlanMismatch
        raise PlanMismatch(f"{info.path}: expected {expect} marker windows (the planned repetitions), found "
                           f"{len(windows)}; nothing stored")
    return {"info": info, "windows": windows, "warnings": list(result.warnings),
            "summary": summarize_energy(windows) if windows else None,
            "samples_total": result.samples_total, "sample_period_s": result.sample_period_s}


def as_cell(imported: dict, op: str, params: dict, engine: str, target: str) -> dict:
    """A stored cell: time and energy statistics of the windows, provenance measured."""
    from ..results import derive
    windows = imported["windows"]
    samples = [[1, max(1, int(round(w.duration_s * 1e9))), 0] for w in windows]
    result = derive(op, params, samples, {"counter": "none"}, True)
    s = imported["summary"]
    result["energy"] = {"per_op_j": s["energy_j"]["median"], "provenance": "measured",
                        "method": f"Σ V·I·Δt over marker windows of {imported['info'].format} trace "
                                  f"{imported['info'].path}",
                        "stats": s, "approximate_windows": s.get("approximate", 0),
                        "per_window_j": [w.energy_j for w in windows]}
    if any(w.approximate for w in windows):
        result["flags"] = sorted(set(result["flags"]) | {"approximate"})
    return {"op": op, "params": params, "engine": engine, "target": target, "provenance": "measured",
            "status": "ok", "kat": "n/a", "detail": f"{len(windows)} windows from {imported['info'].path}",
            "samples": samples, "result": result}

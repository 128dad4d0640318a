"""`cryptobench energy import`: a power-analyzer trace -> windows at the marker's edges -> energy
per repetition -> (optionally) stored: as a new cell, or matched to the cells of a stored run.

Nothing is stored until the whole trace has been read, segmented and matched: a malformed trace,
a window count that does not match `--expect` or the run's plan, or windows out of the run's order
store nothing."""
from __future__ import annotations

import dataclasses

from ...catalog.ops import OPS
from ...core.records import OK, Cell, Result, Run
from ..power import per_unit
from .segment import PlanMismatch, column, match_plan, segment, summarize_energy
from ...stats.results import derive


def import_trace(info, chunks, *, nominal_voltage=None, min_width_s=0.0, threshold=None, hysteresis=0.0,
                 expect: int | None = None, partial: str = "error") -> dict:
    result = segment(chunks, nominal_voltage=nominal_voltage if nominal_voltage is not None else info.nominal_voltage,
                     min_width_s=min_width_s, threshold=threshold, hysteresis=hysteresis, partial=partial,
                     path=str(info.path))
    windows = result.windows
    if expect is not None and len(windows) != expect:
        raise PlanMismatch(f"{info.path}: expected {expect} marker windows (the planned repetitions), found "
                           f"{len(windows)}; nothing stored")
    return {"info": info, "windows": windows, "warnings": list(result.warnings),
            "summary": summarize_energy(windows) if len(windows) else None, "supplies": result.supplies,
            "samples_total": result.samples_total, "sample_period_s": result.sample_period_s}


def energy_record(windows, info, op: str, params: dict, summary: dict | None = None) -> dict:
    """`result.energy` of a cell from its windows (docs/schema.md): median per op, statistics,
    per-window values, the supply split, per byte/bit and FoM for payload operations."""
    s = summary or summarize_energy(windows)
    med_e, med_t = s["energy_j"]["median"], s["duration_s"]["median"]
    nbytes = params.get("bytes") if OPS[op].payload else None
    rec = {"per_op_j": med_e / (2.0 if OPS[op].halve else 1.0), "provenance": "measured",
           "method": f"Σ V·I·Δt over marker windows of a {info.format} trace ({info.path})",
           "source": f"{info.format} trace",
           "trace": {"format": info.format, "path": str(info.path), "sample_period_s": info.sample_period_s,
                     "windows": len(windows)},
           "stats": s, "approximate_windows": s["approximate"],
           "per_window_j": column(windows, "energy_j").tolist()}
    rec.update({k: v for k, v in per_unit(rec["per_op_j"], med_t / (2.0 if OPS[op].halve else 1.0), nbytes).items()
                if k != "energy_per_op_j"})
    if "supplies" in s:
        rec["supplies"] = s["supplies"]
    return rec


def as_cell(imported: dict, op: str, params: dict, engine: str, target: str) -> Cell:
    """A new stored cell: time and energy statistics of the windows, provenance measured."""
    windows = imported["windows"]
    samples = [[1, max(1, int(round(d * 1e9))), 0] for d in column(windows, "duration_s").tolist()]
    result = derive(op, params, samples, {"counter": "none"}, True)
    result["energy"] = energy_record(windows, imported["info"], op, params, imported["summary"])
    if column(windows, "approximate").any():
        result["flags"] = sorted(set(result["flags"]) | {"approximate"})
    return Cell(op=op, params=params, engine=engine, target=target, provenance="measured", status=OK, kat="n/a",
                detail=f"{len(windows)} windows from {imported['info'].path}", samples=samples, result=Result(result))


def planned_sequence(run: Run) -> list[dict]:
    """The marker windows a stored run's device produced, in order: one per timed repetition of
    every cell that ran (status ok with samples), in the order the cells ran."""
    out = []
    for c in sorted(run.cells, key=lambda c: c.seq):
        if not c.ok or not c.samples:
            continue
        reps = sum(k for k, _, _ in c.samples)
        times = sorted(ns / k / 1e9 for k, ns, _ in c.samples)
        timed = any(ns for _, ns, _ in c.samples)
        params = " ".join(f"{k}={v}" for k, v in c.params.items())
        out.append({"label": f"{c.op} {params} [{c.engine}]".replace("  ", " "), "repeat": reps,
                    "expected_s": times[len(times) // 2] if timed else None, "cell": c})
    return out


def attach_to_run(imported: dict, run: Run) -> list[Cell]:
    """The run's cells with `result.energy` from their windows (count and order checked first).
    Raises PlanMismatch, storing nothing, when the trace does not match the run."""
    planned = planned_sequence(run)
    if not planned:
        raise PlanMismatch(f"run {run.id} has no timed cells to match marker windows to")
    matched = match_plan(imported["windows"], planned, str(imported["info"].path))
    cells = []
    for p, ws in matched:
        cell = p["cell"]
        result = cell.result if cell.result is not None else Result()
        fields = {"energy": energy_record(ws, imported["info"], cell.op, cell.params)}
        if column(ws, "approximate").any():
            fields["flags"] = sorted(set(result.flags) | {"approximate"})
        cells.append(dataclasses.replace(cell, result=result.with_fields(**fields)))
    return cells

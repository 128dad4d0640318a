"""From raw samples to the documented result record (docs/schema.md), and engine comparisons."""
from __future__ import annotations

from ..catalog.ops import OPS
from .convergence import converged
from .estimate import estimate, point, ratio_interval
from ..core.records import Cell, Run, cell_key
from .summary import HIGH_RSD_PCT, flags_for, ratio_ci, summarize

SCHEMA_ID = "cryptobench-result/1"


def per_op_seconds(op_id: str, samples: list) -> list[float]:
    """Seconds per operation of each sample [k, ns, cycles]; halved for both-sides protocols."""
    div = 2.0 if OPS[op_id].halve else 1.0
    return [ns / k / 1e9 / div for k, ns, _ in samples]


def derive(op_id: str, params: dict, samples: list, hello: dict, single: bool, sampling: dict | None = None,
           noise_rsd_pct: float | None = None, precision: float | None = None) -> dict:
    """The result record of one cell. `sampling` (a host run's rounds: {"rounds", "processes",
    "block_rounds", "estimator", "tau"}) adds the reported estimate and its repeat interval (estimate.py);
    `noise_rsd_pct`, the machine's noise floor, makes the high-rsd flag relative to it; `precision`
    (an adaptive run's target) flags a cell whose interval did not get there."""
    op = OPS[op_id]
    times = per_op_seconds(op_id, samples)
    s = summarize(times)
    batch_ns = sorted(ns for _, ns, _ in samples)[len(samples) // 2]
    floor = max(float(hello.get("clock_res_ns", 1)), float(hello.get("clock_overhead_ns", 0)))
    div = 2.0 if op.halve else 1.0
    cycles_per_op = [c / k / div for k, _, c in samples]
    cycles = sorted(cycles_per_op)
    counter = hello.get("counter", "none")
    cyc_median = cycles[len(cycles) // 2] if counter != "none" else None
    nbytes = params.get("bytes") if op.payload else None
    est = None
    if sampling:
        est = estimate(times, sampling["rounds"], sampling["block_rounds"], sampling["estimator"],
                       sampling.get("tau", 0.0), processes=sampling.get("processes") or None)
    value = est.value if est else s.median
    cyc_value = cyc_median
    if est and counter != "none":
        cyc_value = point(cycles_per_op, sampling["estimator"])
    flags = flags_for(s, batch_ns, floor, relative_high_rsd(noise_rsd_pct))
    if est is not None:
        if "few-samples" in flags:
            flags.remove("few-samples")      # the printed interval is the blocks', not the samples' median's
        if not est.enough_blocks:
            flags.append("few-samples")
        if precision is not None and not converged(est, precision):     # the sampler's own rule
            flags.append("not-converged")
        if est.layout:
            flags.append("layout")
    out = {
        "n": s.n,
        "k": samples[0][0],
        "single_shot": single,
        "time_s": {"median": s.median, "mean": s.mean, "stdev": s.stdev, "rsd_pct": s.rsd_pct,
                   "min": s.min, "max": s.max, "ci95": list(s.ci95), "ci_coverage": s.ci_coverage},
        "outliers": s.outliers,
        "ops_per_s": 1.0 / value if value > 0 else None,
        "throughput_Bps": None, "KBps": None, "KiBps": None,
        "cycles": {"counter": counter, "counter_hz": hello.get("counter_hz"), "per_op_median": cyc_median},
        "cycles_per_byte": None,
        "halved": op.halve,
        "flags": flags,
    }
    if est is not None:
        out["estimate"] = est.as_dict()
        out["cycles"]["per_op_estimate"] = cyc_value
        out["sampling"] = {"rounds": list(sampling["rounds"]), "processes": list(sampling.get("processes") or []),
                           "block_rounds": sampling["block_rounds"]}
    if nbytes:
        bps = nbytes / value
        out.update(throughput_Bps=bps, KBps=bps / 1000.0, KiBps=bps / 1024.0)
        if cyc_value is not None:
            out["cycles_per_byte"] = cyc_value / nbytes
    return out


def relative_high_rsd(noise_rsd_pct: float | None) -> float:
    """The RSD above which a cell is flagged high-rsd: HIGH_RSD_PCT, or twice the machine's own
    noise floor where that is higher (a cell as noisy as the machine is the machine's doing)."""
    return max(HIGH_RSD_PCT, 2.0 * noise_rsd_pct) if noise_rsd_pct else HIGH_RSD_PCT


def _rounds(cell: Cell) -> list | None:
    smp = cell.result.sampling if cell.result is not None else None
    return smp["rounds"] if smp and cell.samples else None


def duration_improvement(base: Cell, cell: Cell) -> tuple[float, tuple[float, float], str]:
    """t_base / t_cell with its 95 % interval and the estimator both times are: the reported
    estimates and their block-paired repeat interval where both cells were sampled in the same
    rounds with the same estimator, else the ratio of medians with a bootstrap interval of the samples."""
    tb, tc = base.reported_time(), cell.reported_time()
    rb, rc = _rounds(base), _rounds(cell)
    if tb and tc and rb and rc and tb[2] == tc[2]:
        sig = tuple(float(c.result.estimate.get("sigma_process_log") or 0.0) for c in (base, cell))
        got = ratio_interval(per_op_seconds(base.op, base.samples), rb, per_op_seconds(cell.op, cell.samples),
                             rc, base.result.sampling["block_rounds"], tb[2], process_sigmas=sig)
        if got is not None:
            return got[0], got[1], tb[2]
    ratio, ci = ratio_ci(per_op_seconds(base.op, base.samples), per_op_seconds(cell.op, cell.samples))
    return ratio, ci, "median"


def _cell_band(result) -> tuple[float | None, bool]:
    """(the band in percent a cell's time carries, whether any part of it is unvalidated): a cell a
    modelled engine served carries its engine band (earned on whole cells, the CPU's part
    included); any other simulated cell its error band; a measured cell none (its spread is in the
    interval)."""
    band = result.get("engine_band") or result.get("error_band")
    if not band:
        return None, False
    return (None, True) if band.get("unvalidated") else (float(band["pct"]), False)


def ratio_band(base_result, cell_result) -> dict | None:
    """The band of a ratio of two cells where a modelled engine served either of them: the two cells'
    bands added (each time may be off by its band, so their ratio by up to the sum, to first order);
    'unvalidated' where either part is. None where no modelled engine served either cell (a ratio
    of two simulated software cells keeps their shared error band out of it, as before)."""
    if not (base_result.get("engine_band") or cell_result.get("engine_band")):
        return None
    (a, ua), (b, ub) = _cell_band(base_result), _cell_band(cell_result)
    if ua or ub:
        return {"unvalidated": True, "text": "unvalidated (a modelled engine without a band)"}
    pct = (a or 0.0) + (b or 0.0)
    return {"pct": round(pct, 1), "text": f"±{pct:g} % (the two cells' bands added)"}


def comparisons(cells: list[Cell], baseline: str | None) -> list[dict]:
    """Duration Improvement t_baseline / t_engine for every timed cell that has a timed baseline."""
    if not baseline:
        return []
    timed = {c.key: c for c in cells if c.ok and c.samples}
    out = []
    for cell in timed.values():
        base = timed.get(cell_key(cell.op, cell.params, baseline))
        if cell.engine == baseline or base is None:
            continue
        ratio, ci, estimator = duration_improvement(base, cell)
        comp = {"op": cell.op, "params": dict(sorted(cell.params.items())), "baseline": baseline,
                "engine": cell.engine, "duration_improvement": ratio, "ci95": list(ci), "estimator": estimator}
        band = ratio_band(base.result, cell.result) if base.result is not None and cell.result is not None else None
        if band is not None:
            comp["band"] = band                   # also the Energy Efficiency Improvement's: E = t x V x I
        eb, ee = base.energy, cell.energy
        if eb is not None and ee is not None and eb.usable and ee.usable:
            # TI's Energy Efficiency Improvement (t_b·I_b)/(t_e·I_e) = E_baseline / E_engine
            comp["energy_efficiency_improvement"] = eb.per_op_j / ee.per_op_j
            comp["energy_provenance"] = ee.get("provenance")      # as stored: None where it names none
        out.append(comp)
    return out


def document(run: Run) -> dict:
    """The whole run as the documented JSON result document (docs/schema.md)."""
    plan = run.plan
    results = []
    for c in run.cells:
        r = {"op": c.op, "params": c.params.to_dict(), "engine": c.engine, "target": c.target,
             "provenance": c.provenance, "status": c.status, "kat": c.kat, "detail": c.detail,
             "conditions": {"engine": c.engine, "target": c.target}}
        r.update(c.result.to_json() if c.result is not None else {})
        r["samples"] = c.samples
        results.append(r)
    return {
        "schema": SCHEMA_ID,
        "run": {"id": run.id, "created": run.created, "finished": run.finished,
                "status": run.status, "suite": run.suite, "baseline": plan.baseline,
                "options": plan.options.to_json(), **({"label": plan.label} if plan.label else {})},
        "conditions": run.conditions.to_json(),
        "results": results,
        "comparisons": comparisons(run.cells, plan.baseline),
    }

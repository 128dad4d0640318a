"""From raw samples to the documented result record (docs/schema.md), and engine comparisons."""
from __future__ import annotations

from .catalog import OPS
from .stats import flags_for, ratio_ci, summarize

SCHEMA_ID = "cryptobench-result/1"


def per_op_seconds(op_id: str, samples: list) -> list[float]:
    """Seconds per operation of each sample [k, ns, cycles]; halved for both-sides protocols."""
    div = 2.0 if OPS[op_id].halve else 1.0
    return [ns / k / 1e9 / div for k, ns, _ in samples]


def derive(op_id: str, params: dict, samples: list, hello: dict, single: bool) -> dict:
    op = OPS[op_id]
    times = per_op_seconds(op_id, samples)
    s = summarize(times)
    batch_ns = sorted(ns for _, ns, _ in samples)[len(samples) // 2]
    floor = max(float(hello.get("clock_res_ns", 1)), float(hello.get("clock_overhead_ns", 0)))
    div = 2.0 if op.halve else 1.0
    cycles = sorted(c / k / div for k, _, c in samples)
    counter = hello.get("counter", "none")
    cyc_median = cycles[len(cycles) // 2] if counter != "none" else None
    nbytes = params.get("bytes") if op.payload else None
    out = {
        "n": s.n,
        "k": samples[0][0],
        "single_shot": single,
        "time_s": {"median": s.median, "mean": s.mean, "stdev": s.stdev, "rsd_pct": s.rsd_pct,
                   "min": s.min, "max": s.max, "ci95": list(s.ci95), "ci_coverage": s.ci_coverage},
        "outliers": s.outliers,
        "ops_per_s": 1.0 / s.median if s.median > 0 else None,
        "throughput_Bps": None, "KBps": None, "KiBps": None,
        "cycles": {"counter": counter, "counter_hz": hello.get("counter_hz"), "per_op_median": cyc_median},
        "cycles_per_byte": None,
        "halved": op.halve,
        "flags": flags_for(s, batch_ns, floor),
    }
    if nbytes:
        bps = nbytes / s.median
        out.update(throughput_Bps=bps, KBps=bps / 1000.0, KiBps=bps / 1024.0)
        if cyc_median is not None:
            out["cycles_per_byte"] = cyc_median / nbytes
    return out


def comparisons(cells: list[dict], baseline: str | None) -> list[dict]:
    """Duration Improvement t_baseline / t_engine for every timed cell that has a timed baseline."""
    if not baseline:
        return []
    timed = {}
    for c in cells:
        if c["status"] == "ok" and c.get("samples"):
            timed[(c["op"], tuple(sorted(c["params"].items())), c["engine"])] = c
    out = []
    for (op, pkey, engine), cell in timed.items():
        if engine == baseline or (op, pkey, baseline) not in timed:
            continue
        base = timed[(op, pkey, baseline)]
        ratio, ci = ratio_ci(per_op_seconds(op, base["samples"]), per_op_seconds(op, cell["samples"]))
        comp = {"op": op, "params": dict(pkey), "baseline": baseline, "engine": engine,
                "duration_improvement": ratio, "ci95": list(ci)}
        eb, ee = (base.get("result") or {}).get("energy"), (cell.get("result") or {}).get("energy")
        usable = lambda en: (en and (en.get("per_op_j") or 0) > 0
                             and "not-above-idle" not in en.get("flags", []))
        if usable(eb) and usable(ee):
            # TI's Energy Efficiency Improvement (t_b·I_b)/(t_e·I_e) = E_baseline / E_engine
            comp["energy_efficiency_improvement"] = eb["per_op_j"] / ee["per_op_j"]
            comp["energy_provenance"] = ee.get("provenance")
        out.append(comp)
    return out


def document(run: dict) -> dict:
    """The whole run as the documented JSON result document."""
    plan = run["plan"]
    results = []
    for c in run["cells"]:
        r = {"op": c["op"], "params": c["params"], "engine": c["engine"], "target": c["target"],
             "provenance": c["provenance"], "status": c["status"], "kat": c["kat"], "detail": c["detail"],
             "conditions": {"engine": c["engine"], "target": c["target"]}}
        r.update(c.get("result") or {})
        r["samples"] = c.get("samples")
        results.append(r)
    return {
        "schema": SCHEMA_ID,
        "run": {"id": run["id"], "created": run["created"], "finished": run["finished"],
                "status": run["status"], "suite": run["suite"], "baseline": plan.get("baseline"),
                "options": plan.get("options", {}), **({"label": plan["label"]} if plan.get("label") else {})},
        "conditions": run["conditions"],
        "results": results,
        "comparisons": comparisons(run["cells"], plan.get("baseline")),
    }

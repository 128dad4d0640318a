"""`cryptobench export RUN [RUN…] --format parquet|csv|json`: stored runs as one flat table (a row per
cell, or per sample with --samples) that loads straight into pandas or DuckDB.

The table is tidy: one row per (run, op, params, engine) cell, every column a scalar with its unit in
its name, the same columns and types whatever the format and whichever runs are exported (apart from
the `param_<name>` columns, one per parameter name found in the exported cells). Column meanings:
docs/export.md; the list below (`CELL_COLUMNS`, `SAMPLE_COLUMNS`) is the single source of truth.
"""
from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable, Iterator, Mapping

from ..core.errors import UsageError
from ..core.records import Cell, Conditions, Result, Run
from ..core.table import LEFT, Column, Table, csv_text, spreadsheet_safe
from ..core.extras import require
from .. import __version__
from ..catalog.ops import OPS
from ..core.printable import printable
from ..stats.results import per_op_seconds

EXPORT_FORMAT_ID = "cryptobench-export/1"

# (name, type, unit, meaning). Types: int64 | float64 | string | bool (all nullable).
CELL_COLUMNS: list[tuple[str, str, str, str]] = [
    # the run
    ("run_id", "int64", "", "id of the stored run"),
    ("run_label", "string", "", "the run's --label (free text), null when none"),
    ("run_created", "string", "ISO 8601", "when the run started (local time with UTC offset)"),
    ("run_finished", "string", "ISO 8601", "when the run completed; null for an interrupted or running run"),
    ("run_status", "string", "", "complete | interrupted | running"),
    ("suite", "string", "", "suite the run was planned from; null for ad-hoc --op runs"),
    ("run_baseline", "string", "", "the run's baseline engine (--baseline), null when none"),
    # the cell
    ("cell_seq", "int64", "", "position of the cell in the run's plan (0-based)"),
    ("op", "string", "", "operation id (cryptobench list)"),
    ("op_title", "string", "", "human-readable name of the operation"),
    ("params_json", "string", "JSON", "the cell's parameters as JSON with sorted keys (the join key)"),
    # param_<name> columns are inserted here, one per parameter name
    ("engine", "string", "", "engine (library / back end) measured"),
    ("engine_version", "string", "", "version the engine reported (conditions.engines, or the build's "
                                     "library_version for microcontroller targets)"),
    ("target", "string", "", "where it ran: host, qemu:…, board:…, sim:…, trace:…"),
    ("provenance", "string", "", "how the time was obtained: measured | simulated | modeled | published | none"),
    ("status", "string", "", "ok | unsupported | failed | partial (an interrupted run's rounds so far)"),
    ("kat", "string", "", "known-answer check: pass | fail | n/a"),
    ("detail", "string", "", "what was verified, or why unsupported / failed"),
    # time
    ("n", "int64", "samples", "number of timed samples kept"),
    ("k", "int64", "ops", "operations per timed sample (batch size)"),
    ("single_shot", "bool", "", "true when every sample is one operation (k = 1 by design)"),
    ("halved", "bool", "", "true for both-sides protocols whose timings were halved"),
    # the printed number: what `show`, `report`, `diff` and the layouts print (Result.reported_time)
    ("estimate_s", "float64", "s", "the time per operation the tables print: the estimator's value (p1 of a host "
                                   "run sampled in rounds, else the median)"),
    ("estimator", "string", "", "which estimator estimate_s is: p1 | median | … (stats/estimate.py)"),
    ("estimate_lo_s", "float64", "s", "lower end of the printed 95 % repeat interval of estimate_s"),
    ("estimate_hi_s", "float64", "s", "upper end of the printed 95 % repeat interval of estimate_s"),
    # the sample distribution
    ("median_s", "float64", "s", "median time per operation (the samples' median; not what the tables print "
                                 "where estimator is not median)"),
    ("mean_s", "float64", "s", "mean time per operation"),
    ("stdev_s", "float64", "s", "standard deviation of the per-operation time"),
    ("rsd_pct", "float64", "%", "relative standard deviation (stdev / mean × 100)"),
    ("min_s", "float64", "s", "fastest sample, per operation"),
    ("max_s", "float64", "s", "slowest sample, per operation"),
    ("ci95_lo_s", "float64", "s", "lower end of the 95 % confidence interval of the median"),
    ("ci95_hi_s", "float64", "s", "upper end of the 95 % confidence interval of the median"),
    ("ci_coverage", "float64", "fraction", "exact coverage of that distribution-free interval"),
    ("outliers", "int64", "samples", "samples outside the Tukey fences (kept, counted)"),
    ("flags", "string", "", "quality flags, space-separated (high-rsd, near-timer-resolution, few-samples, "
                            "outliers); null when none"),
    ("ops_per_s", "float64", "op/s", "1 / estimate_s"),
    ("throughput_bytes_per_s", "float64", "B/s", "payload bytes / estimate_s (payload operations only)"),
    ("throughput_kb_per_s", "float64", "kB/s", "throughput in 1000-byte kilobytes per second"),
    ("throughput_kib_per_s", "float64", "KiB/s", "throughput in 1024-byte kibibytes per second"),
    # cycles
    ("cycles_per_op", "float64", "cycles", "median counter ticks per operation"),
    ("cycles_per_byte", "float64", "cycles/B", "cycles_per_op / payload bytes"),
    ("cycle_counter", "string", "", "the counter: tsc, cntvct, dwt, model, none"),
    ("cycle_counter_hz", "float64", "Hz", "the counter's frequency, when known"),
    ("cycles_overhead", "float64", "cycles", "microcontrollers: cost of two back-to-back counter reads"),
    ("sim_instructions_per_op", "float64", "instructions", "simulated targets: instructions executed per operation"),
    ("sim_cpi", "float64", "cycles/instruction", "simulated targets: cycles_per_op / sim_instructions_per_op"),
    ("sim_instructions_per_s", "float64", "instructions/s", "simulated targets: the simulator's speed over the "
                                                           "cell's image (measured on the host, start-up excluded)"),
    ("sim_error_band_class", "string", "", "simulated targets: the condition class of the cell's device (core and "
                                           "flash condition, targets/mcu/sim/error_band.py); null for runs stored "
                                           "before error bands"),
    ("sim_error_band_pct", "float64", "%", "simulated targets: ± band of cycles_per_op against published silicon "
                                          "(the class's largest |error| in bench/sim_vs_silicon, rounded up); null "
                                          "when unvalidated"),
    ("sim_error_band_rows", "int64", "rows", "simulated targets: published silicon rows the band was measured on "
                                             "(0 when unvalidated)"),
    ("sim_error_band_validated", "bool", "", "simulated targets: false when the class has no silicon rows "
                                             "(\"unvalidated\")"),
    ("sim_error_band_source", "string", "", "simulated targets: the bench, commit(s), date(s) and libraries the band "
                                            "comes from, or why it is unvalidated"),
    ("engine_band_model", "string", "", "cells a modelled crypto engine served: the engine model and its version "
                                        "(targets/mcu/sim/engine_band.py); null for other cells"),
    ("engine_band_class", "string", "", "modelled engines: the operation class the band is measured for (aes, "
                                        "sha-2, ecc, random, ...)"),
    ("engine_band_pct", "float64", "%", "modelled engines: ± band of the cell's time against published hardware "
                                        "(the largest |modeled / published - 1| in bench/accel_vs_published, rounded "
                                        "up); null when unvalidated"),
    ("engine_band_median_ratio", "float64", "", "modelled engines: the median modeled / published duration of the "
                                                "band's rows (0.16: the model reads a sixth of the published time)"),
    ("engine_band_validated", "bool", "", "modelled engines: false when no published row checks this model version "
                                          "and class (\"unvalidated\")"),
    ("engine_band_source", "string", "", "modelled engines: the published tables and the bench run the band comes "
                                         "from, or why it is unvalidated"),
    ("sim_profile_top_function", "string", "", "simulated runs with --profile: the ELF function symbol with the most "
                                               "cycles in the cell's median timed repetition"),
    ("sim_profile_json", "string", "JSON", "simulated runs with --profile: the cell's per-function profile "
                                           "{repetition, cycles, instructions, ops_in_window, rows: [{function, "
                                           "cycles, instructions, calls}]} (docs/schema.md result.profile)"),
    # microcontroller resources
    ("stack_bytes", "int64", "B", "stack high-water mark of one operation (microcontroller targets)"),
    ("heap_bytes", "int64", "B", "peak heap use (microcontroller targets)"),
    ("code_flash_bytes", "int64", "B", "flash the operation's code adds over the empty harness"),
    ("code_ram_bytes", "int64", "B", "static RAM the operation's code adds over the empty harness"),
    # energy
    ("energy_per_op_j", "float64", "J", "energy per operation (net of idle for host meters)"),
    ("energy_provenance", "string", "", "measured | modeled | simulated"),
    ("energy_meter", "string", "", "meter (rapl, perf, nvml) or trace format that gave the energy"),
    ("energy_source", "string", "", "where a modeled or imported figure comes from"),
    ("energy_method", "string", "", "how the energy figure was computed"),
    ("energy_gross_per_op_j", "float64", "J", "energy per operation before subtracting idle"),
    ("energy_idle_power_w", "float64", "W", "idle power subtracted (host meters)"),
    ("energy_uncertainty_per_op_j", "float64", "J", "host meters: idle spread + one counter update, per op"),
    ("energy_ci95_lo_j", "float64", "J", "lower end of the 95 % interval of the per-op energy, when known"),
    ("energy_ci95_hi_j", "float64", "J", "upper end of the 95 % interval of the per-op energy, when known"),
    ("energy_rsd_pct", "float64", "%", "relative standard deviation over the energy windows"),
    ("energy_windows", "int64", "windows", "number of energy windows the figure is the median of"),
    ("energy_avg_power_w", "float64", "W", "average (extra) power while the operation runs"),
    ("energy_avg_current_a", "float64", "A", "average current (modeled energy)"),
    ("energy_per_byte_j", "float64", "J/B", "energy per payload byte"),
    ("energy_per_bit_j", "float64", "J/bit", "energy per payload bit"),
    ("energy_mj_per_mbit", "float64", "mJ/Mbit", "energy per megabit of payload (the Pisa Cortex-A53 paper's E)"),
    ("energy_throughput_mbit_per_s", "float64", "Mbit/s", "throughput used for the energy figures"),
    ("energy_fom", "float64", "(Mbit/s)/(mJ/Mbit)", "figure of merit throughput / energy (the Pisa Cortex-A53 paper)"),
    ("energy_flags", "string", "", "energy flags, space-separated (not-above-idle, counter-reset, few-windows)"),
    ("energy_note", "string", "", "why a cell of an energy run has no energy figure"),
    ("energy_supplies_json", "string", "JSON", "per supply rail {name: {median_j, share_pct}} (multi-supply traces)"),
    # parallel scaling
    ("parallel_n", "int64", "processes", "processes run at once (scaling runs)"),
    ("parallel_cpus", "string", "", "CPU each process was pinned to, space-separated"),
    ("parallel_oversubscribed", "bool", "", "more processes than CPUs"),
    ("parallel_pinned", "bool", "", "processes were pinned to CPUs"),
    ("parallel_unit", "string", "", "unit of the aggregate: bytes or ops"),
    ("parallel_units_per_op", "float64", "unit/op", "units per operation"),
    ("parallel_rounds", "int64", "rounds", "kept rounds of N concurrent batches"),
    ("parallel_exec_time_s", "float64", "s", "total wall time of the kept rounds"),
    ("parallel_overhead_s", "float64", "s", "median wall time of N concurrent empty requests"),
    ("parallel_aggregate_per_s", "float64", "unit/s", "throughput of all N processes together (median)"),
    ("parallel_aggregate_ci95_lo_per_s", "float64", "unit/s", "lower end of its 95 % interval"),
    ("parallel_aggregate_ci95_hi_per_s", "float64", "unit/s", "upper end of its 95 % interval"),
    ("parallel_aggregate_rsd_pct", "float64", "%", "relative standard deviation of the aggregate"),
    ("parallel_per_core_per_s", "float64", "unit/s", "aggregate / N"),
    ("parallel_aggregate_bytes_per_s", "float64", "B/s", "aggregate in bytes per second (payload ops)"),
    ("parallel_per_core_bytes_per_s", "float64", "B/s", "per-core in bytes per second (payload ops)"),
    ("parallel_aggregate_ops_per_s", "float64", "op/s", "aggregate in operations per second"),
    ("parallel_per_core_ops_per_s", "float64", "op/s", "per-core in operations per second"),
    ("parallel_efficiency", "float64", "fraction", "TH_N / (N · TH_1); null without an N = 1 cell"),
    ("parallel_efficiency_ci95_lo", "float64", "fraction", "lower end of the efficiency's 95 % interval"),
    ("parallel_efficiency_ci95_hi", "float64", "fraction", "upper end of the efficiency's 95 % interval"),
    ("parallel_flags", "string", "", "oversubscribed, not-pinned, smt-siblings, orchestrator-overhead"),
    # conditions
    ("device", "string", "", "what ran the code: the microcontroller device or board, else the host CPU model"),
    ("host_cpu_model", "string", "", "host CPU model (conditions.host.cpu.model)"),
    ("host_arch", "string", "", "host architecture"),
    ("host_os", "string", "", "host operating system and kernel"),
    ("host_name", "string", "", "host name"),
    ("target_board", "string", "", "microcontroller board (conditions.target.board)"),
    ("target_core", "string", "", "microcontroller core (conditions.target.core or cpu)"),
    ("target_clock_hz", "float64", "Hz", "microcontroller core clock"),
    ("target_opt", "string", "", "firmware optimisation level (Os, O2, …)"),
    ("harness", "string", "", "host timing harness (conditions.harness.harness, e.g. cbh-host)"),
    ("compiler", "string", "", "compiler of the harness, or of this engine's firmware build"),
    ("cflags", "string", "", "compiler flags of the harness, or of this engine's firmware build"),
    ("clock", "string", "", "clock the harness timed with (CLOCK_MONOTONIC_RAW, …) or the target's timing"),
    ("cryptobench_version", "string", "", "cryptobench version that made the run"),
    ("git_revision", "string", "", "cryptobench source revision that made the run"),
    ("engine_conditions_json", "string", "JSON", "everything recorded about this engine (conditions.engines "
                                                 "or conditions.builds entry)"),
]

SAMPLE_COLUMNS: list[tuple[str, str, str, str]] = [
    ("run_id", "int64", "", "id of the stored run"),
    ("run_label", "string", "", "the run's --label (free text), null when none"),
    ("op", "string", "", "operation id"),
    ("params_json", "string", "JSON", "the cell's parameters as JSON with sorted keys"),
    # param_<name> columns are inserted here
    ("engine", "string", "", "engine measured"),
    ("target", "string", "", "where it ran"),
    ("provenance", "string", "", "measured | simulated | modeled"),
    ("sample", "int64", "", "index of the sample within its cell (0-based, in the order taken)"),
    ("k", "int64", "ops", "operations in this sample"),
    ("ns", "int64", "ns", "duration of the whole sample"),
    ("cycles", "int64", "ticks", "counter ticks of the whole sample (0 when there is no counter)"),
    ("per_op_s", "float64", "s", "seconds per operation: ns / k / 1e9 (halved for both-sides protocols)"),
]

_PARAM_ANCHOR = "params_json"     # param_<name> columns go right after this one


# -------------------------------------------------------------------------------------------- rows


def _g(d, *path):
    for p in path:
        if not isinstance(d, Mapping):
            return None
        d = d.get(p)
    return d


def _at(pair, i):
    return pair[i] if isinstance(pair, (list, tuple)) and len(pair) > i else None


def _words(items):
    return " ".join(str(x) for x in items) if items else None


def _json(obj):
    return json.dumps(obj, sort_keys=True, ensure_ascii=False) if obj not in (None, {}, []) else None


def _param_column(name: str) -> str:
    return "param_" + re.sub(r"[^0-9a-z_]+", "_", name.lower()).strip("_")


def _engine_conditions(cond: Conditions, engine: str) -> dict:
    return cond.engines.get(engine) or (cond.get("builds") or {}).get(engine) or {}


def _conditions_fields(run: Run, cell: Cell) -> dict:
    cond = run.conditions
    host, tgt, harness = cond.host, cond.target, cond.harness
    build = (cond.get("builds") or {}).get(cell.engine) or {}
    eng = _engine_conditions(cond, cell.engine)
    on_host = cell.target == "host"
    device = None
    if tgt and not on_host:
        device = tgt.get("device") or tgt.get("board")
    elif on_host:
        device = _g(host, "cpu", "model")
    return {
        "device": device,
        "host_cpu_model": _g(host, "cpu", "model"),
        "host_arch": _g(host, "cpu", "arch"),
        "host_os": host.get("os"),
        "host_name": host.get("hostname"),
        "target_board": tgt.get("board"),
        "target_core": tgt.get("core") or tgt.get("cpu"),
        "target_clock_hz": tgt.get("clock_hz"),
        "target_opt": tgt.get("opt"),
        "harness": harness.get("harness"),
        "compiler": build.get("compiler") or harness.get("compiler"),
        "cflags": build.get("cflags") or harness.get("cflags"),
        "clock": harness.get("clock") or tgt.get("timing"),
        "cryptobench_version": host.get("cryptobench"),
        "git_revision": host.get("git_revision"),
        "engine_version": eng.get("version") or eng.get("library_version"),
        "engine_conditions_json": _json(eng),
    }


def _energy_fields(r: Result) -> dict:
    """The energy columns of a result: only energy_note where it has no energy figure."""
    en = r.energy
    if en is None:
        return {"energy_note": r.get("energy_note")}
    stats = en.stats
    ci = en.get("ci95")
    if ci is None and isinstance(stats.get("energy_j"), dict):     # trace import: per-window energy
        ci = stats["energy_j"].get("ci95")
        if ci and r.get("halved"):
            ci = [x / 2.0 for x in ci]
    rsd = stats.get("rsd_pct")
    if rsd is None:
        rsd = _g(stats, "energy_j", "rsd_pct")
    return {
        "energy_per_op_j": en.per_op_j,
        "energy_provenance": en.get("provenance"),       # as stored: null where it names none
        "energy_meter": _g(en, "meter", "name") or _g(en, "trace", "format"),
        "energy_source": en.get("source"),
        "energy_method": en.get("method"),
        "energy_gross_per_op_j": en.get("gross_per_op_j"),
        "energy_idle_power_w": en.get("idle_power_w"),
        "energy_uncertainty_per_op_j": en.get("uncertainty_per_op_j"),
        "energy_ci95_lo_j": _at(ci, 0),
        "energy_ci95_hi_j": _at(ci, 1),
        "energy_rsd_pct": rsd,
        "energy_windows": stats.get("n") if stats else _g(en, "trace", "windows"),
        "energy_avg_power_w": en.get("avg_power_w"),
        "energy_avg_current_a": en.get("avg_current_a"),
        "energy_per_byte_j": en.get("energy_per_byte_j"),
        "energy_per_bit_j": en.get("energy_per_bit_j"),
        "energy_mj_per_mbit": en.get("mJ_per_Mb"),
        "energy_throughput_mbit_per_s": en.get("throughput_Mbps"),
        "energy_fom": en.get("fom"),
        "energy_flags": _words(en.flags),
        "energy_note": r.get("energy_note"),
        "energy_supplies_json": _json(en.get("supplies") or stats.get("supplies")),
    }


def _parallel_fields(cell: Cell) -> dict:
    """The scaling columns: a scaling result's, else only the process count its parameters name."""
    p = cell.result.parallel if cell.result is not None else {}
    n = p.get("n", cell.params.get("parallel"))
    aci, eci = p.get("aggregate_ci95"), p.get("efficiency_ci95")
    overhead = p.get("overhead_ns")
    return {
        "parallel_n": n,
        "parallel_cpus": _words(p.get("cpus")),
        "parallel_oversubscribed": p.get("oversubscribed"),
        "parallel_pinned": p.get("pinned"),
        "parallel_unit": p.get("unit"),
        "parallel_units_per_op": p.get("units_per_op"),
        "parallel_rounds": p.get("rounds"),
        "parallel_exec_time_s": p.get("exec_time_s"),
        "parallel_overhead_s": overhead / 1e9 if isinstance(overhead, (int, float)) else None,
        "parallel_aggregate_per_s": p.get("aggregate"),
        "parallel_aggregate_ci95_lo_per_s": _at(aci, 0),
        "parallel_aggregate_ci95_hi_per_s": _at(aci, 1),
        "parallel_aggregate_rsd_pct": p.get("aggregate_rsd_pct"),
        "parallel_per_core_per_s": p.get("per_core"),
        "parallel_aggregate_bytes_per_s": p.get("aggregate_Bps"),
        "parallel_per_core_bytes_per_s": p.get("per_core_Bps"),
        "parallel_aggregate_ops_per_s": p.get("aggregate_ops_per_s"),
        "parallel_per_core_ops_per_s": p.get("per_core_ops_per_s"),
        "parallel_efficiency": p.get("efficiency"),
        "parallel_efficiency_ci95_lo": _at(eci, 0),
        "parallel_efficiency_ci95_hi": _at(eci, 1),
        "parallel_flags": _words(p.get("flags")),
    }


def _run_fields(run: Run) -> dict:
    return {"run_id": run.id, "run_label": run.label, "run_created": run.created, "run_finished": run.finished,
            "run_status": run.status, "suite": run.suite, "run_baseline": run.plan.baseline}


def _params_fields(cell: Cell) -> dict:
    out = {"params_json": json.dumps(cell.params.to_dict(), sort_keys=True, ensure_ascii=False)}
    for name, value in cell.params.items():
        out[_param_column(name)] = value
    return out


def _result_fields(r: Result) -> dict:
    """The time, cycle and microcontroller-resource columns of a result."""
    t, cyc, code = r.time_s, r.cycles, r.code_size
    shown = r.reported_time() or (None, (None, None), None)
    return {
        "n": r.n, "k": r.k, "single_shot": r.get("single_shot"), "halved": r.get("halved"),
        "estimate_s": shown[0], "estimator": shown[2], "estimate_lo_s": _at(shown[1], 0),
        "estimate_hi_s": _at(shown[1], 1),
        "median_s": t.get("median"), "mean_s": t.get("mean"), "stdev_s": t.get("stdev"),
        "rsd_pct": t.get("rsd_pct"), "min_s": t.get("min"), "max_s": t.get("max"),
        "ci95_lo_s": _at(t.get("ci95"), 0), "ci95_hi_s": _at(t.get("ci95"), 1),
        "ci_coverage": t.get("ci_coverage"), "outliers": r.get("outliers"), "flags": _words(r.flags),
        "ops_per_s": r.get("ops_per_s"), "throughput_bytes_per_s": r.get("throughput_Bps"),
        "throughput_kb_per_s": r.get("KBps"), "throughput_kib_per_s": r.get("KiBps"),
        "cycles_per_op": cyc.get("per_op_median"), "cycles_per_byte": r.get("cycles_per_byte"),
        "cycle_counter": cyc.get("counter"), "cycle_counter_hz": cyc.get("counter_hz"),
        "cycles_overhead": r.get("cycles_overhead"),
        "sim_instructions_per_op": r.sim.get("instructions_per_op"), "sim_cpi": r.sim.get("cpi"),
        "sim_instructions_per_s": r.sim.get("instructions_per_s"),
        **_band_fields(r.get("error_band")),
        **_engine_band_fields(r.get("engine_band")),
        **_profile_fields(r.get("profile")),
        "stack_bytes": r.stack_bytes, "heap_bytes": r.heap_bytes,
        "code_flash_bytes": code.get("flash_bytes"), "code_ram_bytes": code.get("ram_bytes"),
    }


def _engine_band_fields(band: dict | None) -> dict:
    """The engine band columns of a cell a modelled engine served (all null for any other cell)."""
    if not band:
        return {}
    bad = bool(band.get("unvalidated"))
    return {"engine_band_model": band.get("model"), "engine_band_class": band.get("class"),
            "engine_band_pct": None if bad else band.get("pct"),
            "engine_band_median_ratio": None if bad else band.get("median_ratio"), "engine_band_validated": not bad,
            "engine_band_source": band.get("why") if bad else f"{band.get('against')} ({band.get('source')})"}


def _band_fields(band: dict | None) -> dict:
    """The error band columns of a simulated cell (all null for a cell stored without one)."""
    if not band:
        return {}
    bad = bool(band.get("unvalidated"))
    return {"sim_error_band_class": band.get("class"), "sim_error_band_pct": None if bad else band.get("pct"),
            "sim_error_band_rows": 0 if bad else band.get("rows"), "sim_error_band_validated": not bad,
            "sim_error_band_source": band.get("why") if bad else band.get("source")}


def _profile_fields(profile: dict | None) -> dict:
    """A profiled cell's top function and its whole profile as JSON (null without a profile)."""
    if not profile:
        return {}
    rows = profile.get("rows") or []
    return {"sim_profile_top_function": rows[0]["function"] if rows else None, "sim_profile_json": _json(profile)}


def cell_row(run: Run, cell: Cell, conditions: dict | None = None) -> dict:
    """A cell's row; the columns it has no value for (a cell without a result) are filled with
    null by build_table. `conditions`: a cache of the conditions columns per (engine, target) of
    this run (export_rows keeps one per run: they are the same for all of its cells)."""
    op = OPS.get(cell.op)
    row = _run_fields(run)
    row.update({"cell_seq": cell.seq, "op": cell.op, "op_title": op.title if op else None})
    row.update(_params_fields(cell))
    row.update({"engine": cell.engine, "target": cell.target, "provenance": cell.provenance,
                "status": cell.status, "kat": cell.kat, "detail": cell.detail})
    if cell.result is not None:
        row.update(_result_fields(cell.result))
        row.update(_energy_fields(cell.result))
    row.update(_parallel_fields(cell))
    if conditions is None:
        row.update(_conditions_fields(run, cell))
    else:
        key = (cell.engine, cell.target)
        if key not in conditions:
            conditions[key] = _conditions_fields(run, cell)
        row.update(conditions[key])
    return row


def sample_rows(run: Run, cell: Cell) -> list[dict]:
    samples = cell.samples or []
    if not samples:
        return []
    try:
        per_op = per_op_seconds(cell.op, samples)
    except KeyError:                 # an op this version does not know: no halving to apply
        per_op = [ns / k / 1e9 if k else None for k, ns, _ in samples]
    base = {"run_id": run.id, "run_label": run.label, "op": cell.op}
    base.update(_params_fields(cell))
    base.update({"engine": cell.engine, "target": cell.target, "provenance": cell.provenance})
    return [{**base, "sample": i, "k": s[0], "ns": s[1], "cycles": _at(s, 2), "per_op_s": per_op[i]}
            for i, s in enumerate(samples)]


# --------------------------------------------------------------------------------- typing the table


def _value_kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    return "float" if isinstance(value, float) else "other"


def _param_type(kinds: set[str]) -> str:
    """A param_<name> column's type from the kinds of value it holds (nulls aside)."""
    if kinds == {"bool"}:
        return "bool"
    if kinds == {"int"}:
        return "int64"
    if kinds and kinds <= {"int", "float"}:
        return "float64"
    return "string"


class ParamColumns:
    """The param_<name> columns of an export and their types, learnt from the cells' parameters
    one cell at a time (only the kinds of value seen are kept: an export streams its cells)."""

    def __init__(self, samples: bool = False):
        self.spec = SAMPLE_COLUMNS if samples else CELL_COLUMNS
        self.fixed = {name for name, *_ in self.spec}
        self.kinds: dict[str, set[str]] = {}

    def add(self, params: Mapping) -> None:
        for name, value in params.items():
            col = _param_column(name)
            if col in self.fixed:
                raise UsageError(f"parameter {name!r} would clash with the export column {col}")
            kinds = self.kinds.setdefault(col, set())
            if value is not None:
                kinds.add(_value_kind(value))

    def columns(self) -> list[tuple[str, str]]:
        """Every column of the table as (name, type), the param_<name> ones after params_json."""
        out: list[tuple[str, str]] = []
        for name, typ, *_ in self.spec:
            out.append((name, typ))
            if name == _PARAM_ANCHOR:
                out += [(col, _param_type(kinds)) for col, kinds in sorted(self.kinds.items())]
        return out


def _as_string(value, column: str):
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _as_float(value, column: str):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"column {column}: expected a number, found {value!r}")
    value = float(value)
    return value if math.isfinite(value) else None


def _as_int(value, column: str):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"column {column}: expected an integer, found {value!r}")
    return value


def _as_bool(value, column: str):
    if not isinstance(value, bool):
        raise UsageError(f"column {column}: expected true or false, found {value!r}")
    return value


_COERCE = {"string": _as_string, "float64": _as_float, "int64": _as_int, "bool": _as_bool}


def export_rows(runs_cells: Iterable[tuple[Run, Iterable[Cell]]], columns: list[tuple[str, str]],
                samples: bool = False) -> Iterator[dict]:
    """The table's rows, one at a time, every column typed: (run, its cells) pairs in, so that the
    cells may come straight from the store (Store.iter_cells) and never be held all at once."""
    # each column's converter looked up once, not per value: 100 k cells are 11 M values
    typed = [(name, _COERCE[typ]) for name, typ in columns]
    for run, cells in runs_cells:
        conditions: dict = {}
        for cell in cells:
            for row in (sample_rows(run, cell) if samples else [cell_row(run, cell, conditions)]):
                get = row.get
                yield {name: None if (v := get(name)) is None else conv(v, name) for name, conv in typed}


def build_table(runs: list[Run], samples: bool = False) -> tuple[list[tuple[str, str]], list[dict]]:
    """(columns as (name, type), rows as dicts with every column) for these runs, held whole:
    for a run already loaded (show --format csv); the export command streams (export_rows)."""
    params = ParamColumns(samples)
    for run in runs:
        for cell in run.cells:
            params.add(cell.params)
    columns = params.columns()
    return columns, list(export_rows(((run, run.cells) for run in runs), columns, samples))


# ----------------------------------------------------------------------------------------- writers


def _arrow_schema(columns, metadata: dict):
    import pyarrow as pa
    types = {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string(), "bool": pa.bool_()}
    return pa.schema([pa.field(name, types[typ], nullable=True) for name, typ in columns],
                     metadata={k: v.encode("utf-8") for k, v in metadata.items()})


def require_parquet() -> None:
    """pyarrow (the `parquet` extra), or one line that says how to install it."""
    require("pyarrow", "parquet", "export --format parquet")
    require("pyarrow.parquet", "parquet", "export --format parquet")


def _cell_text(value, typ: str) -> str:
    """A value as the CSV holds it: empty for null, true / false for a bool."""
    if value is None:
        return ""
    return ("true" if value else "false") if typ == "bool" else csv_text(value)


def csv_cells(columns):
    """row -> the row's CSV cells, each exactly as export_table and report.table.Csv write it
    (printable, then spreadsheet_safe), for a streamed export: numbers and booleans need neither
    (a number stays a number in a spreadsheet), so only the text columns pass through them."""

    def text(v):
        return "" if v is None else spreadsheet_safe(printable(v))

    def number(v):
        return "" if v is None else str(v)

    def boolean(v):
        return "" if v is None else "true" if v else "false"

    kinds = {"string": text, "bool": boolean}
    convs = [(name, kinds.get(typ, number)) for name, typ in columns]
    return lambda row: [conv(row[name]) for name, conv in convs]


def export_table(columns, rows, names: list[str] | None = None) -> Table:
    """The rows as a `Table` of these columns (`names`: a subset, in its order; all by default),
    each cell as the CSV writes it, the raw value beside it. `show --format csv` prints a subset
    of this table, so both commands name and write a column alike."""
    types = dict(columns)
    names = [name for name, _ in columns] if names is None else names
    units = {name: unit for name, _, unit, _ in CELL_COLUMNS + SAMPLE_COLUMNS}
    table = Table("cells", [Column(n, LEFT, units.get(n, "")) for n in names])
    for row in rows:
        values = [row[n] for n in names]
        table.add([_cell_text(v, types[n]) for v, n in zip(values, names)], values)
    return table


def metadata(runs: list[Run], samples: bool, columns, cells: Mapping[int, int] | None = None) -> dict:
    """The Parquet file's key-value metadata; `cells`: each run's cell count, where the runs were
    loaded without their cells (an export streams them)."""
    return {
        "cryptobench.format": EXPORT_FORMAT_ID,
        "cryptobench.version": __version__,
        "cryptobench.exported": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cryptobench.rows": "samples" if samples else "cells",
        "cryptobench.runs": json.dumps([
            {"id": r.id, "label": r.label, "created": r.created, "finished": r.finished, "status": r.status,
             "suite": r.suite, "cells": cells[r.id] if cells is not None else len(r.cells)} for r in runs], ensure_ascii=False),
        "cryptobench.core.conditions": json.dumps({str(r.id): r.conditions.to_json() for r in runs}, ensure_ascii=False),
        "cryptobench.units": json.dumps({name: unit for name, _, unit, _ in
                                         (SAMPLE_COLUMNS if samples else CELL_COLUMNS) if unit}),
    }

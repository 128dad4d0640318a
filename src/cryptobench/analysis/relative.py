"""The relative view (the ZHAW IoT study's figure 2): every engine's median time, and energy where both have
one, divided by a chosen baseline engine's, per operation and parameters.

Direction: engine / baseline, as the ZHAW paper divides the secure elements' figures by the
on-chip engine's ("the OPTIGA Trust M takes 2.7 times longer than the SCE9"). ×2.7 = 2.7 times
as long (or as much energy) as the baseline; ×0.5 = half. This is the inverse of the Duration
Improvement t_baseline / t_engine of the comparisons (TI report eq. 1); both come from the same
stored samples and the same seeded percentile bootstrap (stats.ratio_ci), so ×r [lo–hi] here is
1/r [1/hi–1/lo] there.
"""
from __future__ import annotations

import json

from ..catalog.ops import OPS
from ..core.errors import UsageError
from ..stats.results import duration_improvement, per_op_seconds
from ..stats.summary import ratio_ci
from ..core.records import Cell, Energy, Run, outcome, params_key
from ..core.table import Csv, Table, columns, data_table

SCHEMA_NOTE = "engine / baseline (ratio of the printed times, 95 % repeat interval; docs/statistics.md)"


def direction_text(baseline: str) -> str:
    return (f"×r = r times the printed time (energy) of {baseline}: above 1 slower (more energy), "
            f"below 1 faster (less); ratio of the printed times (the estimator the tables print: p1 for a host run "
            f"sampled in rounds, else the median; energy: medians), engine / {baseline}, 95 % interval (time: repeat; energy: bootstrap) "
            "(as the ZHAW IoT study's figure 2: devices relative to the on-chip engine)")


def run_engines(run: Run) -> list[str]:
    """The run's engines: its plan's, then any other that has a cell, in order."""
    names = list(run.plan.options.engines or [])
    for engine in run.engines():
        if engine not in names:
            names.append(engine)
    return names


def check_baseline(run: Run, engine: str, flag: str = "--relative-to") -> str:
    engines = run_engines(run)
    if engine not in engines:
        raise UsageError(f"{flag}: run {run.id} has no engine '{engine}'; its engines: "
                         + (", ".join(engines) or "(none)"))
    return engine


def energy_per_op_samples(op_id: str, en: Energy) -> list[float] | None:
    """Per-operation energies the interval can be bootstrapped from: a host meter's per-window
    figures per op, or a trace's windows (one repetition = one operation each); None otherwise."""
    if en.get("per_op_windows_j"):
        return list(en["per_op_windows_j"])
    if en.get("trace") and en.get("per_window_j"):
        div = 2.0 if OPS[op_id].halve else 1.0
        return [w / div for w in en["per_window_j"]]
    return None


def _times(cell: Cell) -> list[float] | None:
    if cell.samples:
        return per_op_seconds(cell.op, cell.samples)
    return None


def _median_time(cell: Cell) -> float | None:
    """The cell's printed time (its estimate, or the median: Result.reported_time)."""
    got = cell.reported_time()
    return got[0] if got and got[0] > 0 else None


def relative(run: Run, baseline: str) -> dict:
    """Every (op, params, engine ≠ baseline) of the run, relative to the baseline's cell."""
    check_baseline(run, baseline)
    cells: dict[tuple[str, str], dict[str, Cell]] = {}
    for c in run.cells:
        cells.setdefault((c.op, c.params.key), {})[c.engine] = c
    rows = []
    for key, by_engine in cells.items():
        base = by_engine.get(baseline)
        base_state = outcome(base)
        base_time = _median_time(base) if base_state == "ok" else None
        for engine, cell in by_engine.items():
            if engine == baseline:
                continue
            row = {"op": key[0], "params": json.loads(key[1]), "engine": engine, "baseline": baseline,
                   "status": outcome(cell), "time_ratio": None, "time_ci95": None,
                   "energy_ratio": None, "energy_ci95": None}
            if row["status"] != "ok":
                row["detail"] = cell.detail
                rows.append(row)
                continue
            if base_state != "ok" or base_time is None:
                row["status"] = "no-baseline"
                row["detail"] = f"{baseline}: {base_state}" + (f" — {base.detail}" if base and base.detail else "")
                rows.append(row)
                continue
            t_e, t_b = _times(cell), _times(base)
            if t_e and t_b:
                # the Improvement upside down: the same estimator and repeat interval as the tables
                impr, (lo, hi), _ = duration_improvement(base, cell)
                row["time_ratio"], row["time_ci95"] = 1 / impr, [1 / hi, 1 / lo]
            elif _median_time(cell):
                row["time_ratio"] = _median_time(cell) / base_time
            ee, eb = cell.energy, base.energy
            if ee is not None and eb is not None and ee.usable and eb.usable:
                row["energy_ratio"] = ee.per_op_j / eb.per_op_j
                row["energy_provenance"] = ee.get("provenance")      # as stored: None where it names none
                se, sb = energy_per_op_samples(key[0], ee), energy_per_op_samples(key[0], eb)
                if se and sb and all(x > 0 for x in sb):
                    _, ci = ratio_ci(se, sb)
                    row["energy_ci95"] = list(ci)
            rows.append(row)
    return {"baseline": baseline, "direction": SCHEMA_NOTE, "rows": rows}


def fmt_ratio(x: float | None) -> str:
    """Three significant digits, as the ZHAW IoT study's figure 2."""
    if x is None:
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:#.3g}"


def _ratio_text(ratio, ci) -> str:
    if ratio is None:
        return "—"
    text = "×" + fmt_ratio(ratio)
    if ci:
        text += f" [{fmt_ratio(ci[0])}–{fmt_ratio(ci[1])}]"
    return text


WORDS = {"unsupported": "unsupported", "kat-fail": "KAT FAIL", "failed": "failed", "no-baseline": "no baseline",
         "missing": "—"}


def _relative_cells(r: dict | None, energy: bool) -> list[str]:
    """One engine's cells in a row: its time ratio, and its energy ratio where the table has one."""
    if r is None:
        return ["—"] + (["—"] if energy else [])
    if r["status"] != "ok":
        return [WORDS.get(r["status"], r["status"])] + ([""] if energy else [])
    out = [_ratio_text(r["time_ratio"], r["time_ci95"])]
    if energy:
        out.append(_ratio_text(r["energy_ratio"], r["energy_ci95"])
                   + (f" ({r['energy_provenance']})" if r["energy_ratio"] is not None
                      and r.get("energy_provenance") not in (None, "measured") else ""))
    return out


def _relative_table(op_id: str, rows: list[dict], engines: list[str], baseline: str) -> Table:
    op = OPS[op_id]
    pkeys = list(dict.fromkeys(params_key(r["params"]) for r in rows))
    plist = [json.loads(p) for p in pkeys]
    names = list(dict.fromkeys(n for p in plist for n in p))
    varying = [n for n in names if len({str(p.get(n)) for p in plist}) > 1]
    fixed = {n: plist[0].get(n) for n in names if n not in varying}
    shown = [e for e in engines if any(r["engine"] == e and r["status"] != "unsupported" for r in rows)]
    energy = any(r["energy_ratio"] is not None for r in rows)
    labels = list(varying or ["operation"])
    for e in shown:
        labels += [f"{e} time"] + ([f"{e} energy"] if energy else [])
    title = (f"Relative to {baseline}: {op.title}"
             + (" — " + ", ".join(f"{k}={v}" for k, v in fixed.items()) if fixed else ""))
    table = Table(title, columns(labels), key=op_id)
    for pk, p in zip(pkeys, plist):
        line = [str(p[n]) for n in varying] or [op.title]
        for e in shown:
            r = next((r for r in rows if r["engine"] == e and params_key(r["params"]) == pk), None)
            line += _relative_cells(r, energy)
            if r is not None and r["status"] not in ("ok", "unsupported"):
                where = " ".join(f"{n}={p[n]}" for n in varying)
                table.notes.append(f"{e} {where}".strip() + f": {WORDS.get(r['status'], r['status'])}"
                                   + (f" — {r['detail']}" if r.get("detail") else ""))
        table.add(line)
    for e in engines:
        if e not in shown and any(r["engine"] == e for r in rows):
            table.notes.append(f"{e}: unsupported — {next(r.get('detail') for r in rows if r['engine'] == e)}")
    return table


def relative_tables(run: Run, baseline: str, view: dict | None = None) -> list[Table]:
    """One table per operation: a row per parameter set, a column per engine (time, then energy
    where any cell of the op has an energy ratio). `view`: relative(run, baseline) if already made."""
    view = view or relative(run, baseline)
    by_op: dict[str, list[dict]] = {}
    for r in view["rows"]:
        by_op.setdefault(r["op"], []).append(r)
    engines = [e for e in run_engines(run) if e != baseline]
    return [_relative_table(op_id, rows, engines, baseline) for op_id, rows in by_op.items()]


CSV_FIELDS = ["run", "op", "params", "engine", "baseline", "status", "time_ratio", "time_ci95_lo", "time_ci95_hi",
              "energy_ratio", "energy_ci95_lo", "energy_ci95_hi", "detail"]


def csv_table(run: Run, baseline: str) -> Table:
    """The relative view as data: a row per (op, params, engine), the ratios and their intervals."""
    records = []
    for r in relative(run, baseline)["rows"]:
        tci, eci = r["time_ci95"] or [None, None], r["energy_ci95"] or [None, None]
        records.append([run.id, r["op"], params_key(r["params"]), r["engine"], r["baseline"], r["status"],
                        r["time_ratio"], tci[0], tci[1], r["energy_ratio"], eci[0], eci[1], r.get("detail")])
    return data_table(f"Relative to {baseline}", CSV_FIELDS, records)


def render_csv(run: Run, baseline: str) -> str:
    return Csv().render(csv_table(run, baseline))

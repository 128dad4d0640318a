"""The scaling run's tables: the Pisa paper's Tables I–III per (op, params) and engine, a row per
process count N, and Table V's summary (targets/host/parallel.py measures them)."""
from __future__ import annotations

import json

from ..catalog.ops import OPS
from ..core.quantity import fmt_num
from ..core.records import Cell, Result, Run, outcome_text, params_key
from ..core.table import Table, columns
from ..targets.host.parallel import PARAM, op_params, units_per_op
from .failure_text import failure_note


def _table_label(run: Run, op: str, params: dict) -> str:
    for g in run.plan.groups:
        if g.op == op and op_params(g.params) == params:
            return g.table or ""
    return ""


def cells_by_count(run: Run) -> tuple[list[tuple[str, str]], dict]:
    """A scaling run's cells grouped: [(op, params JSON without N)] in plan order, and for each,
    {engine: {N: cell}}."""
    order, cells = [], {}
    for c in run.cells:
        n = c.params.get(PARAM)
        if n is None:
            continue
        key = (c.op, params_key(op_params(c.params)))
        if key not in cells:
            cells[key] = {}
            order.append(key)
        cells[key].setdefault(c.engine, {})[n] = c
    return order, cells


def _efficiency_text(p: dict) -> str:
    eff = p.get("efficiency")
    if eff is None:
        return "—"
    text = f"{eff * 100:.1f}"
    if p.get("efficiency_ci95"):
        lo, hi = p["efficiency_ci95"]
        text += f" [{lo * 100:.1f}–{hi * 100:.1f}]"
    return text


def _energy_cells(r: Result, params: dict, payload: bool, th: float, n: int,
                  notes: list[str]) -> tuple[list[str], float | None]:
    """P, E and FoM of a cell (— where its energy is missing or within the idle noise, said in a
    note), and its FoM for the summary."""
    en = r.energy
    if en is not None and en.usable:
        e_unit = en.per_op_j * 1e3 / (params["bytes"] * 8 / 1e6) if payload else en.per_op_j * 1e3
        power = en.get("avg_power_w")
        fom = th / e_unit if e_unit > 0 else None
        return [fmt_num(power * 1e3) if power is not None else "—", fmt_num(e_unit), fmt_num(fom)], fom
    if en is not None:
        notes.append(f"N={n}: energy {', '.join(en.flags)} (~ = within the idle "
                     "baseline's noise: no P, E or FoM)")
    elif r.get("energy_note"):
        notes.append(f"N={n}: {r['energy_note']}")
    return ["—", "—" if en is None else f"{fmt_num(en.per_op_j * 1e3)}~", "—"], None


def _count_row(c: Cell, n: int, mark: str, params: dict, payload: bool, energy: bool, table: Table,
               sum_row: dict) -> None:
    """The row of one process count N of an engine's table (its notes and summary figures too)."""
    if not c.ok or c.result is None:
        word = outcome_text(c)
        table.add([f"{n}{mark}", "", word] + [""] * (len(table.columns) - 3))
        table.notes.append(f"N={n}: {word} — {failure_note(c.detail)}")
        return
    r = c.result
    p = r.parallel
    scale = 8 / 1e6 if payload else 1.0           # bytes -> Mb, ops stay ops
    th = p["aggregate"] * scale
    row = [f"{n}{mark}", ",".join(map(str, p["cpus"])) + ("" if p.get("pinned", True) else " (unpinned)"),
           f"{p['exec_time_s']:.3g}", fmt_num(p["units_total"] * scale), fmt_num(th), fmt_num(th / n),
           _efficiency_text(p)]
    if energy:
        cells, fom = _energy_cells(r, params, payload, th, n, table.notes)
        row += cells
        if fom is not None:
            sum_row["fom"][n] = fom
    table.add(row)
    sum_row["th"][n] = th
    pflags = [f for f in p.get("flags", []) if f != "oversubscribed"]
    if r.flags or pflags:
        table.notes.append(f"N={n}: " + ", ".join(r.flags + pflags))
    if "oversubscribed" in p.get("flags", []):
        table.notes.append(f"† N={n}: oversubscribed — {n} processes on {len(p['available_cpus'])} CPU(s), "
                           f"assigned round-robin ({','.join(map(str, p['cpus']))}); throughput cannot "
                           "scale past the CPU count")


def _engine_table(run: Run, op_id: str, params: dict, engine: str, by_n: dict, ncpu: int) -> tuple[Table, dict]:
    """The Pisa paper's table of one (op, params) and engine: a row per process count N; and its row
    of the summary {op, engine, unit, th: {N: TH}, fom: {N: FoM}}."""
    op = OPS[op_id]
    payload = units_per_op(op_id, params)[0] == "bytes"
    d_col, th_col, e_col = (("D (Mb)", "TH (Mbps)", "E (mJ/Mb)") if payload else ("D (Op)", "TH (Op/s)", "E (mJ/Op)"))
    energy = any(c.energy is not None for c in by_n.values() if c.ok)
    labels = ["cores", "CPUs", "Exec. time (s)", d_col, th_col, th_col.replace("TH", "TH/core"),
              "efficiency %"] + (["P (mW)", e_col, "FoM"] if energy else [])
    label = _table_label(run, op_id, params)
    fixed = ", ".join(f"{k}={v}" for k, v in params.items())
    title = " ".join(x for x in [label, "—" if label else "", op.title,
                                 f"— {fixed}" if fixed else "", f"— {engine}"] if x)
    table = Table(title, columns(labels), key=op_id)
    sum_row = {"op": op.title + (f" ({fixed})" if fixed else ""), "engine": engine,
               "unit": th_col[th_col.index("(") + 1:-1], "th": {}, "fom": {}, "energy": energy}
    for n in sorted(by_n):
        _count_row(by_n[n], n, " †" if n > ncpu > 0 else "", params, payload, energy, table, sum_row)
    table.notes += load_notes(by_n, sum_row["th"], ncpu)
    return table, sum_row


def load_notes(by_n: dict, th: dict, ncpu: int) -> list[str]:
    """A note per process count N whose throughput fell below the previous N's, or that started while
    other work held at least the CPUs left free (ncpu - N, at least 1): the 1-minute load average at
    its start less the previous N's own processes (the average still holds them). It names the load,
    since a busy machine, not the engine, is then the likely cause."""
    out, prev = [], None
    for n in sorted(th):
        p = by_n[n].result.parallel if by_n[n].result is not None else {}
        load = p.get("load_avg") or {}
        start, end = load.get("start"), load.get("end")
        dropped = prev is not None and th[n] < th[prev]
        busy = isinstance(start, (int, float)) and start - (prev or 0) >= max(ncpu - n, 1)
        if dropped or busy:
            said = (f"load average {start} at its start, {end} at its end, on {ncpu} CPU(s)"
                    if isinstance(start, (int, float)) else "no load average recorded")
            what = f"throughput below N={prev}'s" if dropped else "started on a busy machine"
            out.append(f"N={n}: {what}; {said}" + (": other work took CPUs from the N processes (rerun on an idle "
                                                   "machine)" if busy else ""))
        prev = n
    return out


def _summary_table(summary: list[dict], counts: list[int]) -> Table:
    """The Pisa paper's Table V layout: per op and engine, TH (and FoM) per number of cores."""
    energy_any = any(s["energy"] for s in summary)
    labels = ["operation", "engine", "unit"] + [f"TH {n} core{'s' if n > 1 else ''}" for n in counts]
    if energy_any:
        labels += [f"FoM {n} core{'s' if n > 1 else ''}" for n in counts]
    title = ("Scaling summary (the Pisa paper's Table V layout): aggregate throughput"
             + (" and FoM = TH / E" if energy_any else "") + " per number of cores")
    table = Table(title, columns(labels), key="summary")
    for s in summary:
        row = [s["op"], s["engine"], s["unit"]] + [fmt_num(s["th"].get(n)) for n in counts]
        table.add(row + ([fmt_num(s["fom"].get(n)) for n in counts] if energy_any else []))
    return table


def scaling_tables(run: Run) -> list[Table]:
    """Per (op, params) and engine, a row per process count N: the Pisa paper's columns (Exec. time, D, TH,
    P, E) plus throughput per core, parallel efficiency and FoM = TH / E; then Table V's summary."""
    order, cells = cells_by_count(run)
    opts = run.plan.options
    engines = opts.engines
    counts = opts.parallel or []
    ncpu = len(opts.parallel_cpus or [])
    tables, summary = [], []
    for op_id, pk in order:
        for engine in [e for e in engines if e in cells[(op_id, pk)]]:
            table, sum_row = _engine_table(run, op_id, json.loads(pk), engine, cells[(op_id, pk)][engine], ncpu)
            tables.append(table)
            summary.append(sum_row)
    if summary and len(counts) > 1:
        tables.append(_summary_table(summary, counts))
    return tables


def conditions_line(run: Run) -> str:
    opts = run.plan.options
    cpus = opts.parallel_cpus or []
    return (f"scaling: N = {', '.join(map(str, opts.parallel or []))} harness processes per engine, each pinned "
            f"to its own CPU of {len(cpus)} available ({','.join(map(str, cpus))}; † = oversubscribed, wrapped "
            "round-robin); engines measured one after the other. TH = median over rounds of Σ data of the N "
            "concurrent batches / wall time, the wall time taken by the orchestrator (time.perf_counter_ns from "
            "the first request to the last reply; every batch ≥ --min-time) · TH/core = TH / N · efficiency = "
            "TH_N / (N · TH_1) [95 % bootstrap] · Exec. time and D = totals of the kept rounds · Mb = 10⁶ bit")

"""A microcontroller run's tables: per operation the cost at the device's clock (time, cycles,
cycles/byte, kB/s, a simulated cell's instructions, CPI and error band, energy) per library with the Duration Improvement over the run's baseline
library, then the footprint (stack, heap, flash, RAM) per library, which does not change along a
length sweep and so gets a row per library rather than a column per length; a run with per-function
profiles (`run --profile`) then gets each cell's top functions. A run that sweeps
the length also gets the Cifra post's table at 256 B."""
from __future__ import annotations

from ..catalog.ops import OPS
from ..core.quantity import fmt_num, pick_unit
from ..core.records import Cell, Energy, Result, outcome_text
from ..core.table import LEFT, Column, Table, columns
from .verdicts import improvement_text
from ..targets.mcu import sim


def ok_results(cells: list[Cell]) -> list[Result]:
    """The results of the cells that are ok and have one."""
    return [c.result for c in cells if c.ok and c.result is not None]


def energy_rsd(energy: Energy | None) -> float | None:
    """RSD of the energy per operation over windows (trace or host meter), when measured so."""
    if energy is None or not isinstance(energy.stats, dict):
        return None
    st = energy.stats
    return (st.get("energy_j") or st).get("rsd_pct")


def _metrics(cells: list[Cell], unit: str) -> list[tuple[str, str]]:
    """(label, unit) of the figures an engine gets, those the run has: a functional run (QEMU)
    has no times, a run without lengths no per-byte figures, a simulated one no spread."""
    results = ok_results(cells)
    timed = any(r.time_s for r in results)
    sized = any((c.params.get("bytes") or 0) > 0 for c in cells)
    out = []
    if timed:
        out += [(f"time ({unit})", unit), ("cycles", "cycles")]
        out += [("c/B", "cycles/B"), ("kB/s", "kB/s")] if sized else []
        out += [("RSD %", "%")] if any(r.time_s.get("rsd_pct") for r in results) else []
        out += [("insns", "instructions"), ("CPI", "cycles/instruction")] if any(r.sim for r in results) else []
        out += [("band", "±%")] if any(r.get("error_band") for r in results) else []   # stored since the bands
        # a modelled engine's band against published hardware, and the ratio its model reads at
        out += [("engine band", "±% (modeled/published)")] if any(r.get("engine_band") for r in results) else []
    if any(r.energy is not None for r in results):
        out.append(("µJ", "µJ"))
        out += [("µJ RSD %", "%")] if any(energy_rsd(r.energy) is not None for r in results) else []
    return out


def _metric_text(cell: Cell, label: str, scale: float) -> str:
    r = cell.result
    nbytes = cell.params.get("bytes") or 0
    if label.startswith("time"):
        return fmt_num(r.time_s["median"] * scale)
    if label == "cycles":
        return fmt_num(r.cycles.get("per_op_median"))
    if label == "c/B":
        cyc = r.cycles.get("per_op_median")
        return fmt_num(cyc / nbytes) if cyc and nbytes else "—"
    if label == "kB/s":
        return fmt_num(nbytes / r.time_s["median"] / 1e3) if nbytes and r.time_s.get("median") else "—"
    if label == "insns":
        return fmt_num(r.sim.get("instructions_per_op")) if r.sim.get("instructions_per_op") else "—"
    if label == "CPI":
        return f"{r.sim['cpi']:.3f}" if r.sim.get("cpi") else "—"
    if label == "band":
        return sim.band_short(r.get("error_band")) or "—"
    if label == "engine band":
        return sim.engine_band_short(r.get("engine_band")) or "—"
    if label == "RSD %":
        return f"{r.time_s['rsd_pct']:.1f}"
    if label == "µJ":
        return fmt_num(r.energy.per_op_j * 1e6) if r.energy is not None else "—"
    rsd = energy_rsd(r.energy)
    return f"{rsd:.1f}" if rsd is not None else ""


def cost_table(title: str, key: str, varying: list[str], rows: list[tuple[str, dict]], cells: list[Cell],
               shown: list[str], impr_engines: list[str], comps: dict, op_title: str) -> Table:
    """Per parameter set (rows of (params key, params)), each shown engine's figures, then the
    Improvement of each of `impr_engines` over the baseline."""
    unit, scale = pick_unit([c.result.time_s["median"] for c in cells if c.ok and c.result.time_s])
    metrics = _metrics(cells, unit)
    cols = [Column(n, LEFT) for n in varying or ["operation"]]
    for e in shown:
        cols += [Column(f"{e} {label}" if i == 0 else label, unit=u, group=e) for i, (label, u) in enumerate(metrics)]
        if not metrics:                    # functional run: what became of the cell
            cols.append(Column(e, group=e))
    cols += [Column(f"Impr. {e}", group="Impr.") for e in impr_engines]
    table = Table(title, cols, key=key)
    for pk, p in rows:
        row = [str(p[n]) for n in varying] or [op_title]
        for e in shown:
            cell = next((c for c in cells if c.engine == e and c.params.key == pk), None)
            width = max(1, len(metrics))
            if cell is None:
                row += ["—"] * width
            elif not cell.ok:
                row += [outcome_text(cell)] + [""] * (width - 1)
            elif not metrics:
                row.append("ok")
            else:
                row += [_metric_text(cell, label, scale) for label, _ in metrics]
        for e in impr_engines:
            row.append(improvement_text(comps.get((key, pk, e))))
        table.add(row)
    return table


def _span(values: list[int | None]) -> str:
    """A size along a sweep: one value, or its least and greatest."""
    got = sorted({v for v in values if v is not None})
    if not got:
        return ""
    return str(got[0]) if len(got) == 1 else f"{got[0]}–{got[-1]}"


def footprint_table(title: str, key: str, fixed_names: list[str], cells: list[Cell], shown: list[str]) -> Table | None:
    """Stack, heap, flash and RAM per library (and per value of `fixed_names`, the parameters
    other than the length that vary, such as key_bits): sizes along a length sweep as a span."""
    ok = [c for c in cells if c.ok and c.result is not None and c.engine in shown]
    if not ok:
        return None
    heap = any(c.result.heap_bytes for c in ok)
    labels = ["library"] + fixed_names + ["stack B"] + (["heap B"] if heap else []) + ["flash B", "RAM B"]
    table = Table(f"{title}: footprint", columns(labels, left=1 + len(fixed_names),
                                                 units=[""] * (1 + len(fixed_names)) + ["B"] * (len(labels) - 1 - len(fixed_names))),
                  key=key)
    groups: dict[tuple, list[Cell]] = {}
    for c in ok:
        groups.setdefault((c.engine, *(str(c.params.get(n)) for n in fixed_names)), []).append(c)
    for (engine, *fixed), group in groups.items():
        rs = [c.result for c in group]
        table.add([engine, *fixed, _span([r.stack_bytes for r in rs])] + ([_span([r.heap_bytes for r in rs])] if heap else [])
                  + [_span([r.code_size.get("flash_bytes") for r in rs]), _span([r.code_size.get("ram_bytes") for r in rs])])
    return table


PROFILE_TOP = 5               # functions shown per cell; the stored profile has them all


def profile_table(title: str, key: str, varying: list[str], cells: list[Cell], shown: list[str]) -> Table | None:
    """Each profiled cell's PROFILE_TOP functions by cycles in its median timed repetition
    (sim_reading.sim_profiles): cycles, their share of the window, instructions and calls."""
    got = [c for c in cells if c.ok and c.result is not None and c.engine in shown and c.result.get("profile")]
    if not got:
        return None
    labels = ["library"] + varying + ["function", "cycles", "%", "insns", "calls"]
    table = Table(f"{title}: top functions (simulated, per timed window)",
                  columns(labels, left=2 + len(varying), units=[""] * (2 + len(varying)) + ["cycles", "%", "", ""]),
                  key=key)
    for c in got:
        prof = c.result.get("profile")
        total = prof.get("cycles") or 0
        for row in prof["rows"][:PROFILE_TOP]:
            share = f"{100.0 * row['cycles'] / total:.1f}" if total else "—"
            table.add([c.engine, *(str(c.params.get(n)) for n in varying), row["function"], f"{row['cycles']:,}",
                       share, f"{row['instructions']:,}", f"{row['calls']:,}"])
    table.notes = ["per function: the cycles of the cell's median timed repetition given to the ELF function symbol "
                   "holding the PC (a halved op's window holds both sides); the stored profile lists every function"]
    return table


def summary_at(cells: list[Cell], nbytes: int) -> Table | None:
    """The Cifra post's table: per AEAD and library at one message length, cycles (where timed),
    cycles per byte, stack and code size. Only for runs that sweep the length."""
    at = [c for c in cells if c.params.get("bytes") == nbytes and c.ok]
    swept = len({c.params.get("bytes") for c in cells}) > 1
    if not at or not swept:
        return None
    timed = any(r.time_s for r in ok_results(at))
    labels = ["operation", "library"] + (["cycles", "cycles/byte"] if timed else []) + ["stack B", "flash B"]
    table = Table(f"At {nbytes} B (the Cifra table): per operation and library", columns(labels, left=2), key="summary")
    for c in sorted(at, key=lambda c: (c.op, c.params.get("key_bits") or 0, c.engine)):
        r = c.result
        name = OPS[c.op].title.split(" encrypt")[0]
        if c.params.get("key_bits") and c.op.startswith("aes-"):
            name = name.replace("AES-", f"AES-{c.params['key_bits']}-")
        row = [name, c.engine]
        if timed:
            cyc = r.cycles.get("per_op_median")
            row += [fmt_num(cyc) if cyc else "—", f"{cyc / nbytes:.1f}" if cyc else "—"]
        table.add(row + ["" if r.stack_bytes is None else str(r.stack_bytes), str(r.code_size["flash_bytes"])])
    return table

"""`cryptobench compare RUN --reference NAME`: the user's stored results beside a study's published
ones (references/data/NAME.toml), joined on operation and parameters, in common units, with the
ratio yours / published and, where both sides give a clock, per-cycle figures. Published rows
with no matching cell, and cells with no published row, are listed, never hidden."""
from __future__ import annotations


from .catalog import OPS
from .records import Cell, Result, Run
from .references import Reference, Row
from .quantity import fmt_num
from .report.table import Column, Table, columns


def _energy(r: Result, name: str):
    """A field of the result's energy figure; None where it has none."""
    en = r.energy
    return en.get(name) if en is not None else None


# metric -> (how to read the user's cell's result, the canonical unit shown)
USER_VALUE = {
    "duration": (lambda r: r.time_s.get("median"), "s"),
    "execution_time": (lambda r: r.time_s.get("median"), "s"),
    "throughput": (lambda r: r.get("throughput_Bps"), "B/s"),
    "ops_per_s": (lambda r: r.get("ops_per_s"), "op/s"),
    "cycles": (lambda r: r.cycles.get("per_op_median"), "cycles"),
    "cycles_per_byte": (lambda r: r.get("cycles_per_byte"), "cycles/B"),
    "energy": (lambda r: _energy(r, "per_op_j"), "J"),
    "energy_per_bit": (lambda r: _energy(r, "mJ_per_Mb"), "mJ/Mb"),
    "fom": (lambda r: _energy(r, "fom"), "Mbps/(mJ/Mb)"),
    "power": (lambda r: _energy(r, "avg_power_w"), "W"),
    "average_current": (lambda r: _energy(r, "avg_current_a"), "A"),
    "stack": (lambda r: r.stack_bytes, "B"),
    "code_size": (lambda r: r.code_size.get("flash_bytes"), "B"),
    "rsd": (lambda r: r.time_s.get("rsd_pct"), "%"),
}


def _matches(row: Row, cell: Cell) -> bool:
    if cell.op != row.op or not cell.ok:
        return False
    return all(str(cell.params.get(k)) == str(row.params.get(k)) for k in row.given)


def run_clock_hz(run: Run) -> float | None:
    """The clock the run's cycles count: an MCU target's core clock (simulated or the board's);
    None on the host, whose TSC counts reference cycles, not the core's."""
    t = run.conditions.target
    if t and t.get("kind") in ("sim", "board"):
        return float(t.get("clock_hz") or 0) or None
    return None


def compare(run: Run, ref: Reference, against: str | None = None) -> dict:
    engines = list(dict.fromkeys(c.engine for c in run.cells if c.ok))
    comparable = [r for r in ref.rows if r.op is not None and r.metric in USER_VALUE]
    clock = run_clock_hz(run)
    groups: dict[tuple, dict] = {}
    unmatched, used = [], set()
    for row in comparable:
        pub = row.canonical
        cells = [c for c in run.cells if _matches(row, c)]
        if not cells or pub is None:
            unmatched.append(row)
            continue
        key = (row.table, row.op, tuple(sorted(row.given.items())), row.metric)
        g = groups.setdefault(key, {"table": row.table, "op": row.op, "params": dict(row.given), "metric": row.metric,
                                    "unit": USER_VALUE[row.metric][1], "published": {}, "yours": {},
                                    "published_cycles": {}, "your_cycles": {}, "labels": []})
        g["labels"].append(row.label)
        g["published"][row.source.id] = pub
        if row.metric in ("duration", "execution_time") and row.source.clock_hz:
            g["published_cycles"][row.source.id] = pub * row.source.clock_hz
        for c in cells:
            used.add(id(c))
            v = USER_VALUE[row.metric][0](c.result) if c.result is not None else None
            if v is not None:
                g["yours"][c.engine] = float(v)
                if row.metric in ("duration", "execution_time") and clock:
                    g["your_cycles"][c.engine] = float(v) * clock
    sources = list(dict.fromkeys(sid for g in groups.values() for sid in g["published"]))
    against = against or next((s.id for s in ref.sources.values() if s.engine_kind == "sw library" and s.id in sources),
                              sources[0] if sources else None)
    for g in groups.values():
        base = g["published"].get(against)
        g["ratio"] = {e: (v / base if base else None) for e, v in g["yours"].items()}
        cb = g["published_cycles"].get(against)
        g["cycle_ratio"] = {e: (v / cb if cb else None) for e, v in g["your_cycles"].items()}
    extra = [c for c in run.cells if c.ok and id(c) not in used]
    return {"reference": {"name": ref.name, "title": ref.title, "document": ref.document, "provenance": "published",
                          "sources": {s.id: vars(s) for s in ref.sources.values()}},
            "run": run.id, "engines": engines, "sources": sources, "against": against, "clock_hz": clock,
            "groups": list(groups.values()),
            "unmatched_published": [{"table": r.table, "label": r.label, "op": r.op, "metric": r.metric,
                                     "why": "no ok cell of this run has this operation and parameters"
                                     if r.canonical is not None else f"unit {r.unit} not convertible"}
                                    for r in unmatched],
            "not_comparable": [{"table": r.table, "label": r.label, "metric": r.metric}
                               for r in ref.rows if r not in comparable],
            "unmatched_yours": [{"op": c.op, "params": c.params.to_dict(), "engine": c.engine} for c in extra]}


def _scale(unit: str, values: list[float]) -> tuple[str, float]:
    """A readable unit for a column of canonical values."""
    if unit == "s":
        vs = sorted(v for v in values if v)
        m = vs[len(vs) // 2] if vs else 1.0
        for name, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
            if m >= f:
                return name, f
        return "ns", 1e-9
    if unit == "B/s":
        return "KB/s", 1e3
    if unit == "J":
        return "µJ", 1e-6
    if unit == "A":
        return "mA", 1e-3
    if unit == "W":
        return "mW", 1e-3
    return unit, 1.0


def _group_table(doc: dict, table: str, metric: str, gs: list[dict]) -> Table:
    """One reference table's metric: a row per op and parameters; published, yours, yours / the
    `against` source, and cycles where both sides have a clock."""
    unit, f = _scale(gs[0]["unit"], [v for g in gs for v in list(g["published"].values()) + list(g["yours"].values())])
    sources = [s for s in doc["sources"] if any(s in g["published"] for g in gs)]
    engines = [e for e in doc["engines"] if any(e in g["yours"] for g in gs)]
    cyc = any(g["published_cycles"] for g in gs) and any(g["your_cycles"] for g in gs)
    cols = columns(["operation", "parameters"], left=2)
    cols += [Column(f"published {s} ({unit})", unit=unit) for s in sources] + \
        [Column(f"{e} ({unit})", unit=unit) for e in engines] + [Column(f"{e} / {doc['against']}") for e in engines]
    if cyc:
        cols += [Column(f"{who} cycles", unit="cycles") for who in [f"published {s}" for s in sources] + engines]
    out = Table(f"{table} — {metric.replace('_', ' ')}", cols, key=metric)
    for g in gs:
        row = [OPS[g["op"]].title, " ".join(f"{k}={v}" for k, v in g["params"].items())]
        row += [fmt_num(g["published"][s] / f) if s in g["published"] else "—" for s in sources]
        row += [fmt_num(g["yours"][e] / f) if e in g["yours"] else "—" for e in engines]
        row += [f"{g['ratio'][e]:.3g}" if g["ratio"].get(e) else "—" for e in engines]
        if cyc:
            row += [fmt_num(g["published_cycles"][s]) if s in g["published_cycles"] else "—" for s in sources]
            row += [fmt_num(g["your_cycles"][e]) if e in g["your_cycles"] else "—" for e in engines]
        out.add(row)
    return out


def tables(doc: dict) -> list[Table]:
    """Printable tables: one per (reference table, metric), a row per op and parameters."""
    by: dict[tuple, list[dict]] = {}
    for g in doc["groups"]:
        by.setdefault((g["table"], g["metric"]), []).append(g)
    return [_group_table(doc, table, metric, gs) for (table, metric), gs in by.items()]


def text_lines(doc: dict) -> list[str]:
    ref = doc["reference"]
    lines = [f"run {doc['run']} (yours: measured/simulated as stored) beside {ref['name']}: {ref['document']} "
             f"(provenance: published)",
             f"ratio = yours / published {doc['against']} "
             f"({ref['sources'][doc['against']]['engine']} on {ref['sources'][doc['against']]['device']})"
             if doc["against"] else "no published value matched"]
    for s in ref["sources"].values():
        clock = f" @ {s['clock_hz'] / 1e6:g} MHz" if s.get("clock_hz") else ""
        lines.append(f"  published {s['id']}: {s['engine']} ({s['engine_kind']}) on {s['device']}{clock}"
                     + (f" · {s['library']}" if s.get("library") else "") + (f" · {s['compiler']}" if s.get("compiler") else ""))
    if doc["clock_hz"]:
        lines.append(f"  yours: cycles at the target's {doc['clock_hz'] / 1e6:g} MHz")
    return lines


def unmatched_lines(doc: dict) -> list[str]:
    out = []
    if doc["unmatched_published"]:
        out.append(f"published rows with no matching result in run {doc['run']} ({len(doc['unmatched_published'])}):")
        out += [f"  {u['table']} · {u['label']} ({u['metric']}): {u['why']}" for u in doc["unmatched_published"]]
    if doc["not_comparable"]:
        out.append(f"published rows not comparable with a run (derived ratios, models, …): {len(doc['not_comparable'])} "
                   "(see the reference file)")
    if doc["unmatched_yours"]:
        out.append(f"results of run {doc['run']} with no published row ({len(doc['unmatched_yours'])}):")
        out += [f"  {u['op']} {' '.join(f'{k}={v}' for k, v in u['params'].items())} [{u['engine']}]"
                for u in doc["unmatched_yours"]]
    return out

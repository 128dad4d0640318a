"""The `pqc-migration` layout: what moving a protocol party from ECDH / ECDSA to ML-KEM / ML-DSA costs
on this run's target (analysis/migration.py pairs the roles): a table of ratios (post-quantum over
classical: × time, stack, code size, energy and bytes sent), then the costs behind them."""
from __future__ import annotations

from ...analysis.migration import WIRE_SOURCES, Cost, costs, pairs
from ...core.quantity import fmt_num
from ...core.records import Run
from ...core.table import LEFT, Column, Table
from .common import core_clock_hz, cycles_word, is_qemu, provenance_word


def _times(run: Run) -> tuple[str, str, float]:
    """(column label, unit, scale from a Cost's field) for the run's time: cycles on a clocked MCU
    target, else microseconds."""
    if core_clock_hz(run):
        return "Cycles", "cycles", 1.0
    return "Time (µs)", "µs", 1e6


def _time_of(run: Run, cost: Cost) -> float | None:
    if core_clock_hz(run):
        return cost.cycles
    return cost.seconds * 1e6 if cost.seconds is not None else None


def _x(v: float | None) -> tuple[str, float | None]:
    if v is None:
        return "—", None
    return (f"×{v:.1f}" if v >= 10 else f"×{v:.2f}"), v


def _ratio_table(run: Run, found: list) -> Table:
    timed = not is_qemu(run)
    stack = any(p.pq.stack_bytes is not None for p in found)
    code = any(p.pq.code_bytes is not None for p in found)
    energy = any(p.pq.energy_j is not None and p.classical.energy_j is not None for p in found)
    labels = ["Role", "Post-quantum", "Classical"] + (["× time"] if timed else []) + (["× stack"] if stack else []) \
        + (["× code size"] if code else []) + (["× energy"] if energy else []) + ["× bytes sent"]
    cols = [Column(l, LEFT if i < 3 else "right", "" if i < 3 else "ratio") for i, l in enumerate(labels)]
    table = Table("What the migration costs: post-quantum / classical, per protocol party", cols,
                  key="pqc-migration-ratios")
    for p in found:
        row = {"Role": (p.role, None), "Post-quantum": (f"{p.pq.scheme} ({p.pq.engine})", None),
               "Classical": (f"{p.classical.scheme} ({p.classical.engine})", None)}
        tp, tc = _time_of(run, p.pq), _time_of(run, p.classical)
        row["× time"] = _x(tp / tc if tp is not None and tc else None)
        row["× stack"] = _x(p.ratio("stack_bytes"))
        row["× code size"] = _x(p.ratio("code_bytes"))
        row["× energy"] = _x(p.ratio("energy_j"))
        row["× bytes sent"] = _x(p.ratio("wire_bytes")) if p.classical.wire_bytes else ("—", None)
        table.add([row[l][0] for l in labels], [row[l][1] for l in labels])
    return table


def _count(v) -> str:
    return "—" if v is None else f"{int(v):,}"


def _cost_table(run: Run, found: list) -> Table:
    label, unit, _ = _times(run)
    seen: dict[tuple[str, str, str], Cost] = {}
    for p in found:
        for c in (p.pq, p.classical):
            seen.setdefault((c.role, c.scheme, c.engine), c)
    has = {"Stack (B)": any(c.stack_bytes is not None for c in seen.values()),
           "Code size (B)": any(c.code_bytes is not None for c in seen.values()),
           "Energy (µJ)": any(c.energy_j is not None for c in seen.values())}
    labels = ["Role", "Scheme", "Engine"] + ([label] if not is_qemu(run) else []) \
        + [l for l in ("Stack (B)", "Code size (B)", "Energy (µJ)") if has[l]] + ["Bytes sent"]
    units = {label: unit, "Stack (B)": "B", "Code size (B)": "B", "Energy (µJ)": "µJ", "Bytes sent": "B"}
    cols = [Column(l, LEFT if i < 3 else "right", units.get(l, "")) for i, l in enumerate(labels)]
    table = Table("The costs behind the ratios (one party's operations, summed)", cols, key="pqc-migration-costs")
    for c in seen.values():
        t = _time_of(run, c)
        e = c.energy_j * 1e6 if c.energy_j is not None else None
        row = {"Role": c.role, "Scheme": c.scheme, "Engine": c.engine, label: fmt_num(t),
               "Stack (B)": _count(c.stack_bytes), "Code size (B)": _count(c.code_bytes), "Energy (µJ)": fmt_num(e),
               "Bytes sent": _count(c.wire_bytes)}
        values = {label: t, "Stack (B)": c.stack_bytes, "Code size (B)": c.code_bytes, "Energy (µJ)": e,
                  "Bytes sent": c.wire_bytes}
        table.add([row[l] for l in labels], [values.get(l) for l in labels])
    return table


def _notes(run: Run, found: list) -> list[str]:
    notes = ["roles: key exchange initiator = ML-KEM keygen + decaps vs ECDH keygen + shared secret; responder = "
             "ML-KEM encaps vs ECDH keygen + shared secret; signature key pair / sign / verify one op each (ECDSA signs "
             "a SHA-256 digest, ML-DSA its message: docs/pqc.md)",
             "time and energy add over a role's operations; stack and code size are the largest of its operations' "
             "(each image holds one operation: code size is a lower bound for a firmware holding them all)",
             WIRE_SOURCES]
    stand_ins: dict[tuple[str, ...], list[str]] = {}
    for p in found:
        if p.classical.stand_in and p.classical.engine not in stand_ins.setdefault(p.classical.stand_in, []):
            stand_ins[p.classical.stand_in].append(p.classical.engine)
    for ops, engines in stand_ins.items():
        notes.append(f"{', '.join(ops)} stands in for the classical key pair on {', '.join(engines)} (no ecc-keygen "
                     "there; the same computation: a random scalar and its point)")
    if is_qemu(run):
        notes.append("QEMU runs are functional: no time ratios (use sim:CORE or a board)")
    elif core_clock_hz(run):
        notes.append(f"time: {cycles_word(run)} ({provenance_word(run)})")
    else:
        notes.append(f"time: the reported estimate per operation ({provenance_word(run)})")
    if not any(p.pq.stack_bytes is not None for p in found):
        notes.append("stack and code size are left out: only microcontroller targets paint the stack and size images")
    if not any(p.pq.energy_j is not None and p.classical.energy_j is not None for p in found):
        notes.append("energy is left out: no usable energy figure on both sides (run --energy, or a target that models it)")
    return notes


def tables(run: Run) -> list[Table]:
    """The ratio table (with its notes) and the costs table; nothing when the run has no complete pair."""
    found = pairs(costs(run))
    if not found:
        return []
    ratios = _ratio_table(run, found)
    ratios.notes = _notes(run, found)
    return [ratios, _cost_table(run, found)]

"""The ZHAW IoT white paper's tables: Table 3 (random and hash, 32…1024 B) and Table 4 (key
generation, sign, verify) with per engine the median Time [s] and Energy [J] to 3 significant digits
(its scientific notation, * where a value is too short to measure well); Tables 5 and 6, the time and
energy measurements with the highest RSD after excluding the justified outliers; Tables 7 and 8, the
same after excluding the same tests for every engine; Table 9, the repetitions."""
from __future__ import annotations

from collections import Counter

from ...core.quantity import fmt_sci, fmt_sig
from ...core.records import Cell, Run
from ...core.table import LEFT, Column, Table
from ..mcu_tables import energy_rsd
from ..failure_text import failure_note
from .common import engine_order, find, grouped, is_qemu, provenance_word, rows_of, word
from ...catalog.ops import OPS

TOP = 3                      # the paper lists the three highest RSDs per device
TABLE_OF = {"random": "Table 3", "sha256": "Table 3", "ecc-keygen": "Table 4", "ecdsa-sign": "Table 4",
            "ecdsa-verify": "Table 4", "rsa-keygen": "Table 4", "rsa-sign": "Table 4", "rsa-verify": "Table 4"}
APPROX_FLAG = "near-timer-resolution"     # our "less than 20 sampling periods of the power analyzer"
OPERATION = {"ecc-keygen": "Key Gen.", "rsa-keygen": "Key Gen.", "ecdsa-sign": "Sign", "rsa-sign": "Sign",
             "ecdsa-verify": "Verify", "rsa-verify": "Verify"}


def primitive(op: str, params: dict) -> str:
    """The paper's Primitive column: Random, Hash, ECDSA, RSA1024, RSA2048."""
    if op == "random":
        return "Random"
    if op.startswith("sha"):
        return "Hash" if op == "sha256" else op.upper()
    if op.startswith("rsa"):
        return f"RSA{params.get('rsa_bits', '')}"
    if op.startswith(("ecdsa", "ecc")):
        return "ECDSA" if params.get("curve", "p256") == "p256" else f"ECDSA {params['curve'].upper()}"
    return OPS[op].title


def test_name(op: str, params: dict) -> str:
    """A test as the paper's Tables 5-8 name it: 'Random 128 Bytes', 'ECDSA Verify', 'ECC Key Gen.'."""
    if op in ("random",) or op.startswith("sha"):
        return f"{primitive(op, params)} {params.get('bytes')} Bytes"
    if op == "ecc-keygen":
        return "ECC Key Gen."
    return f"{primitive(op, params)} {OPERATION.get(op, op)}"


def _time_text(cell: Cell | None) -> tuple[str, float | None]:
    w = word(cell)
    if w:
        return w, None
    r = cell.result
    med = r.time_s.get("median")
    return (fmt_sci(med) + ("*" if APPROX_FLAG in r.flags else "")) if med is not None else "—", med


def _energy_text(cell: Cell | None) -> tuple[str, float | None]:
    if word(cell) or cell.energy is None:
        return "—", None
    en = cell.energy
    approx = "*" if (en.stats.get("approximate") or "not-above-idle" in en.flags) else ""
    return fmt_sci(en.per_op_j) + approx, en.per_op_j


def _row_order(row: tuple[str, str, dict]) -> tuple:
    """Table 4's order: ECDSA, then RSA by key size; in each, Key Gen., Sign, Verify."""
    op, _, p = row
    prim = 0 if op.startswith(("ecc", "ecdsa")) else 1 if op.startswith("rsa") else 2
    return (prim, p.get("rsa_bits") or 0, ["Key Gen.", "Sign", "Verify"].index(OPERATION[op]) if op in OPERATION else 3)


def _absolute(run: Run, label: str, cells: list[Cell], engines: list[str], energy: bool) -> Table:
    rows = rows_of(cells)
    if label == "Table 4":
        rows.sort(key=_row_order)
    second = "Bytes" if label == "Table 3" else "Operation"
    cols = [Column("Primitive", LEFT), Column(second, LEFT)]
    for e in engines:
        cols.append(Column(f"{e} Time [s]", unit="s", group=e))
        if energy:
            cols.append(Column(f"{e} Energy [J]", unit="J", group=e))
    what = "random and hash" if label == "Table 3" else "asymmetric crypto"
    table = Table(f"{label}: Absolute execution time{' and energy consumption' if energy else ''} during the {what} "
                  "benchmarks (median of values, rounded to 3 significant digits)", cols, key=label)
    for op, pk, p in rows:
        text = [primitive(op, p), str(p.get("bytes")) if label == "Table 3" else OPERATION.get(op, op)]
        values: list = [None, p.get("bytes") if label == "Table 3" else None]
        for e in engines:
            cell = find(cells, op, pk, e)
            for t, v in [_time_text(cell)] + ([_energy_text(cell)] if energy else []):
                text.append(t)
                values.append(v)
        table.add(text, values)
    table.notes = [f"median of n repetitions (Table 9), {provenance_word(run)}; RSD = 100·σ/μ in Tables 5-8",
                   f"*: the timed operation lasts less than 1000 timer resolutions ({APPROX_FLAG}), the study's 'less "
                   "than 20 sampling periods': consider the value an approximation"]
    for c in cells:
        if c.engine in engines and word(c) not in (None, "—"):
            table.notes.append(f"{c.engine} {test_name(c.op, c.params)}: {word(c)} — {failure_note(c.detail)}")
    return table


def _rsd_of(cell: Cell, kind: str) -> float | None:
    if word(cell) is not None:
        return None
    if kind == "time":
        return cell.result.time_s.get("rsd_pct")
    return energy_rsd(cell.energy)


def _excluded(cell: Cell, kind: str) -> str | None:
    """Why a test is a justified outlier of an engine's RSD list, as the paper excludes them."""
    if cell.op == "rsa-keygen":
        return "RSA key generation (non-deterministic)"
    if kind == "time" and APPROX_FLAG in cell.result.flags:
        return "too short to time well (*)"
    if kind == "energy" and cell.energy is not None and cell.energy.stats.get("approximate"):
        return "energy windows too short (*)"
    return None


def _rsd_table(n: int, kind: str, same: bool, cells: list[Cell], engines: list[str]) -> Table:
    """Tables 5-8: per engine the TOP tests with the highest RSD, after excluding each engine's
    justified outliers (5, 6) or every test excluded for any engine (7, 8)."""
    oks = [c for c in cells if c.engine in engines and _rsd_of(c, kind) is not None]
    excluded = {(c.op, c.params.key): _excluded(c, kind) for c in oks if _excluded(c, kind)}
    what = "Execution time measurements" if kind == "time" else "Energy consumption"
    how = "after excluding the same tests for all engines" if same else "after excluding justified outliers"
    table = Table(f"Table {n}: {what} with the highest RSD {how}",
                  [Column(e, group=e) for e in engines], key=f"Table {n}")
    lists = []
    for e in engines:
        mine = [c for c in oks if c.engine == e and (
            (c.op, c.params.key) not in excluded if same else not _excluded(c, kind))]
        mine.sort(key=lambda c: -_rsd_of(c, kind))
        lists.append(mine[:TOP])
    for i in range(max((len(l) for l in lists), default=0)):
        table.add([f"{fmt_sig(_rsd_of(l[i], kind), 2)}% {test_name(l[i].op, l[i].params)}"
                   if i < len(l) else "" for l in lists],
                  [_rsd_of(l[i], kind) if i < len(l) else None for l in lists])
    skipped = Counter()
    for c in oks:
        if (same and (c.op, c.params.key) in excluded) or (not same and _excluded(c, kind)):
            skipped[(test_name(c.op, c.params), excluded.get((c.op, c.params.key)) or _excluded(c, kind))] += 1
    reasons: dict[str, list[str]] = {}
    for (name, why), _ in skipped.items():
        reasons.setdefault(why, []).append(name)
    table.notes = [("excluded for every engine" if same else "excluded where an engine has them") + f": {why}: "
                   + ", ".join(dict.fromkeys(names)) for why, names in reasons.items()]
    return table


def _repetitions(cells: list[Cell], engines: list[str], energy: bool) -> Table:
    cols = [Column("n", LEFT), Column("Time")] + ([Column("Energy")] if energy else [])
    table = Table("Table 9: Number of repetitions performed for the various benchmarks", cols, key="Table 9")
    for e in engines:
        ns = Counter(c.result.n for c in cells if c.engine == e and word(c) is None and c.result.n)
        common = ns.most_common(1)[0][0] if ns else None
        others = sorted(n for n in ns if n != common)
        text = (str(common) + (f" (also {', '.join(map(str, others))})" if others else "")) if common else "—"
        row = [e, text]
        if energy:
            wins = Counter(len(c.energy.get("per_op_windows_j") or c.energy.get("per_window_j") or [])
                           for c in cells if c.engine == e and word(c) is None and c.energy is not None)
            row.append(", ".join(str(n) for n in sorted(wins) if n) or "—")
        table.add(row, [None, common] + ([None] if energy else []))
    return table


def tables(run: Run) -> list[Table]:
    """Tables 3 and 4, 5-8 and 9 of the white paper, from a run."""
    groups = grouped(run, TABLE_OF)
    engines = [e for e in engine_order(run, run.cells) if any(word(c) is None for c in run.cells if c.engine == e)]
    energy = any(c.ok and c.energy is not None for c in run.cells)
    out = []
    for label, cells in groups:
        base = label.split(" (")[0] if label.startswith("Table") else (label or "Other operations")
        if out and out[-1].key == base:          # the suite's "Table 3 (random)" and "Table 3 (hash)": one table
            extra = _absolute(run, base, cells, engines, energy)
            out[-1].rows += extra.rows
            out[-1].notes += [n for n in extra.notes if n not in out[-1].notes]
            continue
        out.append(_absolute(run, base, cells, engines, energy))
    e_rsd = any(energy_rsd(c.energy) is not None for c in run.cells if c.ok)
    out.append(_rsd_table(5, "time", False, run.cells, engines))
    if e_rsd:
        out.append(_rsd_table(6, "energy", False, run.cells, engines))
    out.append(_rsd_table(7, "time", True, run.cells, engines))
    if e_rsd:
        out.append(_rsd_table(8, "energy", True, run.cells, engines))
    else:
        out[-1].notes.append("Tables 6 and 8 (energy RSD) are left out: the run has no energy figures per repetition "
                             "(an imported power-analyzer trace, or a host meter's windows)")
    if is_qemu(run):
        out[0].notes.append("QEMU runs are functional: no times (—); use --target sim:CORE or a board")
    if not energy:
        out[0].notes.append("Energy [J] is left out: the run has no energy figures (energy import of a power-analyzer "
                            "trace cut at the marker, or run --energy rapl|perf on a host)")
    out.append(_repetitions(run.cells, engines, energy))
    return out

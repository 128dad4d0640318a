"""The TI CC13x2/CC26x2 report's tables (TI SWRA667, Tables 6-17): per table a row per payload
length (or operation, or curve) and per engine Duration (ms), Duration Improvement t_baseline /
t_engine (the report's eq. 1, with its 95 % interval), Average Current (mA) and Energy Efficiency
Improvement (eq. 2) where the run has energy figures."""
from __future__ import annotations

from ...core.quantity import fmt_sig
from ...core.records import Cell, Run, params_key
from ...core.table import LEFT, Column, Table
from ...stats.results import comparisons
from ..verdicts import BAND_LEGEND, band_suffix
from .common import (cell_notes, find, grouped, is_qemu, mark, op_label, provenance_word, rows_of, shown_engines,
                     word)

# the report's table for each operation, and its titles
TABLE_OF = {"aes-cbc-encrypt": "Table 6", "aes-ccm-encrypt": "Table 7", "aes-gcm-encrypt": "Table 8",
            "ctr-drbg-instantiate": "Table 9", "ctr-drbg-reseed": "Table 9", "ctr-drbg-generate": "Table 9",
            "sha224": "Table 10", "sha256": "Table 11", "sha384": "Table 12", "sha512": "Table 13",
            "ecdh-keygen": "Table 14", "ecdh-shared-secret": "Table 14", "ecdsa-sign": "Table 15",
            "ecdsa-verify": "Table 15", "ecjpake-exchange": "Table 16", "random": "Table 17"}
TITLES = {"Table 6": "AES CBC Benchmark Results", "Table 7": "AES CCM Benchmark Results",
          "Table 8": "AES GCM Benchmark Results", "Table 9": "AES CTR DRBG Benchmark Results",
          "Table 10": "SHA-224 Benchmark Results", "Table 11": "SHA-256 Benchmark Results",
          "Table 12": "SHA-384 Benchmark Results", "Table 13": "SHA-512 Benchmark Results",
          "Table 14": "ECDH Benchmark Results", "Table 15": "ECDSA Benchmark Results",
          "Table 16": "ECJPAKE Benchmark Results", "Table 17": "TRNG Benchmark Results"}
# the report's words for an operation in its "Operation" column
OP_NAMES = {"ctr-drbg-instantiate": "Initialize", "ctr-drbg-reseed": "Reseed", "ctr-drbg-generate": "Generate bytes",
            "ecdh-keygen": "Generate Public Key", "ecdh-shared-secret": "Compute Shared Secret", "ecdsa-sign": "Sign",
            "ecdsa-verify": "Verify", "ecjpake-exchange": "EC-JPAKE exchange (both sides / 2)"}
CURVES = {"p256": "NIST-P256", "x25519": "Curve25519", "p384": "NIST-P384", "p521": "NIST-P521"}
PARAM_HEADERS = {"bytes": "Payload Length (bytes)", "curve": "Curve", "source": "Source", "key_bits": "Key (bits)"}
ENERGY_WHY = ("Average Current and Energy Efficiency Improvement are left out: the run has no energy figures "
              "(host: run --energy rapl|perf; a board: energy import of a power-analyzer trace; the simulator "
              "models them from its device profile)")


OPERATION_TABLES = ("Table 9", "Table 14", "Table 15")      # the report's tables with an Operation column


def _label_columns(rows: list[tuple[str, str, dict]], label: str) -> tuple[bool, list[str]]:
    """Whether the table needs an Operation column, and the parameters that vary between its rows."""
    ops = list(dict.fromkeys(op for op, _, _ in rows))
    names = list(dict.fromkeys(n for _, _, p in rows for n in p))
    # a parameter gets a column where it varies between the rows of one operation (Table 14's curves);
    # one that only tells operations apart goes with the operation's name ("Generate bytes (32)")
    varying = [n for n in names if n != "parallel" and any(
        len({str(p.get(n)) for o, _, p in rows if o == op}) > 1 for op in ops)]
    # the report's payload tables always print the length, one row or several
    if len(ops) == 1 and "bytes" not in varying and all(p.get("bytes") is not None for _, _, p in rows):
        varying.insert(0, "bytes")
    return len(ops) > 1 or label in OPERATION_TABLES, varying


def _param_text(name: str, value) -> str:
    return CURVES.get(str(value), str(value)) if name == "curve" else str(value)


def _op_text(op: str, params: dict) -> str:
    text = op_label(op, params, OP_NAMES)
    if op == "ctr-drbg-generate" and params.get("bytes"):
        text += f" ({params['bytes']})"
    return text


class _Energy:
    """Which energy columns a table has: Average Current where a cell has a current, Energy
    Efficiency Improvement where a comparison has one."""

    def __init__(self, cells: list[Cell], comps: dict):
        self.current = any(c.ok and c.energy is not None and c.energy.get("avg_current_a") for c in cells)
        keys = {(c.op, c.params.key, c.engine) for c in cells}
        self.eei = any("energy_efficiency_improvement" in v for k, v in comps.items() if k in keys)
        self.modeled = any(c.ok and c.energy is not None and c.energy.provenance == "modeled" for c in cells)


def _columns(op_col: bool, varying: list[str], engines: list[str], base: str | None, en: _Energy,
             random_op: bool) -> list[Column]:
    cols = [Column("Operation", LEFT)] if op_col else []
    for n in varying:
        header = "Length (bytes)" if (n == "bytes" and random_op) else PARAM_HEADERS.get(n, n)
        cols.append(Column(header, LEFT))
    for e in engines:
        cols.append(Column(f"Duration {e} (ms)", unit="ms", group=e))
        if base and e != base:
            cols.append(Column(f"Duration Improvement {e}", unit="x", group=e))
        if en.current:
            cols.append(Column(f"Average Current {e} (mA)", unit="mA", group=e))
        if en.eei and base and e != base:
            cols.append(Column(f"Energy Efficiency Improvement {e}", unit="x", group=e))
    return cols


def _engine_cells(cell: Cell | None, comp: dict | None, is_base: bool, has_base: bool, en: _Energy) -> tuple[list, list]:
    """One engine's cells of a row (text, raw values)."""
    text, values = [], []
    w = word(cell)
    t = cell.reported_time() if w is None else None
    if w is None and t is None:
        w = "no time"                               # QEMU: functional only
    text.append(w if w else fmt_sig(t[0] * 1e3) + mark(cell))
    values.append(None if w else t[0] * 1e3)
    if has_base and not is_base:
        if comp:
            r, (lo, hi) = comp["duration_improvement"], comp["ci95"]
            text.append(f"{fmt_sig(r)} [{fmt_sig(lo)}–{fmt_sig(hi)}]{band_suffix(comp)}")
            values.append(r)
        else:
            text.append("—")
            values.append(None)
    if en.current:
        cur = cell.energy.get("avg_current_a") if (w is None and cell.energy is not None) else None
        text.append(fmt_sig(cur * 1e3) if cur else "—")
        values.append(cur * 1e3 if cur else None)
    if en.eei and has_base and not is_base:
        eei = (comp or {}).get("energy_efficiency_improvement")
        text.append(fmt_sig(eei) + band_suffix(comp) if eei else "—")
        values.append(eei)
    return text, values


def _table(run: Run, label: str, cells: list[Cell], comps: dict) -> Table:
    rows = rows_of(cells)
    op_col, varying = _label_columns(rows, label)
    engines, notes = shown_engines(run, cells)
    base = run.plan.baseline if run.plan.baseline in engines else None
    en = _Energy(cells, comps)
    title = f"{label}. {TITLES[label]}" if label in TITLES else (label or "Other operations (not in the TI report)")
    if len({op for op, _, _ in rows}) == 1 or label not in TITLES:
        op, _, p = rows[0]
        fixed = {k: v for k, v in p.items() if k not in varying and k != "parallel"}
        if fixed:
            title += " — " + op_label(op, p) + ": " + ", ".join(f"{k}={_param_text(k, v)}" for k, v in fixed.items())
    table = Table(title, _columns(op_col, varying, engines, base, en, all(op == "random" for op, _, _ in rows)),
                  key=label or "other")
    for op, pk, p in rows:
        text = ([_op_text(op, p)] if op_col else []) + [_param_text(n, p.get(n)) for n in varying]
        values: list = [None] * len(text)
        for e in engines:
            t, v = _engine_cells(find(cells, op, pk, e), comps.get((op, pk, e)), e == base, base is not None, en)
            text += t
            values += v
        table.add(text, values)
    shown = [c for c in cells if c.engine in engines]
    table.notes = notes + cell_notes(shown, lambda c: " ".join(
        [c.engine, _op_text(c.op, c.params)] + [f"{n}={c.params.get(n)}" for n in varying]))
    nodf = sorted({c.engine for c in shown if "without derivation function" in (c.detail or "")})
    if label == "Table 9" and nodf:
        table.notes.append(f"{', '.join(nodf)}: a CTR_DRBG without derivation function (SP 800-90A 10.2.1.3.1, as "
                           "TI's AESCTRDRBG), checked against the no-df vectors; Mbed TLS's always uses one (10.3.2), "
                           "so Initialize and Reseed do more AES work there, as in TI's own Table 9: their Duration "
                           "Improvement holds that difference of construction as well as the engine's")
    if en.modeled:
        slept = sorted({c.engine for c in shown if (c.result or {}).get("sleep")})
        table.notes.append("Average Current: modeled (the device profile's active current), not measured"
                           + (f"; {', '.join(slept)}: the idle current while the core slept in WFI waiting for the "
                              "engine's interrupt, the active current for the rest (E = V(I_active t_active + "
                              "I_idle t_sleep))" if slept else ""))
    return table


def tables(run: Run) -> list[Table]:
    """The TI report's Tables 6-17 from a run, in the report's order."""
    comps = {(c["op"], params_key(c["params"]), c["engine"]): c for c in comparisons(run.cells, run.plan.baseline)}
    out = [_table(run, label, cells, comps) for label, cells in grouped(run, TABLE_OF)]
    if out:
        first = out[0].notes
        lead = [f"Durations in ms ({provenance_word(run)}), 3 significant figures"
                + (f"; Duration Improvement ENGINE = t_{run.plan.baseline} / t_ENGINE (the report's eq. 1), "
                   "[95 % repeat interval]" + (BAND_LEGEND if any("band" in c for c in comps.values()) else "")
                   if run.plan.baseline else
                   "; no Duration Improvement: the run has no baseline engine (host runs: --baseline ENGINE)")]
        if not any(c.ok and c.energy is not None for c in run.cells):
            lead.append(ENERGY_WHY)
        if is_qemu(run):
            lead.append("QEMU runs are functional: no durations ('no time'); use --target sim:CORE or a board")
        out[0].notes = lead + first
    return out

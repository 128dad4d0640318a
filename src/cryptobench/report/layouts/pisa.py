"""The Pisa Cortex-A53 paper's tables: Tables I-III (AES-ECB-256, SHA256, ECDSA P-521 sign) with a
row per number of cores and per engine Exec. time (s), D (Mb or Op), TH (Mbps or Op/s), P (mW) and E
(mJ/Mb or mJ/Op); Table IV, the paper's hardware side: here the run's engines other than its
baseline (CPU crypto extensions, an accelerator), TH, P and E on one core; Table V, FoM = TH / E per
engine and number of cores. A run with --parallel gives one row per process count (targets/host/parallel.py);
without, one row for one core."""
from __future__ import annotations

from ...catalog.ops import OPS
from ...core.quantity import fmt_sig
from ...core.records import Cell, Run, params_key
from ...core.table import LEFT, Column, Table
from ...targets.host.parallel import PARAM, op_params
from ..failure_text import failure_note
from .common import engine_order, grouped, provenance_word, word

TABLE_OF = {"aes-ecb-encrypt": "Table I", "sha256": "Table II", "ecdsa-sign": "Table III"}
NAMES = {"aes-ecb-encrypt": "AES-ECB", "sha256": "SHA256", "ecdsa-sign": "ECDSA"}


def algorithm(op: str, params: dict) -> str:
    """The paper's name: AES-ECB-256, SHA256, ECDSA P-521."""
    if op == "aes-ecb-encrypt":
        return f"AES-ECB-{params.get('key_bits', 256)}"
    if op == "ecdsa-sign":
        return f"ECDSA {str(params.get('curve', 'p521')).upper().replace('P', 'P-')}"
    return NAMES.get(op) or OPS[op].title


class _Figures:
    """One cell's Exec. time, D, TH (Mb/Mbps for a payload, Op/Op/s otherwise), P and E."""

    def __init__(self, cell: Cell):
        r = cell.result
        payload = bool(OPS[cell.op].payload and cell.params.get("bytes"))
        scale = 8 / 1e6 if payload else 1.0                 # bytes -> Mb; ops stay ops
        per_op = float(cell.params["bytes"]) if payload else (2.0 if OPS[cell.op].halve else 1.0)
        p = r.parallel
        if p:
            self.exec_s, self.d, self.th = p["exec_time_s"], p["units_total"] * scale, p["aggregate"] * scale
        else:                                               # one process: the samples' own sums
            ks = sum(k for k, _, _ in cell.samples or [])
            ns = sum(ns for _, ns, _ in cell.samples or [])
            t = cell.reported_time()
            self.exec_s = ns / 1e9 if ns else None
            self.d = ks * per_op * scale / (2.0 if OPS[cell.op].halve and not payload else 1.0) if ks else None
            self.th = (per_op * scale / t[0]) if t and t[0] > 0 else None
        en = cell.energy
        self.p = self.e = None
        if en is not None and en.usable:
            self.p = en.get("avg_power_w")
            self.e = en.per_op_j * 1e3 / (float(cell.params["bytes"]) * 8 / 1e6) if payload else en.per_op_j * 1e3
        self.fom = self.th / self.e if self.th and self.e else None
        self.payload = payload


def _cores(cell: Cell) -> int:
    return int(cell.params.get(PARAM) or 1)


def _units(payload: bool) -> tuple[str, str, str]:
    return ("Mb", "Mbps", "mJ/Mb") if payload else ("Op", "Op/s", "mJ/Op")


def _sw_table(run: Run, label: str, cells: list[Cell], engines: list[str], energy: bool) -> Table:
    op, params = cells[0].op, op_params(cells[0].params)
    payload = bool(OPS[op].payload and params.get("bytes"))
    d, th, e = _units(payload)
    cols = [Column("Number of core", LEFT)]
    for eng in engines:
        cols += [Column(f"{eng} Exec. time (s)", unit="s", group=eng), Column(f"{eng} D ({d})", unit=d, group=eng),
                 Column(f"{eng} TH ({th})", unit=th, group=eng)]
        if energy:
            cols += [Column(f"{eng} P (mW)", unit="mW", group=eng), Column(f"{eng} E ({e})", unit=e, group=eng)]
    fixed = ", ".join(f"{k}={v}" for k, v in params.items())
    table = Table(f"{label}. Performance data for {algorithm(op, params)}" + (f" ({fixed})" if fixed else ""),
                  cols, key=label)
    for n in sorted({_cores(c) for c in cells}):
        text, values = [str(n)], [n]
        for eng in engines:
            cell = next((c for c in cells if c.engine == eng and _cores(c) == n), None)
            w = word(cell)
            f = _Figures(cell) if w is None else None
            figs = [f.exec_s, f.d, f.th] + ([f.p * 1e3 if f.p else None, f.e] if energy else []) if f else []
            if f is None:
                text += [w] + [""] * (4 if energy else 2)
                values += [None] * (5 if energy else 3)
                continue
            text += [fmt_sig(v) if v is not None else "—" for v in figs]
            values += figs
        table.add(text, values)
    return table


def _hw_table(rows: list[tuple[str, str, _Figures]], energy: bool) -> Table:
    cols = [Column("Cryptographic algorithm", LEFT), Column("engine", LEFT), Column("TH")] \
        + ([Column("P (mW)", unit="mW"), Column("E")] if energy else [])
    table = Table("Table IV. Performance data of the hardware engines (the run's engines other than its baseline, "
                  "one core)", cols, key="Table IV")
    for alg, eng, f in rows:
        d, th, e = _units(f.payload)
        row = [alg, eng, f"{fmt_sig(f.th)} {th}" if f.th else "—"]
        if energy:
            row += [fmt_sig(f.p * 1e3) if f.p else "—", f"{fmt_sig(f.e)} {e}" if f.e else "—"]
        table.add(row, [None, None, f.th] + ([f.p * 1e3 if f.p else None, f.e] if energy else []))
    table.notes = ["the paper's Table IV is its 45 nm accelerators at 300 MHz (synthesis and a model, not run): "
                   "`cryptobench model accelerator --pisa` recomputes it (modeled), `cryptobench compare RUN "
                   "--reference pisa-a53` sets it beside this run (published)"]
    return table


def _fom_table(foms: dict[tuple[str, str], dict[int, float]], counts: list[int]) -> Table:
    engines = list(dict.fromkeys(eng for _, eng in foms))
    cols = [Column("Algorithm", LEFT)] + [Column(f"FoM {eng} ({n} core{'s' if n > 1 else ''})", group=eng)
                                          for eng in engines for n in counts]
    table = Table("Table V. Comparison among the engines according to the Figure of Merit FoM = TH / E", cols,
                  key="Table V")
    for alg in dict.fromkeys(a for a, _ in foms):
        vals = [foms.get((alg, eng), {}).get(n) for eng in engines for n in counts]
        table.add([alg] + [fmt_sig(v) if v else "—" for v in vals], [None] + vals)
    table.notes = ["FoM = TH / E (Mbps / (mJ/Mb), or (Op/s) / (mJ/Op)), from the TH and E of Tables I-IV"]
    return table


def tables(run: Run) -> list[Table]:  # long: five tables, each from the previous ones' figures
    """Tables I-V of the paper from a run."""
    engines_all = engine_order(run, run.cells)
    base = run.plan.baseline if run.plan.baseline in engines_all else None
    energy = any(c.ok and c.energy is not None and c.energy.usable for c in run.cells)
    counts = sorted({_cores(c) for c in run.cells}) or [1]
    out, hw_rows, foms = [], [], {}
    for label, cells in grouped(run, TABLE_OF):
        for pk in dict.fromkeys(_group_key(c) for c in cells):
            mine = [c for c in cells if _group_key(c) == pk]
            engines = [e for e in engine_order(run, mine) if any(word(c) is None for c in mine if c.engine == e)]
            if not engines:
                continue
            table = _sw_table(run, label or "Other operations", mine, engines, energy)
            table.notes = [f"{c.engine} N={_cores(c)}: {word(c)} — {failure_note(c.detail)}" for c in mine
                           if word(c) not in (None, "—")]
            out.append(table)
            alg = algorithm(mine[0].op, op_params(mine[0].params))
            for c in mine:
                if word(c) is None:
                    f = _Figures(c)
                    if f.fom:
                        foms.setdefault((alg, c.engine), {})[_cores(c)] = f.fom
                    if base and c.engine != base and _cores(c) == 1:
                        hw_rows.append((alg, c.engine, f))
    if not out:
        return out
    out[0].notes = [_legend(run, energy)] + out[0].notes
    if hw_rows:
        out.append(_hw_table(hw_rows, energy))
    if foms:
        out.append(_fom_table(foms, counts))
    else:
        out[-1].notes.append("Table V (FoM = TH / E) is left out: the run has no energy figures (run --energy "
                             "rapl|perf on a host)")
    return out


def _group_key(cell: Cell) -> str:
    """The cell's parameters without the process count: one Table I-III per (op, parameters)."""
    return cell.op + "|" + params_key(op_params(cell.params))


def _legend(run: Run, energy: bool) -> str:
    opts = run.plan.options
    how = (f"--parallel {','.join(map(str, opts.parallel))}: N pinned harness processes at once, TH = aggregate "
           "throughput (median over rounds, orchestrator clock), Exec. time and D = the rounds' sums"
           if opts.parallel else
           "one process (no --parallel): TH = bytes (or ops) per printed time per operation, Exec. time and D = "
           "the samples' sums")
    return (f"{provenance_word(run)}; {how}" + ("" if energy else "; P and E are left out: the run has no energy "
                                                                  "figures (run --energy rapl|perf)"))

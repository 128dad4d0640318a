"""`cryptobench diff RUN_A RUN_B`: per cell, the change of the printed time from A to B, a test of
that change against the variation between runs, and a threshold; exit code 1 when a significant
regression beyond the threshold is found (for CI gates).

Cells are matched on (op, params, engine, target), where a labgrid place is not part of the
target: the same cell measured on two boards of a lab pairs up, and `--by-place` (by_place in
the json) sums the pairs up per pair of places, the board-to-board spread. For a pair that is ok on both sides:
change = t_B / t_A − 1, t the printed estimate (stats/estimate.py; the median for runs without one);
the test: where both cells carry a repeat interval with the same estimator, a two-sided z test of
log(t_B / t_A) against √(σ_A² + σ_p,A² + τ_A² + σ_B² + σ_p,B² + τ_B²), the run-level variation
each run measured (docs/statistics.md); otherwise a Mann-Whitney U test on the per-operation
samples, which knows only sample-to-sample variation. Verdict
  "slower"                  change > threshold and p < alpha   (a regression)
  "faster"                  change < −threshold and p < alpha  (an improvement)
  "same (not significant)"  p ≥ alpha
  "same (within threshold)" p < alpha but |change| ≤ threshold
  "not enough samples"      fewer than 2 samples on a side: never significant, counted as neither.
A cell ok in A and failed (or failing its known-answer test) in B is a regression too. A cell
present on one side only, unsupported on a side, or not ok in A is listed but counted as neither.
"""
from __future__ import annotations

import math
import statistics

from ..core.errors import UsageError
from ..stats.estimate import run_level_variance
from ..core.printable import printable
from ..stats.results import per_op_seconds
from ..stats.significance import mann_whitney_u
from ..core.quantity import fmt_num, pick_unit
from ..core.records import Cell, Run, outcome, params_key, place_of
from ..core.table import LEFT, Column, Csv, Markdown, Table, data_table

TEST = ("two-sided z test of the change against both runs' run-level variation (repeat intervals); "
        "Mann-Whitney U on per-operation samples where a run has no repeat interval")
Z_METHOD = "repeat-interval z"



# ------------------------------------------------------------------------------------ arguments
def parse_threshold(text) -> float:
    """The threshold as a fraction: "5%" → 0.05; a bare number below 1 is a fraction ("0.05" → 0.05);
    a bare number of 1 or more is read as percent ("5" → 0.05)."""
    s = str(text).strip()
    pct = s.endswith("%")
    try:
        value = float(s[:-1].strip() if pct else s)
    except ValueError:
        raise UsageError(f"--threshold: expected a percentage like 5% or a fraction like 0.05, got {text!r}")
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--threshold: must be a finite value >= 0 (e.g. 5% or 0.05), got {text!r}")
    return value / 100 if pct or value >= 1 else value


def check_alpha(alpha: float) -> float:
    if not (0 < alpha < 1):
        raise UsageError(f"--alpha: must be between 0 and 1 (exclusive), got {alpha}")
    return alpha


# ------------------------------------------------------------------------------------ the runs
def device(run: Run) -> str | None:
    """What the run was measured on: an MCU target's kind, board, device and cpu, or the host CPU model."""
    t = run.conditions.target
    if t:
        where = f"{t.get('kind')}:{t.get('board') or t.get('core')}"
        return " ".join(str(x) for x in (where, t.get("device"), t.get("cpu")) if x)
    return (run.conditions.host.get("cpu") or {}).get("model") or None


def engine_versions(run: Run) -> dict:
    """engine -> its version as recorded: the host harness's report, or an MCU build's library version."""
    cond = run.conditions
    out = {n: str(e["version"]) for n, e in cond.engines.items() if isinstance(e, dict) and e.get("version")}
    for n, b in (cond.get("builds") or {}).items():
        if isinstance(b, dict) and b.get("library_version") and n not in out:
            out[n] = str(b["library_version"])
    return out


def run_info(run: Run) -> dict:
    return {"id": run.id, "label": run.label, "created": run.created, "suite": run.suite, "status": run.status,
            "device": device(run), "engines": engine_versions(run),
            "reference_loop_s": run.conditions.noise_floor.get("median_s")}


def machine_drift(a: dict, b: dict) -> float | None:
    """B / A of the no-crypto reference loop each run samples between its cells (conditions.noise_floor):
    how much faster or slower the machine itself was, whatever the engines did."""
    ra, rb = a.get("reference_loop_s"), b.get("reference_loop_s")
    return rb / ra if ra and rb else None


def method(run: Run) -> dict:
    """How a run measured: sampling in rounds or cell by cell, single-shot, min-time, estimators, k per cell."""
    plan = run.plan
    cells = {_key(c): c for c in run.cells if c.ok and c.result is not None}
    return {"sampling": run.conditions.sampling.get("method") or ("firmware" if plan.target else "cell by cell"),
            "single": bool(plan.options.single), "min_time": plan.options.min_time,
            "estimators": {k: c.reported_time()[2] for k, c in cells.items() if c.reported_time()},
            "k": {k: c.result.k for k, c in cells.items()}}


def method_warnings(run_a: Run, run_b: Run) -> list[str]:
    """Why the two runs' numbers are not measured alike (each line also refused by --strict)."""
    a, b = method(run_a), method(run_b)
    out = []
    if a["sampling"] != b["sampling"]:
        out.append(f"different sampling: A {a['sampling']}, B {b['sampling']}")
    if a["single"] != b["single"]:
        out.append(f"A is {'single-shot' if a['single'] else 'batched'}, B {'single-shot' if b['single'] else 'batched'}")
    if a["min_time"] != b["min_time"] and a["min_time"] is not None and b["min_time"] is not None:
        out.append(f"different --min-time: A {a['min_time']:g} s, B {b['min_time']:g} s")
    common = sorted(a["estimators"].keys() & b["estimators"].keys())      # sorted: the example named is stable
    est = [k for k in common if a["estimators"][k] != b["estimators"][k]]
    if est:
        k = est[0]
        out.append(f"{len(est)} cell(s) use different estimators (e.g. {k[0]} {k[2]}: A {a['estimators'][k]}, "
                   f"B {b['estimators'][k]}); their change mixes estimator and speed")
    ks = [k for k in common if a["k"].get(k) and b["k"].get(k)
          and max(a["k"][k], b["k"][k]) > 2 * min(a["k"][k], b["k"][k])]
    if ks:
        k = ks[0]
        out.append(f"{len(ks)} cell(s) batch very differently (e.g. {k[0]} {k[2]}: k = {a['k'][k]} in A, "
                   f"{b['k'][k]} in B); per-batch overheads differ")
    return out


def warnings(a: dict, b: dict, threshold: float) -> list[str]:
    """Why the two runs may not be like for like."""
    out = []
    drift = machine_drift(a, b)
    if drift is not None and abs(drift - 1) > threshold:
        out.append(f"the machine itself ran {abs(drift - 1) * 100:.0f} % {'slower' if drift > 1 else 'faster'} in B: "
                   f"the no-crypto reference loop took ×{drift:.2f} A's time; changes of that size are the "
                   "machine's (load, frequency), not the engines'")
    if a["device"] != b["device"]:
        out.append(f"measured on different devices (A: {a['device'] or 'unknown'}, B: {b['device'] or 'unknown'}); "
                   "the diff is not like for like")
    for name in a["engines"]:
        if name in b["engines"] and a["engines"][name] != b["engines"][name]:
            out.append(f"engine {name} differs in version (A: {a['engines'][name]}, B: {b['engines'][name]}); "
                       "its changes include the library's")
    for side, info in (("A", a), ("B", b)):
        if info["status"] not in (None, "complete"):
            out.append(f"run {side} ({info['id']}) is {info['status']}: cells it lacks show as only in the other run")
    return out


# ------------------------------------------------------------------------------------ the cells
def _key(cell: Cell) -> tuple:
    """(op, parameters, engine, target): a cell's identity across two runs; a labgrid cell's
    target without its place (boards of one kind measure the same cells)."""
    return cell.op, cell.params.key, cell.engine, place_of(cell.target)[0]


def by_place(rows: list[dict]) -> list[dict]:
    """Per pair of places (A's, B's): cells paired, cells timed on both, and the B/A ratios'
    median, lowest and highest: how far one board is from another on the same cells."""
    groups: dict[tuple, list] = {}
    for r in rows:
        if r.get("place_a") or r.get("place_b"):
            groups.setdefault((r.get("place_a"), r.get("place_b")), []).append(r)
    out = []
    for (pa, pb), rs in groups.items():
        ratios = sorted(r["ratio"] for r in rs if r["ratio"] is not None)
        out.append({"place_a": pa, "place_b": pb, "cells": len(rs), "timed": len(ratios),
                    "median_ratio": statistics.median(ratios) if ratios else None,
                    "min_ratio": ratios[0] if ratios else None, "max_ratio": ratios[-1] if ratios else None,
                    "regressions": sum(r["kind"] == "regression" for r in rs)})
    return out


def _state(cell: Cell | None) -> str:
    word = outcome(cell)
    return "KAT FAIL" if word == "kat-fail" else word


def _times(cell: Cell) -> list[float]:
    return per_op_seconds(cell.op, cell.samples) if cell.samples else []


def _printed(cell: Cell, times: list[float]) -> tuple[float | None, str | None]:
    """(the printed time of the cell, its estimator): its estimate, or the samples' median."""
    got = cell.reported_time()
    m, est = (got[0], got[2]) if got else ((statistics.median(times), "median") if times else (None, None))
    return (float(m), est) if m is not None and m > 0 else (None, None)


def _set_printed(row: dict, side: str, cell: Cell, times: list[float]) -> float | None:
    row[f"n_{side}"] = len(times)
    row[f"estimate_{side}_s"], row[f"estimator_{side}"] = _printed(cell, times)
    return row[f"estimate_{side}_s"]


def _run_level(cell: Cell) -> tuple[str, float] | None:
    """(estimator, log-scale run-level variance) of a cell that carries a repeat interval."""
    if cell.result is None:
        return None
    est = cell.result.estimate
    if not est or est.get("sigma_log") is None:
        return None
    var = run_level_variance(*(float(est.get(k) or 0.0) for k in ("sigma_log", "sigma_process_log", "tau_log")))
    value, (lo, hi) = float(est.get("value") or 0.0), est.get("ci95") or (0.0, 0.0)
    if "layout" in cell.result.flags and value > 0 and lo > 0 and hi > 0:
        # a layout-sensitive cell's interval was widened to reach its slowest and fastest process
        # (a rerun may draw only such layouts): the test uses that width, not the narrower terms
        half = max(math.log(value / lo), math.log(hi / value)) / 1.96
        var = max(var, half * half / 2)
    return est["estimator"], var


def z_test(ma: float, mb: float, var_a: float, var_b: float) -> dict:
    sd = math.sqrt(var_a + var_b)
    z = math.log(mb / ma) / sd if sd > 0 else (0.0 if mb == ma else math.inf)
    return {"u": None, "z": z, "p": math.erfc(abs(z) / math.sqrt(2)) if math.isfinite(z) else 0.0,
            "method": Z_METHOD}


def _not_ok_verdict(sa: str, sb: str) -> tuple[str, str]:
    """(verdict, kind) for a pair where a side is missing or not ok."""
    if sa == "missing":
        return "only in B", "other"
    if sb == "missing":
        return "only in A", "other"
    if sa == "ok":                              # ok in A, not in B
        return f"{sb} in B", ("other" if sb == "unsupported" else "regression")
    if sb == "ok":
        return f"{sa} in A", "other"
    return (f"{sa} in A and B" if sa == sb else f"{sa} in A, {sb} in B"), "other"


def compare_pair(ca: Cell | None, cb: Cell | None, threshold: float, alpha: float) -> dict:
    """One row of the diff: the pair's printed times (and their estimators), change, test and verdict; kind is regression,
    improvement, unchanged or other (not compared)."""
    c = ca if ca is not None else cb
    targets = [x.target for x in (ca, cb) if x is not None]
    row = {"op": c.op, "params": c.params.to_dict(), "engine": c.engine,
           "target": targets[0] if len(set(targets)) == 1 else " → ".join(targets),
           "place_a": place_of(ca.target)[1] if ca is not None else None,
           "place_b": place_of(cb.target)[1] if cb is not None else None,
           "status_a": _state(ca), "status_b": _state(cb), "n_a": None, "n_b": None,
           "estimate_a_s": None, "estimate_b_s": None, "estimator_a": None, "estimator_b": None, "ratio": None, "change": None,
           "u": None, "p": None, "method": None}
    if row["status_a"] != "ok" or row["status_b"] != "ok":
        row["verdict"], row["kind"] = _not_ok_verdict(row["status_a"], row["status_b"])
        detail = (cb if row["status_b"] not in ("ok", "missing") else ca if row["status_a"] not in ("ok", "missing")
                  else None)
        if detail is not None and detail.detail:
            row["detail"] = detail.detail
        for side, cell in (("a", ca), ("b", cb)):        # the side that has a time still shows it
            if row[f"status_{side}"] == "ok":
                _set_printed(row, side, cell, _times(cell))
        return row
    ta, tb = _times(ca), _times(cb)
    ma, mb = _set_printed(row, "a", ca, ta), _set_printed(row, "b", cb, tb)
    if ma is None or mb is None:
        row["verdict"], row["kind"] = "no timing", "other"
        return row
    row["ratio"] = mb / ma
    row["change"] = row["ratio"] - 1
    if len(ta) < 2 or len(tb) < 2:
        row["verdict"], row["kind"] = "not enough samples", "other"
        return row
    la, lb = _run_level(ca), _run_level(cb)
    if la and lb and la[0] == lb[0]:
        test = z_test(ma, mb, la[1], lb[1])
    else:
        test = mann_whitney_u(ta, tb)
    row["u"], row["p"], row["method"] = test["u"], test["p"], test["method"]
    if test["p"] >= alpha:
        row["verdict"], row["kind"] = "same (not significant)", "unchanged"
    elif abs(row["change"]) <= threshold:
        row["verdict"], row["kind"] = "same (within threshold)", "unchanged"
    elif row["change"] > 0:
        row["verdict"], row["kind"] = "slower", "regression"
    else:
        row["verdict"], row["kind"] = "faster", "improvement"
    return row


def diff(run_a: Run, run_b: Run, threshold: float, alpha: float) -> dict:
    """The whole diff as plain data (the json format prints exactly this)."""
    cells_a: dict[tuple, Cell] = {}
    for c in run_a.cells:
        cells_a.setdefault(_key(c), c)
    cells_b: dict[tuple, Cell] = {}
    for c in run_b.cells:
        cells_b.setdefault(_key(c), c)
    keys = list(cells_a) + [k for k in cells_b if k not in cells_a]
    rows = [compare_pair(cells_a.get(k), cells_b.get(k), threshold, alpha) for k in keys]
    a, b = run_info(run_a), run_info(run_b)
    count = {kind: sum(r["kind"] == kind for r in rows) for kind in ("regression", "improvement", "unchanged", "other")}
    methods = method_warnings(run_a, run_b)
    if not count["regression"] + count["improvement"] + count["unchanged"]:
        methods.append("nothing was compared: no cell is timed in both runs"
                       + (f" ({count['other']} listed as missing, failed or unsupported)" if count["other"] else ""))
    return {"a": a, "b": b, "test": TEST, "threshold": threshold, "alpha": alpha,
            "method_warnings": methods, "warnings": methods + warnings(a, b, threshold),
            "machine_drift": machine_drift(a, b),
            "rows": rows, "by_place": by_place(rows), "regressions": count["regression"], "improvements": count["improvement"],
            "unchanged": count["unchanged"], "not_compared": count["other"]}


# ------------------------------------------------------------------------------------ output
def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def summary_line(doc: dict) -> str:
    line = (f"{_plural(doc['regressions'], 'regression')}, {_plural(doc['improvements'], 'improvement')}, "
            f"{doc['unchanged']} unchanged")
    if doc["not_compared"]:
        line += f" ({doc['not_compared']} not compared)"
    return line


def _run_line(side: str, info: dict) -> str:
    bits = [f"run {info['id']}"]
    if info["label"]:
        bits[0] += f" \"{info['label']}\""
    bits += [info["created"] or "", f"suite {info['suite']}" if info["suite"] else "",
             f"device {info['device']}" if info["device"] else ""]
    return f"{side}: " + " · ".join(b for b in bits if b)


def header_lines(doc: dict) -> list[str]:
    return [_run_line("A", doc["a"]), _run_line("B", doc["b"]),
            f"test: {doc['test']}, alpha {doc['alpha']:g}; threshold ±{doc['threshold'] * 100:g} % change of the "
            "printed time (B / A − 1); a regression is slower beyond the threshold and significant, or ok in A and "
            "failed in B",
            *[f"warning: {w}" for w in doc["warnings"]]]


def fmt_times(a: float | None, b: float | None) -> list[str]:
    """Both printed times of a row in one unit (the one that suits the smaller), so they read side by side."""
    unit, scale = pick_unit([x for x in (a, b) if x is not None])
    return ["—" if x is None else f"{fmt_num(x * scale)} {unit}" for x in (a, b)]


def fmt_p(p: float | None) -> str:
    return "—" if p is None else f"{p:.2g}"


def fmt_change(change: float | None) -> str:
    return "—" if change is None else f"{change * 100:+.1f} %"


def estimator_word(rows: list[dict], side: str) -> str:
    """The estimator(s) a side's column shows, named (never "median" over p1 values): "p1",
    "median", or "p1 | median" where the side's cells differ (each row's is in the json and csv)."""
    names = list(dict.fromkeys(r[f"estimator_{side}"] for r in rows if r.get(f"estimator_{side}")))
    return " | ".join(sorted(names)) or "time"


def columns(doc: dict) -> list[Column]:
    """The table's columns, the time columns named by the estimator they show ("p1 A", "median B")."""
    rows = doc["rows"]
    return [Column("op", LEFT), Column("params", LEFT), Column("engine", LEFT), Column("target", LEFT),
            Column(f"{estimator_word(rows, 'a')} A"), Column(f"{estimator_word(rows, 'b')} B"),
            Column("change", unit="%"), Column("p"), Column("verdict", LEFT, styled=True)]


def params_text(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def table_title(doc: dict) -> str:
    return f"run {doc['a']['id']} → run {doc['b']['id']}"


def not_compared_notes(doc: dict) -> list[str]:
    return [f"{r['op']} {r['engine']}: {r['verdict']} — {r['detail']}" for r in doc["rows"] if r.get("detail")]


def diff_table(doc: dict) -> Table:
    """A row per cell pair (styled by its kind: regression, improvement, …); why a pair was not
    compared in the notes. Every column: the markdown form and a wide terminal (a narrow one:
    report/diff_terminal.py)."""
    table = Table(table_title(doc), columns(doc))
    for r in doc["rows"]:
        table.add([r["op"], params_text(r["params"]), r["engine"], r["target"],
                   *fmt_times(r["estimate_a_s"], r["estimate_b_s"]), fmt_change(r["change"]), fmt_p(r["p"]),
                   r["verdict"]], style=r["kind"])
    table.notes = not_compared_notes(doc)
    return table


CSV_FIELDS = ["run_a", "run_b", "op", "params", "engine", "target", "place_a", "place_b", "status_a", "status_b", "n_a", "n_b",
              "estimate_a_s", "estimate_b_s", "estimator_a", "estimator_b", "change", "u", "p", "method", "verdict", "kind"]


def csv_table(doc: dict) -> Table:
    """The diff as data: a row per cell pair, the fields of CSV_FIELDS."""
    return data_table(f"run {doc['a']['id']} → run {doc['b']['id']}", CSV_FIELDS,
                      ([doc["a"]["id"], doc["b"]["id"]] + [params_key(r["params"]) if f == "params" else r.get(f)
                                                           for f in CSV_FIELDS[2:]] for r in doc["rows"]))


def render_csv(doc: dict, out) -> None:
    out.write(Csv().render(csv_table(doc)))


def render_md(doc: dict, out, places: bool = False) -> None:
    out.write(f"# cryptobench diff: run {doc['a']['id']} → run {doc['b']['id']}\n\n")
    out.write("".join(f"- {printable(line, keep_newlines=False)}\n" for line in header_lines(doc)) + "\n")
    out.write(Markdown(heading=None).render(diff_table(doc)))    # the document's heading names the runs
    if places:
        out.write("\n" + Markdown().render(place_table(doc)))
    out.write(f"\n{summary_line(doc)}\n")


def place_table(doc: dict) -> Table:
    """The diff summed up per pair of places (--by-place)."""
    table = Table(f"run {doc['a']['id']} → run {doc['b']['id']} by place", [
        Column("place A", LEFT), Column("place B", LEFT), Column("cells"), Column("timed"),
        Column("median B/A"), Column("lowest"), Column("highest"), Column("regressions")])
    ratio = lambda x: "—" if x is None else f"{x:.3f}"
    for g in doc["by_place"]:
        table.add([g["place_a"] or "—", g["place_b"] or "—", str(g["cells"]), str(g["timed"]),
                   ratio(g["median_ratio"]), ratio(g["min_ratio"]), ratio(g["max_ratio"]), str(g["regressions"])])
    return table

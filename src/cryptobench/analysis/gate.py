"""`cryptobench gate BASE HEAD`: a regression gate for a library's maintainers (docs/gate.md).

Deterministic figures — a simulated cell's cycles and instructions, and every microcontroller
cell's stack and code size — do not vary from run to run, so any change is real: it is reported
exactly (sign, size, %), never tested, and named by function from the cells' records (the
per-function profile of `run --profile`, result.profile.rows; the per-function sizes,
result.code_size.functions). Measured cells (host, boards) keep `diff`'s statistics and
thresholds (diff.compare_pair). Before any cell is compared, the two runs' conditions are
checked: a different compiler, flags, device, clock, wait states, simulator model or recipe
makes the numbers incomparable, so the gate refuses and names the field rather than report a
false regression. The library's own version or commit differing is what the gate is for: it is
shown (libraries), never refused.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UsageError
from ..core.records import Cell, Run
from .diff import _key as cell_identity          # the one identity of a cell across two runs (diff's)
from .diff import compare_pair, method_warnings, run_info

REFUSED = "refused"
# the verdicts of a figure that is not one on a side (unfigured_metric)
LOST, BAD_BASE, NOT_COMPARED = "not a figure in HEAD", "not a figure in BASE", "not compared"
UNFIGURED = (LOST, BAD_BASE, NOT_COMPARED)


# ------------------------------------------------------------------------------------ thresholds
@dataclass(frozen=True)
class Limit:
    """How much a figure may grow before it is a regression: `value` percent of BASE (pct) or
    `value` in the figure's own unit (cycles, instructions, bytes, seconds)."""
    value: float
    pct: bool

    def text(self, unit: str = "") -> str:
        return f"{self.value:g} %" if self.pct else f"{self.value:g}{' ' + unit if unit else ''}"

    def exceeded(self, base: float, head: float) -> bool:
        """Whether HEAD grew beyond the limit (only growth is bad: every figure here is a cost)."""
        delta = head - base
        if delta <= 0:
            return False
        if not self.pct:
            return delta > self.value
        return base <= 0 or delta / base * 100 > self.value


def parse_limit(text: str, flag: str) -> Limit:
    """"N%" (percent of BASE) or "N" (absolute, in the metric's unit); N finite and >= 0."""
    s = str(text).strip()
    pct = s.endswith("%")
    try:
        value = float(s[:-1].strip() if pct else s)
    except ValueError:
        raise UsageError(f"{flag}: expected a percentage like 0% or 1.5%, or an absolute amount like 10, got {text!r}")
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{flag}: must be a finite amount >= 0 (e.g. 0%, 1% or 10), got {text!r}")
    return Limit(value, pct)


@dataclass(frozen=True)
class Metric:
    name: str          # key in the json and in limits
    label: str         # as tables print it
    unit: str
    flag: str          # the option that sets its limit
    simulated_only: bool   # deterministic only where the cell is simulated (cycles, instructions)


METRICS = (
    Metric("cycles", "cycles", "cycles", "--max-cycles", True),
    Metric("instructions", "instructions", "instructions", "--max-instructions", True),
    Metric("stack", "stack", "B", "--max-stack", False),
    Metric("code_size", "code size", "B", "--max-code-size", False),
)
TIME = Metric("time", "time", "s", "--max-time", False)      # measured cells: diff's test, not exact
DEFAULT_LIMITS = {"cycles": "0%", "instructions": "0%", "stack": "0%", "code_size": "0%", "time": "5%"}


ABSENT = object()      # a cell that has no such figure at all (a host cell's instructions)
# figures that cannot be 0: a completed operation takes at least one cycle, one instruction, some time
POSITIVE = ("cycles", "instructions", "time")


def metric_raw(cell: Cell, name: str):
    """A cell's deterministic figure as recorded: cycles per operation (the median over
    repetitions, which on the simulator are identical but for a halved op), instructions per
    operation, the stack's high-water mark, the flash its op adds; ABSENT where the record has no
    such key (a null, NaN or text is returned as it is: figure() judges it)."""
    r = cell.result
    if r is None:
        return ABSENT
    where, key = {"cycles": (r.cycles, "per_op_median"), "instructions": (r.sim, "instructions_per_op"),
                  "stack": (r.to_json(), "stack_bytes"), "code_size": (r.code_size, "flash_bytes")}[name]
    return where.get(key, ABSENT) if isinstance(where, dict) else ABSENT


def figure(value, name: str) -> tuple[float | None, str]:
    """(the value as a float, "") when it is a figure: a finite number >= 0, and > 0 for cycles
    and instructions; else (None, why not). A boolean is no number, whatever JSON says."""
    if value is ABSENT:
        return None, "missing"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"{'null' if value is None else repr(value)[:40]} is not a number"
    try:
        x = float(value)
    except OverflowError:
        return None, "too large to be a number"
    if not math.isfinite(x):
        return None, f"{x} is not a finite number"
    if x < 0 or (x == 0 and name in POSITIVE):
        return None, f"{value:g} is not a possible {name.replace('_', ' ')} figure" + (
            " (a completed operation takes at least one)" if x == 0 else "")
    return x, ""


def metric_value(cell: Cell, name: str) -> float | None:
    """A cell's figure when it is one (figure()), else None."""
    return figure(metric_raw(cell, name), name)[0]


# ------------------------------------------------------------------------------------ conditions
# (label, path into conditions.target): what makes two targets' numbers incomparable
TARGET_FIELDS = (("target kind", ("kind",)), ("board", ("board",)), ("core", ("core",)), ("cpu", ("cpu",)),
                 ("optimisation", ("opt",)), ("device profile", ("device",)), ("device options", ("device_options",)),
                 ("clock", ("clock_hz",)), ("simulator model", ("simulator", "model")),
                 ("simulator model version", ("simulator", "model_version")),
                 ("flash wait states", ("simulator", "flash_ws")), ("prefetch", ("simulator", "prefetch")),
                 ("flash width", ("simulator", "flash_width")), ("code in flash", ("simulator", "code_in_flash")),
                 ("multiplier", ("simulator", "fast_multiplier")))
# a library build's fields that are method, not the library: its version and source are what is gated
BUILD_FIELDS = (("compiler", "compiler"), ("flags", "cflags"), ("link flags", "ldflags"),
                ("library compiler", "library_compiler"), ("library cc", "library_cc"),
                ("library flags", "library_cflags"), ("_ALT code", "alt"), ("variants", "variants"),
                ("driver completion", "driver_completion"), ("cycle counter", "counter"))
COMMIT_KEYS = ("library_commit", "commit", "source_commit")      # where a build may record its commit


def _at(d: dict, path: tuple):
    for k in path:
        d = d.get(k) if isinstance(d, Mapping) else None     # the conditions' target is a view (TargetView)
    return d


def _shown(v) -> str:
    return "(none)" if v is None else str(v)


def mismatches(base: Run, head: Run) -> list[str]:
    """Why BASE's and HEAD's numbers are not comparable, one line each naming the field."""
    out = []
    ta, tb = base.conditions.target, head.conditions.target
    if bool(ta) != bool(tb):
        return [f"target differs: BASE {ta.get('kind') if ta else 'host'}, HEAD {tb.get('kind') if tb else 'host'}"]
    for label, path in TARGET_FIELDS:
        a, b = _at(ta, path), _at(tb, path)
        if a != b:
            out.append(f"{label} differs: BASE {_shown(a)}, HEAD {_shown(b)}")
    ba, bb = base.conditions.get("builds") or {}, head.conditions.get("builds") or {}
    for lib in sorted(ba.keys() & bb.keys()):
        for label, key in BUILD_FIELDS:
            a, b = (ba[lib] or {}).get(key), (bb[lib] or {}).get(key)
            if a != b:
                out.append(f"{lib}: {label} differ{'s' if not label.endswith('s') else ''}: "
                           f"BASE {_shown(a)}, HEAD {_shown(b)}")
        ra, rb = (Path(str((ba[lib] or {}).get("recipe") or "")).name or None,
                  Path(str((bb[lib] or {}).get("recipe") or "")).name or None)
        if ra != rb:
            out.append(f"{lib}: recipe differs: BASE {_shown(ra)}, HEAD {_shown(rb)}")
    # MCU cells' inputs (keys, scalars, nonces) come from the run's seed (docs/firmware.md): another seed
    # measures other work (ECC verify cycles differ by up to 3 %), which is not the library's change
    sa, sb = base.plan.options.seed, head.plan.options.seed
    if ta and sa != sb:
        out.append(f"input seed differs: BASE {_shown(sa)}, HEAD {_shown(sb)} (--seed: other keys, other work)")
    if not ta or ta.on_board or ta.on_places:      # measured times: diff's method checks, the device
        a_dev, b_dev = run_info(base)["device"], run_info(head)["device"]
        if not ta and a_dev != b_dev:
            out.append(f"host cpu differs: BASE {_shown(a_dev)}, HEAD {_shown(b_dev)}")
        out += method_warnings(base, head)
    return out


def _version(build: dict) -> str:
    v = str(build.get("library_version") or build.get("version") or "?")
    commit = next((build[k] for k in COMMIT_KEYS if build.get(k)), None)
    return f"{v} ({str(commit)[:12]})" if commit else v


def libraries(base: Run, head: Run) -> list[dict]:
    """Each library (MCU builds) or engine (host) on both sides: its version and commit or source
    in BASE and in HEAD — what changed between them, shown beside the verdict."""
    out = []
    ba, bb = base.conditions.get("builds") or {}, head.conditions.get("builds") or {}
    for lib in list(ba) + [n for n in bb if n not in ba]:
        a, b = ba.get(lib) or {}, bb.get(lib) or {}
        row = {"name": lib, "base": _version(a) if a else None, "head": _version(b) if b else None}
        if a.get("library_source") != b.get("library_source"):
            row["source_base"], row["source_head"] = a.get("library_source"), b.get("library_source")
        out.append(row)
    if not ba and not bb:
        ea, eb = base.conditions.engines, head.conditions.engines
        for name in list(ea) + [n for n in eb if n not in ea]:
            va, vb = (ea.get(name) or {}).get("version"), (eb.get(name) or {}).get("version")
            out.append({"name": name, "base": None if va is None else str(va), "head": None if vb is None else str(vb)})
    return out


# ------------------------------------------------------------------------------------ attribution
def function_changes(base_profile: dict, head_profile: dict) -> list[dict]:
    """The functions whose cycles, instructions or calls differ between two cells' profiles
    (result.profile.rows), largest |Δcycles| first (then |Δinstructions|, then name), with
    both sides' figures; a function on one side only has None on the other."""
    rows_a = {r["function"]: r for r in base_profile.get("rows") or []}
    rows_b = {r["function"]: r for r in head_profile.get("rows") or []}
    out = []
    for name in list(rows_a) + [n for n in rows_b if n not in rows_a]:
        a, b = rows_a.get(name) or {}, rows_b.get(name) or {}
        fig = {k: (a.get(k), b.get(k)) for k in ("cycles", "instructions", "calls")}
        if all(x == y for x, y in fig.values()):
            continue
        row = {"function": name}
        for k, (x, y) in fig.items():
            row[f"{k}_base"], row[f"{k}_head"] = x, y
            row[f"{k}_change"] = (y or 0) - (x or 0)
        out.append(row)
    out.sort(key=lambda r: (-abs(r["cycles_change"]), -abs(r["instructions_change"]), r["function"]))
    return out


def size_changes(base_code: dict, head_code: dict) -> list[dict]:
    """The functions whose size differs between two cells' code_size.functions, largest |Δ| first."""
    fa, fb = base_code.get("functions") or {}, head_code.get("functions") or {}
    out = [{"function": n, "bytes_base": fa.get(n), "bytes_head": fb.get(n),
            "bytes_change": (fb.get(n) or 0) - (fa.get(n) or 0)}
           for n in list(fa) + [n for n in fb if n not in fa] if fa.get(n) != fb.get(n)]
    out.sort(key=lambda r: (-abs(r["bytes_change"]), r["function"]))
    return out


def attribution(ca: Cell, cb: Cell, changed: set[str]) -> dict:
    """Where a cell's change is: the functions whose cycles, instructions or calls differ between
    the two profiles, and those whose size differs between the two code_size.functions — looked
    at even where the totals are equal (a function may grow into the section's alignment padding,
    or trade cycles with another); a note where a total changed and a side has no record."""
    out: dict = {}
    pa, pb = ca.result.get("profile"), cb.result.get("profile")
    if pa and pb:
        funcs = function_changes(pa, pb)
        if funcs or changed & {"cycles", "instructions"}:
            out["functions"], out["ops_in_window"] = funcs, pb.get("ops_in_window", 1)
    elif changed & {"cycles", "instructions"}:
        out["functions_note"] = ("no per-function profile on " + " and ".join(
            s for s, p in (("BASE", pa), ("HEAD", pb)) if not p) + " (run the simulator with --profile)")
    ka, kb = ca.result.code_size, cb.result.code_size
    if "functions" in ka and "functions" in kb:
        sizes = size_changes(ka, kb)
        if sizes or "code_size" in changed:
            out["sizes"] = sizes
            if ka.get("functions_omitted") or kb.get("functions_omitted"):
                out["sizes_note"] = "only each side's largest functions are recorded (code_size.functions_omitted)"
    elif "code_size" in changed:
        out["sizes_note"] = ("no per-function sizes on " + " and ".join(
            s for s, k in (("BASE", ka), ("HEAD", kb)) if "functions" not in k) + " (cells built before gate existed)")
    return out


# ------------------------------------------------------------------------------------ the cells
def compare_metric(metric: Metric, base: float, head: float, limit: Limit) -> dict:
    """One figure of a pair, exactly: its change, that change in % of BASE, and the verdict."""
    delta = head - base
    row = {"metric": metric.name, "unit": metric.unit, "base": base, "head": head, "change": delta,
           "change_pct": delta / base * 100 if base else None, "limit": limit.text(metric.unit)}
    if delta == 0:
        row["verdict"] = "same"
    elif delta < 0:
        row["verdict"] = "improvement"
    else:
        row["verdict"] = "regression" if limit.exceeded(base, head) else "within threshold"
    return row


def unfigured_metric(metric: Metric, a, b) -> dict | None:
    """The row of a figure that is not a figure on a side (figure()), or None where both are
    figures or neither side records it:
    - HEAD has none (missing, null, NaN, text, negative) where BASE has one: LOST, a regression —
      a head that lost its figures is no pass;
    - BASE records one that is not a figure: BAD_BASE, and the gate refuses (HEAD's figure has
      nothing to be held against);
    - BASE has no such key and HEAD has a figure (a figure newer than BASE): NOT_COMPARED, shown."""
    (fa, why_a), (fb, why_b) = figure(a, metric.name), figure(b, metric.name)
    if (fa is not None and fb is not None) or (a is ABSENT and b is ABSENT):
        return None
    row = {"metric": metric.name, "unit": metric.unit, "base": fa, "head": fb, "change": None, "change_pct": None,
           "limit": None}
    if fa is not None:
        row["verdict"], row["why"] = LOST, f"HEAD's {metric.label}: {why_b}"
    elif a is ABSENT and fb is not None:
        row["verdict"], row["why"] = NOT_COMPARED, f"BASE has no {metric.label}"
    else:
        row["verdict"], row["why"] = BAD_BASE, f"BASE's {metric.label}: {why_a}"
    return row


def _time_unfigured(ca: Cell, cb: Cell) -> dict | None:
    """A measured pair whose reported time is not a figure on a side: its row, as unfigured_metric's
    (diff itself would call such a pair "no timing" or, with NaN, unchanged)."""
    a, b = (c.reported_time() for c in (ca, cb))
    return unfigured_metric(TIME, ABSENT if a is None else a[0], ABSENT if b is None else b[0])


def _measured(ca: Cell, cb: Cell, limit: Limit, alpha: float) -> dict | None:
    """diff's row for a pair with times that are measured (not simulated): its test and verdict; an
    absolute --max-time is a change in seconds, tested as diff tests (threshold 0) then bounded."""
    row = compare_pair(ca, cb, limit.value / 100 if limit.pct else 0.0, alpha)
    if row["estimate_a_s"] is None and row["estimate_b_s"] is None:
        return None                     # QEMU: no times at all
    if not limit.pct and row["kind"] == "regression" and row["estimate_b_s"] is not None \
            and row["estimate_b_s"] - row["estimate_a_s"] <= limit.value:
        row["verdict"], row["kind"] = "same (within threshold)", "unchanged"
    return row


def gate_pair(ca: Cell | None, cb: Cell | None, limits: dict[str, Limit], alpha: float) -> dict:
    """One cell's row: its deterministic figures compared exactly, its measured time as diff does,
    the functions its change is in, and its kind (regression, improvement, changed, unchanged,
    added, removed, other)."""
    c = cb if cb is not None else ca
    row = {"op": c.op, "params": c.params.to_dict(), "engine": c.engine, "target": c.target,
           "provenance": c.provenance, "metrics": [], "measured": None, "attribution": {}}
    if ca is None or cb is None:
        row["kind"], row["verdict"] = ("added", "only in HEAD") if ca is None else ("removed", "only in BASE")
        return row
    if not (ca.ok and cb.ok and ca.kat != "fail" and cb.kat != "fail"):
        d = compare_pair(ca, cb, 0.0, alpha)        # diff's words for a side that failed
        row["kind"] = "regression" if d["kind"] == "regression" else "other"
        row["verdict"] = d["verdict"] + (f" — {d['detail']}" if d.get("detail") else "")
        return row
    for m in METRICS:
        if m.simulated_only and (ca.provenance != "simulated" or cb.provenance != "simulated"):
            continue
        a, b = metric_raw(ca, m.name), metric_raw(cb, m.name)
        bad = unfigured_metric(m, a, b)
        if bad is not None:
            row["metrics"].append(bad)
        elif a is not ABSENT:
            row["metrics"].append(compare_metric(m, float(a), float(b), limits[m.name]))
    if ca.provenance != "simulated" and cb.provenance != "simulated":
        bad = _time_unfigured(ca, cb)
        if bad is not None:
            row["metrics"].append(bad)
        else:
            row["measured"] = _measured(ca, cb, limits["time"], alpha)
    verdicts = [x["verdict"] for x in row["metrics"]] + ([row["measured"]["kind"]] if row["measured"] else [])
    compared = [x for x in row["metrics"] if x["verdict"] not in UNFIGURED] + (
        [row["measured"]] if row["measured"] and row["measured"]["kind"] != "other" else [])
    changed = {x["metric"] for x in row["metrics"] if x["verdict"] not in ("same", *UNFIGURED)}
    row["attribution"] = att = attribution(ca, cb, changed)
    whys = "; ".join(x["why"] for x in row["metrics"] if x["verdict"] in (LOST, BAD_BASE))
    if LOST in verdicts:
        row["kind"], row["verdict"] = "regression", f"HEAD lost figures: {whys}"
        return row
    if BAD_BASE in verdicts or not compared:
        why = whys or (row["measured"]["verdict"] if row["measured"] else "no figure on both sides")
        row["kind"], row["verdict"] = "other", f"not compared: {why}"
        return row
    if "regression" in verdicts:
        row["kind"] = "regression"
    elif "improvement" in verdicts:
        row["kind"] = "improvement"
    elif changed or att.get("functions") or att.get("sizes"):
        row["kind"] = "changed"
    else:
        row["kind"] = "unchanged"
    row["verdict"] = {"changed": "changed within threshold" if changed else "functions changed, totals the same"}.get(
        row["kind"], row["kind"])
    return row


def gate(base: Run, head: Run, limits: dict[str, Limit], alpha: float = 0.01, fail_on_missing: bool = False,
         base_file: str | None = None, head_file: str | None = None) -> dict:
    """The gate as plain data (the json format prints exactly this); verdict pass, fail or refused.
    base_file, head_file: the run documents read (gate --json), else the runs are stored ones."""
    doc = {"base": {**run_info(base), "id": base.id, "file": base_file,
                    "name": f"{base_file} (run {base.id})" if base_file else f"run {base.id}"},
           "head": {**run_info(head), "id": head.id, "file": head_file,
                    "name": f"{head_file} (run {head.id})" if head_file else f"run {head.id}"},
           "libraries": libraries(base, head),
           "limits": {m: lim.text(next((x.unit for x in METRICS if x.name == m), "s")) for m, lim in limits.items()},
           "alpha": alpha, "fail_on_missing": fail_on_missing, "refusal": mismatches(base, head), "cells": []}
    if not doc["refusal"]:
        cells_a: dict[tuple, Cell] = {}
        for c in base.cells:
            cells_a.setdefault(cell_identity(c), c)
        cells_b: dict[tuple, Cell] = {}
        for c in head.cells:
            cells_b.setdefault(cell_identity(c), c)
        keys = list(cells_a) + [k for k in cells_b if k not in cells_a]
        doc["cells"] = [gate_pair(cells_a.get(k), cells_b.get(k), limits, alpha) for k in keys]
    count = {k: sum(r["kind"] == k for r in doc["cells"])
             for k in ("regression", "improvement", "changed", "unchanged", "added", "removed", "other")}
    doc["counts"] = count
    doc["regressions"] = count["regression"] + (count["added"] + count["removed"] if fail_on_missing else 0)
    doc["refused_for"] = "conditions" if doc["refusal"] else None
    if not doc["refusal"] and not doc["regressions"]:
        doc["refusal"] = figure_refusals(doc["cells"])
        doc["refused_for"] = "figures" if doc["refusal"] else None
    doc["verdict"] = REFUSED if doc["refusal"] else ("fail" if doc["regressions"] else "pass")
    return doc


def figure_refusals(cells: list[dict]) -> list[str]:
    """Why a gate without regressions still cannot pass: a BASE figure that is not a figure (HEAD's
    cannot be held against it), or no figure compared in any cell (a gate of nothing)."""
    out = [f"{cell_text(r)}: {m['why']}" for r in cells for m in r["metrics"] if m["verdict"] == BAD_BASE]
    if not out and not any(r["kind"] in ("regression", "improvement", "changed", "unchanged") for r in cells):
        out.append("no cell has a figure on both sides: nothing was compared")
    return out


def cell_text(r: dict) -> str:
    """A cell row's name: op, parameters, engine, target."""
    params = " ".join(f"{k}={v}" for k, v in r["params"].items())
    return " ".join(str(x) for x in (r["op"], params, r["engine"], r["target"]) if x)

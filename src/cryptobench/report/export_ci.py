"""`cryptobench export --format bencher | github-action-benchmark`: stored runs in the two formats that
continuous-benchmarking dashboards read (docs/gate.md, "CI").

- Bencher Metric Format (BMF, bencher.dev/docs/reference/bencher-metric-format): one JSON object,
  benchmark name -> measure -> {"value", "lower_value"?, "upper_value"?}; `bencher run --adapter json`.
- github-action-benchmark's `customSmallerIsBetter` tool (its src/extract.ts `BenchmarkResult`): a JSON
  array of {"name", "unit", "value", "range"?, "extra"?}, one entry per cell and measure.

Every figure is read from the cell's export row (export.cell_row), so these formats and the flat
table never disagree. Only ok cells are exported: a failed, unsupported or partial cell has no
figure a dashboard could plot, and a zero would read as a huge improvement; the command names the
cells left out on stderr. An interval (lower/upper, range) is given only where the cell stores one
and is not simulated: a simulated cell's cycles, stack and size are deterministic, so a band
around them would invite exactly the noise thresholds the exact gate replaces."""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..catalog.ops import OPS
from ..core.errors import UsageError
from ..core.printable import printable
from ..core.records import OK, Cell, Run
from .export import cell_row

# (measure slug, unit, the export column of the value, (lower, upper) columns or None, scale to the unit).
# `latency` is Bencher's built-in measure, in nanoseconds, so the time lands on the project's default
# plot with its unit; the others are created by Bencher on first use, their unit in the slug.
MEASURES: list[tuple[str, str, str, tuple[str, str] | None, float]] = [
    ("latency", "ns", "estimate_s", ("estimate_lo_s", "estimate_hi_s"), 1e9),
    ("cycles", "cycles", "cycles_per_op", None, 1.0),
    ("instructions", "instructions", "sim_instructions_per_op", None, 1.0),
    ("stack-bytes", "bytes", "stack_bytes", None, 1.0),
    ("code-bytes", "bytes", "code_flash_bytes", None, 1.0),
    ("energy-joules", "J", "energy_per_op_j", ("energy_ci95_lo_j", "energy_ci95_hi_j"), 1.0),
]

# counters that count the core's cycles: a host's tsc / cntvct tick at a fixed rate whatever the
# core's clock, so their ticks are time (already the latency measure), not cycles
CORE_CYCLE_COUNTERS = ("model", "dwt")


@dataclass
class Metric:
    measure: str
    unit: str
    value: int | float
    interval: tuple[float, float] | None = None


@dataclass
class CiCell:
    """One exported cell: its stable name, its metrics and the conditions a dashboard shows beside them."""
    name: str
    run_id: int
    metrics: list[Metric]
    conditions: dict[str, str] = field(default_factory=dict)


def _text(value) -> str:
    """A name part from a run (data, not markup): on one line, every control character visible."""
    return printable(str(value), keep_newlines=False)


def benchmark_name(cell: Cell) -> str:
    """op/param=value/…/engine/target, the parameters in the catalog's order (others after, sorted):
    the same cell gets the same name in every run, so a dashboard's series continues. A simulated
    cell's target names its core and device (sim:cortex-m4:stm32f407); a host cell's is `host`
    (the machine is a Bencher testbed, and in each entry's extra)."""
    op = OPS.get(cell.op)
    order = op.param_names if op else []
    names = [n for n in order if n in cell.params] + sorted(n for n in cell.params if n not in order)
    parts = [cell.op, *(f"{n}={cell.params[n]}" for n in names), cell.engine, cell.target]
    return "/".join(_text(p) for p in parts)


def _number(row: dict, column: str) -> int | float | None:
    v = row.get(column)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _scaled(v: int | float, scale: float) -> int | float:
    """A byte count stays an integer in the JSON; a scaled value (seconds to ns) is a float."""
    return v if scale == 1.0 and isinstance(v, int) else v * scale


def _metrics(row: dict) -> list[Metric]:
    out = []
    deterministic = row.get("provenance") == "simulated"
    for slug, unit, column, bounds, scale in MEASURES:
        value = _number(row, column)
        if value is None:
            continue
        if slug == "cycles" and row.get("cycle_counter") not in CORE_CYCLE_COUNTERS:
            continue
        interval = None
        if bounds and not deterministic:
            lo, hi = _number(row, bounds[0]), _number(row, bounds[1])
            if lo is not None and hi is not None:
                interval = (lo * scale, hi * scale)
        out.append(Metric(slug, unit, _scaled(value, scale), interval))
    return out


def _library_commit(row: dict) -> str | None:
    """The library's commit where the run recorded one (a --library-source DIR@REF build)."""
    eng = json.loads(row["engine_conditions_json"]) if row.get("engine_conditions_json") else {}
    for key in ("library_commit", "commit"):
        if isinstance(eng.get(key), str) and eng[key]:
            return eng[key]
    return None


def _band(row: dict) -> str | None:
    """A simulated cell's band against published silicon (targets/mcu/sim/error_band.py), or why none."""
    if row.get("sim_error_band_validated") is None:
        return None
    if not row["sim_error_band_validated"]:
        return f"unvalidated ({row.get('sim_error_band_class')})"
    return f"± {row.get('sim_error_band_pct')} % ({row.get('sim_error_band_class')}, {row.get('sim_error_band_rows')} rows)"


def _conditions(run: Run, row: dict) -> dict[str, str]:
    """What a dashboard entry says about how its numbers were obtained (the rules: every number says
    what it is, its estimator and its conditions)."""
    clock = row.get("target_clock_hz")
    pairs = [
        ("provenance", row.get("provenance")),
        ("estimator", row.get("estimator")),
        ("interval", None if row.get("provenance") == "simulated" else "95 % repeat interval"),
        ("device", row.get("device")),
        ("clock", f"{clock / 1e6:g} MHz" if isinstance(clock, (int, float)) and clock > 0 else row.get("clock")),
        ("compiler", row.get("compiler")),
        ("cflags", row.get("cflags")),
        ("library", row.get("engine")),
        ("library version", row.get("engine_version")),
        ("library commit", _library_commit(row)),
        ("cycle counter", row.get("cycle_counter")),
        ("simulator error band", _band(row)),
        ("energy", row.get("energy_provenance")),
        ("cryptobench", row.get("cryptobench_version")),
        ("run", run.id),
    ]
    return {k: _text(v) for k, v in pairs if v not in (None, "")}


def _cell_text(cell: Cell) -> str:
    params = " ".join(f"{k}={v}" for k, v in cell.params.items())
    return _text(" ".join(p for p in (cell.op, params, cell.engine, cell.target) if p))


def ci_cells(runs: Iterable[Run]) -> tuple[list[CiCell], list[str]]:
    """The runs' ok cells with at least one figure, and one line per cell left out (for stderr).
    A name met twice (the same cell in two exported runs) is a usage error: a dashboard takes one
    value per benchmark and commit."""
    cells: list[CiCell] = []
    left_out: list[str] = []
    seen: dict[str, int] = {}
    for run in runs:
        for cell in run.cells:
            if cell.status != OK:
                why = f": {_text(cell.detail)}" if cell.detail else ""
                left_out.append(f"left out (run {run.id}, {cell.status}): {_cell_text(cell)}{why}")
                continue
            row = cell_row(run, cell)
            metrics = _metrics(row)
            if not metrics:
                left_out.append(f"left out (run {run.id}, no figure): {_cell_text(cell)}")
                continue
            name = benchmark_name(cell)
            if name in seen:
                raise UsageError(f"{name} is in runs {seen[name]} and {run.id}: export one run per "
                                 f"dashboard upload (a dashboard takes one value per benchmark and commit)")
            seen[name] = run.id
            cells.append(CiCell(name, run.id, metrics, _conditions(run, row)))
    return cells, left_out


def bencher_doc(cells: list[CiCell]) -> dict:
    """Bencher Metric Format: {benchmark: {measure: {"value", "lower_value"?, "upper_value"?}}}."""
    doc: dict = {}
    for c in cells:
        entry = doc[c.name] = {}
        for m in c.metrics:
            v = {"value": m.value}
            if m.interval is not None:
                v.update(lower_value=m.interval[0], upper_value=m.interval[1])
            entry[m.measure] = v
    return doc


def _range(value: float, interval: tuple[float, float]) -> str:
    """The interval as github-action-benchmark's range text: ± its larger half (the interval of a
    median need not be symmetric; the larger side is the honest one-number summary)."""
    half = max(value - interval[0], interval[1] - value, 0.0)
    return f"± {half:.6g}"


def github_action_benchmark_doc(cells: list[CiCell]) -> list[dict]:
    """customSmallerIsBetter entries: one per cell and measure, named `<benchmark> (<measure>)`."""
    out = []
    for c in cells:
        extra = "\n".join(f"{k}: {v}" for k, v in c.conditions.items())
        for m in c.metrics:
            entry: dict = {"name": f"{c.name} ({m.measure})", "unit": m.unit, "value": m.value}
            if m.interval is not None:
                entry["range"] = _range(m.value, m.interval)
            entry["extra"] = extra
            out.append(entry)
    return out

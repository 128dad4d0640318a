"""The data behind the report's figures, without matplotlib: sweeps over the payload length per
(operation, fixed parameters) and engine, gathered from one or several stored runs; engine colours;
compact parameter and unit text. figures/ draws them."""
from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass, field

from ..catalog.ops import OPS
from ..core.records import UNSUPPORTED, Cell, Energy, Run
from .sweep_summary import MAX_LINES, OMITTED_KEPT, RunSummary, Tally
from ..targets.host.parallel import is_parallel_run

# --- colours: one per engine, the same in every figure ----------------------------------------------
TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf"]
KNOWN_ENGINES = ["openssl-hw", "openssl-sw", "mbedtls", "libsodium", "pkcs11", "tpm", "bearssl", "system",
                 "monocypher", "cifra"]
EXTRA = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1",
         "#636363", "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b", "#ce6dbd", "#9c9ede"]
LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def engine_color(engine: str) -> str:
    """A fixed colour per engine name: the known engines in tab10 order, any other by a stable hash."""
    if engine in KNOWN_ENGINES:
        return TAB10[KNOWN_ENGINES.index(engine)]
    return EXTRA[zlib.crc32(engine.encode()) % len(EXTRA)]


# --- text ----------------------------------------------------------------------------------------------
CURVES = {"p256": "P-256", "p384": "P-384", "p521": "P-521", "x25519": "X25519"}


def param_text(name: str, value) -> str:
    """One parameter, short: '64 B', '256-bit key', 'RSA-2048', 'P-256'."""
    if name == "bytes":
        return f"{value} B"
    if name == "key_bits":
        return f"{value}-bit key"
    if name == "aad_bytes":
        return f"AAD {value} B"
    if name == "tag_bytes":
        return f"tag {value} B"
    if name == "nonce_bytes":
        return f"nonce {value} B"
    if name == "rsa_bits":
        return f"RSA-{value}"
    if name == "curve":
        return CURVES.get(str(value), str(value))
    if name == "rekey":
        return "key set per op" if int(value) else "key set once"
    if name == "parallel":
        return f"N={value}"
    if name == "source":
        return f"source {value}"
    return f"{name}={value}"


def params_short(op_id: str, params: dict, skip_defaults: bool = True) -> str:
    """The parameters as a short phrase, defaults left out (the caption lists them all)."""
    op = OPS.get(op_id)
    defaults = op.defaults() if op else {}
    bits = [param_text(k, v) for k, v in params.items()
            if not (skip_defaults and k in defaults and defaults[k] == v and k not in ("key_bits", "rsa_bits", "curve"))]
    return ", ".join(bits)


def params_full(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "none"


def op_title(op_id: str) -> str:
    op = OPS.get(op_id)
    return op.title if op else op_id


def slug(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", str(text).lower())).strip("-") or "x"


def energy_unit(joules: list[float]) -> tuple[str, float]:
    smallest = min((j for j in joules if j and j > 0), default=1e-6)
    for bound, name, scale in ((1e-6, "nJ", 1e9), (1e-3, "µJ", 1e6), (1.0, "mJ", 1e3)):
        if smallest < bound:
            return name, scale
    return "J", 1.0


def fmt_len(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e9:
        return str(int(x))
    return f"{x:.4g}"


# --- sweeps ----------------------------------------------------------------------------------------------
@dataclass
class Point:
    x: float
    y: float
    lo: float | None
    hi: float | None
    n: int | None
    k: int | None = None
    flags: list = field(default_factory=list)
    estimator: str = "median"    # what y is: the name Result.reported_time gives ('p1', 'median')


@dataclass
class Series:
    run_id: int | None           # None: a summary line over n_runs runs (sweep_summary)
    engine: str
    target: str
    provenance: set = field(default_factory=set)
    points: list = field(default_factory=list)
    label: str = ""
    mode: str = "batched"        # or "single-shot": each sample one operation (run --single, a suite's single)
    n_runs: int = 1


@dataclass
class Group:
    op: str
    fixed: dict
    series: list = field(default_factory=list)
    runs: list = field(default_factory=list)
    omitted: list = field(default_factory=list)     # "engine: why" for cells of the group not plotted
    omitted_more: int = 0                           # cells not plotted beyond the OMITTED_KEPT reasons
    tally: Tally = field(default_factory=Tally)     # what the caption says of every point
    summary: RunSummary = field(default_factory=RunSummary)
    summarised: bool = False                        # drawn from `summary`: more than MAX_LINES series
    estimators: set = field(default_factory=set)    # the estimators its points' y are (the tables' numbers)

    @property
    def xs(self) -> list[float]:
        return sorted({p.x for s in self.series for p in s.points})


def _energy_ci(en: Energy) -> tuple[float | None, float | None]:
    ci = en.get("ci95")
    st = en.stats
    if not ci and isinstance(st.get("energy_j"), dict):
        ci = st["energy_j"].get("ci95")
    if not ci:
        ci = st.get("ci95")
    if ci and len(ci) == 2 and ci[0] is not None and ci[1] is not None:
        return float(ci[0]), float(ci[1])
    return None, None


def _why(cell: Cell) -> str:
    if cell.status == UNSUPPORTED:
        word = "unsupported"
    elif cell.kat == "fail":
        word = "KAT FAIL"
    elif not cell.ok:
        word = "failed"
    else:
        word = "no figure"
    detail = (cell.detail or "").strip()
    return word + (f" — {detail}" if detail and word != "no figure" else "")


def cell_point(cell: Cell, metric: str) -> tuple[Point | None, str | None]:
    """(point, provenance) of an ok cell for `metric` ('time', 'energy', 'cycles'), or (None, None)."""
    r = cell.result
    x = float(cell.params["bytes"])
    if r is None:
        return None, None
    if metric == "time":
        # the number the tables print (the estimate, e.g. p1, with its repeat interval), not the median
        shown = r.reported_time()
        if shown is None or not shown[0] or shown[0] <= 0:
            return None, None
        value, (lo, hi), estimator = shown
        if not r.estimate and not r.time_s.get("ci95"):
            lo = hi = None                  # no interval stored (reported_time pads it with the value)
        return Point(x, float(value), lo, hi, r.n, r.k, r.flags, estimator), cell.provenance
    if metric == "cycles":
        cyc = r.cycles.get("per_op_median")
        if not cyc or cyc <= 0:
            return None, None
        t, hz = r.time_s, r.cycles.get("counter_hz")
        lo = hi = None
        if t.get("ci95") and t.get("median") and hz:
            # the interval of the median time, in cycles of the same clock
            lo, hi = t["ci95"][0] * cyc / t["median"], t["ci95"][1] * cyc / t["median"]
        return Point(x, float(cyc), lo, hi, r.n, r.k, r.flags), cell.provenance
    en = r.energy
    if en is None or not en.usable:
        return None, None
    lo, hi = _energy_ci(en)
    n = en.stats.get("n")
    if n is None and isinstance(en.stats.get("energy_j"), dict):
        n = en.stats["energy_j"].get("n")
    return Point(x, float(en.per_op_j), lo, hi, n, None, en.flags), en.provenance


def is_mcu_cell(cell: Cell) -> bool:
    return (cell.target or "host") != "host"


def _omitted(c: Cell, metric: str, who: str) -> str | None:
    """Why a cell of a sweep group has no point of `metric`, as the caption's "Not shown" says it."""
    if not c.ok:
        where = "" if c.status == UNSUPPORTED else f" at {c.params['bytes']} B"
        return f"{who}{where}: {_why(c)}"
    if metric == "energy" and c.energy is not None:
        return f"{who} at {c.params['bytes']} B: energy not above the idle baseline's noise"
    if metric == "time":
        return f"{who} at {c.params['bytes']} B: no time"
    if metric == "cycles" and (c.result is None or c.result.get("time_s") is None):
        return f"{who}: no cycle count (functional target)"
    return None


class Sweeps:
    """The sweep groups of one metric, fed a run at a time (`add`), so that a report over many runs
    never holds their cells: per (op, parameters other than bytes), every (run, engine, target)
    with ok cells of `metric` over params['bytes']; past MAX_LINES of them, a summary per engine
    over the runs instead (sweep_summary: memory that does not grow with the runs). 'time' takes
    host cells, 'cycles' microcontroller cells (a host's TSC counts reference cycles, not core
    clocks), 'energy' both. Parallel (scaling) runs are left out: their lengths do not vary. Kept
    beside the points for the captions: each run's conditions sentence, and per (run, op) the
    cycle counters and the energy methods its cells name."""

    def __init__(self, metric: str, n_runs: int):
        self.metric, self.multi = metric, n_runs > 1
        self.groups: dict = {}
        self.captions: dict[int, str] = {}
        self.counters: dict[tuple[int, str], set] = {}
        self.methods: dict[tuple[int, str], set] = {}

    def add(self, run: Run, caption: str = "") -> None:
        self.captions[run.id] = caption
        if is_parallel_run(run):
            return
        for c in run.cells:
            self._notes(run.id, c)
            if "bytes" not in c.params or (is_mcu_cell(c) if self.metric == "time" else
                                           self.metric == "cycles" and not is_mcu_cell(c)):
                continue
            self._add_cell(run, c)

    def _notes(self, run_id: int, c: Cell) -> None:
        if self.metric == "cycles" and c.result is not None:
            self.counters.setdefault((run_id, c.op), set()).add(c.result.cycles.get("counter") or "?")
        if self.metric == "energy" and c.ok and c.energy is not None:
            self.methods.setdefault((run_id, c.op), set()).add(c.energy.get("method", ""))

    def _add_cell(self, run: Run, c: Cell) -> None:
        fixed = {k: v for k, v in c.params.items() if k != "bytes"}
        key = (c.op, json.dumps(fixed, sort_keys=True))
        g = self.groups.setdefault(key, Group(c.op, fixed))
        if not g.runs or g.runs[-1] != run.id:          # runs come one at a time
            g.runs.append(run.id)
        point, prov = cell_point(c, self.metric) if c.ok else (None, None)
        if point is None:
            _note_omitted(g, _omitted(c, self.metric, c.engine + (f" (run {run.id})" if self.multi else "")))
            return
        mode = timing_mode(run, c)
        g.tally.add(point.n, point.k, point.flags)
        g.estimators.add(point.estimator)
        g.summary.add(run.id, (c.engine, c.target, mode), point.x, point.y, prov or "measured")
        if not g.summarised and g.summary.n_series > MAX_LINES:
            g.summarised, g.series = True, []           # the runs' own points go: the summary draws them
        if g.summarised:
            return
        s = next((s for s in g.series
                  if (s.run_id, s.engine, s.target, s.mode) == (run.id, c.engine, c.target, mode)), None)
        if s is None:
            s = Series(run.id, c.engine, c.target, mode=mode)
            g.series.append(s)
        s.points.append(point)
        s.provenance.add(prov or "measured")

    def result(self) -> list[Group]:
        """The groups where the length takes at least two values, their series labelled."""
        out = []
        for g in self.groups.values():
            if g.summarised:
                g.series = summary_series(g.summary)
            for s in g.series:
                s.points.sort(key=lambda p: p.x)
            if len(g.xs) >= 2 and any(len(s.points) >= 2 for s in g.series):
                label_series(g.series)
                out.append(g)
        return merge_single_engine(out)

    def caption(self, ids) -> str:
        """The conditions of the runs a figure draws on, one sentence each (captions.runs_caption)."""
        return " ".join(self.captions[i] for i in ids if self.captions.get(i))

    def counters_of(self, g: Group) -> set:
        return set().union(*(self.counters.get((r, g.op), set()) for r in g.runs))

    def methods_of(self, g: Group) -> set:
        return set().union(*(self.methods.get((r, g.op), set()) for r in g.runs))


def _note_omitted(g: Group, why: str | None) -> None:
    """A reason a cell is not plotted: the first OMITTED_KEPT distinct ones kept, the rest counted."""
    if not why or why in g.omitted:
        return
    if len(g.omitted) < OMITTED_KEPT:
        g.omitted.append(why)
    else:
        g.omitted_more += 1


def summary_series(summary: RunSummary) -> list[Series]:
    """A RunSummary's lines as series: at each length the mean of the runs' printed estimates (p1
    or median), the band from the lowest to the highest run's; n is the number of runs at that length."""
    out = []
    for (engine, target, mode), provs, runs, rows in summary.rows():
        out.append(Series(None, engine, target, provenance=provs, mode=mode, n_runs=runs,
                          points=[Point(x, mean, lo, hi, n) for x, mean, lo, hi, n in rows]))
    return out


def sweep_groups(runs: list[Run], metric: str) -> list[Group]:
    """Sweeps over runs already loaded whole (see Sweeps)."""
    sweeps = Sweeps(metric, len(runs))
    for run in runs:
        sweeps.add(run)
    return sweeps.result()


def merge_single_engine(groups: list[Group]) -> list[Group]:
    """Groups of one operation that each hold one and the same engine (e.g. `random` of the
    system engine per `source`) become one figure, a line per parameter set, labelled by it."""
    by_op: dict = {}
    for g in groups:
        by_op.setdefault(g.op, []).append(g)
    out, done = [], set()
    for g in groups:
        if id(g) in done:
            continue
        same = by_op[g.op]
        who = {(s.run_id, s.engine, s.target) for s in g.series}
        if len(same) < 2 or len(who) != 1 or any({(s.run_id, s.engine, s.target) for s in o.series} != who
                                                 for o in same):
            out.append(g)
            done.add(id(g))
            continue
        keys = list(dict.fromkeys(k for o in same for k in o.fixed))
        common = {k: g.fixed.get(k) for k in keys if len({json.dumps(o.fixed.get(k)) for o in same}) == 1}
        merged = Group(g.op, common, runs=list(g.runs), summarised=g.summarised,
                       estimators=set().union(*(o.estimators for o in same)))
        for o in same:
            s = o.series[0]
            s.label = f"{s.label} · " + ", ".join(param_text(k, o.fixed.get(k)) for k in keys if k not in common)
            merged.series.append(s)
            merged.omitted += [w for w in o.omitted if w not in merged.omitted]
            merged.omitted_more += o.omitted_more
            merged.tally.merge(o.tally)
            done.add(id(o))
        out.append(merged)
    return out


def timing_mode(run: Run, cell: Cell) -> str:
    """'single-shot' where each sample timed one operation (`run --single`, or the suite bench's
    `single = true`: latency), else 'batched' (each sample a calibrated batch of k operations)."""
    if run.plan.options.single:
        return "single-shot"
    for g in run.plan.groups:
        if g.single and g.op == cell.op and all(cell.params.get(k) == v for k, v in g.params.items()):
            return "single-shot"
    return "batched"


def label_series(series: list[Series]) -> None:
    """Legend labels: the engine; with ' · single-shot' / ' · batched' on every label where the
    figure mixes the two; with ' · target' where one engine ran on several targets; and '(run N)'
    where that still leaves two labels alike; a summary line over runs ends in '(N runs)'."""
    mixed = len({s.mode for s in series}) > 1
    by_engine: dict = {}
    for s in series:
        by_engine.setdefault(s.engine, []).append(s)
    for engine, ss in by_engine.items():
        targets = len({s.target for s in ss}) > 1
        for s in ss:
            s.label = " · ".join([engine] + ([s.target] if targets else []) + ([s.mode] if mixed else []))
        labels = [s.label for s in ss]
        for s, label in zip(ss, labels):
            if s.run_id is None:
                s.label = f"{label} ({s.n_runs} run{'s' if s.n_runs != 1 else ''})"
            elif labels.count(label) > 1:
                s.label = f"{label} (run {s.run_id})"


def style_for(series: list[Series], s: Series) -> tuple[str, str, str]:
    """(colour, linestyle, marker): the engine's colour; several series of one engine differ in style."""
    same = [x for x in series if x.engine == s.engine]
    i = same.index(s)
    if len(same) == len(series) > 1:
        # one engine throughout (its name is in every label): colours tell the parameter sets apart
        return TAB10[i % len(TAB10)], LINESTYLES[i % len(LINESTYLES)], MARKERS[i % len(MARKERS)]
    return engine_color(s.engine), LINESTYLES[i % len(LINESTYLES)], MARKERS[i % len(MARKERS)]


def decades(values: list[float]) -> float:
    pos = [v for v in values if v and v > 0]
    if len(pos) < 2:
        return 0.0
    return math.log10(max(pos) / min(pos))

"""`cryptobench compare RUN --reference NAME`: the user's stored results beside a study's published
ones (references/data/NAME.toml), where the comparison means something.

* Absolute values (a duration, a throughput, cycles, stack, code size) are set side by side only
  when the run's target is of the same kind as the published source's (`target_kind`: a
  microcontroller, a host, a model): a 2.4 GHz x86-64 next to a 48 MHz Cortex-M4 says nothing. Where
  the kinds differ, one line says so and the ratios below are the comparison.
* Ratio against ratio: the study's Improvement of a source over the one it names
  (`improvement_over`: TI's hw over sw, NXP's DCP/CAAM over software mbedTLS, the ZHAW secure
  elements over the SCE9, the Pisa accelerators over one A53 core) beside the run's Duration (or
  Energy Efficiency) Improvement of each engine over its baseline, with its 95 % interval. The
  study's own Improvement rows where it prints them (TI's `derived` rows), else computed here from
  its two published values (said so).
* One clock per division: cycles against cycles as they are; a time or a rate of an MCU run only
  at the clock the published one belongs to (`Row.at_hz`: the Cifra post's likely throughput is
  computed at 48 MHz from cycles counted at the 8 MHz reset clock), the run's brought there from its
  cycles and said so in the table and the record (`clock` of the group), or not at all where either
  clock is unstated.
* Units as the study prints them, its kilobyte said (NXP's KB is 1024 B); the Cifra post's "likely
  throughput" (one long message) only against the run's long-message throughput (long_message.py),
  never a 256 B message's; tables in the study's order (Table 9 before Table 13); values to 3
  significant figures.

Published rows with no matching cell, and cells with no published row, are listed, never hidden."""
from __future__ import annotations

from ..catalog.ops import OPS
from . import compare_rows
from .long_message import likely_throughput
from ..core.quantity import fmt_hz, fmt_sig
from ..core.records import Cell, Result, Run, params_key
from ..references import Reference, Row, Source, table_order
from ..core.table import Column, Table, columns
from ..stats.results import comparisons
from ..targets.mcu import sim


def _energy(r: Result, name: str):
    """A field of the result's energy figure; None where it has none."""
    en = r.energy
    return en.get(name) if en is not None else None


def _parallel(r: Result, name: str, fallback: str):
    """A scaling cell's aggregate figure (all its processes), else the single process's."""
    p = r.parallel
    return p.get(name) if p and p.get(name) is not None else r.get(fallback)


# metric -> (how to read the user's cell's result, the canonical unit shown)
USER_VALUE = {
    "duration": (lambda r: r.time_s.get("median"), "s"),
    "throughput": (lambda r: _parallel(r, "aggregate_Bps", "throughput_Bps"), "B/s"),
    "ops_per_s": (lambda r: _parallel(r, "aggregate_ops_per_s", "ops_per_s"), "op/s"),
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
RATIO_METRICS = ("duration_improvement", "energy_efficiency_improvement")
# a published metric -> (the Improvement it gives between two sources, True where a larger value is faster)
PAIR_METRICS = {"duration": ("duration_improvement", False), "execution_time": ("duration_improvement", False),
                "throughput": ("duration_improvement", True), "ops_per_s": ("duration_improvement", True),
                "cycles": ("duration_improvement", False), "cycles_per_byte": ("duration_improvement", False),
                "energy": ("energy_efficiency_improvement", False)}
RATIO_WORDS = {"duration_improvement": "Duration Improvement",
               "energy_efficiency_improvement": "Energy Efficiency Improvement"}
# the same Improvements stated the other way round (a reference's ratio = "over-baseline")
OVER_WORDS = {"duration_improvement": "time ratio, engine / baseline",
              "energy_efficiency_improvement": "energy ratio, engine / baseline"}
LIKELY = "likely_throughput"


def is_long_message(row: Row) -> bool:
    """The Cifra post's "likely throughput": a rate for one long message, whatever length its row names."""
    return row.metric == "throughput" and "likely throughput" in row.label.lower()


def _given(row: Row) -> dict:
    """The parameters a match needs: the row's, less the length of a long-message rate."""
    return {k: v for k, v in row.given.items() if not (is_long_message(row) and k == "bytes")}


def _cores_match(row: Row, cell: Cell) -> bool:
    """A source that ran on N cores (Pisa) matches the scaling cell of N processes; any other the
    cell without a process count, or of one process."""
    n = cell.params.get("parallel")
    want = row.source.cores or 1
    return (n or 1) == want


def _matches(row: Row, cell: Cell) -> bool:
    if cell.op != row.op or not cell.ok:
        return False
    return _cores_match(row, cell) and all(str(cell.params.get(k)) == str(v) for k, v in _given(row).items())


# ------------------------------------------------------------------------------------ kinds of target
def run_kind(run: Run) -> str:
    """What the run's target is: "mcu" (a board, QEMU or the simulator), "host", or "" (an imported
    trace: the file does not say)."""
    t = run.conditions.target
    if t:
        return "mcu"
    if "trace" in run.conditions or run.plan.kind == "trace":
        return ""
    return "host"


def run_where(run: Run) -> str:
    """The run's machine in a few words: "an x86_64 host (AMD EPYC, TSC 2.45 GHz)", "a 48 MHz
    cortex-m0 (stm32f030, simulated)"."""
    t = run.conditions.target
    if t.simulated:
        return f"a {fmt_hz(t.get('clock_hz'))} {t.get('core', t.get('cpu', '?'))} ({t.get('device', '?')}, simulated)"
    if t.qemu:
        return f"QEMU {t.get('board', '?')} ({t.get('cpu', '?')}, functional: no timings)"
    if t:
        return f"a {fmt_hz(t.get('clock_hz'))} {t.get('cpu', '?')} board ({t.get('board', '?')})"
    if not run_kind(run):
        return "an imported energy trace (its target is not recorded)"
    cpu, harness = run.conditions.host.get("cpu", {}), run.conditions.harness
    tsc = f", TSC {fmt_hz(harness['counter_hz'])}" if harness.get("counter") == "tsc" and harness.get("counter_hz") else ""
    return f"an {cpu.get('arch', '?')} host ({cpu.get('model', '?')}{tsc})"


def same_kind(run: Run, source: Source) -> bool:
    """Whether the run's absolute values may stand beside the source's: both of one kind of target,
    or either one unstated (then they are shown, and a line says the kind is unknown)."""
    kind = run_kind(run)
    return not kind or not source.target_kind or kind == source.target_kind


def run_clock_hz(run: Run) -> float | None:
    """The clock the run's cycles count: an MCU target's core clock (simulated or the board's);
    None on the host, whose TSC counts reference cycles, not the core's."""
    t = run.conditions.target
    if t.counts_core_cycles:
        return float(t.get("clock_hz") or 0) or None
    return None


# ------------------------------------------------------------------------------------ clocks
# a published metric taken over time -> the power of the clock its value goes with at a fixed count
# of cycles: a rate as the clock (bytes per cycle x cycles per second), a time as its inverse
CLOCKED = {"throughput": 1, "ops_per_s": 1, "duration": -1, "execution_time": -1}


def clock_scaling(run: Run, row: Row) -> tuple[float, dict | None, str]:
    """How the run's value for a published time or rate reaches the row's clock: (the factor, the
    record of the scaling or None, why it cannot: "" where it can). Cycles, stack and code size have
    no clock (factor 1); nor do a host's values (its TSC is no core clock: a host study states its
    machine) or QEMU's (no timings at all)."""
    power = CLOCKED.get(row.metric)
    if power is None or run_kind(run) != "mcu" or run.conditions.target.qemu:
        return 1.0, None, ""
    mine, theirs = run_clock_hz(run), row.at_hz
    what = "rate" if power > 0 else "time"
    if not mine or not theirs:
        missing = ("your run's core clock is not recorded" if not mine
                   else f"the study does not state the clock its {what} belongs to")
        return 1.0, None, f"{missing}: a {what} is compared only at one clock, never divided across two"
    if mine == theirs:
        return 1.0, None, ""
    factor = (theirs / mine) ** power
    if not 1e-9 < factor < 1e9:       # a file's clock of 1e300 Hz: no MCU, and a product past a float
        return 1.0, None, (f"the study's {what} is at {fmt_hz(theirs)} and your cycles at {fmt_hz(mine)}: too far "
                           "apart to scale, and a " + what + " is never divided across two clocks")
    return factor, {"what": what, "yours_hz": mine, "published_hz": theirs, "factor": factor}, ""


def _clock_note(gs: list[dict]) -> list[str]:
    """The scaling of a table's values, said: which clock yours were counted at and which they show."""
    out = []
    for c in list({(g["clock"]["yours_hz"], g["clock"]["published_hz"]): g["clock"] for g in gs if g.get("clock")}.values()):
        out.append(f"yours: cycles counted at {fmt_hz(c['yours_hz'])}, each {c['what']} shown at the study's "
                   f"{fmt_hz(c['published_hz'])} (x {fmt_sig(c['factor'])}), the clock its {c['what']} belongs to: "
                   "a ratio divides values at one clock, never across two")
    return out


# a metric -> which way its ratio yours / published reads as "yours is better"
def _ratio_reading(metric: str, against: str) -> str:
    if metric in ("throughput", "ops_per_s", LIKELY):
        return f"yours / {against} above 1: yours is faster (a higher rate)"
    if metric in ("cycles", "cycles_per_byte", "duration", "execution_time"):
        return f"yours / {against} below 1: yours is faster (fewer cycles, less time)"
    return f"yours / {against} below 1: yours needs less"


# ------------------------------------------------------------------------------------ absolute values
def _user_value(row: Row, cells: list[Cell], run: Run, clock: float | None) -> dict[str, tuple[float, str]]:
    """engine -> (the user's value comparable with the row, how it was found)."""
    out = {}
    for engine in dict.fromkeys(c.engine for c in cells):
        mine = [c for c in cells if c.engine == engine]
        if is_long_message(row):
            pts = [(int(c.params.get("bytes") or 0), (c.result.cycles.get("per_op_median") if clock
                                                     else (c.reported_time() or (None,))[0])) for c in mine]
            bps, how = likely_throughput(pts, clock)
            if bps:
                out[engine] = (bps, how)
            continue
        c = mine[0]
        v = USER_VALUE[row.metric][0](c.result) if c.result is not None else None
        if v is not None:
            out[engine] = (float(v), "")
    return out


def _absolute(run: Run, ref: Reference, rows: list[Row], clock: float | None) -> tuple[dict, list, set]:
    groups: dict[tuple, dict] = {}
    unmatched, used = [], set()
    for row in rows:
        pub = row.canonical
        given = _given(row)
        cells = [c for c in run.cells if _matches(row, c)]
        factor, scaled, refused = clock_scaling(run, row)
        if not cells or pub is None or _model_input(row, cells) or refused:
            unmatched.append(row)
            continue
        metric = LIKELY if is_long_message(row) else row.metric
        shown = {**given, "cores": row.source.cores} if row.source.cores else given
        # yours is brought to one clock per group: rows at another clock make another group
        key = (row.table, row.op, tuple(sorted(shown.items())), metric, scaled and scaled["published_hz"])
        g = groups.setdefault(key, {"table": row.table, "op": row.op, "params": shown, "metric": metric,
                                    "unit": USER_VALUE[row.metric][1], "units": [], "published": {}, "yours": {},
                                    "how": {}, "published_cycles": {}, "your_cycles": {}, "labels": [],
                                    "clock": None})
        g["labels"].append(row.label)
        g["units"].append(row.unit)
        g["published"][row.source.id] = pub
        if row.metric in ("duration", "execution_time") and row.at_hz:
            g["published_cycles"][row.source.id] = pub * row.at_hz
        g["clock"] = g["clock"] or scaled
        for engine, (v, how) in _user_value(row, cells, run, clock).items():
            g["yours"][engine] = v * factor          # at the published value's clock (factor 1: already there)
            if how:
                g["how"][engine] = how
            if row.metric in ("duration", "execution_time") and clock:
                g["your_cycles"][engine] = v * clock
        used.update(id(c) for c in cells)
    for key, g in list(groups.items()):         # matched cells, but none has the figure (no energy, no cycles)
        if not g["yours"]:
            del groups[key]
            unmatched += [r for r in rows if r.label in g["labels"] and r.table == g["table"]
                          and r.op == g["op"] and r.metric in (g["metric"], "throughput")]
    return groups, unmatched, used


# ------------------------------------------------------------------------------------ ratio against ratio
def _published_ratios(ref: Reference) -> list[dict]:
    """The study's Improvements: its own rows (`derived` duration/energy efficiency improvement), else
    computed from the two sources `improvement_over` pairs, per table, op and parameters."""
    out, seen = [], set()
    for row in ref.rows:
        if row.op is not None and row.metric in RATIO_METRICS and row.source.improvement_over:
            key = (row.source.id, row.op, params_key(row.given), row.metric)
            if key not in seen:
                seen.add(key)
                out.append({"table": row.table, "op": row.op, "params": dict(row.given), "metric": row.metric,
                            "source": row.source.id, "over": row.source.improvement_over, "value": row.value,
                            "how": f"as printed ({row.derived or 'the study’s ratio'})", "source_row": row})
    by_key: dict[tuple, Row] = {}
    for r in ref.rows:              # a source's first row of an op and metric: its table's, not a later aside's
        if r.op is not None and r.metric in PAIR_METRICS and r.canonical is not None and not is_long_message(r):
            by_key.setdefault((r.source.id, r.op, params_key(r.given), r.metric), r)
    for (sid, op, pk, metric), row in by_key.items():
        over = row.source.improvement_over
        base = by_key.get((over, op, pk, metric)) if over else None
        ratio, faster_is_larger = PAIR_METRICS[metric]
        key = (sid, op, pk, ratio)
        if base is None or key in seen or not row.canonical or not base.canonical:
            continue
        seen.add(key)
        value = row.canonical / base.canonical if faster_is_larger else base.canonical / row.canonical
        out.append({"table": row.table, "op": op, "params": dict(row.given), "metric": ratio, "source": sid,
                    "over": over, "value": value, "how": f"computed here from the published {metric.replace('_', ' ')} "
                    f"({row.unit}): {base.value:g} / {row.value:g}" if not faster_is_larger else
                    f"computed here from the published {metric.replace('_', ' ')} ({row.unit}): "
                    f"{row.value:g} / {base.value:g}", "source_row": row})
    return out


def _ratio_groups(run: Run, ref: Reference) -> list[dict]:
    """Each published Improvement beside the run's Improvements of its engines over its baseline."""
    comps = comparisons(run.cells, run.plan.baseline)
    out = []
    for pr in _published_ratios(ref):
        row: Row = pr.pop("source_row")
        mine = [c for c in comps if c["op"] == pr["op"] and (c["params"].get("parallel") or 1) == (row.source.cores or 1)
                and all(str(c["params"].get(k)) == str(v) for k, v in _given(row).items())]
        yours = {}
        for c in mine:
            v = c.get(pr["metric"])
            if v is not None:
                yours.setdefault(c["engine"], {"value": v, "ci95": c["ci95"] if pr["metric"] == "duration_improvement"
                                               else None, "params": c["params"]})
        out.append({**pr, "baseline": run.plan.baseline, "yours": yours})
    return out


def _in_convention(ratios: list[dict], convention: str) -> list[dict]:
    """The Improvements the study's way round: "over-baseline" (ZHAW's figure 2: t_source / t_over,
    ×71.5 = 71.5 times as long, as run and show print it) inverts both the published value and
    yours, interval ends swapped; "improvement" (t_over / t_source) leaves them."""
    if convention != "over-baseline":
        return ratios
    for r in ratios:
        r["value"] = 1.0 / r["value"] if r["value"] else None
        head, _, quotient = r["how"].rpartition(": ")
        if head.startswith("computed here") and " / " in quotient:      # "a / b" read the other way: "b / a"
            r["how"] = f"{head}: " + " / ".join(reversed(quotient.split(" / ", 1)))
        elif not head.startswith("computed here"):
            r["how"] += " (inverted here: source / over)"
        for y in r["yours"].values():
            y["value"] = 1.0 / y["value"] if y["value"] else None
            if y.get("ci95"):
                y["ci95"] = [1.0 / y["ci95"][1], 1.0 / y["ci95"][0]]
    return ratios


# ------------------------------------------------------------------------------------ the document
def _engine_bands(run: Run) -> dict[str, dict[str, dict]]:
    """engine -> op -> the band (sim/engine_band.py) its cells carry where a modelled hardware engine
    served them."""
    out: dict[str, dict] = {}
    for c in run.cells:
        band = c.result.get("engine_band") if c.ok and c.result is not None else None
        if band:
            out.setdefault(c.engine, {}).setdefault(c.op, band)
    return out


def _band_notes(doc: dict, engines: list[str], ops: list[str], what: str = "") -> list[str]:
    """One note per distinct engine band of `engines` on the table's `ops`: how far the engine's model
    read from published hardware, which every value (and Improvement) made from its cells carries."""
    seen, notes = set(), []
    for e in engines:
        for op in ops:
            band = doc.get("engine_bands", {}).get(e, {}).get(op)
            if band and (e, band.get("model"), band.get("class")) not in seen:
                seen.add((e, band.get("model"), band.get("class")))
                notes.append(f"{e}{what}: {sim.engine_band_text(band)}")
    return notes


def _against_of(ref: Reference, engines: list[str], modelled: set[str], sources: list[str], against: str | None) -> dict:
    """The published source each engine's absolute values are divided by, unless the user chose one
    (--against): a modelled hardware engine's (its cells carry an engine band) by the study's on-chip
    accelerator where the study has one, so the ratio is modeled / published hardware; every other
    engine by `against` (the study's software). `modelled`: the engines whose cells carry one."""
    hw = next((s.id for s in ref.sources.values() if s.engine_kind == "on-chip accelerator" and s.id in sources), None)
    return {e: (hw if e in modelled and hw else against) for e in engines}


def compare(run: Run, ref: Reference, against: str | None = None) -> dict:
    engines = list(dict.fromkeys(c.engine for c in run.cells if c.ok))
    # rows naming their implementation (pqm4's) are compared one published row per line (compare_rows.py)
    per_row = [r for r in ref.rows if r.implementation]
    comparable = [r for r in ref.rows if r.op is not None and r.metric in USER_VALUE and not r.implementation]
    clock = run_clock_hz(run)
    absolute = [r for r in comparable if same_kind(run, r.source)]
    other_kind = [r for r in comparable if not same_kind(run, r.source)]
    groups, unmatched, used = _absolute(run, ref, absolute, clock)
    rows_view = compare_rows.view(run, per_row, all(same_kind(run, r.source) for r in per_row))
    shown = {(e["op"], str(e["level"]), e["engine"]) for k in ("speed", "stack", "hashing") for e in rows_view[k]}
    used |= {id(c) for c in run.cells if (c.op, str(c.params.get("level")), c.engine) in shown}
    sources = list(dict.fromkeys(sid for g in groups.values() for sid in g["published"]))
    chosen = against is not None
    against = against or next((s.id for s in ref.sources.values() if s.engine_kind == "sw library" and s.id in sources),
                              sources[0] if sources else None)
    bands = _engine_bands(run)
    against_of = {e: against for e in engines} if chosen else _against_of(ref, engines, set(bands), sources, against)
    for g in groups.values():
        g["ratio"], g["cycle_ratio"] = {}, {}
        for e in set(g["yours"]) | set(g["your_cycles"]):
            base = g["published"].get(against_of[e])
            if base is None and len(g["published"]) == 1:       # a row only one source prints (Pisa's cores)
                base = next(iter(g["published"].values()))
            if e in g["yours"]:
                g["ratio"][e] = g["yours"][e] / base if base else None
            cb = g["published_cycles"].get(against_of[e])
            if e in g["your_cycles"]:
                g["cycle_ratio"][e] = g["your_cycles"][e] / cb if cb else None
    ratios = _in_convention(_ratio_groups(run, ref), ref.ratio)
    unmatched_ratios = [r for r in ratios if not r["yours"]]
    ratios = [r for r in ratios if r["yours"]]
    in_ratios = {(r["op"], params_key(y["params"]), e) for r in ratios for e, y in r["yours"].items()}
    base = run.plan.baseline
    in_ratios |= {(op, pk, base) for op, pk, _ in in_ratios}
    extra = [c for c in run.cells if c.ok and id(c) not in used and (c.op, c.params.key, c.engine) not in in_ratios]
    ordered = sorted(groups.values(), key=lambda g: table_order(g["table"]))
    return {"reference": {"name": ref.name, "title": ref.title, "document": ref.document, "provenance": "published",
                          "sources": {s.id: vars(s) for s in ref.sources.values()}},
            "run": run.id, "engines": engines, "sources": sources, "against": against, "against_of": against_of,
            "engine_bands": bands, "clock_hz": clock,
            "ratio_convention": ref.ratio, "run_kind": run_kind(run), "run_where": run_where(run), "baseline": run.plan.baseline,
            "kind_lines": _kind_lines(run, ref, other_kind, absolute),
            "groups": ordered,
            "per_row": rows_view,
            "ratios": sorted(ratios, key=lambda r: table_order(r["table"])),
            "not_same_kind": [{"table": r.table, "label": r.label, "metric": r.metric, "source": r.source.id}
                              for r in other_kind],
            "unmatched_ratios": [{"table": r["table"], "op": r["op"], "params": r["params"], "metric": r["metric"],
                                  "source": r["source"], "over": r["over"]} for r in unmatched_ratios],
            "unmatched_published": [{"table": r.table, "label": r.label, "op": r.op, "metric": r.metric,
                                     "why": _why_unmatched(run, r)}
                                    for r in sorted(unmatched, key=lambda r: table_order(r.table))],
            "not_comparable": [{"table": r.table, "label": r.label, "metric": r.metric}
                               for r in ref.rows if r not in comparable and not r.implementation],
            "unmatched_yours": [{"op": c.op, "params": c.params.to_dict(), "engine": c.engine} for c in extra]}


# metrics a modeled energy takes from its device profile: set beside the published figure they
# would only give back the profile's own number (the cc2652 profile's current is TI's)
MODEL_INPUTS = ("average_current", "power")


def _model_input(row: Row, cells: list[Cell]) -> bool:
    """Whether the run's figure for this row is an input of its energy model, not a result."""
    return row.metric in MODEL_INPUTS and all(c.energy is None or c.energy.provenance == "modeled" for c in cells)


def _why_unmatched(run: Run, row: Row) -> str:
    if row.canonical is None:
        return f"unit {row.unit} not convertible"
    matched = [c for c in run.cells if _matches(row, c)]
    refused = clock_scaling(run, row)[2]
    if matched and refused:
        return refused
    if matched and _model_input(row, matched):
        return (f"the run's {row.metric.replace('_', ' ')} is modeled from its device profile (an input of the "
                "energy model, not a measurement): set beside the study's it would only give the profile back")
    if matched and is_long_message(row):
        clock = run_clock_hz(run)
        pts = [(int(c.params.get("bytes") or 0), c.result.cycles.get("per_op_median") if clock
                else (c.reported_time() or (None,))[0]) for c in matched]
        return "the study's likely throughput is for one long message: " + likely_throughput(pts, clock)[1]
    if matched:
        return f"the run's matching cells have no {row.metric.replace('_', ' ')} figure"
    return "no ok cell of this run has this operation and parameters" + (
        f" (on {row.source.cores} cores: --parallel)" if row.source.cores else "")


def _kind_lines(run: Run, ref: Reference, other_kind: list[Row], absolute: list[Row]) -> list[str]:
    """Why absolute values are (not) set side by side, in a line or two."""
    lines = []
    if other_kind:
        wheres = list(dict.fromkeys(r.source.where() for r in other_kind))
        shown = " (absolute values of its other sources are shown)" if absolute else ""
        ratio = ("comparing Improvement ratios only" if run.plan.baseline else
                 "and the run has no baseline engine, so there is no Improvement to compare either "
                 "(run with --baseline ENGINE)")
        lines.append(f"your run is on {run_where(run)}; the study's values are from {'; '.join(wheres)}: absolute "
                     f"values are not compared{shown}, {ratio}")
    if not run_kind(run) and any(r.source.target_kind for r in absolute):
        lines.append(f"your run's target kind is not recorded ({run_where(run)}): absolute values are shown as they "
                     "are; compare them only if the run's device is of the study's kind")
    if any(not r.source.target_kind for r in absolute):
        lines.append("the reference does not state its sources' target kind (target_kind): absolute values are "
                     "shown as they are")
    return lines


# ------------------------------------------------------------------------------------ tables
def _scale(unit: str, values: list[float], printed: list[str]) -> tuple[str, float]:
    """A readable unit for a column of canonical values: the study's own where it prints one."""
    if unit == "s":
        vs = sorted(v for v in values if v)
        m = vs[len(vs) // 2] if vs else 1.0
        for name, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
            if m >= f:
                return name, f
        return "ns", 1e-9
    if unit == "B/s":
        if printed and all(u == "KiB/s" for u in printed):
            return "KB/s, KB = 1024 B as the study counts", 1024.0
        if printed and all(u == "Mbps" for u in printed):
            return "Mbps", 1e6 / 8
        if printed and all(u == "MB/s" for u in printed):
            return "MB/s, MB = 10^6 B", 1e6
        return "KB/s, KB = 1000 B", 1e3
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
    unit, f = _scale(gs[0]["unit"], [v for g in gs for v in list(g["published"].values()) + list(g["yours"].values())],
                     [u for g in gs for u in g["units"]])
    sources = [s for s in doc["sources"] if any(s in g["published"] for g in gs)]
    engines = [e for e in doc["engines"] if any(e in g["yours"] for g in gs)]
    cyc = any(g["published_cycles"] for g in gs) and any(g["your_cycles"] for g in gs)
    clocks = {fmt_hz(g["clock"]["published_hz"]) for g in gs if g.get("clock")}
    # every row brought to one clock: the headers say it (both sides are at it), else each row does
    at = f", at {clocks.pop()}" if len(clocks) == 1 and all(g.get("clock") for g in gs) else ""
    cols = columns(["operation", "parameters"], left=2)
    cols += [Column(f"published {s} ({unit}{at})", unit=unit) for s in sources] + \
        [Column(f"{e} ({unit}{at})", unit=unit) for e in engines] + \
        [Column(f"{e} / published {doc.get('against_of', {}).get(e, doc['against'])}") for e in engines]
    if cyc:
        cols += [Column(f"{who} cycles", unit="cycles") for who in [f"published {s}" for s in sources] + engines]
    title = "likely throughput (one long message)" if metric == LIKELY else metric.replace("_", " ")
    out = Table(f"{table} — {title}", cols, key=metric)
    for g in gs:
        row = [OPS[g["op"]].title, " ".join(f"{k}={v}" for k, v in g["params"].items())
               + (f" (at {fmt_hz(g['clock']['published_hz'])})" if g.get("clock") and not at else "")]
        row += [fmt_sig(g["published"][s] / f) if s in g["published"] else "—" for s in sources]
        row += [fmt_sig(g["yours"][e] / f) if e in g["yours"] else "—" for e in engines]
        row += [fmt_sig(g["ratio"][e]) if g["ratio"].get(e) else "—" for e in engines]
        if cyc:
            row += [fmt_sig(g["published_cycles"][s]) if s in g["published_cycles"] else "—" for s in sources]
            row += [fmt_sig(g["your_cycles"][e]) if e in g["your_cycles"] else "—" for e in engines]
        out.add(row)
    if metric == LIKELY:
        hows = sorted({h for g in gs for h in g["how"].values()})
        out.notes = ["the study's likely throughput is for one long message (set-up discounted); yours from the "
                     "same, never from a short message's time: " + "; ".join(hows)] if hows else []
    out.notes += _clock_note(gs)
    out.notes.append("ratio: " + _ratio_reading(metric, "published"))
    out.notes += _band_notes(doc, engines, list(dict.fromkeys(g["op"] for g in gs)))
    if unit.startswith("KB/s, KB = 1024"):
        out.notes.append("the study prints KB/s with KB = 1024 B (its mbedtls_benchmark divides by 1024): "
                         "yours are in the same unit")
    return out


def _ratio_table(doc: dict, table: str, metric: str, rs: list[dict]) -> Table:
    """Ratio against ratio: the study's Improvement of a source over another beside the run's of each
    engine over its baseline."""
    pairs = list(dict.fromkeys((r["source"], r["over"]) for r in rs))
    engines = [e for e in doc["engines"] if any(e in r["yours"] for r in rs)]
    base = doc["baseline"]
    over = doc.get("ratio_convention") == "over-baseline"
    cols = columns(["operation", "parameters"], left=2)
    cols += [Column(f"published {s} / {o}" if over else f"published {s} over {o}", unit="x") for s, o in pairs]
    cols += [Column(f"yours {e} / {base}" if over else f"yours {e} over {base}", unit="x") for e in engines]
    words = OVER_WORDS[metric] if over else RATIO_WORDS[metric]
    out = Table(f"{table} — {words} (ratio against ratio)", cols, key=f"ratio-{metric}")
    keys = list(dict.fromkeys((r["op"], params_key(r["params"])) for r in rs))
    for op, pk in keys:
        mine = [r for r in rs if r["op"] == op and params_key(r["params"]) == pk]
        row = [OPS[op].title, " ".join(f"{k}={v}" for k, v in mine[0]["params"].items())]
        for s, o in pairs:
            r = next((r for r in mine if (r["source"], r["over"]) == (s, o)), None)
            row.append(fmt_sig(r["value"]) if r else "—")
        for e in engines:
            y = next((r["yours"][e] for r in mine if e in r["yours"]), None)
            if y is None:
                row.append("—")
            else:
                ci = y.get("ci95")
                row.append(fmt_sig(y["value"]) + (f" [{fmt_sig(ci[0])}–{fmt_sig(ci[1])}]" if ci else ""))
        out.add(row)
    hows = list(dict.fromkeys(f"{r['source']} over {r['over']}: {r['how'].split(':')[0]}" for r in rs))
    out.notes = [f"published: {h}" for h in hows]
    q = "t" if metric == "duration_improvement" else "E"
    what = "of the printed times, [95 % repeat interval]" if q == "t" else "of the energy per operation"
    out.notes.append(f"yours: {q}_ENGINE / {q}_{base} {what}; as the study's figure 2 and `show --relative-to`: "
                     f"above 1 = {'longer' if q == 't' else 'more energy'}" if over else f"yours: {q}_{base} / {q}_ENGINE {what}")
    # an Improvement made from a modelled engine's cell is no tighter than that engine's band (the
    # interval above is the repeats' only); the simulated baseline's own band adds to it
    out.notes += _band_notes(doc, engines, [op for op, _ in keys], " (so is its Improvement)")
    return out


def tables(doc: dict) -> list[Table]:
    """Printable tables in the study's order: per (reference table, metric) the absolute values where the
    kinds match, then per table the Improvements, ratio against ratio."""
    by: dict[tuple, list[dict]] = {}
    for g in doc["groups"]:
        by.setdefault((g["table"], g["metric"]), []).append(g)
    out = [_group_table(doc, table, metric, gs) for (table, metric), gs in by.items()]
    if doc["baseline"]:
        rby: dict[tuple, list[dict]] = {}
        for r in doc["ratios"]:
            rby.setdefault((r["table"], r["metric"]), []).append(r)
        out += [_ratio_table(doc, table, metric, rs) for (table, metric), rs in rby.items()]
    return out + compare_rows.tables(doc["per_row"])


def text_lines(doc: dict) -> list[str]:
    ref = doc["reference"]
    src = ref["sources"].get(doc["against"]) if doc["against"] else None
    lines = [f"run {doc['run']} (yours: measured/simulated as stored, on {doc['run_where']}) beside {ref['name']}: "
             f"{ref['document']} (provenance: published)"]
    lines += doc["kind_lines"]
    if src:
        lines.append(f"absolute ratio = yours / published {doc['against']} ({src['engine']} on {src['device']})")
    for s in ref["sources"].values():
        clock = f" @ {fmt_hz(s['clock_hz'])}" if s.get("clock_hz") else ""
        lines.append(f"  published {s['id']}: {s['engine']} ({s['engine_kind']}) on {s['device']}{clock}"
                     + (f" · {s['library']}" if s.get("library") else "") + (f" · {s['compiler']}" if s.get("compiler") else ""))
    if doc["clock_hz"]:
        lines.append(f"  yours: cycles at the target's {fmt_hz(doc['clock_hz'])}")
    scaled = {fmt_hz(g["clock"]["published_hz"]) for g in doc["groups"] if g.get("clock")}
    if scaled:
        lines.append(f"  yours: times and rates shown at the study's clock ({', '.join(sorted(scaled))}) from your "
                     "cycles, so that each ratio divides values at one clock (cycles are compared as they are)")
    pr = doc["per_row"]
    if not doc["groups"] and not (doc["baseline"] and doc["ratios"]) and not any(pr[k] for k in compare_rows.KINDS):
        lines.append("nothing to set side by side: no published value of the same kind of target matched, and no "
                     "published Improvement matched the run's Improvements")
    return lines


def _unmatched_grouped(rows: list[dict]) -> list[str]:
    """One line per operation and reason, with its count of published rows and their metrics: a
    study's hundreds of rows the run did not cover read as a handful of reasons."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for u in rows:
        groups.setdefault((u["op"] or u["label"], u["why"]), []).append(u)
    out = []
    for (op, why), us in groups.items():
        labels = list(dict.fromkeys(f"{u['table']} · {u['label']}" for u in us))
        named = f": {'; '.join(labels)}" if len(labels) <= 3 else ""      # a few rows named, hundreds counted
        out.append(_unmatched_row(us[0]) if len(us) == 1 else
                   f"  {op}{named} ({len(us)} rows: {', '.join(dict.fromkeys(u['metric'] for u in us))}): {why}")
    return out


def _unmatched_row(u: dict) -> str:
    return f"  {u['table']} · {u['label']} ({u['metric']}): {u['why']}"


def unmatched_lines(doc: dict, verbose: bool = False) -> list[str]:
    """What was not set side by side; the published rows one line per operation and reason, or
    (verbose) a line each; --format json always has them all."""
    out = compare_rows.unmatched_lines(doc["per_row"])
    if doc["unmatched_published"]:
        out.append(f"published rows with no matching result in run {doc['run']} ({len(doc['unmatched_published'])}"
                   + ("" if verbose else "; by operation and reason, each row with --verbose or in --format json") + "):")
        out += [_unmatched_row(u) for u in doc["unmatched_published"]] if verbose else _unmatched_grouped(doc["unmatched_published"])
    if doc["not_same_kind"]:
        out.append(f"published absolute values not compared, the study's target being of another kind: "
                   f"{len(doc['not_same_kind'])}")
    if doc["unmatched_ratios"] and doc["baseline"]:
        words = sorted({RATIO_WORDS[u["metric"]] for u in doc["unmatched_ratios"]})
        out.append(f"published Improvements with no Improvement of run {doc['run']} to set beside them "
                   f"({len(doc['unmatched_ratios'])}: {', '.join(words)}): the run lacks the operation, its "
                   f"baseline's cell, or energy figures")
    if doc["not_comparable"]:
        out.append(f"published rows not comparable with a run (derived ratios, models, …): {len(doc['not_comparable'])} "
                   "(see the reference file; the Improvements are compared ratio against ratio)")
    if doc["unmatched_yours"]:
        out.append(f"results of run {doc['run']} with no published row ({len(doc['unmatched_yours'])}):")
        out += [f"  {u['op']} {' '.join(f'{k}={v}' for k, v in u['params'].items())} [{u['engine']}]"
                for u in doc["unmatched_yours"]]
    return out

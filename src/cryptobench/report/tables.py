"""Tables laid out as the studies print them (TI: Duration per engine, RSD, Duration Improvement) built from one stored
run as `Table`s (table.py), and `show`'s outputs of it: the terminal and Markdown (the tables,
with the run's conditions), CSV (a row per cell in export's columns) and JSON (the result
document)."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ..stats.convergence import NOISY_SHARE, convergence_advice, convergence_line, convergence_of, stop_kind
from ..stats.noise import noise_line
from ..stats.sampling import DEFAULT_BUDGET_S
from ..runner.suites import LAYOUT_RATIO
from ..core.printable import printable
from ..targets.host.meters.session import energy_line
from ..catalog.ops import OPS
from ..core.quantity import fmt_num, pick_unit
from ..stats.results import comparisons, document, ratio_band
from ..core.records import FAILED, UNSUPPORTED, Cell, Conditions, Energy, Run, outcome_text, params_key
from .failure_text import failure_note
from .flag_text import flag_legend
from .mcu_tables import cost_table, energy_rsd, footprint_table, ok_results, profile_table, summary_at
from ..core.table import LEFT, Column, Csv, Markdown, Table
from .verdicts import BAND_LEGEND, improvement_text, summary_line, summary_rows
from .terminal import print_lines, print_table
from ..analysis.relative import direction_text, relative, relative_tables
from ..targets.host.parallel import is_parallel_run
from ..targets.mcu import sim as simulator
from .export import build_table, export_table
from .scaling_tables import conditions_line, scaling_tables


def _cell_text(cell: Cell | None, scale: float) -> tuple[str, str]:
    word = outcome_text(cell)
    if word is not None:
        return word, ""
    r = cell.result
    mark = "*" if noted_flags(r.flags) else ""
    return fmt_num(r.reported_time()[0] * scale) + mark, f"{r.time_s['rsd_pct']:.1f}"


# flags summed up in one line of advice per run (summary_lines) rather than a note per cell: on a
# shared machine they mark most cells, and the advice is the same for each
SUMMARIZED_FLAGS = ("high-rsd", "not-converged", "outliers")
NOISE_FLAGS = ("high-rsd", "outliers")         # what the noisy-machine advice counts (not-converged: convergence_line)


def noted_flags(flags: list[str]) -> list[str]:
    """The flags a cell's own note (and its *) shows."""
    return [f for f in flags if f not in SUMMARIZED_FLAGS]


def summary_lines(run: Run) -> list[str]:
    """Under the tables: what no table shows (unsupported_lines), the run's one statement about
    convergence (stats/convergence.py, counted from the cells' flags), and one line of advice when cells
    carry the flags of a noisy machine, naming how many carry each. Simulated cells are not counted:
    the simulator is deterministic, so their spread is the operation's own (ML-DSA signing's rejection
    loop), never the machine's."""
    ok = [c.result for c in run.cells if c.ok and c.result and c.provenance != "simulated"]
    conv = convergence_of(run)
    lines = unsupported_lines(run)
    opts = run.plan.options
    more = f"more time (--budget {2 * (opts.budget_s or DEFAULT_BUDGET_S):g})"
    if conv is not None:
        advice = convergence_advice(conv, run.conditions.sampling or {}, more) if conv.short else ""
        lines.append(convergence_line(conv) + (f": {advice}" if advice else ""))
    counts = {f: sum(1 for r in ok if f in r.flags) for f in NOISE_FLAGS}
    if not any(counts.values()):
        return lines
    if sum(1 for r in ok if any(f in r.flags for f in NOISE_FLAGS)) < NOISY_SHARE * len(ok):
        # a few cells with slow spells are no sign of a noisy machine: said, without advice
        return lines + [f"of {len(ok)} cells, " + ", ".join(_noise_said(run, counts)) + "; the printed estimates "
                        "leave slow spells out (p1) or take their typical share (median)"]
    parts = ", ".join(_noise_said(run, counts))
    return lines + [
        f"noisy machine: of {len(ok)} cells, {parts}. The printed estimates are robust to this and their intervals "
        f"honest (`--format json`: estimate.ci95); for tighter ones give the run {more}, stop other work on the "
        "machine, or run on an idle one (docs/statistics.md)"]


def _noise_said(run: Run, counts: dict) -> list[str]:
    nf = run.conditions.noise_floor
    floor = nf.get("judged_rsd_pct", nf.get("rsd_pct"))     # the larger of the loop's and the typical cell's
    said = {"high-rsd": f"{counts['high-rsd']} vary more than " + (f"twice the machine's noise ({floor:.1f} %) and 5 %"
                                                                   if floor else "5 %") + " (high-rsd)",
            "outliers": f"{counts['outliers']} have many outlying samples (outliers)"}
    return [said[f] for f in NOISE_FLAGS if counts[f]]


def _energy_notes(who: str, energy: Energy | None) -> list[str]:
    if energy is None:
        return []
    out = []
    if energy.get("supplies"):
        out.append(f"{who}: energy split " + " · ".join(f"{n} {fmt_num(v['median_j'] * 1e6)} µJ ({v['share_pct']:.1f} %)"
                                                         for n, v in energy["supplies"].items()))
    st = energy.stats
    if st.get("approximate"):
        out.append(f"{who}: {st['approximate']} energy windows shorter than 20 sampling periods (approximate)")
    if st.get("flagged"):
        out.append(f"{who}: {st['flagged']} energy windows with a glitch or an unknown marker state")
    return out


@dataclass
class _Layout:
    """What one operation's run table shows: the varying parameters, the engines shown (and those
    hidden because every cell of theirs is unsupported), the columns each engine gets."""
    varying: list[str]
    shown: list[str]
    hidden: list[str]
    energy: bool              # host runs: a µJ column per engine
    e_rsd: bool               # … and a µJ RSD % column
    unit: str
    scale: float
    comp_engines: list[str]   # an Impr. column each
    over_baseline: bool = False  # the Impr. columns read t_engine / t_baseline (suites.LAYOUT_RATIO)


def _layout(run: Run, op, cells: list[Cell], plist: list[dict]) -> _Layout:
    plan = run.plan
    engines, baseline = plan.options.engines, plan.baseline
    varying = [n for n in op.param_names if len({str(p.get(n)) for p in plist}) > 1]
    shown = [e for e in engines if any(c.engine == e and c.status != UNSUPPORTED for c in cells)]
    hidden = [e for e in engines if e not in shown and any(c.engine == e for c in cells)]
    unit, scale = pick_unit([t[0] for t in (c.reported_time() for c in cells if c.ok) if t])
    results = ok_results(cells)
    energy = any(r.energy is not None for r in results)
    e_rsd = energy and any(energy_rsd(r.energy) is not None for r in results)
    return _Layout(varying, shown, hidden, energy, e_rsd, unit, scale,
                   [e for e in shown if e != baseline] if baseline in shown else [])


def _op_columns(lay: _Layout) -> list[Column]:
    cols = [Column(n, LEFT) for n in lay.varying or ["operation"]]
    for e in lay.shown:
        cols += [Column(f"{e} ({lay.unit})", unit=lay.unit, group=e), Column("RSD %", unit="%", group=e)]
        cols += [Column("µJ", unit="µJ", group=e)] if lay.energy else []
        cols += [Column("µJ RSD %", unit="%", group=e)] if lay.e_rsd else []
    if lay.over_baseline:
        return cols + [Column(f"× {e}", group="×") for e in lay.comp_engines]
    return cols + [Column(f"Impr. {e}", group="Impr.") for e in lay.comp_engines]


def _energy_text(cell: Cell | None, lay: _Layout) -> list[str]:
    """A host cell's µJ (and µJ RSD %) cells; ~ marks a figure within the idle baseline's noise."""
    en = cell.energy if cell is not None and cell.ok else None
    out = [fmt_num(en.per_op_j * 1e6) + ("~" if "not-above-idle" in en.flags else "")
           + ("" if en.provenance == "measured" else f" ({en.provenance})") if en is not None else "—"]
    if lay.e_rsd:
        rsd = energy_rsd(en)
        out.append(f"{rsd:.1f}" if rsd is not None else "")
    return out


def _op_row(op, pk: str, p: dict, cells: list[Cell], comps: dict, lay: _Layout) -> list[str]:
    row = [str(p[n]) for n in lay.varying] or [op.title]
    for e in lay.shown:
        cell = next((c for c in cells if c.engine == e and c.params.key == pk), None)
        row += list(_cell_text(cell, lay.scale))
        if lay.energy:
            row += _energy_text(cell, lay)
    for e in lay.comp_engines:
        row.append(improvement_text(comps.get((op.id, pk, e)), lay.over_baseline))
    return row


def _cell_notes(c: Cell, lay: _Layout) -> list[str]:
    """A cell's notes under its table: why it is not timed, its flags, its energy's caveats."""
    who = f"{c.engine} " + " ".join(f"{n}={c.params[n]}" for n in lay.varying)
    who = who.strip()
    out = []
    if c.status == UNSUPPORTED and c.engine in lay.shown:
        out.append(f"{who}: unsupported — {c.detail}")
    elif c.status == FAILED:
        out.append(f"{who}: {outcome_text(c)} — {failure_note(c.detail)}")
    elif c.ok and noted_flags(c.result.flags):
        out.append(f"{who}: * {', '.join(noted_flags(c.result.flags))}")
    if not c.ok or c.result is None:
        return out
    en = c.result.energy
    if en is not None and en.flags:
        out.append(f"{who}: energy {', '.join(en.flags)}"
                   + (" (~ = within the idle baseline's noise)" if "not-above-idle" in en.flags else ""))
    elif c.result.get("energy_note"):
        out.append(f"{who}: {c.result['energy_note']}")
    return out + _energy_notes(who, en)


def _title(op, varying: list[str], plist: list[dict]) -> str:
    fixed = {n: plist[0].get(n) for n in op.param_names if n not in varying}
    title = op.title + (" — " + ", ".join(f"{k}={v}" for k, v in fixed.items()) if fixed else "")
    return title + (" (whole exchange / 2)" if op.halve else "")


def _summary_notes(op_id: str, rows: list[tuple[str, dict]], varying: list[str], engines: list[str],
                   comps: dict, baseline: str | None) -> list[str]:
    """hyperfine's summary in words under the table, for its first and last rows (verdicts.py)."""
    out = []
    for i in summary_rows(len(rows)):
        pk, p = rows[i]
        where = ", ".join(f"{n}={p[n]}" for n in varying)
        line = summary_line([comps[(op_id, pk, e)] for e in engines if (op_id, pk, e) in comps], baseline or "", where)
        if line:
            out.append(line)
    return out


def hardware_engines(cells: list[Cell], baseline: str | None) -> list[str]:
    """The engines (the baseline aside) whose timed cells a peripheral served ("served_by"
    "peripheral: ..."), in the run's order: a chip's own engines, compared with each other."""
    hw = [c.engine for c in cells if c.ok and c.result is not None
          and str(c.result.get("served_by") or "").startswith("peripheral") and c.engine != baseline]
    return list(dict.fromkeys(hw))


def _engine_against_engine(op_id: str, rows: list[tuple[str, dict]], varying: list[str], cells: list[Cell],
                           baseline: str | None) -> list[str]:
    """Where two or more of a chip's engines ran beside a software baseline (or none), the question
    users ask of one chip: which of its engines to use. The first hardware engine is the reference
    of these lines ("engine against engine"), beside the Improvement columns' HW-vs-SW ratios."""
    hw = hardware_engines(cells, baseline)
    if len(hw) < 2:
        return []
    own = [c for c in cells if c.engine in hw]
    comps = {(c["op"], params_key(c["params"]), c["engine"]): c for c in comparisons(own, hw[0])}
    return [f"engine against engine, {line}" for line in _summary_notes(op_id, rows, varying, hw[1:], comps, hw[0])]


def _op_tables(run: Run, op_id: str, cells: list[Cell], comps: dict, said_once: dict[str, str],
               over_baseline: bool = False) -> list[Table]:
    """An operation's tables: its costs per engine (on a microcontroller target, then its
    footprint); none where no engine supports it (summary_lines says so once, as it says the engines
    of `said_once`, unsupported alike in many operations)."""
    op = OPS[op_id]
    pkeys = list(dict.fromkeys(c.params.key for c in cells))
    plist = [json.loads(p) for p in pkeys]
    lay = replace(_layout(run, op, cells, plist), over_baseline=over_baseline)
    if not lay.shown:
        return []
    title, rows = _title(op, lay.varying, plist), list(zip(pkeys, plist))
    if run.plan.target:
        table = cost_table(title, op_id, lay.varying, rows, cells, lay.shown, lay.comp_engines, comps, op.title)
    else:
        table = Table(title, _op_columns(lay), key=op_id)
        for pk, p in rows:
            table.add(_op_row(op, pk, p, cells, comps, lay))
    table.notes = [n for c in cells for n in _cell_notes(c, lay)]
    table.notes += flag_legend(f for c in cells if c.ok and c.result is not None for f in noted_flags(c.result.flags))
    table.notes += [f"{e}: unsupported — {next(c.detail for c in cells if c.engine == e)}" for e in lay.hidden
                    if e not in said_once]
    table.notes += _summary_notes(op_id, rows, lay.varying, lay.comp_engines, comps, run.plan.baseline)
    table.notes += _engine_against_engine(op_id, rows, lay.varying, cells, run.plan.baseline)
    if not run.plan.target:
        return [table]
    sized = [n for n in lay.varying if n != "bytes"]
    footprint = footprint_table(title, op_id, sized, cells, lay.shown)
    profile = profile_table(title, op_id, lay.varying, cells, lay.shown)
    return [table] + [t for t in (footprint, profile) if t]


def over_baseline(run: Run, references=()) -> bool:
    """Whether a run's ratios read t_engine / t_baseline: its study says so (suites.LAYOUT_RATIO),
    or a reference it is compared with does (its `ratio`)."""
    if any(getattr(ref, "ratio", None) == "over-baseline" for ref in references):
        return True
    return LAYOUT_RATIO.get(run.plan.layout or "") == "over-baseline"


def build_tables(run: Run, references=()) -> list[Table]:
    """Per operation a table with a row per parameter set, columns per engine and per comparison
    (mcu_tables.py for a microcontroller run). A scaling run (--parallel) gets the Pisa paper's
    tables instead (scaling_tables.py). The comparison columns read the way the run's study (or a
    reference given) reads its ratios (over_baseline)."""
    if is_parallel_run(run):
        return scaling_tables(run)
    comps = {(c["op"], params_key(c["params"]), c["engine"]): c
             for c in comparisons(run.cells, run.plan.baseline)}
    said_once = everywhere_unsupported(run)
    tables = [t for op_id, cells in cells_by_op(run).items()
              for t in _op_tables(run, op_id, cells, comps, said_once, over_baseline(run, references))]
    summary = summary_at(run.cells, 256) if run.plan.target else None
    return tables + ([summary] if summary else [])


def cells_by_op(run: Run) -> dict[str, list[Cell]]:
    by_op: dict[str, list[Cell]] = {}
    for c in run.cells:
        by_op.setdefault(c.op, []).append(c)
    return by_op


def everywhere_unsupported(run: Run) -> dict[str, str]:
    """Engines unsupported in at least three operations for one reason (the system engine: random
    bytes only): said once under the run (summary_lines) instead of under each table."""
    reasons: dict[tuple[str, str], set] = {}
    for c in run.cells:
        if c.status == UNSUPPORTED:
            reasons.setdefault((c.engine, c.detail), set()).add(c.op)
    return {engine: detail for (engine, detail), ops in reasons.items() if len(ops) >= 3}


def unsupported_lines(run: Run) -> list[str]:
    """Operations no engine supports, and engines unsupported alike in many, in a line each."""
    lines = [f"{e}: unsupported in {len({c.op for c in run.cells if c.engine == e and c.detail == d})} "
             f"operations — {d}" for e, d in everywhere_unsupported(run).items()]
    for op_id, cells in cells_by_op(run).items():
        if all(c.status == UNSUPPORTED for c in cells):
            why = "; ".join(dict.fromkeys(c.detail for c in cells))
            lines.append(f"{OPS[op_id].title}: no table, no engine of this run supports it ({why})")
    return lines


def _modeled_inputs(cells) -> str:
    """'; E = t x 3.3 V x 3.1 mA (active), from: SOURCE' of the run's modeled energies (the figures
    the cells were stored with), or where to look when no cell has one."""
    got = sorted({(c.energy.get("method", ""), c.energy.get("source", "")) for c in cells
                  if c.energy is not None and c.energy.provenance == "modeled"} - {("", "")})
    if not got:
        return "; see sim/devices.toml for the profile's figures and their source"
    return "".join(f"; {m}" + (f", from: {src}" if src else "") for m, src in got[:2])


def _engine_bands(cells) -> list[dict]:
    """The distinct engine bands (sim/engine_band.py) of the cells a modelled engine served, in order."""
    seen: dict[tuple, dict] = {}
    for c in cells:
        band = c.result.get("engine_band") if c.ok and c.result is not None else None
        if band:
            seen.setdefault((band.get("model"), band.get("class"), band.get("driver", c.engine)), band)
    return list(seen.values())


def _target_lines(cond: Conditions, cells=()) -> list[str]:
    t = cond.target
    if t.simulated:
        sim = t.get("simulator", {})
        src = "" if sim.get("condition") else f" ({sim.get('source', '')})"     # the condition line gives its sources
        lines = [f"target sim:{t['core']} · device {t['device']}{src} · image linked for "
                 f"{t['board']} · cpu {t['cpu']} · -{t['opt']} · provenance: simulated"]
        if sim.get("condition"):
            opts = t.device_options_text
            lines.append("condition" + (f" ({opts})" if opts else "")
                         + f": {simulator.describe_condition(sim['condition'])}; sources: {simulator.condition_sources(sim['condition'])}")
    else:
        lines = [f"target {t['kind']}:{t['board']} ({t.get('board_title', '')}) · cpu {t['cpu']} · -{t['opt']}"
                 + (f" · {t['qemu']}" if t.get("qemu") else f" · {t.get('clock_hz', 0) / 1e6:g} MHz")]
    if t.get("timing"):
        lines.append(f"timing: {t['timing']}; stack (painted), heap (arena peak) and code size are measured")
    if t.get("error_band"):        # runs stored before the bands have none
        lines.append(f"error band: {simulator.band_text(t['error_band'])}"
                     + (f"; from {t['error_band']['source']}" if t["error_band"].get("source") else ""))
    lines += [f"engine band: {simulator.engine_band_text(b)}" for b in _engine_bands(cells)]
    for name, b in cond.get("builds", {}).items():
        lines.append(f"  {name} {b['library_version']}: {b['compiler']} {b['cflags']} {b['ldflags']} · "
                     f"counter {b['counter']} · console {b['console']}"
                     + (f" · the library's sources by {b['library_compiler']} (--library-cc)"
                        if b.get("library_compiler") else "")
                     + (f" · at commit {str(b['library_commit'])[:12]}"
                        + (f" ({b['library_ref']})" if b.get("library_ref") else "")
                        + (" with uncommitted changes" if b.get("library_dirty") else "")
                        if b.get("library_commit") else ""))
    if cond.get("energy_trace"):
        et = cond["energy_trace"]
        lines.append(f"µJ = measured energy per operation: Σ V·I·Δt over the marker windows of a {et['format']} trace "
                     f"({et['path']}, {et.get('windows')} windows, sample period {et.get('sample_period_s') or 0:.6g} s), "
                     "matched in order to this run's repetitions")
    elif t.simulated and t.get("simulator") and any(c.energy is not None for c in cells):
        lines.append("µJ = modeled energy per operation: simulated time x the device profile's supply voltage x "
                     "active current (provenance: modeled" + _modeled_inputs(cells) + ")")
    speeds = sorted(c.result.sim["instructions_per_s"] for c in cells
                    if c.ok and c.result is not None and c.result.sim.get("instructions_per_s"))
    if speeds:
        lines.append("insns = simulated instructions per operation (counted between the same counter reads as the "
                     "cycles); CPI = cycles / insns; simulator speed (measured on this host, start-up excluded): "
                     f"{speeds[len(speeds) // 2] / 1e6:.3g} M instructions/s median over the cells' images "
                     f"({speeds[0] / 1e6:.3g}–{speeds[-1] / 1e6:.3g})")
    lines.append("flash B = text + rodata + data of the op's image minus the empty harness's (same flags); "
                 "RAM B = data + bss likewise; stack B = high-water mark by stack painting")
    return lines


def _capture_lines(capture: dict | None) -> list[str]:
    if not capture:
        return []
    inst = capture.get("instrument", {})
    settings = capture.get("settings", {})
    what = inst.get("idn") or inst.get("kind", "instrument")
    return [f"captured live from {what} · mode {settings.get('mode', '?')} · period {settings.get('period_s', '?')} s"]


def conditions_lines(run: Run, impr_legend: bool = True) -> list[str]:
    label = run.plan.label
    lines = _conditions_lines(run, impr_legend)
    return ([f"label: {label}"] if label else []) + lines


def _trace_lines(run: Run, t: dict) -> list[str]:
    """The conditions of a run imported from an energy trace."""
    return [f"run {run.id} ({run.status}) · energy from a {t['format']} trace: {t['path']}",
            f"sample period {t.get('sample_period_s')} s · channels {', '.join(t.get('channels', []))} · "
            "windows from the marker's rising to falling edges; energy Σ V·I·Δt per window; provenance: measured",
            *_capture_lines(t.get("capture")),
            *[f"warning: {w}" for w in t.get("warnings", [])]]


def _conditions_lines(run: Run, impr_legend: bool) -> list[str]:
    cond = run.conditions
    if "trace" in cond:
        return _trace_lines(run, cond["trace"])
    if "target" in cond:
        cpu = cond.host.get("cpu", {})
        return ([f"run {run.id} ({run.status}) · suite {run.suite or '(ad hoc)'} · {run.created} · "
                 f"built on {cpu.get('model', '?')}"] + _target_lines(cond, run.cells)
                + ([baseline_line(run, "at the same clock")] if impr_legend else []))
    host, harness = cond.host, cond.harness
    cpu = host.get("cpu", {})
    lines = [f"run {run.id} ({run.status}) · suite {run.suite or '(ad hoc)'} · {run.created}",
             f"measured on {cpu.get('model', '?')} ({cpu.get('arch', '?')}, {cpu.get('logical_cpus', '?')} CPUs, "
             f"crypto flags: {' '.join(cpu.get('crypto_flags', [])) or 'none'}) · {host.get('os', '?')}",
             f"harness {harness.get('harness', '?')} {harness.get('version', '')} · {harness.get('compiler', '?')} "
             f"{harness.get('cflags', '')} · clock {harness.get('clock', '?')} · cycles: {harness.get('counter', '?')} "
             f"@ {harness.get('counter_hz', 0) / 1e6:.0f} MHz (reference cycles, not core clock)"
             if harness.get("counter") == "tsc" else
             f"harness {harness.get('harness', '?')} · {harness.get('compiler', '?')} · cycles: {harness.get('counter', '?')}"]
    lines += [_engine_line(name, info) for name, info in cond.engines.items()]
    noise = noise_line(cond.noise_floor)
    if noise:
        lines.append(noise)
    energy = energy_line(cond.get("energy_meter"))
    if energy:
        lines.append(energy)
    return lines + _sampling_lines(run, impr_legend)


def _engine_line(name: str, info: dict) -> str:
    """One engine of a host run's conditions: its version and what it has switched on or off."""
    bits = [str(info.get("version", ""))]
    if info.get("extensions_enabled") is not None:
        bits.append("extensions on: " + (", ".join(info["extensions_enabled"]) or "none"))
    if info.get("mask"):
        bits.append(f"mask {info['mask']} verified={info.get('mask_verified')}")
    if "aesni" in info:
        bits.append(f"AES-NI={'yes' if info['aesni'] else 'no'}")
    for fact in ("pkcs11_provision", "tpm"):
        if isinstance(info.get(fact), str):
            bits.append(info[fact])
    if info.get("round_trip_ns"):
        bits.append(f"per-call round trip {float(info['round_trip_ns']) / 1e3:.3g} µs (median of a minimal "
                    "command: the host ⇄ device cost inside every figure)")
    if info.get("unusable"):
        bits.append("UNUSABLE: " + info["unusable"])
    if not any(bits):
        bits.append(str(info.get("description", "")))
    return f"  {name}: " + " · ".join(b for b in bits if b)


def _sampling_lines(run: Run, impr_legend: bool) -> list[str]:
    """How a host run sampled (a scaling run: how it ran its processes) and, with `impr_legend`,
    what the printed durations and Impr. columns are."""
    if is_parallel_run(run):
        return [conditions_line(run)]
    lines = []
    sampling = run.conditions.sampling
    if sampling:
        lines.append(sampling_line(sampling, convergence_of(run)))
    estimators = sorted({c.reported_time()[2] for c in run.cells if c.ok and c.result})
    what = " / ".join(ESTIMATOR_TEXT.get(e, e) for e in estimators) or "median"
    if impr_legend:
        lines.append(_durations_text(what))
        lines.append(baseline_line(run, "of the printed times, with its 95 % repeat interval"))
    return lines


BASELINE_FROM = {"default": "the default baseline, software first; --baseline ENGINE "
                            "picks another",
                 "suite": "the suite's baseline", "option": "chosen with --baseline"}


def baseline_line(run: Run, what: str) -> str:
    """What the Impr. columns divide by and who chose it, or why there are none and how to get them."""
    baseline = run.plan.baseline
    engines = list(dict.fromkeys(c.engine for c in run.cells if c.ok))
    if len(engines) < 2:
        return ("No Improvement column: one engine in this run; run two or more (--engine A --engine B) and "
                "--baseline names the one they are divided by")
    if baseline not in engines:
        return (f"No Improvement column: the baseline {baseline or '(none)'} has no result in this run "
                f"(`run --baseline ENGINE` names one of {', '.join(engines)})")
    why = BASELINE_FROM.get(run.plan.baseline_from or "", "the run's baseline")
    if over_baseline(run):
        return (f"× ENGINE = t_ENGINE / t_{baseline} {what}, as the study reads it: ×2.7 = 2.7 times as long "
                f"({baseline}: {why})")
    # a band depends on the two cells' engine model, class and condition, not on their parameters:
    # one baseline cell an operation tells whether its ratios carry one
    base_of = {c.op: c.result for c in run.cells if c.engine == baseline and c.ok and c.result}
    banded = any(c.op in base_of and ratio_band(base_of[c.op], c.result)
                 for c in run.cells if c.ok and c.result and c.engine != baseline)
    return (f"Impr. ENGINE = Duration Improvement t_{baseline} / t_ENGINE {what} ({baseline}: {why})"
            + (BAND_LEGEND if banded else ""))


ESTIMATOR_TEXT = {"p1": "1st percentile (p1)", "median": "median"}


def _durations_text(what: str) -> str:
    return (f"Durations: {what} per operation (docs/statistics.md), provenance: measured. "
            "* = flagged, see notes.")


STOP_TEXT = {"converged": "every cell within the target precision", "time budget": "the time budget ran out"}


def stop_text(sampling: dict, conv) -> str:
    """Why the run stopped, without a count of its own (convergence_line counts the flags); a
    stored "converged" that the flags contradict (runs stored before one rule decided both) is
    said as the check it was."""
    kind = stop_kind(sampling.get("stop"))
    if kind == "converged" and conv is not None and conv.short:
        return "at a convergence check"
    return STOP_TEXT.get(kind, kind)


def sampling_line(sampling: dict, conv=None) -> str:
    """How the run sampled: rounds, blocks, processes, why it stopped."""
    procs = sampling.get("processes") or {}
    nproc = sorted(set(procs.values()))
    return (f"sampling: {sampling.get('rounds')} rounds over {sampling.get('wall_s', 0):.0f} s, every cell visited "
            f"once per round in a shuffled order (seed {sampling.get('seed')}), {sampling.get('per_visit')} batches "
            f"per visit; blocks of {sampling.get('block_rounds')} rounds (≈ {sampling.get('block_s', 0):g} s)"
            + (f"; {'/'.join(map(str, nproc))} harness processes per engine" if nproc else "")
            + f"; stopped: {stop_text(sampling, conv)}. Intervals are 95 % repeat intervals: "
            "where a rerun's value lands 95 % of the time")


def _relative_section(run: Run, relative_to: str | None) -> tuple[list[str], list[Table]]:
    if not relative_to:
        return [], []
    return [f"Relative view: {direction_text(relative_to)}"], relative_tables(run, relative_to)


def render_rich(run: Run, console, relative_to: str | None = None, only_relative: bool = False) -> None:
    """The conditions and tables; with `relative_to` the relative view after them (or instead of
    the tables with `only_relative`)."""
    print_lines(console, conditions_lines(run, impr_legend=not only_relative))
    rel_lines, rel_tables = _relative_section(run, relative_to)
    if not only_relative:
        for t in build_tables(run):
            print_table(console, t)
        print_lines(console, summary_lines(run), style="yellow")
    print_lines(console, rel_lines)
    for t in rel_tables:
        print_table(console, t)


def _lines(text: str) -> list[str]:
    """A rendered block (ending in a line end) as lines, so that "\n".join gives it back."""
    return text[:-1].split("\n") if text else []


def render_markdown(run: Run, relative_to: str | None = None, only_relative: bool = False) -> str:
    rel_lines, rel_tables = _relative_section(run, relative_to)
    out = [f"# cryptobench run {run.id}", ""] + [f"- {printable(l.strip(), keep_newlines=False)}"
                                                 for l in conditions_lines(run, not only_relative) + rel_lines] + [""]
    md = Markdown()
    for t in ([] if only_relative else build_tables(run)) + rel_tables:
        out += _lines(md.render(t)) + [""]
    if not only_relative:
        out += [f"- {printable(line, keep_newlines=False)}" for line in summary_lines(run)]
    return "\n".join(out)


# `show --format csv`: the columns of `export` (export.CELL_COLUMNS, docs/export.md) that show
# prints, by the same names and with the same values: a row per cell, energy columns where a cell
# has an energy figure, scaling columns in a --parallel run
CSV_COLUMNS = ["run_id", "op", "params_json", "engine", "target", "provenance", "status", "kat", "n", "k",
               "estimate_s", "estimator", "estimate_lo_s", "estimate_hi_s", "median_s", "mean_s", "stdev_s", "rsd_pct", "min_s", "max_s", "ci95_lo_s", "ci95_hi_s",
               "ops_per_s", "throughput_bytes_per_s", "throughput_kb_per_s", "throughput_kib_per_s",
               "cycles_per_op", "cycles_per_byte", "outliers", "flags", "detail"]

ENERGY_CSV_COLUMNS = ["energy_per_op_j", "energy_provenance", "energy_gross_per_op_j", "energy_idle_power_w",
                      "energy_rsd_pct", "energy_flags"]

PARALLEL_CSV_COLUMNS = ["parallel_n", "parallel_cpus", "parallel_oversubscribed", "parallel_aggregate_per_s",
                        "parallel_unit", "parallel_per_core_per_s", "parallel_efficiency",
                        "parallel_efficiency_ci95_lo", "parallel_efficiency_ci95_hi", "parallel_flags"]


def csv_columns(run: Run) -> list[str]:
    """The columns `show --format csv` prints for this run."""
    energy = any(c.energy is not None for c in run.cells)
    parallel = any("parallel" in c.params for c in run.cells)
    return CSV_COLUMNS + (ENERGY_CSV_COLUMNS if energy else []) + (PARALLEL_CSV_COLUMNS if parallel else [])


def render_csv(run: Run) -> str:
    columns_, rows = build_table([run])
    return Csv().render(export_table(columns_, rows, csv_columns(run)))


def render_json(run: Run, relative_to: str | None = None) -> str:
    doc = document(run)
    if relative_to:
        doc["relative"] = relative(run, relative_to)
    return json.dumps(doc, indent=2)

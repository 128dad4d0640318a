"""`cryptobench model offload RUN --op OP --hw ENGINE --sw ENGINE`: the accelerator's share of an
operation over a stored run's cells (analysis/models/offload_cells.py): the two engines' fitted
set-up and per-block cost, the hardware's polling and interrupt-completion times, which engine wins
at each swept payload and from which length, optionally a figure. The flag-only form (no RUN) is
cli/model.py's `_offload`."""
from __future__ import annotations

import io
import json
from pathlib import Path

from ..core.errors import UsageError
from ..analysis.models.crossover import driver_completion, sweep_from_run
from ..analysis.models.offload_cells import interrupt_latency, offload_view
from ..store.database import Store
from ..targets.power import load_profile
from .common import checked_output, key_values, resolve_one_run, write_atomic

FIGURE_FORMATS = (".svg", ".png")
FLAG_ONLY = ("setup_us", "per_block_us", "overhead_us", "lengths")


def offload_from_run(args, out) -> int:
    """The RUN form of `model offload`: checks, reads the run, prints, writes --json and --figure."""
    given = [f"--{k.replace('_', '-')}" for k in FLAG_ONLY if getattr(args, k) is not None]
    if given:
        raise UsageError(f"model offload RUN: {', '.join(given)} belong to the flag-only form (without RUN); "
                         "with a RUN the cells give the set-up and per-block cost")
    if not args.op or not args.hw or not args.sw:
        raise UsageError("model offload RUN: give --op OP, --hw ENGINE (the accelerator) and --sw ENGINE (software)")
    figure = checked_output(args, "--figure")
    if figure is not None and Path(figure).suffix.lower() not in FIGURE_FORMATS:
        raise UsageError(f"--figure: expected a file ending in .svg or .png, got '{args.figure}'")
    store = Store(args.db, create=False)      # only reads: never creates a store
    run = store.load_run(resolve_one_run(store, args.run, "model offload RUN"))
    prof = load_profile(args.profile) if args.profile else None
    params = key_values(args.param, "--param")
    mode = driver_completion(run, args.hw)
    if mode == "interrupt":
        raise UsageError(f"model offload: the cells of {args.hw} completed by interrupt (its recipe's completion), so "
                         "they hold the interrupt's entry, return and the core's sleep already; give a polling "
                         "driver's cells as --hw (--completion interrupt then models the latency), or set the two "
                         "drivers side by side with `cryptobench model crossover RUN --op OP --a POLLING --b "
                         "INTERRUPT`")
    sweeps = {}
    for role, engine in (("sw", args.sw), ("hw", args.hw)):
        s = sweep_from_run(run, args.op, engine, params, prof)
        if len(s["time"]) < 2:
            engines = sorted({c.engine for c in run.cells if c.op == args.op and c.ok})
            raise UsageError(f"run {run.id}: {len(s['time'])} timed cell(s) of {args.op} with a bytes parameter on "
                             f"'{engine}' (--{role}), 2 lengths needed (engines with {args.op}: "
                             f"{', '.join(engines) or 'none'})")
        sweeps[role] = s
    cond = _conditions(run)
    latency = None
    if cond["core"] and cond["clock_hz"]:
        latency = interrupt_latency(cond["core"], cond["clock_hz"])
    view = offload_view(sweeps["sw"]["time"], sweeps["hw"]["time"], args.block_bytes, latency, args.completion,
                        sweeps["sw"]["energy"], sweeps["hw"]["energy"])
    doc = _document(run, args, cond, sweeps, view, prof, mode)
    _print(out, doc)
    if args.json:
        write_atomic(Path(args.json), json.dumps(doc, indent=2, default=str) + "\n", "--json")
    if figure is not None:
        _write_figure(Path(figure), doc)
        out.write(f"figure: {figure} (time vs payload: simulated/measured cells as points, modeled fit lines)\n")
    return 0


def _conditions(run) -> dict:
    """Device, core and clock of the run (a simulated or board run's target), None where absent."""
    t = (run.conditions or {}).get("target") or {}
    sim = t.get("simulator") or {}
    return {"device": t.get("device") or sim.get("device"), "core": t.get("core") or sim.get("core"),
            "clock_hz": t.get("clock_hz") or sim.get("clock_hz"), "board": t.get("board_title") or t.get("board")}


def _cells_used(run, args, engine: str, xs) -> dict:
    cells = [c for c in run.cells if c.op == args.op and c.engine == engine and c.ok
             and "bytes" in c.params and float(c.params["bytes"]) in xs]
    fixed = sorted({f"{k}={v}" for c in cells for k, v in c.params.items() if k != "bytes"})
    return {"engine": engine, "op": args.op, "params": fixed, "bytes": sorted(xs),
            "targets": sorted({c.target for c in cells}), "provenance": sorted({c.provenance for c in cells})}


def _document(run, args, cond, sweeps, view, prof, mode) -> dict:
    used = {role: _cells_used(run, args, getattr(args, role), {p["x"] for p in sweeps[role]["time"]})
            for role in ("sw", "hw")}
    energy_prov = sorted(set(sweeps["sw"]["energy_provenance"]) | set(sweeps["hw"]["energy_provenance"]))
    has_energy = all("sw_j" in r for r in view["rows"])
    return {**view, "run": run.id, "op": args.op, "sw": args.sw, "hw": args.hw, "conditions": cond,
            "cells": used, "time_provenance": sorted(set(sweeps["sw"]["time_provenance"])
                                                     | set(sweeps["hw"]["time_provenance"])),
            "energy_provenance": energy_prov if has_energy else [],
            "energy_from": (prof.inputs_text() if prof is not None and "modeled" in energy_prov else
                            "the cells' stored energy" if has_energy else None),
            "driver_mode_of_cells": ("polling (the recipe's completion, in the run's build conditions)" if mode else
                                     "not recorded (not a driver recipe's build): taken as polling")}


def _where(doc) -> str:
    c = doc["conditions"]
    clock = f"{c['clock_hz'] / 1e6:g} MHz" if c["clock_hz"] else "clock not recorded"
    return f"device {c['device'] or 'not recorded'}, core {c['core'] or 'not recorded'} at {clock}"


def _print(out, doc) -> None:
    sw, hw, bb, k = doc["sw"], doc["hw"], doc["block_bytes"], 1e6
    tp = "/".join(doc["time_provenance"])
    out.write(f"offload over run {doc['run']}'s cells, {doc['op']}: {hw} (HW) vs {sw} (SW); {_where(doc)}\n")
    for role in ("sw", "hw"):
        u, f = doc["cells"][role], doc["fits"][role]
        out.write(f"  {role.upper()} fit (modeled, least squares over {len(u['bytes'])} {'/'.join(u['provenance'])} "
                  f"cells of {u['engine']}, {', '.join(u['params']) or 'no other parameters'}, bytes "
                  f"{','.join(f'{x:g}' for x in u['bytes'])}): set-up {f['setup_s'] * k:.5g} µs + "
                  f"{f['per_block_s'] * k:.5g} µs per {bb}-byte block; R² {f['r2']:.6f}, RMS residual "
                  f"{f['rms_residual_s'] * 1e9:.4g} ns\n")
    lat = doc["interrupt_latency"]
    out.write(f"  completion: {doc['completion']}; the cells' driver mode: {doc['driver_mode_of_cells']}\n")
    if lat:
        out.write(f"  interrupt completion adds {lat['cycles']} cycles = {lat['seconds'] * k:.4g} µs (modeled): "
                  f"{lat['source']}\n")
    else:
        out.write("  interrupt completion: not computed (the run records no simulated core and clock)\n")
    energy = doc["energy_provenance"]
    head = (f"  {'bytes':>7} {'SW µs':>10} {'HW poll µs':>11} {'HW int µs':>10} {'HW/SW':>8}  {'wins':<14}")
    if energy:
        head += f" {'SW µJ':>9} {'HW µJ':>9}"
    out.write(head + "\n")
    for r in doc["rows"]:
        intr = f"{r['hw_interrupt_s'] * k:>10.4g}" if r["hw_interrupt_s"] is not None else f"{'-':>10}"
        line = (f"  {r['bytes']:>7g} {r['sw_s'] * k:>10.4g} {r['hw_polling_s'] * k:>11.4g} {intr} "
                f"{r['ratio']:>8.3g}  {(hw if r['hw_wins'] else sw):<14}")
        if energy:
            line += f" {r['sw_j'] * k:>9.4g} {r['hw_j'] * k:>9.4g}"
        out.write(line + "\n")
    out.write(f"  columns: SW µs and HW poll µs {tp} (the cells' medians); HW int µs = HW poll + the interrupt's "
              f"latency (modeled); HW/SW and wins for {doc['completion']} completion\n")
    if energy:
        out.write(f"  energy per operation ({'/'.join(energy)}; {doc['energy_from']}); HW µJ for "
                  f"{doc['completion']} completion" + (", the latency charged at the HW cell's own average power"
                                                       if doc["completion"] == "interrupt" else "") + "\n")
    else:
        out.write("  energy: none (the cells store no energy; --profile models t · V · I)\n")
    cx, first = doc["crossover"], doc["first_swept_win_bytes"]
    out.write(f"  crossover from the fits (modeled, {doc['completion']}): {cx['text']}\n")
    out.write(f"  first swept payload from which {hw} wins at every longer swept one ({tp} cells"
              + (", + the modeled latency" if doc["completion"] == "interrupt" else "") + "): "
              + (f"{first:g} B" if first is not None else "none") + "\n")
    out.write(f"provenance: modeled (fits, latency, crossover) from {tp} cells\n")


def _write_figure(path: Path, doc) -> None:
    from ..core.extras import require
    require("matplotlib", "figures", "model offload --figure")
    from ..report.figures.offload import offload_figure   # deferred: matplotlib is an optional extra
    fig = offload_figure(doc)
    buf = io.BytesIO()
    fmt = path.suffix.lower().lstrip(".")
    fig.savefig(buf, format=fmt, dpi=150, **({"metadata": {"Date": None}} if fmt == "svg" else {}))
    write_atomic(path, buf.getvalue(), "--figure")

"""`cryptobench energy …`: formats, import (trace -> windows -> energy, stored), capture (live from
an instrument), model (power profiles)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..catalog.ops import get_op, resolve_params
from ..core.errors import UsageError
from ..core.printable import PrintableLines, printable
from ..core.records import Plan
from ..store.database import Store
from ..core.quantity import fmt_num
from ..core.table import Table, columns
from ..report.terminal import print_table
from .commands import COMMANDS
from .common import (OneLineParser, add_db, add_output, add_param, check_output, checked_output, console_for,
                     key_values, resolve_one_run, split_params, write_atomic)
from ..analysis.power import model_run
from ..report import render_json
from ..runner.runner import Runner
from ..targets.select import target_for
from ..targets.power import load_profile, modeled_energy, per_unit
from ..targets.trace.importer import as_cell, attach_to_run, import_trace
from ..targets.trace.live_otii import OtiiCapture, OtiiClient, OtiiConnectionError, OtiiError, parse_resource
from ..targets.trace.segment import PlanMismatch
from ..targets.trace.trace import TraceError
from .model import engine_peripherals

NAME = "energy"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    energy = sub.add_parser("energy", help=HELP)
    esub = energy.add_subparsers(dest="energy_command", parser_class=OneLineParser)
    esub.add_parser("formats", help="the trace formats cryptobench reads")
    _add_import_parser(esub)
    _add_model_parser(esub)
    _add_capture_parser(esub)


def _add_import_parser(esub) -> None:
    imp = esub.add_parser("import", help="segment a trace at its marker edges and integrate energy per window")
    imp.add_argument("file")
    imp.add_argument("--format", required=True, help="trace format (see `cryptobench energy formats`)")
    imp.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="reader option, e.g. current_col=I, marker_bit=0, current_file=… (repeatable)")
    imp.add_argument("--voltage", type=float, help="nominal supply voltage when the trace logs no voltage")
    imp.add_argument("--min-width", type=float, default=0.0, help="debounce: shortest marker pulse kept (s)")
    imp.add_argument("--threshold", type=float, help="analog marker threshold")
    imp.add_argument("--hysteresis", type=float, default=0.0, help="analog marker hysteresis")
    imp.add_argument("--expect", type=int, help="the planned number of repetitions: a different window count is an error")
    imp.add_argument("--partial", choices=["error", "drop"], default="error",
                     help="a window cut by the trace's start or end: an error (default) or dropped with a warning")
    imp.add_argument("--run", metavar="RUN_ID|latest",
                     help="match the windows to this stored run's timed repetitions, in order, and store the energy in its cells")
    imp.add_argument("--op", help="store the windows as a cell of this operation (with --engine)")
    add_param(imp, "a parameter of --op, e.g. bytes=64")
    imp.add_argument("--engine", help="what ran on the device, e.g. 'cc2652-aes-hw' (a label)")
    add_db(imp)
    add_output(imp, "--json", "also write the stored run (with --op or --run) as JSON")


def _add_model_parser(esub) -> None:
    mod = esub.add_parser("model", help="modeled energy: a duration or a stored run x a device power profile")
    mod.add_argument("--profile", required=True, help="a device of sim/devices.toml (e.g. cc2652) or a profile .toml")
    mod.add_argument("--time", type=float, help="duration of one operation (s)")
    mod.add_argument("--bytes", type=int, help="payload bytes of one operation (per byte/bit figures and FoM)")
    mod.add_argument("--state", default="active", help="power state: active (default), idle, standby")
    mod.add_argument("--peripheral", action="append", default=[], help="a peripheral running meanwhile (repeatable)")
    mod.add_argument("--run", metavar="RUN_ID|latest", help="model every timed cell of a stored run")
    mod.add_argument("--engine-peripheral", action="append", default=[], metavar="ENGINE=PERIPHERAL[+…]",
                     help="peripherals an engine keeps running (e.g. cc-aes=crypto)")
    mod.add_argument("--baseline", help="engine for TI's Energy Efficiency Improvement (t_b·I_b)/(t_e·I_e)")
    mod.add_argument("--current-uncertainty", type=float, default=0.0, metavar="FRACTION",
                     help="relative uncertainty of each current, widens the EEI interval (e.g. 0.1)")
    add_db(mod)
    add_output(mod, "--json", "also write the modeled figures as JSON")


def _add_capture_parser(esub) -> None:
    cap = esub.add_parser("capture", help="capture a trace live from an N6705 (SCPI) or an Otii (TCP) into a file "
                                          "`energy import` reads (docs/energy-live.md)")
    cap.add_argument("--instrument", required=True, choices=["n6705", "otii"])
    cap.add_argument("--resource", required=True,
                     help="n6705: a VISA resource (TCPIP0::HOST::inst0::INSTR, USB0::…); otii: HOST[:PORT] (port 1905)")
    cap.add_argument("--backend", default="@py", help="n6705: pyvisa backend: @py (default), '' (system VISA), FILE.yaml@sim")
    cap.add_argument("--mode", choices=["elog", "dlog"], default="elog",
                     help="n6705: elog = stream FETC:ELOG? records (default); dlog = log to the instrument's "
                          "memory, then copy the .dlog (or its CSV export, when --out ends in .csv) with MMEM:DATA?")
    cap.add_argument("--period", type=float, help="n6705: sample (integration) period in seconds")
    cap.add_argument("--duration", type=float, required=True, help="seconds to capture")
    cap.add_argument("--channel", action="append", default=[], metavar="N[:i|v|iv[:ROLE]]",
                     help="n6705 output to log (repeatable; default 1:iv): ROLE main (default), marker (its voltage "
                          "is the analog marker) or a supply name, e.g. --channel 1:iv --channel 2:v:marker")
    cap.add_argument("--trigger", choices=["bus", "imm", "ext"], default="bus",
                     help="n6705: bus = software trigger right after start (default), imm, ext = the rear BNC")
    cap.add_argument("--records", type=int, default=1000, help="n6705 elog: records per FETC:ELOG? (default 1000)")
    cap.add_argument("--marker", default="i1", help="otii: GPI of the marker: i1 (default), i2, none")
    cap.add_argument("--main-voltage", type=float, help="otii: set the main output to this voltage first")
    cap.add_argument("--power-on", action="store_true", help="otii: switch the main output (the DUT's supply) on first")
    add_output(cap, "--out", "the trace (.csv, or .dlog with --mode dlog); FILE.json gets the instrument's identity, "
               "settings and the import options", required=True)


def _options(items: list[str]) -> dict:
    """--option KEY=VALUE items; a value that reads as a number is one."""
    return key_values(items, "--option", convert=_number)


def _number(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _with_progress(chunks, path):
    """The trace's chunks, with a live count of samples read on a terminal (long traces take seconds)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    console = Console(stderr=True)
    if not console.is_terminal:
        yield from chunks
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True) as progress:
        from rich.markup import escape
        shown = escape(printable(str(path), keep_newlines=False))      # a file name is anyone's text
        task = progress.add_task(f"reading {shown}", total=None)
        n = 0
        for c in chunks:
            n += len(c)
            progress.update(task, description=f"reading {shown}: {n / 1e6:,.1f} M samples")
            yield c


def run(args, out) -> int:
    # every line quotes text from outside (a profile's name and peripherals, a trace's file name,
    # supplies and metadata, an instrument's identity, engine labels): all of it through printable
    out = PrintableLines(out)
    if args.energy_command == "model":
        return cmd_energy_model(args, out)
    if args.energy_command == "capture":
        return cmd_energy_capture(args, out)
    from ..targets.trace.formats import FORMATS
    if args.energy_command == "formats":
        for name, what in FORMATS.items():
            out.write(f"{name:<12} {what}\n")
        return 0
    if args.energy_command != "import":
        raise UsageError("energy: expected 'formats', 'import', 'model' or 'capture'")
    return cmd_energy_import(args, out)


def cmd_energy_import(args, out) -> int:
    """Segment and integrate a trace and store its windows: in a stored run's cells (--run), as a
    new run of one cell (--op), or not at all. Whether anything will be stored is decided first
    and said on the first line; the window table follows only that verdict, and a trace that will
    not be stored (it does not match the run, or cannot be read) gives its one-line error and no
    table."""
    from ..targets.trace.formats import FORMATS
    if args.format not in FORMATS:
        raise UsageError(f"--format: unknown trace format '{args.format}'; valid: {', '.join(FORMATS)}")
    if args.op and not args.engine:
        raise UsageError("--op needs --engine (a label for what ran on the device)")
    if args.json and not (args.op or args.run):
        raise UsageError("--json writes the run the trace is stored in: give --op OP --engine LABEL (a new run) "
                         "or --run RUN_ID (a stored run's cells)")
    current = _options(args.option).get("current_file")
    checked_output(args, "--json", inputs=((args.file, "the trace"),) + (((current, "the trace's current file"),)
                                                                        if current else ()))
    if args.op and args.run:
        raise UsageError("--op and --run exclude each other: store the trace as a new cell, or match it to a run")
    op = get_op(args.op) if args.op else None
    info, imported = _import(args)
    for w in imported["warnings"]:
        sys.stderr.write(f"warning: {printable(str(w), keep_newlines=False)}\n")     # the trace file's words
    trace_info = _trace_info(args, info, imported)
    n = len(imported["windows"])
    if args.run:
        return _store_in_run(args, out, info, imported, trace_info)
    if op is None:
        out.write(f"not stored: {n} windows read from {info.path} (give --run RUN_ID to match them to a stored run's "
                  "repetitions, or --op OP --engine LABEL to store them as a new run)\n")
        _print_windows(out, info, imported)
        return 0
    if not n:
        raise UsageError(f"{args.file}: no windows to store; nothing stored")
    out.write(f"storing {n} windows as a new run of one cell: {op.id} on {args.engine}\n")
    _print_windows(out, info, imported)
    return _store_as_run(args, op, info, imported, trace_info)


def _import(args):
    """(trace info, import_trace's result) of the trace file; a bad trace is a UsageError."""
    from ..targets.trace.formats import open_trace
    try:
        info, chunks = open_trace(args.file, args.format, **_options(args.option))
        imported = import_trace(info, _with_progress(chunks, args.file), nominal_voltage=args.voltage, min_width_s=args.min_width,
                                threshold=args.threshold, hysteresis=args.hysteresis, expect=args.expect,
                                partial=args.partial)
    except (TraceError, ValueError, PlanMismatch) as exc:
        raise UsageError(str(exc))
    except FileNotFoundError as exc:
        raise UsageError(f"{args.file}: {exc.strerror}")
    return info, imported


def _print_windows(out, info, imported: dict) -> None:
    """The first 50 windows, and the energy and duration summary with the split over supplies."""
    windows, summ = imported["windows"], imported["summary"]
    out.write(f"{info.path}: {imported['samples_total']:,} samples, {len(windows)} windows\n")
    out.write(f"{'#':>4} {'start s':>12} {'duration s':>12} {'energy J':>12} {'avg I A':>10}  flags\n")
    for w in windows[:50]:
        flags = ", ".join(w.flags + (["approximate"] if w.approximate else []))
        out.write(f"{w.index:>4} {w.start_s:>12.6f} {w.duration_s:>12.6e} {w.energy_j:>12.6e} {w.avg_current_a:>10.4e}  {flags}\n")
    if len(windows) > 50:
        out.write(f"… {len(windows) - 50} more windows\n")
    if summ:
        e, d = summ["energy_j"], summ["duration_s"]
        out.write(f"energy: median {e['median']:.6e} J, RSD {e['rsd_pct']:.2f} % · duration: median {d['median']:.6e} s, "
                  f"RSD {d['rsd_pct']:.2f} % · {summ.get('approximate', 0)} approximate (< 20 sampling periods)\n")
        for name, sp in (summ.get("supplies") or {}).items():
            out.write(f"supply {name}: median {sp['median_j']:.6e} J per window, {sp['share_pct']:.1f} % of the energy\n")


def _trace_info(args, info, imported: dict) -> dict:
    """The trace's conditions as stored: file, format, channels, import settings, and the capture's
    conditions when `energy capture` left them beside the file."""
    trace_info = {"path": str(info.path), "format": info.format, "sample_period_s": info.sample_period_s,
                  "channels": info.channels, "warnings": imported["warnings"], "notes": info.notes,
                  "samples": imported["samples_total"], "windows": len(imported["windows"]),
                  "supplies": imported["supplies"], "voltage": args.voltage, "threshold": args.threshold,
                  "hysteresis": args.hysteresis, "min_width_s": args.min_width}
    sidecar = Path(str(args.file) + ".json")          # written by `energy capture`: the instrument's conditions
    if sidecar.exists():
        try:
            trace_info["capture"] = json.loads(sidecar.read_text()).get("conditions")
        except (ValueError, AttributeError, OSError) as exc:
            raise UsageError(f"{sidecar}: not the capture's JSON conditions ({exc})")
    return trace_info


def _store_in_run(args, out, info, imported: dict, trace_info: dict) -> int:
    """The windows matched, in order, to the timed repetitions of stored run --run; energy stored in
    its cells. The match comes first: a mismatch is the one-line error, with no window table."""
    store = Store(args.db, create=False)      # a stored run is written: the store must exist
    run = store.load_run(resolve_one_run(store, args.run, "--run"))
    try:
        cells = attach_to_run(imported, run)
    except PlanMismatch as exc:
        raise UsageError(str(exc))
    out.write(f"matched {len(imported['windows'])} windows to {len(cells)} cells of run {run.id}: storing their energy\n")
    _print_windows(out, info, imported)
    conditions = dict(run.conditions, energy_trace=trace_info)
    store.save_cells(run.id, cells, conditions)
    _write_json(args, store, run.id)
    sys.stderr.write(f"stored energy in run {run.id} in {printable(store.label)}\n")
    return 0


def _store_as_run(args, op, info, imported: dict, trace_info: dict) -> int:
    """The windows stored as a new run with one cell: --op with --param, on engine --engine."""
    windows = imported["windows"]
    params = resolve_params(op, {k: v[0] if len(v) == 1 else v for k, v in split_params(args.param).items()}, "--param")
    cell = as_cell(imported, op.id, params, args.engine, f"trace:{info.format}")
    store = Store(args.db)
    # the plan as `energy import` has always stored it: the trace's one group, nothing it does not have
    plan = Plan.from_json({"suite": None, "baseline": None, "options": {"engines": [args.engine], "repeat": len(windows)},
                           "groups": [{"op": op.id, "params": params, "engines": [args.engine]}], "kind": "trace"})
    # the same lifecycle as a measured run: the trace is a target that yields its cells
    run_id = Runner(store, plan, target_for(plan, imported=([cell], trace_info))).run()
    _write_json(args, store, run_id)
    sys.stderr.write(f"stored as run {run_id} in {printable(store.label)}\n")
    return 0


def _write_json(args, store: Store, run_id: int) -> None:
    """--json: the stored run as JSON."""
    if args.json:
        write_atomic(Path(args.json), render_json(store.load_run(run_id)) + "\n", "--json")


def cmd_energy_capture(args, out) -> int:
    from ..targets.trace.live_n6705 import ChannelSpec, InstrumentError, N6705, write_capture_csv
    dest = checked_output(args, "--out")
    check_output(dest.with_name(dest.name + ".json"), "--out", force=args.force)     # its sidecar, too
    if not args.duration > 0:
        raise UsageError(f"--duration: must be > 0 s, got {args.duration}")
    try:
        if args.instrument == "otii":
            host, port = parse_resource(args.resource)
            with OtiiClient(host, port) as client:
                cap = OtiiCapture(client, main_voltage=args.main_voltage, power_on=args.power_on,
                                  marker=None if args.marker.lower() == "none" else args.marker)
                result = write_capture_csv(cap.capture(args.duration), dest)
                cond = cap.conditions()
        else:
            if args.period is None:
                raise UsageError("--period: required for the n6705 (sample period in seconds)")
            chans = [ChannelSpec.parse(c) for c in (args.channel or ["1:iv"])]
            with N6705(args.resource, args.backend) as inst:
                if args.mode == "elog":
                    result = write_capture_csv(inst.capture_elog(chans, args.period, args.duration, args.trigger,
                                                                 args.records), dest)
                else:
                    as_csv = dest.suffix.lower() == ".csv"
                    size = inst.capture_dlog(chans, args.period, args.duration, dest, trigger=args.trigger, as_csv=as_csv)
                    name = (lambda kind, ch: f"{kind.capitalize()} avg {ch}") if as_csv else (lambda kind, ch: f"{kind}{ch}")
                    main = next(c for c in chans if c.role == "main")
                    opts = {"current": name("curr", main.channel)}
                    for c in chans:
                        if c.role == "marker":
                            opts["marker_column"] = name("volt" if c.voltage else "curr", c.channel)
                        elif c.role != "main":
                            for kind, on in (("current", c.current), ("voltage", c.voltage)):
                                if on:
                                    opts[f"extra_{kind}"] = ",".join(filter(None, [opts.get(f"extra_{kind}"),
                                                                                  f"{c.role}:{name(kind[:4], c.channel)}"]))
                    result = {"bytes": size, "format": "n6705-csv" if as_csv else "n6705-dlog", "options": opts}
                cond = inst.conditions()
    except (InstrumentError, OtiiError, OtiiConnectionError, ValueError) as exc:
        raise UsageError(str(exc))
    write_atomic(dest.with_name(dest.name + ".json"), json.dumps({"conditions": cond, "import": result}, indent=2) + "\n")
    size = f"{result['samples']:,} samples" if "samples" in result else f"{result['bytes']:,} bytes"
    source = printable(str(cond['instrument'].get('idn') or cond['instrument'].get('server')), keep_newlines=False)
    out.write(f"{dest}: {size} from {source}; conditions in {dest.name}.json\n")     # idn: the instrument's words
    opts = " ".join(f"--option '{k}={v}'" for k, v in result["options"].items())
    analog = result["options"].get("marker_kind") == "analog" or "marker_column" in result["options"]
    out.write(f"import: cryptobench energy import {dest} --format {result['format']} {opts}\n")
    if analog:
        out.write("the marker is analog: add --threshold V (about half its high level, e.g. 1.65 for 3.3 V logic)\n")
    return 0


def cmd_energy_model(args, out) -> int:
    checked_output(args, "--json", inputs=((args.profile, "the power profile"),))
    try:
        profile = load_profile(args.profile)
        if (args.time is None) == (args.run is None):
            raise UsageError("energy model: give either --time S (one duration) or --run RUN_ID (a stored run)")
        if args.time is not None:
            if args.time <= 0:
                raise UsageError(f"--time: must be > 0 seconds, got {args.time}")
            e = modeled_energy(args.time, profile, args.state, args.peripheral)
            e.update({k: v for k, v in per_unit(e["per_op_j"], args.time, args.bytes).items() if k != "energy_per_op_j"})
            out.write(f"{profile.name}: {e['method']} (provenance: modeled)\n")
            out.write(f"energy per op {fmt_num(e['per_op_j'] * 1e6)} µJ · average power {fmt_num(e['avg_power_w'] * 1e3)} mW")
            if args.bytes:
                out.write(f" · {fmt_num(e['mJ_per_Mb'])} mJ/Mb · {fmt_num(e['throughput_Mbps'])} Mb/s · FoM {fmt_num(e['fom'])}")
            out.write(f"\ninputs: {profile.inputs_text(args.state, args.peripheral)}\n")
            doc = {"provenance": "modeled", "profile": profile.name, "supply_v": profile.supply_v,
                   "current_at_v": profile.current_at_v or None, **e}
        else:
            peri = engine_peripherals(args.engine_peripheral)
            if not 0 <= args.current_uncertainty < 1:
                raise UsageError(f"--current-uncertainty: a fraction in [0, 1), got {args.current_uncertainty}")
            store = Store(args.db, create=False)      # only reads: never creates a store
            run = store.load_run(resolve_one_run(store, args.run, "--run"))
            doc = model_run(run, profile, peri, args.baseline, args.current_uncertainty)
            out.write(f"run {run.id} x power profile {profile.name} ({profile.supply_v:g} V, active "
                      f"{profile.active_current_a * 1e3:g} mA" + (" + an engine's peripherals" if peri else "")
                      + f"): modeled energy (durations "
                      f"{', '.join(sorted({r['time_provenance'] for r in doc['rows']})) or 'none'})\n")
            table = Table("", columns(["op", "params", "engine", "µs", "µJ"], left=3))
            for r in doc["rows"]:
                params = " ".join(f"{k}={v}" for k, v in r["params"].items())
                table.add([r["op"], params, r["engine"], fmt_num(r["time_s"] * 1e6),
                           fmt_num(r["energy"]["per_op_j"] * 1e6)])
            print_table(console_for(out), table)
            for c in doc["comparisons"]:
                params = " ".join(f"{k}={v}" for k, v in c["params"].items())
                out.write(f"EEI {c['op']} {params} {c['engine']} vs {c['baseline']}: {fmt_num(c['value'])} "
                          f"[{fmt_num(c['ci'][0])}, {fmt_num(c['ci'][1])}] (duration improvement {fmt_num(c['duration_improvement'])})\n")
            out.write(f"inputs: {profile.inputs_text()}\n")
    except ValueError as exc:
        raise UsageError(str(exc))
    if args.json:
        write_atomic(Path(args.json), json.dumps(doc, indent=1) + "\n", "--json")
    return 0



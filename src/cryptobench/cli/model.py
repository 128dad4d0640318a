"""`cryptobench model …`: accelerator (the Pisa Cortex-A53 paper's eq. 1), offload (the TI
CC13x2/CC26x2 report §4: polling vs blocking; with a RUN, over its cells: cli/model_offload.py), crossover (from which length engine B beats A),
battery (a duty cycle's share of a battery).
Every output is provenance `modeled`. Formulas: docs/models.md."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.errors import UsageError
from ..core.units import parse_hz, parse_quantity
from ..core.printable import PrintableLines
from ..references import load_reference
from ..core.table import LEFT, Column, Table, columns
from ..report.terminal import print_table
from .commands import COMMANDS
from .model_offload import offload_from_run
from .common import (OneLineParser, add_db, add_output, checked_output, console_for, key_values, resolve_one_run,
                     write_atomic)
from ..analysis.models.accelerator import accelerator_model, additional_latency, fit_setup_per_block, solve_latency
from ..analysis.models.battery import battery_view, capacity_j, parse_rate
from ..analysis.models.crossover import crossover, driver_completion, sweep_from_run
from ..analysis.models.offload import OffloadModel
from ..store.database import Store
from ..targets.power import load_profile, modeled_energy

NAME = "model"
HELP = COMMANDS[NAME].help


def _si_arg(text):
    """A number with an SI prefix and unit (core/units.py)."""
    try:
        return parse_quantity(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def _hz_arg(text):
    """A frequency: '300MHz', '300mhz', '300e6' (core/units.py: m before Hz is mega)."""
    try:
        return parse_hz(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def add_parser(sub) -> None:
    model = sub.add_parser("model", help=HELP)
    msub = model.add_subparsers(dest="model_command", parser_class=OneLineParser)
    _add_accelerator_parser(msub)
    _add_offload_parser(msub)
    _add_crossover_parser(msub)
    _add_battery_parser(msub)


def _add_accelerator_parser(msub) -> None:
    acc = msub.add_parser("accelerator", help="the Pisa Cortex-A53 paper's eq. 1: TH = Q / (L·Tclk + AL); "
                                              "back-solve L; its Table V; fit setup + per-block cost to a "
                                              "stored sweep")
    acc.add_argument("--latency-cycles", type=float, metavar="L", help="module latency in clock cycles")
    acc.add_argument("--clock", type=_hz_arg, metavar="F", help="clock frequency (Hz; 300e6 or 300MHz)")
    acc.add_argument("--block-bits", type=float, metavar="Q", help="bits one pass handles (AES 128, SHA-256 512)")
    acc.add_argument("--in-bits", type=float, help="bits the DMA writes to the module per pass (default Q)")
    acc.add_argument("--out-bits", type=float, help="bits the DMA reads back per pass (default Q)")
    acc.add_argument("--per-op", action="store_true", help="Q is one operation (ECDSA): op/s and mJ/op")
    acc.add_argument("--dma-mm2s", type=_si_arg, metavar="BW", help="MM2S (memory to peripheral) bandwidth, bit/s (9.6G)")
    acc.add_argument("--dma-s2mm", type=_si_arg, metavar="BW", help="S2MM (peripheral to memory) bandwidth, bit/s (3.6G)")
    acc.add_argument("--al", type=_si_arg, metavar="SECONDS", help="additional latency AL given directly (e.g. 48.89ns)")
    acc.add_argument("--power", type=_si_arg, metavar="P", help="module dynamic power (W; 18mW)")
    acc.add_argument("--solve-latency", action="store_true", help="back-solve L from --throughput")
    acc.add_argument("--throughput", type=_si_arg, metavar="TH", help="with --solve-latency: Mbps (op/s with --per-op)")
    acc.add_argument("--pisa", action="store_true",
                     help="reproduce the Pisa Cortex-A53 paper's Table V HW FoM from its Table IV")
    acc.add_argument("--fit", metavar="RUN_ID|latest", help="fit setup + per-block time to a stored length sweep")
    acc.add_argument("--op", help="with --fit: the operation")
    acc.add_argument("--engine", help="with --fit: the engine")
    acc.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="with --fit: select cells")
    acc.add_argument("--block-bytes", type=int, default=16, help="with --fit: bytes per block (default 16; 0: per byte)")
    add_db(acc)
    add_output(acc, "--json", "also write the model\'s figures as JSON")


def _add_offload_parser(msub) -> None:
    off = msub.add_parser("offload", help="the TI CC13x2/CC26x2 report §4: polling vs blocking energy over payload "
                                          "length (flags only); or, with a RUN, the accelerator against software "
                                          "over a stored run's cells: fitted set-up and per-block cost, polling "
                                          "and interrupt completion, the payload length from which it wins")
    off.add_argument("run", nargs="?", metavar="RUN_ID|latest",
                     help="a stored run with both engines' cells of --op over a payload sweep (omit: the flag-only "
                          "model)")
    off.add_argument("--setup-us", type=float, help="flag-only: CPU-active setup time per operation (µs)")
    off.add_argument("--per-block-us", type=float, help="flag-only: peripheral time per block (µs)")
    off.add_argument("--block-bytes", type=int, default=16, help="bytes per block (default 16)")
    off.add_argument("--overhead-us", type=float,
                     help="flag-only: blocking/callback overhead: context switch, semaphore, idle entry and exit "
                          "(µs, CPU active)")
    off.add_argument("--active-ma", type=float, help="CPU active current (mA)")
    off.add_argument("--idle-ma", type=float, help="idle current, CPU domain off (mA)")
    off.add_argument("--peripheral-ma", type=float, help="the peripheral's extra current while it works (mA; default 0)")
    off.add_argument("--voltage", type=float, help="supply voltage (V; default 3.3, or the profile's)")
    off.add_argument("--profile", help="take currents and voltage from a power profile (e.g. cc2652); flags override; "
                                       "with a RUN: model energy t·V·I where cells have no stored energy")
    off.add_argument("--lengths", help="flag-only: payload lengths to tabulate, comma-separated (bytes)")
    off.add_argument("--op", help="with a RUN: the operation (e.g. aes-cbc-encrypt)")
    off.add_argument("--hw", metavar="ENGINE", help="with a RUN: the accelerator's engine (e.g. cc26x2-crypto)")
    off.add_argument("--sw", metavar="ENGINE", help="with a RUN: the software engine (e.g. mbedtls)")
    off.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                     help="with a RUN: select cells (other than bytes), e.g. key_bits=128")
    off.add_argument("--completion", choices=["polling", "interrupt"], default="polling",
                     help="with a RUN: how the driver learns the engine is done (default polling, as the cells "
                          "ran); interrupt adds the core's exception entry and return cycles")
    off.add_argument("--figure", metavar="FILE.svg|png", help="with a RUN: draw time vs payload, crossover marked")
    add_db(off)
    add_output(off, "--json", "also write the model\'s figures as JSON")


def _add_crossover_parser(msub) -> None:
    cx = msub.add_parser("crossover", help="from which payload length engine B is cheaper than A, time and energy")
    cx.add_argument("run", metavar="RUN_ID|latest")
    cx.add_argument("--op", required=True)
    cx.add_argument("--a", required=True, metavar="ENGINE")
    cx.add_argument("--b", required=True, metavar="ENGINE")
    cx.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="select cells (other than bytes)")
    cx.add_argument("--profile", help="model energy t·V·I where cells have no stored energy")
    cx.add_argument("--engine-peripheral", action="append", default=[], metavar="ENGINE=PERIPHERAL[+…]")
    add_db(cx)
    add_output(cx, "--json", "also write the model\'s figures as JSON")


def _add_battery_parser(msub) -> None:
    bat = msub.add_parser("battery", help="energy per day of a duty cycle and the share crypto takes, per engine")
    bat.add_argument("run", metavar="RUN_ID|latest")
    bat.add_argument("--rate", action="append", default=[], required=True, metavar="OP[,KEY=VALUE…]=N/h",
                     help="operations per hour (or /s, /min, /day) of one op (repeatable)")
    bat.add_argument("--battery-mah", type=float)
    bat.add_argument("--battery-v", type=float)
    bat.add_argument("--battery-wh", type=float)
    bat.add_argument("--baseline-ua", type=float,
                     help="the device's average current without crypto: sleep/idle, radio, sensors (µA; default 0, "
                          "which makes the share crypto-only and says so)")
    bat.add_argument("--profile", help="model energy t·V·I where cells have no stored energy (and the baseline's V)")
    bat.add_argument("--engine", action="append", default=[], help="only these engines (repeatable)")
    add_db(bat)
    add_output(bat, "--json", "also write the model\'s figures as JSON")


def _params(items) -> dict:
    return key_values(items, "--param")


def _write_json(path, doc) -> None:
    if path:
        write_atomic(Path(path), json.dumps(doc, indent=2, default=str) + "\n", "--json")


def run(args, out) -> int:
    handlers = {"accelerator": _accelerator, "offload": _offload, "crossover": _crossover, "battery": _battery}
    if args.model_command not in handlers:
        raise UsageError("model: expected 'accelerator', 'offload', 'crossover' or 'battery'")
    checked_output(args, "--json")
    try:
        # lines quote stored engine labels, ops' parameters and power profiles: all through printable
        return handlers[args.model_command](args, PrintableLines(out))
    except ValueError as exc:
        raise UsageError(str(exc))


# ----------------------------------------------------------------------------------- accelerator
def _g(x, unit=""):
    return f"{x:.6g}{(' ' + unit) if unit else ''}"


def _accelerator(args, out) -> int:
    modes = sum(bool(x) for x in (args.pisa, args.fit, args.solve_latency))
    if modes > 1:
        raise UsageError("model accelerator: --pisa, --fit and --solve-latency exclude each other")
    if args.pisa:
        return _pisa(args, out)
    if args.fit:
        return _fit(args, out)
    if args.clock is None:
        raise UsageError("model accelerator: --clock is required (e.g. --clock 300MHz)")
    if args.block_bits is None and not args.per_op:
        raise UsageError("model accelerator: --block-bits Q is required (or --per-op)")
    q = 1.0 if args.per_op else args.block_bits
    in_bits = args.in_bits if args.in_bits is not None else args.block_bits
    out_bits = args.out_bits if args.out_bits is not None else args.block_bits
    if args.al is not None:
        al, al_how = args.al, "given"
    elif args.dma_mm2s is not None and args.dma_s2mm is not None:
        if in_bits is None or out_bits is None:
            raise UsageError("model accelerator: --per-op needs --in-bits and --out-bits for AL from the DMA bandwidths")
        al = additional_latency(in_bits, out_bits, args.dma_mm2s, args.dma_s2mm)
        al_how = f"{in_bits:g} b / {args.dma_mm2s / 1e9:g} Gbps + {out_bits:g} b / {args.dma_s2mm / 1e9:g} Gbps"
    else:
        raise UsageError("model accelerator: give --dma-mm2s and --dma-s2mm (bit/s), or --al")
    th_unit = "op/s" if args.per_op else "Mbps"
    if args.solve_latency:
        if args.throughput is None:
            raise UsageError("model accelerator: --solve-latency needs --throughput")
        th = args.throughput if args.per_op else args.throughput * 1e6
        L = solve_latency(q, th, args.clock, al)
        doc = {"provenance": "modeled", "source": "the Pisa Cortex-A53 paper's eq. 1 solved for L", "latency_cycles": L,
               "throughput": args.throughput, "throughput_unit": th_unit, "al_s": al, "clock_hz": args.clock,
               "q": q}
        out.write("accelerator latency back-solved from eq. 1 (the Pisa Cortex-A53 paper): L = (Q / TH - AL) · f\n")
        out.write(f"  Q {q:g} {'op' if args.per_op else 'bit'}, TH {args.throughput:g} {th_unit}, "
                  f"AL {al * 1e9:.5g} ns ({al_how}), f {args.clock / 1e6:g} MHz\n")
        out.write(f"  L = {L:.6g} cycles ({L / args.clock * 1e9:.6g} ns)\n")
        out.write("provenance: modeled\n")
        _write_json(args.json, doc)
        return 0
    if args.latency_cycles is None:
        raise UsageError("model accelerator: --latency-cycles is required (or --solve-latency --throughput TH)")
    m = accelerator_model(args.latency_cycles, args.clock, q, in_bits or 0.0, out_bits or 0.0,
                          args.dma_mm2s or 1.0, args.dma_s2mm or 1.0, args.power, args.per_op, al_s=al)
    eu = "mJ/op" if args.per_op else "mJ/Mb"
    out.write("accelerator model, the Pisa Cortex-A53 paper's eq. 1: TH = Q / (L·Tclk + AL)\n")
    out.write(f"  Q {q:g} {'op' if args.per_op else 'bit'}, L {args.latency_cycles:g} cycles, "
              f"f {args.clock / 1e6:g} MHz (Tclk {1e9 / args.clock:.4g} ns)\n")
    out.write(f"  AL {al * 1e9:.5g} ns ({al_how})\n")
    out.write(f"  pass time L·Tclk + AL = {m['pass_time_s'] * 1e9:.5g} ns\n")
    out.write(f"  throughput TH = {m['throughput']:.6g} {th_unit} (module alone, AL = 0: {m['throughput_core']:.6g} {th_unit})\n")
    if args.power is not None:
        out.write(f"  power P = {args.power * 1e3:g} mW\n")
        out.write(f"  energy E = P / TH = {m['energy_total']:.6g} {eu}; FoM = TH / E = {m['fom_total']:.6g}\n")
        out.write(f"  energy while the module computes E = P·L·Tclk / Q = {m['energy_core']:.6g} {eu}; "
                  f"FoM = TH / E = {m['fom_core']:.6g} (the Pisa paper's Tables IV-V use this E)\n")
    out.write("provenance: modeled\n")
    _write_json(args.json, m)
    return 0


PISA_FILE = "references/data/pisa-a53.toml"
# What each accelerator moves per operation: Q (the work eq. 1 divides: bits, or 1 operation) and the bits in
# and out through the AXI4-DMA. The paper prints none of these widths; PISA_FILE's AL rows name the ones that
# reproduce its AL. Every printed figure (TH, P, E, FoM, AL, clock, DMA bandwidths) is read from PISA_FILE.
PISA_SHAPES = {
    "AES-ECB-256": dict(q=128, per_op=False, in_bits=128, out_bits=128),
    "SHA256": dict(q=512, per_op=False, in_bits=512, out_bits=256),
    "ECDSA-P521": dict(q=1, per_op=True, in_bits=256, out_bits=1042),
}
# each accelerator's rows in PISA_FILE: the catalog op and the parameters the paper states (labels vary)
PISA_OPS = {"AES-ECB-256": ("aes-ecb-encrypt", {"key_bits": 256}), "SHA256": ("sha256", {}),
            "ECDSA-P521": ("ecdsa-sign", {"curve": "p521"})}
_POWER_W = {"W": 1, "mW": 1e-3, "uW": 1e-6}


def _exact_ns(value: float) -> float:
    """A printed nanosecond figure in seconds as the decimal reads (316.11 ns is 316.11e-9 s, not 316.11 × 1e-9)."""
    return float(f"{value!r}e-9")


def _pisa_figure(row) -> tuple[str, float] | None:
    """(the figure's key in a pisa row, its value) for one accelerator row of PISA_FILE; None for other rows."""
    table = row.table.replace(" ", "").upper()
    if table == "TABLEIV" and row.metric in ("throughput", "ops_per_s"):
        return "th", row.value                                  # Mbps, or op/s for a per-operation accelerator
    if table == "TABLEIV" and row.metric in ("power", "dynamic_power"):
        return "p", row.value * _POWER_W.get(row.unit, 1e-3)
    if table == "TABLEIV" and row.metric in ("energy_per_bit", "energy"):
        return "e", row.value                                   # mJ/Mb, or mJ/op
    if table == "TABLEV" and row.metric == "fom":
        return "fom", row.value
    if "additional latency AL" in row.label and row.unit == "ns":
        return "al", _exact_ns(row.value)
    return None


def pisa_rows() -> tuple[dict, dict]:
    """Table IV (TH, P, E), Table V (HW FoM) and the stated AL of the Pisa Cortex-A53 paper's accelerators, and
    the clock and DMA bandwidths they run at, all from PISA_FILE: (rows by algorithm, {clock, mm2s, s2mm})."""
    ref = load_reference("pisa-a53")
    rows = {name: dict(shape) for name, shape in PISA_SHAPES.items()}
    bus: dict[str, float] = {}
    for r in ref.rows:
        if r.source.id != "hw":
            continue
        if r.label.startswith("AXI4-DMA maximum bandwidth") and r.unit == "Gbps":
            bus["mm2s" if "MM2S" in r.label else "s2mm"] = r.value * 1e9
            continue
        name = next((n for n, (op, given) in PISA_OPS.items() if r.op == op and r.given == given), None)
        figure = _pisa_figure(r) if name else None
        if figure:
            rows[name][figure[0]] = figure[1]
    bus["clock"] = float(ref.sources["hw"].clock_hz or 0)
    missing = [f"{name} {key}" for name, row in rows.items() for key in ("th", "p", "e", "fom", "al") if key not in row]
    missing += [key for key in ("clock", "mm2s", "s2mm") if not bus.get(key)]
    if missing:
        raise UsageError(f"{PISA_FILE}: no figure for {', '.join(missing)}; "
                         "model accelerator --pisa needs Table IV, Table V, AL and the DMA bandwidths")
    return rows, bus


def _pisa(args, out) -> int:
    rows, bus = pisa_rows()
    clock = bus["clock"]
    doc = {"provenance": "modeled", "source": f"the Pisa Cortex-A53 paper's Tables IV-V ({PISA_FILE})", "rows": []}
    out.write(f"the Pisa Cortex-A53 paper's hardware accelerators at {clock / 1e6:g} MHz: eq. 1 and Table V from "
              f"Table IV ({PISA_FILE})\n")
    table = Table("", columns(["algorithm", "AL stated", "AL DMA", "L (cycles)", "E=P·L·Tclk/Q", "E Table IV",
                               "FoM=TH/E", "Table V", "dev"]))
    for name, r in rows.items():
        al_dma = additional_latency(r["in_bits"], r["out_bits"], bus["mm2s"], bus["s2mm"])
        work = 1.0 if r["per_op"] else r["q"]
        th = r["th"] if r["per_op"] else r["th"] * 1e6
        L = solve_latency(work, th, clock, r["al"])
        k = 1e3 if r["per_op"] else 1e9
        e_model = r["p"] * (L / clock) / work * k
        fom = r["th"] / r["e"]
        dev = (fom - r["fom"]) / r["fom"] * 100
        row = {"algorithm": name, "al_stated_s": r["al"], "al_dma_s": al_dma, "latency_cycles": L,
               "energy_model": e_model, "energy_table_iv": r["e"], "fom": fom, "fom_table_v": r["fom"],
               "deviation_pct": dev}
        doc["rows"].append(row)
        table.add([name, f"{r['al'] * 1e9:.5g}ns", f"{al_dma * 1e9:.5g}ns", f"{L:.6g}", f"{e_model:.5g}",
                   f"{r['e']:.5g}", f"{fom:.6g}", f"{r['fom']:.6g}", f"{dev:+.2f}%"])
    print_table(console_for(out), table)
    out.write("L: eq. 1 solved with Tclk = 1/300 MHz = 3.33 ns (the paper's '5 ns' gives non-integer L); "
              "E = P·L·Tclk/Q reproduces Table IV's E; FoM = Table IV TH / Table IV E\n")
    bad = [r["algorithm"] for r in doc["rows"] if abs(r["deviation_pct"]) > 1]
    if bad:
        out.write(f"note: Table V's HW FoM does not follow from Table IV for {', '.join(bad)} "
                  "(the source's own arithmetic)\n")
    out.write("provenance: modeled\n")
    _write_json(args.json, doc)
    return 0



def _fit(args, out) -> int:
    if not args.op or not args.engine:
        raise UsageError("model accelerator --fit needs --op and --engine")
    store = Store(args.db, create=False)      # only reads: never creates a store
    run = store.load_run(resolve_one_run(store, args.fit, "--fit"))
    got = sweep_from_run(run, args.op, args.engine, _params(args.param))
    sweep, inputs = got["time"], got["time_provenance"]
    if not sweep:
        engines = sorted({c.engine for c in run.cells if c.op == args.op})
        raise UsageError(f"run {run.id}: no timed cells of {args.op} with a bytes parameter on '{args.engine}'"
                         f" (engines with {args.op}: {', '.join(engines) or 'none'})")
    fit = fit_setup_per_block([(p["x"], p["y"]) for p in sweep], args.block_bytes)
    fit.update({"run": run.id, "op": args.op, "engine": args.engine, "input_provenance": inputs})
    unit = "block" if args.block_bytes else "byte"
    label = inputs[0] if len(inputs) == 1 else "input"     # measured (host, board) or simulated (sim:…)
    out.write(f"fit of t = setup + per_{unit} · {unit}s to run {run.id}, {args.op} on {args.engine} "
              f"(least squares, {len(sweep)} lengths)\n")
    out.write(f"  inputs: the cells' median times, provenance {', '.join(inputs)} (target "
              f"{', '.join(sorted({c.target for c in run.cells if c.op == args.op and c.engine == args.engine}))}); "
              "setup, per-" + unit + " cost and fit: modeled\n")
    out.write(f"  setup {fit['setup_s'] * 1e6:.6g} µs, per {unit} ({fit['block_bytes']} B) {fit['per_block_s'] * 1e9:.6g} ns, "
              f"R² {fit['r2']:.6f}, RMS residual {fit['rms_residual_s'] * 1e9:.4g} ns (modeled)\n")
    out.write(f"  {'bytes':>8} {label + ' µs':>13} {'fit µs':>12} {'residual ns':>12} {'resid %':>8}\n")
    for p in fit["points"]:
        out.write(f"  {p['bytes']:>8g} {p['time_s'] * 1e6:>13.6g} {p['fit_s'] * 1e6:>12.6g} "
                  f"{p['residual_s'] * 1e9:>12.4g} {p['residual_pct'] or 0:>+7.2f}%\n")
    out.write(f"provenance: modeled (from {', '.join(inputs)} times)\n")
    _write_json(args.json, fit)
    return 0


# --------------------------------------------------------------------------------------- offload
def _offload(args, out) -> int:
    if args.run is not None:
        return offload_from_run(args, out)
    with_run = [f for f, v in (("--op", args.op), ("--hw", args.hw), ("--sw", args.sw), ("--figure", args.figure),
                                ("--param", args.param)) if v]
    if with_run:
        raise UsageError(f"model offload: {', '.join(with_run)} need a RUN (model offload RUN_ID|latest --op OP "
                         "--hw ENGINE --sw ENGINE)")
    missing = [f for f, v in (("--setup-us", args.setup_us), ("--per-block-us", args.per_block_us),
                              ("--overhead-us", args.overhead_us)) if v is None]
    if missing:
        raise UsageError(f"model offload: {', '.join(missing)} required (or a RUN: model offload RUN_ID|latest "
                         "--op OP --hw ENGINE --sw ENGINE)")
    active, idle, peri, volts, src = args.active_ma, args.idle_ma, args.peripheral_ma, args.voltage, "flags"
    if args.profile:
        prof = load_profile(args.profile)
        active = active if active is not None else prof.active_current_a * 1e3
        idle = idle if idle is not None else (prof.idle_current_a * 1e3 if prof.idle_current_a > 0 else None)
        if peri is None and "crypto" in prof.peripherals:
            peri = prof.peripherals["crypto"] * 1e3
        volts = volts if volts is not None else prof.supply_v
        at = f", currents measured at {prof.current_at_v:g} V" if prof.current_at_v else ""
        src = f"profile {prof.name}{at}: {prof.source}"
    if active is None or idle is None:
        raise UsageError("model offload: give --active-ma and --idle-ma (or a --profile that has them)")
    lengths = [16, 64, 256, 1024, 4096, 16384]
    if args.lengths:
        try:
            lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
        except ValueError:
            raise UsageError(f"--lengths: expected comma-separated byte counts, got '{args.lengths}'")
    m = OffloadModel(args.setup_us * 1e-6, args.per_block_us * 1e-6, args.block_bytes, args.overhead_us * 1e-6,
                     active * 1e-3, idle * 1e-3, (peri or 0.0) * 1e-3, volts if volts is not None else 3.3)
    cx = m.crossover()
    if cx.get("bytes") is not None and cx["bytes"] not in lengths:
        lengths = sorted(set(lengths) | {cx["bytes"], max(cx["bytes"] - m.block_bytes, m.block_bytes)})
    rows = m.table(lengths)
    doc = {**m.describe(), "currents_from": src, "crossover": cx, "rows": rows}
    out.write("offload model, the TI CC13x2/CC26x2 report §4: polling (CPU active throughout) vs blocking/callback "
              "(CPU idle while the peripheral works, plus overhead)\n")
    out.write(f"  setup {args.setup_us:g} µs, {args.per_block_us:g} µs per {m.block_bytes}-byte block, overhead "
              f"{args.overhead_us:g} µs; {m.voltage:g} V, active {m.active_a * 1e3:g} mA, idle {m.idle_a * 1e3:g} mA, "
              f"peripheral {m.peripheral_a * 1e3:g} mA ({src})\n")
    out.write(f"  {'bytes':>7} {'poll µs':>10} {'poll µJ':>10} {'block µs':>10} {'block µJ':>10}  cheaper\n")
    for r in rows:
        out.write(f"  {r['bytes']:>7} {r['poll_time_s'] * 1e6:>10.4g} {r['poll_energy_j'] * 1e6:>10.4g} "
                  f"{r['block_time_s'] * 1e6:>10.4g} {r['block_energy_j'] * 1e6:>10.4g}  {r['cheaper']}\n")
    if cx.get("bytes") is not None:
        out.write(f"  blocking uses less energy from {cx['bytes']} bytes (peripheral work W* = I_active·overhead/"
                  f"(I_active - I_idle) = {cx['work_s'] * 1e6:.4g} µs = {cx['bytes_exact']:.5g} bytes); "
                  f"polling below (TI Table 3 style); blocking is always {args.overhead_us:g} µs slower\n")
    else:
        out.write(f"  {cx['why']}\n")
    out.write("provenance: modeled\n")
    _write_json(args.json, doc)
    return 0


# ------------------------------------------------------------------------------------- crossover
def engine_peripherals(items) -> dict:
    """--engine-peripheral ENGINE=PERIPHERAL[+…] items as {engine: [peripherals]}."""
    return key_values(items, "--engine-peripheral", lists="+")


def _crossover(args, out) -> int:
    store = Store(args.db, create=False)      # only reads: never creates a store
    run = store.load_run(resolve_one_run(store, args.run, "--run"))
    prof = None
    if args.profile:
        prof = load_profile(args.profile)
    peri = engine_peripherals(args.engine_peripheral)
    params = _params(args.param)
    sweeps = {}
    for e in (args.a, args.b):
        s = sweep_from_run(run, args.op, e, params, prof, peri.get(e, ()))
        if not s["time"]:
            engines = sorted({c.engine for c in run.cells if c.op == args.op and c.ok})
            raise UsageError(f"run {run.id}: no timed cells of {args.op} with a bytes parameter on '{e}' "
                             f"(engines with {args.op}: {', '.join(engines) or 'none'})")
        sweeps[e] = s
    doc = {"provenance": "modeled", "run": run.id, "op": args.op, "a": args.a, "b": args.b}
    out.write(f"crossover, run {run.id}, {args.op}: from which payload length is {args.b} (B) cheaper than "
              f"{args.a} (A)\n")
    modes = {e: driver_completion(run, e) for e in (args.a, args.b)}
    if {modes[args.a], modes[args.b]} == {"polling", "interrupt"}:
        doc["driver_completion"] = modes
        poller = "A" if modes[args.a] == "polling" else "B"
        out.write(f"  driver modes: {poller} polls, {'B' if poller == 'A' else 'A'} completes by interrupt with the core "
                  "asleep in WFI: the polling-vs-blocking question of TI SWRA667 Table 3, from the model\n")
    for metric, unit, k in (("time", "µs", 1e6), ("energy", "µJ", 1e6)):
        a_pts, b_pts = sweeps[args.a][metric], sweeps[args.b][metric]
        if not a_pts or not b_pts:
            out.write(f"  {metric}: no energy for both engines (stored result.energy, or --profile to model it)\n")
            continue
        try:
            res = crossover(a_pts, b_pts)
        except ValueError as exc:
            raise UsageError(f"{args.a} and {args.b}: {exc}")
        doc[metric] = res
        if metric == "energy":
            doc["energy_provenance"] = sorted(set(sweeps[args.a]["energy_provenance"]) | set(sweeps[args.b]["energy_provenance"]))
        c, lo, hi = res["crossover"], res["earliest"], res["latest"]
        # only the verdict that applies is formatted: the others may lack the numbers they print
        verdict = {"always": lambda: f"B is cheaper at every stored length ({c['text']} bytes on)",
                   "never": lambda: f"B is not cheaper at the longest stored length ({c['text']} bytes)",
                   "crossover": lambda: f"B is cheaper from {c['x']:.5g} bytes"}[c["status"]]()
        out.write(f"  {metric}: {verdict}; interval from the cells' ci95: [{lo['text']}, {hi['text']}] bytes\n")
        if "linear_fit" in res:
            out.write(f"    least-squares lines: {res['linear_fit']['text']}\n")
        xs = res["lengths"]
        am = {p["x"]: p["y"] for p in a_pts}
        bm = {p["x"]: p["y"] for p in b_pts}
        out.write("    " + "  ".join(f"{x:g}B {am[x] * k:.4g}/{bm[x] * k:.4g}{unit}" for x in xs) + "  (A/B)\n")
    doc["time_provenance"] = sorted(set(sweeps[args.a]["time_provenance"]) | set(sweeps[args.b]["time_provenance"]))
    out.write(f"  time provenance of the inputs: {', '.join(doc['time_provenance'])}\n")
    if "energy" in doc:
        out.write(f"  energy provenance of the inputs: {', '.join(doc['energy_provenance'])}\n")
    if prof is not None and "modeled" in doc.get("energy_provenance", ()):
        out.write(f"  modeled energy t · V · I: {prof.inputs_text()}\n")
    out.write("provenance: modeled\n")
    _write_json(args.json, doc)
    return 0


# --------------------------------------------------------------------------------------- battery
def _battery(args, out) -> int:
    cap = capacity_j(args.battery_mah, args.battery_v, args.battery_wh)
    rates = [parse_rate(r) for r in args.rate]
    prof = None
    if args.profile:
        prof = load_profile(args.profile)
    baseline = _baseline(args, prof)
    store = Store(args.db, create=False)      # only reads: never creates a store
    run = store.load_run(resolve_one_run(store, args.run, "--run"))
    engines = args.engine or sorted({c.engine for c in run.cells if c.ok})
    per_op, prov, keys, from_profile = _battery_energies(run, engines, rates, prof)
    view = battery_view(per_op, keys, cap, baseline["power_w"])
    zero = baseline["current_ua"] == 0
    view.update({"run": run.id, "rates_per_hour": dict(keys), "baseline": baseline,
                 "share_is": ("crypto-only: the share under a 0 µA baseline assumption (nothing else draws current), "
                              "100 % by construction") if zero else
                             f"crypto's share of the device's energy with a {baseline['current_ua']:g} µA baseline",
                 "energy_inputs": {f"{e}|{k}": v for (e, k), v in prov.items()}})
    out.write(f"battery view, run {run.id}: capacity {cap:.5g} J ({cap / 3600:.4g} Wh)\n")
    out.write(f"  baseline (the rest of the device: sleep/idle, radio, sensors): {baseline['text']}\n")
    if from_profile:
        out.write(f"  modeled crypto energy: t · {prof.supply_v:g} V · {prof.active_current_a * 1e3:g} mA "
                  f"(profile {prof.name} active current; source: {prof.source})\n")
    out.write("  duty cycle: " + ", ".join(f"{k} {n:g}/h" for k, n in keys) + "\n")
    _battery_rows(out, view["rows"], prov, keys, zero)
    if zero:
        out.write("  * crypto-only share under a 0 µA baseline assumption: nothing but crypto draws current, so the share is "
                  "100 % by construction and battery days equal crypto-only days; give --baseline-ua (the device's "
                  f"average sleep/idle current{_standby_hint(prof)}) for crypto's real share\n")
    out.write("provenance: modeled\n")
    _write_json(args.json, view)
    return 0


def _battery_energies(run, engines, rates, prof):
    """Energy per op of each rated op on each engine: the cell's stored figure, else modeled t·V·I
    with the profile. Returns (engine -> {rate key -> J}, (engine, key) -> provenance, [(key, per
    hour)], whether the profile modeled any)."""
    per_op, prov, keys, from_profile = {e: {} for e in engines}, {}, [], False
    for op, params, n in rates:
        key = op + "".join(f",{k}={v}" for k, v in params.items())
        keys.append((key, n))
        for e in engines:
            cells = [c for c in run.cells if c.op == op and c.engine == e and c.ok
                     and all(str(c.params.get(k)) == v for k, v in params.items())]
            if not cells:
                continue
            if len(cells) > 1:
                choices = "; ".join(c.params.key for c in cells[:4])
                raise UsageError(f"--rate {key}: {len(cells)} cells of {op} on {e} match ({choices}): "
                                 "name the parameters, e.g. --rate " + op + ",bytes=64=60/h")
            cell = cells[0]
            en = cell.energy
            if en is not None and en.per_op_j is not None:    # any stored figure, within the idle noise too
                per_op[e][key] = en.per_op_j
                prov[(e, key)] = en.provenance
            elif prof is not None and cell.result is not None and cell.result.time_s:
                per_op[e][key] = modeled_energy(cell.result.time_s["median"], prof)["per_op_j"]
                prov[(e, key)] = "modeled"
                from_profile = True
    return per_op, prov, keys, from_profile


def _battery_rows(out, rows, prov, keys, zero: bool) -> None:
    table = Table("", columns(["engine", "crypto J/day", "share*" if zero else "share", "battery days",
                               "crypto-only days", "energy from"]))
    table.columns[-1] = Column("energy from", LEFT)
    for r in rows:
        if "missing" in r:
            table.notes.append(f"{r['engine']}: no energy for {', '.join(r['missing'])} (stored energy, or --profile)")
            continue
        src = sorted({prov[(r['engine'], k)] for k, _ in keys})
        days = f"{r['battery_days']:.5g}" if r["battery_days"] is not None else "-"
        co = f"{r['crypto_only_days']:.5g}" if r["crypto_only_days"] is not None else "-"
        share = f"{r['share'] * 100:.3g}%" if r["share"] is not None else "-"
        table.add([r["engine"], f"{r['crypto_j_per_day']:.5g}", share, days, co, ", ".join(src)])
    print_table(console_for(out), table)


def _baseline(args, prof) -> dict:
    """The baseline current (the device without crypto) as --baseline-ua gives it, or 0 µA assumed,
    at the battery's voltage (or the profile's): its power and a sentence saying all of that."""
    given = args.baseline_ua is not None
    ua = args.baseline_ua if given else 0.0
    if not (ua >= 0 and ua != float("inf")):
        raise UsageError(f"--baseline-ua: expected a finite current >= 0 µA, got {ua}")
    if args.battery_v:
        volts, at = args.battery_v, "--battery-v"
    elif prof is not None:
        volts, at = prof.supply_v, f"profile {prof.name}'s supply"
    else:
        volts, at = None, None
    if ua and volts is None:
        raise UsageError("--baseline-ua needs a voltage: --battery-v or a --profile")
    watts = ua * 1e-6 * (volts or 0.0)
    if ua == 0:
        text = ("0 µA assumed (" + ("given" if given else "the default") + "; set --baseline-ua): "
                "0 µW, 0 J/day")
    else:
        text = f"{ua:g} µA (--baseline-ua) at {volts:g} V ({at}): {watts * 1e6:.4g} µW, {watts * 86400:.4g} J/day"
    return {"current_ua": ua, "voltage_v": volts, "voltage_from": at, "power_w": watts,
            "j_per_day": watts * 86400.0, "given": given, "text": text}


def _standby_hint(prof) -> str:
    if prof is not None and prof.standby_current_a > 0:
        return f"; profile {prof.name} lists standby {prof.standby_current_a * 1e6:g} µA"
    return ""

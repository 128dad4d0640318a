"""`cryptobench sim run IMAGE.elf --device D [--marker M]`: any Cortex-M image on the simulator,
its cycles cut at a marker (docs/sim-model.md "Running your own image")."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import UsageError
from .common import OneLineParser, add_output, checked_output, console_for, write_atomic

NAME = "sim"
DEFAULT_TIMEOUT_S = 60.0


def add_parser(sub) -> None:
    sim = sub.add_parser("sim", help="the cycle-approximate simulator on an image of your own")
    ssub = sim.add_subparsers(dest="sim_command", parser_class=OneLineParser)
    r = ssub.add_parser("run", help="run an ELF cryptobench did not build and print its cycles between markers")
    r.add_argument("image", metavar="IMAGE.elf", help="a Cortex-M ELF (Thumb), as the linker wrote it")
    r.add_argument("--device", required=True,
                   help="device profile (sim/devices.toml; `cryptobench list targets`), e.g. stm32f030, "
                        "stm32f030:clock=8MHz, ideal-m4")
    r.add_argument("--marker", help="where cycles are cut: semihosting (default: between consecutive semihosting "
                                    "calls), function:NAME, ADDR:MASK (a data register's bits), or "
                                    "set=ADDR:MASK,clear=ADDR:MASK (a set/clear register pair)")
    r.add_argument("--vector-table", metavar="ADDR",
                   help="the vector table's address, where no section names it and the image does not load at the "
                        "device's boot address")
    r.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"stop a run that does not end after S seconds (wall clock; default {DEFAULT_TIMEOUT_S:g}); "
                        "the cycles so far are reported")
    add_output(r, "--json", "also write the result as JSON to FILE ('-': JSON on stdout instead of the table)")


def _device(spec: str):
    from ..sim.condition import split_spec
    from ..sim.devices import DEVICES, get_device
    name, _ = split_spec(spec)
    if name not in DEVICES:
        raise UsageError(f"--device: unknown device '{name}'; valid: {', '.join(DEVICES)}")
    return get_device(spec, DEVICES[name].core)


def run(args, out) -> int:
    if args.sim_command != "run":
        raise UsageError("sim: expected a subcommand: run")
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    json_path = checked_output(args, "--json", inputs=((args.image, "the image"),))
    from ..sim import markers
    from ..sim.engine import require_sim
    from ..sim.image import load_image, parse_addr
    from ..targets.boards import BOARDS
    device = _device(args.device)
    marker = markers.parse(args.marker)
    vt = parse_addr(args.vector_table, "--vector-table") if args.vector_table else None
    require_sim()
    board = BOARDS[device.board]
    image = load_image(Path(args.image), board.flash, board.ram, vt)
    from ..sim.imagerun_native import image_run
    result = image_run(image, device, board, marker).run(args.timeout)
    doc = _document(image, device, marker, result, args.timeout)
    for stream, text in result.console:
        sys.stderr.write(text)
    if result.console and not result.console[-1][1].endswith("\n"):
        sys.stderr.write("\n")
    if json_path is not None:
        write_atomic(json_path, json.dumps(doc, indent=2) + "\n")
    if args.json == "-":
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        _print(doc, out)
    return 0 if result.exit_code == 0 and not result.problem and not result.timed_out else 1


def _document(image, device, marker, result, timeout_s: float) -> dict:
    from ..sim import timing
    from ..sim.condition import describe
    from ..sim.devices import device_spec
    hz = device.clock_hz
    segments = [dict(s, time_s=s["cycles"] / hz) for s in result.segments]
    return {
        "image": str(image.path), "provenance": "simulated",
        "simulator": {"model": timing.MODEL_NAME, "model_version": timing.MODEL_VERSION, "core": device.core,
                      "rough": device.core in timing.ROUGH, "engine": "unicorn"},
        "device": device_spec(device.name, device.options), "core": device.core, "clock_hz": hz,
        "condition": describe(device.condition), "device_condition": device.condition,
        "marker": {"spec": marker.kind if marker.kind != "function" else f"function:{marker.name}",
                   "meaning": marker.describe()},
        "vector_table": {"address": image.vector_table, "found_by": image.vector_source},
        "memory_map": [{"start": r.start, "size": r.size, "what": r.what} for r in image.regions],
        "segments": segments,
        "total": {"cycles": result.stats.get("cycles"), "instructions": result.stats.get("instructions")},
        "exit_code": result.exit_code, "problem": result.problem or None,
        "timed_out": result.timed_out, "timeout_s": timeout_s,
        "systick_exceptions": result.exceptions_taken,
        "semihosting_calls": [{"cycles": c, "instructions": i, "call": label}
                              for c, i, label in result.semihosting_calls],
        "counter_reads": [{"cycles": c, "instructions": i} for c, i in result.counter_reads],
        "stats": result.stats, "notes": result.notes,
    }


def _print(doc: dict, out) -> None:
    from ..quantity import fmt_num
    from ..report.table import LEFT, RIGHT, Column, Table
    from ..report.terminal import print_table
    title = (f"{doc['image']} on {doc['device']} ({doc['core']}{', rough model' if doc['simulator']['rough'] else ''})"
             f": {doc['marker']['meaning']} - simulated")
    table = Table(title, [Column("segment", LEFT), Column("cycles", RIGHT), Column("instructions", RIGHT),
                          Column(f"time at {doc['clock_hz'] / 1e6:g} MHz (us)", RIGHT)])
    for s in doc["segments"]:
        table.add([s["label"], str(s["cycles"]), str(s["instructions"]), fmt_num(s["time_s"] * 1e6)])
    tot = doc["total"]
    table.notes.append(f"device condition: {doc['condition']}")
    table.notes.append(f"provenance: simulated (model {doc['simulator']['model']} v{doc['simulator']['model_version']}"
                       f" on Unicorn); whole run: {tot['cycles']} cycles, {tot['instructions']} instructions")
    table.notes.append(f"vector table at 0x{doc['vector_table']['address']:08x} ({doc['vector_table']['found_by']})"
                       + (f"; {doc['systick_exceptions']} SysTick exception(s) taken" if doc["systick_exceptions"]
                          else ""))
    table.notes += doc["notes"]
    if not doc["segments"]:
        table.notes.append("no segment: the marker never closed a window")
    ending = ("timed out after " + f"{doc['timeout_s']:g} s: the cycles so far" if doc["timed_out"]
              else doc["problem"] if doc["problem"] else f"the image exited with code {doc['exit_code']}")
    table.notes.append(f"end: {ending}")
    print_table(console_for(out), table)

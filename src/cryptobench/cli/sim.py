"""`cryptobench sim run IMAGE.elf --device D [--marker M]`: any Cortex-M image on the simulator,
its cycles cut at a marker (docs/sim-model.md "Running your own image").

The image is data from anyone: `--timeout` covers the whole command (loading, the run, writing
the result), `--max-instructions` stops the run, and the console, the call log and the segments
are bounded (targets/mcu/sim/limits.py; docs/promises.md, "What `sim run` guarantees for an untrusted image")."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from ..core.errors import UsageError
from ..core.printable import printable
from .commands import COMMANDS
from .common import OneLineParser, add_output, checked_output, console_for, write_atomic
from ..core.quantity import fmt_num
from ..core.table import LEFT, RIGHT, Column, Table
from ..report.terminal import print_table
from ..targets.mcu.boards import BOARDS
from ..targets.mcu import sim

NAME = "sim"
HELP = COMMANDS[NAME].help
DEFAULT_TIMEOUT_S = 60.0
MAX_INSTRUCTIONS = 2**63 - 1
RESULT_GRACE_S = 2.0
EXECUTOR_NAMES = {"native": "the native executor", "unicorn": "Unicorn"}     # the executor that ran, as printed


class TimedOut(UsageError):
    """The command's --timeout ran out before the run (loading) or after it (writing the result)."""

    exit_code = 1


def add_parser(sub) -> None:
    sim_parser = sub.add_parser("sim", help=HELP)
    ssub = sim_parser.add_subparsers(dest="sim_command", parser_class=OneLineParser)
    r = ssub.add_parser("run", help="run an ELF cryptobench did not build and print its cycles between markers")
    r.add_argument("image", metavar="IMAGE.elf", help="a Cortex-M ELF (Thumb), as the linker wrote it")
    r.add_argument("--device", required=True,
                   help="device profile (sim/devices.toml; `cryptobench list targets`), e.g. stm32f030, "
                        "stm32f030:clock=8MHz, ideal-m4")
    r.add_argument("--marker", action="append",
                   help="where cycles are cut: semihosting (default: between consecutive semihosting "
                        "calls), function:NAME (repeatable: each call of each function named), ADDR:MASK (a data "
                        "register's bits), or set=ADDR:MASK,clear=ADDR:MASK (a set/clear register pair)")
    r.add_argument("--profile", action="store_true",
                   help="also attribute every simulated cycle and instruction to the function (ELF symbol) that "
                        "holds it, with its calls, printed as a table by cycles and stored in the JSON (off by "
                        "default: it slows the run)")
    r.add_argument("--vector-table", metavar="ADDR",
                   help="the vector table's address, where no section names it and the image does not load at the "
                        "device's boot address")
    r.add_argument("--timeout", default=str(DEFAULT_TIMEOUT_S), metavar="S",
                   help=f"the whole command (loading the image, the run) ends after S seconds (wall clock; "
                        f"default {DEFAULT_TIMEOUT_S:g}, at most {sim.limits.MAX_TIMEOUT_S:g}), writing the result at most "
                        f"{RESULT_GRACE_S:g} s later; a run cut short reports the cycles so far")
    r.add_argument("--max-instructions", default=str(sim.limits.DEFAULT_MAX_INSTRUCTIONS), metavar="N",
                   help=f"stop the run once N instructions have executed (default {sim.limits.DEFAULT_MAX_INSTRUCTIONS:.0e}); "
                        "the cycles so far are reported")
    add_output(r, "--json", "also write the result as JSON to FILE ('-': JSON on stdout instead of the table)")


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= sim.limits.MAX_TIMEOUT_S):
        raise UsageError(f"--timeout {text}: expected a number of seconds greater than 0 and at most {sim.limits.MAX_TIMEOUT_S:g}")
    return value


def _max_instructions(text: str) -> int:
    try:
        value = float(text) if any(c in text.lower() for c in ".e") else int(text)
    except ValueError:
        value = math.nan
    if not (isinstance(value, int) or (math.isfinite(value) and value == int(value))) or \
            not 1 <= int(value) <= MAX_INSTRUCTIONS:
        raise UsageError(f"--max-instructions {text}: expected a whole number of instructions from 1 to "
                         f"{MAX_INSTRUCTIONS} (e.g. 1000000000 or 1e9)")
    return int(value)


def _device(spec: str):
    name, _ = sim.split_spec(spec)
    if name not in sim.DEVICES:
        raise UsageError(f"--device: unknown device '{name}'; valid: {', '.join(sim.DEVICES)}")
    return sim.get_device(spec, sim.DEVICES[name].core)


def run(args, out) -> int:
    if args.sim_command != "run":
        raise UsageError("sim: expected a subcommand: run")
    timeout = _timeout(args.timeout)
    max_instructions = _max_instructions(args.max_instructions)
    json_path = checked_output(args, "--json", inputs=((args.image, "the image"),))
    deadline = sim.Deadline(timeout)
    try:
        return _run(args, out, json_path, deadline, max_instructions)
    except sim.CommandTimeout as exc:
        raise TimedOut(f"{args.image}: --timeout {timeout:g} s ran out while {exc.what}") from None


def _prepare(args, max_instructions: int):
    """The device, marker, image and its run, set up to its first instruction."""
    device = _device(args.device)
    marker = sim.parse_markers(args.marker)
    vt = sim.parse_addr(args.vector_table, "--vector-table") if args.vector_table else None
    sim.require_sim()
    board = BOARDS[device.board]
    image = sim.load_image(Path(args.image), board.flash, board.ram, vt, part_regions=board.regions)
    runner = sim.image_run(image, device, board, marker, profile=getattr(args, "profile", False))
    runner.prepare(max_instructions)
    return image, device, marker, runner


def _run(args, out, json_path, deadline, max_instructions: int) -> int:
    with deadline.guard("loading the image"):
        image, device, marker, runner = _prepare(args, max_instructions)
    result = runner.run(deadline.run_budget())
    # the result is bounded (targets/mcu/sim/limits.py): writing it takes well under RESULT_GRACE_S, which
    # the command may take past --timeout rather than lose the run's figures
    with deadline.guard("writing the result", grace=RESULT_GRACE_S):
        doc = _document(image, device, marker, result, deadline.seconds)
        _write_console(result.console)
        if json_path is not None:
            write_atomic(json_path, json.dumps(doc, indent=2) + "\n")
        if args.json == "-":
            out.write(json.dumps(doc, indent=2) + "\n")
        else:
            _print(doc, out)
    return 0 if result.exit_code == 0 and not result.problem and not result.timed_out else 1


def _write_console(console) -> None:
    """The image's console on stderr, through printable (a CR before a newline dropped, every
    other control character shown as an escape); where the bounded log dropped characters, one
    line says how many."""
    for stream, text in console.chunks():
        if stream == "gap":
            sys.stderr.write(f"\n[cryptobench: {text} of console output not shown; the first {sim.limits.size_text(sim.limits.CONSOLE_HEAD)} "
                             f"and the last {sim.limits.size_text(sim.limits.CONSOLE_TAIL)} are]\n")
        else:
            sys.stderr.write(printable(text.replace("\r\n", "\n")))
    if console and not console.ends_with_newline():
        sys.stderr.write("\n")


def _document(image, device, marker, result, timeout_s: float) -> dict:
    hz = device.clock_hz
    segments = [dict(s, time_s=s["cycles"] / hz) for s in result.segments]
    summary = result.segments.summary
    return {
        "image": str(image.path), "provenance": "simulated",
        "simulator": {"model": sim.MODEL_NAME, "model_version": sim.MODEL_VERSION, "core": device.core,
                      "rough": device.core in sim.ROUGH,
                      "executor": result.stats.get("executor", "unknown"),    # the one that ran
                      "engine": result.stats.get("executor", "unknown")},     # its older name, kept for readers
        "device": sim.device_spec(device.name, device.options), "core": device.core, "clock_hz": hz,
        "condition": sim.describe_condition(device.condition), "device_condition": device.condition,
        "marker": {"spec": marker.spec(), "meaning": marker.describe()},
        "vector_table": {"address": image.vector_table, "found_by": image.vector_source},
        "memory_map": [{"start": r.start, "size": r.size, "what": r.what} for r in image.regions],
        "segments": segments,
        "segments_not_listed": ({"after": len(result.segments.first), "count": summary.count, "cycles": summary.cycles,
                                 "instructions": summary.instructions, "min_cycles": summary.min_cycles,
                                 "max_cycles": summary.max_cycles} if summary.count else None),
        "total": {"cycles": result.stats.get("cycles"), "instructions": result.stats.get("instructions")},
        "exit_code": result.exit_code, "problem": result.problem or None,
        "timed_out": result.timed_out, "timeout_s": timeout_s,
        "max_instructions": result.max_instructions, "instruction_limit_reached": result.limit_reached,
        "systick_exceptions": result.exceptions_taken,
        "semihosting_calls": [{"cycles": c, "instructions": i, "call": label}
                              for c, i, label in result.semihosting_calls],
        "semihosting_calls_total": result.semihosting_calls.count,
        "console": {"characters": result.console.chars, "writes": result.console.writes,
                    "characters_not_shown": result.console.dropped},
        "counter_reads": [{"cycles": c, "instructions": i} for c, i in result.counter_reads],
        "profile": result.profile,          # --profile: per function, most cycles first; None without it
        "stats": result.stats, "notes": result.notes + _bounded_notes(result),
    }


def _bounded_notes(result) -> list[str]:
    """What the bounded logs left out, one note each."""
    notes = []
    calls, console = result.semihosting_calls, result.console
    if calls.dropped:
        notes.append(f"semihosting calls: {calls.count} in all; the first {len(calls.first)} and the last "
                     f"{len(calls.last)} are listed")
    if console.dropped:
        notes.append(f"console: {console.chars} characters in {console.writes} writes; {console.dropped} characters in "
                     "the middle were not kept")
    return notes


def _print(doc: dict, out) -> None:
    title = (f"{doc['image']} on {doc['device']} ({doc['core']}{', rough model' if doc['simulator']['rough'] else ''})"
             f": {doc['marker']['meaning']} - simulated")
    table = Table(title, [Column("segment", LEFT), Column("cycles", RIGHT), Column("instructions", RIGHT),
                          Column(f"time at {doc['clock_hz'] / 1e6:g} MHz (us)", RIGHT)])
    rows = [(s["label"], s["cycles"], s["instructions"]) for s in doc["segments"]]
    gap = doc["segments_not_listed"]
    if gap:                       # the summarised middle, where the bounded log dropped segments
        rows.insert(gap["after"], (f"... {gap['count']} segments not listed (in all)", gap["cycles"],
                                   gap["instructions"]))
    for label, cycles, insns in rows:
        table.add([label, str(cycles), str(insns), fmt_num(cycles / doc["clock_hz"] * 1e6)])
    _notes(table, doc)
    print_table(console_for(out), table)
    if doc.get("profile") is not None:
        _print_profile(doc, out)


def _print_profile(doc: dict, out) -> None:
    """--profile: one row per function that ran, most cycles first."""
    total = doc["total"]["cycles"] or 0
    table = Table(f"{doc['image']} on {doc['device']}: cycles and instructions per function - simulated",
                  [Column("function", LEFT), Column("cycles", RIGHT), Column("% of cycles", RIGHT),
                   Column("instructions", RIGHT), Column("calls", RIGHT)])
    for row in doc["profile"]:
        table.add([printable(row["function"]), str(row["cycles"]),
                   f"{100 * row['cycles'] / total:.1f}" if total else "-", str(row["instructions"]), str(row["calls"])])
    table.notes.append("every cycle and instruction of the run goes to the function (ELF symbol) holding the block it "
                       "was counted for; a call is an entry into a function's first instruction by BL/BLX "
                       "(docs/sim-model.md, 'Per-function profile')")
    print_table(console_for(out), table)


def _notes(table, doc: dict) -> None:
    tot = doc["total"]
    table.notes.append(f"device condition: {doc['condition']}")
    table.notes.append(f"provenance: simulated (model {doc['simulator']['model']} v{doc['simulator']['model_version']}"
                       f" on {EXECUTOR_NAMES.get(doc['simulator']['executor'], doc['simulator']['executor'])})"
                       f"; whole run: {tot['cycles']} cycles, {tot['instructions']} instructions")
    table.notes.append(f"vector table at 0x{doc['vector_table']['address']:08x} ({doc['vector_table']['found_by']})"
                       + (f"; {doc['systick_exceptions']} SysTick exception(s) taken" if doc["systick_exceptions"]
                          else ""))
    table.notes += doc["notes"]
    if doc["segments_not_listed"]:
        gap = doc["segments_not_listed"]
        table.notes.append(f"segments: {len(doc['segments']) + gap['count']} in all; the first {gap['after']} and the "
                           f"last {len(doc['segments']) - gap['after']} are listed, the {gap['count']} between take "
                           f"{gap['min_cycles']} to {gap['max_cycles']} cycles each")
    if not doc["segments"]:
        table.notes.append("no segment: the marker never closed a window")
    ending = ("timed out after " + f"{doc['timeout_s']:g} s: the cycles so far" if doc["timed_out"]
              else doc["problem"] if doc["problem"] else f"the image exited with code {doc['exit_code']}")
    table.notes.append(f"end: {ending}")

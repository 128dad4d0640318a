"""`cryptobench list runs|suites|engines|ops|references|targets`."""
from __future__ import annotations

from ..catalog.ops import OPS
from ..targets.host.engines import ENGINES, probe_engines
from ..runner.suites import available_suites, load_suite
from .commands import COMMANDS
from .common import add_db, console_for
from ..references import available_references, load_reference
from ..report.one_line import one_line_rows
from ..store.database import Store
from ..targets.mcu.boards import BOARDS, hardware_note, memory_map
from ..targets.mcu import sim

NAME = "list"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    ls = sub.add_parser("list", help=HELP)
    ls.add_argument("what", choices=["runs", "suites", "engines", "ops", "references", "targets"])
    add_db(ls)


def run(args, out) -> int:
    if args.what == "runs":
        _runs(args, out)
    elif args.what == "targets":
        _targets(out)
    elif args.what == "suites":
        for name in available_suites():
            s = load_suite(name)
            out.write(f"{name:<12} {len(s.benches):>4} cells/engine  {s.title}\n")
    elif args.what == "references":
        for name in available_references():
            ref = load_reference(name)
            out.write(f"{name:<12} {len(ref.rows):>4} values  {ref.title}\n")
    elif args.what == "ops":
        for op in OPS.values():
            params = ", ".join(f"{p.name}={p.default}" + (f" ({'/'.join(map(str, p.choices))})" if p.choices else "")
                               for p in op.params)
            out.write(f"{op.id:<26} {op.title}" + (f"  [{params}]" if params else "") + "\n")
    else:
        states = probe_engines(list(ENGINES))
        for name, engine in ENGINES.items():
            info, why = states[name]
            status = "usable" if why is None else f"NOT usable: {why}"
            version = info.get("version", "")
            out.write(f"{name:<11} {status}\n            {engine.description}\n"
                      + (f"            {version}\n" if version else ""))
    return 0


def _runs(args, out) -> None:
    """The stored runs, one line each at any terminal width (the ids every other command takes):
    where the line is too long the label, then the target, then the suite are cut with "…"; the
    failed column only where a run has a failed cell, the time to the minute (`show` has the rest)."""
    store = Store(args.db, create=False)      # only reads: never creates a store
    rows = store.run_summaries()
    failed = any(r["failed"] for r in rows)
    header = ["id", "created", "status", "suite", "target", "cells"] + (["failed"] if failed else []) + ["label"]
    table = [[str(r["id"]), _minute(r["created"]), r["status"], r["suite"], r["target"], str(r["cells"])]
             + ([str(r["failed"])] if failed else []) + [r["label"]] for r in rows]
    label = len(header) - 1
    lines = one_line_rows(header, table, right={0, 5, 6} if failed else {0, 5},
                          floors=[(label, 12), (4, 16), (3, 8), (label, 1)], total=console_for(out).width)
    out.write(f"{len(rows)} run(s) in {store.label}\n" + "".join(line + "\n" for line in lines))


def _minute(created: str) -> str:
    """2026-11-28T02:50:18+0000 -> 2026-11-28 02:50 (the offset kept where it is not UTC's)."""
    if len(created) < 16 or created[10] != "T":
        return created
    offset = created[19:]
    return created[:10] + " " + created[11:16] + ("" if offset in ("", "+0000", "Z", "+00:00") else offset)


def _targets(out) -> None:
    """The microcontroller targets: QEMU machines, real boards (with whether they were run on silicon),
    the simulator's cores and devices (data: targets/boards.toml, sim/devices.toml), labgrid places;
    each with its memory map, so that an image of one's own can be linked for `sim run`."""
    for kind, boards in (("qemu:", [b for b in BOARDS.values() if b.qemu_machine]),
                         ("board:", [b for b in BOARDS.values() if b.pyocd_target]),
                         ("", [b for b in BOARDS.values() if b.hardware and not b.pyocd_target])):
        for b in boards:
            uart = b.console_uart
            console = f"{uart['kind']} UART, {uart['pins']}, {uart['baud']} baud" if uart else b.console
            if b.console == "semihosting" and not b.qemu_machine:
                console += " (a debugger must be attached)" + (f"; board UART: {b.uart_pins}" if b.uart_pins else "")
            out.write(f"{kind + b.name:<24} {hardware_note(b)}\n            {b.title}\n"
                      f"            cpus {', '.join(b.cpus)} (default {b.core}) · {b.clock_hz / 1e6:g} MHz · console {console}"
                      + (f" · marker {b.marker['pin']}" if b.marker else "") + "\n"
                      + f"            memory: {memory_map(b)}\n"
                      + (f"            flash: {b.flash_method}\n" if b.flash_method else ""))
    for core, cpu in sim.CORE_CPU.items():
        devices = [d for d in sim.DEVICES.values() if d.core == core]
        note = "simulator, rough model" if core in sim.ROUGH else "simulator"
        out.write(f"{'sim:' + core:<24} {note}\n            --cpu {cpu} · --device {', '.join(d.name for d in devices)}\n")
        for d in devices:
            out.write(f"            {d.name}: {_device_condition(d)}\n"
                      f"              memory ({d.board}): {memory_map(BOARDS[d.board])}\n")
            if d.peripheral_models:          # timing-annotated crypto peripherals (docs/accelerators.md)
                out.write("              peripherals modelled: " + ", ".join(
                    f"{m['kind']} at 0x{m['base']:08x}" + (f" (IRQ {m['irq']})" if m.get("irq") is not None else "")
                    + (" (an ATECC608 at 0x%02x on its bus)" % m["atecc608"] if m.get("atecc608") else "")
                    for m in d.peripheral_models) + "\n")
    out.write(f"{'labgrid:PLACE':<24} a board in a labgrid lab (LG_COORDINATOR; docs/lab.md)\n"
              "            PLACE,PLACE… or a pattern spreads one run over several places\n"
              "            the place's 'board' tag names one of the boards above\n")


def _device_condition(d) -> str:
    """A profile's default condition and what --device NAME:clock=… may ask of it."""
    text = f"{d.clock_hz / 1e6:g} MHz, {d.flash_ws} WS charged" + (", prefetch" if d.prefetch else "")
    if d.wait_states:
        text += " · WS table " + ", ".join(f"<= {hz / 1e6:g} MHz: {ws}" for hz, ws in d.wait_states)
    if d.max_clock_hz:
        text += f" · clock= up to {d.max_clock_hz / 1e6:g} MHz"
    if d.reset_clock_hz:
        text += f" · clock=reset: {d.reset_clock_hz / 1e6:g} MHz"
    if d.flash_cache:
        text += " · flash caches modelled (cache=on|off)"
    return text

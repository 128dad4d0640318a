"""Boards and CPU builds for microcontroller targets (data in boards.toml)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import UsageError

BOARDS_FILE = Path(__file__).with_name("boards.toml")
OPT_LEVELS = ("O0", "Os", "O2", "O3")


# console kind -> how the baud divisor is made from the UART clock and the baud rate
CONSOLE_KINDS = ("semihosting", "cmsdk-uart", "nrf-uart", "nrf-uarte", "stm32-usart", "stm32f0-usart",
                 "cc26x2-uart")
NRF_BAUDRATE = {9600: 0x00275000, 115200: 0x01D60000, 1000000: 0x10000000}   # nRF52840 PS 6.34.9.26 (UARTE)
HARDWARE = ("untested", "tested")


@dataclass(frozen=True)
class MemoryRegion:
    """A memory of the part beyond the flash and RAM the firmware is linked for (a TCM, another
    SRAM): listed so that a user can link an image of their own for `sim run`."""
    name: str
    base: int
    size: int
    note: str = ""


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    core: str
    cpus: tuple[str, ...]
    clock_hz: int
    flash: tuple[int, int]
    ram: tuple[int, int]
    console: str                       # "semihosting" or "KIND:0xADDR"
    qemu_machine: str = ""
    pyocd_target: str = ""
    marker: dict = field(default_factory=dict, hash=False, compare=False)   # pin, init, set, clear (or empty)
    console_uart: dict = field(default_factory=dict, hash=False, compare=False)  # pins, baud, clock_hz, init, div
    flash_method: str = ""             # how an image gets onto the board
    hardware: str = ""                 # real boards: "untested" (no silicon here) or "tested"
    uart_pins: str = ""                # the board's USB serial bridge pins, where no UART driver exists yet
    regions: tuple[MemoryRegion, ...] = ()   # the part's other memories (TCM, more SRAM), for `list targets`
    external_irqs: int = 32            # external interrupt vectors the firmware's table holds (core/startup.c)


class BoardsFileError(UsageError):
    pass


def _line_of(text: str, name: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() == f"[board.{name}]":
            return n
    return 0


def console_divisor(kind: str, clock_hz: int, baud: int) -> int:
    """The value the UART's driver writes to its baud register(s) (hal_cortexm.c, FW_CONSOLE_DIV)."""
    if kind in ("stm32-usart", "stm32f0-usart"):       # oversampling by 16: USARTDIV = f_ck / baud
        return round(clock_hz / baud)
    if kind == "cc26x2-uart":                          # PL011: 64 * (f / (16 baud)) = IBRD << 6 | FBRD
        return round(4 * clock_hz / baud)
    if kind == "nrf-uarte":
        return NRF_BAUDRATE[baud]
    return 0


def _console(name: str, b: dict, where: str) -> tuple[str, dict]:
    c = b["console"]
    if isinstance(c, str):
        kind = c.partition(":")[0]
        if kind not in CONSOLE_KINDS:
            raise BoardsFileError(f"{where}: console: unknown kind '{kind}'; expected one of {', '.join(CONSOLE_KINDS)}")
        return c, {}
    missing = [k for k in ("kind", "base", "pins", "baud", "clock_hz") if k not in c]
    if missing:
        raise BoardsFileError(f"{where}: console: missing {', '.join(missing)}; expected a table with kind, base, "
                              "pins, baud, clock_hz (the UART's clock after reset) and init")
    kind = c["kind"]
    if kind not in CONSOLE_KINDS or kind == "semihosting":
        raise BoardsFileError(f"{where}: console.kind: unknown UART '{kind}'; expected one of "
                              f"{', '.join(CONSOLE_KINDS[1:])}")
    if kind == "nrf-uarte" and c["baud"] not in NRF_BAUDRATE:
        raise BoardsFileError(f"{where}: console.baud: {c['baud']} is not one of the nRF BAUDRATE values this "
                              f"project knows: {', '.join(map(str, NRF_BAUDRATE))}")
    init = []
    for step in c.get("init", []):
        if len(step) not in (3, 4) or (len(step) == 4 and step[3] != "wait"):
            raise BoardsFileError(f"{where}: console.init: bad step {step!r}; expected [address, clear_mask, set_mask] "
                                  "or [address, mask, value, \"wait\"]")
        init.append((step[0], step[1], step[2], 1 if len(step) == 4 else 0))
    uart = {"kind": kind, "base": c["base"], "pins": c["pins"], "baud": c["baud"], "clock_hz": c["clock_hz"],
            "init": init, "div": console_divisor(kind, c["clock_hz"], c["baud"])}
    return f"{kind}:{c['base']:#x}", uart


def _regions(items: list, where: str) -> tuple[MemoryRegion, ...]:
    """`regions = [{ name, base, size, note }, …]` -> MemoryRegion records, or one line naming the entry."""
    out = []
    for item in items:
        if not isinstance(item, dict) or not {"name", "base", "size"} <= set(item) or set(item) - {"name", "base", "size", "note"} \
                or not isinstance(item["base"], int) or not isinstance(item["size"], int) or item["size"] <= 0:
            raise BoardsFileError(f"{where}: regions: bad entry {item!r}; expected {{ name = \"ITCM\", base = ADDRESS, "
                                  "size = BYTES (> 0), note = \"…\" (optional) }")
        out.append(MemoryRegion(name=item["name"], base=item["base"], size=item["size"], note=item.get("note", "")))
    return tuple(out)


def memory_map(board: Board) -> str:
    """'flash 0x08000000 512 KiB · RAM 0x20000000 128 KiB · ITCM 0x00000000 64 KiB': what an image
    of one's own is linked for (`list targets`)."""
    parts = [f"flash {board.flash[0]:#010x} {_size(board.flash[1])}", f"RAM {board.ram[0]:#010x} {_size(board.ram[1])}"]
    parts += [f"{r.name} {r.base:#010x} {_size(r.size)}" + (f" ({r.note})" if r.note else "") for r in board.regions]
    return " · ".join(parts)


def _size(n: int) -> str:
    return f"{n // 1024**2:g} MiB" if n % 1024**2 == 0 else f"{n / 1024:g} KiB"


def _load() -> tuple[dict[str, Board], dict[str, dict]]:
    text = BOARDS_FILE.read_text()
    doc = tomllib.loads(text)
    boards = {}
    for name, b in doc["board"].items():
        where = f"{BOARDS_FILE}:{_line_of(text, name)}: [board.{name}]"
        if b.get("hardware", "untested") not in HARDWARE:
            raise BoardsFileError(f"{where}: hardware: expected one of {', '.join(HARDWARE)}, got {b['hardware']!r}")
        if b.get("pyocd_target") and "hardware" not in b:
            raise BoardsFileError(f"{where}: a real board needs hardware = \"untested\" or \"tested\" "
                                  "(whether it was run on silicon)")
        console, uart = _console(name, b, where)
        regions = _regions(b.get("regions", []), where)
        irqs = b.get("external_irqs", 32)
        if not isinstance(irqs, int) or not 1 <= irqs <= 496:
            raise BoardsFileError(f"{where}: external_irqs: expected the part's number of external interrupts, "
                                  f"1 to 496 (ARMv7-M), got {irqs!r}")
        boards[name] = Board(name=name, title=b["title"], core=b["core"], cpus=tuple(b["cpus"]),
                             clock_hz=int(b["clock_hz"]), flash=tuple(b["flash"]), ram=tuple(b["ram"]),
                             console=console, qemu_machine=b.get("qemu_machine", ""),
                             pyocd_target=b.get("pyocd_target", ""), marker=b.get("marker", {}),
                             console_uart=uart, flash_method=b.get("flash_method", ""),
                             hardware=b.get("hardware", ""), uart_pins=b.get("uart_pins", ""), regions=regions,
                             external_irqs=irqs)
    return boards, doc["cpu"]


def hardware_note(board: Board) -> str:
    """What `list targets` says about a board's testing."""
    if board.qemu_machine:
        return "QEMU machine"
    if board.pyocd_target:
        return "untested on hardware" if board.hardware != "tested" else "tested on hardware"
    if not board.hardware:
        return "simulator only (no hardware behind it)"
    return "simulator memory map; " + ("untested on hardware" if board.hardware != "tested" else "tested on hardware")


BOARDS, CPUS = _load()


def qemu_boards() -> list[str]:
    return [n for n, b in BOARDS.items() if b.qemu_machine]


def real_boards() -> list[str]:
    return [n for n, b in BOARDS.items() if b.pyocd_target]


def get_board(name: str, emulated: bool) -> Board:
    """The board --target names: a QEMU machine's (`emulated`) or a real one's."""
    valid, kind = (qemu_boards(), "qemu") if emulated else (real_boards(), "board")
    if name not in valid:
        raise UsageError(f"--target: unknown {kind} board '{name}'; valid: " + ", ".join(f"{kind}:{v}" for v in valid))
    return BOARDS[name]


def check_cpu(board: Board, cpu: str | None) -> str:
    """The --cpu to build for on this board: the board's own core by default."""
    if cpu is None:
        return board.core
    if cpu not in CPUS:
        raise UsageError(f"--cpu: unknown core '{cpu}'; valid: {', '.join(CPUS)}")
    if cpu not in board.cpus:
        raise UsageError(f"--cpu {cpu}: the {board.title} cannot run {cpu} code; it runs: {', '.join(board.cpus)}")
    return cpu


def check_opt(opt: str | None) -> str:
    opt = opt or "Os"
    if opt not in OPT_LEVELS:
        raise UsageError(f"--opt: unknown level '{opt}'; valid: {', '.join(OPT_LEVELS)}")
    return opt

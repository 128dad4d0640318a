"""Boards and CPU builds for microcontroller targets (data in boards.toml)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError

BOARDS_FILE = Path(__file__).with_name("boards.toml")
OPT_LEVELS = ("O0", "Os", "O2", "O3")


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    core: str
    cpus: tuple[str, ...]
    clock_hz: int
    flash: tuple[int, int]
    ram: tuple[int, int]
    console: str
    qemu_machine: str = ""
    pyocd_target: str = ""
    marker: dict = field(default_factory=dict, hash=False, compare=False)   # pin, init, set, clear (or empty)


def _load() -> tuple[dict[str, Board], dict[str, dict]]:
    doc = tomllib.loads(BOARDS_FILE.read_text())
    boards = {}
    for name, b in doc["board"].items():
        boards[name] = Board(name=name, title=b["title"], core=b["core"], cpus=tuple(b["cpus"]),
                             clock_hz=int(b["clock_hz"]), flash=tuple(b["flash"]), ram=tuple(b["ram"]),
                             console=b["console"], qemu_machine=b.get("qemu_machine", ""),
                             pyocd_target=b.get("pyocd_target", ""), marker=b.get("marker", {}))
    return boards, doc["cpu"]


BOARDS, CPUS = _load()


def qemu_boards() -> list[str]:
    return [n for n, b in BOARDS.items() if b.qemu_machine]


def real_boards() -> list[str]:
    return [n for n, b in BOARDS.items() if b.pyocd_target]


def get_board(name: str, kind: str) -> Board:
    valid = qemu_boards() if kind == "qemu" else real_boards()
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

"""Real boards: flash the image with pyOCD (or take a board that is already flashed) and read
the firmware's JSON Lines from its serial port with pyserial.

The port is opened before the board is flashed and reset, so the hello line is not missed. The
line handling (read_lines) takes any object with a pyserial-like read(n) and is tested over a
pseudo-terminal pair; flashing needs a probe and is not exercised by the test suite."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ...core.errors import UsageError
from .firmware.protocol import FirmwareReport
from ...core.processes import child_environment
from .watchdog import watch_console
from ...core.extras import require


def read_lines(port, report: FirmwareReport, timeout_s: float, silence_s: float, on_line=lambda l: None) -> None:
    """Feed `report` from `port` (pyserial-like: read(n) returns b"" at its timeout) until the
    image's end line, a fault, or a watchdog (mcu/watchdog.py, shared with QEMU)."""
    watch_console(lambda: port.read(4096), report, timeout_s, silence_s,
                  silent_why="hang, lockup or wrong port/baud rate", on_line=on_line)


def flash_image(elf: Path, pyocd_target: str) -> None:
    if shutil.which("pyocd") is None:
        raise UsageError("pyocd not found: pip install 'cryptobench[boards]' (or pass --no-flash for a board you "
                         "flashed yourself)")
    proc = subprocess.run(["pyocd", "load", "--target", pyocd_target, str(elf)], capture_output=True, text=True,
                          env=child_environment())
    if proc.returncode != 0:
        raise UsageError(f"pyocd load failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    subprocess.run(["pyocd", "reset", "--target", pyocd_target], capture_output=True, text=True, env=child_environment())


def run_on_board(elf: Path, board, port: str, flash: bool = True, baud: int = 115200,
                 timeout_s: float = 300.0, silence_s: float = 30.0) -> FirmwareReport:
    serial = require("serial", "serial", "a board's console over a serial port (--target board:NAME)")
    report = FirmwareReport()
    try:
        ser = serial.Serial(port, baud, timeout=0.5)
    except serial.SerialException as exc:
        raise UsageError(f"--port {port}: {exc}")
    with ser:
        if flash:
            flash_image(elf, board.pyocd_target)
        read_lines(ser, report, timeout_s, silence_s)
    return report

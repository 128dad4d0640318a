"""Running a firmware image on a QEMU Cortex-M machine (functional only: QEMU has no cycle model,
so nothing it runs is ever reported as cycles or seconds). A watchdog kills an image that hangs
or goes silent (mcu/watchdog.py, shared with boards); the report then says so with the last
console lines."""
from __future__ import annotations

import selectors
import shutil
import subprocess
from pathlib import Path

from ...core.errors import UsageError
from .firmware.protocol import FirmwareReport
from ...core.processes import child_environment
from .watchdog import watch_console

QEMU = "qemu-system-arm"


def qemu_version() -> str:
    if shutil.which(QEMU) is None:
        raise UsageError(f"{QEMU} not found: run ./setup.sh (it installs qemu-system-arm with apt-get)")
    out = subprocess.run([QEMU, "--version"], capture_output=True, text=True, env=child_environment()).stdout
    return out.splitlines()[0] if out else QEMU


def run_image(elf: Path, machine: str, timeout_s: float = 120.0, silence_s: float = 30.0,
              on_line=lambda line: None, uart_console: bool = False) -> FirmwareReport:
    """Run `elf` on `machine`; stop at the image's end line, a fault, `timeout_s` in all, or
    `silence_s` without output. The console is semihosting, or with `uart_console` the machine's
    first serial port (its UART model), both read from QEMU's stdout."""
    cmd = [QEMU, "-M", machine, "-nographic", "-monitor", "none", "-serial", "stdio" if uart_console else "none",
           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
    report = FirmwareReport()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=child_environment())
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)

    def read() -> bytes | None:            # b"": nothing yet; None: QEMU ended
        if not sel.select(timeout=0.5):
            return None if proc.poll() is not None else b""
        return proc.stdout.read1(65536) or None
    try:
        watch_console(read, report, timeout_s, silence_s, on_line=on_line)
    finally:
        sel.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    if not report.complete and not report.problem:
        report.problem = f"QEMU exited (code {proc.returncode}) before the image's end line"
    return report

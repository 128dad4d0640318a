"""Running a firmware image on a QEMU Cortex-M machine (functional only: QEMU has no cycle model,
so nothing it runs is ever reported as cycles or seconds). A watchdog kills an image that hangs
or goes silent; the report then says so with the last console lines."""
from __future__ import annotations

import selectors
import shutil
import subprocess
import time
from pathlib import Path

from ..errors import UsageError
from ..firmware.protocol import FirmwareReport, LineSplitter
from ..processes import child_environment

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
    start = last = time.monotonic()
    lines = LineSplitter()
    try:
        while True:
            now = time.monotonic()
            if now - start > timeout_s:
                report.problem = f"watchdog: no end after {timeout_s:.0f} s"
                break
            if now - last > silence_s:
                report.problem = f"watchdog: no output for {silence_s:.0f} s (hang or lockup)"
                break
            if not sel.select(timeout=0.5):
                if proc.poll() is not None:
                    break
                continue
            chunk = proc.stdout.read1(65536)
            if not chunk:
                break
            last = time.monotonic()
            done = False
            for raw in lines.feed(chunk):
                text = raw.decode("utf-8", "replace")
                on_line(text)
                done = report.feed(text) or done
            if done:
                break
        if rest := lines.rest():
            report.feed(rest.decode("utf-8", "replace"))
    finally:
        sel.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    if not report.complete and not report.problem:
        report.problem = f"QEMU exited (code {proc.returncode}) before the image's end line"
    return report

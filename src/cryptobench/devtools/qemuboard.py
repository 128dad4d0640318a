"""An emulated board for a lab without silicon: a QEMU Cortex-M machine behind the two things a
lab exports for a real board, a serial line and a flash/power control.

- The serial line is a pseudo-terminal: QEMU's first UART (and its semihosting output) is copied
  to the pty's master, and the slave (/dev/pts/N) is what a labgrid exporter exports as a
  RawSerialPort, serving it over the network with ser2net, as it does a USB serial bridge. Bytes
  written while nobody holds the line are dropped, as a UART's are.
- The control port is HTTP on 127.0.0.1: `PUT /power` with "1" or "0" and `GET /power` (the
  protocol of labgrid's NetworkPowerPort model "rest"), `PUT /flash` with an ELF image (what
  cryptobench's QEMUFlashDriver sends; targets/mcu/lab/qemu_place.py). Powering on starts QEMU on the
  flashed image; flashing a powered board restarts it, as a probe's load-and-reset does.

Used by the tests and bench/lab_scale, and by anyone who wants to try a lab on one machine:

    python -m cryptobench.devtools.qemuboard --machine netduinoplus2

prints one JSON line ({"tty": ..., "control": ...}) once the board is up and serves until killed.
"""
from __future__ import annotations

import argparse
import errno
import http.server
import json
import os
import subprocess
import sys
import termios
import threading
import tty
from pathlib import Path

from ..core.processes import interrupt_on_sigterm

QEMU = "qemu-system-arm"


class QemuBoard:
    """One emulated board; `serve()` runs its control port until `stop()`."""

    def __init__(self, machine: str, workdir: Path, port: int = 0):
        self.machine = machine
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.image = self.workdir / "flash.elf"       # what is "in flash"
        self.powered = False
        self.flashes = self.power_ons = 0             # counted for the tests and the board's log
        self.lock = threading.Lock()
        self.qemu: subprocess.Popen | None = None
        self.master, slave = os.openpty()
        tty.setraw(slave)                             # no echo, no line editing: a UART carries bytes
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        self.tty = os.ttyname(slave)
        # the board holds its own end of the line open, so the pty keeps its raw settings and a
        # reader may come and go (ser2net opens the line when a client connects)
        self._slave_keep = slave
        os.set_blocking(self.master, False)
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.control = f"http://127.0.0.1:{self.http.server_address[1]}"

    # --- the board ------------------------------------------------------------------------------
    def power(self, on: bool) -> None:
        with self.lock:
            if on and not self.powered:
                self.powered = True
                self.power_ons += 1
                self._start()
            elif not on and self.powered:
                self.powered = False
                self._halt()

    def flash(self, data: bytes) -> None:
        with self.lock:
            self._halt()                              # a probe halts the core to write flash
            tmp = self.image.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(self.image)
            self.flashes += 1
            if self.powered:
                self._start()                         # … and resets it to run the new image

    def _start(self) -> None:
        if not self.image.exists():
            return                                    # a blank board: powered, silent
        termios.tcflush(self._slave_keep, termios.TCIFLUSH)   # what the last image left unread is gone
        self.qemu = subprocess.Popen(
            [QEMU, "-M", self.machine, "-nographic", "-monitor", "none", "-serial", "stdio",
             "-semihosting-config", "enable=on,target=native", "-kernel", str(self.image)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._copy_console, args=(self.qemu,), daemon=True).start()

    def _halt(self) -> None:
        if self.qemu is not None:
            if self.qemu.poll() is None:
                self.qemu.kill()
            self.qemu.wait()
            self.qemu = None

    def _copy_console(self, proc: subprocess.Popen) -> None:
        """QEMU's console to the line; a full line (nobody reading) drops bytes, as a UART does."""
        while True:
            chunk = proc.stdout.read1(4096)
            if not chunk:
                return
            try:
                os.write(self.master, chunk)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EIO):
                    raise

    # --- the control port -------------------------------------------------------------------------
    def _handler(self):
        board = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):              # quiet: the tests read the board's state instead
                pass

            def _reply(self, code: int, body: bytes = b"") -> None:
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path.rstrip("/") == "/power":
                    return self._reply(200, b"1" if board.powered else b"0")
                if self.path.rstrip("/") == "/state":
                    return self._reply(200, json.dumps(board.state()).encode())
                self._reply(404)

            def do_PUT(self):
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") == "/power":
                    if data.strip() not in (b"0", b"1"):
                        return self._reply(400, b"expected 0 or 1")
                    board.power(data.strip() == b"1")
                    return self._reply(200)
                if self.path.rstrip("/") == "/flash":
                    if not data.startswith(b"\x7fELF"):
                        return self._reply(400, b"expected an ELF image")
                    board.flash(data)
                    return self._reply(200)
                self._reply(404)

        return Handler

    def state(self) -> dict:
        return {"machine": self.machine, "tty": self.tty, "powered": self.powered, "flashes": self.flashes,
                "power_ons": self.power_ons, "running": self.qemu is not None and self.qemu.poll() is None}

    def serve(self) -> None:
        self.http.serve_forever(poll_interval=0.2)

    def start_thread(self) -> "QemuBoard":
        threading.Thread(target=self.serve, daemon=True).start()
        return self

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        with self.lock:
            self._halt()
        for fd in (self.master, self._slave_keep):
            try:
                os.close(fd)
            except OSError:
                pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cryptobench.devtools.qemuboard", description=__doc__.split("\n\n")[0])
    ap.add_argument("--machine", default="netduinoplus2", help="QEMU machine (default netduinoplus2: an STM32F405 "
                    "whose USART1 is QEMU's first serial port)")
    ap.add_argument("--workdir", default=None, help="where the flashed image is kept (default: a temporary folder)")
    ap.add_argument("--port", type=int, default=0, help="control port on 127.0.0.1 (default: any free port)")
    args = ap.parse_args(argv)
    import tempfile
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="qemuboard-"))
    board = QemuBoard(args.machine, workdir, args.port)
    interrupt_on_sigterm()
    print(json.dumps({"tty": board.tty, "control": board.control, "machine": board.machine}), flush=True)
    try:
        board.serve()
    except KeyboardInterrupt:
        pass
    finally:
        board.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

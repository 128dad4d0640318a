"""A labgrid lab on one machine, really started: a labgrid coordinator, one emulated board per
place (devtools/qemuboard.py: a QEMU machine behind a pty and a power/flash port), a labgrid
exporter exporting each board's serial line (served with ser2net, as for a USB serial bridge),
its power port (NetworkPowerPort, model rest) and its flash (QEMUFlashPort), and the places
created and tagged with their board, as a lab's admin would with labgrid-client.

The tests and bench/lab_scale start one; to try a lab by hand:

    python -m cryptobench.devtools.qemulab --places 2
    # prints LG_COORDINATOR=127.0.0.1:PORT; then, in another shell:
    LG_COORDINATOR=127.0.0.1:PORT cryptobench run --target 'labgrid:qemu-*' --engine mbedtls --op sha256
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

EXPORTER = "cryptobench-qemu"


class LabStartError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tool(name: str) -> str:
    here = Path(sys.executable).parent / name          # the venv's labgrid scripts
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if not found:
        raise LabStartError(f"{name} not found: pip install 'cryptobench[labgrid]' (./setup.sh installs it)")
    return found


class QemuLab:
    def __init__(self, places: list[str] | tuple[str, ...] = ("qemu-a", "qemu-b"), machine: str = "netduinoplus2",
                 board: str = "netduinoplus2", workdir: Path | None = None):
        self.places, self.machine, self.board = list(places), machine, board
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="cryptobench-lab-"))
        self.address = ""
        self.procs: list[subprocess.Popen] = []
        self.boards: dict[str, dict] = {}           # place -> {"tty", "control", "proc"}
        self.exporter: subprocess.Popen | None = None

    def start(self) -> "QemuLab":
        if shutil.which("ser2net") is None and not os.path.exists("/usr/sbin/ser2net"):
            raise LabStartError("ser2net not found: apt-get install ser2net (./setup.sh installs it)")
        try:
            self._coordinator()
            for place in self.places:
                self._board(place)
            self._exporter()
            for place in self.places:
                self._place(place)
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def env(self) -> dict:
        return {"LG_COORDINATOR": self.address}

    def _spawn(self, cmd: list[str], log: str, **kw) -> subprocess.Popen:
        out = open(self.workdir / log, "ab")
        proc = subprocess.Popen(cmd, cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=kw.pop("stdout", out),
                                stderr=out, **kw)
        self.procs.append(proc)
        return proc

    def _coordinator(self) -> None:
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        proc = self._spawn([_tool("labgrid-coordinator"), "-l", self.address], "coordinator.log")
        end = time.monotonic() + 30
        while time.monotonic() < end:
            if proc.poll() is not None:
                raise LabStartError(f"labgrid-coordinator exited ({proc.returncode}): {self._tail('coordinator.log')}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.1)
        raise LabStartError(f"labgrid-coordinator did not listen on {self.address} within 30 s")

    def _board(self, place: str) -> None:
        proc = self._spawn([sys.executable, "-m", "cryptobench.devtools.qemuboard", "--machine", self.machine,
                            "--workdir", str(self.workdir / place)], f"board-{place}.log", stdout=subprocess.PIPE)
        line = proc.stdout.readline()
        if not line:
            raise LabStartError(f"the emulated board for {place} did not start: {self._tail(f'board-{place}.log')}")
        self.boards[place] = {**json.loads(line), "proc": proc}

    def _exporter(self) -> None:
        lines = []
        for place, b in self.boards.items():
            lines += [f"{place}:", "  serial:", "    cls: RawSerialPort", f"    port: {b['tty']}", "    speed: 115200",
                      "  power:", "    cls: NetworkPowerPort", "    model: rest", f"    host: {b['control']}/power",
                      "    index: 0", "  flash:", "    cls: QEMUFlashPort", f"    url: {b['control']}/flash"]
        config = self.workdir / "exporter.yaml"
        config.write_text("\n".join(lines) + "\n")
        self.exporter = self._spawn([_tool("labgrid-exporter"), "-c", self.address, "-n", EXPORTER,
                                     "--hostname", "127.0.0.1", str(config)], "exporter.log")
        want = {(p, cls) for p in self.places for cls in ("NetworkSerialPort", "NetworkPowerPort", "QEMUFlashPort")}
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if self.exporter.poll() is not None:
                raise LabStartError(f"labgrid-exporter exited ({self.exporter.returncode}): {self._tail('exporter.log')}")
            out = self.client("resources", check=False)
            have = {(line.split("/")[1], line.split("/")[2]) for line in out.split() if line.count("/") >= 2}
            if want <= have:
                return
            time.sleep(0.3)
        raise LabStartError(f"labgrid-exporter did not export the boards within 60 s: {self._tail('exporter.log')}")

    def _place(self, place: str) -> None:
        self.client("-p", place, "create")
        self.client("-p", place, "add-match", f"{EXPORTER}/{place}/*")
        self.client("-p", place, "set-tags", f"board={self.board}")

    def client(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run([_tool("labgrid-client"), "-x", self.address, *args], capture_output=True, text=True,
                              cwd=self.workdir, timeout=60)
        if check and proc.returncode != 0:
            raise LabStartError(f"labgrid-client {' '.join(args)}: {(proc.stderr or proc.stdout).strip()}")
        return proc.stdout

    def acquired_by(self, place: str) -> str | None:
        for line in self.client("-p", place, "show").splitlines():
            if line.strip().startswith("acquired:"):
                value = line.split(":", 1)[1].strip()
                return None if value == "None" else value
        return None

    def board_state(self, place: str) -> dict:
        with urllib.request.urlopen(self.boards[place]["control"] + "/state", timeout=10) as reply:
            return json.loads(reply.read())

    def _tail(self, log: str) -> str:
        path = self.workdir / log
        text = path.read_text(errors="replace").strip() if path.exists() else ""
        return " | ".join(text.splitlines()[-3:]) or "(no output)"

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cryptobench.devtools.qemulab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--places", type=int, default=2, help="how many places (qemu-a, qemu-b, …; default 2)")
    ap.add_argument("--machine", default="netduinoplus2", help="the boards' QEMU machine (default netduinoplus2)")
    ap.add_argument("--board", default="netduinoplus2", help="the places' board tag (default netduinoplus2)")
    args = ap.parse_args(argv)
    names = [f"qemu-{chr(ord('a') + i)}" for i in range(args.places)]
    lab = QemuLab(names, args.machine, args.board).start()
    print(f"LG_COORDINATOR={lab.address}  places: {', '.join(names)}  (logs in {lab.workdir}); Ctrl-C stops the lab",
          flush=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        lab.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Client side of the JSON-Lines harness protocol (docs/protocol.md) over a pipe.

One `HarnessProcess` is one running native harness; the orchestrator starts one per engine
(an engine may need its own environment, e.g. a CPU-capability mask).
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path

from ...core.envnumbers import EnvNumber
from ...core.errors import HarnessError
from ...core.processes import child_environment

from ...core.paths import REPO_ROOT
DEFAULT_HARNESS = REPO_ROOT / "build" / "host" / "cbh"
REPLY_TIMEOUT_ENV = "CRYPTOBENCH_REPLY_TIMEOUT_S"
DEFAULT_REPLY_TIMEOUT_S = 600.0
REPLY_TIMEOUT = EnvNumber(REPLY_TIMEOUT_ENV, DEFAULT_REPLY_TIMEOUT_S, high=86400.0)
HANDSHAKE_TIMEOUT_ENV = "CRYPTOBENCH_HANDSHAKE_TIMEOUT_S"
HANDSHAKE_TIMEOUT = EnvNumber(HANDSHAKE_TIMEOUT_ENV, 30.0, high=3600.0)
KILL_WAIT_S = 5.0              # how long a stopped harness may take to exit before we stop waiting
_EOF = None                    # what the reader thread queues when the harness's stdout ends


def harness_path() -> Path:
    """Where the host harness binary is: $CRYPTOBENCH_HARNESS, else build/host/cbh of this tree."""
    env = os.environ.get("CRYPTOBENCH_HARNESS")
    return Path(env) if env else DEFAULT_HARNESS


def build_harness(quiet: bool = True) -> Path:
    """Build the host harness with the project's Makefile (`make -C harness/host`)."""
    cmd = ["make", "-C", str(REPO_ROOT / "harness" / "host"), f"BUILD={DEFAULT_HARNESS.parent}"]
    proc = subprocess.run(cmd, capture_output=quiet, text=True, env=child_environment())
    if proc.returncode != 0:
        tail = (proc.stderr or "")[-2000:] if quiet else ""
        raise HarnessError(f"building the host harness failed ({' '.join(cmd)}):\n{tail}")
    return DEFAULT_HARNESS


def configured_reply_timeout_s() -> float:
    """Seconds a harness may take to send each reply line: $CRYPTOBENCH_REPLY_TIMEOUT_S, else 600."""
    return REPLY_TIMEOUT.value()


def configured_handshake_timeout_s() -> float:
    """Seconds a harness may take to answer its start-up `hello`: $CRYPTOBENCH_HANDSHAKE_TIMEOUT_S,
    else 30. Its own deadline, short: a harness that never starts answering holds a run this long,
    not the reply deadline meant for a device's slowest operation."""
    return HANDSHAKE_TIMEOUT.value()


def asked_s(req: dict) -> float:
    """The time a request itself asks the harness to spend (window, calibrate: min_ns; idle: ns),
    which its reply may take on top of the reply timeout."""
    cmd = req.get("cmd")
    if cmd in ("window", "calibrate"):
        return int(req.get("min_ns") or 0) / 1e9
    if cmd == "idle":
        return int(req.get("ns") or 0) / 1e9
    return 0.0


def environment_with(overrides: dict | None) -> dict:
    """A harness's environment: this process's without the secret variables (core/processes.py; the
    pkcs11 engine's PIN comes back through its Provision's overrides), with `overrides` applied
    (a None value removes the variable)."""
    return child_environment(overrides)


class HarnessProcess:
    """A running harness. Each request gets its reply lines; errors come back as HarnessError.

    The start-up `hello` must be answered within the handshake timeout, and every later reply line
    within the reply timeout (plus the time the request itself asks for): a harness that does not answer (a hung device behind it) is killed and raises
    HarnessError, and from then on refuses every request with that reason."""

    def __init__(self, env_overrides: dict[str, str] | None = None, path: Path | None = None,
                 reply_timeout_s: float | None = None, handshake_timeout_s: float | None = None):
        self.path = Path(path) if path else harness_path()
        if not self.path.exists():
            raise HarnessError(f"host harness not found at {self.path}; build it with "
                               f"`make -C harness/host` or run ./setup.sh")
        env = environment_with(env_overrides)
        self.env_overrides = dict(env_overrides or {})
        self.reply_timeout_s = configured_reply_timeout_s() if reply_timeout_s is None else float(reply_timeout_s)
        self.stopped: str | None = None          # why this process was killed (no reply in time)
        # the handshake's own deadline, never longer than the reply deadline
        handshake_s = min(self.reply_timeout_s, configured_handshake_timeout_s() if handshake_timeout_s is None
                          else float(handshake_timeout_s))
        self._pending = ("hello", handshake_s)    # the request awaiting replies, its allowance
        try:
            self.proc = subprocess.Popen([str(self.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
        except OSError as exc:             # not executable, not a program for this machine, …
            raise HarnessError(f"cannot start the harness {self.path}: {exc.strerror or exc}; rebuild it "
                               "with ./setup.sh (or point CRYPTOBENCH_HARNESS at a working one)")
        self._stderr_tail: list[str] = []
        # a thread reads stdout into a queue so that every wait for a line can have a deadline
        # (select() on the pipe would not see lines already sitting in Python's text buffer)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.send({"cmd": "hello"}, allowance_s=handshake_s)     # the handshake's own, short deadline
        self.hello = self.collect()[0]

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self._stderr_tail = (self._stderr_tail + [line.rstrip()])[-20:]

    def _read_stdout(self) -> None:
        try:
            for line in self.proc.stdout:
                self._lines.put(line)
        except (OSError, ValueError):      # the pipe closed under us: the same as its end
            pass
        self._lines.put(_EOF)

    def _stop(self, cmd: str, waited_s: float) -> str:
        """Kill a harness that did not answer in time; the one-line reason, kept in `stopped`."""
        self.proc.kill()
        try:
            self.proc.wait(timeout=KILL_WAIT_S)
            outcome = "the process was stopped"
        except subprocess.TimeoutExpired:    # e.g. stuck in a device driver: killed, not yet gone
            outcome = f"the process was killed but had not exited {KILL_WAIT_S:g} s later"
        self.stopped = f"harness {self.path.name}: no reply to '{cmd}' within {waited_s:g} s; {outcome}"
        return self.stopped

    def _readline(self) -> dict:
        cmd, allowance = self._pending
        try:
            line = self._lines.get(timeout=allowance)
        except queue.Empty:
            raise HarnessError(self._stop(cmd, allowance)) from None
        if line is _EOF:
            self._lines.put(_EOF)          # every later read sees the end too
            self.proc.poll()
            raise HarnessError(f"harness {self.path.name} exited (code {self.proc.returncode})"
                               + (f": {' | '.join(self._stderr_tail[-3:])}" if self._stderr_tail else ""))
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HarnessError(f"harness sent a malformed line ({exc}): {line[:200]!r}")
        if not isinstance(msg, dict):
            raise HarnessError(f"harness sent {line[:200].strip()!r} where a JSON object was expected")
        return msg

    def request(self, req: dict, until: str | None = None) -> list[dict]:
        """Send one request; return its replies (one line, or lines up to a `until` type)."""
        self.send(req)
        return self.collect(until)

    def send(self, req: dict, allowance_s: float | None = None) -> None:
        """Write one request without waiting (several harnesses can then work at once); its replies
        may each take `allowance_s`, else the reply timeout and the time the request asks for."""
        if self.stopped:
            raise HarnessError(f"{self.stopped}, so it takes no more requests")
        if self.proc.poll() is not None:
            raise HarnessError(f"harness {self.path.name} is not running (code {self.proc.returncode})")
        allowance = self.reply_timeout_s + asked_s(req) if allowance_s is None else allowance_s
        self._pending = (str(req.get("cmd")), allowance)
        try:
            self.proc.stdin.write(json.dumps(req, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise HarnessError(f"harness {self.path.name} closed its input")

    def collect(self, until: str | None = None) -> list[dict]:
        """The replies to the request sent last: one line, or lines up to a `until` type."""
        replies = []
        while True:
            msg = self._readline()
            if msg.get("t") == "error":
                raise HarnessError(msg.get("msg", "unknown harness error"))
            replies.append(msg)
            if until is None or msg.get("t") == until:
                return replies

    # --- protocol verbs -------------------------------------------------------------------
    def engine_info(self, engine: str) -> dict:
        return self.request({"cmd": "engine", "engine": engine})[0]

    def supports(self, engine: str, op: str, params: dict) -> tuple[bool, str]:
        r = self.request({"cmd": "supports", "engine": engine, "op": op, "params": params})[0]
        return bool(r.get("ok")), r.get("why", "")

    def compute(self, engine: str, op: str, params: dict, inputs: dict) -> dict:
        r = self.request({"cmd": "compute", "engine": engine, "op": op, "params": params, "in": inputs})[0]
        return r.get("out", {})

    def setup(self, slot: int, engine: str, op: str, params: dict) -> None:
        self.request({"cmd": "setup", "slot": slot, "engine": engine, "op": op, "params": params})

    def _count(self, reply: dict, name: str, least: int, default: int | None = None) -> int:
        """A whole-number field of a reply, checked: a harness that answers `"k": "x"` or `"k": 0`
        fails its cell with the reason instead of a traceback or a division by zero later."""
        value = reply.get(name, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise HarnessError(f"harness {self.path.name} replied {name}={value!r} to '{self._pending[0]}'; "
                               f"expected a whole number >= {least}")
        return value

    def calibrate(self, slot: int, min_ns: int) -> int:
        return self._count(self.request({"cmd": "calibrate", "slot": slot, "min_ns": int(min_ns)})[0], "k", 1)

    def sample(self, slot: int, k: int, n: int = 1) -> list[tuple[int, int, int]]:
        replies = self.request({"cmd": "sample", "slot": slot, "k": int(k), "n": int(n)}, until="done")
        return [(self._count(r, "k", 1), self._count(r, "ns", 0), self._count(r, "cyc", 0, 0))
                for r in replies if r.get("t") == "sample"]

    def window(self, slot: int, k: int, min_ns: int) -> dict:
        """An energy window: batches of k operations until at least min_ns passed (docs/protocol.md)."""
        r = self.request({"cmd": "window", "slot": slot, "k": int(k), "min_ns": int(min_ns)})[0]
        return {"k": self._count(r, "k", 1), "ops": self._count(r, "ops", 1), "ns": self._count(r, "ns", 0),
                "cyc": self._count(r, "cyc", 0, 0)}

    def idle(self, ns: int) -> int:
        """Let the harness sleep ns; returns the nanoseconds it really slept."""
        return self._count(self.request({"cmd": "idle", "ns": int(ns)})[0], "ns", 0)

    def teardown(self, slot: int) -> None:
        try:
            self.request({"cmd": "teardown", "slot": slot})
        except HarnessError:
            pass

    def close(self) -> None:
        if self.stopped:                   # already killed; it may never read a quit
            return
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"cmd":"quit"}\n')
                self.proc.stdin.flush()
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

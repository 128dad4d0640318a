"""Client side of the JSON-Lines harness protocol (docs/protocol.md) over a pipe.

One `HarnessProcess` is one running native harness; the orchestrator starts one per engine
(an engine may need its own environment, e.g. a CPU-capability mask).
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from .errors import HarnessError

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_HARNESS = REPO_ROOT / "build" / "host" / "cbh"


def harness_path() -> Path:
    """Where the host harness binary is: $CRYPTOBENCH_HARNESS, else build/host/cbh of this tree."""
    env = os.environ.get("CRYPTOBENCH_HARNESS")
    return Path(env) if env else DEFAULT_HARNESS


def build_harness(quiet: bool = True) -> Path:
    """Build the host harness with the project's Makefile (`make -C harness/host`)."""
    cmd = ["make", "-C", str(REPO_ROOT / "harness" / "host"), f"BUILD={DEFAULT_HARNESS.parent}"]
    proc = subprocess.run(cmd, capture_output=quiet, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or "")[-2000:] if quiet else ""
        raise HarnessError(f"building the host harness failed ({' '.join(cmd)}):\n{tail}")
    return DEFAULT_HARNESS


def environment_with(overrides: dict | None) -> dict:
    """This process's environment with `overrides` applied; a None value removes the variable."""
    env = dict(os.environ)
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class HarnessProcess:
    """A running harness. Each request gets its reply lines; errors come back as HarnessError."""

    def __init__(self, env_overrides: dict[str, str] | None = None, path: Path | None = None,
                 reply_timeout_s: float = 600.0):
        self.path = Path(path) if path else harness_path()
        if not self.path.exists():
            raise HarnessError(f"host harness not found at {self.path}; build it with "
                               f"`make -C harness/host` or run ./setup.sh")
        env = environment_with(env_overrides)
        self.env_overrides = dict(env_overrides or {})
        self.reply_timeout_s = reply_timeout_s
        self.proc = subprocess.Popen([str(self.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
        self._stderr_tail: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.hello = self.request({"cmd": "hello"})[0]

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self._stderr_tail = (self._stderr_tail + [line.rstrip()])[-20:]

    def _readline(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.poll()
            raise HarnessError(f"harness {self.path.name} exited (code {self.proc.returncode})"
                               + (f": {' | '.join(self._stderr_tail[-3:])}" if self._stderr_tail else ""))
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            raise HarnessError(f"harness sent a malformed line ({exc}): {line[:200]!r}")

    def request(self, req: dict, until: str | None = None) -> list[dict]:
        """Send one request; return its replies (one line, or lines up to a `until` type)."""
        self.send(req)
        return self.collect(until)

    def send(self, req: dict) -> None:
        """Write one request without waiting (several harnesses can then work at once)."""
        if self.proc.poll() is not None:
            raise HarnessError(f"harness {self.path.name} is not running (code {self.proc.returncode})")
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

    def calibrate(self, slot: int, min_ns: int) -> int:
        return int(self.request({"cmd": "calibrate", "slot": slot, "min_ns": int(min_ns)})[0]["k"])

    def sample(self, slot: int, k: int, n: int = 1) -> list[tuple[int, int, int]]:
        replies = self.request({"cmd": "sample", "slot": slot, "k": int(k), "n": int(n)}, until="done")
        return [(int(r["k"]), int(r["ns"]), int(r.get("cyc", 0))) for r in replies if r.get("t") == "sample"]

    def window(self, slot: int, k: int, min_ns: int) -> dict:
        """An energy window: batches of k operations until at least min_ns passed (docs/protocol.md)."""
        r = self.request({"cmd": "window", "slot": slot, "k": int(k), "min_ns": int(min_ns)})[0]
        return {"k": int(r["k"]), "ops": int(r["ops"]), "ns": int(r["ns"]), "cyc": int(r.get("cyc", 0))}

    def idle(self, ns: int) -> int:
        """Let the harness sleep ns; returns the nanoseconds it really slept."""
        return int(self.request({"cmd": "idle", "ns": int(ns)})[0]["ns"])

    def teardown(self, slot: int) -> None:
        try:
            self.request({"cmd": "teardown", "slot": slot})
        except HarnessError:
            pass

    def close(self) -> None:
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

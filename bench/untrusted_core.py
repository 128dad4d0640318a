"""The probe's machinery for bench/hostile_probe_untrusted.py: a case, the world it runs in, the verdict."""
from __future__ import annotations

import hashlib
import os
import secrets as random_secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]
LIMIT_S = 120
BAD = ("traceback", "hang", "silent wrong", "input changed", "host program run", "host file read or written")
SHOWN = {"traceback": "tracebacks", "hang": "hangs", "silent wrong": "silent wrong", "input changed": "inputs changed",
         "host program run": "host programs run", "host file read or written": "host files read or written"}


@dataclass
class Case:
    klass: str
    name: str
    argv: list[str]
    rc: tuple[int, ...] = (2,)             # the exit codes that answer the case
    fragment: str = ""                     # a piece of the one-line error (rc 2) the answer must hold
    inputs: list[Path] = field(default_factory=list)      # files that must keep their bytes
    env: dict[str, str] = field(default_factory=dict)
    check: Callable[[subprocess.CompletedProcess, Path], str] | None = None   # "" when right, else why not
    one_line: bool = True                  # a refusal is one line on stderr
    allowed_outputs: tuple[str, ...] = ()  # names (in the scratch folder) the command may create
    stdin: str | None = None
    before: Callable[[], None] | None = None   # prepares what the case needs just before it runs (a tampered cache)


@dataclass
class World:
    """What every case can name: a work folder with canaries, a store with runs, the sim images."""
    work: Path
    db: Path
    token: str                    # the canary file's secret: must never appear in any output
    canary_file: Path
    canary_bin: Path
    marker: Path                  # written by a canary program when it runs
    watched: list[Path]           # folders whose files must not change


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "cryptobench.cli", *args]


def snapshot(folders: list[Path]) -> dict[str, str]:
    seen = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")) if folder.exists() else []:
            if p.is_file() and not p.is_symlink():
                st = p.stat()
                if st.st_size > 1 << 20:       # a large (or sparse) input: its size and times say enough
                    seen[str(p)] = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
                    continue
                try:
                    seen[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
                except OSError:
                    seen[str(p)] = "unreadable"
            elif not p.is_dir():
                seen[str(p)] = "special"
    return seen


def token_count(db: Path, token: str) -> int:
    """How often the canary token is in the store's file (an earlier case may have put it there)."""
    return db.read_bytes().count(token.encode()) if db.exists() else 0


def judge(case: Case, world: World) -> tuple[str, str]:
    scratch = Path(tempfile.mkdtemp(prefix="case-", dir=world.work / "scratch"))
    if case.before:
        case.before()
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in case.inputs if p.is_file()}
    before = snapshot(world.watched)
    stored_before = token_count(world.db, world.token)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRYPTOBENCH_")}
    env.update({"PYTHONPATH": str(ROOT / "src"), "CRYPTOBENCH_DB": str(world.db), **case.env})
    if world.marker.exists():
        world.marker.unlink()
    try:
        proc = subprocess.run(case.argv, capture_output=True, text=True, errors="surrogateescape", cwd=scratch,
                              env=env, timeout=LIMIT_S, input=case.stdin)
    except subprocess.TimeoutExpired:
        return "hang", f"ran past {LIMIT_S} s"
    if world.marker.exists():
        return "host program run", world.marker.read_text(errors="replace")[:200]
    created = sorted(p.name for p in scratch.iterdir() if p.name not in case.allowed_outputs)
    outputs = proc.stdout + proc.stderr + "".join(
        p.read_text(errors="replace") for p in scratch.rglob("*") if p.is_file() and p.stat().st_size < 1 << 24)
    if world.token in outputs or token_count(world.db, world.token) > stored_before:
        return "host file read or written", "the canary file's token reached an output or the store"
    after = snapshot(world.watched)
    changed = sorted(set(before.items()) ^ set(after.items()))
    if changed:
        return "host file read or written", f"changed outside its place: {changed[0][0]}"
    if created:
        return "host file read or written", f"created in the working folder: {created}"
    if any(hashlib.sha256(p.read_bytes()).hexdigest() != d for p, d in digests.items()):
        return "input changed", "an input's bytes changed"
    if "Traceback" in proc.stderr or proc.returncode not in case.rc:
        tail = proc.stderr.strip().splitlines()[-1:] or [""]
        return ("traceback" if "Traceback" in proc.stderr or proc.returncode not in (0, 1, 2, 3) else "silent wrong",
                f"exit {proc.returncode}: {tail[0][:200]}")
    if proc.returncode == 2:
        lines = proc.stderr.strip().splitlines()
        if case.one_line and len(lines) != 1:
            return "silent wrong", f"{len(lines)} lines on stderr: {proc.stderr[:300]!r}"
        if case.fragment and case.fragment not in proc.stderr:
            return "silent wrong", f"no {case.fragment!r} in {proc.stderr.strip()[:300]!r}"
    if "\x1b" in proc.stdout + proc.stderr:
        return "silent wrong", "a raw ESC reached the terminal"
    if case.check:
        why = case.check(proc, scratch)
        if why:
            return "silent wrong", why
    return "ok", ""


# ----------------------------------------------------------------------------------------------
# the world


def make_world(work: Path) -> World:
    (work / "scratch").mkdir()
    token = "CANARY-" + random_secrets.token_hex(8)
    canary_file = work / "canary" / "secret.h"
    canary_file.parent.mkdir()
    canary_file.write_text(f"/* {token} */\n#define CANARY_TOKEN \"{token}\"\n{token}\n")
    canary_bin = work / "canary-bin"
    canary_bin.mkdir()
    marker = work / "canary-ran"
    for prog in ("as", "cc1", "cc1plus", "collect2", "ld", "lto-wrapper", "cpp", "gcc", "arm-none-eabi-as",
                 "arm-none-eabi-ld", "arm-none-eabi-gcc", "qemu-system-arm", "sh", "wrapper"):
        script = canary_bin / prog
        script.write_text(f"#!/bin/sh\necho \"$0 $*\" > '{marker}'\nexit 1\n")
        script.chmod(0o755)
    db = work / "store.sqlite"
    return World(work=work, db=db, token=token, canary_file=canary_file, canary_bin=canary_bin, marker=marker,
                 watched=[canary_file.parent, canary_bin, work / "inputs"])


def seed_store(world: World) -> None:
    """Two small host runs, one labelled with a formula, for export/show/report/diff."""
    for label in ("plain", "=HYPERLINK(\"http://x\",\"y\")"):
        proc = subprocess.run(cli_argv("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2",
                                       "--label", label, "--db", str(world.db)),
                              capture_output=True, text=True, cwd=world.work, timeout=LIMIT_S,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        assert proc.returncode == 0, proc.stderr


# ----------------------------------------------------------------------------------------------
# the classes: each a function of the world that returns its cases


def write_input(world: World, name: str, text: str | bytes) -> Path:
    path = world.work / "inputs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path



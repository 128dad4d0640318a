"""git, run on someone else's repository as data (docs/promises.md, "A library's repository").

A repository's own configuration (.git/config, and every file it includes) may name programs:
filter drivers, textconv and diff drivers, an fsmonitor, hooks, a pager, credential helpers, an
ssh command, a GPG program, a transport (`ext::`) that a lazy fetch of a missing object would
start. cryptobench runs only git commands that read objects, refs and ignore rules (rev-parse,
ls-tree, cat-file --batch without --filters/--textconv, for-each-ref, check-ignore, rev-list),
none of which starts a filter, a diff driver or a pager, and runs each with the settings that could
start a program overridden on the command line, which outranks every configuration file:

* no system or global configuration, no inherited GIT_* variable (GIT_DIR, GIT_EXTERNAL_DIFF,
  GIT_SSH_COMMAND, GIT_PAGER, …), no secret variable (child_environment), no prompt;
* hooks point at /dev/null, the fsmonitor and the untracked cache are off, no pager;
* every transport is refused (GIT_ALLOW_PROTOCOL names none, which outranks protocol.<name>.allow
  in the repository's config), so a partial clone's lazy fetch cannot start anything;
* no credential helper, no signature check (gpg.program never runs).

Every git call has a time limit, and `stream` reads a command's output as it comes, so a caller can
stop a command whose output passes a cap (a tree of ten million paths) before it is all read."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from ....core.errors import UsageError
from ....core.processes import child_environment

FLAG = "--library-source"
HASH_RX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")      # SHA-1 or SHA-256 repositories
GIT_CONFIG = ("--no-pager", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
              "-c", "core.untrackedCache=false", "-c", "protocol.allow=never", "-c", "credential.helper=",
              "-c", "log.showSignature=false", "-c", "core.pager=cat", "-c", "core.sshCommand=false",
              "-c", "core.askPass=", "-c", "core.attributesFile=/dev/null")
GIT_TIMEOUT_S = 120.0
NO_PROTOCOL = "cryptobench-allows-no-transport"      # GIT_ALLOW_PROTOCOL: a list that names no real protocol


def git_environment() -> dict[str, str]:
    """The environment git runs with: no system or global configuration, no prompt, no inherited
    GIT_* variable (which could point git at another repository, work tree or program), no
    transport, no lazy fetch, no secret."""
    drop = {k: None for k in os.environ if k.startswith("GIT_")}
    return child_environment({**drop, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                              "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_ASKPASS": None,
                              "GIT_ALLOW_PROTOCOL": NO_PROTOCOL, "GIT_NO_LAZY_FETCH": "1",
                              "GIT_NO_REPLACE_OBJECTS": "1", "SSH_ASKPASS": None, "PAGER": "cat",
                              "LC_ALL": "C"})


def git_argv(folder: Path, *args: str) -> list[str]:
    return ["git", *GIT_CONFIG, "-C", str(folder), *args]


def git(folder: Path, *args: str, data: bool = False, check: bool = True, input: bytes | None = None):
    """Run git in `folder` with the sanitized environment; stdout as text (bytes with `data`).
    None when git fails and `check` is False; a UsageError naming --library-source otherwise."""
    try:
        proc = subprocess.run(git_argv(folder, *args), capture_output=True, env=git_environment(),
                              timeout=GIT_TIMEOUT_S, input=input, stdin=None if input else subprocess.DEVNULL)
    except FileNotFoundError:
        raise UsageError(f"{FLAG}: DIR@REF needs git, which is not installed")
    except subprocess.TimeoutExpired:
        raise UsageError(f"{FLAG}: git {args[0]} in {folder} took over {GIT_TIMEOUT_S:.0f} s")
    if proc.returncode != 0:
        if not check:
            return None
        raise UsageError(f"{FLAG}: git {args[0]} failed in {folder}: {last_line(proc.stderr)}")
    return proc.stdout if data else proc.stdout.decode("utf-8", "replace")


def last_line(stderr: bytes) -> str:
    return (stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1][:300]


class GitStream:
    """A git command whose output is read as it comes (`records` splits it at a separator), and
    whose stdin can be written a request at a time (cat-file --batch): the caller can stop it at
    any point (`close` kills it). `deadline` (time.monotonic()) bounds the whole conversation, not
    one read: a caller checks `expired` between records."""

    def __init__(self, folder: Path, *args: str, deadline: float, stdin: bool = False):
        self.what = f"git {args[0]} in {folder}"
        self.deadline = deadline
        self.err = tempfile.TemporaryFile()     # a file, not a pipe: git's warnings can never fill it and stall git
        try:
            self.proc = subprocess.Popen(git_argv(folder, *args), stdout=subprocess.PIPE, stderr=self.err,
                                         stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                         env=git_environment())
        except FileNotFoundError:
            raise UsageError(f"{FLAG}: DIR@REF needs git, which is not installed")
        self.out = self.proc.stdout

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            self.close()
            raise UsageError(f"{FLAG}: {self.what} took over {GIT_TIMEOUT_S:.0f} s (the export's time limit)")

    def records(self, sep: bytes = b"\0", max_record: int = 1 << 16):
        """Each record of the output up to `sep` (without it); a record longer than max_record is
        a UsageError (no line of an ls-tree listing is that long)."""
        pending = b""
        while True:
            self.check_time()
            chunk = self.out.read1(1 << 16)
            if not chunk:
                break
            pending += chunk
            *done, pending = pending.split(sep)
            yield from done
            if len(pending) > max_record:
                self.close()
                raise UsageError(f"{FLAG}: {self.what} wrote a record over {max_record} bytes")
        if pending:
            yield pending
        self.finish()

    def request(self, line: bytes) -> None:
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def read_line(self) -> bytes:
        self.check_time()
        return self.out.readline(1 << 12)

    def read_exact(self, size: int):
        """The next `size` bytes of the output, in chunks (never all at once)."""
        left = size
        while left:
            self.check_time()
            chunk = self.out.read(min(left, 1 << 20))
            if not chunk:
                raise UsageError(f"{FLAG}: {self.what} ended {left} bytes early")
            left -= len(chunk)
            yield chunk

    def finish(self) -> None:
        """Wait for the command's end; a failure is a UsageError with git's last line."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=max(1.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.close()
            raise UsageError(f"{FLAG}: {self.what} took over {GIT_TIMEOUT_S:.0f} s")
        if rc != 0:
            self.err.seek(0)
            raise UsageError(f"{FLAG}: {self.what} failed: {last_line(self.err.read(1 << 16))}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.err):
            if pipe and not pipe.closed:
                pipe.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

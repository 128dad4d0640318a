"""Processes: whether one still runs, and the environment every child starts with.

Whether a process still runs: the run lock (store/database.py) and the throw-away token directories
(targets/host/secure/pkcs11.py) both outlive a process that was killed, and are reclaimed only once it is gone;
a process id the system gave to a newer process since is told apart by its start time.

The environment of a child (a harness, a compiler, QEMU, swtpm, git, …) comes from
`child_environment` alone: it never holds a variable that may carry a secret (the store's URL and
PostgreSQL's password variables, a token PIN). The one child that needs one gets it by name: a lab
worker (cryptobench's own process) the store's, the pkcs11 harness its PIN (targets/host/secure/pkcs11.py).

SIGTERM (a CI timeout, `kill`) stops a run, a lab worker or the QEMU board stand-in like Ctrl-C:
`interrupt_on_sigterm` is the one handler they install."""
from __future__ import annotations

import os
import signal
from pathlib import Path

# variables that may hold a secret, or point to one: a store URL may carry its password
# (CRYPTOBENCH_DB), libpq reads a password or a password file from the others, and a token's PIN
STORE_CREDENTIALS = ("PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE")
SECRET_VARIABLES = ("CRYPTOBENCH_DB", "CRYPTOBENCH_PKCS11_PIN") + STORE_CREDENTIALS
START_SLACK_S = 2.0     # /proc's boot time is whole seconds: a start this much after a lock is still before it


def child_environment(overrides: dict | None = None, keep: tuple[str, ...] = ()) -> dict[str, str]:
    """This process's environment for a child: without the secret variables (but those in `keep`),
    with `overrides` applied (a None value removes the variable)."""
    env = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES or k in keep}
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def process_alive(pid: int, since: float | None = None) -> bool:
    """Whether process `pid` exists on this machine (one of another user's counts too). With
    `since` (a time.time() by which the process we mean had started, e.g. when it took a lock): a
    process with that id that started later is another one, given the id after ours ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        # PermissionError: it exists, another user's; an id os.kill cannot take (one a file name
        # claimed) cannot be checked, and what cannot be checked is not taken for gone
        pass
    if since is not None:
        started = process_started(pid)
        if started is not None and started > since + START_SLACK_S:
            return False
    return True


def process_started(pid: int) -> float | None:
    """When process `pid` started, as time.time() seconds: its start in clock ticks since boot
    (/proc/PID/stat) after the boot time (/proc/stat); None where /proc does not say."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def process_identity(pid: int) -> str:
    """'PID START' where START is the process's start time in clock ticks since boot (so a reused
    process id is told apart); 'PID ?' where /proc does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return f"{pid} ?"


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def interrupt_on_sigterm():
    """SIGTERM raises KeyboardInterrupt from now on, so it stops like Ctrl-C (every finished cell kept,
    a held unit given back); returns the handler it replaces, to put back with signal.signal."""
    return signal.signal(signal.SIGTERM, _raise_interrupt)

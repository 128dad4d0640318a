"""Whether a process still runs: the run lock (store.py) and the throw-away token directories
(secure/pkcs11.py) both outlive a process that was killed, and are reclaimed only once it is gone."""
from __future__ import annotations

import os
from pathlib import Path


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists on this machine (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_identity(pid: int) -> str:
    """'PID START' where START is the process's start time in clock ticks since boot (so a reused
    process id is told apart); 'PID ?' where /proc does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return f"{pid} ?"

"""What a run was measured on: host, CPU, kernel, toolchain and tool revision."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from .. import __version__
from .paths import REPO_ROOT
from .processes import child_environment

CRYPTO_FLAGS = ("aes", "vaes", "pclmulqdq", "vpclmulqdq", "sha_ni", "rdrand", "rdseed", "avx", "avx2",
                "avx512f", "ssse3", "bmi2", "adx", "pmull", "sha1", "sha2", "sha512", "sha3", "asimd")


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_info() -> dict:
    model, flags = platform.processor() or platform.machine(), []
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model", "hardware") and model in ("", platform.machine(), platform.processor()):
            model = value.strip()
        if key in ("flags", "features") and not flags:
            flags = value.split()
    return {
        "model": model,
        "arch": platform.machine(),
        "logical_cpus": os.cpu_count(),
        "crypto_flags": [f for f in CRYPTO_FLAGS if f in flags],
        "flags": flags,
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "boost": _read("/sys/devices/system/cpu/cpufreq/boost"),
    }


def git_revision() -> str | None:
    if not (REPO_ROOT / ".git").exists():
        return None
    try:
        rev = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=5, env=child_environment()).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, env=child_environment()).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (rev + ("-dirty" if dirty else "")) or None


def host_conditions() -> dict:
    uname = platform.uname()
    return {
        "hostname": uname.node,
        "os": f"{uname.system} {uname.release}",
        "kernel": uname.version,
        "cpu": cpu_info(),
        "loadavg": _read("/proc/loadavg"),
        "python": platform.python_version(),
        "cryptobench": __version__,
        "git_revision": git_revision(),
    }

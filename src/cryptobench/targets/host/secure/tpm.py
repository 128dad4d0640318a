"""The TPM the `tpm` engine talks to: a configured one, this machine's, or a throw-away swtpm.

In this order:

1. `CRYPTOBENCH_TPM_TCTI` set: that TCTI (a tpm2-tss TCTI loader string such as
   `device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`, `mssim:…`, `tabrmd`). A swtpm/mssim
   address that nothing answers at, or a device node that is missing or not readable and writable,
   makes the engine unusable with a reason naming the variable.
2. `/dev/tpmrm0` readable and writable by this user (the kernel's resource manager in front of the
   machine's TPM; Debian gives it to the `tss` group): `device:/dev/tpmrm0`.
3. Otherwise a swtpm (libtpms, a software TPM 2.0) started for the run on two free loopback ports
   with a fresh state directory, stopped and removed when the run ends. Without swtpm installed
   the engine is unusable with a reason naming ./setup.sh and the variable.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

from ....core.errors import UsageError
from . import Provision
from ....core.processes import child_environment

TCTI_ENV = "CRYPTOBENCH_TPM_TCTI"
DEVICE = "/dev/tpmrm0"
START_TIMEOUT_S = 20.0


@dataclass
class SwtpmProvision(Provision):
    """A swtpm started for the run: the process and its state directory (removed by stop)."""
    process: subprocess.Popen | None = None
    state_dir: str = ""
    port: int = 0


def _harness_env(tcti: str) -> dict:
    # tpm2-tss logs every failed command to stderr; the harness reports errors itself.
    return {TCTI_ENV: tcti, "TSS2_LOG": os.environ.get("TSS2_LOG", "all+NONE")}


def provision() -> Provision:
    conf = os.environ.get(TCTI_ENV, "").strip()
    if conf:
        _check_configured(conf)
        return Provision(env=_harness_env(conf),
                         facts={"tpm": f"the TPM named by {TCTI_ENV}", "tpm_source": TCTI_ENV})
    note = {}
    if os.path.exists(DEVICE):
        if os.access(DEVICE, os.R_OK | os.W_OK):
            return Provision(env=_harness_env(f"device:{DEVICE}"),
                             facts={"tpm": f"this machine's TPM ({DEVICE}, the kernel's resource manager)",
                                    "tpm_source": DEVICE})
        note = {"tpm_note": f"{DEVICE} exists but this user cannot read and write it (add the user to "
                            f"its group, usually tss, or set {TCTI_ENV}); a swtpm stands in"}
    prov = start_swtpm()
    prov.facts.update(note)
    return prov


def _check_configured(conf: str) -> None:
    """Refuse a configured TCTI that plainly cannot work, naming the variable."""
    name, _, args = conf.partition(":")
    if name in ("device", "libtss2-tcti-device.so.0"):
        path = args or "/dev/tpmrm0"
        if not os.path.exists(path):
            raise UsageError(f"{TCTI_ENV}={conf}: {path} does not exist")
        if not os.access(path, os.R_OK | os.W_OK):
            raise UsageError(f"{TCTI_ENV}={conf}: this user cannot read and write {path} (add it to the "
                             f"device's group, usually tss)")
    elif name in ("swtpm", "mssim"):
        opts = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
        host, port = opts.get("host", "localhost"), opts.get("port", "2321")
        try:
            with socket.create_connection((host, int(port)), timeout=3):
                pass
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"{TCTI_ENV}={conf}: nothing answers at {host}:{port} ({why}); start the TPM "
                             f"simulator there, or unset {TCTI_ENV} to let the run start its own swtpm")


def swtpm_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10,
                             env=child_environment()).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    m = re.search(r"version\s+([0-9][\w.]*)", out)
    return m.group(1) if m else "?"


def libtpms_version() -> str:
    for pattern in ("/usr/lib/*/libtpms.so.*", "/usr/lib64/libtpms.so.*", "/usr/lib/libtpms.so.*",
                    "/usr/local/lib/libtpms.so.*"):
        for path in glob.glob(pattern):
            m = re.search(r"libtpms\.so\.(\d+\.\d+\.\d+)$", path)
            if m:
                return m.group(1)
    return ""


def _free_port_pair() -> int:
    """A loopback port P with P + 1 free as well (swtpm's TCTI finds the control port at P + 1)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port
    raise UsageError("tpm engine: found no two adjacent free loopback ports for swtpm")


def start_swtpm() -> SwtpmProvision:
    """A fresh swtpm on loopback ports; `stop` terminates it and removes its state."""
    exe = shutil.which("swtpm")
    if exe is None:
        raise UsageError(f"tpm engine: no TPM configured ({TCTI_ENV} unset, no usable {DEVICE}) and swtpm "
                         f"is not installed: run ./setup.sh (it installs swtpm), or set {TCTI_ENV} to a "
                         "TPM's TCTI, e.g. device:/dev/tpmrm0")
    version = swtpm_version(exe)
    last = ""
    for _ in range(3):                      # the ports may be taken between the probe and swtpm's bind
        state = tempfile.mkdtemp(prefix="cryptobench-swtpm-")
        port = _free_port_pair()
        log = os.path.join(state, "swtpm.log")
        proc = subprocess.Popen(
            [exe, "socket", "--tpm2", "--tpmstate", f"dir={state}",
             "--server", f"type=tcp,port={port},bindaddr=127.0.0.1",
             "--ctrl", f"type=tcp,port={port + 1},bindaddr=127.0.0.1",
             "--flags", "not-need-init,startup-clear", "--log", f"file={log}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, env=child_environment(),
            # (the death signal follows the thread that forks: only the main thread's lasts the run)
            preexec_fn=_die_with_parent if threading.current_thread() is threading.main_thread() else None)
        prov = SwtpmProvision(process=proc, state_dir=state, port=port)
        prov.stop = _stopper(proc, state)
        if _wait_listening(proc, port):
            tcti = f"swtpm:host=127.0.0.1,port={port}"
            lib = libtpms_version()
            prov.env = _harness_env(tcti)
            prov.facts = {"tpm": f"swtpm {version} (libtpms{' ' + lib if lib else ''}, a software "
                                 "stand-in for a TPM)",
                          "tpm_source": "swtpm started for this run", "swtpm_version": version}
            return prov
        last = _tail(proc, log)
        prov.close()
    raise UsageError(f"tpm engine: swtpm did not start: {last or 'no output'}")


def _die_with_parent() -> None:
    """In the child before exec: swtpm gets SIGTERM if the run is killed outright (Linux), so no
    emulator outlives it. Its own session keeps a terminal's Ctrl-C away from it: the run stops it
    after storing what it has."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _wait_listening(proc: subprocess.Popen, port: int) -> bool:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port + 1), timeout=1):
                pass
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.02)
    return False


def _tail(proc: subprocess.Popen, log: str) -> str:
    text = ""
    if proc.poll() is not None and proc.stderr is not None:
        text = proc.stderr.read().decode(errors="replace")
    try:
        with open(log, errors="replace") as f:
            text += f.read()
    except OSError:
        pass
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(lines[-3:])


def _stopper(proc: subprocess.Popen, state: str):
    def stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        shutil.rmtree(state, ignore_errors=True)
    return stop

"""The pkcs11 engine's token: the user's secure element / HSM, or a throw-away SoftHSM2 token.

* `CRYPTOBENCH_PKCS11_MODULE` set: the user's device. The module must exist and a PIN source must
  be set (`CRYPTOBENCH_PKCS11_PIN_FILE`, or `CRYPTOBENCH_PKCS11_PIN`); `CRYPTOBENCH_PKCS11_TOKEN`
  (label) or `CRYPTOBENCH_PKCS11_SLOT` picks the token when the module has several. The PIN
  variable reaches the pkcs11 harness alone (through the Provision; no other harness inherits it,
  processes.SECRET_VARIABLES), which reads it, logs in and wipes it; nothing here logs it.
* Otherwise: a SoftHSM2 token initialised for this run in a temporary directory (its own
  `SOFTHSM2_CONF`), with random SO and user PINs made in memory. The PINs reach SoftHSM2 through a
  pipe (C_InitToken / C_InitPIN called from a child process, never on a command line) and the
  harness through a 0600 file in that directory; `stop()` removes the directory.

Docs: docs/secure-elements.md, "PKCS#11".
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ....core.errors import UsageError
from ....core.paths import PACKAGE_DIR
from ....core.processes import child_environment, process_alive, process_identity
from . import Provision

LABEL = "cryptobench"
SOFTHSM_MODULES = (
    "/usr/lib/softhsm/libsofthsm2.so",
    "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
    "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
    "/usr/lib64/pkcs11/libsofthsm2.so",
    "/usr/local/lib/softhsm/libsofthsm2.so",
)
VARIABLES = ("CRYPTOBENCH_PKCS11_MODULE", "CRYPTOBENCH_PKCS11_TOKEN", "CRYPTOBENCH_PKCS11_SLOT",
             "CRYPTOBENCH_PKCS11_PIN", "CRYPTOBENCH_PKCS11_PIN_FILE")


def provision() -> Provision:
    """The token the pkcs11 engine talks to for this run (see the module docstring)."""
    if os.environ.get("CRYPTOBENCH_PKCS11_MODULE"):
        return user_token()
    return softhsm_token()


def check_config() -> None:
    """Raise UsageError, naming the variable to set, when the user's token is configured only in
    part. Starts and reads nothing (the PIN file is checked for readability only)."""
    module = os.environ.get("CRYPTOBENCH_PKCS11_MODULE")
    if not module:
        return
    if not Path(module).is_file():
        raise UsageError(f"pkcs11: CRYPTOBENCH_PKCS11_MODULE={module}: no such file (the path of "
                         "your token's PKCS#11 module, e.g. /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so)")
    pin_file = os.environ.get("CRYPTOBENCH_PKCS11_PIN_FILE")
    if not os.environ.get("CRYPTOBENCH_PKCS11_PIN") and not pin_file:
        raise UsageError("pkcs11: CRYPTOBENCH_PKCS11_MODULE is set but no PIN: set "
                         "CRYPTOBENCH_PKCS11_PIN_FILE to a file holding the token's user PIN "
                         "(or CRYPTOBENCH_PKCS11_PIN; /dev/null for a token without login)")
    if pin_file and (Path(pin_file).is_dir() or not os.access(pin_file, os.R_OK)):
        raise UsageError(f"pkcs11: CRYPTOBENCH_PKCS11_PIN_FILE={pin_file}: "
                         + ("a directory; expected a file holding the PIN" if Path(pin_file).is_dir()
                            else "not a readable file"))


def user_token() -> Provision:
    check_config()
    module = os.environ["CRYPTOBENCH_PKCS11_MODULE"]
    facts = {"pkcs11_provision": "user-configured token (CRYPTOBENCH_PKCS11_MODULE)",
             "pkcs11_module": module}
    for var, fact in (("CRYPTOBENCH_PKCS11_TOKEN", "pkcs11_token_label"),
                      ("CRYPTOBENCH_PKCS11_SLOT", "pkcs11_slot")):
        if os.environ.get(var):
            facts[fact] = os.environ[var]
    # the PIN goes to this engine's harness only (every other harness process is started without it)
    env = {"CRYPTOBENCH_PKCS11_PIN": os.environ["CRYPTOBENCH_PKCS11_PIN"]} \
        if os.environ.get("CRYPTOBENCH_PKCS11_PIN") else {}
    return Provision(env=env, facts=facts)


def softhsm_module() -> str | None:
    found = shutil.which("softhsm2-util")
    candidates = list(SOFTHSM_MODULES)
    if found:   # a SoftHSM2 installed under a prefix keeps its module beside it
        prefix = Path(found).resolve().parent.parent
        candidates.append(str(prefix / "lib" / "softhsm" / "libsofthsm2.so"))
    return next((c for c in candidates if Path(c).is_file()), None)


def softhsm_version() -> str:
    try:
        out = subprocess.run(["softhsm2-util", "--version"], capture_output=True, text=True,
                             timeout=10, env=child_environment()).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out


def softhsm_token(label: str = LABEL) -> Provision:
    """A fresh SoftHSM2 token in a temporary directory, removed again by the Provision's stop()."""
    module = softhsm_module()
    if module is None:
        raise UsageError("pkcs11: no token configured and SoftHSM2 is not installed: run ./setup.sh "
                         "(installs softhsm2), or point CRYPTOBENCH_PKCS11_MODULE (with "
                         "CRYPTOBENCH_PKCS11_TOKEN and CRYPTOBENCH_PKCS11_PIN_FILE) at your token's "
                         "PKCS#11 module")
    removed = remove_stale_tokens()
    if removed:
        sys.stderr.write(f"pkcs11: removed {len(removed)} SoftHSM2 token director{'y' if len(removed) == 1 else 'ies'} "
                         f"left by a run that was killed ({', '.join(str(p) for p in removed)})\n")
    root = Path(tempfile.mkdtemp(prefix=TOKEN_PREFIX))
    try:
        (root / OWNER_FILE).write_text(process_identity(os.getpid()) + "\n")
        pin_file = init_softhsm_token(root, module, label)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    version = softhsm_version()
    env = {"CRYPTOBENCH_PKCS11_MODULE": module, "CRYPTOBENCH_PKCS11_TOKEN": label,
           "CRYPTOBENCH_PKCS11_PIN_FILE": str(pin_file), "SOFTHSM2_CONF": str(root / "softhsm2.conf"),
           "CRYPTOBENCH_PKCS11_PIN": None, "CRYPTOBENCH_PKCS11_SLOT": None}
    facts = {"pkcs11_provision": f"SoftHSM2 {version} (software stand-in for a secure element): a "
                                 "throw-away token initialised in a temporary directory for this run",
             "pkcs11_module": module, "pkcs11_token_label": label}
    return Provision(env=env, facts=facts, stop=lambda: shutil.rmtree(root, ignore_errors=True))


TOKEN_PREFIX = "cryptobench-softhsm-"
OWNER_FILE = "owner"          # "PID START": the process that made the directory, and when it started


def _still_runs(pid: int, start: str) -> bool:
    """Whether the process that wrote an owner file runs: same id and same start time (where
    /proc tells the start time), else whether the id is in use at all."""
    return process_identity(pid) == f"{pid} {start}" if start != "?" else process_alive(pid)


def remove_stale_tokens(tmp: Path | None = None) -> list[Path]:
    """Remove the throw-away token directories (with their PIN files) that a killed run left: ours
    (same user), and made by a process that no longer runs. Returns what was removed."""
    removed = []
    for d in sorted(Path(tmp or tempfile.gettempdir()).glob(TOKEN_PREFIX + "*")):
        try:
            if not d.is_dir() or d.is_symlink() or d.stat().st_uid != os.getuid():
                continue
            owner = (d / OWNER_FILE).read_text().split()
        except OSError:
            continue                  # no owner file: not one we made (or still being made)
        if len(owner) == 2 and owner[0].isdigit() and _still_runs(int(owner[0]), owner[1]):
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
    return removed


def init_softhsm_token(root: Path, module: str, label: str, pin: str | None = None) -> Path:
    """Initialise a SoftHSM2 token store under `root` (root/softhsm2.conf, root/tokens/) with a
    token `label`; the user PIN (random unless given) goes to root/pin (mode 0600), whose path is
    returned. The PINs travel to SoftHSM2 through a pipe, never through argv."""
    tokens = root / "tokens"
    tokens.mkdir(mode=0o700, exist_ok=True)
    conf = root / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {tokens}\nobjectstore.backend = file\n"
                    "log.level = ERROR\nslots.removable = false\n")
    pin = pin or secrets.token_hex(12)
    so_pin = secrets.token_hex(12)
    pin_file = root / "pin"
    fd = os.open(pin_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(pin + "\n")
    env = child_environment({"SOFTHSM2_CONF": str(conf),
                             "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_DIR.parent),
                                                                         os.environ.get("PYTHONPATH")]))})
    for var in VARIABLES:
        env.pop(var, None)
    request = json.dumps({"module": module, "label": label, "so_pin": so_pin, "pin": pin})
    proc = subprocess.run([sys.executable, "-c", "from cryptobench.targets.host.secure.pkcs11 import "
                           "_init_token_child; _init_token_child()"], input=request,
                          capture_output=True, text=True, env=env, timeout=60)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"pkcs11: initialising the SoftHSM2 token failed: {msg}")
    return pin_file


# --- the child that talks to SoftHSM2 ------------------------------------------------------------

def _init_token_child() -> None:
    """C_InitToken + C_InitPIN on the first slot of the module, request (JSON) on stdin. Runs in
    its own process so that SoftHSM2 reads this token's SOFTHSM2_CONF and is unloaded after."""
    import ctypes

    req = json.loads(sys.stdin.read())
    lib = ctypes.CDLL(req["module"])
    ulong = ctypes.c_ulong

    def call(name, *args):
        rv = getattr(lib, name)(*args)
        if rv != 0:
            sys.stderr.write(f"{name}: CKR 0x{rv:x}\n")
            raise SystemExit(1)

    call("C_Initialize", None)
    count = ulong(0)
    call("C_GetSlotList", ctypes.c_ubyte(0), None, ctypes.byref(count))
    slots = (ulong * max(count.value, 1))()
    call("C_GetSlotList", ctypes.c_ubyte(0), slots, ctypes.byref(count))
    if count.value == 0:
        sys.stderr.write("SoftHSM2 offers no slot\n")
        raise SystemExit(1)
    slot = ulong(slots[0])
    so_pin, pin = req["so_pin"].encode(), req["pin"].encode()
    label = req["label"].encode().ljust(32, b" ")[:32]
    call("C_InitToken", slot, ctypes.c_char_p(so_pin), ulong(len(so_pin)), ctypes.c_char_p(label))
    session = ulong(0)
    call("C_OpenSession", slot, ulong(0x2 | 0x4), None, None, ctypes.byref(session))  # RW | SERIAL
    call("C_Login", session, ulong(0), ctypes.c_char_p(so_pin), ulong(len(so_pin)))  # CKU_SO
    call("C_InitPIN", session, ctypes.c_char_p(pin), ulong(len(pin)))
    call("C_Logout", session)
    call("C_CloseSession", session)
    call("C_Finalize", None)

"""ARM semihosting (BKPT 0xAB; "Semihosting for AArch32 and AArch64", ARM IHI 0056) for images
run on the simulator, on any executor: `mem` reads and writes the target's memory
(read32, write32, read(addr, n)). Time comes from the model's cycles at the device clock.

Served: SYS_OPEN of ":tt" (the console, as newlib's rdimon opens it) and of ":semihosting-features"
(read with SYS_FLEN, SYS_SEEK, SYS_READ: it offers SYS_EXIT_EXTENDED, so newlib's exit code reaches
the host, and separate stdout and stderr), SYS_ERRNO, SYS_FLEN (0 for the console), SYS_CLOSE,
SYS_ISTTY, SYS_WRITEC, SYS_WRITE0, SYS_WRITE (fd 1 and 2, or the handles SYS_OPEN gave), SYS_CLOCK,
SYS_ELAPSED, SYS_TICKFREQ, SYS_HEAPINFO (zeros: the image's own defaults), SYS_GET_CMDLINE (empty),
SYS_EXIT and SYS_EXIT_EXTENDED. Anything else is an error naming the operation.

Every length the image passes is checked before the host reads that much: at most MAX_TRANSFER
(limits.py) per call, and only from mapped memory (the runners' `read` refuses anything else
before allocating); a call that asks for more stops the run with a SemihostingError."""
from __future__ import annotations

from dataclasses import dataclass

from .limits import MAX_TRANSFER, size_text

NAMES = {0x01: "SYS_OPEN", 0x02: "SYS_CLOSE", 0x03: "SYS_WRITEC", 0x04: "SYS_WRITE0", 0x05: "SYS_WRITE",
         0x06: "SYS_READ", 0x07: "SYS_READC", 0x08: "SYS_ISERROR", 0x09: "SYS_ISTTY", 0x0A: "SYS_SEEK",
         0x0C: "SYS_FLEN", 0x0D: "SYS_TMPNAM", 0x0E: "SYS_REMOVE", 0x0F: "SYS_RENAME", 0x10: "SYS_CLOCK",
         0x11: "SYS_TIME", 0x12: "SYS_SYSTEM", 0x13: "SYS_ERRNO", 0x15: "SYS_GET_CMDLINE", 0x16: "SYS_HEAPINFO",
         0x18: "SYS_EXIT", 0x20: "SYS_EXIT_EXTENDED", 0x30: "SYS_ELAPSED", 0x31: "SYS_TICKFREQ"}
APPLICATION_EXIT = 0x20026           # ADP_Stopped_ApplicationExit
TT_HANDLES = {0: 0, 1: 1, 2: 2}      # SYS_OPEN ":tt" mode // 4 (r, w, a) -> stdin, stdout, stderr
FEATURES_HANDLE = 3
FEATURES = b"SHFB\x03"               # magic; SH_EXT_EXIT_EXTENDED (the exit code reaches the host) and
                                     # SH_EXT_STDOUT_STDERR (":tt" opened "w" is stdout, "a" stderr)


class SemihostingError(Exception):
    """An operation the simulator does not serve (one line, naming it)."""


@dataclass
class Call:
    op: int
    name: str
    r0: int | None = None          # what the call returns in r0 (None: r0 unchanged)
    text: str = ""                 # console output
    stream: str = "stdout"
    exit_code: int | None = None   # set by SYS_EXIT / SYS_EXIT_EXTENDED


def _transfer(mem, addr: int, n: int, call: "Call") -> bytes:
    """n bytes at addr for `call`, refused above MAX_TRANSFER before anything is read."""
    if n > MAX_TRANSFER:
        raise SemihostingError(f"semihosting {call.name} (0x{call.op:02x}) of {n} bytes at 0x{addr:08x}: more than the "
                               f"{size_text(MAX_TRANSFER)} one call may pass to the host")
    return mem.read(addr, n)


def _cstring(mem, addr: int, limit: int = 1 << 16) -> bytes:
    """The NUL-terminated string at addr, read in chunks that end on 64-byte boundaries: a string
    at the very top of RAM (on the stack) must not make the read run past the end of memory."""
    data = b""
    while len(data) < limit:
        at = addr + len(data)
        chunk = mem.read(at, 64 - at % 64)
        i = chunk.find(b"\0")
        if i >= 0:
            return data + chunk[:i]
        data += chunk
    return data


def _features(op: int, arg: int, mem, state: dict, call: Call) -> None:
    """SYS_READ [handle, buffer, length] or SYS_SEEK [handle, position] of the features file."""
    if op == 0x0A:
        state["features_pos"] = min(mem.read32(arg + 4), len(FEATURES))
        call.r0 = 0
        return
    buf, n = mem.read32(arg + 4), mem.read32(arg + 8)
    pos = state.get("features_pos", 0)
    data = FEATURES[pos:pos + n]
    for i, byte in enumerate(data):
        word = mem.read32((buf + i) & ~3)
        shift = 8 * ((buf + i) & 3)
        mem.write32((buf + i) & ~3, (word & ~(0xFF << shift)) | (byte << shift))
    state["features_pos"] = pos + len(data)
    call.r0 = n - len(data)                                # bytes not read


HANDLE_OPS = (0x01, 0x02, 0x06, 0x09, 0x0A, 0x0C, 0x13)
SERVED = ("SYS_OPEN of :tt and :semihosting-features, SYS_READ and SYS_SEEK of the latter, SYS_ERRNO, SYS_FLEN, "
          "SYS_CLOSE, SYS_ISTTY, SYS_WRITEC, SYS_WRITE0, SYS_WRITE, SYS_CLOCK, SYS_ELAPSED, SYS_TICKFREQ, "
          "SYS_HEAPINFO, SYS_GET_CMDLINE, SYS_EXIT, SYS_EXIT_EXTENDED")


def _unserved(call: Call) -> SemihostingError:
    return SemihostingError(f"semihosting operation 0x{call.op:02x} ({call.name}) is not served by the simulator; "
                            f"served: {SERVED}")


def _handles(op: int, arg: int, mem, state: dict, call: Call) -> None:
    """The calls on handles: the console's (":tt") and the features file's."""
    if op == 0x01:                                         # SYS_OPEN: [name, mode, name length]
        path, mode = _transfer(mem, mem.read32(arg), mem.read32(arg + 8), call), mem.read32(arg + 4)
        if path == b":semihosting-features":             # IHI 0056 "Semihosting v2": the features file
            state["features_pos"] = 0
            call.r0 = FEATURES_HANDLE
        elif path == b":tt":
            call.r0 = TT_HANDLES.get(mode // 4, 1)
        else:
            raise SemihostingError(f"semihosting SYS_OPEN (0x01) of '{path.decode('latin-1')}': only the console "
                                   "':tt' and ':semihosting-features' are served (no host files)")
    elif op in (0x02, 0x09):                               # SYS_CLOSE: 0 (done); SYS_ISTTY: 1 (a console)
        call.r0 = 0 if op == 0x02 else 1
    elif op == 0x13:                                       # SYS_ERRNO: no served call sets one
        call.r0 = 0
    elif op in (0x06, 0x0A) and mem.read32(arg) == FEATURES_HANDLE:   # SYS_READ, SYS_SEEK of the features file
        _features(op, arg, mem, state, call)
    elif op == 0x0C and mem.read32(arg) in (0, 1, 2, FEATURES_HANDLE):  # SYS_FLEN: a console has no length
        call.r0 = len(FEATURES) if mem.read32(arg) == FEATURES_HANDLE else 0
    else:
        raise _unserved(call)


def serve(op: int, arg: int, mem, cycles: int, clock_hz: int, state: dict | None = None) -> Call:
    """One semihosting call: operation `op` (r0) with argument `arg` (r1) at model cycle `cycles`;
    `state` keeps what lasts between calls (the features file's read position). Memory the call
    names outside the mapped regions is a SemihostingError too."""
    state = {} if state is None else state
    call = Call(op, NAMES.get(op, "unknown"))
    try:
        return _serve(op, arg, mem, cycles, clock_hz, state, call)
    except (ValueError, MemoryError) as exc:
        raise SemihostingError(f"semihosting {call.name} (0x{op:02x}): {exc}") from None


def _serve(op: int, arg: int, mem, cycles: int, clock_hz: int, state: dict, call: Call) -> Call:
    if op in HANDLE_OPS:
        _handles(op, arg, mem, state, call)
    elif op == 0x03:                                       # SYS_WRITEC: the character at [arg]
        call.text = mem.read(arg, 1).decode("latin-1")
    elif op == 0x04:                                       # SYS_WRITE0: the string at arg
        call.text = _cstring(mem, arg).decode("utf-8", "replace")
    elif op == 0x05:                                       # SYS_WRITE: [fd, buffer, length]
        fd, buf, n = mem.read32(arg), mem.read32(arg + 4), mem.read32(arg + 8)
        if fd not in (1, 2):
            raise SemihostingError(f"semihosting SYS_WRITE (0x05) to handle {fd}: only the console (1, 2) is served")
        call.text, call.stream, call.r0 = _transfer(mem, buf, n, call).decode("utf-8", "replace"), \
            "stdout" if fd == 1 else "stderr", 0
    elif op == 0x10:                                       # SYS_CLOCK: centiseconds
        call.r0 = cycles * 100 // clock_hz
    elif op == 0x30:                                       # SYS_ELAPSED: 64-bit ticks at [arg]
        mem.write32(arg, cycles & 0xFFFFFFFF)
        mem.write32(arg + 4, cycles >> 32)
        call.r0 = 0
    elif op == 0x31:                                       # SYS_TICKFREQ: ticks per second
        call.r0 = clock_hz
    elif op == 0x16:                                       # SYS_HEAPINFO: [pointer to 4 words]
        block = mem.read32(arg)
        for i in range(4):
            mem.write32(block + 4 * i, 0)
        call.r0 = 0
    elif op == 0x15:                                       # SYS_GET_CMDLINE: [buffer, size] -> ""
        mem.write32(mem.read32(arg), 0)
        mem.write32(arg + 4, 0)
        call.r0 = 0
    elif op == 0x18:                                       # SYS_EXIT: the reason in arg (32-bit)
        call.exit_code = 0 if arg == APPLICATION_EXIT else 1
    elif op == 0x20:                                       # SYS_EXIT_EXTENDED: [reason, subcode]
        reason, sub = mem.read32(arg), mem.read32(arg + 4)
        call.exit_code = (sub if sub < 0x80000000 else sub - (1 << 32)) if reason == APPLICATION_EXIT else 1
    else:
        raise _unserved(call)
    return call

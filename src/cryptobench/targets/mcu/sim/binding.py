"""The one ctypes binding of libcbsim.so (harness/sim): the cycle accounting (cbsim.c), the
native Thumb executor (cbcpu.c), the records and callback types they share with Python, and
Unicorn's engine handle that the accounting's hooks are installed on.

`load_library()` loads the library once per path, types every entry point and checks the
mirrored records' sizes: a library built from other sources than this cryptobench is one line
asking for ./setup.sh, never a write past a record."""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ....core.errors import UsageError
from ....core.extras import require
from ....core.paths import REPO_ROOT

LIB_DEFAULT = REPO_ROOT / "build" / "sim" / "libcbsim.so"
UNICORN_TESTED = ("2.1.",)       # unicorn releases whose private engine handle unicorn_handle() was tested with
UNICORN_INSTALL = ".venv/bin/pip install 'unicorn>=2.1,<2.2'"
REBUILD = "rebuild it with ./setup.sh"


class CbBlock(ctypes.Structure):
    """cbsim.c's cbsim_block: one basic block's cost, filled by the miss callback."""
    _fields_ = [("addr", ctypes.c_uint32), ("size", ctypes.c_uint32), ("cycles", ctypes.c_uint32),
                ("insns", ctypes.c_uint32), ("end", ctypes.c_uint32), ("taken_extra", ctypes.c_uint32),
                ("entry_extra", ctypes.c_uint32), ("line_shift", ctypes.c_uint32), ("nlines", ctypes.c_uint32),
                ("line_off", ctypes.POINTER(ctypes.c_uint32)),
                ("inline_off", ctypes.c_uint32 * 4),   # cbsim_int.h INLINE_LINES: line_off points here for short blocks
                ("wait_after", ctypes.c_uint32 * 2)]   # cbsim.c's own (prefetch_waits)


# cbsim_miss_fn: fills the block's cost; 0, or -1 to stop
MISS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(CbBlock))
# cbcpu.h's callbacks: an access outside flash and RAM (0 served, -1 unmapped), and BKPT #imm
READ_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32))
WRITE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)
BKPT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32)
CONSOLE_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32)

# the mirrored records and the function of the library that gives each one's C size
SIZES = ((CbBlock, "cbsim_block", "cbsim_block_size"),)

P, I, U32, U64, SIZE = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t
PU32, PU64 = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
# name: (result type, argument types); a name the library lacks means it is older than this binding
SIGNATURES = {
    # the accounting (cbsim.c)
    "cbsim_new": (P, [P, MISS_FN, U32, U64, U64, SIZE]),
    "cbsim_add_dynamic": (None, [P, U32, I, I, I]),
    "cbsim_cycles": (U64, [P]), "cbsim_insns": (U64, [P]), "cbsim_blocks": (U64, [P]),
    "cbsim_distinct_blocks": (SIZE, [P]),
    "cbsim_failed": (I, [P]), "cbsim_free": (None, [P]),
    "cbsim_set_flash": (I, [P, U32, U32, I, U32, U32, U32, U32, U32, U32, I]),
    "cbsim_flash_stats": (None, [P, ctypes.POINTER(U64 * 4)]),
    "cbsim_account_block": (I, [P, U32, U32]),
    "cbsim_account_flash_read": (None, [P, U32, U32]),
    "cbsim_account_dynamic": (None, [P, I, U32, U32]),
    "cbsim_add_cycles": (None, [P, U64]),
    "cbsim_set_alarm": (None, [P, U64, U32]), "cbsim_alarm_fired": (I, [P]),
    "cbsim_watch": (None, [P, U32]),
    "cbsim_events": (SIZE, [P]), "cbsim_event_at": (None, [P, SIZE, PU32, PU32, PU64, PU64]),
    "cbsim_events_dropped": (U64, [P]),
    "cbsim_set_insn_limit": (None, [P, U64]), "cbsim_limit_hit": (I, [P]),
    "cbsim_block_addr": (U32, [P]), "cbsim_block_base": (U64, [P]),
    "cbsim_profile_on": (I, [P, U32, PU32, PU32]),
    "cbsim_profile_at": (None, [P, U32, PU64, PU64, PU64]),
    "cbsim_profile_snap": (I, [P, U64, PU64, PU64, PU64]),
    # the native executor (cbcpu.c)
    "cbcpu_new": (P, [I, U32, U32, U32, U32]),
    "cbcpu_set_callbacks": (None, [P, READ_FN, WRITE_FN, BKPT_FN]),
    "cbcpu_set_console": (None, [P, U32, U32, U32, CONSOLE_FN]),
    "cbcpu_set_accounting": (None, [P, P, I, I, I]),
    "cbcpu_mem_write": (I, [P, U32, ctypes.c_char_p, U32]),
    "cbcpu_mem_read": (I, [P, U32, ctypes.c_char_p, U32]),
    "cbcpu_reg": (U32, [P, I]), "cbcpu_set_reg": (None, [P, I, U32]),
    "cbcpu_pend": (None, [P, I]), "cbcpu_stop": (None, [P]),
    "cbcpu_set_wake": (None, [P, I]), "cbcpu_set_enter": (None, [P, I]),
    "cbcpu_set_hints": (None, [P, I]), "cbcpu_slept": (I, [P]),
    "cbcpu_hold_read": (None, [P, U32, U32, U32, U64]),
    "cbcpu_held_reads": (U64, [P]), "cbcpu_drop_holds": (None, [P]),
    "cbcpu_run": (I, [P, U64, ctypes.c_double]),
    "cbcpu_problem": (ctypes.c_char_p, [P]), "cbcpu_insns": (U64, [P]), "cbcpu_insn_addr": (U32, [P]),
    "cbcpu_blocks": (U64, [P]), "cbcpu_decoded": (U64, [P]), "cbcpu_flushes": (U64, [P]),
    "cbcpu_last_insns": (U32, [P]), "cbcpu_last_steps": (U32, [P]), "cbcpu_last_size": (U32, [P]),
    "cbcpu_free": (None, [P]),
}

_loaded: dict[str, ctypes.CDLL] = {}


def library_path() -> Path:
    return Path(os.environ.get("CRYPTOBENCH_SIM_LIB", LIB_DEFAULT))


def require_sim() -> None:
    """The simulator's Python modules (the `sim` extra), or one line that says how to install them."""
    for module in ("unicorn", "capstone", "elftools"):
        require(module, "sim", "the simulator (--target sim:CORE)")


def load_library() -> ctypes.CDLL:
    """libcbsim.so, typed (once per path)."""
    require_sim()
    path = library_path()
    if str(path) in _loaded:
        return _loaded[str(path)]
    if not path.exists():
        raise UsageError(f"the simulator's native part {path} is missing: run ./setup.sh "
                         "(it builds harness/sim against the unicorn package)")
    lib = ctypes.CDLL(str(path))
    check_sizes(lib, path)
    for name, (res, args) in SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is None:
            raise UsageError(f"{path} is older than this cryptobench (it has no {name}): {REBUILD}")
        fn.restype, fn.argtypes = res, args
    _loaded[str(path)] = lib
    return lib


def check_sizes(lib: ctypes.CDLL, path) -> None:
    """Every mirrored record has the size the library was built with, or one line asking for a rebuild."""
    for record, c_name, fn_name in SIZES:
        fn = getattr(lib, fn_name, None)
        if fn is None:
            raise UsageError(f"{path} is older than this cryptobench (it has no {fn_name}): {REBUILD}")
        fn.restype, fn.argtypes = ctypes.c_size_t, []
        if fn() != ctypes.sizeof(record):
            raise UsageError(f"{path} has a {c_name} of {fn()} bytes where this cryptobench expects "
                             f"{ctypes.sizeof(record)}: {REBUILD}")


def unicorn_handle(uc) -> ctypes.c_void_p:
    """The uc_engine* behind a unicorn.Uc, for cbsim.c to install its hooks on. Unicorn's Python
    binding has no public way to give it: this reads its private `Uc._uch`, and so accepts only the
    unicorn releases it was tested with (another may rename or wrap the attribute)."""
    import unicorn
    version = getattr(unicorn, "__version__", "(no __version__)")
    if not version.startswith(UNICORN_TESTED):
        raise UsageError(f"unicorn {version} is not a release the simulator was tested with "
                         f"({', '.join(v + 'x' for v in UNICORN_TESTED)}): it passes Unicorn's private engine "
                         f"handle (Uc._uch) to its native part; install a tested one: {UNICORN_INSTALL}")
    handle = getattr(uc, "_uch", None)
    if not isinstance(handle, ctypes.c_void_p) or not handle.value:
        raise UsageError(f"unicorn {version}: its Uc has no private engine handle _uch (found {handle!r}) that "
                         f"the simulator's native part can hook into; install a tested one: {UNICORN_INSTALL}")
    return ctypes.c_void_p(handle.value)


def fill_line_offsets(b: CbBlock, insns: list, offsets: list) -> None:
    """The fetch-bandwidth model's input (cbsim.c flash_fetch): for each flash line the block
    touches, the cycles of its instructions before the first one with a byte in that line (the
    moment the core needs the line, counted from the block's start). `offsets[i]` is the cost of
    the instructions before insns[i] (timing.BlockCost.offsets). Nothing to fill without a flash
    model (nlines 0)."""
    if not b.nlines:
        return
    first, shift, n = b.addr >> b.line_shift, b.line_shift, b.nlines
    k = 0                       # the next line without an offset
    for insn, off in zip(insns, offsets):
        last = ((insn.address + insn.size - 1) >> shift) - first
        while k <= last and k < n:
            b.line_off[k] = off
            k += 1

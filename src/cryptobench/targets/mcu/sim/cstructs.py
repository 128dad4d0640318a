"""The ctypes mirror of what libcbsim.so (harness/sim) shares with Python: the block record the
accounting asks the timing model to fill (cbsim.c's cbsim_block) and the callback types of the
accounting and of the native executor (cbcpu.h).

A mirror that no longer matches the C layout would let the timing model write past the record
(or into the wrong fields): `check_sizes` compares the record's size with the one the library
exports (cbsim_block_size) once per library, and a library built from other sources is one line
asking for ./setup.sh."""
from __future__ import annotations

import ctypes

from ....core.errors import UsageError


class CbBlock(ctypes.Structure):
    """cbsim.c's cbsim_block: one basic block's cost, filled by the miss callback."""
    _fields_ = [("addr", ctypes.c_uint32), ("size", ctypes.c_uint32), ("cycles", ctypes.c_uint32),
                ("insns", ctypes.c_uint32), ("end", ctypes.c_uint32), ("taken_extra", ctypes.c_uint32),
                ("entry_extra", ctypes.c_uint32), ("line_shift", ctypes.c_uint32), ("nlines", ctypes.c_uint32),
                ("line_off", ctypes.POINTER(ctypes.c_uint32))]


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


# cbsim_miss_fn: fills the block's cost; 0, or -1 to stop
MISS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(CbBlock))
# cbcpu.h's callbacks: an access outside flash and RAM (0 served, -1 unmapped), and BKPT #imm
READ_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32))
WRITE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)
BKPT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32)

# the mirrored records and the function of the library that gives each one's C size
SIZES = ((CbBlock, "cbsim_block", "cbsim_block_size"),)


def check_sizes(lib: ctypes.CDLL, path) -> None:
    """Every mirrored record has the size the library was built with, or one line asking for a rebuild."""
    if getattr(lib, "_cbsim_sizes_checked", False):
        return
    for record, c_name, fn_name in SIZES:
        fn = getattr(lib, fn_name, None)
        if fn is None:
            raise UsageError(f"{path} is older than this cryptobench (it has no {fn_name}): rebuild it with ./setup.sh")
        fn.restype, fn.argtypes = ctypes.c_size_t, []
        if fn() != ctypes.sizeof(record):
            raise UsageError(f"{path} has a {c_name} of {fn()} bytes where this cryptobench expects "
                             f"{ctypes.sizeof(record)}: rebuild it with ./setup.sh")
    lib._cbsim_sizes_checked = True

"""Images that misuse the simulator (issue 43, class 9), written byte by byte for hostile_images'
DEVICE (`ideal-m3`) or the cc2652 profile: what tests/test_sim_misuse.py and
bench/untrusted_cases_sim.py run on both executors, which must give the same answer.

Each writer puts one file at `path` and returns the path."""
from __future__ import annotations

import struct
from pathlib import Path

from .hostile_images import CODE, FLASH, RAM, Seg, Thumb, _write, elf

STT_FUNC, STB_GLOBAL = 2, 1


def _symtab(funcs: list[tuple[int, int]], names: bool = True) -> tuple[bytes, bytes]:
    """A .symtab of function symbols (address, size) named f0, f1, ... and its .strtab."""
    strtab, syms = bytearray(b"\0"), bytearray(bytes(16))
    for i, (addr, size) in enumerate(funcs):
        name_at = len(strtab)
        strtab += f"f{i}".encode() + b"\0"
        syms += struct.pack("<IIIBBH", name_at if names else 0, addr | 1, size, STB_GLOBAL << 4 | STT_FUNC, 0, 1)
    return bytes(syms), bytes(strtab)


def with_symbols(body: bytes, funcs: list[tuple[int, int]]) -> bytes:
    """`body` (an ELF from hostile_images.elf, no sections) with a symbol table of `funcs`."""
    symtab, strtab = _symtab(funcs)
    shstrtab = b"\0.symtab\0.strtab\0.shstrtab\0"
    sym_at = len(body)
    str_at = sym_at + len(symtab)
    shs_at = str_at + len(strtab)
    shoff = (shs_at + len(shstrtab) + 3) & ~3

    def sh(name, kind, offset, size, link=0, info=0, entsize=0, flags=0):
        return struct.pack("<IIIIIIIIII", name, kind, flags, 0, offset, size, link, info, 4, entsize)

    shdrs = sh(0, 0, 0, 0) + sh(1, 2, sym_at, len(symtab), link=2, info=1, entsize=16) \
        + sh(9, 3, str_at, len(strtab)) + sh(17, 3, shs_at, len(shstrtab))
    blob = bytearray(body + symtab + strtab + shstrtab)
    blob += bytes(shoff - len(blob)) + shdrs
    blob[32:36] = struct.pack("<I", shoff)
    blob[46:52] = struct.pack("<HHH", 40, 4, 3)          # e_shentsize, e_shnum, e_shstrndx
    return bytes(blob)


def many_symbols(path, count: int = 400_000) -> Path:
    """SYS_EXIT 0 at CODE, then `count` two-byte functions (a NOP each) after the literal pool,
    each with its own function symbol: a profile's load must not take long for them."""
    t = Thumb.new().exit0()
    flash = bytearray(t.image())
    start = (len(flash) + 3) & ~3
    flash += bytes(start - len(flash)) + b"\x00\xbf" * count
    funcs = [(CODE, 8)] + [(start + 2 * i, 2) for i in range(count)]
    return _write(path, with_symbols(elf([Seg(FLASH, bytes(flash))]), funcs))

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


SVC_VECTOR, SYSTICK_VECTOR = 11, 15
SYST_CSR, SYST_RVR = 0xE000E010, 0xE000E014
HANDLER = CODE + 0x100               # where the handlers of these images start


def _with_handler(t: Thumb, vector: int, handler: Thumb) -> bytes:
    """Flash with `t` at CODE and `handler`'s code at HANDLER, vector `vector` pointing there."""
    flash = bytearray(t.image())
    code = bytes(handler.code)
    flash += bytes(max(0, HANDLER + len(code) - len(flash)))
    flash[HANDLER:HANDLER + len(code)] = code
    flash[4 * vector:4 * vector + 4] = struct.pack("<I", HANDLER | 1)
    return bytes(flash)


def _handler(*halfwords: int) -> Thumb:
    """Handler code assembled at HANDLER (its branches are relative, so Thumb.new()'s CODE base
    does not matter for these straight-line handlers)."""
    return Thumb.new().op(*halfwords)


def svc_handled(path, number: int = 0) -> Path:
    """`svc #number` whose SVCall handler sets r4 = 1 and returns; the image exits with code
    r4 (0 where SVC was not taken, 1 where it was) through SYS_EXIT_EXTENDED-free SYS_EXIT."""
    t = Thumb.new().movs(4, 0).op(0xDF00 | number)
    # exit 0 if r4 == 1 (the handler ran), else loop at the instruction limit: cmp r4, #1; bne .
    t.op(0x2C01)
    t.op(0xD1FE)
    t.exit0()
    h = _handler(0x2401, 0x4770)                      # movs r4, #1; bx lr (EXC_RETURN)
    return _write(path, elf([Seg(FLASH, _with_handler(t, SVC_VECTOR, h))]))


def svc_without_handler(path) -> Path:
    """`svc #0` whose vector is 0 (no handler): the entry branches to 0, without the Thumb bit."""
    t = Thumb.new().op(0xDF00).exit0()
    return _write(path, elf([Seg(FLASH, t.image())]))


def hints(path, *halfwords: int) -> Path:
    """`halfwords` (e.g. cpsid i; wfi; wfe), then SYS_EXIT 0."""
    t = Thumb.new().op(*halfwords).exit0()
    return _write(path, elf([Seg(FLASH, t.image())]))


def wfi_with_systick(path, masked: bool = False) -> Path:
    """SysTick with its interrupt every 1000 cycles, then WFI (under PRIMASK when `masked`, then
    CPSIE); its handler sets r4 = 1; exit 0 once r4 is 1. On the part the WFI sleeps until the
    first wrap."""
    t = Thumb.new().movs(4, 0)
    if masked:
        t.op(0xB672)                                   # cpsid i
    t.const(0, SYST_RVR).const(1, 999).op(0x6001)      # SYST_RVR = 999
    t.const(0, SYST_CSR).movs(1, 7).op(0x6001)         # ENABLE | TICKINT | CLKSOURCE
    t.op(0xBF30)                                       # wfi
    if masked:
        t.op(0xB662)                                   # cpsie i
    t.op(0x2C01, 0xD1FE)                               # cmp r4, #1; bne .
    t.const(0, SYST_CSR).movs(1, 0).op(0x6001)         # SysTick off
    t.exit0()
    h = _handler(0x2401, 0x4770)
    return _write(path, elf([Seg(FLASH, _with_handler(t, SYSTICK_VECTOR, h))]))


def wfe_with_systick(path) -> Path:
    """SysTick's interrupt on, then WFE twice: the first sleeps until the wrap (its return sets
    the event register), the second finds the event and goes on; then SEV; WFE (the event set by
    SEV); exit 0."""
    t = Thumb.new().movs(4, 0)
    t.const(0, SYST_RVR).const(1, 999).op(0x6001)
    t.const(0, SYST_CSR).movs(1, 7).op(0x6001)
    t.op(0xBF20)                                       # wfe: sleeps until SysTick
    t.const(0, SYST_CSR).movs(1, 0).op(0x6001)         # SysTick off: nothing more coming
    t.op(0xBF20)                                       # wfe: the exception return's event
    t.op(0xBF40, 0xBF20)                               # sev; wfe
    t.op(0x2C01, 0xD1FE)
    t.exit0()
    h = _handler(0x2401, 0x4770)
    return _write(path, elf([Seg(FLASH, _with_handler(t, SYSTICK_VECTOR, h))]))


def wfi_line_enabled_nothing_started(path) -> Path:
    """NVIC_ISER0 bit 0 enabled (no model on ideal-m3, so nothing can raise it), then WFI."""
    t = Thumb.new().const(0, 0xE000E100).movs(1, 1).op(0x6001, 0xBF30).exit0()
    return _write(path, elf([Seg(FLASH, t.image())]))


def wfi_t2(path) -> Path:
    """wfi.w (T2: 0xf3af 0x8003) with nothing coming."""
    return hints(path, 0xF3AF, 0x8003)


def code_rewritten_in_ram(path) -> Path:
    """A function written to RAM (movs r4, #1; bx lr), called, then rewritten (movs r4, #2) and
    called again: exit 0 only where the second call ran the new bytes (r4 == 2), else it loops."""
    fn = RAM + 0x100
    t = Thumb.new()
    t.const(0, fn).const(1, 0x2401).op(0x8001)          # strh r1, [r0]: movs r4, #1
    t.const(1, 0x4770).op(0x8041)                       # strh r1, [r0, #2]: bx lr
    t.const(2, fn | 1).op(0x4790)                       # blx r2
    t.const(1, 0x2402).op(0x8001)                       # the first instruction is now movs r4, #2
    t.op(0x4790)                                        # blx r2
    t.op(0x2C02, 0xD1FE)                                # cmp r4, #2; bne .
    t.exit0()
    return _write(path, elf([Seg(FLASH, t.image())]))


def poll_pka_function(path, reads: int = 1000) -> Path:
    """`reads` loads of the cc2652 PKA's FUNCTION register (0x4002501c: no operation started, so
    every read gives the same value), then SYS_EXIT 0: the native executor answers all but the
    first from its held read (machine.py bus_read), with the cycles of every load counted."""
    t = Thumb.new().const(0, 0x4002501C).movs(2, 0).const(3, reads)
    loop = t.here
    t.op(0x6801, 0x3201, 0x429A)                        # ldr r1, [r0]; adds r2, #1; cmp r2, r3
    t.op(0xD100 | ((loop - (t.here + 4)) >> 1) & 0xFF)  # bne loop
    t.exit0()
    return _write(path, elf([Seg(FLASH, t.image())]))

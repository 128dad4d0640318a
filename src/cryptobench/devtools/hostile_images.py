"""Hostile firmware images for `cryptobench sim run`, written byte by byte (no compiler needed):
what tests/test_untrusted_sim.py, bench/sim_sandbox and bench/hostile_probe.py feed the simulator.

Each function writes one file at `path` and returns the path. They are built for DEVICE
(`ideal-m3`: flash at 0x00000000, 1 MiB; RAM at 0x20000000, 256 KiB): the vector table is at the
boot address, so no section names it. CASES maps a name to (writer, extra `sim run` arguments,
expected exit code, a fragment of the expected output: stderr for refused images (exit 2, one
line), stdout's table for runs that end with a problem (exit 1)).

    python -m cryptobench.devtools.hostile_images DIR      # writes every case into DIR
"""
from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

DEVICE = "ideal-m3"
FLASH, RAM, RAM_SIZE = 0x00000000, 0x20000000, 0x40000
CODE = FLASH + 0x40                  # after the vector table's 16 words
POOL = FLASH + 0x200                 # literal pool (ldr rd, [pc, #imm] reaches 1 KiB ahead)
SYS_WRITEC, SYS_WRITE0, SYS_WRITE, SYS_HEAPINFO, SYS_EXIT = 0x03, 0x04, 0x05, 0x16, 0x18
APPLICATION_EXIT = 0x20026


# --- a few Thumb instructions, encoded by hand ------------------------------------------------------
@dataclass
class Thumb:
    """Thumb code from CODE on, with a literal pool at POOL."""
    code: bytearray
    pool: list

    @classmethod
    def new(cls) -> "Thumb":
        return cls(bytearray(), [])

    @property
    def here(self) -> int:
        return CODE + len(self.code)

    def op(self, *halfwords: int) -> "Thumb":
        for h in halfwords:
            self.code += struct.pack("<H", h)
        return self

    def movs(self, rd: int, imm: int) -> "Thumb":
        return self.op(0x2000 | rd << 8 | imm)

    def const(self, rd: int, value: int) -> "Thumb":
        """ldr rd, =value (from the pool)."""
        self.pool.append(value)
        at = POOL + 4 * (len(self.pool) - 1)
        return self.op(0x4800 | rd << 8 | (at - ((self.here + 4) & ~3)) // 4)

    def bkpt(self) -> "Thumb":
        return self.op(0xBEAB)

    def b(self, to: int) -> "Thumb":
        return self.op(0xE000 | ((to - (self.here + 4)) >> 1) & 0x7FF)

    def semihost(self, op: int, arg: int) -> "Thumb":
        return self.movs(0, op).const(1, arg).bkpt()

    def exit0(self) -> "Thumb":
        here = self.semihost(SYS_EXIT, APPLICATION_EXIT)
        return here.b(here.here)

    def image(self, data: dict | None = None) -> bytes:
        """Flash from 0: the vector table (SP at the top of RAM, reset at CODE), the code, the pool,
        and `data` ({address: bytes}, above the pool)."""
        flash = bytearray(POOL + 4 * len(self.pool))
        flash[0:8] = struct.pack("<II", RAM + RAM_SIZE, CODE | 1)
        flash[CODE:CODE + len(self.code)] = self.code
        for i, value in enumerate(self.pool):
            flash[POOL + 4 * i:POOL + 4 * i + 4] = struct.pack("<I", value)
        for at, blob in (data or {}).items():
            flash += bytes(max(0, at + len(blob) - len(flash)))
            flash[at:at + len(blob)] = blob
        return bytes(flash)


# --- ELF32 ------------------------------------------------------------------------------------------
@dataclass
class Seg:
    paddr: int
    data: bytes
    memsz: int | None = None
    vaddr: int | None = None
    offset: int | None = None        # p_offset (None: where the writer puts the bytes)
    filesz: int | None = None        # p_filesz (None: len(data))


def elf(segs: list[Seg], *, phnum: int | None = None, phentsize: int = 32, phoff: int = 52, shoff: int = 0,
        shnum: int = 0, shentsize: int = 40, sections: bytes = b"", machine: int = 40, ident_class: int = 1,
        endian: str = "<") -> bytes:
    """An ELF32 ARM executable (little-endian unless `endian` is ">") with `segs` as PT_LOAD
    segments; every header field can be set to a lie."""
    count = len(segs) if phnum is None else phnum
    data_at = phoff + 32 * len(segs)
    headers, blobs = b"", b""
    for s in segs:
        offset = data_at + len(blobs) if s.offset is None else s.offset
        filesz = len(s.data) if s.filesz is None else s.filesz
        memsz = len(s.data) if s.memsz is None else s.memsz
        vaddr = s.paddr if s.vaddr is None else s.vaddr
        headers += struct.pack(endian + "IIIIIIII", 1, offset, vaddr, s.paddr, filesz, memsz, 7, 4)
        blobs += s.data
    ident = b"\x7fELF" + bytes([ident_class, 1 if endian == "<" else 2, 1]) + bytes(9)
    header = ident + struct.pack(endian + "HHIIIIIHHHHHH", 2, machine, 1, CODE | 1, phoff, shoff, 0x05000200, 52, phentsize,
                                 count, shentsize, shnum, 0)
    out = bytearray(header)
    out += bytes(max(0, phoff - len(out)))
    out[phoff:phoff + len(headers)] = headers
    return bytes(out) + blobs + sections


def _flash_elf(code: Thumb, data: dict | None = None) -> bytes:
    return elf([Seg(FLASH, code.image(data))])


def _write(path, blob: bytes) -> Path:
    path = Path(path)
    path.write_bytes(blob)
    return path


# --- runs that must stay bounded or fault (valid ELFs) -------------------------------------------------
def semihosting_flood(path) -> Path:
    """SYS_WRITEC of one character, forever."""
    t = Thumb.new()
    t.semihost(SYS_WRITEC, 0x400).b(CODE)
    return _write(path, _flash_elf(t, {0x400: b"A"}))


def sys_write_4gb(path) -> Path:
    """One SYS_WRITE to stdout claiming 0xfffffff0 bytes at flash, then SYS_EXIT."""
    t = Thumb.new()
    t.semihost(SYS_WRITE, 0x400).exit0()
    return _write(path, _flash_elf(t, {0x400: struct.pack("<III", 1, 0x410, 0xFFFFFFF0), 0x410: b"x" * 16}))


def page_write_sweep(path, start: int = 0x60000000) -> Path:
    """One store per 4 KiB page from `start` upwards, forever (0x60000000: external RAM, unmapped;
    0x40000000: the peripheral region, plain memory)."""
    t = Thumb.new()
    t.const(0, start).const(2, 0x1000)
    loop = t.here
    t.op(0x6000, 0x4410).b(loop)                         # str r0, [r0]; add r0, r2
    return _write(path, _flash_elf(t))


def wild_read(path) -> Path:
    """A load from 0xfffffff0, then SYS_EXIT 0 (what a run reaches only if the load did not fault)."""
    t = Thumb.new()
    t.const(0, 0xFFFFFFF0).op(0x6801).exit0()           # ldr r1, [r0]
    return _write(path, _flash_elf(t))


def runaway_stack(path) -> Path:
    """push {r0-r7} forever: the stack runs down out of RAM."""
    t = Thumb.new()
    t.op(0xB4FF).b(CODE)
    return _write(path, _flash_elf(t))


def endless_loop(path) -> Path:
    """b . (for --max-instructions and --timeout)."""
    t = Thumb.new()
    t.b(CODE)
    return _write(path, _flash_elf(t))


def systick_bad_stack(path) -> Path:
    """SP moved to unmapped 0x30000000, then SysTick enabled with its interrupt: the exception
    frame's first word faults."""
    t = Thumb.new()
    t.const(0, 0x30000000).op(0x4685)                   # mov sp, r0
    t.const(0, 0xE000E014).movs(1, 100).op(0x6001)      # SYST_RVR = 100
    t.const(0, 0xE000E010).movs(1, 7).op(0x6001)        # SYST_CSR = ENABLE | TICKINT | CLKSOURCE
    t.b(t.here)
    return _write(path, _flash_elf(t))


def semihosting_bad_pointer(path) -> Path:
    """SYS_HEAPINFO whose block pointer is unmapped 0x70000000 (the host would write 16 bytes there)."""
    t = Thumb.new()
    t.semihost(SYS_HEAPINFO, 0x400).exit0()
    return _write(path, _flash_elf(t, {0x400: struct.pack("<I", 0x70000000)}))


def console_escapes(path) -> Path:
    """SYS_WRITE0 of text with terminal escapes (a title change, a clear screen), then SYS_EXIT 0."""
    t = Thumb.new()
    t.semihost(SYS_WRITE0, 0x400).exit0()
    return _write(path, _flash_elf(t, {0x400: b"\x1b]0;pwned\x07\x1b[2Jhello\r\n\0"}))


# --- images the loader must refuse --------------------------------------------------------------------
def _valid() -> bytes:
    return _flash_elf(Thumb.new().exit0())


def truncated_header(path) -> Path:
    """The first 40 bytes of an ELF: shorter than its header."""
    return _write(path, _valid()[:40])


def truncated_segment(path) -> Path:
    """An ELF cut short inside its segment's bytes."""
    return _write(path, _valid()[:120])


def program_headers_past_end(path) -> Path:
    """e_phoff points past the end of the file."""
    blob = bytearray(_valid())
    blob[28:32] = struct.pack("<I", 0xFFFFFF00)
    return _write(path, bytes(blob))


def bad_phentsize(path) -> Path:
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image())], phentsize=7))


def section_headers_past_end(path) -> Path:
    """e_shoff and e_shnum name a section header table beyond the file."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image())], shoff=0x7FFFFFF0, shnum=3))


def garbage_after_magic(path) -> Path:
    """\\x7fELF and then noise."""
    return _write(path, b"\x7fELF" + bytes(range(256)) * 4)


def segment_claims_2gb(path) -> Path:
    """A 12 KiB file whose one segment says it has 2 GiB of bytes in the file."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image(), filesz=0x80000000, memsz=0x80000000)])
                  + bytes(12 * 1024))


def sparse_2gb(path) -> Path:
    """A sparse file of 2 GiB (a few KiB on disk) whose segment claims all of it."""
    path = _write(path, elf([Seg(FLASH, Thumb.new().exit0().image(), filesz=0x7FFF0000, memsz=0x7FFF0000)]))
    with open(path, "r+b") as f:
        f.truncate(0x80000000)
    return path


def many_segments(path, count: int = 20_000) -> Path:
    """`count` one-byte PT_LOAD segments in RAM."""
    segs = [Seg(FLASH, Thumb.new().exit0().image())] + [Seg(RAM + i, b"\0") for i in range(count - 1)]
    return _write(path, elf(segs))


def segment_in_system_region(path) -> Path:
    """A segment that loads at 0xe0000000 (the private peripheral bus)."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image()), Seg(0xE0000000, b"\xff" * 64)]))


def segment_in_peripheral_region(path) -> Path:
    """A segment that loads at 0x40001000 (the peripheral region, plain memory of the simulator's)."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image()), Seg(0x40001000, b"\xff" * 64)]))


def segment_wraps(path) -> Path:
    """A segment that runs past 0xffffffff."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image()), Seg(0xFFFFF000, b"\xff" * 64, memsz=0x2000)]))


def segment_too_large(path) -> Path:
    """1 GiB of .bss at 0x60000000 (external RAM, outside the device's memory)."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image()), Seg(0x60000000, b"", memsz=0x40000000)]))


def filesz_above_memsz(path) -> Path:
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image(), memsz=16)]))


def symtab_entsize_zero(path) -> Path:
    """A symbol table section whose entry size is 0 (pyelftools divides by it)."""
    body = _valid()
    strtab = b"\0.symtab\0.strtab\0.shstrtab\0"
    symtab = bytes(16) * 2
    sym_at = len(body)
    str_at = sym_at + len(symtab)
    shoff = str_at + len(strtab)

    def sh(name, kind, offset, size, link=0, entsize=0):
        return struct.pack("<IIIIIIIIII", name, kind, 0, 0, offset, size, link, 0, 4, entsize)

    shdrs = sh(0, 0, 0, 0) + sh(1, 2, sym_at, len(symtab), link=2, entsize=0) + sh(9, 3, str_at, len(strtab)) \
        + sh(17, 3, str_at, len(strtab))
    blob = bytearray(body + symtab + strtab + shdrs)
    blob[32:36] = struct.pack("<I", shoff)
    blob[48:52] = struct.pack("<HH", 4, 3)                 # e_shnum, e_shstrndx
    return _write(path, bytes(blob))


def big_endian(path) -> Path:
    """A well-formed big-endian ARM ELF: headers that parse, for cores the simulator does not model."""
    return _write(path, elf([Seg(FLASH, Thumb.new().exit0().image())], endian=">"))


def fifo(path) -> Path:
    """A FIFO in the image's place (opening it for reading would block)."""
    os.mkfifo(path)
    return Path(path)


def directory(path) -> Path:
    Path(path).mkdir()
    return Path(path)


def empty(path) -> Path:
    return _write(path, b"")


# name -> (writer, extra `sim run` arguments, exit code, fragment of stderr (exit 2) or stdout (exit 1))
CASES = {
    "semihosting_flood": (semihosting_flood, ["--timeout", "2"], 1, "timed out after 2 s"),
    "sys_write_4gb": (sys_write_4gb, [], 1, "more than the 1 MiB one call may pass to the host"),
    "page_write_sweep": (page_write_sweep, [], 1, "write of 4 bytes at unmapped 0x60000000"),
    "peripheral_sweep": (lambda p: page_write_sweep(p, 0x40000000), [], 1, "distinct 4 KiB pages outside flash"),
    "wild_read": (wild_read, [], 1, "read of 4 bytes at unmapped 0xfffffff0"),
    "runaway_stack": (runaway_stack, [], 1, "at unmapped 0x1fff"),
    "endless_loop": (endless_loop, ["--max-instructions", "1000000"], 1, "stopped at the instruction limit"),
    "systick_bad_stack": (systick_bad_stack, [], 1, "write of 4 bytes at unmapped 0x2fffffe0"),
    "semihosting_bad_pointer": (semihosting_bad_pointer, [], 1, "SYS_HEAPINFO (0x16): write of 4 bytes at unmapped"),
    "truncated_header": (truncated_header, [], 2, "too short for an ELF header"),
    "truncated_segment": (truncated_segment, [], 2, "past the end of the file"),
    "program_headers_past_end": (program_headers_past_end, [], 2, "past the end of the file"),
    "bad_phentsize": (bad_phentsize, [], 2, "program header size 7, expected 32"),
    "section_headers_past_end": (section_headers_past_end, [], 2, "malformed ELF"),
    "garbage_after_magic": (garbage_after_magic, [], 2, "ELF"),
    "segment_claims_2gb": (segment_claims_2gb, [], 2, "past the end of the file"),
    "sparse_2gb": (sparse_2gb, [], 2, "is not read"),
    "many_segments": (many_segments, [], 2, "20000 program headers; at most 256"),
    "segment_in_system_region": (segment_in_system_region, [], 2, "lies in the system region"),
    "segment_in_peripheral_region": (segment_in_peripheral_region, [], 2, "lies in the peripheral region"),
    "segment_wraps": (segment_wraps, [], 2, "runs past the top of the 32-bit address space"),
    "segment_too_large": (segment_too_large, [], 2, "at most 64 MiB are mapped"),
    "filesz_above_memsz": (filesz_above_memsz, [], 2, "bytes in the file but 16 in memory"),
    "symtab_entsize_zero": (symtab_entsize_zero, [], 2, "malformed ELF"),
    "big_endian": (big_endian, [], 2, "a big-endian ARM ELF"),
    "fifo": (fifo, [], 2, "a FIFO, not an image file"),
    "directory": (directory, [], 2, "a directory, not an image file"),
    "empty": (empty, [], 2, "0 bytes, too short for an ELF header"),
}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m cryptobench.devtools.hostile_images DIR\n")
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, (writer, args, code, fragment) in CASES.items():
        path = writer(out / f"{name}.elf")
        line = f"cryptobench sim run {path} --device {DEVICE} {' '.join(args)}".rstrip()
        print(f"{line}  -> exit {code}, {fragment!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Reading an ELF from anyone: the file, its headers, its loadable segments and its function
symbols, each checked against the file and limits.py before anything is read or allocated.

pyelftools trusts the offsets and counts it reads (a segment claiming 2 GB is read as such, an
entry size of 0 divides by zero, a section header table past the end raises a parser error of its
own). Everything here reads the header fields first, checks them against the file's size and the
limits, and turns whatever pyelftools still raises into one line naming the file (UsageError)."""
from __future__ import annotations

import os
import stat
import struct
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError
from . import limits
from .limits import size_text

EM_ARM = 40
STT_FUNC = 2            # st_info's low nibble for a function (ELF gABI, Symbol Table)
ELF32_HEADER = 52
ADDRESS_SPACE = 1 << 32


@dataclass(frozen=True)
class SegmentHeader:
    index: int
    load: int          # p_paddr, the LMA
    run: int           # p_vaddr, the VMA
    offset: int        # p_offset
    filesz: int
    memsz: int


class ElfFile:
    """An open ELF whose headers were checked (use as a context manager)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.size = _regular_file_size(self.path)
        self.f = _open_nonblocking(self.path)
        try:
            with self.guard("header"):
                self.elf = _parse(self.f, self.path)
            self._check_headers()
        except BaseException:
            self.f.close()
            raise

    def __enter__(self) -> "ElfFile":
        return self

    def __exit__(self, *exc) -> None:
        self.f.close()

    @contextmanager
    def guard(self, what: str):
        """Whatever pyelftools raises on a malformed file, as one line naming the file and `what`."""
        try:
            yield
        except UsageError:
            raise
        except MemoryError:
            raise UsageError(f"{self.path}: malformed ELF: its {what} asks for more memory than the host has") from None
        except Exception as exc:           # pyelftools raises many kinds on malformed input
            detail = " ".join(str(exc).split())[:120] or type(exc).__name__
            raise UsageError(f"{self.path}: malformed ELF ({what}: {detail}); expected the .elf the linker "
                             "wrote") from None

    def _refuse(self, what: str) -> UsageError:
        return UsageError(f"{self.path}: {what}")

    def _within(self, offset: int, length: int, what: str) -> None:
        if offset + length > self.size:
            raise self._refuse(f"truncated or malformed ELF: {what} ends at byte {offset + length}, past the end of "
                               f"the file ({self.size} bytes)")

    def _check_headers(self) -> None:
        h = self.elf.header
        with self.guard("program header table"):
            phnum = self.elf.num_segments()
        if phnum > limits.MAX_PROGRAM_HEADERS:
            raise self._refuse(f"the ELF has {phnum} program headers; at most {limits.MAX_PROGRAM_HEADERS} are read "
                               "(a linked image has a handful)")
        if phnum and h["e_phentsize"] != 32:
            raise self._refuse(f"malformed ELF: program header size {h['e_phentsize']}, expected 32")
        self._within(h["e_phoff"], phnum * 32, f"the program header table ({phnum} entries at {h['e_phoff']})")
        with self.guard("section header table"):
            shnum = self.elf.num_sections() if h["e_shoff"] else 0
        if shnum > limits.MAX_SECTIONS:
            raise self._refuse(f"the ELF has {shnum} sections; at most {limits.MAX_SECTIONS} are read")
        if shnum and h["e_shentsize"] != 40:
            raise self._refuse(f"malformed ELF: section header size {h['e_shentsize']}, expected 40")
        self._within(h["e_shoff"], shnum * 40, f"the section header table ({shnum} entries at {h['e_shoff']})")
        self.shnum = shnum

    def load_headers(self) -> list[SegmentHeader]:
        """The PT_LOAD segments with bytes or memory, each checked against the file and the 32-bit
        address space; their bytes are not read yet (read_segment)."""
        out = []
        with self.guard("program headers"):
            for i, seg in enumerate(self.elf.iter_segments()):
                if seg["p_type"] != "PT_LOAD" or not (seg["p_filesz"] or seg["p_memsz"]):
                    continue
                out.append(SegmentHeader(i, seg["p_paddr"], seg["p_vaddr"], seg["p_offset"], seg["p_filesz"],
                                         seg["p_memsz"]))
        total = 0
        for s in out:
            self._check_segment(s)
            total += s.filesz
        if total > limits.MAX_IMAGE_BYTES:
            raise self._refuse(f"its segments hold {size_text(total)} in all; at most "
                               f"{size_text(limits.MAX_IMAGE_BYTES)} are loaded")
        return out

    def _check_segment(self, s: SegmentHeader) -> None:
        where = f"segment {s.index}"
        if s.filesz > s.memsz:
            raise self._refuse(f"malformed ELF: {where} has {s.filesz} bytes in the file but {s.memsz} in memory")
        self._within(s.offset, s.filesz, f"{where}'s bytes ({s.filesz} at offset {s.offset})")
        for kind, at, size in (("load", s.load, s.filesz), ("run", s.run, s.memsz)):
            if at + size > ADDRESS_SPACE:
                raise self._refuse(f"{where}'s {kind} range 0x{at:08x} + 0x{size:x} runs past the top of the 32-bit "
                                   "address space")

    def read_segment(self, s: SegmentHeader) -> bytes:
        """The segment's file bytes (checked by load_headers to lie in the file)."""
        self.f.seek(s.offset)
        data = self.f.read(s.filesz)
        if len(data) != s.filesz:
            raise self._refuse(f"truncated ELF: segment {s.index} has {len(data)} of its {s.filesz} bytes")
        return data

    def symbols(self) -> tuple[dict, list]:
        """name -> (address, size) of the function symbols (Thumb bit cleared), and (address, size)
        of every sized one; the symbol tables are checked against the file and MAX_SYMBOLS first.
        The entries are unpacked here (ELF32 Elf32_Sym: st_name, st_value, st_size, st_info,
        st_other, st_shndx), not one by one through pyelftools, whose per-entry parse took most of
        a load near MAX_SYMBOLS (tens of seconds)."""
        from elftools.elf.sections import SymbolTableSection
        names, funcs, seen, code = {}, [], 0, 0
        with self.guard("symbol table"):
            tables = [s for s in self.elf.iter_sections() if isinstance(s, SymbolTableSection)]
            for sec in tables:
                self._within(sec["sh_offset"], sec["sh_size"], f"symbol table {sec.name!r}")
                if sec["sh_entsize"] != 16:
                    raise self._refuse(f"malformed ELF: symbol table {sec.name!r} has entries of "
                                       f"{sec['sh_entsize']} bytes, expected 16")
                seen += sec["sh_size"] // 16
            if seen > limits.MAX_SYMBOLS:
                raise self._refuse(f"the ELF has {seen} symbols; at most {limits.MAX_SYMBOLS} are read")
            for sec in tables:
                strtab = self._strings(sec)
                for name_at, value, size, info, _, _ in struct.iter_unpack("<IIIBBH", self._bytes(sec)):
                    if info & 0xF != STT_FUNC or not name_at or name_at >= len(strtab):
                        continue
                    end = strtab.find(b"\0", name_at)
                    name = strtab[name_at:end if end >= 0 else len(strtab)].decode("utf-8", "replace")
                    if not name:
                        continue
                    addr = value & ~1
                    names.setdefault(name, (addr, size))
                    if size:
                        funcs.append((addr, size))
                        code += size
        if code > limits.MAX_SCANNED_CODE:
            raise self._refuse(f"its function symbols span {code} bytes in all, more than the "
                               f"{size_text(limits.MAX_SCANNED_CODE)} the simulator scans")
        return names, funcs

    def _bytes(self, sec) -> bytes:
        """A section's whole entries (checked by the caller to lie in the file)."""
        self.f.seek(sec["sh_offset"])
        return self.f.read(sec["sh_size"] - sec["sh_size"] % 16)

    def _strings(self, sec) -> bytes:
        """The string table a symbol table links to (sh_link), or b"" where it names none."""
        link = sec["sh_link"]
        if not 0 < link < self.shnum:
            return b""
        strtab = self.elf.get_section(link)
        self._within(strtab["sh_offset"], strtab["sh_size"], f"string table {strtab.name!r}")
        if strtab["sh_size"] > limits.MAX_IMAGE_BYTES:
            return b""
        self.f.seek(strtab["sh_offset"])
        return self.f.read(strtab["sh_size"])

    def section(self, name: str):
        """The section called `name`, or None."""
        with self.guard("section names"):
            return self.elf.get_section_by_name(name)


def _regular_file_size(path: Path) -> int:
    """The size of `path`, which must be a regular file (looked at before it is opened: a FIFO
    would block the open, a device has no end) of a size the simulator reads."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the image ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise UsageError(f"{path}: {kind}, not an image file; expected the .elf the linker wrote")
    if st.st_size > limits.MAX_IMAGE_BYTES:
        raise UsageError(f"{path}: {st.st_size} bytes; an image larger than {size_text(limits.MAX_IMAGE_BYTES)} "
                         "is not read")
    if st.st_size < ELF32_HEADER:
        raise UsageError(f"{path}: {st.st_size} bytes, too short for an ELF header; expected the .elf the linker wrote")
    return st.st_size


def _open_nonblocking(path: Path):
    """`path` opened for reading without blocking (should it have become a FIFO since it was
    looked at), and checked again to be a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the image ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{path}: not a regular file; expected the .elf the linker wrote")
    return os.fdopen(fd, "rb")


def _parse(f, path: Path):
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        elf = ELFFile(f)
    except ELFError:
        raise UsageError(f"{path}: not an ELF file; expected the .elf the linker wrote (not a .bin or .hex)") from None
    if elf["e_machine"] not in ("EM_ARM", EM_ARM) or elf.elfclass != 32:
        raise UsageError(f"{path}: an ELF for {elf['e_machine']} ({elf.elfclass}-bit), not ARM; expected a 32-bit "
                         "ARM (Thumb, Cortex-M) image")
    if not elf.little_endian:       # the simulated cores (and the executors' memory) are little-endian
        raise UsageError(f"{path}: a big-endian ARM ELF; expected a little-endian Cortex-M image (the simulator "
                         "models the cores' little-endian configuration, as the devices it names are built)")
    return elf

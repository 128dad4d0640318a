"""An ELF that cryptobench did not build, read for the simulator: what to write where, where its
vector table is, its symbols, and the memory map that covers it.

Nothing here knows the executor (Unicorn today): `load_image` gives plain data that any engine
writes into its own memory. Segments are written at their load addresses (p_paddr, the LMA), as
a debugger flashes them; start-up code that copies .data or a RAM function from its LMA to its
run address (VMA) then works as on the part. Both ranges are mapped: the device's flash and RAM
(its board in targets/boards.toml), and any PT_LOAD range outside them as RAM, with a note, but
only where a Cortex-M has memory (never the peripheral region, which is plain memory of its own,
or the system region) and up to limits.py's MAX_EXTRA_MAPPED. The file is read through
elfread.py: every offset, count and size is checked before anything is read."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import UsageError
from . import limits
from .elfread import ElfFile

# Section names vendors' and CMSIS start-up files put the vector table in
VECTOR_SECTIONS = (".isr_vector", ".vectors", ".vector_table", ".text.vectors", ".isr_vectors", ".intvecs",
                   ".vector", ".interrupt_vector", ".exception_vectors")
PAGE = 0x1000                      # Unicorn maps whole 4 KiB pages
STACK_GUESS = 0x10000              # mapped below an initial SP outside the device's RAM
PERIPHERALS = (0x40000000, 0x20000000, "the peripheral region (0x40000000-0x5fffffff) is plain memory: "
               "registers read back what was written, no peripheral is modelled except those listed as modelled")


@dataclass(frozen=True)
class Segment:
    load: int          # where its bytes are written (p_paddr, the LMA)
    run: int           # where it runs (p_vaddr, the VMA)
    data: bytes        # p_filesz bytes
    memsz: int


@dataclass(frozen=True)
class Region:
    start: int
    size: int
    what: str          # "flash", "RAM", or why a range outside them is mapped


@dataclass
class Image:
    path: Path
    segments: list[Segment]
    vector_table: int
    vector_source: str                 # how the vector table was found
    symbols: dict = field(default_factory=dict)      # name -> (address, size), functions (Thumb bit cleared)
    funcs: list = field(default_factory=list)        # (address, size) of every sized function
    regions: list[Region] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def read_word(self, addr: int) -> int | None:
        """A 32-bit word of the image as loaded (at the segments' load addresses); None outside them."""
        for seg in self.segments:
            if seg.load <= addr and addr + 4 <= seg.load + len(seg.data):
                off = addr - seg.load
                return int.from_bytes(seg.data[off:off + 4], "little")
        return None


def _vector_table(ef: ElfFile, segments, boot: int, given: int | None, path: Path) -> tuple[int, str]:
    """The vector table: --vector-table, else a section named like one, else the lowest load
    address when it is the device's boot address."""
    if given is not None:
        return given, f"--vector-table 0x{given:08x}"
    for name in VECTOR_SECTIONS:
        sec = ef.section(name)
        if sec is not None and sec["sh_size"] >= 8:
            return _lma(sec["sh_addr"], segments), f"section {name}"
    loads = sorted(s.load for s in segments)
    if loads and loads[0] == boot:
        return boot, f"the lowest load address, the device's boot address 0x{boot:08x}"
    raise UsageError(f"{path}: no vector table found: no section named {', '.join(VECTOR_SECTIONS[:4])} or the "
                     f"like, and nothing loads at the device's boot address 0x{boot:08x}"
                     + (f" (the lowest load address is 0x{loads[0]:08x})" if loads else "")
                     + "; give --vector-table ADDR")


def _lma(vma: int, segments) -> int:
    """The load address of run address `vma` (a section is read where it was loaded)."""
    for seg in segments:
        if seg.run <= vma < seg.run + max(seg.memsz, len(seg.data)):
            return seg.load + (vma - seg.run)
    return vma


def _covered(start: int, end: int, regions) -> bool:
    return any(r.start <= start and end <= r.start + r.size for r in regions)


def _gaps(a: int, b: int, regions) -> list[tuple[int, int]]:
    """The parts of [a, b) no region covers."""
    out = [(a, b)]
    for r in regions:
        lo, hi = r.start, r.start + r.size
        out = [piece for x, y in out for piece in ((x, min(y, lo)), (max(x, hi), y)) if piece[0] < piece[1]]
    return out


def _ranges(headers) -> list[tuple[int, int, str]]:
    """(start, size, "load" or "run") of every segment: its file bytes where they load, its memory
    where it runs."""
    return [r for h in headers for r in ((h.load, h.filesz, "load"), (h.run, h.memsz, "run"))]


def _part_memory(x: int, y: int, part_regions) -> str | None:
    """The name of the part's memory (a board entry's `regions`: a TCM, another SRAM) that holds
    [x, y), or None."""
    for r in part_regions:
        if r.base <= x and y <= r.base + r.size:
            return r.name
    return None


def _extra_regions(ranges, regions, sp: int | None, part_regions=()) -> tuple[list[Region], list[str]]:
    """RAM for every load or run range of the image outside the device's memory, and for the
    stack below the initial SP (when given) where that is outside it too, page-aligned. A range
    inside one of the part's other memories (part_regions) is named as that memory: it is real
    memory of the part, timed as RAM (no flash wait states)."""
    extra, notes = [], []
    ranges = list(ranges)
    if sp is not None and not _covered(sp - 4, sp, regions):
        lo = max(sp - STACK_GUESS, 0)
        holder = next((r for r in part_regions if r.base < sp <= r.base + r.size), None)
        if holder is not None:          # the stack stays inside the part's memory that holds the SP
            lo = max(lo, holder.base)
        ranges.append((lo, sp - lo, "stack"))
    for lo, size, kind in ranges:
        if size == 0:
            continue
        a, b = lo & ~(PAGE - 1), (lo + size + PAGE - 1) & ~(PAGE - 1)
        gaps = _gaps(a, b, regions + extra)
        part = _part_memory(a, b, part_regions) if gaps else None
        if kind == "stack" and part:
            extra += [Region(x, y - x, f"the part's {part}") for x, y in gaps]
            notes.append(", ".join(f"0x{x:08x}-0x{y - 1:08x}" for x, y in gaps) + f": the part's {part}, the "
                         f"stack below the initial SP 0x{sp:08x}, timed as RAM")
            continue
        if kind == "stack" and gaps:
            extra += [Region(x, y - x, "the stack") for x, y in gaps]
            notes.append(", ".join(f"0x{x:08x}-0x{y - 1:08x}" for x, y in gaps) + f" mapped as RAM: the initial SP "
                         f"0x{sp:08x} lies outside the device's RAM (the {STACK_GUESS // 1024} KiB below it are taken "
                         "as the stack)")
            continue
        for x, y in gaps:
            part = _part_memory(x, y, part_regions)
            if part:
                extra.append(Region(x, y - x, f"the part's {part}"))
                notes.append(f"0x{x:08x}-0x{y - 1:08x}: the part's {part} (the image's {kind} range 0x{lo:08x}-"
                             f"0x{lo + size - 1:08x}), timed as RAM: no flash wait states")
                continue
            extra.append(Region(x, y - x, f"the image's {kind} range 0x{lo:08x}-0x{lo + size - 1:08x}"))
            notes.append(f"0x{x:08x}-0x{y - 1:08x} mapped as RAM: the image's {kind} range 0x{lo:08x}-"
                         f"0x{lo + size - 1:08x} lies outside the device's flash and RAM")
    return extra, notes


def _check_extra(extra: list[Region], path: Path) -> None:
    """Ranges outside the device's flash and RAM are mapped as RAM only where a Cortex-M has
    memory (not the peripheral or the system region), and only up to MAX_EXTRA_MAPPED in all."""
    p_lo, p_hi = PERIPHERALS[0], PERIPHERALS[0] + PERIPHERALS[1]
    for r in extra:
        end = r.start + r.size
        if r.start < p_hi and p_lo < end:
            raise UsageError(f"{path}: {r.what} (0x{r.start:08x}-0x{end - 1:08x}) lies in the peripheral region "
                             f"0x{p_lo:08x}-0x{p_hi - 1:08x}; an image's bytes and stack belong in flash or RAM")
        if end > limits.SYSTEM_REGION:
            raise UsageError(f"{path}: {r.what} (0x{r.start:08x}-0x{end - 1:08x}) lies in the system region "
                             f"(0x{limits.SYSTEM_REGION:08x}-0xffffffff); an image's bytes and stack belong in flash "
                             "or RAM")
    total = sum(r.size for r in extra)
    if total > limits.MAX_EXTRA_MAPPED:
        raise UsageError(f"{path}: needs {limits.size_text(total)} outside the device's flash and RAM ("
                         + ", ".join(f"0x{r.start:08x}-0x{r.start + r.size - 1:08x}" for r in extra[:3])
                         + (", ..." if len(extra) > 3 else "")
                         + f"); at most {limits.size_text(limits.MAX_EXTRA_MAPPED)} are mapped")


def _read(path: Path, flash: tuple[int, int], ram: tuple[int, int], vector_table: int | None):
    """The segments (their ranges checked before their bytes are read), symbols and vector table."""
    device = [Region(flash[0], flash[1], "flash"), Region(ram[0], ram[1], "RAM")]
    with ElfFile(path) as ef:
        headers = ef.load_headers()
        if not any(h.filesz for h in headers):
            raise UsageError(f"{path}: the ELF has no loadable bytes (no PT_LOAD segment with file contents)")
        _check_extra(_extra_regions(_ranges(headers), device, None)[0], path)
        segments = [Segment(load=h.load, run=h.run, data=ef.read_segment(h), memsz=h.memsz) for h in headers]
        symbols, funcs = ef.symbols()
        vt, how = _vector_table(ef, segments, flash[0], vector_table, path)
    return headers, segments, symbols, funcs, vt, how


def load_image(path: Path, flash: tuple[int, int], ram: tuple[int, int], vector_table: int | None = None,
               part_regions=()) -> Image:
    """Read `path` for a device whose flash and RAM are (start, size); the boot address is the
    flash's start; part_regions are the part's other memories (boards.MemoryRegion: TCMs, other
    SRAMs), named in the notes where the image uses them. Raises UsageError (one line) for a file
    that is not an ARM ELF, is malformed, exceeds a limit of limits.py, needs memory where none may
    be mapped, or has no vector table."""
    path = Path(path)
    headers, segments, symbols, funcs, vt, how = _read(path, flash, ram, vector_table)
    image = Image(path=path, segments=segments, vector_table=vt, vector_source=how, symbols=symbols, funcs=funcs)
    sp, reset = image.read_word(vt), image.read_word(vt + 4)
    if sp is None or reset is None:
        raise UsageError(f"{path}: the vector table at 0x{vt:08x} ({how}) is not in the image's loaded bytes; "
                         "give --vector-table ADDR")
    if not reset & 1:
        raise UsageError(f"{path}: the reset vector at 0x{vt + 4:08x} ({how}) is 0x{reset:08x}, not a Thumb "
                         "address (bit 0 clear): not a Cortex-M vector table; give --vector-table ADDR")
    image.regions = [Region(flash[0], flash[1], "flash"), Region(ram[0], ram[1], "RAM")]
    extra, image.notes = _extra_regions(_ranges(headers), image.regions, sp, part_regions)
    _check_extra(extra, path)
    image.regions += extra
    image.regions.append(Region(PERIPHERALS[0], PERIPHERALS[1], "peripherals"))
    image.notes.append(PERIPHERALS[2])
    return image


def parse_addr(text: str, option: str) -> int:
    """'0x08004000' or '134234112' -> int, or one line naming the option."""
    try:
        value = int(text, 0)
    except ValueError:
        raise UsageError(f"{option} {text}: not an address; expected e.g. 0x08004000") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise UsageError(f"{option} {text}: outside the 32-bit address space")
    return value

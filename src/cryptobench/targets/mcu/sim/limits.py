"""What `cryptobench sim run` allows an image it did not build: the sandbox's limits, in one place.

An image is data from anyone. Each figure bounds the memory or time one hostile image can take
(docs/promises.md, "What `sim run` guarantees for an untrusted image"); the loader, the two runners
and the command refuse or cut at these, with one line saying which limit and what was kept."""
from __future__ import annotations

KIB, MIB = 1 << 10, 1 << 20

# --- the image file -------------------------------------------------------------------------------
MAX_IMAGE_BYTES = 512 * MIB        # the file's size (a linked ELF with debug information is well below)
MAX_PROGRAM_HEADERS = 256          # e_phnum (a linked image has a handful)
MAX_SECTIONS = 4096                # e_shnum, or the extended count in section 0
MAX_SYMBOLS = 500_000              # entries over all symbol tables
MAX_SCANNED_CODE = 16 * MIB        # bytes of function symbols Unicorn's runner disassembles at start-up

# --- the memory map -------------------------------------------------------------------------------
# Ranges an image may add beyond the device's flash and RAM (mapped as RAM, with a note), in all;
# only in the code, SRAM and external RAM/device regions of the Cortex-M map, never in the
# peripheral region (0x40000000-0x5fffffff, modelled as plain memory) or the system region.
MAX_EXTRA_MAPPED = 64 * MIB
SYSTEM_REGION = 0xE0000000         # the private peripheral bus and vendor system space, to 0xffffffff
PERIPHERAL_PAGES = 4096            # distinct 4 KiB pages of plain memory an image may write (16 MiB)

# --- a run ----------------------------------------------------------------------------------------
MAX_TRANSFER = 1 * MIB             # bytes one semihosting call may read from the target (SYS_WRITE, SYS_OPEN)
CONSOLE_HEAD = 64 * KIB            # console characters kept from the start of the run
CONSOLE_TAIL = 64 * KIB            # and from its end; the rest counted, said so
CALLS_HEAD = 1000                  # semihosting calls listed from the start of the run
CALLS_TAIL = 1000                  # and from its end
SEGMENTS_HEAD = 500                # segments listed from the start of the run
SEGMENTS_TAIL = 500                # and from its end; the rest summarised (count, cycles, instructions)
DEFAULT_MAX_INSTRUCTIONS = 10_000_000_000
MAX_TIMEOUT_S = 86_400.0           # --timeout: a day


def size_text(n: int) -> str:
    """1048576 -> '1 MiB', 65536 -> '64 KiB', 100 -> '100 bytes'."""
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} bytes"

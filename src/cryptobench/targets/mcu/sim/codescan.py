"""One pass over an image's functions before a Unicorn run: the instructions Unicorn's hooks need
(it decodes nothing for the host), found by disassembling each byte of code once.

* data-dependent instructions (divides, long multiplies: timing.py's DYN classes), whose cost
  cbsim.c adds from their operands;
* unmasking sites (CPSIE, MSR to PRIMASK/BASEPRI/FAULTMASK), where a masked interrupt is looked
  at again;
* SEV, which sets the event register a WFE consumes (ARMv7-M ARM B1.5.18; sleep.py).

The functions (address, size) are merged where they overlap or touch, so an image with hundreds
of thousands of small or aliased symbols is disassembled once per byte, not once per symbol; the
pass uses capstone's lite disassembly (no operand detail) and costs in detail only the few
instructions whose mnemonic can be data-dependent."""
from __future__ import annotations

from dataclasses import dataclass, field

from . import timing

DYNAMIC_MNEMONICS = ("udiv", "sdiv", "umull", "smull", "umlal", "smlal")   # timing.py's DYN kinds
MASK_REGISTERS = ("primask", "basepri", "faultmask")


@dataclass
class Sites:
    dynamic: list = field(default_factory=list)     # (address, kind, reg_a, reg_b) for cbsim_add_dynamic
    unmasking: list = field(default_factory=list)   # addresses
    sev: list = field(default_factory=list)         # addresses


def merged(funcs) -> list[tuple[int, int]]:
    """(start, end) ranges covering every function (address, size), sorted, none overlapping."""
    out: list[list[int]] = []
    for start, size in sorted(funcs):
        if size <= 0:
            continue
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], start + size)
        else:
            out.append([start, start + size])
    return [(a, b) for a, b in out]


def scan(cs, read, funcs, core: str, dev) -> Sites:
    """The sites of every function (address, size) whose bytes read(address, n) gives; `cs` is a
    Thumb capstone with detail on (used for the data-dependent candidates only)."""
    sites, found = Sites(), {}
    report = timing.TimingReport()      # its own: a scan also decodes literal pools, never the run's report
    for start, end in merged(funcs):
        code = read(start, end - start)
        offset = 0
        while offset < len(code):
            got = False
            for address, size, mnemonic, op_str in cs.disasm_lite(code[offset:], start + offset):
                got = True
                offset = address + size - start
                _classify(cs, code, start, address, size, mnemonic, op_str, core, dev, report, sites, found)
            if not got:
                offset += 2             # bytes capstone cannot decode (data): go on a halfword later
    sites.dynamic = list(found.values())
    return sites


def _classify(cs, code, start, address, size, mnemonic, op_str, core, dev, report, sites, found) -> None:
    base = mnemonic.split(".")[0]
    if base.startswith(DYNAMIC_MNEMONICS):
        insn = next(cs.disasm(code[address - start:address - start + size], address), None)
        if insn is not None:
            for d in timing.block_cost(core, dev, [insn], report).dynamic:
                found[d[0]] = d
    elif base.startswith("cpsie") or (base.startswith("msr") and any(k in op_str for k in MASK_REGISTERS)):
        sites.unmasking.append(address)
    elif base == "sev":
        sites.sev.append(address)


CPSIE = (0xB661, 0xB662, 0xB663)     # CPSIE f / i / if (T1; ARMv7-M ARM B5.2.1)
SEV_T1, SEV_T2 = 0xBF40, (0xF3AF, 0x8004)


def raw_sites(blobs) -> Sites:
    """SEV and CPSIE found by their encodings at every halfword of `blobs` ((address, bytes): the
    image's segments at their load and run addresses), for code no function symbol covers (a
    hand-written image has none). A halfword of data that matches only puts a hook where no
    instruction starts, or one that is that instruction if it runs."""
    sites = Sites()
    for base, data in blobs:
        halves = memoryview(bytes(data[:len(data) & ~1])).cast("H")
        for i, h in enumerate(halves):
            if h == SEV_T1 or (h == SEV_T2[0] and i + 1 < len(halves) and halves[i + 1] == SEV_T2[1]):
                sites.sev.append(base + 2 * i)
            elif h in CPSIE:
                sites.unmasking.append(base + 2 * i)
    return sites

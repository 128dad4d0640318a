"""Issue rules measured on silicon: the Cortex-M7's dual issue and result latencies, and the
Cortex-M33's limited dual issue and result latencies.

ARM publishes no cycle tables for these cores (the M7 TRM, DDI 0489, calls the pipeline dual-issue
superscalar and says no more; the M33 TRM, ARM 100230, has none). Every rule here is a published
measurement on silicon, cited by tag in the comments:

  [J7]   J. Oleksiewicz (jnk0le), "random" repository, `pipeline cycle test/doc/cortex_m7.md`
         (commit 2e111f2f2b52), DWT.CYCCNT microbenchmarks on an STM32H743 rev Y.
  [J33]  the same repository, `pipeline cycle test/doc/cortex_m33.md` (commit f061980f823e),
         measured on an RP2350 (Cortex-M33 r1p0).
  [KA]   Arm knowledge article KA001260 (MULS takes an extra cycle on the Cortex-M33), cited by [J33].

A rule that depends on what the static cost cannot know (the bank two loads hit, fetch alignment,
branch prediction) is not applied: docs/sim-model.md lists those as "no static rule". This module
reads capstone instructions already classified by timing.py and returns cycle corrections; it
imports nothing from timing.py (timing.py calls it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

FLAGS = "apsr"     # the pseudo-register for the condition flags

# [J7] "bitfield and DSP instructions except multiplication (e.g. uxtb, uxtab, ubfi, pkhbt, uadd8,
# qadd, clz, rev)": timing.py's "dsp" class plus these "alu" mnemonics.
_BITFIELD = {"sxtb", "sxth", "uxtb", "uxth", "rev", "rev16", "revsh", "rbit", "clz", "bfc", "bfi",
             "sbfx", "ubfx", "ssat", "usat"}
# [J7] these "can't be dual issued with operand2 inline_shifted_reg/shifted_constant instruction"
_NO_SHIFTED_OP2 = {"bfi", "bfc", "sbfx", "ubfx", "rbit", "rev", "rev16", "revsh", "sxtab", "sxtah",
                   "sxtab16", "uxtab", "uxtah", "uxtab16", "pkhbt", "pkhtb"}
_SHIFTS = {"lsl", "lsr", "asr", "ror", "rrx"}
_MUL_CLASSES = {"mul", "mla", "lmul", "lmla", "dsp_mul"}
_ACC_LAST = {"mla", "mls", "smlabb", "smlabt", "smlatb", "smlatt", "smlawb", "smlawt", "smlad", "smladx",
             "smlsd", "smlsdx", "smmla", "smmlar", "smmls", "smmlsr"}           # Ra is the last register
_ACC_PAIR = {"umlal", "smlal", "umaal", "smlalbb", "smlalbt", "smlaltb", "smlaltt", "smlald", "smlaldx",
             "smlsld", "smlsldx"}                                               # RdLo, RdHi accumulate
_EXTEND_ADD = {"sxtab", "sxtah", "sxtab16", "uxtab", "uxtah", "uxtab16"}
_OP_REG, _OP_IMM, _OP_MEM = 1, 2, 3     # capstone 5's ARM_OP_REG/IMM/MEM


@dataclass(slots=True)      # one per instruction of every M7/M33 block costed: slots make them cheaper
class Item:
    """One instruction of a block as the issue rules see it."""
    insn: object
    cls: str | None       # timing.py's class (after the PC-writing forms are split off)
    base: str             # mnemonic without width, condition or S
    cost: int             # timing.py's table cost (0 for a data-dependent one)
    flow: bool            # writes the PC
    regs: list            # its register operands' names, in order (timing.py's _regs)
    reads: set = field(init=False)      # registers read (FLAGS for the condition flags)
    writes: set = field(init=False)     # registers written
    addr: set = field(init=False)       # registers that form a load/store address
    shifted: set = field(init=False)    # registers read through an inline shift (operand2)
    kind: str = field(init=False)       # _kind's
    op2: str | None = field(init=False)     # _op2's ([J7]'s operand2 class), for the ALU kind

    def __post_init__(self):
        insn = self.insn
        name = insn.reg_name
        read, written = insn.regs_access()
        self.reads, self.writes = reads, writes = set(map(name, read)), set(map(name, written))
        reads.discard("pc")
        writes.discard("pc")
        if "cpsr" in reads or insn.cc not in (0, 15):      # ADC/SBC/RRX, or conditional (IT)
            reads.discard("cpsr")
            reads.add(FLAGS)
        if insn.update_flags:
            writes.discard("cpsr")
            writes.add(FLAGS)
        self.addr, self.shifted = set(), set()
        for op in insn.operands:
            if op.type == _OP_MEM:
                self.addr.update(name(r) for r in (op.mem.base, op.mem.index) if r)
            elif op.type == _OP_REG and op.shift.type:
                self.shifted.add(name(op.reg))
        self.kind = _kind(self)
        self.op2 = _op2(self) if self.kind == "alu" else None

    def accumulators(self) -> set:
        regs = self.regs
        if self.base in _ACC_LAST and len(regs) == 4:
            return {regs[3]}
        if self.base in _ACC_PAIR:
            return set(regs[:2])
        return set()

    def store_data(self) -> set:
        """The registers a store writes to memory (not its address)."""
        return set(self.regs) - self.addr if self.cls in ("str", "vstr", "strd") else set()


def _kind(it: Item) -> str:
    cls = it.cls
    if it.flow or it.cost != 1:
        return "other"
    if cls == "alu":
        return "bitdsp" if it.base in _BITFIELD else "alu"
    if cls == "dsp":
        return "bitdsp"
    if cls in _MUL_CLASSES:
        return "mul"
    if cls in ("ldr", "str"):
        return "load" if cls == "ldr" else "store"
    if cls in ("vldr", "vstr"):      # [J7] vldr.f can dual issue; vldr.d/vstr.d "can't dual issue with anything"
        if any(r[:1] == "d" for r in it.regs):
            return "other"
        return "load" if cls == "vldr" else "store"
    if it.base == "nop":             # [J7] "no nop elimination, they are just not creating execution stalls"
        return "nop"
    return "other"


def _op2(it: Item) -> str | None:
    """[J7]'s operand2 classes: simple, pattern, shifted_const, shifted_reg, shift_const, shift_reg;
    None for register-register forms."""
    insn, ops = it.insn, it.insn.operands
    if it.base in _SHIFTS:
        return "shift_const" if it.base == "rrx" or (ops and ops[-1].type == _OP_IMM) else "shift_reg"
    if it.shifted:
        return "shifted_reg"
    if not ops or ops[-1].type != _OP_IMM:
        return None
    v = ops[-1].imm & 0xFFFFFFFF
    if insn.size == 2 or v < 256 or it.base in ("addw", "subw", "movw", "movt"):
        return "simple"
    b = v & 0xFF
    if v in (b * 0x00010001, b * 0x01000100, b * 0x01010101):
        return "pattern"
    return "shifted_const"


# ---- Cortex-M7 ---------------------------------------------------------------------------------

_EARLY_FORWARD = {"add", "sub", "mov"}   # [J7] "result of early alu can be forwarded to late alu in 0
                                         # cycles": add, sub, mov reg-reg or simple/constructed constants
_HEAVY_OP2 = {"shifted_const", "shifted_reg"}


def m7_pairs(a: Item, b: Item) -> bool:
    """May b issue in the same cycle as a, the instruction before it ([J7])?"""
    ka, kb = a.kind, b.kind
    if "other" in (ka, kb):
        return False       # LDM/STM/LDRD/STRD "cannot dual issue with preceding or following
                           # instructions"; branches, IT, system, FP arithmetic: no published pairing
    if ka == kb and ka in ("load", "store", "mul", "bitdsp"):
        return False       # two stores: "cannot dual issue two stores"; two loads only to different
                           # banks (even/odd words), which a static cost cannot know; multiplies
                           # "can't dual issue wrt each other"; bitfield/DSP "cannot dual issue wrt each other"
    if {ka, kb} == {"mul", "store"}:
        return False       # multiplies "can't dual issue with stores"
    if kb == "bitdsp":
        return False       # "the bitfield/dsp instructions must be placed in older op"
    if (a.base in _NO_SHIFTED_OP2 and b.op2 in _HEAVY_OP2) or (b.base in _NO_SHIFTED_OP2 and a.op2 in _HEAVY_OP2):
        return False
    if a.op2 in ("shifted_const", "shifted_reg", "shift_const", "shift_reg") and b.op2 in _HEAVY_OP2:
        return False       # the operand2 dual-issue matrix
    dep = b.reads & a.writes
    if not dep:
        return True
    if (a.base, b.base) == ("movw", "movt"):
        return True        # "movw + movt pair can dual issue with mutual dependency"
    if FLAGS in dep:
        return False       # "flags generated in early ALU cannot be forwarded to late ALU in 0 cycles"
    if kb == "store" and not (dep & b.addr):
        return True        # "can store any result in same cycle, including ldr, ldrh, ldrb"
    return (a.base in _EARLY_FORWARD and a.op2 in (None, "simple", "pattern") and kb == "alu"
            and b.op2 not in ("shift_const", "shift_reg") and not (dep & b.shifted))


def m7_latency(p: Item, c: Item, reg: str) -> int:
    """Cycles after p issues before c, which reads reg that p wrote, can issue ([J7]); 1 is the
    ordinary next-cycle forwarding."""
    if p.kind == "store" or reg == FLAGS:
        return 1
    if reg in c.store_data():
        return 1                                   # stores take any result in the same cycle
    if p.kind == "mul":
        return 1 if reg in c.accumulators() else 2   # "1 additional cycle of result latency";
                                                     # "can be chained on accumulator dependency each cycle"
    if p.kind == "load":
        if p.base in ("ldrb", "ldrh", "ldrsb", "ldrsh", "ldrbt", "ldrht", "ldrsbt", "ldrsht", "ldrexb", "ldrexh"):
            return 2                               # "byte/half loads ... 1 extra cycle of result latency"
        if c.kind == "mul" and reg not in c.accumulators():
            return 2                               # "can't consume ldr result from previous cycle"
        if reg in c.shifted or c.base in _EXTEND_ADD:
            return 2                               # consumed in the early ALU
        return 1
    if p.kind == "bitdsp" and reg in c.addr and c.kind in ("load", "store"):
        return 2                                   # "cannot be used as index or address ... next cycle"
    return 1


def m7_schedule(items: list) -> int:
    """Cycles for the block's non-branch instructions issued in order, two at a time where [J7]
    allows, with its result latencies; the caller subtracts the sum of their table costs."""
    t = 0                  # the next cycle a new issue group may start
    open_ = None           # (item, cycle): a group holding one instruction that b may join
    ready: dict = {}       # register -> (cycle its producer issued, producer)
    for b in items:
        earliest = 0       # when b's operands allow it to issue (the open group's aside)
        for reg in b.reads:
            if reg in ready:
                cyc, p = ready[reg]
                if not (open_ and p is open_[0]):
                    earliest = max(earliest, cyc + m7_latency(p, b, reg))
        if open_ and earliest <= open_[1] and m7_pairs(open_[0], b):
            cyc, open_ = open_[1], None
        else:
            for reg in b.reads:      # dependence on the open group's instruction, now a cycle apart
                if open_ and reg in ready and ready[reg][1] is open_[0]:
                    earliest = max(earliest, open_[1] + m7_latency(open_[0], b, reg))
            cyc = max(t, earliest)
            t = cyc + b.cost
            open_ = (b, cyc) if b.kind != "other" else None
        for reg in b.writes:
            ready[reg] = (cyc, b)
    return t


# ---- Cortex-M33 --------------------------------------------------------------------------------

def m33_cost(it: Item, prev: Item | None, c: int) -> int:
    """The M33's own cost of one (non-branch) instruction, c being the table's ([J33], [KA])."""
    if it.base == "mul" and it.insn.size == 2 and it.insn.update_flags:
        return 2                     # MULS (16-bit, flag-setting): [KA], [J33] "take a total of 2 cycles"
    if it.kind == "alu" and it.op2 == "shifted_const" and it.insn.update_flags:
        return 2                     # [J33]: flag-setting operand2 shifted constant, 2 cycles
    if it.cls == "it" and prev is not None and prev.insn.size == 2 and not prev.flow:
        return 0                     # [J33] "it can dual issue with preceding instruction" (two 16-bit)
    return c


def m33_latency(p: Item, c: Item, reg: str) -> int:
    """Stall cycles when c, right after p, reads reg that p wrote ([J33]: 2-cycle result latencies)."""
    if reg == FLAGS:
        return 1 if p.op2 == "shifted_reg" else 0   # "flags generated by shifted reg operand2
                                                     # instructions are available a cycle later"
    if reg in c.accumulators():
        return 0                     # the accumulate input takes MAC, *xta*, operand2 and load results
    if p.cls in ("ldr", "vldr"):
        if reg in c.store_data():
            return 0                 # "load to store latency is 1 cycle"
        if p.cls == "vldr":
            return 0                 # "vldr.32 has 1 cycle of load to use latency"
        return 1                     # "load to use latency is 2 cycles"
    # An address is read like any other operand: [J33] measures no address-generation interlock
    # (the M3/M4's "no forwarding" stall, DDI 0337 3.3.2), only the result latencies below; so a
    # single-stage result feeds an address in the next cycle (docs/sim-model.md "Cortex-M33").
    if p.cls == "dsp" and p.base not in _EXTEND_ADD:
        return 1                     # "DSP and SIMD instructions (qsub, uadd8, pkh{bt,tb}) have 2
                                     # cycle result latency (no chaining from acumulator stage)"
    if p.accumulators() or p.base in _EXTEND_ADD or p.op2 in _HEAVY_OP2:
        return 0 if reg in c.store_data() else 1    # MAC, *xta*, shifted operand2: 2-cycle result
                                                     # latency ("can store result from accumulate
                                                     # stage in 1 cycle")
    return 0


def m33_branch(prev: Item | None, branch) -> tuple | None:
    """(not-taken, taken) cycles of a 16-bit B<cond> that dual-issues with the 16-bit instruction
    before it ([J33]: not taken 0; taken 1 when that instruction sets no flags), else None."""
    if prev is None or prev.flow or prev.insn.size != 2 or branch.size != 2:
        return None
    return 0, (2 if FLAGS in prev.writes else 1)

"""The simulator's timing model: what a translated block of Thumb code costs on a Cortex-M core.

Costs come from the instruction timing tables of ARM's Technical Reference Manuals (TRMs):

  cortex-m0      DDI 0432C, 3.3 "Instruction set summary", Table 3-1
  cortex-m0plus  DDI 0484C, 3.3 "Instruction set summary", Table 3-1 (2-stage pipeline)
  cortex-m3      DDI 0337I, 3.3.1 "Cortex-M3 instructions", Table 3-1, and 3.3.2 "Load/store timings"
  cortex-m4      DDI 0439B, 3.3.1 "Cortex-M4 instructions", Table 3-1, 3.3.2 "Load/store timings", and
                 chapter 7 (FPU), "FPU instruction set" table
  cortex-m7      no public cycle table: single-cycle ALU/loads, plus the dual issue and result
                 latencies measured on silicon (issue.py, [J7]); still rough (ROUGH, docs/sim-model.md)
  cortex-m33     the Cortex-M33 TRM (ARM 100230) has no instruction cycle table either: the M4's
                 table where no measurement says otherwise, with the load/store, multiply, IT and
                 branch timings measured on an RP2350 (issue.py, [J33], [KA]); still rough

block_cost() is called once per block the accounting first meets (on either executor: the
machine's miss callback, machine.py); the native part (harness/sim/cbsim.c)
adds the result up at run time, adds the taken-branch extra of END_COND blocks when the next block
is not the fall-through, evaluates divides and M3 long multiplies from their operands (the
DYN_* kinds; formulas in cbsim.c), and charges flash wait states on data reads from flash.
docs/sim-model.md says what is modelled and what is not.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from cryptobench.targets.mcu.sim import issue

MODEL_NAME = "cbsim-trm"
MODEL_VERSION = "5"   # 2: unaligned 32-bit branch targets (P = 2); flash line and cache models
                      # 3: M3/M4 load/store pipelining only after a load without writeback (3.3.2)
                      # 4: M7 dual issue and latencies, M33 timings, from silicon measurements (issue.py);
                      #    fetch bandwidth: a prefetched line arrives (ws + 1) cycles after its
                      #    request; every profile with code in waiting flash is modelled line by line
                      # 5: M3/M4 STR with an immediate offset 1 cycle, the next load/store waits one
                      #    ([J34]); M33 addresses follow [J33]'s result latencies (no M4 AGU stall),
                      #    DSP/SIMD results 2 cycles

END_NONE, END_COND, END_ALWAYS = 0, 1, 2               # how a block ends
DYN_UDIV, DYN_SDIV, DYN_LMUL, DYN_LMLA = 1, 2, 3, 4    # data-dependent kinds, evaluated in cbsim.c

CORES = ("cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33")
ARMV6M = ("cortex-m0", "cortex-m0plus")     # the ARMv6-M cores (no IT, no 32-bit ALU forms)
ROUGH = {"cortex-m7", "cortex-m33"}   # no public cycle table: results labelled rough

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceParams:
    flash_ws: int = 0              # flash wait states at the device clock
    prefetch: bool = True          # flash prefetch buffer on (sequential fetches hide wait states)
    flash_width: int = 4           # bytes per flash fetch (STM32F0: 4; many M3/M4 parts: 8 or 16)
    fast_multiplier: bool = True   # M0/M0+: single-cycle MULS (False: the 32-cycle small multiplier)
    code_in_flash: bool = True     # False e.g. for code in TCM/SRAM: no fetch wait states
    fetch_modelled: bool = False   # cbsim.c charges flash fetches line by line (a flash cache model):
                                   # block costs leave them out


@dataclass
class TimingReport:
    """What the model charged its 1-cycle default for, over the blocks costed into it: one per run
    (Simulator.run makes its own), so that no run reports another's instructions."""
    unknown_mnemonics: set = field(default_factory=set)   # mnemonics the model has no cost for
    not_on_core: set = field(default_factory=set)         # "udiv (not on cortex-m0)": known, but the core
                                                          # lacks it (data disassembled as code, or an
                                                          # image for another core)

    def unknown(self, name: str) -> None:
        if name not in self.unknown_mnemonics:
            self.unknown_mnemonics.add(name)
            log.debug("timing model: no cost for '%s'; charged 1 cycle", name)

    def missing_on_core(self, name: str) -> None:
        if name not in self.not_on_core:
            self.not_on_core.add(name)
            log.debug("timing model: '%s' is not in this core's instruction set; charged 1 cycle", name)


@dataclass
class BlockCost:
    cycles: int        # one execution; an END_COND branch counted not taken, an END_ALWAYS one taken
    insns: int
    end: int           # END_NONE, END_COND or END_ALWAYS
    taken_extra: int   # extra cycles when the END_COND branch is taken
    entry_extra: int = 0   # extra cycles when a taken branch lands here (an unaligned 32-bit target)
    dynamic: list = field(default_factory=list)   # [(address, kind, reg_a, reg_b)]
    offsets: list = field(default_factory=list)   # per instruction: the cycles of those before it (the
                                                  # moment it starts; cbsim.c's fetch-bandwidth model)


# ---- instruction classes ----------------------------------------------------------------------
# Mnemonics as capstone prints them, without the .w/.n width, the IT condition and the S suffix.

_CLASSES = {
    "alu": """adc add addw adr and asr bic cmn cmp cpy eor lsl lsr mov movw movt mvn neg orn orr
              ror rrx rsb sbc sub subw teq tst sxtb sxth uxtb uxth rev rev16 revsh rbit clz
              bfc bfi sbfx ubfx ssat usat""",
    # ARMv7E-M DSP extension (M4, M7): saturating and SIMD arithmetic, packing, extend-and-add.
    "dsp": """sxtab sxtah sxtab16 sxtb16 uxtab uxtah uxtab16 uxtb16 ssat16 usat16 pkhbt pkhtb sel
              qadd qsub qdadd qdsub qadd8 qadd16 qsub8 qsub16 qasx qsax sadd8 sadd16 ssub8 ssub16
              sasx ssax shadd8 shadd16 shsub8 shsub16 shasx shsax uadd8 uadd16 usub8 usub16 uasx
              usax uhadd8 uhadd16 uhsub8 uhsub16 uhasx uhsax uqadd8 uqadd16 uqsub8 uqsub16 uqasx
              uqsax usad8 usada8""",
    # DSP multiplies, including the 64-bit-result ones (M4 TRM 3.3.1: all 1 cycle).
    "dsp_mul": """smulbb smulbt smultb smultt smulwb smulwt smlabb smlabt smlatb smlatt smlawb smlawt
                  smlad smladx smlsd smlsdx smuad smuadx smusd smusdx smmul smmulr smmla smmlar
                  smmls smmlsr smlalbb smlalbt smlaltb smlaltt smlald smlaldx smlsld smlsldx umaal""",
    "mul": "mul",
    "mla": "mla mls",
    "lmul": "umull smull",
    "lmla": "umlal smlal",
    "div": "udiv sdiv",
    "ldr": "ldr ldrb ldrh ldrsb ldrsh ldrt ldrbt ldrht ldrsbt ldrsht ldrex ldrexb ldrexh",
    "str": "str strb strh strt strbt strht strex strexb strexh",
    "ldrd": "ldrd",
    "strd": "strd",
    "ldm": "ldm ldmia ldmfd ldmdb ldmea pop",
    "stm": "stm stmia stmea stmdb stmfd push",
    "b": "b",
    "cbz": "cbz cbnz",
    "bl": "bl",
    "bx": "bx blx",
    "tb": "tbb tbh",
    "it": "it",
    "mrs": "mrs",
    "msr": "msr",
    "cps": "cps cpsid cpsie",
    "isb": "isb",
    "dmb": "dmb dsb",
    "hint": "nop sev yield pld pli clrex",
    "wfx": "wfi wfe",
    "bkpt": "bkpt",
    "svc": "svc",
    "udf": "udf",
    # FPv4-SP (M4F) / FPv5 (M7)
    "vfp": """vadd vsub vmul vnmul vabs vneg vcmp vcmpe vcvt vcvtr vcvta vcvtn vcvtp vcvtm vcvtb
              vcvtt vmrs vmsr vsel vseleq vselge vselgt vselvs vmaxnm vminnm vrinta vrintn vrintp
              vrintm vrintr vrintx vrintz""",
    "vmov": "vmov",
    "vmac": "vmla vmls vnmla vnmls vfma vfms vfnma vfnms",
    "vdiv": "vdiv vsqrt",
    "vldr": "vldr",
    "vstr": "vstr",
    "vldm": "vldm vldmia vldmdb vpop",
    "vstm": "vstm vstmia vstmdb vpush",
}
CLASS_OF = {m: cls for cls, names in _CLASSES.items() for m in names.split()}

DYN = "dynamic"   # a class whose whole cost cbsim.c adds at run time (block_cost counts 0)

# ---- the tables -------------------------------------------------------------------------------
# Cycles per class. "ldm"/"stm"/"vldm"/"vstm" give the fixed part: the cost is that plus N (N =
# registers moved, PC and LR included; words for the FP ones). "*_pc" are the forms that write
# the PC. "bcond"/"cbz" are the not-taken costs and "*_taken" the taken ones. A class absent
# from a core's table does not exist on that core: it costs 1 and is listed in the run's
# TimingReport.not_on_core.

P = 1   # M3/M4 pipeline refill: the TRMs give 1 to 3 (3.3.1); the plain model takes 1, and one more
        # for a target that is a 32-bit instruction at a halfword (not word) address (UNALIGNED_TARGET)
UNALIGNED_TARGET = {"cortex-m3", "cortex-m4", "cortex-m33"}   # its second halfword is another fetch

M0 = {                          # DDI 0432C 3.3, Table 3-1
    "alu": 1, "alu_pc": 3,      # MOV PC, Rm / ADD PC, PC, Rm: 3
    "mul": 1,                   # MULS: 1 or 32 (fast or small multiplier, DeviceParams)
    "ldr": 2, "str": 2,         # every single load and store, PC- and SP-relative included: 2
    "ldm": 1, "stm": 1,         # LDM/STM/PUSH/POP: 1+N
    "ldm_pc": 4,                # POP {.., PC}: 4+N
    "b": 3, "bcond": 1, "bcond_taken": 3, "bl": 4, "bx": 3,     # BL: 4; BX, BLX: 3
    "mrs": 4, "msr": 4, "cps": 1, "isb": 4, "dmb": 4,
    "hint": 1, "wfx": 2,        # NOP, SEV, YIELD: 1; WFI, WFE: 2
    "bkpt": 1, "svc": 1, "udf": 1,   # the table gives "-": charged 1 (exception entry not modelled)
}

M0PLUS = {                      # DDI 0484C 3.3, Table 3-1: the 2-stage pipeline refills in 1
    **M0,
    "alu_pc": 2,
    "ldm_pc": 3,                # POP {.., PC}: 3+N
    "b": 2, "bcond_taken": 2, "bl": 3, "bx": 2,
    "mrs": 3, "msr": 3, "isb": 3, "dmb": 3,
}                               # loads/stores 2 (the "1" of the single-cycle I/O port is not modelled)

M3 = {                          # DDI 0337I 3.3.1, Table 3-1; P as above
    "alu": 1, "alu_pc": 1 + P,  # MOV PC / ADD PC: 1+P
    "mul": 1, "mla": 2,         # MUL 1; MLA, MLS 2
    "lmul": DYN, "lmla": DYN,   # UMULL/SMULL 3-5, UMLAL/SMLAL 4-7: early termination, in cbsim.c
    "div": DYN,                 # UDIV/SDIV 2-12, in cbsim.c
    "ldr": 2, "str": 2,         # 2, or 1 when pipelined after a neighbour (3.3.2; see _Pipeline)
    "ldr_pc": 2 + P,            # LDR PC: 2+P
    "ldrd": 3, "strd": 3,       # LDRD/STRD: 1+N, N = 2
    "ldm": 1, "stm": 1, "ldm_pc": 1 + P,   # 1+N; with PC 1+N+P
    "b": 1 + P, "bcond": 1, "bcond_taken": 1 + P,
    "cbz": 1, "cbz_taken": 1 + P,
    "bl": 1 + P, "bx": 1 + P,   # BL, BX, BLX: 1+P
    "tb": 2 + P,                # TBB/TBH: 2+P
    "it": 1,                    # charged 1: folding into a neighbour is not modelled
    "mrs": 2, "msr": 2, "cps": 2,     # "1 or 2": the upper figure
    "isb": 1 + P, "dmb": 1,     # 1+B: B >= P for ISB, B >= 0 for DMB/DSB
    "hint": 1, "wfx": 1,        # WFI/WFE: 1+W, W (waiting) not modelled
    "bkpt": 1, "svc": 1, "udf": 1,
}

M4 = {                          # DDI 0439B 3.3.1, Table 3-1: as M3 but a single-cycle multiplier
    **M3,
    "mla": 1, "lmul": 1, "lmla": 1,        # MLA/MLS and the long multiplies: 1
    "dsp": 1, "dsp_mul": 1,                # DSP extension: 1
    # chapter 7, "FPU instruction set" table (FPv4-SP)
    "vfp": 1,                   # VADD VSUB VMUL VNMUL VABS VNEG VCMP VCVT VMRS VMSR: 1
    "vmov": 1,                  # VMOV: 1; the two-core-register forms 2 (see _insn_cost)
    "vmac": 3,                  # VMLA VMLS VNMLA VNMLS VFMA VFMS VFNMA VFNMS: 3
    "vdiv": 14,                 # VDIV, VSQRT: 14
    "vldr": 2, "vstr": 2,       # VLDR, VSTR: 2
    "vldm": 1, "vstm": 1,       # VLDM/VSTM/VPUSH/VPOP: 1+N (N words)
}

M7 = {                          # ROUGH: no public table. Issue cost of a dual-issue core with 1-cycle
    **M4,                       # TCM loads and a branch predictor; issue.m7_schedule pairs them:
    "ldr": 1, "str": 1, "ldrd": 1, "strd": 1, "ldr_pc": 2,
    "ldm": 0, "stm": 0,         # ceil(N/2) ([J7] "takes ceil(regnum/2) cycles to execute", _insn_cost)
    "ldm_pc": 2,                # 2 + ceil(N/2): the loads, then a taken change of flow (B: 2)
    "b": 2, "bcond_taken": 2, "cbz_taken": 2, "bl": 2, "bx": 2, "alu_pc": 2, "tb": 3,
    "vmac": 1, "vldr": 1, "vstr": 1, "vldm": 0, "vstm": 0,   # VLDM/VSTM "behave as regular ldm" [J7]
    "mrs": 1, "msr": 1, "cps": 1,
}

M33 = {                         # ROUGH: ARM publishes no cycle table for the Cortex-M33 (its TRM,
    **M4,                       # ARM 100230, has none). A 3-stage ARMv8-M Mainline core with the DSP
                                # extension and an FPv5-SP unit: the M4's table (DDI 0439B Table 3-1,
                                # chapter 7) and the M3's divide, except where [J33] (issue.py) measured:
    "ldr": 1, "str": 1,         # 1 issue cycle; the 2-cycle load-to-use latency is issue.m33_latency's
    "ldrd": 2, "strd": 2,       # "load/store double execute in 2 cycles (applies to FPU)"
    "ldm": 0, "stm": 0,         # "load/store multiple of x registers execute in exactly x cycles"
    "vldr": 1, "vstr": 1,       # single precision 1 ("vldr.32 has 1 cycle of load to use latency");
    "vldm": 0, "vstm": 0,       # VLDR.64/VSTR.64 2 (_insn_cost); VLDM/VSTM N words in N cycles
}                               # POP {..pc}: N + 2, as the M4's 1+N+P. MULS, IT, 16-bit B<cond>: issue.py.

TABLES = {"cortex-m0": M0, "cortex-m0plus": M0PLUS, "cortex-m3": M3, "cortex-m4": M4, "cortex-m7": M7,
          "cortex-m33": M33}
TAKEN = "_taken"                 # "bcond" + TAKEN: the taken cost of a conditional branch class
TAKEN_CLASSES = ("bcond", "cbz")
SMALL_MULTIPLIER = 32            # M0/M0+ MULS with the small (iterative) multiplier
PIPELINED_LS = {"cortex-m3", "cortex-m4"}    # the 3.3.2 load/store rules; the M33's loads and their
                                             # operands follow [J33]'s latencies instead (issue.py)
DATA_PROCESSING = {"alu", "dsp", "dsp_mul", "mul", "mla", "lmul", "lmla", "div"}
_NO_DEST = {"cmp", "cmn", "tst", "teq"}

_CONDS = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le"}
try:                             # capstone 5's ARM constants (the project pins capstone 5)
    from capstone.arm import ARM_CC_AL as _AL, ARM_CC_INVALID as _INVALID, ARM_OP_MEM as _OP_MEM, \
        ARM_OP_REG as _OP_REG
except ImportError:               # timing.py stays importable without capstone
    _AL, _INVALID, _OP_REG, _OP_MEM = 15, 0, 1, 3


_UNCONDITIONAL = frozenset((_AL, _INVALID))     # the condition codes of an unconditional instruction
_FLOW_CLASSES = frozenset(("alu_pc", "ldr_pc", "ldm_pc", "b", "bcond", "cbz", "bl", "bx", "tb"))  # write the PC
_BASES: dict = {}     # (mnemonic, cc) -> base: _strip's answer depends on those two alone, and a run
                      # meets a few hundred pairs in thousands of instructions


def _base(insn) -> str:
    """The mnemonic without width (.w), data type (.f32), IT condition, or S (flag-setting) suffix."""
    key = (insn.mnemonic, insn.cc)
    base = _BASES.get(key)
    if base is None:
        base = _BASES[key] = _strip(*key)
    return base


def _strip(mnemonic: str, cc: int) -> str:
    m = mnemonic.split(".", 1)[0].lower()
    if m[:2] == "it" and set(m[1:]) <= {"t", "e"}:
        return "it"
    if cc not in _UNCONDITIONAL and m[-2:] in _CONDS and m[:-2]:
        m = m[:-2]
    if m not in CLASS_OF and m.endswith("s") and m[:-1] in CLASS_OF:
        m = m[:-1]
    return m


def _regs(insn) -> list:
    return [insn.reg_name(op.reg) for op in insn.operands if op.type == _OP_REG]


def _mem_regs(insn) -> set:
    """Registers a load/store uses to form its address."""
    out = set()
    for op in insn.operands:
        if op.type == _OP_MEM:
            out.update(insn.reg_name(r) for r in (op.mem.base, op.mem.index) if r)
    return out


def _dests(regs: list, cls: str, base: str) -> set:
    """Registers a data-processing instruction writes (for the M3/M4 address-generation stall);
    regs: its register operands (_regs)."""
    if not regs or base in _NO_DEST:
        return set()
    if cls in ("lmul", "lmla") or base in ("umaal", "smlalbb", "smlalbt", "smlaltb", "smlaltt",
                                           "smlald", "smlaldx", "smlsld", "smlsldx"):
        return set(regs[:2])
    return {regs[0]}


_CORE_REGS = {"sb", "sl", "fp", "ip", "sp", "lr"}


def _is_core_reg(name: str) -> bool:
    return name in _CORE_REGS or (name[:1] == "r" and name[1:].isdigit())


def block_cost(core: str, dev: DeviceParams, insns: list, report: TimingReport | None = None) -> BlockCost:
    """The cost of one execution of `insns` (capstone CsInsn, Thumb, M-class, detail on, or the
    insns.Insn a Decoder makes of them: the same attributes).
    Instructions charged the 1-cycle default are listed in `report` (when given)."""
    if core not in TABLES:
        raise ValueError(f"unknown core '{core}'; valid: {', '.join(CORES)}")
    report = report if report is not None else TimingReport()
    t = TABLES[core]
    pipe = _Pipeline(core) if core in PIPELINED_LS else None
    fetch_ws = dev.flash_ws if dev.code_in_flash and not dev.fetch_modelled else 0
    nonseq = fetch_ws if dev.prefetch else 0
    cycles, end, taken_extra, dynamic, offsets = 0, END_NONE, 0, [], []
    issued = [] if core in ISSUE_RULES else None    # issue.Item per instruction (M7, M33)

    for i, insn in enumerate(insns):
        offsets.append(cycles)
        base = _base(insn)
        regs = _regs(insn)
        cls = CLASS_OF.get(base)
        conditional = insn.cc not in _UNCONDITIONAL or cls == "cbz"
        cls = _flow_class(cls, base, regs, conditional)
        flow = cls in _FLOW_CLASSES
        c = _insn_cost(core, dev, insn, base, cls, regs, report, dynamic)
        if pipe:
            if cls in t and t[cls] != DYN:
                c = pipe.adjust(c, insn, cls, base, regs)
            pipe.advance(insn, cls, base, regs)
        branch = None
        if issued is not None:
            c, branch = _issue_rules(core, issued, issue.Item(insn, cls, base, c, flow, regs), c)

        if flow and conditional:
            # B<cond>/CBZ/CBNZ: the table's not-taken and taken costs. A PC write made conditional
            # by IT (BXNE LR, POPNE {.., PC}): 1 when its condition fails, its cost when it passes.
            nt, taken = (c, t.get(cls + TAKEN, c)) if cls in TAKEN_CLASSES else (1, c)
            if branch is not None:
                nt, taken = branch          # M33: a 16-bit B<cond> paired with the one before
            cycles += nt
            if i == len(insns) - 1:
                end, taken_extra = END_COND, taken - nt + nonseq
        elif flow:
            cycles += c + nonseq                 # taken: the target is a non-sequential fetch
            if i == len(insns) - 1:
                end = END_ALWAYS
        else:
            cycles += c

    if core == "cortex-m7":
        cycles, offsets = _m7_dual_issue(issued, cycles, offsets)

    # no prefetch: each fetch of flash_width bytes waits flash_ws cycles
    if fetch_ws > 0 and not dev.prefetch and insns:
        nbytes = sum(insn.size for insn in insns)
        cycles += -(-nbytes // max(1, dev.flash_width)) * dev.flash_ws

    entry_extra = 1 if core in UNALIGNED_TARGET and insns and insns[0].size == 4 and insns[0].address % 4 else 0
    return BlockCost(cycles=cycles, insns=len(insns), end=end, taken_extra=taken_extra, dynamic=dynamic,
                     entry_extra=entry_extra, offsets=offsets)


ISSUE_RULES = {"cortex-m7", "cortex-m33"}     # cores with measured issue rules (issue.py)


def reads_regs_access(core: str) -> bool:
    """Whether block_cost asks this core's instructions their regs_access() (the registers the
    issue rules' dependences are made of): a decoder may leave them out otherwise (insns.py)."""
    return core in ISSUE_RULES


def _m7_dual_issue(issued: list, cycles: int, offsets: list[int]) -> tuple[int, list[int]]:
    """The block's cycles with its non-branch instructions scheduled two at a time (issue.py), and
    the fetch model's offsets (when the core reaches each instruction) at the schedule's pace: the
    scheduler gives the block's total, not each instruction's slot."""
    body = [it for it in issued if not it.flow]
    scheduled = cycles + issue.m7_schedule(body) - sum(it.cost for it in body)
    if cycles > 0 and scheduled != cycles:
        offsets = [o * scheduled // cycles for o in offsets]
    return scheduled, offsets


def _issue_rules(core: str, issued: list, item, c: int) -> tuple:
    """Appends item to issued and returns (its cost, (not taken, taken) or None for a branch).
    M33: its own costs, the stall of a 2-cycle result used by the next instruction, and the 16-bit
    B<cond> that dual-issues ([J33]). M7: costs stay; block_cost schedules the block afterwards."""
    prev = issued[-1] if issued else None
    issued.append(item)
    if core != "cortex-m33":
        return c, None
    if item.cls == "bcond" and item.flow:
        return c, issue.m33_branch(prev, item.insn)
    if not item.flow:
        c = issue.m33_cost(item, prev, c)
    if prev is not None and c:
        c += max((issue.m33_latency(prev, item, r) for r in item.reads & prev.writes), default=0)
    item.cost = c
    return c, None


def table_keys() -> set[str]:
    """Every key block_cost can look up in a core's table: the classes of CLASS_OF, the PC-writing and
    conditional forms _flow_class makes of them, and the taken costs of the conditional branches. A
    table key outside this set is never looked up (a misspelt key: its class would cost 1 cycle)."""
    keys = set()
    for base, cls in CLASS_OF.items():
        for regs in ([], ["r0"], ["pc"], ["r0", "pc"]):
            for conditional in (False, True):
                keys.add(_flow_class(cls, base, regs, conditional))
    return keys | {cls + TAKEN for cls in TAKEN_CLASSES}


def _flow_class(cls: str | None, base: str, regs: list, conditional: bool) -> str | None:
    """The class of the forms that write the PC (alu_pc, ldr_pc, ldm_pc) and of conditional branches."""
    if cls == "alu" and regs and regs[0] == "pc" and base not in _NO_DEST:
        return "alu_pc"
    if cls == "ldr" and regs and regs[0] == "pc":
        return "ldr_pc"
    if cls == "ldm" and "pc" in regs:
        return "ldm_pc"
    if cls == "b" and conditional:
        return "bcond"
    return cls


def _insn_cost(core: str, dev: DeviceParams, insn, base: str, cls: str | None, regs: list,
               report: TimingReport, dynamic: list) -> int:
    """One instruction's cost from the core's table, before load/store pipelining: 1 (and noted in
    report) for what the table lacks; 0 for a data-dependent one, appended to dynamic for cbsim.c."""
    t = TABLES[core]
    wide = core == "cortex-m7"              # rough: two words per cycle for LDM/STM
    if cls is None:
        report.unknown(base)
        return 1
    if cls not in t:
        report.missing_on_core(f"{base}{' pc' if cls.endswith('_pc') else ''} (not on {core})")
        return 1
    if t[cls] == DYN:                       # whole cost added by cbsim.c from the operands
        kind = {"udiv": DYN_UDIV, "sdiv": DYN_SDIV, "umull": DYN_LMUL, "smull": DYN_LMUL | 256,
                "umlal": DYN_LMLA, "smlal": DYN_LMLA | 256}[base]
        dynamic.append((insn.address, kind, regs[-2], regs[-1]))    # Rn, Rm
        return 0
    c = t[cls]
    if cls == "mul" and core in ARMV6M and not dev.fast_multiplier:
        c = SMALL_MULTIPLIER
    elif core == "cortex-m33" and cls in ("vldr", "vstr") and any(r[:1] == "d" for r in regs):
        c = 2           # [J33] "load/store double execute in 2 cycles (applies to FPU)"
    elif cls in ("ldm", "stm", "ldm_pc"):
        n = len(regs) - (0 if base in ("push", "pop") else 1)     # the base is not moved
        c += (n + 1) // 2 if wide else n
    elif cls in ("vldm", "vstm"):
        words = sum(2 if r[0] == "d" else 1 for r in regs if r[0] in "sd" and r[1:].isdigit())
        c += (words + 1) // 2 if wide else words
    elif cls == "vmov" and not wide and sum(map(_is_core_reg, regs)) == 2:
        c = 2           # VMOV to/from two core registers: 2
    return c


class _Pipeline:
    """M3/M4 load/store timings (TRM 3.3.2, and [J34] below): what the previous instruction leaves
    for the next.

    [J34] J. Oleksiewicz (jnk0le), repository `jnk0le/random`, `pipeline cycle test/doc/cortex_m3m4.md`
    (commit e9e1663), DWT.CYCCNT microbenchmarks on an STM32F103 (M3) and an STM32F407 (M4)."""

    _AFTER_STORE = {"ldr", "str", "ldrd", "strd", "ldm", "ldm_pc", "ldr_pc"}   # not STM ([J34])

    def __init__(self, core: str):
        self.m3 = core == "cortex-m3"
        self.ok = False          # may the next single load/store pipeline with the one before,
        self.dest: set = set()   # ... unless its address uses this (the register that load wrote)
        self.dp_dest: set = set()    # registers the last data-processing instruction wrote
        self.was_load = False    # the instruction before was a single load
        self.store_data_phase = False    # the one before was a store charged 1: its data phase
                                         # overlaps this instruction

    def adjust(self, c: int, insn, cls: str, base: str, regs: list) -> int:
        """The table cost c of a load or store, pipelined or stalled by the instruction before."""
        if cls in ("ldr", "str") and self.ok and not (_mem_regs(insn) & self.dest) \
                and not (self.m3 and cls == "ldr" and insn.writeback):
            c = 1       # pipelined with the single load/store before it; on the M3 "only first load
                        # in a chain can be pre or post indexed mode" ([J34])
        if cls == "str" and _immediate_offset(insn) and not (self.m3 and insn.writeback and self.was_load):
            c = 1       # "STR Rx,[Ry,#imm] is always one cycle ... the data store is performed at the
                        # same time as the next instruction is executing" (DDI 0337E 3.3.2; TI SWCU185
                        # reproduces it for the M4); [J34]: pre/post-indexed too on the M4, and on the
                        # M3 when the instruction before is not a load
        self._store1 = cls == "str" and c == 1    # its data phase overlaps the next instruction
        if cls in self._AFTER_STORE and self.store_data_phase:
            c += 1      # [J34] "stores cannot be pipelined with following load instructions (adds
                        # extra cycle to store)"; a store after a store waits the same (3.3.2: "nothing
                        # can be pipelined after the store"); an STM does not ([J34])
        if cls in ("ldr", "str", "ldr_pc", "ldrd", "strd", "vldr", "vstr") \
                and (_mem_regs(insn) & self.dp_dest):
            c += 1      # address needs the previous data-processing result: no forwarding
        elif cls in ("ldm", "stm", "ldm_pc", "vldm", "vstm") and regs and regs[0] in self.dp_dest \
                and base not in ("push", "pop", "vpush", "vpop"):
            c += 1
        return c

    def advance(self, insn, cls: str | None, base: str, regs: list) -> None:
        """Past one instruction: what the next one sees. Only a load lets the next load or store
        pipeline: 3.3.2 says "STR can only be pipelined when it follows an LDR, but nothing can be
        pipelined after the store". Nor does a load that writes its base back (pre- or post-indexed):
        "any load with a base update is not normally pipelined", as measured on the Cortex-M4 too
        (docs/sim-model.md)."""
        self.ok = cls == "ldr" and not insn.writeback
        self.dest = set(regs[:1]) if cls == "ldr" else set()
        self.dp_dest = _dests(regs, cls, base) if cls in DATA_PROCESSING else set()
        self.was_load = cls == "ldr"
        self.store_data_phase = cls == "str" and getattr(self, "_store1", False)
        self._store1 = False


def _immediate_offset(insn) -> bool:
    """A store addressed by a base register and an immediate (pre- or post-indexed included), not
    by a register offset."""
    return all(op.mem.index == 0 for op in insn.operands if op.type == 3)    # ARM_OP_MEM

"""The simulator's timing model (src/cryptobench/targets/mcu/sim/timing.py) on hand-written Thumb code.

Each snippet is assembled with arm-none-eabi-as, disassembled with capstone, cut into blocks after
every change of flow (as Unicorn translates them) and fed to timing.block_cost. Every expected
figure is derived by hand in the comments from the TRM tables:

  M0   DDI 0432C 3.3 Table 3-1        M0+  DDI 0484C 3.3 Table 3-1
  M3   DDI 0337I 3.3.1 Table 3-1 and 3.3.2 "Load/store timings"
  M4   DDI 0439B 3.3.1 Table 3-1, 3.3.2, and the FPU chapter's instruction table
with P (pipeline refill) = 1 on the M3/M4, as docs/sim-model.md explains. `replay` adds block
costs up exactly as harness/sim/cbsim.c does.
"""
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from cryptobench.targets.mcu.sim import timing as T
from cryptobench.targets.mcu.sim.timing import DeviceParams, END_ALWAYS, END_COND, END_NONE

AS = shutil.which("arm-none-eabi-as")
capstone = pytest.importorskip("capstone")
BASE = 0x08000000
IDEAL = DeviceParams()          # zero wait states


def assemble(src: str, core: str, tmp_path, fpu: bool = False) -> bytes:
    if AS is None:
        pytest.skip("arm-none-eabi-as is not installed (./setup.sh installs it)")
    from elftools.elf.elffile import ELFFile
    s, o = tmp_path / "t.s", tmp_path / "t.o"
    s.write_text(".syntax unified\n.thumb\n" + src + "\n")
    cmd = [AS, f"-mcpu={core}", "-mthumb", "-o", str(o), str(s)]
    if fpu:
        cmd[2:2] = ["-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(o, "rb") as f:
        return ELFFile(f).get_section_by_name(".text").data()


def disasm(code: bytes) -> list:
    cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    cs.detail = True
    return list(cs.disasm(code, BASE))


def changes_flow(insn) -> bool:
    written = [insn.reg_name(r) for r in insn.regs_access()[1]]
    return capstone.CS_GRP_JUMP in insn.groups or capstone.CS_GRP_CALL in insn.groups or "pc" in written


def split(insns: list) -> list:
    """Blocks as Unicorn forms them: each ends after a change of flow."""
    blocks, cur = [], []
    for insn in insns:
        cur.append(insn)
        if changes_flow(insn):
            blocks.append(cur)
            cur = []
    return blocks + ([cur] if cur else [])


def costs(core: str, src: str, tmp_path, dev: DeviceParams = IDEAL, fpu: bool = False):
    """[(start address, fall-through address, BlockCost)] for each block of `src`."""
    blocks = split(disasm(assemble(src, core, tmp_path, fpu)))
    return [(b[0].address, b[-1].address + b[-1].size, T.block_cost(core, dev, b)) for b in blocks]


def replay(blocks: list, path: list) -> int:
    """Total cycles for executing blocks[path[0]], blocks[path[1]], ... the way cbsim.c counts them."""
    total, prev = 0, None
    for k in path:
        start, fall, c = blocks[k]
        if prev is not None and prev[2].end == END_COND and start != prev[1]:
            total += prev[2].taken_extra
        if prev is not None and (prev[2].end == END_ALWAYS or (prev[2].end == END_COND and start != prev[1])):
            total += c.entry_extra          # a taken branch landed here
        total += c.cycles
        prev = blocks[k]
    return total


def one(core, src, tmp_path, **kw) -> T.BlockCost:
    got = costs(core, src, tmp_path, **kw)
    assert len(got) == 1, [c for _, _, c in got]
    return got[0][2]


# ---- loads and loops ---------------------------------------------------------------------------

M0_LOOP = """
loop:
    ldr  r2, [r0]
    ldr  r3, [r0, #4]
    adds r0, #8
    subs r1, #1
    bne  loop
"""


def test_m0_load_loop(tmp_path):
    # M0 Table 3-1: LDR Rd,[Rn,#imm] 2, 2; ADDS 1; SUBS 1; B<cc> 1 not taken => 7.
    # Taken B<cc> is 3: taken_extra = 3 - 1 = 2.
    c = one("cortex-m0", M0_LOOP, tmp_path)
    assert (c.cycles, c.insns, c.end, c.taken_extra, c.dynamic) == (7, 5, END_COND, 2, [])
    # 10 iterations: 10 x 7, plus 9 taken back-edges x 2 = 88.
    blocks = costs("cortex-m0", M0_LOOP, tmp_path)
    exit_block = (blocks[0][1], blocks[0][1] + 2, T.BlockCost(0, 0, END_NONE, 0, []))
    assert replay(blocks[:1] + [exit_block], [0] * 10 + [1]) == 88


def test_m0plus_load_loop(tmp_path):
    # M0+ Table 3-1: same 7 not taken; taken B<cc> 2 (2-stage pipeline) => taken_extra 1.
    c = one("cortex-m0plus", M0_LOOP, tmp_path)
    assert (c.cycles, c.end, c.taken_extra) == (7, END_COND, 1)


M3_LOOP = """
loop:
    ldr  r2, [r0]
    ldr  r3, [r0, #4]
    ldr  r4, [r0, #8]
    ldr.w r5, [r0, #12]
    adds r0, #16
    subs r1, #1
    bne  loop
"""


@pytest.mark.parametrize("core", ["cortex-m3", "cortex-m4"])
def test_m3_m4_pipelined_load_loop(core, tmp_path):
    # 3.3.2: neighbouring single loads pipeline: the first LDR 2, the next three 1 each (none uses
    # a register the previous LDR loaded to form its address) = 5; ADDS 1; SUBS 1; BNE 1 not
    # taken => 8. Taken B<cc> is 1+P = 2: taken_extra 1.
    c = one(core, M3_LOOP, tmp_path)
    assert (c.cycles, c.insns, c.end, c.taken_extra) == (8, 7, END_COND, 1)
    blocks = costs(core, M3_LOOP, tmp_path)
    exit_block = (blocks[0][1], blocks[0][1] + 2, T.BlockCost(0, 0, END_NONE, 0, []))
    assert replay(blocks + [exit_block], [0] * 10 + [1]) == 10 * 8 + 9 * 1


@pytest.mark.parametrize("src, expected", [
    # the TRM's own examples in 3.3.2 ("normally N cycles total")
    ("ldr r0, [r1]\n ldr r1, [r2]", 3),
    ("ldr r0, [r1, r2]\n str r0, [r3, #20]", 3),
    ("ldr r0, [r1, r2]\n str r1, [r3, r2]", 3),
    ("ldr r0, [r1, r5]\n ldr r1, [r2]\n ldr r2, [r3, #4]", 4),
    # the second load's address uses what the first loaded: no pipelining, 2 + 2
    ("ldr r0, [r1]\n ldr r2, [r0]", 4),
    # nothing pipelines after a register-offset STR: 2 + 2
    ("str r0, [r1, r2]\n ldr r3, [r4]", 4),
    # "STR Rx,[Ry,#imm] is always one cycle" (DDI 0337E 3.3.2): its data phase overlaps the next
    # instruction, so an ALU op after it 1 + 1, pre/post-indexed too ([J34], jnk0le's M3/M4
    # measurements); a load or store after it waits a cycle ([J34] "stores cannot be pipelined with
    # following load instructions (adds extra cycle to store)"; 3.3.2 "nothing can be pipelined
    # after the store"): a run of stores 1 + 2 + 2, a load after one 1 + (2 + 1)
    ("str r0, [r1, #4]\n adds r2, #1", 2),
    ("adds r2, #1\n str r0, [r1], #4", 2),
    ("str r0, [r1]\n str r2, [r1, #4]\n str r3, [r1, #8]", 5),
    ("str r0, [r1]\n ldr r2, [r3]", 4),
    # ... but not an STM after it ([J34] "stores can't be pipelined with following load multiple
    # (but can with stm)"): 1 + (1 + 2)
    ("str r0, [r1]\n stm r3!, {r4, r5}", 4),
    # a load that writes its base back lets nothing pipeline after it (3.3.2, and measured on the
    # M4): 2 + 2; an immediate-offset store after it 1 ([J34] "immediate offset ... store placed
    # after load, removes the stall"): 2 + 1;
    # it may itself pipeline after a plain load: 2 + 1 + 2
    ("ldr r0, [r1], #4\n ldr r2, [r3]", 4),
    ("ldrh r0, [r1, #2]!\n strh r2, [r3]", 3),
    # (on the M4; the M3 does not: test_m3_writeback_load_does_not_pipeline_after_a_load)
    # address generated by the previous data-processing op: +1 (no forwarding path): 1 + (2 + 1)
    ("adds r1, #4\n ldr r0, [r1]", 4),
    # LDRD (1+N = 3) neither pipelines nor lets the next one pipeline: 2 + 3 + 2
    ("ldr r0, [r1]\n ldrd r2, r3, [r4]\n ldr r5, [r6]", 7),
    # an ALU op between loads ends the run: 2 + 1 + 2
    ("ldr r0, [r1]\n adds r2, #1\n ldr r3, [r4]", 5),
])
def test_m3_load_store_timings(src, expected, tmp_path):
    assert [c.cycles for _, _, c in costs("cortex-m3", src, tmp_path)] == [expected]


def test_m3_writeback_load_does_not_pipeline_after_a_load(tmp_path):
    # [J34] "[cm3] only first load in a chain can be pre or post indexed mode"; the M4 pipelines it
    src = "ldr r0, [r1]\n ldr r2, [r3], #4\n ldr r4, [r5]"
    assert [c.cycles for _, _, c in costs("cortex-m3", src, tmp_path)] == [2 + 2 + 2]
    assert [c.cycles for _, _, c in costs("cortex-m4", src, tmp_path)] == [2 + 1 + 2]


def test_m3_literal_load_pipelines_like_any_load(tmp_path):
    # LDR r0, =const (a PC-relative literal load) 2; LDR r1, [r2] pipelined 1; B 1+P = 2 => 5
    src = "ldr r0, =0x12345678\n ldr r1, [r2]\n b 1f\n .ltorg\n1:"
    assert "[pc, #" in disasm(assemble(src, "cortex-m3", tmp_path))[0].op_str
    blocks = costs("cortex-m3", src, tmp_path)
    assert (blocks[0][2].cycles, blocks[0][2].insns, blocks[0][2].end) == (5, 3, END_ALWAYS)


def test_m0_has_no_load_pipelining(tmp_path):
    # M0 Table 3-1: every load and store 2, whatever its neighbours: 2 + 2 + 2
    assert one("cortex-m0", "ldr r0, [r1]\n ldr r2, [r3]\n str r0, [r3, #4]", tmp_path).cycles == 6


# ---- branches -------------------------------------------------------------------------------

BRANCH = """
    cmp  r0, #0
    beq  target
    adds r1, #1
    b    target
target:
    bx   lr
"""


@pytest.mark.parametrize("core, not_taken, extra, b, bx", [
    ("cortex-m0", 2, 2, 3, 3),       # CMP 1 + B<cc> 1; taken B<cc> 3 (extra 2); B 3; BX 3
    ("cortex-m0plus", 2, 1, 2, 2),   # CMP 1 + B<cc> 1; taken B<cc> 2 (extra 1); B 2; BX 2
    ("cortex-m3", 2, 1, 2, 2),       # CMP 1 + B<cc> 1; taken 1+P = 2 (extra 1); B, BX 1+P = 2
    ("cortex-m4", 2, 1, 2, 2),
])
def test_conditional_branch_taken_and_not(core, not_taken, extra, b, bx, tmp_path):
    blocks = costs(core, BRANCH, tmp_path)
    head, fall, tail = (c for _, _, c in blocks)
    assert (head.cycles, head.end, head.taken_extra) == (not_taken, END_COND, extra)
    assert (fall.cycles, fall.end) == (1 + b, END_ALWAYS)     # ADDS 1 + B
    assert (tail.cycles, tail.end) == (bx, END_ALWAYS)
    # not taken: head, fall-through, tail; taken: head, tail (cbsim.c adds taken_extra)
    assert replay(blocks, [0, 1, 2]) == not_taken + 1 + b + bx
    assert replay(blocks, [0, 2]) == not_taken + extra + bx


# A loop whose head is a 32-bit instruction, at a word address (.p2align 2) or a halfword one (a
# 16-bit NOP before it). The M3/M4 fetch words: an unaligned 32-bit target spans two fetches, so
# the refill after a taken branch costs P = 2, one more than the aligned case (TRM 3.3.1, "P ...
# ranges from 1 to 3 depending on the alignment and width of the target instruction").
UNALIGNED_LOOP = """
    .p2align 2
    {pad}
loop:
    add.w r0, r0, #1000
    subs r1, #1
    bne  loop
    bx   lr
"""


def loop_blocks(core: str, pad: str, tmp_path) -> list:
    """The blocks from `loop:` on (the padding before it is never executed)."""
    insns = disasm(assemble(UNALIGNED_LOOP.format(pad=pad), core, tmp_path))
    start = next(i for i, insn in enumerate(insns) if insn.mnemonic == "add.w")
    return [(b[0].address, b[-1].address + b[-1].size, T.block_cost(core, IDEAL, b)) for b in split(insns[start:])]


@pytest.mark.parametrize("core, extra", [("cortex-m3", 1), ("cortex-m4", 1), ("cortex-m33", 1),
                                         ("cortex-m7", 0)])     # ARMv6-M has no 32-bit ALU instructions
def test_unaligned_32bit_branch_target_costs_one_more(core, extra, tmp_path):
    aligned = loop_blocks(core, "", tmp_path)
    unaligned = loop_blocks(core, "nop", tmp_path)
    assert aligned[0][0] % 4 == 0 and unaligned[0][0] % 4 == 2
    assert aligned[0][2].entry_extra == 0 and unaligned[0][2].entry_extra == extra
    # ten passes: entered once by falling in, then nine times by the taken BNE
    path = [0] * 10 + [1]
    assert replay(unaligned, path) - replay(aligned, path) == 9 * extra


def test_m3_cbz(tmp_path):
    # CBZ/CBNZ: 1 not taken, 1+P = 2 taken (M3 Table 3-1)
    blocks = costs("cortex-m3", "cbz r0, 1f\n nop\n1: nop", tmp_path)
    c = blocks[0][2]
    assert (c.cycles, c.end, c.taken_extra) == (1, END_COND, 1)


def test_m3_it_conditional_return(tmp_path):
    # CMP 1 + IT 1 (not folded) + BXEQ LR failing 1 = 3; passing it is BX (1+P = 2): extra 1
    c = one("cortex-m3", "cmp r0, #0\n it eq\n bxeq lr", tmp_path)
    assert (c.cycles, c.end, c.taken_extra) == (3, END_COND, 1)


@pytest.mark.parametrize("core, bl, bx, blx", [
    ("cortex-m0", 4, 3, 3),       # BL 4 (two halfwords), BX 3, BLX 3
    ("cortex-m0plus", 3, 2, 2),   # BL 3, BX 2, BLX 2
    ("cortex-m3", 2, 2, 2),       # BL, BX, BLX: 1+P
    ("cortex-m4", 2, 2, 2),
])
def test_calls_and_returns(core, bl, bx, blx, tmp_path):
    blocks = costs(core, "f:\n bl f\n bx lr\n blx r3", tmp_path)
    assert [(c.cycles, c.end, c.insns) for _, _, c in blocks] == \
        [(bl, END_ALWAYS, 1), (bx, END_ALWAYS, 1), (blx, END_ALWAYS, 1)]
    assert blocks[0][1] - blocks[0][0] == 4       # BL is two Thumb halfwords


def test_m3_table_branch(tmp_path):
    # TBB/TBH: 2+P = 3 (M3 Table 3-1)
    blocks = costs("cortex-m3", "tbb [pc, r0]\n.byte 0, 0\n tbh [pc, r0, lsl #1]\n.hword 0", tmp_path)
    assert [(c.cycles, c.end) for _, _, c in blocks[:1]] == [(3, END_ALWAYS)]


def test_pc_writes(tmp_path):
    # M0: MOV PC,Rm 3; M3: 1+P = 2; M3: LDR PC 2+P = 3
    assert [(c.cycles, c.end) for _, _, c in costs("cortex-m0", "mov pc, lr", tmp_path)] == [(3, END_ALWAYS)]
    assert [(c.cycles, c.end) for _, _, c in costs("cortex-m3", "mov pc, lr", tmp_path)] == [(2, END_ALWAYS)]
    assert [(c.cycles, c.end) for _, _, c in costs("cortex-m3", "ldr pc, [sp], #4", tmp_path)] == [(3, END_ALWAYS)]


# ---- multiply and divide ------------------------------------------------------------------

def test_m0_muls_fast_and_small_multiplier(tmp_path):
    src = "muls r0, r1, r0\n adds r0, #1"
    # MULS 1 (fast) or 32 (small multiplier) + ADDS 1
    assert one("cortex-m0", src, tmp_path).cycles == 2
    assert one("cortex-m0", src, tmp_path, dev=DeviceParams(fast_multiplier=False)).cycles == 33
    assert one("cortex-m0plus", src, tmp_path, dev=DeviceParams(fast_multiplier=False)).cycles == 33
    # the option is an M0/M0+ one: the M3's MUL is 1 whatever it says
    assert one("cortex-m3", "mul r0, r1, r0\n adds r0, #1", tmp_path,
               dev=DeviceParams(fast_multiplier=False)).cycles == 2


def test_m3_divide_is_dynamic(tmp_path):
    # UDIV/SDIV 2-12 (early termination): the whole cost is added by cbsim.c from Rn, Rm;
    # the block counts 0 for them: ADDS 1 + UDIV 0 + SDIV 0 = 1
    c = one("cortex-m3", "adds r0, #1\n udiv r3, r1, r2\n sdiv r4, r5, r6", tmp_path)
    assert c.cycles == 1
    assert c.dynamic == [(BASE + 2, T.DYN_UDIV, "r1", "r2"), (BASE + 6, T.DYN_SDIV, "r5", "r6")]


def test_long_multiplies_m3_dynamic_m4_single_cycle(tmp_path):
    src = """
    umull r0, r1, r2, r3
    smull r0, r1, r2, r3
    umlal r0, r1, r2, r3
    smlal r4, r5, r8, sb
    mla   r0, r1, r2, r3
    """
    # M3: the four long multiplies are dynamic (3-5 / 4-7 in cbsim.c), MLA 2
    c = one("cortex-m3", src, tmp_path)
    assert c.cycles == 2
    assert c.dynamic == [(BASE, T.DYN_LMUL, "r2", "r3"), (BASE + 4, T.DYN_LMUL | 256, "r2", "r3"),
                         (BASE + 8, T.DYN_LMLA, "r2", "r3"), (BASE + 12, T.DYN_LMLA | 256, "r8", "sb")]
    # M4 Table 3-1: long multiplies and MLA 1 each => 5, nothing dynamic
    c = one("cortex-m4", src, tmp_path)
    assert (c.cycles, c.dynamic) == (5, [])
    # but the M4 divide stays dynamic
    assert one("cortex-m4", "udiv r0, r1, r2", tmp_path).dynamic == [(BASE, T.DYN_UDIV, "r1", "r2")]


# ---- multiple loads and stores ------------------------------------------------------------

@pytest.mark.parametrize("core, pop_pc", [
    ("cortex-m0", 4 + 5),         # POP {.., PC}: 4+N, N = 5
    ("cortex-m0plus", 3 + 5),     # 3+N
    ("cortex-m3", 1 + 5 + 1),     # 1+N+P
    ("cortex-m4", 1 + 5 + 1),
])
def test_ldm_stm_push_pop(core, pop_pc, tmp_path):
    src = """
    push {r4-r7, lr}
    ldm  r0!, {r1-r3}
    stm  r0!, {r1-r3}
    pop  {r4, r5}
    pop  {r4-r7, pc}
    """
    # PUSH 1+5 = 6; LDM 1+3 = 4; STM 1+3 = 4; POP {r4,r5} 1+2 = 3 => 17, then the POP {..pc}
    c = one(core, src, tmp_path)
    assert (c.cycles, c.insns, c.end) == (17 + pop_pc, 5, END_ALWAYS)


def test_m3_wide_ldm_and_ldrd(tmp_path):
    # LDM.W r0, {r1, r2, r8, sb}: 1+4 = 5; STRD 1+2 = 3; PUSH.W {r4-r11} 1+8 = 9
    assert one("cortex-m3", "ldm.w r0, {r1, r2, r8, r9}\n strd r0, r1, [r2]\n push.w {r4-r11}",
               tmp_path).cycles == 17


# ---- everything else -----------------------------------------------------------------------

def test_m0_misc(tmp_path):
    src = """
    mrs   r0, primask
    msr   primask, r0
    isb
    dsb
    dmb
    cpsid i
    cpsie i
    nop
    sxtb  r0, r1
    uxth  r0, r1
    rev   r0, r1
    adr   r0, lit
    ldr   r1, lit
    bkpt  #0
    svc   #0
    wfi
    b     1f
    .align 2
lit: .word 0
1:
    """
    # MRS 4, MSR 4, ISB 4, DSB 4, DMB 4 = 20; CPSID 1, CPSIE 1, NOP 1 = 3; SXTB, UXTH, REV 1 each
    # = 3; ADR 1; LDR literal 2; BKPT and SVC ("-" in the table) 1 each; WFI 2; B 3 => 36
    blocks = costs("cortex-m0", src, tmp_path)
    assert (blocks[0][2].cycles, blocks[0][2].end) == (36, END_ALWAYS)


def test_m0plus_misc(tmp_path):
    # M0+: MRS 3, MSR 3, ISB 3, DSB 3, DMB 3 = 15; WFI 2; B 2 => 19
    blocks = costs("cortex-m0plus", "mrs r0, primask\n msr primask, r0\n isb\n dsb\n dmb\n wfi\n b 1f\n1:", tmp_path)
    assert blocks[0][2].cycles == 19


def test_m3_misc(tmp_path):
    src = """
    movw r0, #0x1234
    movt r0, #0x5678
    clz  r1, r0
    rbit r2, r0
    bfi  r3, r0, #4, #8
    ubfx r4, r0, #4, #8
    ssat r5, #8, r0
    add.w r6, r0, r1, lsl #3
    it   ne
    addne r0, r1
    mrs  r0, primask
    msr  primask, r0
    isb
    dmb
    wfi
    nop
    """
    # 8 single-cycle data-processing ops = 8; IT 1 (not folded); ADDNE 1; MRS 2, MSR 2 ("1 or 2":
    # the upper figure); ISB 1+B with B >= P = 2; DMB 1+B with B >= 0 = 1; WFI 1+W = 1; NOP 1 => 19
    assert one("cortex-m3", src, tmp_path).cycles == 19


def test_m4_dsp_and_fpu(tmp_path):
    src = """
    smlabb r0, r1, r2, r3
    uadd8  r0, r1, r2
    sel    r0, r1, r2
    vadd.f32 s0, s1, s2
    vmul.f32 s0, s1, s2
    vdiv.f32 s0, s1, s2
    vldr   s0, [r0]
    vstr   s0, [r0, #4]
    vmla.f32 s0, s1, s2
    vmov   s0, r1
    vmov   r0, r1, d0
    vpush  {s16-s19}
    vpop   {d8-d9}
    """
    # DSP ops 1 each = 3 (M4 Table 3-1); FPU chapter: VADD 1, VMUL 1, VDIV 14, VLDR 2, VSTR 2,
    # VMLA 3, VMOV core->S 1, VMOV two core regs 2, VPUSH 1+N = 5 (N = 4 words),
    # VPOP {d8-d9} 1+N = 5 (N = 4 words) => 3 + 36 = 39
    assert one("cortex-m4", src, tmp_path, fpu=True).cycles == 39


# ---- flash wait states ---------------------------------------------------------------------

def test_flash_wait_states_with_prefetch(tmp_path):
    dev = DeviceParams(flash_ws=1, prefetch=True, flash_width=4)
    # sequential fetches hidden; a taken change of flow pays the non-sequential fetch: 1
    c = one("cortex-m0", M0_LOOP, tmp_path, dev=dev)
    assert (c.cycles, c.taken_extra) == (7, 2 + 1)
    blocks = costs("cortex-m0", "f:\n bl f\n b f\n pop {r4, pc}", tmp_path, dev=dev)
    assert [c.cycles for _, _, c in blocks] == [4 + 1, 3 + 1, 4 + 2 + 1]
    # M3 with 2 wait states: taken B<cc> extra = P + 2
    c = one("cortex-m3", M3_LOOP, tmp_path, dev=DeviceParams(flash_ws=2))
    assert (c.cycles, c.taken_extra) == (8, 1 + 2)


def test_flash_wait_states_without_prefetch(tmp_path):
    # M0_LOOP is five 16-bit instructions = 10 bytes
    dev = DeviceParams(flash_ws=1, prefetch=False, flash_width=4)
    c = one("cortex-m0", M0_LOOP, tmp_path, dev=dev)
    assert (c.cycles, c.taken_extra) == (7 + 3 * 1, 2)      # ceil(10/4) = 3 fetches x 1
    dev = DeviceParams(flash_ws=2, prefetch=False, flash_width=8)
    c = one("cortex-m0", M0_LOOP, tmp_path, dev=dev)
    assert (c.cycles, c.taken_extra) == (7 + 2 * 2, 2)      # ceil(10/8) = 2 fetches x 2
    # M3_LOOP: six 16-bit + one 32-bit instruction = 16 bytes, 16-byte lines: 1 fetch x 3
    c = one("cortex-m3", M3_LOOP, tmp_path, dev=DeviceParams(flash_ws=3, prefetch=False, flash_width=16))
    assert (c.cycles, c.taken_extra) == (8 + 3, 1)


def test_code_not_in_flash_has_no_wait_states(tmp_path):
    dev = DeviceParams(flash_ws=5, prefetch=False, code_in_flash=False)
    c = one("cortex-m0", M0_LOOP, tmp_path, dev=dev)
    assert (c.cycles, c.taken_extra) == (7, 2)


# ---- the M7 and the model's bookkeeping ------------------------------------------------------

def test_m7_is_rough(tmp_path):
    assert "cortex-m7" in T.ROUGH and set(T.ROUGH) <= set(T.CORES)
    # rough M7: loads 1 (TCM), ALU 1, not-taken branch 1, taken 2 => 4 loads + 2 + 1 = 7, extra 1,
    # less one: ADDS dual-issues with the LDR.W before it (tests/test_sim_m7_m33.py)
    c = one("cortex-m7", M3_LOOP, tmp_path)
    assert (c.cycles, c.end, c.taken_extra) == (6, END_COND, 1)
    assert one("cortex-m7", "udiv r0, r1, r2", tmp_path).dynamic == [(BASE, T.DYN_UDIV, "r1", "r2")]


def test_unknown_mnemonic_costs_one_and_is_reported():
    fake = SimpleNamespace(mnemonic="frobnicate", op_str="", cc=15, operands=[], size=2,
                           address=BASE, update_flags=False, reg_name=lambda r: "r0")
    report = T.TimingReport()
    c = T.block_cost("cortex-m3", IDEAL, [fake], report)
    assert (c.cycles, c.insns, c.end) == (1, 1, END_NONE)
    assert report.unknown_mnemonics == {"frobnicate"} and not report.not_on_core
    assert T.block_cost("cortex-m3", IDEAL, [fake]) == c        # the same cost without a report


def test_instruction_missing_on_the_core_is_listed_apart(tmp_path):
    # UDIV does not exist on the M0 (ARMv6-M): only data decoded as code can bring it here (the
    # CPU would fault on it). 1 cycle, listed in not_on_core, not among the unknown mnemonics.
    code = assemble("udiv r0, r1, r2", "cortex-m3", tmp_path)
    report = T.TimingReport()
    c = T.block_cost("cortex-m0", IDEAL, disasm(code), report)
    assert (c.cycles, c.dynamic) == (1, [])
    assert report.not_on_core == {"udiv (not on cortex-m0)"}
    assert not any("not on" in m for m in report.unknown_mnemonics)


def test_each_run_reports_only_its_own_instructions(tmp_path):
    # a report is per run: what one run was charged the default for never shows in another's
    udiv = disasm(assemble("udiv r0, r1, r2", "cortex-m3", tmp_path))
    first, second = T.TimingReport(), T.TimingReport()
    T.block_cost("cortex-m0", IDEAL, udiv, first)
    T.block_cost("cortex-m3", IDEAL, udiv, second)
    assert first.not_on_core == {"udiv (not on cortex-m0)"} and second == T.TimingReport()
    assert not hasattr(T, "UNKNOWN_MNEMONICS") and not hasattr(T, "NOT_ON_CORE")


def test_interface():
    assert (T.MODEL_NAME, T.MODEL_VERSION) == ("cbsim-trm", "5")
    assert (T.END_NONE, T.END_COND, T.END_ALWAYS) == (0, 1, 2)
    assert (T.DYN_UDIV, T.DYN_SDIV, T.DYN_LMUL, T.DYN_LMLA) == (1, 2, 3, 4)
    assert T.CORES == ("cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33")
    assert DeviceParams() == DeviceParams(flash_ws=0, prefetch=True, flash_width=4, fast_multiplier=True,
                                          code_in_flash=True, fetch_modelled=False)
    with pytest.raises(ValueError):
        T.block_cost("cortex-a53", IDEAL, [])
    assert T.block_cost("cortex-m0", IDEAL, []) == T.BlockCost(0, 0, END_NONE, 0, 0, [])
    # the M4 table prices every class the model knows (it has the widest instruction set)
    assert set(T.CLASS_OF.values()) <= set(T.M4)

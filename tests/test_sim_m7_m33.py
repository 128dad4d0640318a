"""The Cortex-M7's dual issue and the Cortex-M33's own timings (timing.py, issue.py) on hand-written
Thumb code. Each expected figure is derived in the comments from the measured rule it checks
([J7]: jnk0le's Cortex-M7 notes, STM32H743; [J33]: his Cortex-M33 notes, RP2350; [KA]: Arm
KA001260; docs/sim-model.md, "Cortex-M7 dual issue" and "Cortex-M33"), and the executors are
checked to count a run of these sequences identically."""
import json
import shutil
import subprocess

import pytest

from cryptobench.targets.mcu.sim import timing as T
from conftest import cli

AS = shutil.which("arm-none-eabi-as")
capstone = pytest.importorskip("capstone")


def cycles(core: str, src: str, tmp_path) -> int:
    """block_cost's cycles for `src`, one block (no branch)."""
    if AS is None:
        pytest.skip("arm-none-eabi-as is not installed (./setup.sh installs it)")
    from elftools.elf.elffile import ELFFile
    s, o = tmp_path / "t.s", tmp_path / "t.o"
    s.write_text(".syntax unified\n.thumb\n" + src + "\n")
    subprocess.run([AS, f"-mcpu={core}", "-mthumb", "-o", str(o), str(s)], check=True, capture_output=True)
    with open(o, "rb") as f:
        code = ELFFile(f).get_section_by_name(".text").data()
    cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    cs.detail = True
    return T.block_cost(core, T.DeviceParams(), list(cs.disasm(code, 0x100))).cycles


# ---- Cortex-M7: pairs that dual-issue (the pair costs 1) ---------------------------------------

@pytest.mark.parametrize("src, m7, single", [
    # four independent ALU operations: two pairs
    ("add.w r0, r1, r2\n eor.w r3, r4, r5\n add.w r6, r7, r8\n eor.w r9, r10, r11", 2, 4),
    ("ldr r0, [r1]\n add.w r2, r3, r4", 1, 2),          # load + ALU
    ("ldr r0, [r1]\n str r2, [r3]", 1, 2),              # stores "can be dual issued with load"
    ("ldr r0, [r1]\n str r0, [r3]", 1, 2),              # "can store any result in same cycle"
    ("add.w r0, r1, r2\n eor.w r3, r0, r4", 1, 2),      # add forwarded from the early ALU in 0 cycles
    ("movw r0, #1\n movt r0, #2", 1, 2),                # "movw + movt pair ... with mutual dependency"
    ("mul r0, r1, r2\n add.w r3, r4, r5", 1, 2),        # multiply + independent ALU
    ("uxtb r0, r1\n add.w r2, r3, r4", 1, 2),           # bitfield in the older slot
    ("add.w r0, r1, r2, ror #8\n eor.w r3, r4, #1", 1, 2),   # shifted reg + simple constant
])
def test_m7_pairs_that_dual_issue(src, m7, single, tmp_path):
    assert cycles("cortex-m7", src, tmp_path) == m7
    assert cycles("cortex-m4", src, tmp_path) >= single      # the M4 issues one at a time


# ---- Cortex-M7: pairs that must not --------------------------------------------------------------

@pytest.mark.parametrize("src, expected", [
    ("ldr r0, [r1]\n ldr r2, [r3]", 2),                 # two loads: only to different banks, unknown statically
    ("str r0, [r1]\n str r2, [r3]", 2),                 # "cannot dual issue two stores"
    ("mul r0, r1, r2\n mul r3, r4, r5", 2),             # multiplies "can't dual issue wrt each other"
    ("mul r0, r1, r2\n str r3, [r4]", 2),               # multiplies "can't dual issue with stores"
    ("uxtb r0, r1\n uxtb r2, r3", 2),                   # bitfield/DSP "cannot dual issue wrt each other"
    ("add.w r2, r3, r4\n uxtb r0, r1", 2),              # bitfield "must be placed in older op"
    ("add.w r0, r1, r2, ror #8\n eor.w r3, r4, r5, lsl #3", 2),   # operand2 matrix: shifted + shifted
    ("eor.w r0, r1, r2\n eor.w r3, r0, r4", 2),         # dependent: eor's result only next cycle
    ("adds r0, r1\n adcs r2, r3", 2),                   # flags are not forwarded in 0 cycles
    ("ldm r0, {r1-r4}\n add.w r5, r6, r7", 2 + 1),      # LDM: ceil(4/2), pairs with nothing
])
def test_m7_pairs_that_do_not_dual_issue(src, expected, tmp_path):
    assert cycles("cortex-m7", src, tmp_path) == expected


@pytest.mark.parametrize("src, expected", [
    ("mul r0, r1, r2\n add.w r3, r0, r4", 3),          # multiply result: 1 extra cycle of latency
    ("mla r0, r1, r2, r3\n mla r0, r4, r5, r0", 2),    # accumulator chained each cycle
    ("ldrb r0, [r1]\n add.w r2, r0, r3", 3),           # byte load: 1 extra cycle
    ("ldr r0, [r1]\n add.w r2, r0, r3", 2),            # word load: the late ALU takes it next cycle
    ("ldr r0, [r1]\n mul r2, r0, r3", 3),              # multiplies can't take an ldr result next cycle
    ("uxtb r0, r1\n ldr r2, [r3, r0, lsl #2]", 3),     # bitfield result as an index: 1 extra cycle
])
def test_m7_result_latencies(src, expected, tmp_path):
    assert cycles("cortex-m7", src, tmp_path) == expected


def test_m7_hand_scheduled_table_lookups_run_at_two_per_cycle(tmp_path):
    """An AES-style round body, loads interleaved with independent eors: 8 instructions, 4 cycles."""
    src = "\n".join(["ldr r4, [r0]", "eor.w r8, r8, r9", "ldr r5, [r1]", "eor.w r10, r10, r11",
                     "ldr r6, [r2]", "eor.w r8, r8, r4", "ldr r7, [r3]", "eor.w r10, r10, r5"])
    assert cycles("cortex-m7", src, tmp_path) == 4


# ---- Cortex-M33: where it differs from the M4 ---------------------------------------------------

@pytest.mark.parametrize("src, m33, m4", [
    ("ldr r0, [r1]\n add r2, r3", 2, 3),                # LDR issues in 1; M4: 2
    ("ldr r0, [r1]\n adds r2, r0, #1", 3, 3),           # load-to-use latency 2: one stall
    ("ldm r0, {r1-r4}", 4, 5),                          # "x registers in exactly x cycles"; M4 1+N
    ("ldrd r0, r1, [r2]", 2, 3),                        # "load/store double execute in 2 cycles"
    ("muls r0, r1, r0", 2, 1),                          # MULS.N: 2 [KA]
    ("mla r0, r1, r2, r3\n add r4, r0", 3, 2),         # MAC result latency 2
    ("mla r0, r1, r2, r3\n mla r0, r4, r5, r0", 2, 2),  # accumulate chains each cycle
    ("cmp r0, #0\n it eq\n moveq r1, #1", 2, 3),        # IT dual-issues with the 16-bit before it
    # an address from the instruction before: [J33] measures no address-generation interlock, so a
    # single-stage result feeds it next cycle (1 + 1); the M4 stalls (3.3.2 "no forwarding"): 1 + 3
    ("uxtb r4, r0\n ldr.w r4, [r5, r4, lsl #2]", 2, 4),
    # ... a 2-cycle result does stall it: shifted operand2 (1 + 1 + 1)
    ("add.w r4, r5, r0, lsl #2\n ldr r1, [r4]", 3, 4),
    # DSP/SIMD results "have 2 cycle result latency" [J33]
    ("uadd8 r0, r1, r2\n add r3, r0", 3, 2),
    ("uadd8 r0, r1, r2\n add r3, r4", 2, 2),
    # STR with an immediate offset: 1 on both ([J33] single store; M4 3.3.2 "always one cycle")
    ("str r0, [r1, #4]\n adds r2, #1", 2, 2),
])
def test_m33_costs_that_differ_from_the_m4(src, m33, m4, tmp_path):
    assert (cycles("cortex-m33", src, tmp_path), cycles("cortex-m4", src, tmp_path)) == (m33, m4)


@pytest.mark.subprocess
def test_m33_16bit_conditional_branch_pairs_with_the_instruction_before(tmp_path):
    """[J33]: a 16-bit B<cond> after a 16-bit instruction costs 0 not taken; taken 2 after a
    flag-setting one, 1 after one that sets none."""
    if AS is None:
        pytest.skip("arm-none-eabi-as is not installed")
    from tests.test_sim_timing import costs
    (_, _, flags), = costs("cortex-m33", "loop:\n subs r1, #1\n bne.n loop", tmp_path)
    assert (flags.cycles, flags.cycles + flags.taken_extra) == (1, 3)      # subs 1; bne 0 / 2
    (_, _, plain), = costs("cortex-m33", "loop:\n subs r1, #1\n add r0, r1\n bne.n loop", tmp_path)
    assert (plain.cycles, plain.cycles + plain.taken_extra) == (2, 3)      # 1 + 1; bne 0 / 1


# ---- both executors count these sequences alike ---------------------------------------------------

IMAGE = """
    .syntax unified
    .thumb
    .section .isr_vector, "a"
    .word 0x20008000
    .word _start
    .text
    .thumb_func
    .global _start
_start:
    ldr r0, =0x20000000
    mov r1, r0
    mov r2, r0
    mov r3, r0
    movs r7, #200
loop:
    ldr r4, [r0]
    eor.w r8, r8, r9
    ldr r5, [r1, #4]
    eor.w r10, r10, r11
    mul r6, r4, r5
    add.w r6, r6, r4
    ldrb r12, [r2, #1]
    add.w r12, r12, r3
    uxtb r4, r12
    ldr r5, [r3, r4, lsl #2]
    mla r6, r4, r5, r6
    str r6, [r0, #8]
    ldm r0, {r4, r5}
    cmp r7, #100
    it eq
    moveq r4, #1
    subs r7, #1
    add r3, r4
    bne.n loop
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
    .ltorg
"""


@pytest.mark.parametrize("core, device", [("cortex-m7", "ideal-m7"), ("cortex-m33", "ideal-m33")])
def test_native_executor_and_unicorn_count_the_new_rules_alike(core, device, tmp_path):
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    src, elf = tmp_path / "img.S", tmp_path / "img.elf"
    src.write_text(IMAGE)
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={core}", "-mthumb", "-nostdlib", "-nostartfiles",
                    "-Wl,--section-start=.isr_vector=0", "-Wl,-Ttext=0x100", "-Wl,-e,_start", str(src),
                    "-o", str(elf)], check=True)
    docs = {}
    for ex in ("native", "unicorn"):
        proc = cli("sim", "run", str(elf), "--device", device, "--json", "-",
                   env={"CRYPTOBENCH_SIM_EXECUTOR": ex})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        docs[ex] = json.loads(proc.stdout)
    assert docs["native"]["stats"]["executor"] == "native" and docs["unicorn"]["stats"]["executor"] == "unicorn"
    assert docs["native"]["total"] == docs["unicorn"]["total"]
    assert docs["native"]["total"]["instructions"] > 200 * 19

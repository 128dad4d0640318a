#!/usr/bin/env python3
"""A minimal reproduction of the Unicorn bug that keeps `cryptobench sim run` from charging flash
data wait states safely on ARMv7-M (docs/sim-model.md, "The executor").

Eleven Thumb instructions: an IT block whose load reads from a range with a UC_HOOK_MEM_READ hook
on it (as the simulator hooks flash to charge its wait states), then a MOVS that sets Z and a BEQ
that must be taken. Without the hook Unicorn takes it and r0 ends 0x60. With a hook that does
nothing, the IT state stays set in xPSR after the block (its IT bits read 0x1800), the MOVS and
the branch after it run as if still inside the IT block, and r0 is not 0x60.

    0x00  f44f 5180  mov.w  r1, #0x1000        the hooked range
    0x04  2201       movs   r2, #1
    0x06  2a00       cmp    r2, #0             NE holds
    0x08  bf1c       itt    ne
    0x0a  f811 3b01  ldrbne.w r3, [r1], #1     a hooked load inside the IT block
    0x0e  f804 3b01  strbne.w r3, [r4], #1
    0x12  2500       movs   r5, #0             after the block: sets Z
    0x14  d001       beq.n  0x1a               must be taken
    0x16  20ba       movs   r0, #0xba
    0x18  e000       b.n    0x1c
    0x1a  2060       movs   r0, #0x60
    0x1c  e7fe       b.n    0x1c

Usage: .venv/bin/python scripts/unicorn_it_state_repro.py   (exit 1 when the bug shows)
Seen with Unicorn 2.1.4 on its Cortex-M3, M4 and M7 (and M0, which accepts IT where silicon
would not). cryptobench's own executor (harness/sim/cbcpu.c) runs this correctly."""
import sys

import unicorn
from unicorn import arm_const as A

CODE = bytes.fromhex("4ff480510122002a1cbf11f8013b04f8013b002501d0ba2000e06020fee7")
DONE, DATA, RAM = 0x1C, 0x1000, 0x20000000


def run(cpu: int, hooked: bool) -> tuple[int, int]:
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(cpu)
    uc.mem_map(0, 0x2000)
    uc.mem_map(RAM, 0x1000)
    uc.mem_write(0, CODE)
    uc.mem_write(DATA, b"\x42")
    uc.reg_write(A.UC_ARM_REG_R4, RAM)
    uc.reg_write(A.UC_ARM_REG_SP, RAM + 0x800)
    if hooked:
        uc.hook_add(unicorn.UC_HOOK_MEM_READ, lambda *args: None, begin=DATA, end=DATA + 0xFFF)
    uc.emu_start(1, DONE, count=100)      # Thumb: start address | 1
    return uc.reg_read(A.UC_ARM_REG_R0), uc.reg_read(A.UC_ARM_REG_XPSR)


def main() -> int:
    print(f"unicorn {unicorn.__version__}")
    wrong = 0
    for name in ("UC_CPU_ARM_CORTEX_M3", "UC_CPU_ARM_CORTEX_M4", "UC_CPU_ARM_CORTEX_M7"):
        for hooked in (False, True):
            r0, xpsr = run(getattr(A, name), hooked)
            ok = r0 == 0x60
            wrong += not ok
            print(f"{name:22s} read hook {'on ' if hooked else 'off'}: r0=0x{r0:02x} "
                  f"({'right' if ok else 'WRONG, expected 0x60'}), xPSR=0x{xpsr:08x}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

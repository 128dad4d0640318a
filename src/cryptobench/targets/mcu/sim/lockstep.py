"""Lock-step: the native executor against Unicorn, block by block, to find decoder bugs fast.

Both executors load the same image (no cycle accounting: the counters read 0 on both). The
native executor runs one block; Unicorn then runs one of its translated blocks from the same pc
(a block hook stops it at the next one); the two blocks' sizes, r0-r15, APSR (N Z C V Q GE) and,
on cores with an FPU, s0-s31 and FPSCR's flags are compared. The first difference is reported with
the block's address, its instructions and what differs.

    python -m cryptobench.targets.mcu.sim.lockstep IMAGE.elf [--device SPEC] [--core CORE] [--max-blocks N]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .native import REG_PC, REG_XPSR
from .simulator import FirmwareRun, Simulator

from unicorn import UC_HOOK_BLOCK
from ..boards import BOARDS
from .devices import get_device

FPU_CORES = ("cortex-m4", "cortex-m7", "cortex-m33")
REG_S0, REG_FPSCR = 32, 21


@dataclass
class Divergence:
    block_pc: int
    instructions: list                 # "0x........: mnemonic operands" of the block
    registers: dict = field(default_factory=dict)   # name -> (native, unicorn)
    blocks: int = 0                    # blocks that agreed before this one

    def __str__(self) -> str:
        regs = ", ".join(f"{k}: native 0x{a:08x} unicorn 0x{b:08x}" for k, (a, b) in self.registers.items())
        return (f"lock-step divergence after {self.blocks} agreeing blocks, in the block at 0x{self.block_pc:08x}: "
                f"{regs}\n  " + "\n  ".join(self.instructions))


def _unicorn_state(uc, A, fpu: bool) -> dict:
    s = {f"r{i}": uc.reg_read(getattr(A, f"UC_ARM_REG_R{i}")) for i in range(13)}
    s.update(sp=uc.reg_read(A.UC_ARM_REG_SP), lr=uc.reg_read(A.UC_ARM_REG_LR), pc=uc.reg_read(A.UC_ARM_REG_PC) & ~1,
             apsr=uc.reg_read(A.UC_ARM_REG_XPSR) & 0xF80F0000)
    if fpu:
        s.update({f"s{i}": uc.reg_read(getattr(A, f"UC_ARM_REG_S{i}")) for i in range(32)})
        s["fpscr_nzcv"] = uc.reg_read(A.UC_ARM_REG_FPSCR) & 0xF0000000
    return s


def _native_state(cpu, fpu: bool) -> dict:
    names = [f"r{i}" for i in range(13)] + ["sp", "lr"]
    s = {n: cpu.reg(i) for i, n in enumerate(names)}
    s.update(pc=cpu.reg(REG_PC), apsr=cpu.reg(REG_XPSR) & 0xF80F0000)
    if fpu:
        s.update({f"s{i}": cpu.reg(REG_S0 + i) for i in range(32)})
        s["fpscr_nzcv"] = cpu.reg(REG_FPSCR) & 0xF0000000
    return s


def lockstep(sim: Simulator, elf: Path, max_blocks: int = 10**9) -> tuple[Divergence | None, int]:
    """(the first divergence or None, the blocks compared) of one image on both executors."""
    fpu = sim.device.core in FPU_CORES
    nat = FirmwareRun(sim, elf, lambda line: None, executor="native")
    uni = FirmwareRun(sim, elf, lambda line: None, executor="unicorn")
    cpu, uc, A = nat.ex.cpu, uni.ex.uc, uni.ex.A
    vectors = nat.ex.read(nat.elf.vectors, 8)
    for run in (nat, uni):
        run.machine.mem.set_reg("msp", int.from_bytes(vectors[:4], "little"))
    cpu.set_reg(REG_PC, int.from_bytes(vectors[4:], "little"))
    entered = []

    def on_block(uc_, address, size, user):
        entered.append(size)
        if len(entered) == 2:            # the next block: stop before it runs
            uc_.emu_stop()

    uc.hook_add(UC_HOOK_BLOCK, on_block)
    blocks = 0
    try:
        for blocks in range(max_blocks):
            pc = cpu.reg(REG_PC)
            status = cpu.run(1, 60.0)
            size = cpu.lib.cbcpu_last_size(cpu.h)
            stopped = status != 1 or nat.report.complete
            entered.clear()
            try:
                uc.emu_start(pc | 1, 0xFFFFFFFF)
            except Exception as exc:                # noqa: BLE001 - reported as a divergence
                return Divergence(pc, _listing(nat, pc), {f"unicorn faulted: {exc}": (0, 0)}, blocks), blocks
            a, b = _native_state(cpu, fpu), _unicorn_state(uc, A, fpu)
            diff = {k: (a[k], b[k]) for k in a if a[k] != b[k] and not (stopped and k == "pc")}
            if entered and entered[0] != size:
                diff["block bytes"] = (size, entered[0])
            if diff or (cpu.problem() and not uni.report.problem):
                if cpu.problem():
                    diff[f"native problem: {cpu.problem()}"] = (0, 0)
                return Divergence(pc, _listing(nat, pc), diff, blocks), blocks + 1
            if stopped:
                return None, blocks + 1
        return None, max_blocks
    finally:
        cpu.close()


def _listing(nat: FirmwareRun, pc: int) -> list:
    try:
        code = nat.ex.read(pc, 64)
    except ValueError:
        return [f"0x{pc:08x}: (not in flash or RAM)"]
    out = []
    for insn in nat.machine.cs.disasm(code, pc):
        out.append(f"0x{insn.address:08x}: {insn.mnemonic} {insn.op_str}")
        if len(out) >= 12 or insn.mnemonic.startswith(("b", "pop", "cb", "tb", "ldm")):
            break
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("elf", type=Path)
    ap.add_argument("--device", default=None, help="device spec (default: the ideal device of --core)")
    ap.add_argument("--core", default="cortex-m4")
    ap.add_argument("--max-blocks", type=int, default=10**9)
    args = ap.parse_args(argv)
    device = get_device(args.device, args.core)
    div, n = lockstep(Simulator(device, BOARDS[device.board]), args.elf, args.max_blocks)
    print(div if div else f"lock-step: {n} blocks agree")
    return 1 if div else 0


if __name__ == "__main__":
    sys.exit(main())

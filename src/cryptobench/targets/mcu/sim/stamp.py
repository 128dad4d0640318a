"""The cycle a counter read (DWT CYCCNT, SysTick's current value) sees: the count at the reading
instruction, not at the end of its block.

The accounting (harness/sim/cbsim.c) charges a block's static cost when the block is entered, so
the count inside a block is already its end's. A read is stamped instead at

    the block's base (cbsim_block_base: the count before its static cost, plus the data-dependent
    and flash-read cycles of the instructions before the reading one)
  + the static cost (timing.block_cost) of the block's instructions up to and including the
    reading one.

So the value a load returns is the count at the end of that load as the model charges it: the
data phase is a load's last cycle (ARM DDI 0337 / DDI 0439, Cortex-M3/M4 TRM 3.3.1: LDR is 2
cycles, address then data phase; 1 when pipelined after a neighbouring load, 3.3.2; ARMv6-M cores
2 cycles, DDI 0432 3.3). Two back-to-back reads therefore differ by exactly the second load's cost
in the model (1 on the M3/M4, where it pipelines after the first; 2 on the M0/M0+), and a bracket
`read; BL f; read` by f's cycles plus the BL's cost plus the second read's (docs/sim-model.md,
"Reading the cycle counter"). The block's prefix costs are cached per (block, reading instruction)."""
from __future__ import annotations


from . import timing

ACCESS = ("ldr", "str")       # single loads and stores (ldr, ldrh, ldrb, str, ... and their .w forms)


class Stamper:
    """Stamps counter reads for one run: `at(sim, pc)` with pc the reading instruction's address."""

    def __init__(self, lib, cs, read, core: str, dev: timing.DeviceParams):
        self.lib, self.cs, self.read, self.core, self.dev = lib, cs, read, core, dev
        self.prefix: dict[tuple[int, int], int] = {}
        self.blocks: dict[int, list] = {}       # Unicorn: a block's single loads and stores (at_access)
        self.entry, self.seen = -1, {}       # Unicorn: the block execution under way, accesses per address in it

    def at_access(self, sim, ex, addr: int) -> int:
        """The stamp of an access to `addr` by executor `ex`: the native executor knows its
        instruction; under Unicorn PC in a memory callback is not always the accessing instruction
        (it can be its block's start), so the instruction is found in the block under way: the
        n-th single load/store whose address is `addr`, for the n-th access to `addr` in this
        execution of the block. An instruction's address is known from the block itself where its
        base register was set inside the block by a literal load or a move of a constant (the
        usual `ldr r0, =REG; str r1, [r0]`): the registers now would give a later instruction's
        value there. Otherwise it is computed from the registers now."""
        if ex.name != "unicorn":
            return self.at(sim, ex.insn_addr())
        lib = self.lib
        entry = lib.cbsim_blocks(sim)
        if entry != self.entry:
            self.entry, self.seen = entry, {}
        ordinal = self.seen[addr] = self.seen.get(addr, -1) + 1
        start = lib.cbsim_block_addr(sim)
        hits = [a for a, base, index, disp, known in self._accesses(start)
                if (known if known is not None
                    else (ex.reg(base) + (ex.reg(index) if index else 0) + disp) & 0xFFFFFFFF) == addr]
        return self.at(sim, hits[min(ordinal, len(hits) - 1)] if hits else ex.insn_addr())

    def _accesses(self, start: int) -> list:
        """(address, base, index, disp, known address or None) of the block's single loads and
        stores (cached); `known` where the base register's value was set inside the block."""
        found = self.blocks.get(start)
        if found is None:
            found, consts = [], {}          # register -> the constant the block put in it so far
            for insn in self.cs.disasm(self.read(start, 256), start):
                name = insn.mnemonic.split(".")[0]
                mem = [op.mem for op in insn.operands if op.type == 3]      # ARM_OP_MEM
                if name.startswith(ACCESS) and not name.startswith(("ldrd", "strd", "ldrex", "strex")):
                    if mem and mem[0].base:
                        m = mem[0]
                        base = insn.reg_name(m.base)
                        known = ((consts[base] + m.disp) & 0xFFFFFFFF
                                 if base in consts and not m.index else None)
                        found.append((insn.address, base, insn.reg_name(m.index) if m.index else None,
                                      m.disp if not m.index else 0, known))
                self._track_constants(insn, name, mem, consts)
                if insn.group(1) or insn.group(7) or name in ("bl", "blx", "bx", "b", "cbz", "cbnz", "pop"):
                    break                                   # ARM_GRP_JUMP, _BRANCH_RELATIVE: the block ends
            self.blocks[start] = found
        return found

    def _track_constants(self, insn, name: str, mem: list, consts: dict) -> None:
        """After `insn`: the registers holding a constant the block put there (a PC-relative literal
        load, MOV/MOVS/MOVW of an immediate); any other write forgets the register."""
        _, written = insn.regs_access()
        dest = [insn.reg_name(r) for r in written]
        value = None
        if name == "ldr" and mem and insn.reg_name(mem[0].base) == "pc" and not mem[0].index:
            literal = ((insn.address + 4) & ~3) + mem[0].disp
            value = int.from_bytes(self.read(literal, 4), "little")
        elif name in ("mov", "movs", "movw") and len(insn.operands) == 2 and insn.operands[1].type == 2:  # IMM
            value = insn.operands[1].imm & 0xFFFFFFFF
        for reg in dest:
            consts.pop(reg, None)
        if value is not None and insn.operands and insn.operands[0].type == 1:       # ARM_OP_REG
            consts[insn.reg_name(insn.operands[0].reg)] = value

    def at(self, sim, pc: int) -> int:
        lib = self.lib
        now = lib.cbsim_cycles(sim)
        start = lib.cbsim_block_addr(sim)
        key = (start, pc)
        cost = self.prefix.get(key)
        if cost is None:
            cost = self.prefix[key] = self._prefix(start, pc)
        if cost is None:          # the read is not inside the block under way: its end's count
            return now
        return min(now, lib.cbsim_block_base(sim) + cost)

    def _prefix(self, start: int, pc: int) -> int | None:
        if not 0 <= pc - start < 1 << 16:
            return None
        insns = []
        for insn in self.cs.disasm(self.read(start, pc - start + 4), start):
            insns.append(insn)
            if insn.address >= pc:
                break
        if not insns or insns[-1].address != pc:
            return None
        return timing.block_cost(self.core, self.dev, insns).cycles

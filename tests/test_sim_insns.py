"""insns.Decoder (src/cryptobench/targets/mcu/sim/insns.py) against capstone's own CsInsn: every
attribute the timing model reads has the same value, and block_cost gives the same cost from
either, on every core. The encodings are a seeded sample of all 16-bit and 32-bit Thumb
halfword patterns (data decoded as code included: the model meets that too)."""
import random

import pytest

from cryptobench.targets.mcu.sim import timing as T
from cryptobench.targets.mcu.sim.insns import Decoder

capstone = pytest.importorskip("capstone")
BASE = 0x08000000


@pytest.fixture(scope="module")
def cs():
    cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    cs.detail = True
    return cs


def encodings(step: int = 5, n32: int = 6000) -> list[bytes]:
    """Every step-th 16-bit encoding (the next halfword random) and n32 random 32-bit ones, seeded."""
    rng = random.Random(1234)
    out = [(h | rng.getrandbits(16) << 16).to_bytes(4, "little") for h in range(0, 0x10000, step)]
    return out + [rng.getrandbits(32).to_bytes(4, "little") for _ in range(n32)]


def operand(op) -> tuple:
    """What the model reads of an operand: its type, then the field of that type."""
    if op.type == capstone.arm.ARM_OP_REG:
        return op.type, op.reg, op.shift.type
    if op.type == capstone.arm.ARM_OP_IMM:
        return op.type, op.imm
    if op.type == capstone.arm.ARM_OP_MEM:
        return op.type, op.mem.base, op.mem.index
    return (op.type,)


def seen(insn) -> tuple:
    read, written = insn.regs_access()
    return (insn.address, insn.size, insn.mnemonic, insn.cc, insn.update_flags, insn.writeback,
            [operand(op) for op in insn.operands], list(read), list(written),
            [insn.reg_name(r) for r in list(read) + list(written)])


def test_decoded_instructions_read_as_capstones(cs):
    dec = Decoder(cs)
    for i, code in enumerate(encodings()):
        address = BASE + 2 * i          # halfword-aligned addresses: PC-relative operands vary
        ours, theirs = dec.decode(code, address), list(cs.disasm(code, address))
        assert [seen(x) for x in ours] == [seen(x) for x in theirs], code.hex()


def test_register_names_are_capstones(cs):
    dec = Decoder(cs)
    for r in range(capstone.arm.ARM_REG_ENDING + 3):
        assert dec.reg_name(r) == cs.reg_name(r)


@pytest.mark.parametrize("core", T.CORES)
def test_block_costs_are_the_same_from_either(cs, core):
    dec = Decoder(cs, regs_access=T.reads_regs_access(core))    # as the machine decodes for the core
    dev = T.DeviceParams(flash_ws=2)
    codes = encodings(step=17, n32=1500)
    for i in range(0, len(codes) - 8, 8):               # blocks of whatever 32 bytes decode to
        code = b"".join(codes[i:i + 8])
        ours, theirs = dec.decode(code, BASE + 2 * i), list(cs.disasm(code, BASE + 2 * i))
        report_a, report_b = T.TimingReport(), T.TimingReport()
        assert T.block_cost(core, dev, ours, report_a) == T.block_cost(core, dev, theirs, report_b), code.hex()
        assert report_a == report_b


def test_without_registers_accessed_the_model_is_told_so(cs):
    insn, = Decoder(cs, regs_access=False).decode(bytes.fromhex("0868"), BASE)   # ldr r0, [r1]
    with pytest.raises(RuntimeError):
        insn.regs_access()
    assert Decoder(cs).decode(bytes.fromhex("0868"), BASE)[0].regs_access() == list(cs.disasm(
        bytes.fromhex("0868"), BASE))[0].regs_access()
    assert T.reads_regs_access("cortex-m7") and not T.reads_regs_access("cortex-m4")


def test_nothing_decoded_and_detail_required(cs):
    assert Decoder(cs).decode(b"", BASE) == [] and Decoder(cs).decode(b"\xff", BASE) == []
    plain = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    with pytest.raises(ValueError):
        Decoder(plain)

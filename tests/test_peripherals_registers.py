"""The peripheral models' registers as data (peripherals/registers.py): every model declares its
registers once, each declaration is checked when the class is made, and an access to an offset no
register declares (or to a register the model does not model) reads 0, is ignored as a store, and
is counted where PeripheralBus.undeclared() reports it."""
import pytest

from cryptobench.targets.mcu.sim.peripherals import registers as R
from cryptobench.targets.mcu.sim.peripherals.base import Peripheral
from cryptobench.targets.mcu.sim.peripherals.registry import KINDS, PeripheralBus
from cryptobench.targets.mcu.sim.peripherals.stm32_hash import Stm32Hash

HASH_BASE = 0x50060400


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_model_declares_its_registers_inside_its_window(kind):
    cls = KINDS[kind]
    assert cls.registers is not None and cls.registers.registers
    for reg in cls.registers.registers:
        assert reg.offsets()[-1] + 4 <= cls.size, f"{kind}: {reg.name} at 0x{reg.offset:x} lies past the window"
    # the manual's rule, cited: 32-bit stores, or byte accesses for the byte-wide IIC registers
    assert cls.registers.stores.endswith(")") and ("32-bit" in cls.registers.stores or "8-bit" in cls.registers.stores)


def _hash_bus():
    return PeripheralBus([{"kind": "stm32f4-hash", "base": HASH_BASE, "irq": 80, "source": "test"}], None)


def test_an_undeclared_offset_reads_0_ignores_stores_and_is_reported():
    bus = _hash_bus()
    for _ in range(3):
        assert bus.access(HASH_BASE + 0x0F0, 4, lambda: 5) == 0          # RM0090 25.4: reserved
    assert bus.access(HASH_BASE + 0x0F0, 4, lambda: 6, 0xFFFFFFFF) == 0
    assert bus.access(HASH_BASE + 0x0F0, 4, lambda: 7) == 0              # the store was not kept
    assert bus.access(HASH_BASE + 0x0F2, 2, lambda: 8) == 0              # a halfword of the same word
    assert bus.undeclared() == [
        "STM32F4 HASH: 5 reads of undeclared offset 0x0f0 (reserved: reads 0, stores ignored)",
        "STM32F4 HASH: 1 write of undeclared offset 0x0f0 (reserved: reads 0, stores ignored)",
    ]


def test_a_register_the_model_does_not_model_is_reported_by_its_name():
    bus = _hash_bus()
    bus.access(HASH_BASE + 0x0F8 + 4 * 5, 4, lambda: 1, 0x1234)           # HASH_CSR5 (context swap)
    assert bus.access(HASH_BASE + 0x0F8 + 4 * 5, 4, lambda: 2) == 0
    assert bus.undeclared() == [
        "STM32F4 HASH: 1 read of HASH_CSR5 (offset 0x10c), which the model does not model (reads 0, stores ignored)",
        "STM32F4 HASH: 1 write of HASH_CSR5 (offset 0x10c), which the model does not model (reads 0, stores ignored)",
    ]


def test_declared_registers_are_not_reported_and_the_log_is_bounded():
    h = Stm32Hash(HASH_BASE, 80)
    h.write(0x00, 4, 1 << 2, 0)                     # HASH_CR, HASH_IMR, HASH_SR: declared
    h.read(0x20, 4, 1), h.read(0x24, 4, 2)
    assert h.access_log.lines(h.title) == []
    for i in range(R.AccessLog.LIMIT + 10):          # a reserved offset each: the log keeps LIMIT kinds
        h.read(0x28 + 4 * i, 4, 3)
    lines = h.access_log.lines(h.title)
    assert len(lines) == R.AccessLog.LIMIT + 1
    assert lines[-1] == "STM32F4 HASH: 10 more accesses to undeclared or unmodelled offsets, not itemised"


def test_a_store_off_a_word_start_reaches_only_a_contiguous_array():
    h = Stm32Hash(HASH_BASE, 80)
    h.write(0x21, 4, 3, 0)                           # inside HASH_IMR, not at its start: undeclared
    assert h.read(0x20, 4, 1) == 0
    assert h.access_log.counts == {(0x21, "", "write"): 1}


@pytest.mark.parametrize("reg, problem", [
    (R.Register(0x0, "A", R.Access.WO, read="_r"), "a write-only register reads 0"),
    (R.Register(0x0, "A", R.Access.RO, write="_w"), "a read-only register takes no store"),
    (R.Register(0x2, "A", R.Access.RW), "whole 32-bit words"),
    (R.Register(0x0, "A", R.Access.RO, read="_r", effect="pops", horizon="_h"), "horizon now"),
    (R.Register(0x0, "A", R.Access.RW, field="a", count=2), "one register's plain storage"),
    (R.Register(0x0, "A", R.Access.RW, modelled=False, field="a"), "no handler"),
])
def test_a_bad_declaration_is_refused_in_one_line(reg, problem):
    with pytest.raises(ValueError, match=problem):
        R.RegisterMap(reg, stores="x")


def test_overlapping_registers_and_a_missing_handler_are_refused_when_the_class_is_made():
    with pytest.raises(ValueError, match="overlaps A"):
        R.RegisterMap(R.Register(0x0, "A", R.Access.RW, count=2), R.Register(0x4, "B", R.Access.RW), stores="x")
    with pytest.raises(ValueError, match="register B: no method '_missing'"):
        type("Bad", (Peripheral,), {"registers": R.RegisterMap(R.Register(0x0, "B", R.Access.RO, read="_missing"),
                                                               stores="x")})


def test_plain_storage_constants_and_write_only_registers():
    class Model(Peripheral):
        title = "test model"
        registers = R.RegisterMap(
            R.Register(0x0, "CTL", R.Access.RW, field="ctl", mask=0xF, reset=5),
            R.Register(0x4, "VER", R.Access.RO, reset=0x1234),
            R.Register(0x8, "GO", R.Access.WO, field="go"),
            stores="the test registers take 32-bit writes (none)")

        def __init__(self):
            super().__init__(0x40000000, None)
            self.registers.reset(self)

    m = Model()
    assert (m.read(0x0, 4, 0), m.read(0x4, 4, 0), m.read(0x5, 1, 0)) == (5, 0x1234, 0x12)
    m.write(0x0, 4, 0xFF, 1), m.write(0x4, 4, 7, 1), m.write(0x8, 4, 9, 1)
    assert (m.read(0x0, 4, 2), m.read(0x4, 4, 2), m.read(0x8, 4, 2), m.go) == (0xF, 0x1234, 0, 9)
    assert all(m.read_horizon(o, 4, 2) == R.NEVER for o in (0x0, 0x4, 0x8))
    assert m.read_horizon(0xC, 4, 2) == 2                  # undeclared: every read is counted

"""The simulator's executor interface (targets/mcu/sim/executor.py) and the ctypes mirror of the C record
(targets/mcu/sim/binding.py): a library whose cbsim_block differs from the mirror is one line, not memory
written past a record."""
import ctypes

import pytest

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.sim import binding
from cryptobench.targets.mcu.sim.binding import library_path, load_library
from cryptobench.targets.mcu.sim.executor import Executor, UnicornExecutor
from cryptobench.targets.mcu.sim.native import NativeExecutor


class _Lib:
    """A stand-in library that exports the record size `size` (or none)."""

    def __init__(self, size):
        if size is not None:
            self.cbsim_block_size = lambda: size


def test_the_mirror_matches_the_built_library():
    lib = load_library()
    assert lib.cbsim_block_size() == ctypes.sizeof(binding.CbBlock)


def test_a_library_with_another_record_size_is_one_line_asking_for_setup():
    with pytest.raises(UsageError) as exc:
        binding.check_sizes(_Lib(ctypes.sizeof(binding.CbBlock) + 4), library_path())
    msg = str(exc.value)
    assert "\n" not in msg and "cbsim_block" in msg and "./setup.sh" in msg


def test_a_library_without_the_size_function_is_one_line_asking_for_setup():
    with pytest.raises(UsageError, match=r"has no cbsim_block_size\): rebuild it with ./setup.sh"):
        binding.check_sizes(_Lib(None), library_path())


@pytest.mark.parametrize("cls", [NativeExecutor, UnicornExecutor])
def test_both_executors_have_every_method_of_the_protocol(cls):
    wanted = {n for n in dir(Executor) if not n.startswith("_")} | set(Executor.__annotations__)
    assert wanted <= set(dir(cls)), wanted - set(dir(cls))


def test_the_native_executor_serves_mapped_registers_and_reports_a_failing_callback():
    problems = []
    ex = NativeExecutor(load_library(), "cortex-m3", (0, 0x1000), (0x20000000, 0x1000))
    ex.attach(lambda n: None, problems.append)
    try:
        seen = []
        ex.map_mmio(0x40000000, 0x1000, lambda offset, size: 0x1234, lambda offset, size, v: seen.append(v))
        out = (ctypes.c_uint32 * 1)()
        assert ex._mmio_read(0x40000010, 4, out) == 0 and out[0] == 0x1234
        assert ex._mmio_write(0x40000010, 4, 7) == 0 and seen == [7]
        assert ex._mmio_read(0x50000000, 4, out) == -1           # unmapped: the executor faults
        ex.map_mmio(0x60000000, 0x1000, lambda offset, size: 1 // 0, lambda offset, size, v: None)
        assert ex._mmio_read(0x60000000, 4, out) == 0
        assert len(problems) == 1 and problems[0].startswith("reading 0x60000000: integer division")
        ex.set_reg("r3", 0x1_0000_0005)
        assert ex.reg("r3") == 5
    finally:
        ex.close()

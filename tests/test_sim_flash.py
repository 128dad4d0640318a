"""The flash memory-system model of harness/sim/cbsim.c, driven directly (no emulator): block
entries and data reads are fed to a detached accounting (cbsim_new with no engine) the way an
executor feeds them, and the wait states it charges are checked against hand-derived figures.

The rules (docs/sim-model.md, "Flash lines and caches"), per flash line a block touches: the line
the fetch unit holds is free; with prefetch on, the line after it is free when reached in
sequence; a line in the instruction cache is free; any other line is read from flash, costs the
miss cycles and (ST RM0383 3.4.2: "the line read is copied into the instruction cache") fills
the cache. A data read from flash hits or fills the data cache. Caches are LRU.

The ART of the stm32f411 profile: 16-byte lines, 64-line instruction cache, 8-line data cache,
3 wait states at 100 MHz."""
import ctypes

import pytest

from test_sim import needs_sim
from cryptobench.targets.mcu.sim import timing as T

FLASH = 0x08000000
WS = 3


class Model:
    """A detached accounting whose blocks each cost 1 instruction and end as told, and take
    WS + 1 cycles per flash line they touch, each line reached WS + 1 cycles after the one before:
    the prefetcher always keeps up (the fetch-bandwidth bound is tests/test_sim_fetch.py's)."""

    def __init__(self, prefetch=True, icache=(64, 64), dcache=(8, 8), ends=None, entry_extra=None, line_shift=4,
                 shared_port=False):
        from cryptobench.targets.mcu.sim.binding import MISS_FN, load_library
        self.lib = load_library()
        ends, entry_extra = ends or {}, entry_extra or {}

        self.own = 0                # the blocks' own cycles, run by run
        self.costs = {}

        def miss(bp):
            b = bp.contents
            lines = ((b.addr + b.size - 1) >> line_shift) - (b.addr >> line_shift) + 1
            b.cycles, b.insns = lines * (WS + 1), 1
            for k in range(b.nlines):
                b.line_off[k] = k * (WS + 1)
            self.costs[(b.addr, b.size)] = b.cycles
            b.end, b.taken_extra = ends.get(b.addr, T.END_NONE), 0
            b.entry_extra = entry_extra.get(b.addr, 0)
            return 0

        self.miss = MISS_FN(miss)
        self.sim = self.lib.cbsim_new(None, self.miss, WS, FLASH, FLASH + 0xFFFFF, 1)
        (isets, iways), (dsets, dways) = ((n // w if n else 0, w) for n, w in (icache, dcache))
        assert self.lib.cbsim_set_flash(self.sim, line_shift, WS, int(prefetch), FLASH, FLASH + 0xFFFFF,
                                        isets, iways, dsets, dways, int(shared_port)) == 0

    def block(self, addr: int, size: int) -> None:
        assert self.lib.cbsim_account_block(self.sim, addr, size) == 0
        self.own += self.costs[(addr, size)]

    def read(self, addr: int) -> None:
        self.lib.cbsim_account_flash_read(self.sim, addr, 4)

    def waits(self) -> int:
        """Cycles beyond the blocks' own: what the flash model charged."""
        return self.lib.cbsim_cycles(self.sim) - self.own

    def stats(self) -> list:
        out = (ctypes.c_uint64 * 4)()
        self.lib.cbsim_flash_stats(self.sim, ctypes.byref(out))
        return list(out)

    def close(self):
        self.lib.cbsim_free(self.sim)


@pytest.fixture
def model():
    made = []

    def make(**kw):
        made.append(Model(**kw))
        return made[-1]
    yield make
    for m in made:
        m.close()


LOOP = FLASH + 0x100        # a 64-byte loop body: four 16-byte lines, ending in a taken branch


def run_loop(m: Model, passes: int) -> None:
    for _ in range(passes):
        m.block(LOOP, 0x40)


@needs_sim
def test_a_loop_that_fits_misses_once(model):
    # pass 1: line 0 is a branch target (miss, 3), lines 1-3 come in sequence (prefetched);
    # passes 2-10: the branch back finds line 0 in the instruction cache
    m = model(ends={LOOP: T.END_ALWAYS})
    run_loop(m, 10)
    assert m.waits() == WS
    assert m.stats()[:2] == [9, 1]          # instruction cache: 9 hits, 1 miss


@needs_sim
def test_caches_off_every_branch_target_waits(model):
    m = model(ends={LOOP: T.END_ALWAYS}, icache=(0, 0), dcache=(0, 0))
    run_loop(m, 10)
    assert m.waits() == 10 * WS             # the target line, read from flash each pass


@needs_sim
def test_caches_and_prefetch_off_every_line_waits(model):
    m = model(ends={LOOP: T.END_ALWAYS}, icache=(0, 0), dcache=(0, 0), prefetch=False)
    run_loop(m, 10)
    assert m.waits() == 10 * 4 * WS         # four lines per pass, each read from flash


@needs_sim
def test_a_branch_within_the_held_line_is_free(model):
    # a 12-byte loop inside one line: after the first fetch every pass hits the line buffer
    m = model(ends={LOOP: T.END_ALWAYS}, icache=(0, 0), dcache=(0, 0))
    for _ in range(10):
        m.block(LOOP, 12)
    assert m.waits() == WS


@needs_sim
def test_instruction_cache_capacity_and_lru(model):
    # targets in 64 distinct lines, visited round robin, each entered by a branch: the first pass
    # misses 64 times and later passes hit; with 65 lines LRU evicts each line just before its
    # turn comes again, so every visit misses
    for lines, misses_per_pass in ((64, 0), (65, 65)):
        m = model()
        targets = [FLASH + 0x1000 + 0x20 * i for i in range(lines)]      # every other line
        for _ in range(3):
            for t in targets:
                m.block(t, 4)
        assert m.waits() == WS * (lines + 2 * misses_per_pass), lines


@needs_sim
def test_data_cache_holds_eight_lines(model):
    for lines, misses in ((8, 8), (9, 9 * 4)):
        m = model()
        for _ in range(4):
            for i in range(lines):
                m.read(FLASH + 0x8000 + 16 * i)
                m.read(FLASH + 0x8000 + 16 * i + 4)      # same line: a hit
        assert m.waits() == WS * misses, lines
        assert m.stats()[3] == misses


@needs_sim
def test_data_reads_without_a_data_cache_each_wait(model):
    m = model(dcache=(0, 0))
    for i in range(10):
        m.read(FLASH + 0x8000)
    assert m.waits() == 10 * WS


@needs_sim
def test_code_outside_flash_is_not_charged(model):
    m = model(ends={0x20000100: T.END_ALWAYS})
    for _ in range(5):
        m.block(0x20000100, 0x40)
    assert m.waits() == 0


@needs_sim
def test_entry_extra_only_when_a_branch_lands(model):
    # a block with entry_extra (an unaligned 32-bit target): entered by falling through, then by a
    # taken branch from a block that ends END_ALWAYS
    m = model(ends={LOOP + 0x40: T.END_ALWAYS}, entry_extra={LOOP + 0x40: 1, LOOP: 1},
              icache=(0, 0), dcache=(0, 0))
    m.block(LOOP - 0x10, 0x10)      # falls into LOOP: line LOOP is the next line, prefetched
    m.block(LOOP, 0x40)             # fall-through entry: no entry_extra
    m.block(LOOP + 0x40, 4)         # fall-through again; it ends with a taken branch
    m.block(LOOP, 0x40)             # landed by the branch: entry_extra 1, and its line waits
    assert m.waits() == WS + 1 + WS


@needs_sim
def test_the_m7_instruction_cache_is_two_way(model):
    # the stm32f746 profile's L1 instruction cache: 32-byte lines, 128 lines in 2 ways = 64 sets, so
    # lines 2 KiB apart share a set. Two such branch targets both stay; a third evicts the least
    # recently used one just before its turn comes again, so every visit misses (LRU)
    for lines, misses_per_pass in ((2, 0), (3, 3)):
        m = model(icache=(128, 2), dcache=(0, 0), prefetch=False, line_shift=5)
        targets = [FLASH + 0x2000 + 0x800 * i for i in range(lines)]
        for _ in range(3):
            for t in targets:
                m.block(t, 4)
        assert m.waits() == WS * (lines + 2 * misses_per_pass), lines


@needs_sim
def test_the_m7_data_cache_is_four_way(model):
    # its data cache: 128 lines in 4 ways = 32 sets, lines 1 KiB apart share a set: four stay, five thrash
    for lines, misses in ((4, 4), (5, 5 * 3)):
        m = model(icache=(128, 2), dcache=(128, 4), prefetch=False, line_shift=5)
        for _ in range(3):
            for i in range(lines):
                m.read(FLASH + 0x4000 + 0x400 * i)
        assert m.waits() == WS * misses, lines

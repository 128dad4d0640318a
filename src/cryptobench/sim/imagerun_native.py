"""`cryptobench sim run` on cryptobench's own executor (harness/sim/cbcpu.c) instead of Unicorn.

The run is sim/imagerun.py's ImageRun (the counters, semihosting, markers, SysTick and the
result are its code); what differs is the engine under it:

* memory: the board's flash and RAM are the executor's flat arrays; every other address reaches
  the mmio callbacks here: the private peripheral bus (SysTick, DWT, VTOR), the peripheral region
  and a marker register's page (sim/plainmemory.py's bounded plain memory, as on Unicorn), and
  anything else faults, as it does on Unicorn. An image that needs memory beyond the board's
  flash and RAM (a load or run address, or its initial stack, outside them) cannot run here: `fits` says
  why and `cryptobench sim run` takes Unicorn for it;
* flash data reads are charged by the executor as it makes them (no read hook: Unicorn's can
  leave the IT state set, scripts/unicorn_it_state_repro.py);
* the alarm (SysTick's next wrap) and the watched function are cbsim_enter's, called by the
  executor at each block; the executor stops before the block the alarm takes back, and, with
  cbcpu_set_wake, after an instruction that may unmask interrupts and after an exception return,
  where a pending SysTick is looked at again;
* exceptions are the executor's own: a SysTick is pended (cbcpu_pend) when it may be taken and
  the executor enters it before the next block; its return is the executor's too. SVC is taken
  through the vector table as on silicon (Unicorn's run stops at it)."""
from __future__ import annotations

import time

from ..errors import UsageError
from . import exceptions, timing
from .engine import MISS_FN, PPB, PPB_SIZE, set_flash_model
from .image import Image
from .imagerun import PLAIN, POLL_MASKED, ImageRun, ImageResult
from .plainmemory import PlainMemoryFull
from .native import PROBLEM, REG_VTOR, TIMEOUT, Cpu

# the executor's register numbers (harness/sim/cbcpu.h) for the names sim/exceptions.py and
# sim/semihosting.py use
REGS = {**{f"r{i}": i for i in range(13)}, "sp": 13, "r13": 13, "lr": 14, "r14": 14, "pc": 15, "r15": 15,
        "xpsr": 16, "msp": 17, "psp": 18, "primask": 19, "control": 20, "fpscr": 21, "basepri": 23,
        "faultmask": 24}


def fits(image: Image, board) -> str | None:
    """None when the image runs within the board's flash and RAM (and the peripheral region),
    else what does not fit there."""
    inside = [(board.flash[0], board.flash[1]), (board.ram[0], board.ram[1])]

    def covered(lo: int, hi: int) -> bool:
        return any(base <= lo and hi <= base + size for base, size in inside)

    for seg in image.segments:
        for kind, at in (("load", seg.load), ("run", seg.run)):
            if seg.data and not covered(at, at + len(seg.data)):
                return f"its {kind} range 0x{at:08x}-0x{at + len(seg.data) - 1:08x} is outside the board's flash and RAM"
    sp = image.read_word(image.vector_table)
    if not covered(sp - 4, sp):
        return f"its initial stack pointer 0x{sp:08x} is outside the board's RAM"
    return None


class _Cpu:
    """The register and memory view of sim/exceptions.py and sim/semihosting.py, on the executor."""

    def __init__(self, cpu: Cpu, run: "NativeImageRun"):
        self.cpu, self.run = cpu, run

    def reg(self, name):
        return self.cpu.reg(REGS[name])

    def set_reg(self, name, value):
        self.cpu.set_reg(REGS[name], value & 0xFFFFFFFF)

    def read(self, addr, n):
        return self.run.read_memory(addr, n)

    def read32(self, addr):
        return int.from_bytes(self.read(addr, 4), "little")

    def write32(self, addr, value):
        self.run.write_word(addr, value)


class _Engine:
    """What ImageRun's shared methods call on their engine: reading code, and stopping."""

    def __init__(self, run: "NativeImageRun"):
        self.run = run

    def mem_read(self, addr, n):
        return self.run.native.read(addr, n)

    def emu_stop(self):
        self.run.native.stop()


class NativeImageRun(ImageRun):
    """One run of `image` on `device` on the native executor (call `fits` first)."""

    def __init__(self, image: Image, device, board, marker):   # noqa: ImageRun.__init__ would make a Unicorn engine
        import capstone
        self._check_marker(image, marker)
        self.image, self.device, self.marker = image, device, marker
        self._common_state(device, board, image)
        self.cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
        self.cs.detail = True            # the timing model costs each block from its disassembly
        self.native = Cpu(self.lib, device.core, board.flash, board.ram, self._mmio_read, self._mmio_write,
                          self._bkpt)
        self.uc = _Engine(self)
        self.cpu = _Cpu(self.native, self)
        self.plain_regions = [(r.start, r.start + r.size) for r in self.regions if r.what in PLAIN]
        for seg in image.segments:
            if seg.data:
                self.native.write(seg.load, seg.data)
        self.native.set_reg(REG_VTOR, self.vtor)
        self.lib.cbcpu_set_wake(self.native.h, 1)

    # --- memory outside flash and RAM -------------------------------------------------------------
    def _plain(self, addr: int, size: int) -> bool:
        """Whether [addr, addr + size) is plain memory (the peripheral region, a marker page)."""
        return any(lo <= addr and addr + size <= hi for lo, hi in self.plain_regions)

    def read_memory(self, addr: int, n: int) -> bytes:
        """n bytes of the target for the host (semihosting, exception frames), checked before
        anything is allocated for them (ImageRun.check_read)."""
        self.check_read(addr, n)
        if self._plain(addr, n):
            return self.plain.read_bytes(addr, n)
        return self.native.read(addr, n)

    def write_word(self, addr: int, value: int) -> None:
        """A word the host writes (a semihosting result): plain memory, flash or RAM, else a fault."""
        if self._plain(addr, 4):
            self.plain.write(addr, 4, value)
        elif self.native.holds(addr, 4):
            self.native.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"))
        else:
            raise ValueError(f"write of 4 bytes at unmapped 0x{addr & 0xFFFFFFFF:08x}")

    # --- the executor's callbacks -----------------------------------------------------------------
    def _mmio_read(self, addr, size, out) -> int:
        try:
            if PPB <= addr < PPB + PPB_SIZE:
                out[0] = self._ppb_read(None, addr - PPB, size, None) & 0xFFFFFFFF
            elif self._plain(addr, size):
                out[0] = self.plain.read(addr, size)
            else:
                return -1                       # unmapped: the executor stops with its problem line
            return 0
        except Exception as exc:        # a callback must not raise into C: the run stops with it
            self._stop(f"reading 0x{addr:08x}: {exc}")
            return 0

    def _mmio_write(self, addr, size, value) -> int:
        try:
            if PPB <= addr < PPB + PPB_SIZE:
                self._ppb_write(None, addr - PPB, size, value, None)
                if addr == 0xE000ED08:                  # VTOR: the executor keeps its own copy
                    self.native.set_reg(REG_VTOR, self.vtor)
                return 0
            if not self._plain(addr, size):
                return -1
            if self.marker.kind in ("register", "pair"):
                self._on_marker_write(None, None, addr, size, value, None)
            self.plain.write(addr, size, value)
            return 0
        except PlainMemoryFull as exc:
            self._stop(f"the image faulted: {exc}")
            return 0
        except Exception as exc:
            self._stop(f"writing 0x{addr:08x}: {exc}")
            return 0

    def _bkpt(self, imm) -> int:
        pc = self.native.reg(15)
        try:
            if imm == 0xAB:
                self._semihost(pc)
            else:
                self._stop(f"the image raised a BKPT other than 0xAB (semihosting) at pc=0x{pc:08x}: not served by "
                           "the simulator (only SysTick, semihosting and exception return are)")
        except Exception as exc:
            self._stop(f"semihosting at pc=0x{pc:08x}: {exc}")
        return 1 if self.ended else 0

    # --- the accounting ---------------------------------------------------------------------------
    def _install(self) -> None:
        self.timing_report = timing.TimingReport()
        self.miss = MISS_FN(self._on_miss)
        d = self.device
        flash = self.simulator.board.flash
        self.sim = self.lib.cbsim_new(None, self.miss, d.flash_ws if d.code_in_flash else 0,
                                      flash[0], flash[0] + flash[1] - 1, 1)
        if not self.sim:
            raise UsageError("could not create the simulator's accounting")
        set_flash_model(self.lib, self.sim, self.simulator, flash[0], flash[1])
        table = timing.TABLES[d.core]
        dyn = [int(table.get(cls) == timing.DYN) for cls in ("div", "lmul", "lmla")]
        self.lib.cbcpu_set_accounting(self.native.h, self.sim, *dyn)
        if self.marker.kind == "function":
            self.lib.cbsim_watch(self.sim, self.image.symbols[self.marker.name][0])

    def _enter(self, number: int) -> None:
        """Exception `number`, pended to the executor: it enters it (frame, vector read through the
        accounting) before the next block."""
        exceptions.refuse_fp_context(self.cpu)
        self.native.pend(number)

    # --- the run ----------------------------------------------------------------------------------
    def run(self, timeout_s: float) -> ImageResult:
        if self.sim is None:
            self.prepare()
        sp, reset = self.image.read_word(self.image.vector_table), self.image.read_word(self.image.vector_table + 4)
        self.cpu.set_reg("msp", sp)
        self.native.set_reg(15, reset & ~1)
        t0 = time.perf_counter()
        deadline = self.deadline = t0 + timeout_s
        try:
            while not self.ended:
                left = deadline - time.perf_counter()
                if left <= 0:
                    self.result.timed_out = True
                    break
                if self.pending:    # masked: the executor wakes at an unmasking or a return, else a late poll
                    self.lib.cbsim_set_alarm(self.sim, self.cycles() + POLL_MASKED, 1)
                else:
                    self.lib.cbsim_set_alarm(self.sim, self._alarm(), 0)
                status = self.native.run(2**64 - 1, left)
                if self.ended or self._limit_reached():
                    break
                if status == PROBLEM:
                    self._stop(self._problem())
                    break
                if status == TIMEOUT:
                    self.result.timed_out = True
                    break
                if self.lib.cbsim_alarm_fired(self.sim) or self.pending:
                    self.pending = not self._take_systick()
        finally:
            self._finish(time.perf_counter() - t0)
        return self.result

    def _problem(self) -> str:
        problem = self.native.problem() or "the executor stopped"
        if self.lib.cbsim_failed(self.sim):
            return self.result.problem or ("the simulator's accounting failed (a watched call nested deeper than 256, "
                                           "or out of memory)")
        return f"the image faulted: {problem}"

    def _finish(self, wall: float) -> None:
        super()._finish(wall)
        self.result.stats["executor"] = "native"
        self.native.close()


def image_run(image: Image, device, board, marker, executor: str | None = None) -> ImageRun:
    """The run of `image`: on the native executor unless `executor` (or $CRYPTOBENCH_SIM_EXECUTOR)
    says unicorn or the image needs memory beyond the board's flash and RAM (then on Unicorn, with
    a note that says why)."""
    from .native import executor_choice
    choice = executor_choice(executor)
    if choice == "native":
        why = fits(image, board)
        if why is None:
            return NativeImageRun(image, device, board, marker)
        run = ImageRun(image, device, board, marker)
        run.result.notes.append(f"run on Unicorn, not on the native executor: {why}")
        return run
    return ImageRun(image, device, board, marker)

"""The simulator on cryptobench's own Thumb executor (harness/sim/cbcpu.c) instead of Unicorn.

The executor decodes each basic block once, keeps flash and RAM as flat host arrays, and drives
the same native accounting as the Unicorn path (cbsim.c's cbsim_account_* functions), so the
cost model is not repeated here. What the image sees of the board (the cycle counters, the UART
console, the marker GPIO, semihosting) is engine._Emulation's own code, written against
executor.py's Executor, which NativeExecutor here and UnicornExecutor both implement;
NativeEmulation only picks the executor and drives its accounting. Unicorn stays selectable (Simulator(..., executor="unicorn") or
CRYPTOBENCH_SIM_EXECUTOR=unicorn): it is the oracle the executor is tested against
(tests/test_sim_native.py)."""
from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path

from ....core.errors import UsageError
from . import engine, exceptions, stamp, timing
from .cstructs import BKPT_FN, READ_FN, WRITE_FN
from .executor import EXCP_BKPT
from .engine import MISS_FN, SimReport, _Emulation  # noqa: F401 (SimReport: for importers of this module)

EXECUTORS = ("native", "unicorn")
ENV = "CRYPTOBENCH_SIM_EXECUTOR"
ARCH = {"cortex-m0": 0, "cortex-m0plus": 0, "cortex-m3": 1, "cortex-m4": 2, "cortex-m7": 2, "cortex-m33": 3}
STOPPED, LIMIT, PROBLEM, TIMEOUT = 0, 1, 2, 3
REG_PC, REG_XPSR, REG_VTOR = 15, 16, 22



def executor_choice(explicit: str | None = None) -> str:
    """The executor a run uses: the argument, else $CRYPTOBENCH_SIM_EXECUTOR, else native."""
    name = explicit or os.environ.get(ENV) or "native"
    if name not in EXECUTORS:
        where = "executor=" if explicit else f"${ENV}="
        raise UsageError(f"{where}{name!r} is not a simulator executor; expected one of: {', '.join(EXECUTORS)}")
    return name


def bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    """The executor's entry points in libcbsim.so, typed for ctypes (once per library)."""
    if getattr(lib, "_cbcpu_bound", False):
        return lib
    if not hasattr(lib, "cbcpu_new"):
        raise UsageError(f"{engine.library_path()} has no native executor (cbcpu_new): rebuild it with ./setup.sh")
    if not hasattr(lib, "cbcpu_set_hints"):
        raise UsageError(f"{engine.library_path()} is older than this cryptobench (it has no cbcpu_set_hints): "
                         "rebuild it with ./setup.sh")
    P, U32, U64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64
    sigs = {"cbcpu_new": (P, [ctypes.c_int, U32, U32, U32, U32]),
            "cbcpu_set_callbacks": (None, [P, READ_FN, WRITE_FN, BKPT_FN]),
            "cbcpu_set_accounting": (None, [P, P, ctypes.c_int, ctypes.c_int, ctypes.c_int]),
            "cbcpu_mem_write": (ctypes.c_int, [P, U32, ctypes.c_char_p, U32]),
            "cbcpu_mem_read": (ctypes.c_int, [P, U32, ctypes.c_char_p, U32]),
            "cbcpu_reg": (U32, [P, ctypes.c_int]), "cbcpu_set_reg": (None, [P, ctypes.c_int, U32]),
            "cbcpu_pend": (None, [P, ctypes.c_int]), "cbcpu_stop": (None, [P]),
            "cbcpu_set_wake": (None, [P, ctypes.c_int]), "cbcpu_set_enter": (None, [P, ctypes.c_int]),
            "cbcpu_set_hints": (None, [P, ctypes.c_int]), "cbcpu_slept": (ctypes.c_int, [P]),
            "cbcpu_run": (ctypes.c_int, [P, U64, ctypes.c_double]),
            "cbcpu_problem": (ctypes.c_char_p, [P]), "cbcpu_insns": (U64, [P]), "cbcpu_insn_addr": (U32, [P]), "cbcpu_blocks": (U64, [P]),
            "cbcpu_decoded": (U64, [P]), "cbcpu_flushes": (U64, [P]), "cbcpu_last_insns": (U32, [P]), "cbcpu_last_steps": (U32, [P]), "cbcpu_last_size": (U32, [P]),
            "cbcpu_free": (None, [P])}
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    lib._cbcpu_bound = True
    return lib


class Cpu:
    """One executor instance: the core, its flash and RAM, and the callbacks it needs (kept
    alive here while it runs)."""

    def __init__(self, lib, core: str, flash: tuple[int, int], ram: tuple[int, int], read=None, write=None,
                 bkpt=None):
        self.lib = bind(lib)
        self.memory = (flash, ram)
        self.h = self.lib.cbcpu_new(ARCH[core], flash[0], flash[1], ram[0], ram[1])
        if not self.h:
            raise UsageError(f"the native executor could not allocate flash 0x{flash[1]:x} and RAM 0x{ram[1]:x} bytes")
        self._fns = (READ_FN(read or (lambda a, s, v: -1)), WRITE_FN(write or (lambda a, s, v: -1)),
                     BKPT_FN(bkpt or (lambda imm: 1)))
        self.lib.cbcpu_set_callbacks(self.h, *self._fns)

    def write(self, addr: int, data: bytes) -> None:
        if self.lib.cbcpu_mem_write(self.h, addr, bytes(data), len(data)) != 0:
            raise UsageError(f"the image writes 0x{len(data):x} bytes at 0x{addr:08x}, outside the board's flash and RAM")

    def holds(self, addr: int, n: int) -> bool:
        """Whether [addr, addr + n) lies in flash or in RAM."""
        return any(start <= addr and addr + n <= start + size for start, size in self.memory)

    def read(self, addr: int, n: int) -> bytes:
        if not self.holds(addr, n):          # checked before a buffer of n bytes is allocated
            raise ValueError(f"0x{n:x} bytes at 0x{addr:08x} are not in flash or RAM")
        buf = ctypes.create_string_buffer(n)
        if self.lib.cbcpu_mem_read(self.h, addr, buf, n) != 0:
            raise ValueError(f"0x{n:x} bytes at 0x{addr:08x} are not in flash or RAM")
        return buf.raw

    def reg(self, r: int) -> int:
        return self.lib.cbcpu_reg(self.h, r)

    def set_reg(self, r: int, v: int) -> None:
        self.lib.cbcpu_set_reg(self.h, r, v & 0xFFFFFFFF)

    def run(self, max_blocks: int = 2**64 - 1, timeout_s: float = 600.0) -> int:
        """Runs until a stop, a problem, max_blocks blocks or timeout_s; returns STOPPED, LIMIT,
        PROBLEM or TIMEOUT. A callback may pend exceptions or stop the run meanwhile."""
        return self.lib.cbcpu_run(self.h, max_blocks, timeout_s)

    def pend(self, exception: int) -> None:
        """Pends exception number `exception` (2-511; SysTick is 15): taken at the next block
        boundary (outside IT blocks) while the core is in thread mode and PRIMASK is clear."""
        self.lib.cbcpu_pend(self.h, exception)

    def stop(self) -> None:
        """Stops the run before the next block (from a callback)."""
        self.lib.cbcpu_stop(self.h)

    def problem(self) -> str | None:
        p = self.lib.cbcpu_problem(self.h)
        return p.decode() if p else None

    def close(self) -> None:
        if self.h:
            self.lib.cbcpu_free(self.h)
            self.h = None


# the executor's register numbers (harness/sim/cbcpu.h) for the names the runs use
REGS = {**{f"r{i}": i for i in range(13)}, "sp": 13, "r13": 13, "lr": 14, "r14": 14, "pc": 15, "r15": 15,
        "xpsr": 16, "msp": 17, "psp": 18, "primask": 19, "control": 20, "fpscr": 21, "vtor": REG_VTOR,
        "basepri": 23, "faultmask": 24, "event": 25}


class NativeExecutor:
    """A Cpu as an Executor (executor.py): addresses outside flash and RAM reach the regions
    mapped here (the whole access inside one, else unmapped: the executor faults), BKPT is the
    trap EXCP_BKPT, and a callback that raises is the run's problem (on_error) and stops it."""

    name, wakes = "native", True

    def __init__(self, lib, core: str, flash: tuple[int, int], ram: tuple[int, int], trap, on_error):
        self.regions: list = []
        self.write_hooks: list = []       # (begin, end, fn) of hook_writes
        self.trap, self.on_error = trap, on_error
        self.cpu = Cpu(lib, core, flash, ram, self._mmio_read, self._mmio_write, self._bkpt)
        self.lib, self.h = self.cpu.lib, self.cpu.h

    def read(self, addr: int, n: int) -> bytes:
        return self.cpu.read(addr, n)

    def write(self, addr: int, data: bytes) -> None:
        self.cpu.write(addr, data)

    def holds(self, addr: int, n: int) -> bool:
        return self.cpu.holds(addr, n)

    def reg(self, name: str) -> int:
        return self.cpu.reg(REGS[name])

    def set_reg(self, name: str, value: int) -> None:
        self.cpu.set_reg(REGS[name], value)

    def run(self, pc: int, timeout_s: float, max_blocks: int | None = None) -> int:
        self.cpu.set_reg(REG_PC, pc & ~1)
        return self.cpu.run(2**64 - 1 if max_blocks is None else max_blocks, timeout_s)

    def fault(self, subject: str) -> str:
        return f"{subject} faulted: {self.cpu.problem() or 'the executor stopped'}"

    def slept(self) -> str | None:
        """"wfi" or "wfe" where the last run stopped after that hint to sleep (sleep.py), else None."""
        return {3: "wfi", 2: "wfe"}.get(self.lib.cbcpu_slept(self.h))

    def insn_addr(self) -> int:
        """In a memory callback: the instruction making the access (cbcpu_insn_addr)."""
        return self.lib.cbcpu_insn_addr(self.h)

    def pend(self, exception: int) -> None:
        self.cpu.pend(exception)

    def stop(self) -> None:
        self.cpu.stop()

    def map_mmio(self, base: int, size: int, read, write) -> None:
        self.regions.append((base, base + size, read, write))

    def hook_writes(self, begin: int, end: int, fn) -> None:
        """fn(addr, size, value) for every store into [begin, end] that reaches a mapped region
        (flash and RAM are the executor's own: a store there is not seen)."""
        self.write_hooks.append((begin, end, fn))

    def close(self) -> None:
        self.cpu.close()

    def _region(self, addr: int, size: int):
        for lo, hi, read, write in self.regions:
            if lo <= addr and addr + size <= hi:
                return lo, read, write
        return None

    def _mmio_read(self, addr, size, out) -> int:
        try:
            hit = self._region(addr, size)
            if hit is None:
                return -1                       # unmapped: the executor stops with its problem line
            out[0] = (hit[1](addr - hit[0], size) or 0) & 0xFFFFFFFF
            return 0
        except Exception as exc:        # a callback must not raise into C: the run stops with it
            self.on_error(f"reading 0x{addr:08x}: {exc}")
            self.cpu.stop()
            return 0

    def _mmio_write(self, addr, size, value) -> int:
        try:
            hit = self._region(addr, size)
            if hit is None:
                return -1
            for begin, end, fn in self.write_hooks:
                if begin <= addr <= end:
                    fn(addr, size, value)
            hit[2](addr - hit[0], size, value)
            return 0
        except Exception as exc:
            self.on_error(f"writing 0x{addr:08x}: {exc}")
            self.cpu.stop()
            return 0

    def _bkpt(self, imm) -> int:
        try:
            self.trap(EXCP_BKPT)
        except Exception as exc:
            self.on_error(f"semihosting at BKPT #{imm}: {exc}")
            return 1
        return 0


class NativeEmulation(_Emulation):
    """One run of an image on the native executor; the report, console, counters, marker edges
    and semihosting are engine._Emulation's, written against the Executor."""

    def _executor(self) -> NativeExecutor:
        board = self.s.board
        return NativeExecutor(self.lib, self.s.device.core, board.flash, board.ram, self._on_intr, self._on_error)

    @property
    def cpu(self) -> Cpu:
        """The executor itself, by register number (the lock-step comparison and the tests)."""
        return self.ex.cpu

    # --- accounting and the run ---------------------------------------------------------------------
    def install_accounting(self) -> None:
        """A detached cbsim accounting that the executor drives; the data-dependent instructions
        are found by the executor's decoder (no disassembly of the image at start-up)."""
        device = self.s.device
        table = timing.TABLES[device.core]
        self.miss = MISS_FN(self._on_miss)
        self.stamper = stamp.Stamper(self.lib, self.cs, self.ex.read, device.core, self.s.dev)
        ws_data = device.flash_ws if device.code_in_flash else 0
        self.sim = self.lib.cbsim_new(None, self.miss, ws_data, self.flash_lo, self.flash_lo + self.flash_len - 1, 1)
        if not self.sim:
            raise UsageError("could not create the simulator's accounting")
        self._set_flash_model()
        dyn = [int(table.get(cls) == timing.DYN) for cls in ("div", "lmul", "lmla")]
        self.lib.cbcpu_set_accounting(self.cpu.h, self.sim, *dyn)
        self.lib.cbcpu_set_hints(self.cpu.h, 1)      # WFI and WFE stop: the run sleeps the core or stops (sleep.py)

    def start_profile(self) -> None:
        """The profile needs each block through cbsim_enter (cbcpu_set_enter; the default run
        keeps the accounting's fast path)."""
        super().start_profile()
        self.lib.cbcpu_set_enter(self.cpu.h, 1)

    def _interrupts_on(self) -> None:
        """The executor stops at the alarm, after an exception return or unmasking, and after WFI
        (cbcpu_set_wake); each block goes through cbsim_enter from now on."""
        self.lib.cbcpu_set_wake(self.cpu.h, 1)

    def _enter(self, number: int) -> None:
        """The executor takes the exception pended, before its next block (frame, vector read)."""
        exceptions.refuse_fp_context(self.cpu_view)
        self.ex.pend(number)

    def execute(self, timeout_s: float) -> float:
        cpu = self.cpu
        cpu.set_reg(REG_PC, self.pc)
        t0 = time.perf_counter()
        status = cpu.run(1, timeout_s)                  # the first block: decode and first instruction
        self.startup_s = time.perf_counter() - self.t_start
        if status == LIMIT:
            status = self._loop(lambda left: cpu.run(2**64 - 1, left),
                                max(0.0, timeout_s - (time.perf_counter() - t0)))
        wall = time.perf_counter() - t0
        problem = cpu.problem()
        if problem and not self.report.problem:
            self.report.problem = problem
        if not self.report.complete and not self.report.problem:
            self.report.problem = f"watchdog: no end after {timeout_s:.0f} s" if status == TIMEOUT else \
                "the image stopped before its end line"
        return wall

    def finish(self, wall: float) -> None:
        insns = self.lib.cbcpu_insns(self.cpu.h)
        super().finish(wall)
        stats = self.report.stats
        stats.setdefault("instructions", insns)
        stats.setdefault("instructions_per_s", insns / wall if wall > 0 else None)
        stats.update({"executor": "native", "startup_s": self.startup_s,
                      "decoded_blocks": self.lib.cbcpu_decoded(self.cpu.h),
                      "code_flushes": self.lib.cbcpu_flushes(self.cpu.h)})
        self.cpu.close()


class Simulator(engine.Simulator):
    """engine.Simulator that runs images on the native executor, unless executor="unicorn" (or
    $CRYPTOBENCH_SIM_EXECUTOR=unicorn) asks for Unicorn, the differential-testing oracle."""

    def __init__(self, device, board, executor: str | None = None):
        super().__init__(device, board)
        self.executor = executor_choice(executor)

    def describe(self) -> dict:
        return {**super().describe(), "executor": self.executor}

    def _emulation(self, elf: Path, on_line):
        return super()._emulation(elf, on_line) if self.executor == "unicorn" else NativeEmulation(self, elf, on_line)

    def run(self, elf: Path, timeout_s: float = 600.0, on_line=lambda line: None, hooks: bool = True,
            profile: bool = False) -> SimReport:
        report = super().run(elf, timeout_s, on_line, hooks, profile)
        report.stats.setdefault("executor", self.executor)     # NativeEmulation.finish names itself
        return report

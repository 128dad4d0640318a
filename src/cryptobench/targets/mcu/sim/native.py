"""cryptobench's own Thumb executor (harness/sim/cbcpu.c) as an Executor (executor.py).

The executor decodes each basic block once, keeps flash and RAM as flat host arrays, and drives
the same native accounting as the Unicorn path (cbsim.c's cbsim_account_* functions), so the
cost model is not repeated here. What the image sees of the target (the counters, SysTick, the
NVIC, semihosting, interrupts) is the one machine's (machine.py), which is given either executor.
Unicorn stays selectable (executor="unicorn" or CRYPTOBENCH_SIM_EXECUTOR=unicorn): it is the
oracle the executor is tested against (tests/test_sim_native.py, lockstep.py)."""
from __future__ import annotations

import ctypes
import os

from ....core.errors import UsageError
from .binding import BKPT_FN, CONSOLE_FN, READ_FN, WRITE_FN
from .executor import EXCP_BKPT

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


class Cpu:
    """One executor instance: the core, its flash and RAM, and the callbacks it needs (kept
    alive here while it runs)."""

    def __init__(self, lib, core: str, flash: tuple[int, int], ram: tuple[int, int], read=None, write=None,
                 bkpt=None):
        self.lib = lib
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

    def __init__(self, lib, core: str, flash: tuple[int, int], ram: tuple[int, int]):
        self.regions: list = []
        self.write_hooks: list = []       # (begin, end, fn) of hook_writes
        self.trap = lambda intno: None
        self.on_error = lambda problem: None
        self.cpu = Cpu(lib, core, flash, ram, self._mmio_read, self._mmio_write, self._bkpt)
        self.lib, self.h = self.cpu.lib, self.cpu.h

    def attach(self, trap, on_error) -> None:
        """The machine's trap and error callbacks (machine.py)."""
        self.trap, self.on_error = trap, on_error

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

    def hold_read(self, addr: int, size: int, value: int, until: int) -> None:
        """The read just served stays the same until the count reaches `until` (cbcpu_hold_read)."""
        self.lib.cbcpu_hold_read(self.h, addr, size, value & 0xFFFFFFFF, until)

    def drop_holds(self) -> None:
        """The read just served had an effect (its horizon was its own cycle): no held read stays."""
        self.lib.cbcpu_drop_holds(self.h)

    def held_reads(self) -> int:
        """Reads of the host's registers the executor answered itself (hold_read)."""
        return self.lib.cbcpu_held_reads(self.h)

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

    def serve_console(self, status_addr: int, status_value: int, data_addr: int, on_text) -> bool:
        """The console UART answered by the executor itself (cbcpu_set_console) instead of by a
        callback per byte and per status poll: its status register reads status_value, its data
        register the last value stored there, and on_text gets the bytes stored there (as Latin-1
        text, one character per byte, as a callback per byte gave them) a line at a time, before
        any other callback. False where a write hook watches the data register (its stores must
        reach the hook): the caller maps the UART itself then."""
        if any(begin <= data_addr <= end for begin, end, _ in self.write_hooks):
            return False

        def deliver(ptr, n):
            try:
                on_text(ctypes.string_at(ptr, n).decode("latin-1"))
            except Exception as exc:        # a callback must not raise into C: the run stops with it
                self.on_error(f"the console's text: {exc}")
                self.cpu.stop()

        self._console = CONSOLE_FN(deliver)            # kept alive while the executor may call it
        self.lib.cbcpu_set_console(self.h, status_addr, status_value & 0xFFFFFFFF, data_addr, self._console)
        return True

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

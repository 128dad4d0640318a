"""What the simulator's runs need of a Thumb executor, and Unicorn behind that shape.

Two executors run images: cryptobench's own (harness/sim/cbcpu.c, native.py's NativeExecutor)
and Unicorn (UnicornExecutor here), the oracle the first is tested against. The one machine
(machine.py), which both the firmware run and `sim run` use, is given an `Executor`:
memory, registers by name, a run from a pc until a stop, a fault, a timeout or a block limit,
a pended exception, a stop from a callback, and memory-mapped registers served by the host.
Callbacks get (offset, size) and (offset, size, value) from a region's base; an exception they
raise is the run's problem (on_error) and stops it, on either executor."""
from __future__ import annotations

from typing import Callable, Protocol

# what run() returns (cbcpu.h's CBCPU_* numbers)
STOPPED, LIMIT, PROBLEM, TIMEOUT = 0, 1, 2, 3
EXCP_SVC, EXCP_BKPT, EXCP_EXCEPTION_EXIT = 2, 7, 8   # QEMU's exception numbers, as a trap callback gets them
REG_ALIASES = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12"}

MmioRead = Callable[[int, int], int]               # (offset, size) -> value
MmioWrite = Callable[[int, int, int], None]        # (offset, size, value)
Trap = Callable[[int], None]                       # (QEMU's exception number): BKPT, exception return, ...
OnError = Callable[[str], None]                    # a callback raised: the run's problem line


class Executor(Protocol):
    name: str       # "native" or "unicorn", as a run's statistics name it
    wakes: bool     # stops by itself after an instruction that may unmask interrupts and an exception return

    def read(self, addr: int, n: int) -> bytes: ...
    def write(self, addr: int, data: bytes) -> None: ...
    def reg(self, name: str) -> int: ...
    def set_reg(self, name: str, value: int) -> None: ...

    def run(self, pc: int, timeout_s: float, max_blocks: int | None = None) -> int:
        """From pc until a stop, a fault, timeout_s or max_blocks blocks: STOPPED, PROBLEM, TIMEOUT or LIMIT."""

    def fault(self, subject: str) -> str:
        """The last run's PROBLEM as one line, `subject` (e.g. "the image") faulted ..."""

    def slept(self) -> str | None:
        """"wfi" or "wfe" where the last run stopped after that hint for the core to sleep (sleep.py)."""

    def insn_addr(self) -> int:
        """In an mmio callback: the accessing instruction's address (Unicorn's: see its class)."""

    def attach(self, trap: Trap, on_error: OnError) -> None:
        """The callbacks of the machine the executor is given to: traps (BKPT, SVC and exception
        return where the executor hands them over) and a callback's failure."""

    def pend(self, exception: int) -> None: ...
    def stop(self) -> None: ...
    def map_mmio(self, base: int, size: int, read: MmioRead, write: MmioWrite) -> None: ...
    def close(self) -> None: ...


class UnicornExecutor:
    """A unicorn.Uc as an Executor. Unicorn takes no pended exception (the runs enter SysTick
    themselves, exceptions.py) and does not stop at an unmasking (the runs hook those sites);
    VTOR is kept here for the host's exception entry, and the event register (sleep.py) for WFE:
    set at the SEV sites hooked (hook_sev) and by the runs' exception returns."""

    name, wakes = "unicorn", False

    def __init__(self, core_model: str):
        import unicorn
        from unicorn import arm_const as A
        self.unicorn, self.A = unicorn, A
        self.trap: Trap = lambda intno: None
        self.on_error: OnError = lambda problem: None
        self.uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
        self.uc.ctl_set_cpu_model(getattr(A, core_model))
        self.uc.hook_add(unicorn.UC_HOOK_INTR, lambda uc_, intno, user: self.trap(intno))
        self.vtor = 0
        self.event = 0                        # the event register (ARMv7-M ARM B1.5.18)
        self.sleep: str | None = None         # the hint the last run stopped at to sleep (slept())
        self.stopped = False                  # stop() was called during the last run
        self.error: str | None = None         # the last run's UcError
        self.unmapped: str | None = None      # its access outside every region (hook_unmapped)

    def attach(self, trap: Trap, on_error: OnError) -> None:
        """The machine's trap and error callbacks (machine.py)."""
        self.trap, self.on_error = trap, on_error

    def reg_id(self, name: str) -> int:
        return getattr(self.A, "UC_ARM_REG_" + REG_ALIASES.get(name, name).upper())

    def reg(self, name: str) -> int:
        if name in ("vtor", "event"):
            return getattr(self, name)
        return self.uc.reg_read(self.reg_id(name))

    def set_reg(self, name: str, value: int) -> None:
        if name == "vtor":
            self.vtor = value & 0xFFFFFFFF
        elif name == "event":
            self.event = value & 1
        else:
            self.uc.reg_write(self.reg_id(name), value & 0xFFFFFFFF)

    def read(self, addr: int, n: int) -> bytes:
        return bytes(self.uc.mem_read(addr, n))

    def write(self, addr: int, data: bytes) -> None:
        """The host's write (a load, an exception frame, a peripheral model's DMA): Unicorn's
        translations of the bytes written are dropped, so code the write replaced runs anew from
        the next block on, as on the native executor (which drops its decoded blocks at the end of
        the block under way), instead of its stale translation."""
        data = bytes(data)
        self.uc.mem_write(addr, data)
        if data:
            self.uc.ctl_remove_cache(addr, addr + len(data))

    def map_ram(self, base: int, size: int) -> None:
        self.uc.mem_map(base, size)

    def map_mmio(self, base: int, size: int, read: MmioRead, write: MmioWrite) -> None:
        self.uc.mmio_map(base, size, lambda uc_, offset, n, user: read(offset, n), None,
                         lambda uc_, offset, n, value, user: write(offset, n, value), None)

    def hook_unmapped(self) -> None:
        """An access outside every mapped region stops the run with the native executor's words."""
        u = self.unicorn

        def on_unmapped(uc_, access, addr, size, value, user) -> bool:
            kind = "write" if access in (u.UC_MEM_WRITE_UNMAPPED, u.UC_MEM_WRITE) else \
                "fetch" if access == u.UC_MEM_FETCH_UNMAPPED else "read"
            self.unmapped = self.unmapped or \
                f"{kind} of {size} bytes at unmapped 0x{addr & 0xFFFFFFFF:08x} (pc=0x{self.reg('pc'):08x})"
            return False
        self.uc.hook_add(u.UC_HOOK_MEM_UNMAPPED, on_unmapped)

    def hook_code(self, addr: int, fn: Callable[[], None]) -> None:
        self.uc.hook_add(self.unicorn.UC_HOOK_CODE, lambda uc_, a, size, user: fn(), begin=addr, end=addr)

    def hook_sev(self, addrs) -> None:
        """SEV at each of `addrs` (codescan.py) sets the event register."""
        for addr in addrs:
            self.hook_code(addr, lambda: setattr(self, "event", 1))

    def hook_writes(self, begin: int, end: int, fn: Callable[[int, int, int], None]) -> None:
        """fn(addr, size, value) for every store into [begin, end]."""
        self.uc.hook_add(self.unicorn.UC_HOOK_MEM_WRITE, lambda uc_, access, addr, size, value, user:
                         fn(addr, size, value), begin=begin, end=end)

    def run(self, pc: int, timeout_s: float, max_blocks: int | None = None) -> int:
        """Unicorn returns alike at a stop and at its timeout: STOPPED for both (the caller looks
        at the clock); PROBLEM with its UcError. No run here has a block limit (max_blocks).
        After YIELD it goes on, after a WFE it goes on where the event register was set (clearing
        it) and stops otherwise, as the native executor does (sleep.py)."""
        import time
        from .sleep import hint_before
        self.error, self.sleep, self.stopped = None, None, False
        deadline = time.perf_counter() + timeout_s
        while True:
            try:
                self.uc.emu_start(pc | 1, 0xFFFFFFFF, timeout=max(1, int((deadline - time.perf_counter()) * 1e6)))
            except self.unicorn.UcError as exc:
                pc = self.reg("pc")
                hint = hint_before(self.read, pc) if exc.errno == self.unicorn.UC_ERR_INSN_INVALID else None
                if hint is None or hint[0] not in ("yield", "wfe") or self.unmapped:
                    self.error = str(exc)
                    return PROBLEM
                if hint[0] == "wfe" and not self.event:
                    self.sleep = "wfe"
                    return STOPPED
                self.event = 0 if hint[0] == "wfe" else self.event
                if time.perf_counter() >= deadline:
                    return STOPPED
                continue
            hint = None if self.stopped else hint_before(self.read, self.reg("pc"))
            self.sleep = "wfi" if hint and hint[0] == "wfi" else None    # QEMU halted after the WFI
            return STOPPED

    def slept(self) -> str | None:
        """"wfi" or "wfe" where the last run stopped after that hint to sleep (sleep.py), else None."""
        return self.sleep

    def fault(self, subject: str) -> str:
        if self.unmapped:
            return f"{subject} faulted: {self.unmapped}"
        return f"{subject} faulted ({self.error}) at pc=0x{self.reg('pc'):08x}"

    def insn_addr(self) -> int:
        """Unicorn's PC in a memory callback: the accessing instruction, or (with the block hook in
        place) sometimes its block's start; stamp.py finds the instruction itself."""
        return self.reg("pc")

    def pend(self, exception: int) -> None:
        raise NotImplementedError("Unicorn takes no pended exception: the run enters it (exceptions.py)")

    def stop(self) -> None:
        self.stopped = True
        self.uc.emu_stop()

    def close(self) -> None:
        pass

"""`cryptobench sim run`: an image cryptobench did not build, with the cycle accounting, on either
executor (executor.py's Executor: Unicorn, or the native one that imagerun_native.py picks
where the image fits); the counters, semihosting, markers, the run loop and the result are written
once here. What follows describes Unicorn; imagerun_native.py says what differs natively.

The image (image.py) is written at its load addresses into the device's memory map; it boots
from its vector table. SysTick (systick.py) counts the model's cycles; with TICKINT the native
accounting's alarm (cbsim_set_alarm) stops the engine before the block that passes the next wrap,
and the exception is taken here (exceptions.py); its return, a branch to EXC_RETURN, reaches
the interrupt hook (Unicorn hands QEMU's exception-exit to it) and is emulated there too.
Semihosting (semihosting.py) and the marker (markers.py) are recorded with the model's
cycles and instructions.

The image is data from anyone (docs/promises.md, "What `sim run` guarantees for an untrusted
image"): the memory map is the image's regions and nothing else (an access anywhere else faults,
on either executor, with the same problem line), the peripheral region is plainmemory.py's
bounded plain memory, the console, the call log and the segments are boundedlog.py's logs, and
the run stops at an instruction limit as well as at its timeout (limits.py)."""
from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field

from ....core.errors import UsageError
from . import codescan, consoleuart, exceptions, limits, markers, semihosting, sleep, stamp, timing
from .interrupts import PeripheralInterrupts, nvic_word
from .boundedlog import ConsoleLog, HeadTail, SegmentLog
from .cstructs import fill_line_offsets
from .devices import Device
from .engine import CPU_MODEL, MISS_FN, PPB, PPB_SIZE, Simulator, set_flash_model, unicorn_handle
from .executor import EXCP_BKPT, EXCP_EXCEPTION_EXIT, EXCP_SVC, PROBLEM, TIMEOUT, UnicornExecutor
from .native import NativeExecutor
from .image import PAGE, Image, Region
from .peripherals.registry import PeripheralBus, PeripheralError
from .plainmemory import PlainMemory, PlainMemoryFull
from .profile import FunctionProfile
from .systick import EXCEPTION as SYSTICK, CycleCounter, SysTick

DWT_CYCCNT, SCB_VTOR, SYST_CVR = 0xE0001004, 0xE000ED08, 0xE000E018
SVCALL = 11                   # SVCall's exception number (ARMv7-M ARM B1.5.2)
STAMPED = ((0xE0001000, 0xE0001007), (0xE000E010, 0xE000E01B))   # DWT CTRL, CYCCNT; SysTick: stamp.py
MAX_READS = 100_000           # counter reads kept for the JSON document
NO_ALARM = 0xFFFFFFFFFFFFFFFF
POLL_MASKED = 1 << 16        # a pending SysTick under a mask no unmasking site lifts is looked at this often
MARKER_PAGE = "the marker register"
PLAIN = ("peripherals", MARKER_PAGE)   # regions that are plainmemory.py's, on both executors
ACCOUNTING_FAILED = "the simulator's accounting failed (a watched call nested deeper than 256, or out of memory)"


def _segments() -> SegmentLog:
    return SegmentLog(limits.SEGMENTS_HEAD, limits.SEGMENTS_TAIL)


def _console() -> ConsoleLog:
    return ConsoleLog(limits.CONSOLE_HEAD, limits.CONSOLE_TAIL)


def _calls() -> HeadTail:
    return HeadTail(limits.CALLS_HEAD, limits.CALLS_TAIL)


@dataclass
class ImageResult:
    segments: SegmentLog = field(default_factory=_segments)     # {label, cycles, instructions}, first and last
    stats: dict = field(default_factory=dict)
    exit_code: int | None = None
    problem: str = ""
    timed_out: bool = False
    console: ConsoleLog = field(default_factory=_console)       # (stream, text), first and last characters
    counter_reads: list = field(default_factory=list)      # (cycles, insns) at each SysTick CVR / DWT CYCCNT read
    semihosting_calls: HeadTail = field(default_factory=_calls)  # (cycles, insns, label), first and last
    exceptions_taken: int = 0
    notes: list = field(default_factory=list)
    max_instructions: int | None = None                         # the instruction limit the run had
    limit_reached: bool = False                                 # it stopped there
    profile: list | None = None                                 # --profile: profile.py's rows, by cycles


def _label(call: semihosting.Call) -> str:
    text = call.text[:64].strip().replace("\n", " ")
    text = text if len(text) <= 24 else text[:21] + "..."
    return f"{call.name}" + (f" '{text}'" if text else "") + (f" ({call.exit_code})" if call.exit_code is not None else "")


class _Cpu:
    """The register and memory view exceptions.py and semihosting.py work on."""

    def __init__(self, run: "ImageRun"):
        self.run = run

    def reg(self, name):
        return self.run.ex.reg(name)

    def set_reg(self, name, value):
        self.run.ex.set_reg(name, value)

    def read(self, addr, n):
        return self.run.read_memory(addr, n)

    def read32(self, addr):
        return int.from_bytes(self.read(addr, 4), "little")

    def write32(self, addr, value):
        self.run.write_word(addr, value)


class _DmaMemory:
    """The image's memory as a peripheral model's own DMA reads and writes it (the executor's)."""

    def __init__(self, run: "ImageRun"):
        self.run = run

    def read(self, addr: int, n: int) -> bytes:
        return self.run.ex.read(addr, n)

    def write(self, addr: int, data: bytes) -> None:
        self.run.ex.write(addr, data)


def _bind(lib) -> None:
    if not hasattr(lib, "cbsim_set_insn_limit"):
        from .engine import library_path
        raise UsageError(f"{library_path()} is older than this cryptobench (it has no cbsim_set_insn_limit): "
                         "rebuild it with ./setup.sh")
    lib.cbsim_set_alarm.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]
    lib.cbsim_alarm_fired.argtypes = [ctypes.c_void_p]
    lib.cbsim_add_cycles.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.cbsim_watch.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.cbsim_events.restype = ctypes.c_size_t
    lib.cbsim_events.argtypes = [ctypes.c_void_p]
    u32, u64 = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
    lib.cbsim_event_at.argtypes = [ctypes.c_void_p, ctypes.c_size_t, u32, u32, u64, u64]
    lib.cbsim_events_dropped.restype = ctypes.c_uint64
    lib.cbsim_events_dropped.argtypes = [ctypes.c_void_p]
    lib.cbsim_set_insn_limit.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.cbsim_limit_hit.argtypes = [ctypes.c_void_p]


class ImageRun:
    """One run of `image` on `device` (with `board`'s flash and RAM), cut at `marker`, on
    `executor` ("unicorn", or "native": call imagerun_native.fits first)."""

    def __init__(self, image: Image, device: Device, board, marker: markers.Marker, executor: str = "unicorn",
                 profile: bool = False):
        import capstone
        self._check_marker(image, marker)
        self.image, self.device, self.marker = image, device, marker
        self.profile = FunctionProfile(image.symbols) if profile else None
        self._common_state(device, board, image)
        self.cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
        self.cs.detail = True            # the timing model costs each block from its disassembly
        self.cpu = _Cpu(self)
        self.plain_regions = [(r.start, r.start + r.size) for r in self.regions if r.what in PLAIN]
        self.ex = self._native(board) if executor == "native" else self._unicorn()
        self.ex.map_mmio(PPB, PPB_SIZE, self._ppb_read, self._ppb_write)
        self._hook_marker()

    def _unicorn(self) -> UnicornExecutor:
        """Unicorn with the image's regions: RAM, except the peripheral region (and a marker
        register's page), which are the bounded plain memory; then the segments' bytes. Unicorn
        refusing a mapping is one line, not UC_ERR_MAP's traceback."""
        import unicorn
        ex = UnicornExecutor(CPU_MODEL[self.device.core], self._on_intr, self._stop)
        try:
            for r in self.regions:
                if r.what in PLAIN:
                    self._map_plain(ex, r.start, r.size)
                else:
                    ex.map_ram(r.start, r.size)
            for seg in self.image.segments:
                ex.write(seg.load, seg.data)
        except unicorn.UcError as exc:
            raise UsageError(f"{self.image.path}: the simulator cannot map the image's memory ({exc}): "
                             + ", ".join(f"0x{r.start:08x}-0x{r.start + r.size - 1:08x} {r.what}"
                                         for r in self.regions)) from None
        ex.hook_unmapped()
        return ex

    def _native(self, board):
        """The native executor: the board's flash and RAM hold the segments; the peripheral region
        and a marker page are mapped plain memory; it stops by itself where a pending SysTick may
        be taken (cbcpu_set_wake)."""
        ex = NativeExecutor(self.lib, self.device.core, board.flash, board.ram, self._on_intr, self._stop)
        for r in self.regions:
            if r.what in PLAIN:
                self._map_plain(ex, r.start, r.size)
        for seg in self.image.segments:
            if seg.data:
                ex.write(seg.load, seg.data)
        ex.set_reg("vtor", self.vtor)
        self.lib.cbcpu_set_wake(ex.h, 1)
        return ex

    def _map_plain(self, ex, base: int, size: int) -> None:
        ex.map_mmio(base, size, lambda offset, n: self._plain_read(base + offset, n),
                    lambda offset, n, value: self._plain_write(base + offset, n, value))

    @staticmethod
    def _check_marker(image: Image, marker: markers.Marker) -> None:
        for name in marker.functions:
            if name in image.symbols:
                continue
            near = sorted(n for n in image.symbols if name.lower() in n.lower())[:5]
            raise UsageError(f"--marker function:{name}: no function {name} in the symbols of "
                             f"{image.path}" + (f"; similar: {', '.join(near)}" if near else
                                                "; expected a function symbol (STT_FUNC) of the image"))

    def _common_state(self, device: Device, board, image: Image) -> None:
        """What a run keeps whatever its engine: the accounting's library, the result, the
        counters and the pending SysTick."""
        self.simulator = Simulator(device, board)
        self.lib = self.simulator.lib
        _bind(self.lib)
        self.result = ImageResult(notes=list(image.notes))
        self.recorder = markers.Recorder(self.marker, None, None, on_window=self._window)
        self.last_call = None                     # (cycles, insns, label) of the last semihosting call
        self.plain = PlainMemory()
        self.uart = consoleuart.of_board(board)   # (kind, base): its status reads ready (consoleuart.py)
        if self.uart is not None:
            self.result.notes.append(f"the board's console UART ({self.uart[0]} at 0x{self.uart[1]:08x}) reads ready "
                                     "to send and its data register's bytes are the console")
        self.bus = PeripheralBus(device.peripheral_models, _DmaMemory(self), core_clock_hz=device.clock_hz,
                                 core=device.core)   # crypto peripherals (peripherals/)
        for line in self.bus.describe():
            self.result.notes.append(f"peripheral modelled: {line}")
        self.regions = list(image.regions) + self._marker_pages()
        self.deadline = None                      # perf_counter() time the run must stop by (run())
        self.systick, self.dwt, self.vtor, self.ppb = SysTick(), CycleCounter(), image.vector_table, {}
        self.pending, self.ended, self.sim, self.miss = False, False, None, None
        self.irqs = PeripheralInterrupts(self.bus)   # the NVIC's enabled lines and the rises taken
        self.irq_waiting = False                  # a peripheral's interrupt is due but masked
        self.irq_early = False                    # the last alarm stop came before its event
        self.semihosting_state: dict = {}
        self.reads_dropped = 0
        self.sleep_cycles = 0                     # cycles the core slept in WFI / WFE (sleep.py)

    # --- the memory map and the marker -------------------------------------------------------------
    def _marker_pages(self) -> list[Region]:
        """A page of plain memory for a marker register that no region covers (in the system
        region none may be: that is SysTick's, DWT's and the SCB's)."""
        m, pages = self.marker, []
        if m.kind not in ("register", "pair"):
            return pages
        for addr in sorted({m.set_at[0], m.clear_at[0]}):
            if addr + 4 > limits.SYSTEM_REGION:
                raise UsageError(f"--marker: 0x{addr:08x} lies in the system region (0x{limits.SYSTEM_REGION:08x}-"
                                 "0xffffffff: SysTick, DWT, SCB); expected a GPIO data or set/clear register")
            if not any(r.start <= addr < r.start + r.size for r in self.image.regions + pages):
                page = addr & ~(PAGE - 1)
                pages.append(Region(page, PAGE, MARKER_PAGE))
                self.result.notes.append(f"0x{page:08x}-0x{page + PAGE - 1:08x} is plain memory for the marker "
                                         "register")
        return pages

    def _hook_marker(self) -> None:
        m = self.marker
        if m.kind not in ("register", "pair"):
            return
        for addr in {m.set_at[0], m.clear_at[0]}:
            self.ex.hook_writes(max(addr - 7, 0), addr + 3, self._on_marker_write)

    def check_read(self, addr: int, n: int) -> None:
        """A read of n bytes at addr by the host (semihosting, an exception frame) lies in one
        mapped region: checked before anything is allocated for it."""
        if n > limits.MAX_TRANSFER:
            raise ValueError(f"a read of {n} bytes at 0x{addr:08x}, more than the "
                             f"{limits.size_text(limits.MAX_TRANSFER)} the host reads at once")
        if not any(r.start <= addr and addr + n <= r.start + r.size for r in self.regions):
            raise ValueError(f"read of {n} bytes at unmapped 0x{addr:08x}" if n <= 4 else
                             f"read of {n} bytes at 0x{addr:08x}: not all in one mapped region")

    def _plain(self, addr: int, size: int) -> bool:
        """Whether [addr, addr + size) is plain memory (the peripheral region, a marker page)."""
        return any(lo <= addr and addr + size <= hi for lo, hi in self.plain_regions)

    def read_memory(self, addr: int, n: int) -> bytes:
        """n bytes of the target for the host (semihosting, exception frames), checked before
        anything is allocated for them (check_read)."""
        self.check_read(addr, n)
        if self._plain(addr, n):
            return self.plain.read_bytes(addr, n)
        return self.ex.read(addr, n)

    def write_word(self, addr: int, value: int) -> None:
        """A word the host writes (an exception frame, a semihosting result): in plain memory
        there, in the executor's memory in a region it holds, anywhere else a fault (ValueError)."""
        if self._plain(addr, 4):
            self.plain.write(addr, 4, value)
            return
        unmapped = ValueError(f"write of 4 bytes at unmapped 0x{addr & 0xFFFFFFFF:08x}")
        if not any(r.start <= addr and addr + 4 <= r.start + r.size for r in self.regions):
            raise unmapped
        try:
            self.ex.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"))
        except UsageError:                   # a region the native executor has no memory for
            raise unmapped from None

    def _on_marker_write(self, addr, size, value):
        self.recorder.write(addr, value, size, self.cycles(), self.insns())

    def _window(self, start: tuple, end: tuple, number: int) -> None:
        """A marker window closed: (cycles, insns) at its start and end."""
        self.result.segments.append({"label": f"window {number}", "cycles": end[0] - start[0],
                                     "instructions": end[1] - start[1]})

    def _plain_read(self, addr, size):
        try:
            if self.bus and self.bus.owns(addr):     # a crypto peripheral's page: its state at this instruction
                return self.bus.access(addr, size, lambda: self.stamper.at_access(self.sim, self.ex, addr))
            if self.uart is not None and self.uart[1] <= addr < self.uart[1] + 0x1000:
                ready = consoleuart.status(self.uart[0], addr - self.uart[1])
                if ready is not None:        # the board's console UART: always ready to send
                    return ready
            return self.plain.read(addr, size)
        except Exception as exc:             # a callback must not raise into the executor: the run stops with it
            self._stop(f"reading 0x{addr:08x}: {exc}")
            return 0

    def _plain_write(self, addr, size, value):
        try:
            if self.bus and self.bus.owns(addr):
                stall = self.bus.access(addr, size, lambda: self.stamper.at_access(self.sim, self.ex, addr), value)
                if stall:                    # the bus held the store: the core waited
                    self.lib.cbsim_add_cycles(self.sim, stall)
                self._rearm()                # the store may have started an operation whose end interrupts
                return
            if self.uart is not None and addr == self.uart[1] + consoleuart.DATA.get(self.uart[0], -1):
                self.result.console.append("stdout", chr(value & 0xFF))    # the console UART's byte
            self.plain.write(addr, size, value)
        except PlainMemoryFull as exc:
            self._stop(f"the image faulted: {exc}")
        except PeripheralError as exc:
            self._stop(str(exc))
        except Exception as exc:
            self._stop(f"writing 0x{addr:08x}: {exc}")

    def _past_deadline(self) -> bool:
        """The run's time is up (looked at on each semihosting call: an image calling the host in
        every block must not overrun it)."""
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.result.timed_out = True
            self.ended = True
            self.ex.stop()
            return True
        return False

    # --- counters ---------------------------------------------------------------------------------
    def cycles(self) -> int:
        return self.lib.cbsim_cycles(self.sim)

    def insns(self) -> int:
        return self.lib.cbsim_insns(self.sim)

    def _ppb_read(self, offset, size):
        addr = PPB + offset
        now = self._now(addr)
        value = self.systick.read(addr, now)
        value = self.dwt.read(addr, now) if value is None else value
        if addr in (DWT_CYCCNT, SYST_CVR):
            if len(self.result.counter_reads) < MAX_READS:
                self.result.counter_reads.append((now, self.insns()))
            else:
                self.reads_dropped += 1
        if addr == SCB_VTOR:
            return self.vtor if self.device.core != "cortex-m0" else 0
        nvic = nvic_word(addr)
        if nvic is not None:                 # ISER and ICER both read the enable bits
            return sum(1 << b for b in range(32) if 32 * nvic + b in self.irqs.enabled)
        return self.ppb.get(addr, 0) if value is None else value

    def _now(self, addr: int) -> int:
        """The count an access to `addr` sees: the counters' registers at the accessing instruction
        (stamp.py), the rest at its block's end."""
        if any(lo <= addr <= hi for lo, hi in STAMPED):
            return self.stamper.at_access(self.sim, self.ex, addr)
        return self.cycles()

    def _ppb_write(self, offset, size, value):
        addr = PPB + offset
        if self.irqs.write(addr, value):     # NVIC ISER/ICER: write 1 to enable or disable; 0s do nothing
            self._rearm()
            return
        now = self._now(addr)              # once per access: under Unicorn it counts the block's accesses
        if self.systick.write(addr, value, now):
            if not self.pending:                                       # the next wrap may have moved
                self.lib.cbsim_set_alarm(self.sim, self._alarm(), 0)
            return
        if self.dwt.write(addr, value, now):
            return
        if addr == SCB_VTOR:
            if self.device.core == "cortex-m0":      # ARMv6-M's VTOR is optional; the Cortex-M0 has none (RAZ/WI)
                note = "the image wrote SCB->VTOR, which the Cortex-M0 does not have: ignored"
                if note not in self.result.notes:
                    self.result.notes.append(note)
                return
            self.vtor = value & ~0x7F
            self.ex.set_reg("vtor", self.vtor)      # the native executor enters exceptions through its own copy
        self.ppb[addr] = value

    # --- semihosting and exception return ---------------------------------------------------------
    def _on_intr(self, intno):
        """A trap of the executor: an exception return (Unicorn's), BKPT, or what is not served."""
        pc = self.cpu.reg("pc")
        if intno == EXCP_EXCEPTION_EXIT:
            try:
                exceptions.leave(self.cpu, pc | 1)
            except exceptions.ExceptionError as exc:
                self._stop(f"{exc} (at pc=0x{pc:08x})")
            except ValueError as exc:        # the frame is not in mapped memory (_Cpu.read)
                self._stop(f"the image faulted: {exc} (exception return at pc=0x{pc:08x})")
            self.ex.set_reg("event", 1)      # an exception return sets the event register (sleep.py)
            if self.pending or self.irq_waiting:   # back from a handler: a pending one goes before the next block
                self.lib.cbsim_set_alarm(self.sim, self.cycles(), 0)
            return
        if intno == EXCP_SVC:
            self._svc(pc)
            return
        if intno == EXCP_BKPT and self.cpu.read(pc, 2) == b"\xab\xbe":
            try:
                self._semihost(pc)
            except Exception as exc:         # a callback must not raise into the executor
                self._stop(f"semihosting at pc=0x{pc:08x}: {exc}")
            return
        what = {1: "an undefined instruction (UsageFault)", 7: "a BKPT other than 0xAB (semihosting)"}
        self._stop(f"the image raised {what.get(intno, f'exception {intno}')} at pc=0x{pc:08x}: not served "
                   "by the simulator (only SysTick, the peripheral models' interrupts, SVC, semihosting and "
                   "exception return are)")

    def _svc(self, pc: int) -> None:
        """Unicorn's SVC (its pc already after the instruction): exception 11 entered through the
        vector table, as the native executor enters it (ARMv7-M ARM B1.5.6, B1.5.8): the frame with
        the return address after the SVC, its vector read charged; no interrupt latency, as
        natively (docs/sim-model.md)."""
        try:
            self._enter(SVCALL)
        except exceptions.ExceptionError as exc:
            self._stop(f"{exc} (SVC at pc=0x{pc - 2:08x})")
        except ValueError as exc:
            self._stop(f"the image faulted: {exc} (pc=0x{pc - 2:08x})")   # the native executor's words

    def _semihost(self, pc: int) -> None:
        if self._past_deadline():
            return
        op, arg = self.cpu.reg("r0"), self.cpu.reg("r1")
        now = self.cycles()
        try:
            call = semihosting.serve(op, arg, self.cpu, now, self.device.clock_hz, self.semihosting_state)
        except semihosting.SemihostingError as exc:
            self._stop(f"{exc} (at pc=0x{pc:08x})")
            return
        self._log_call((now, self.insns(), _label(call)))
        self.result.console.append(call.stream, call.text)
        if call.exit_code is not None:
            self.result.exit_code = call.exit_code
            self.ended = True
            self.ex.stop()
            return
        if call.r0 is not None:
            self.cpu.set_reg("r0", call.r0)
        self.cpu.set_reg("pc", (pc + 2) | 1)

    def _log_call(self, entry: tuple) -> None:
        """A semihosting call into the bounded call log, and the segment since the last one."""
        self.result.semihosting_calls.append(entry)
        if self.marker.kind == "semihosting" and self.last_call is not None:
            (c0, i0, a), (c1, i1, b) = self.last_call, entry
            self.result.segments.append({"label": f"{a} -> {b}", "cycles": c1 - c0, "instructions": i1 - i0})
        self.last_call = entry

    def _stop(self, problem: str) -> None:
        self.result.problem = self.result.problem or problem
        self.ended = True
        self.ex.stop()

    # --- the accounting ---------------------------------------------------------------------------
    def _on_miss(self, bp) -> int:
        b = bp.contents
        try:
            insns = list(self.cs.disasm(self.ex.read(b.addr, b.size), b.addr))
            cost = timing.block_cost(self.device.core, self.simulator.dev, insns, self.timing_report)
        except Exception as exc:        # a model bug must stop the run, loudly
            self.result.problem = f"timing model failed on the block at 0x{b.addr:08x}: {exc}"
            return -1
        b.cycles, b.insns, b.end, b.taken_extra = cost.cycles, cost.insns, cost.end, cost.taken_extra
        fill_line_offsets(b, insns, cost.offsets)
        return 0

    def prepare(self, max_instructions: int | None = None) -> None:
        """Everything before the first instruction (the accounting, the scan of the image's
        functions), with the instruction limit; run() calls it when it was not called."""
        self._install()
        if max_instructions is not None:
            self.lib.cbsim_set_insn_limit(self.sim, max_instructions)
            self.result.max_instructions = max_instructions

    def _limit_reached(self) -> bool:
        """The instruction limit stopped the run: its problem line."""
        if not self.lib.cbsim_limit_hit(self.sim):
            return False
        self.result.limit_reached = True
        self._stop(f"stopped at the instruction limit: {self.insns()} instructions executed "
                   f"(--max-instructions {self.result.max_instructions})")
        return True

    def _install(self) -> None:
        """The accounting (cbsim.c) on the run's executor, and the watched function."""
        self.timing_report = timing.TimingReport()
        self.miss = MISS_FN(self._on_miss)
        d = self.device
        self.stamper = stamp.Stamper(self.lib, self.cs, self.ex.read, d.core, self.simulator.dev)
        flash = self.simulator.board.flash
        if isinstance(self.ex, UnicornExecutor):
            sites = self._scan()
            dyns, unmasking = sites.dynamic, sites.unmasking
            handle = unicorn_handle(self.ex.uc)
        else:                            # the native executor finds its data-dependent instructions itself
            dyns, unmasking, handle = [], [], None
        self.sim = self.lib.cbsim_new(handle, self.miss, d.flash_ws if d.code_in_flash else 0,
                                      flash[0], flash[0] + flash[1] - 1, len(dyns) + 1)
        if not self.sim:
            raise UsageError("could not install the simulator's hooks")
        set_flash_model(self.lib, self.sim, self.simulator, flash[0], flash[1])
        if handle is None:
            table = timing.TABLES[d.core]
            dyn = [int(table.get(cls) == timing.DYN) for cls in ("div", "lmul", "lmla")]
            self.lib.cbcpu_set_accounting(self.ex.h, self.sim, *dyn)
        elif d.flash_ws and d.code_in_flash and d.core not in timing.ARMV6M:
            self.result.notes.append("flash data wait states on an ARMv7-M core under Unicorn: its read hook can leave "
                                     "the IT state set after a load from flash (docs/sim-model.md, 'The executor'); "
                                     "check the image's own results")
        for addr, kind, ra, rb in dyns:
            self.lib.cbsim_add_dynamic(self.sim, addr, kind, self.ex.reg_id(ra), self.ex.reg_id(rb))
        for addr in unmasking:
            self.ex.hook_code(addr, self._unmasking)
        if handle is not None:
            self.ex.hook_sev(sites.sev)
        for name in self.marker.functions:
            self.lib.cbsim_watch(self.sim, self.image.symbols[name][0])
        if self.profile is not None:
            self.profile.start(self.lib, self.sim)

    def _scan(self):
        """Unicorn's hooks need them (codescan.py): the data-dependent instructions, the unmasking
        sites and the SEVs of the image's functions; code that start-up copies to RAM is scanned there, in a copy put
        back afterwards."""
        ex = self.ex
        funcs = [f for f in self.image.funcs
                 if any(r.start <= f[0] and f[0] + f[1] <= r.start + r.size for r in self.regions)]
        moved = [(seg.run, ex.read(seg.run, len(seg.data))) for seg in self.image.segments
                 if seg.run != seg.load and seg.data]
        for seg in self.image.segments:
            if seg.run != seg.load and seg.data:
                ex.write(seg.run, seg.data)
        sites = self.simulator._code_sites(self.cs, ex.read, funcs)
        raw = codescan.raw_sites([(seg.load, seg.data) for seg in self.image.segments]
                                 + [(seg.run, seg.data) for seg in self.image.segments if seg.run != seg.load])
        sites.sev = sorted(set(sites.sev) | set(raw.sev))
        sites.unmasking = sorted(set(sites.unmasking) | set(raw.unmasking))
        for addr, before in moved:
            ex.write(addr, before)
        return sites

    def _unmasking(self):
        """An instruction that may unmask interrupts is about to run (Unicorn's hook): a pending
        SysTick or peripheral interrupt is looked at before the next block."""
        if self.pending or self.irq_waiting:
            self.lib.cbsim_set_alarm(self.sim, self.cycles(), 0)

    # --- the run ----------------------------------------------------------------------------------
    def _alarm(self) -> int:
        """The next cycle an exception may become due: SysTick's next wrap, or a peripheral model's
        next interrupt (one whose line is enabled in the NVIC)."""
        wrap = self.systick.next_wrap()
        alarm = NO_ALARM if wrap is None else wrap
        due = self.irqs.next_due(self.cycles()) if self.bus else None
        return alarm if due is None else min(alarm, due)

    def _rearm(self) -> None:
        """After a store that may have changed when an exception is due: the alarm again (unless
        one is waiting for an unmasking already)."""
        if self.sim is not None and not (self.pending or self.irq_waiting):
            self.lib.cbsim_set_alarm(self.sim, self._alarm(), 0)

    def _systick_due(self) -> bool:
        wrap = self.systick.next_wrap()
        return wrap is not None and wrap <= self.cycles()

    def _take_irq(self) -> bool:
        """The first peripheral interrupt due (enabled in the NVIC, its model's line high), taken
        now unless masked; True when none is left waiting. All external interrupts have one
        priority here (the NVIC's priority registers are not modelled): the lowest number first."""
        due = self.irqs.due(self.cycles()) if self.bus else None
        if due is None:
            return True
        if self.cpu.reg("primask") & 1 or exceptions.handler_mode(self.cpu):
            return False
        irq, rise = due
        self.irqs.taken(irq, rise)
        try:
            self._enter(16 + irq)
        except exceptions.ExceptionError as exc:
            self._stop(str(exc))
            return True
        except ValueError as exc:
            self._stop(f"the image faulted: {exc} (exception entry at pc=0x{self.cpu.reg('pc'):08x})")
            return True
        self.lib.cbsim_add_cycles(self.sim, exceptions.ENTRY_CYCLES[self.device.core])
        self.result.exceptions_taken += 1
        return True

    def _take_systick(self) -> bool:
        """The pending SysTick exception, taken now unless masked (PRIMASK, or a handler running)."""
        if self.cpu.reg("primask") & 1 or exceptions.handler_mode(self.cpu):
            return False
        fault = None
        try:
            self._enter(SYSTICK)
        except exceptions.ExceptionError as exc:
            self._stop(str(exc))
            return True
        except ValueError as exc:            # the frame is not in mapped memory (_Cpu): counted as the
            pc = self.cpu.reg("pc")          # native executor counts it, whose entry faults after the pend
            fault = f"the image faulted: {exc} (exception entry at pc=0x{pc:08x})"
        self.lib.cbsim_add_cycles(self.sim, exceptions.ENTRY_CYCLES[self.device.core])
        self.systick.take(self.cycles())
        self.result.exceptions_taken += 1
        if fault:
            self._stop(fault)
        return True

    def _enter(self, number: int) -> None:
        """Exception `number`'s entry. The native executor takes it pended (frame, vector read
        through the accounting) before the next block; on Unicorn the host enters it here: the
        frame pushed, the handler's address set. Its vector is a data read: from flash it waits as
        any other (the TRMs' latency is at 0 wait states)."""
        if not isinstance(self.ex, UnicornExecutor):
            exceptions.refuse_fp_context(self.cpu)
            self.ex.pend(number)
            return
        exceptions.enter(self.cpu, number, self.vtor)
        vector = self.vtor + 4 * number
        flash = self.simulator.board.flash
        if flash[0] <= vector < flash[0] + flash[1]:
            self.lib.cbsim_account_flash_read(self.sim, vector, 4)

    def run(self, timeout_s: float) -> ImageResult:
        if self.sim is None:
            self.prepare()
        sp, reset = self.image.read_word(self.image.vector_table), self.image.read_word(self.image.vector_table + 4)
        self.cpu.set_reg("msp", sp)
        self.ex.set_reg("pc", reset | 1)
        t0 = time.perf_counter()
        self.deadline = t0 + timeout_s
        try:
            self._loop()
        finally:
            self._finish(time.perf_counter() - t0)
        return self.result

    def _loop(self) -> None:
        """Runs the executor from stop to stop until the image ends: at each stop the alarm
        (SysTick's wrap) or a wake (native: an unmasking or an exception return) may take SysTick."""
        ex, lib, deadline = self.ex, self.lib, self.deadline
        while not self.ended:
            left = deadline - time.perf_counter()
            if left <= 0:
                self.result.timed_out = True
                break
            if self.pending or self.irq_waiting:   # masked: an unmasking or a return wakes it, else a late poll
                lib.cbsim_set_alarm(self.sim, self.cycles() + POLL_MASKED, 1)
            else:
                # a peripheral's interrupt is due once the count reaches its event: the alarm stops
                # before the block that would pass it, so where that stop found nothing due yet,
                # the next block runs first (its model state is then the event's)
                lib.cbsim_set_alarm(self.sim, self._alarm(), 1 if self.irq_early else 0)
            status = ex.run(ex.reg("pc") | 1, left)
            if self.ended or self._limit_reached():
                break
            if status == PROBLEM:
                self._stop(self._problem())
                break
            if status == TIMEOUT:
                self.result.timed_out = True
                break
            if lib.cbsim_alarm_fired(self.sim) or ((self.pending or self.irq_waiting) and ex.wakes):
                self.irq_early = False
                if self.pending or self._systick_due():
                    self.pending = not self._take_systick()
                elif self.bus and self.irqs.enabled:        # one exception entered per stop: SysTick first
                    entered = self.result.exceptions_taken
                    self.irq_waiting = not self._take_irq()
                    self.irq_early = self.result.exceptions_taken == entered and not self.irq_waiting
                else:
                    self.pending = not self._take_systick()
            elif lib.cbsim_failed(self.sim):
                self._stop(self.result.problem or ACCOUNTING_FAILED)
            elif ex.slept():
                self._sleep(ex.slept())
            elif not ex.wakes:           # Unicorn returns alike at a stop and at its timeout
                self.result.timed_out = time.perf_counter() >= deadline - 0.01
                if not self.result.timed_out:
                    self._stop(f"the image stopped at pc=0x{ex.reg('pc'):08x} without SYS_EXIT")
                break

    def _sleep(self, hint: str) -> None:
        """WFI, or a WFE that found no event (sleep.py): the core sleeps until the first interrupt
        coming (SysTick's next wrap with TICKINT, an enabled peripheral line), its cycles counted
        as slept, and the interrupt is then taken unless masked; with none coming the run stops."""
        now = self.cycles()
        masked = bool(self.cpu.reg("primask") & 1) or exceptions.handler_mode(self.cpu)
        coming = [now if self.pending or self.irq_waiting else None, self.systick.next_wrap(),
                  self.irqs.sleep_until(now) if self.bus else None]
        wake = sleep.wake_at(hint, now, coming, masked)
        if wake is None:
            at = sleep.hint_before(self.cpu.read, self.ex.reg("pc") & ~1)
            self._stop(sleep.never_wakes(hint, at[1] if at else self.ex.reg("pc") & ~1, masked))
            return
        if wake > now:
            self.lib.cbsim_add_cycles(self.sim, wake - now)
            self.sleep_cycles += wake - now
        if self.pending or self._systick_due():
            self.pending = not self._take_systick()
        elif self.bus and self.irqs.enabled:
            self.irq_waiting = not self._take_irq()

    def _problem(self) -> str:
        """A run that stopped with a problem: the accounting's failure, else the executor's fault."""
        if self.lib.cbsim_failed(self.sim):
            return self.result.problem or ACCOUNTING_FAILED
        return self.ex.fault("the image")

    def _function_segments(self) -> None:
        """The watched function's calls (cbsim's event log, itself bounded) as segments."""
        lib, sim = self.lib, self.sim
        events = []
        entries = {self.image.symbols[n][0] & ~1: n for n in self.marker.functions}
        kind, addr, c, i = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint64(), ctypes.c_uint64()
        for n in range(lib.cbsim_events(sim)):
            lib.cbsim_event_at(sim, n, ctypes.byref(kind), ctypes.byref(addr), ctypes.byref(c), ctypes.byref(i))
            events.append((kind.value, c.value, i.value, entries.get(addr.value, "")))
        for seg in markers.cut(self.marker, [], [], events):
            self.result.segments.append(seg)
        dropped = lib.cbsim_events_dropped(sim)
        if dropped:
            self.result.notes.append(f"{self.marker.spec()}: the first {len(events)} entries and returns were "
                                     f"recorded, {dropped} more were not (their calls are no segments)")

    def _finish(self, wall: float) -> None:
        lib, sim, r = self.lib, self.sim, self.result
        if self.marker.kind == "function":
            self._function_segments()
        if self.profile is not None:
            r.profile = self.profile.rows(sim)
        insns = lib.cbsim_insns(sim)
        r.stats = {"executor": self.ex.name, "cycles": lib.cbsim_cycles(sim), "instructions": insns,
                   "sleep_cycles": self.sleep_cycles, "wall_s": wall,
                   "instructions_per_s": insns / wall if wall > 0 else None,
                   "unknown_mnemonics": sorted(self.timing_report.unknown_mnemonics)}
        if lib.cbsim_failed(sim) and not r.problem:
            r.problem = ACCOUNTING_FAILED
        r.notes += sorted(self.systick.notes)
        if self.reads_dropped:
            r.notes.append(f"counter reads: the first {MAX_READS} are listed, {self.reads_dropped} more were not")
        lib.cbsim_free(sim)
        self.sim = self.miss = None
        self.ex.close()

"""The one Cortex-M machine an image meets, whoever built it.

A `Machine` is given its executor (executor.py's Executor: cryptobench's own, native.py, or
Unicorn) and a client, and owns everything between them: the private peripheral bus (DWT's
cycle counter, SysTick, the NVIC's enable bits, the SCB's VTOR and plain storage for the rest),
the peripheral models' bus (peripherals/), interrupt entry and return, SVC, WFI and WFE
(sleep.py), semihosting (semihosting.py), the cycle accounting (harness/sim/cbsim.c) and the
one run loop. Two clients use it: the firmware run (simulator.py: cryptobench's protocol into a
report) and `cryptobench sim run` (imagerun.py: an image result). A client supplies the memory
the image sees besides the executor's own flash and RAM (the board's registers, or the image's
bounded plain memory), reads and writes of the target's memory for the host (`TargetMemory`),
and takes what the machine reports (console text, counter reads, semihosting calls).

The run loop: the executor runs from stop to stop. The accounting's alarm (cbsim_set_alarm)
stops it before the block that passes the next cycle an exception may become due (SysTick's
next wrap with TICKINT, an enabled peripheral line's next event); the exception is taken at that
stop unless masked (PRIMASK, or a handler running: one priority), then looked at again where an
instruction may unmask (the native executor stops there by itself; Unicorn's hooks at the sites
codescan.py finds) or after POLL_MASKED cycles. WFI, and a WFE that found no event, stop the
executor: the core sleeps until the first interrupt coming, its cycles counted as sleep, or the
run stops when none is coming. The native executor takes exceptions pended (frame and vector
read through the accounting, before its next block); on Unicorn the machine enters them itself
(exceptions.py) and emulates the exception return Unicorn hands to the trap callback."""
from __future__ import annotations

import ctypes
import gc
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ....core.errors import UsageError
from . import binding, codescan, exceptions, semihosting, sleep, stamp, timing
from .binding import MISS_FN, fill_line_offsets
from .devices import Device, FlashCache
from .executor import EXCP_BKPT, EXCP_EXCEPTION_EXIT, EXCP_SVC, LIMIT, PROBLEM, TIMEOUT
from .insns import Decoder
from .interrupts import PeripheralInterrupts, nvic_word
from .peripherals.registry import PeripheralBus
from .systick import EXCEPTION as SYSTICK, CycleCounter, SysTick

PPB, PPB_SIZE = 0xE0000000, 0x00100000
DWT_CYCCNT, SCB_VTOR, SYST_CVR = 0xE0001004, 0xE000ED08, 0xE000E018
COUNTERS = (DWT_CYCCNT, SYST_CVR)      # the reads a client logs (the cells' cycles come from that log)
STAMPED = ((0xE0001000, 0xE0001007), (0xE000E010, 0xE000E01B))   # DWT CTRL, CYCCNT; SysTick: stamp.py
SVCALL = 11                   # SVCall's exception number (ARMv7-M ARM B1.5.2)
NO_ALARM = 0xFFFFFFFFFFFFFFFF
POLL_MASKED = 1 << 16        # a due exception under a mask no unmasking site lifts is looked at this often
ACCOUNTING_FAILED = "the simulator's accounting failed (a watched call nested deeper than 256, or out of memory)"
CPU_MODEL = {"cortex-m0": "UC_CPU_ARM_CORTEX_M0", "cortex-m0plus": "UC_CPU_ARM_CORTEX_M0",
             "cortex-m3": "UC_CPU_ARM_CORTEX_M3", "cortex-m4": "UC_CPU_ARM_CORTEX_M4",
             "cortex-m7": "UC_CPU_ARM_CORTEX_M7", "cortex-m33": "UC_CPU_ARM_CORTEX_M33"}


def flash_cache(device: Device) -> FlashCache | None:
    """The flash memory system cbsim.c models line by line (the fetch unit, its prefetch and any
    caches: docs/sim-model.md "Fetch bandwidth") wherever code runs from flash that waits."""
    return FlashCache.of(device) if device.code_in_flash and device.flash_ws > 0 else None


def device_params(device: Device) -> timing.DeviceParams:
    """What the timing model is told of the device (its block costs)."""
    return timing.DeviceParams(flash_ws=device.flash_ws, prefetch=device.prefetch, flash_width=device.flash_width,
                               fast_multiplier=device.fast_multiplier, code_in_flash=device.code_in_flash,
                               fetch_modelled=flash_cache(device) is not None)


def set_flash_model(lib, sim, device: Device, flash_lo: int, flash_len: int) -> None:
    """The device's flash lines and caches on the accounting `sim` (cbsim_set_flash), when the
    profile has them."""
    fc = flash_cache(device)
    if fc is not None and lib.cbsim_set_flash(
            sim, fc.line_bytes.bit_length() - 1, device.flash_ws + fc.miss_extra, int(device.prefetch),
            flash_lo, flash_lo + flash_len - 1, fc.sets(fc.icache_lines, fc.icache_ways),
            fc.icache_ways, fc.sets(fc.dcache_lines, fc.dcache_ways), fc.dcache_ways,
            int(device.fetch_shared_port)) != 0:
        raise UsageError("could not set up the simulator's flash cache model (out of memory, or set after a block was costed)")


class TargetMemory(Protocol):
    """The target's registers and memory as the host reads and writes them (exception frames,
    semihosting): a read outside the mapped memory, or a write there, is a ValueError."""

    def reg(self, name: str) -> int: ...
    def set_reg(self, name: str, value: int) -> None: ...
    def read(self, addr: int, n: int) -> bytes: ...
    def read32(self, addr: int) -> int: ...
    def write32(self, addr: int, value: int) -> None: ...


class ExecutorMemory:
    """TargetMemory straight on the executor (the firmware run: the board's flash and RAM)."""

    def __init__(self, ex):
        self.ex = ex

    def reg(self, name):
        return self.ex.reg(name)

    def set_reg(self, name, value):
        self.ex.set_reg(name, value)

    def read(self, addr, n):
        return self.ex.read(addr, n)

    def read32(self, addr):
        return int.from_bytes(self.ex.read(addr, 4), "little")

    def write32(self, addr, value):
        self.ex.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"))


@dataclass
class Code:
    """What the machine is told of the image's code: its functions (address, size) at their run
    addresses, its load segments (load address, run address, bytes: start-up copies the ones whose
    run address differs) and the functions whose entries and returns the accounting watches."""
    funcs: list = field(default_factory=list)
    segments: list = field(default_factory=list)
    watched: list = field(default_factory=list)


@dataclass
class Outcome:
    """How the run ended, as the machine saw it; the client words it for its own result."""
    ended: bool = False          # SYS_EXIT, a client's end (the firmware's last line) or a stop
    exit_code: int | None = None
    problem: str = ""
    timed_out: bool = False
    limit_reached: bool = False


class Machine:
    """One run of one image on `device` (its `board`'s flash for the accounting's wait states),
    on `executor`, for `client`-supplied memory (`memory`) and callbacks:

    on_console(stream, text)               console text (semihosting)
    on_counter(addr, stamp)                a read of DWT CYCCNT or SysTick's current value, at its stamp
    on_semihosting(call, cycles, insns)    every semihosting call served
    """

    def __init__(self, device: Device, board, executor, memory: TargetMemory | None = None, *,
                 vtor: int, on_console: Callable[[str, str], None] = lambda stream, text: None,
                 on_counter: Callable[[int, int], None] = lambda addr, stamp: None,
                 on_semihosting: Callable = lambda call, cycles, insns: None):
        import capstone
        self.t_start = time.perf_counter()
        self.device, self.board = device, board
        self.dev = device_params(device)
        self.lib = binding.load_library()
        self.ex = executor
        self.mem = memory if memory is not None else ExecutorMemory(executor)
        self.on_console, self.on_counter, self.on_semihosting = on_console, on_counter, on_semihosting
        self.cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
        self.cs.detail = True             # the timing model costs each block from its disassembly
        # ... read once, straight from capstone's records (insns.py)
        self.decoder = Decoder(self.cs, regs_access=timing.reads_regs_access(device.core))
        self.outcome = Outcome()
        self.notes: list[str] = []
        self.sim = None                   # the native accounting (cbsim.c), once installed
        self.miss = None                  # its callback for blocks it has no cost for (kept alive while it runs)
        self.stamper = None
        self.timing_report = timing.TimingReport()
        self.systick, self.dwt, self.ppb = SysTick(), CycleCounter(), {}
        self.vtor = vtor
        self.pending = False              # SysTick's exception is pending (masked)
        self.irq_waiting = False          # a peripheral's interrupt is due but masked
        self.irq_early = False            # the last alarm stop came before its event
        self.woken = False                # the native executor stops where an exception may be taken
        self.sleep_cycles = 0             # cycles the core slept in WFI / WFE (sleep.py)
        self.exceptions_taken = 0
        self.semihosting_state: dict = {}
        self.deadline = None              # perf_counter() time the run must stop by (run())
        self.startup_s = None
        self.bus = PeripheralBus(device.peripheral_models, executor, core_clock_hz=device.clock_hz,
                                 core=device.core)        # crypto peripherals (peripherals/)
        self.irqs = PeripheralInterrupts(self.bus)        # the NVIC's enabled lines and the rises taken
        executor.attach(self._on_trap, self._on_error)
        executor.set_reg("vtor", vtor)
        executor.map_mmio(PPB, PPB_SIZE, self._ppb_read, self._ppb_write)

    @property
    def native(self) -> bool:
        return self.ex.name == "native"

    # --- counts -----------------------------------------------------------------------------------
    def cycles(self) -> int:
        return self.lib.cbsim_cycles(self.sim) if self.sim else 0

    def insns(self) -> int:
        return self.lib.cbsim_insns(self.sim) if self.sim else 0

    def stamp(self, addr: int) -> int:
        """The cycle of the instruction accessing `addr` (stamp.py), as a register sees it."""
        return self.stamper.at_access(self.sim, self.ex, addr) if self.sim else 0

    def add_cycles(self, n: int) -> None:
        if self.sim and n:
            self.lib.cbsim_add_cycles(self.sim, n)

    # --- stops ------------------------------------------------------------------------------------
    def stop(self, problem: str) -> None:
        """The run stops with `problem` (the first one is the run's)."""
        self.outcome.problem = self.outcome.problem or problem
        self.outcome.ended = True
        self.ex.stop()

    def end(self) -> None:
        """The run is complete (the client saw its end): it stops before the next block."""
        self.outcome.ended = True
        self.ex.stop()

    def _on_error(self, problem: str) -> None:
        """An executor callback raised (the executor stops the run): the first problem is the run's."""
        self.outcome.problem = self.outcome.problem or problem
        self.outcome.ended = True

    # --- the peripheral models' bus ---------------------------------------------------------------
    def bus_read(self, addr: int, size: int) -> int:
        """A peripheral model's register, at the accessing instruction's cycle. On the native
        executor the read is held (cbcpu_hold_read) until the model's state next changes
        (read_horizon): a status register polled while an engine works is answered by the
        executor itself, each poll iteration still executed and counted, without a call here. A
        read that may have had an effect (its horizon is its own cycle: a FIFO pop can move the
        status) drops every held read, as a store does."""
        if not self.native or self.sim is None:
            return self.bus.access(addr, size, lambda: self.stamp(addr))
        now = self.stamp(addr)
        value = self.bus.access(addr, size, lambda: now)
        until = self.bus.read_horizon(addr, size, now)
        if until > now:
            self.ex.hold_read(addr, size, value, until)
        else:
            self.ex.drop_holds()
        return value

    def bus_write(self, addr: int, size: int, value: int) -> None:
        """A store to a model's register: a store the busy engine holds stalls the core; it may
        have started an operation whose end interrupts (the alarm again)."""
        self.add_cycles(self.bus.access(addr, size, lambda: self.stamp(addr), value))
        self._rearm()

    def map_bus(self, taken_pages) -> None:
        """The models' pages as executor regions of their own (the firmware run: the board's
        marker and console registers hold `taken_pages`, which no model may share)."""
        taken = set(taken_pages)
        for base, size in self.bus.pages():
            clash = [p for p in range(base, base + size, 0x1000) if p in taken]
            if clash:
                raise UsageError(f"device {self.device.name}: a peripheral model shares the page 0x{clash[0]:08x} "
                                 "with the board's marker or console registers")
            self.ex.map_mmio(base, size, lambda offset, n, base=base: self.bus_read(base + offset, n),
                             lambda offset, n, value, base=base: self.bus_write(base + offset, n, value))

    # --- the private peripheral bus ---------------------------------------------------------------
    def _now(self, addr: int) -> int:
        """The count an access to `addr` sees: the counters' registers at the accessing instruction
        (stamp.py), the rest at its block's end. Once per access: under Unicorn the stamper counts
        the block's accesses."""
        if any(lo <= addr <= hi for lo, hi in STAMPED):
            return self.stamp(addr)
        return self.cycles()

    def _ppb_read(self, offset, size):
        addr = PPB + offset
        now = self._now(addr)
        value = self.systick.read(addr, now)
        value = self.dwt.read(addr, now) if value is None else value
        if addr in COUNTERS:
            self.on_counter(addr, now)
        if addr == SCB_VTOR:
            return self.vtor if self.device.core != "cortex-m0" else 0
        nvic = nvic_word(addr)
        if nvic is not None:                 # ISER and ICER both read the enable bits
            return sum(1 << b for b in range(32) if 32 * nvic + b in self.irqs.enabled)
        return self.ppb.get(addr, 0) if value is None else value

    def _ppb_write(self, offset, size, value):
        addr = PPB + offset
        if self.irqs.write(addr, value):     # NVIC ISER/ICER: write 1 to enable or disable; 0s do nothing
            if self.irqs.enabled:
                self._wake()
            self._rearm()
            return
        now = self._now(addr)
        if self.systick.write(addr, value, now):
            if self.systick.next_wrap() is not None:
                self._wake()
            if not self.pending:                                       # the next wrap may have moved
                self.lib.cbsim_set_alarm(self.sim, self._alarm(), 0)
            return
        if self.dwt.write(addr, value, now):
            return
        if addr == SCB_VTOR:
            if self.device.core == "cortex-m0":      # ARMv6-M's VTOR is optional; the Cortex-M0 has none (RAZ/WI)
                note = "the image wrote SCB->VTOR, which the Cortex-M0 does not have: ignored"
                if note not in self.notes:
                    self.notes.append(note)
                return
            self.vtor = value & ~0x7F
            self.ex.set_reg("vtor", self.vtor)      # the native executor enters exceptions through its own copy
        self.ppb[addr] = value

    def _wake(self) -> None:
        """From the first exception that may come on, the native executor stops at the alarm,
        after an exception return or unmasking (cbcpu_set_wake); each block goes through
        cbsim_enter from then on (until then the accounting's fast path runs)."""
        if self.native and not self.woken:
            self.lib.cbcpu_set_wake(self.ex.h, 1)
        self.woken = True

    # --- traps: exception return, SVC, semihosting ------------------------------------------------
    def _on_trap(self, intno):
        """A trap of the executor: an exception return (Unicorn's), SVC (Unicorn's), BKPT, or what
        is not served."""
        pc = self.mem.reg("pc")
        if intno == EXCP_EXCEPTION_EXIT:
            try:
                exceptions.leave(self.mem, pc | 1)
            except exceptions.ExceptionError as exc:
                self.stop(f"{exc} (at pc=0x{pc:08x})")
            except ValueError as exc:        # the frame is not in mapped memory
                self.stop(f"the image faulted: {exc} (exception return at pc=0x{pc:08x})")
            self.ex.set_reg("event", 1)      # an exception return sets the event register (sleep.py)
            if self.pending or self.irq_waiting:   # back from a handler: a pending one goes before the next block
                self.lib.cbsim_set_alarm(self.sim, self.cycles(), 0)
            return
        if intno == EXCP_SVC:
            self._svc(pc)
            return
        if intno == EXCP_BKPT and self.mem.read(pc, 2) == b"\xab\xbe":
            try:
                self._semihost(pc)
            except Exception as exc:         # a callback must not raise into the executor
                self.stop(f"semihosting at pc=0x{pc:08x}: {exc}")
            return
        what = {1: "an undefined instruction (UsageFault)", 7: "a BKPT other than 0xAB (semihosting)"}
        self.stop(f"the image raised {what.get(intno, f'exception {intno}')} at pc=0x{pc:08x}: not served "
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
            self.stop(f"{exc} (SVC at pc=0x{pc - 2:08x})")
        except ValueError as exc:
            self.stop(f"the image faulted: {exc} (pc=0x{pc - 2:08x})")   # the native executor's words

    def _past_deadline(self) -> bool:
        """The run's time is up (looked at on each semihosting call: an image calling the host in
        every block must not overrun it)."""
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.outcome.timed_out = self.outcome.ended = True
            self.ex.stop()
            return True
        return False

    def _semihost(self, pc: int) -> None:
        if self._past_deadline():
            return
        op, arg = self.mem.reg("r0"), self.mem.reg("r1")
        now = self.cycles()
        try:
            call = semihosting.serve(op, arg, self.mem, now, self.device.clock_hz, self.semihosting_state)
        except semihosting.SemihostingError as exc:
            self.stop(f"{exc} (at pc=0x{pc:08x})")
            return
        self.on_semihosting(call, now, self.insns())
        if call.text:
            self.on_console(call.stream, call.text)
        if call.exit_code is not None:
            self.outcome.exit_code = call.exit_code
            self.outcome.ended = True
            self.ex.stop()
            return
        if self.outcome.ended:                # the console's text ended the run (the firmware's last line)
            return
        if call.r0 is not None:
            self.mem.set_reg("r0", call.r0)
        self.mem.set_reg("pc", (pc + 2) | 1)

    # --- the accounting ---------------------------------------------------------------------------
    def _on_miss(self, bp) -> int:
        """cbsim.c asks the cost of a block it has not seen: the timing model's, or -1 to stop."""
        b = bp.contents
        try:
            insns = self.decoder.decode(self.ex.read(b.addr, b.size), b.addr)
            cost = timing.block_cost(self.device.core, self.dev, insns, self.timing_report)
        except Exception as exc:        # a model bug must stop the run, loudly
            self.outcome.problem = self.outcome.problem or f"timing model failed on the block at 0x{b.addr:08x}: {exc}"
            return -1
        b.cycles, b.insns, b.end, b.taken_extra = cost.cycles, cost.insns, cost.end, cost.taken_extra
        b.entry_extra = cost.entry_extra
        fill_line_offsets(b, insns, cost.offsets)
        return 0

    def install(self, code: Code, max_instructions: int | None = None, profile=None) -> None:
        """The accounting (cbsim.c) on the executor: the flash model, the data-dependent
        instructions (the native executor's decoder finds them itself; Unicorn is told the sites
        codescan.py finds), the watched functions, the profile (profile.py) and the instruction
        limit."""
        d, lib = self.device, self.lib
        self.miss = MISS_FN(self._on_miss)
        self.stamper = stamp.Stamper(lib, self.cs, self.ex.read, d.core, self.dev)
        flash = self.board.flash
        if self.native:
            sites, handle = codescan.Sites(), None
        else:
            sites, handle = self._scan(code), binding.unicorn_handle(self.ex.uc)
        self.sim = lib.cbsim_new(handle, self.miss, d.flash_ws if d.code_in_flash else 0,
                                 flash[0], flash[0] + flash[1] - 1, len(sites.dynamic) + 1)
        if not self.sim:
            raise UsageError("could not install the simulator's accounting")
        set_flash_model(lib, self.sim, d, flash[0], flash[1])
        if self.native:
            table = timing.TABLES[d.core]
            dyn = [int(table.get(cls) == timing.DYN) for cls in ("div", "lmul", "lmla")]
            lib.cbcpu_set_accounting(self.ex.h, self.sim, *dyn)
            lib.cbcpu_set_hints(self.ex.h, 1)     # WFI and WFE stop: the run sleeps the core or stops (sleep.py)
        elif d.flash_ws and d.code_in_flash and d.core not in timing.ARMV6M:
            self.notes.append("flash data wait states on an ARMv7-M core under Unicorn: its read hook can leave "
                              "the IT state set after a load from flash (docs/sim-model.md, 'The executor'); "
                              "check the image's own results")
        for addr, kind, ra, rb in sites.dynamic:
            lib.cbsim_add_dynamic(self.sim, addr, kind, self.ex.reg_id(ra), self.ex.reg_id(rb))
        for addr in sites.unmasking:
            self.ex.hook_code(addr, self._unmasking)
        if not self.native:
            self.ex.hook_sev(sites.sev)   # SEV sets the event register a WFE consumes (sleep.py)
        for addr in code.watched:
            lib.cbsim_watch(self.sim, addr)
        if profile is not None:
            profile.start(lib, self.sim)
        if max_instructions is not None:
            lib.cbsim_set_insn_limit(self.sim, max_instructions)
        if self.native and (code.watched or profile is not None or max_instructions is not None):
            # the watched calls, the profile and the instruction limit are cbsim_enter's: every
            # block through it (the accounting's fast path leaves them out)
            lib.cbcpu_set_enter(self.ex.h, 1)

    def _scan(self, code: Code) -> codescan.Sites:
        """Unicorn's hooks need them (codescan.py): the data-dependent instructions, the unmasking
        sites and the SEVs of the image's functions; code that start-up copies to RAM is scanned
        there, in a copy put back afterwards."""
        ex = self.ex
        moved = [(run, ex.read(run, len(data))) for load, run, data in code.segments if run != load and data]
        for load, run, data in code.segments:
            if run != load and data:
                ex.write(run, data)
        sites = codescan.scan(self.cs, ex.read, code.funcs, self.device.core, self.dev)
        raw = codescan.raw_sites([(load, data) for load, run, data in code.segments]
                                 + [(run, data) for load, run, data in code.segments if run != load])
        sites.sev = sorted(set(sites.sev) | set(raw.sev))
        sites.unmasking = sorted(set(sites.unmasking) | set(raw.unmasking))
        for addr, before in moved:
            ex.write(addr, before)
        return sites

    def _unmasking(self):
        """An instruction that may unmask interrupts is about to run (Unicorn's hook): a pending
        SysTick or peripheral interrupt is looked at before the next block."""
        if (self.pending or self.irq_waiting) and self.sim is not None:
            self.lib.cbsim_set_alarm(self.sim, self.cycles(), 0)

    # --- exceptions -------------------------------------------------------------------------------
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

    def _masked(self) -> bool:
        return bool(self.mem.reg("primask") & 1) or exceptions.handler_mode(self.mem)

    def _take_irq(self) -> bool:
        """The first peripheral interrupt due (enabled in the NVIC, its model's line high), taken
        now unless masked; True when none is left waiting. All external interrupts have one
        priority here (the NVIC's priority registers are not modelled): the lowest number first.
        Entry costs the core's interrupt latency (exceptions.ENTRY_CYCLES, from its TRM)."""
        due = self.irqs.due(self.cycles()) if self.bus else None
        if due is None:
            return True
        if self._masked():
            return False
        irq, rise = due
        self.irqs.taken(irq, rise)
        try:
            self._enter(16 + irq)
        except exceptions.ExceptionError as exc:
            self.stop(f"interrupt {irq}: {exc}")
            return True
        except ValueError as exc:
            self.stop(f"the image faulted: {exc} (exception entry at pc=0x{self.mem.reg('pc'):08x})")
            return True
        self.add_cycles(exceptions.ENTRY_CYCLES[self.device.core])
        self.exceptions_taken += 1
        return True

    def _take_systick(self) -> bool:
        """The pending SysTick exception, taken now unless masked (PRIMASK, or a handler running)."""
        if self._masked():
            return False
        fault = None
        try:
            self._enter(SYSTICK)
        except exceptions.ExceptionError as exc:
            self.stop(str(exc))
            return True
        except ValueError as exc:            # the frame is not in mapped memory: counted as the
            pc = self.mem.reg("pc")          # native executor counts it, whose entry faults after the pend
            fault = f"the image faulted: {exc} (exception entry at pc=0x{pc:08x})"
        self.add_cycles(exceptions.ENTRY_CYCLES[self.device.core])
        self.systick.take(self.cycles())
        self.exceptions_taken += 1
        if fault:
            self.stop(fault)
        return True

    def _take_due(self) -> None:
        """At a stop where an exception may be due: one entered per stop, SysTick first."""
        if self.pending or self._systick_due():
            self.pending = not self._take_systick()
        elif self.bus and self.irqs.enabled:
            entered = self.exceptions_taken
            self.irq_waiting = not self._take_irq()
            self.irq_early = self.exceptions_taken == entered and not self.irq_waiting
        else:
            self.pending = not self._take_systick()

    def _enter(self, number: int) -> None:
        """Exception `number`'s entry. The native executor takes it pended (frame, vector read
        through the accounting) before the next block; on Unicorn the host enters it here: the
        frame pushed, the handler's address set. Its vector is a data read: from flash it waits as
        any other (the TRMs' latency is at 0 wait states)."""
        if self.native:
            exceptions.refuse_fp_context(self.mem)
            self.ex.pend(number)
            return
        exceptions.enter(self.mem, number, self.vtor)
        vector = self.vtor + 4 * number
        flash = self.board.flash
        if flash[0] <= vector < flash[0] + flash[1]:
            self.lib.cbsim_account_flash_read(self.sim, vector, 4)

    # --- the run ----------------------------------------------------------------------------------
    def run(self, sp: int | None, pc: int, timeout_s: float) -> float:
        """Runs the image from `pc` (with the main stack pointer `sp`, when given) until it ends,
        faults, reaches the instruction limit or times out; returns the wall-clock seconds."""
        if sp is not None:
            self.mem.set_reg("msp", sp)
        self.ex.set_reg("pc", pc | 1)
        t0 = time.perf_counter()
        self.deadline = t0 + timeout_s
        # No cyclic garbage collection while the image runs, as timeit times: a collection of the
        # whole heap (tens of milliseconds) would land in the run's wall time at random. What the
        # run allocates (the blocks' costing, the callbacks' records) is freed by reference
        # counting; anything cyclic is collected once the run returns.
        collecting = gc.isenabled()
        gc.disable()
        try:
            status = self.ex.run(pc | 1, timeout_s, max_blocks=1) if self.native else LIMIT
            self.startup_s = time.perf_counter() - self.t_start
            if status == LIMIT or not self._after(status):
                self._loop()
        finally:
            if collecting:
                gc.enable()
        return time.perf_counter() - t0

    def _loop(self) -> None:
        """Runs the executor from stop to stop until the image ends."""
        ex, lib = self.ex, self.lib
        while not self.outcome.ended:
            left = self.deadline - time.perf_counter()
            if left <= 0:
                self.outcome.timed_out = True
                break
            if self.sim is not None:
                if self.pending or self.irq_waiting:   # masked: an unmasking or a return wakes it, else a late poll
                    lib.cbsim_set_alarm(self.sim, self.cycles() + POLL_MASKED, 1)
                else:
                    # a peripheral's interrupt is due once the count reaches its event: the alarm stops
                    # before the block that would pass it, so where that stop found nothing due yet,
                    # the next block runs first (its model state is then the event's)
                    lib.cbsim_set_alarm(self.sim, self._alarm(), 1 if self.irq_early else 0)
            status = ex.run(ex.reg("pc") | 1, left)
            if self._after(status):
                break

    def _after(self, status: int) -> bool:
        """One stop of the executor looked at: True when the run is over."""
        ex, lib, o = self.ex, self.lib, self.outcome
        if o.ended or self._limit_reached():
            return True
        if status == PROBLEM:
            self.stop(self._problem())
            return True
        if status == TIMEOUT:
            o.timed_out = True
            return True
        if self.sim is None:
            if not ex.wakes:                 # no accounting (a bench of the bare executor): one run
                o.timed_out = time.perf_counter() >= self.deadline - 0.01
                return True
            return False
        if lib.cbsim_alarm_fired(self.sim) or ((self.pending or self.irq_waiting) and ex.wakes):
            self.irq_early = False
            self._take_due()
        elif lib.cbsim_failed(self.sim):
            self.stop(o.problem or ACCOUNTING_FAILED)
        elif ex.slept():
            self._sleep(ex.slept())
        elif not ex.wakes:           # Unicorn returns alike at a stop and at its timeout
            o.timed_out = time.perf_counter() >= self.deadline - 0.01
            if not o.timed_out:
                self.stop(f"the image stopped at pc=0x{ex.reg('pc'):08x} without SYS_EXIT")
            return True
        return o.ended

    def _sleep(self, hint: str) -> None:
        """WFI, or a WFE that found no event (sleep.py): the core sleeps until the first interrupt
        coming (SysTick's next wrap with TICKINT, an enabled peripheral line), its cycles counted
        as slept, and the interrupt is then taken unless masked; with none coming the run stops."""
        now = self.cycles()
        masked = self._masked()
        coming = [now if self.pending or self.irq_waiting else None, self.systick.next_wrap(),
                  self.irqs.sleep_until(now) if self.bus else None]
        wake = sleep.wake_at(hint, now, coming, masked)
        if wake is None:
            at = sleep.hint_before(self.mem.read, self.ex.reg("pc") & ~1)
            self.stop(sleep.never_wakes(hint, at[1] if at else self.ex.reg("pc") & ~1, masked))
            return
        if wake > now:
            self.add_cycles(wake - now)
            self.sleep_cycles += wake - now
        if self.pending or self._systick_due():
            self.pending = not self._take_systick()
        elif self.bus and self.irqs.enabled:
            self.irq_waiting = not self._take_irq()

    def _limit_reached(self) -> bool:
        """The instruction limit stopped the run: its problem line."""
        if self.sim is None or not self.lib.cbsim_limit_hit(self.sim):
            return False
        self.outcome.limit_reached = True
        self.stop(f"stopped at the instruction limit: {self.insns()} instructions executed")
        return True

    def _problem(self) -> str:
        """A run that stopped with a problem: the accounting's failure, else the executor's fault."""
        if self.sim is not None and self.lib.cbsim_failed(self.sim):
            return self.outcome.problem or ACCOUNTING_FAILED
        return self.ex.fault("the image")

    def stats(self, wall: float) -> dict:
        """The run's statistics: what the accounting counted, and the executor's own."""
        lib, sim = self.lib, self.sim
        if sim is None:
            return {"executor": self.ex.name, "wall_s": wall}
        insns = lib.cbsim_insns(sim)
        out = {"executor": self.ex.name, "cycles": lib.cbsim_cycles(sim), "instructions": insns,
               "sleep_cycles": self.sleep_cycles, "exceptions_taken": self.exceptions_taken,
               "blocks": lib.cbsim_blocks(sim), "distinct_blocks": lib.cbsim_distinct_blocks(sim),
               "wall_s": wall, "instructions_per_s": insns / wall if wall > 0 else None,
               "unknown_mnemonics": sorted(self.timing_report.unknown_mnemonics)}
        if self.device.flash_cache and flash_cache(self.device) is not None:   # caches to count
            counts = (ctypes.c_uint64 * 4)()
            lib.cbsim_flash_stats(sim, ctypes.byref(counts))
            out["flash_cache"] = dict(zip(("icache_hits", "icache_misses", "dcache_hits", "dcache_misses"), counts))
        if self.native:
            out.update({"startup_s": self.startup_s, "decoded_blocks": lib.cbcpu_decoded(self.ex.h),
                        "code_flushes": lib.cbcpu_flushes(self.ex.h), "held_reads": self.ex.held_reads()})
        undeclared = self.bus.undeclared() if self.bus else []
        if undeclared:                   # registers no model declares, or does not model: read 0, stores ignored
            out["undeclared_registers"] = undeclared
        if lib.cbsim_failed(sim) and not self.outcome.problem:
            self.outcome.problem = ACCOUNTING_FAILED
        return out

    def close(self) -> None:
        """Frees the accounting and the executor (after the client has read what it needs)."""
        if self.sim:
            self.lib.cbsim_free(self.sim)
        self.sim = self.miss = None
        self.ex.close()

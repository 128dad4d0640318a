"""Running a firmware ELF on Unicorn with cycle accounting.

Unicorn executes the very image built for QEMU and boards. What Unicorn lacks, the host provides:
semihosting (BKPT 0xAB: SYS_WRITE0, SYS_EXIT), the UART consoles of boards.toml, and the core's
cycle counter (DWT CYCCNT, SysTick's current value), which return the model's count. Every read of
the counter is logged with the full 64-bit count, so a cell's cycles come from the log, exact even
where SysTick's 24 bits would wrap. The costs are added up natively (harness/sim/cbsim.c) from
the per-block costs of timing.py."""
from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import UsageError
from ....core.extras import require
from ..firmware.protocol import FirmwareReport, LineSplitter
from ....core.paths import REPO_ROOT
from ..boards import Board
from . import codescan, consoleuart, exceptions, sleep, stamp, timing
from .executor import EXCP_EXCEPTION_EXIT, EXCP_SVC, PROBLEM, STOPPED, TIMEOUT, UnicornExecutor
from .interrupts import ExecutorCpu, PeripheralInterrupts
from .cstructs import MISS_FN, CbBlock, check_sizes, fill_line_offsets  # noqa: F401 (CbBlock: the tests' import)
from .devices import Device, FlashCache
from .peripherals.registry import PeripheralBus
from .profile import FunctionProfile

LIB_DEFAULT = REPO_ROOT / "build" / "sim" / "libcbsim.so"
DWT_CYCCNT = 0xE0001004
SYST_CVR = 0xE000E018
SYST_TOP = 0x00FFFFFF
PPB, PPB_SIZE = 0xE0000000, 0x00100000
NO_ALARM = 0xFFFFFFFFFFFFFFFF
POLL_MASKED = 1 << 16        # a due interrupt under PRIMASK or in a handler is looked at again this often
CPU_MODEL = {"cortex-m0": "UC_CPU_ARM_CORTEX_M0", "cortex-m0plus": "UC_CPU_ARM_CORTEX_M0",
             "cortex-m3": "UC_CPU_ARM_CORTEX_M3", "cortex-m4": "UC_CPU_ARM_CORTEX_M4",
             "cortex-m7": "UC_CPU_ARM_CORTEX_M7", "cortex-m33": "UC_CPU_ARM_CORTEX_M33"}
UART_DATA = consoleuart.DATA     # data register offsets


UNICORN_TESTED = ("2.1.",)       # unicorn releases whose private engine handle unicorn_handle() was tested with
UNICORN_INSTALL = ".venv/bin/pip install 'unicorn>=2.1,<2.2'"


def library_path() -> Path:
    return Path(os.environ.get("CRYPTOBENCH_SIM_LIB", LIB_DEFAULT))


def require_sim() -> None:
    """The simulator's Python modules (the `sim` extra), or one line that says how to install them."""
    for module in ("unicorn", "capstone", "elftools"):
        require(module, "sim", "the simulator (--target sim:CORE)")


def load_library() -> ctypes.CDLL:
    require_sim()
    path = library_path()
    if not path.exists():
        raise UsageError(f"the simulator's native part {path} is missing: run ./setup.sh "
                         "(it builds harness/sim against the unicorn package)")
    lib = ctypes.CDLL(str(path))
    check_sizes(lib, path)
    lib.cbsim_new.restype = ctypes.c_void_p
    lib.cbsim_new.argtypes = [ctypes.c_void_p, MISS_FN, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64,
                              ctypes.c_size_t]
    lib.cbsim_add_dynamic.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    for name in ("cbsim_cycles", "cbsim_insns", "cbsim_blocks"):
        getattr(lib, name).restype = ctypes.c_uint64
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    lib.cbsim_distinct_blocks.restype = ctypes.c_size_t
    lib.cbsim_distinct_blocks.argtypes = [ctypes.c_void_p]
    lib.cbsim_failed.argtypes = [ctypes.c_void_p]
    lib.cbsim_free.argtypes = [ctypes.c_void_p]
    lib.cbsim_set_flash.argtypes = [ctypes.c_void_p] + [ctypes.c_uint32] * 2 + [ctypes.c_int] + [ctypes.c_uint32] * 6 \
        + [ctypes.c_int]
    lib.cbsim_flash_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64 * 4)]
    # the accounting's entry points, for an executor other than the Unicorn hooks (and the tests)
    lib.cbsim_account_block.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
    lib.cbsim_account_flash_read.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
    lib.cbsim_account_dynamic.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32]
    lib.cbsim_add_cycles.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.cbsim_set_alarm.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]
    lib.cbsim_alarm_fired.argtypes = [ctypes.c_void_p]
    return lib


def unicorn_handle(uc) -> ctypes.c_void_p:
    """The uc_engine* behind a unicorn.Uc, for cbsim.c to install its hooks on. Unicorn's Python
    binding has no public way to give it: this reads its private `Uc._uch`, and so accepts only the
    unicorn releases it was tested with (another may rename or wrap the attribute)."""
    import unicorn
    version = getattr(unicorn, "__version__", "(no __version__)")
    if not version.startswith(UNICORN_TESTED):
        raise UsageError(f"unicorn {version} is not a release the simulator was tested with "
                         f"({', '.join(v + 'x' for v in UNICORN_TESTED)}): it passes Unicorn's private engine "
                         f"handle (Uc._uch) to its native part; install a tested one: {UNICORN_INSTALL}")
    handle = getattr(uc, "_uch", None)
    if not isinstance(handle, ctypes.c_void_p) or not handle.value:
        raise UsageError(f"unicorn {version}: its Uc has no private engine handle _uch (found {handle!r}) that "
                         f"the simulator's native part can hook into; install a tested one: {UNICORN_INSTALL}")
    return ctypes.c_void_p(handle.value)


@dataclass
class SimReport(FirmwareReport):
    counter_reads: list = field(default_factory=list)     # model cycles at each counter read
    counter_insns: list = field(default_factory=list)     # instructions executed at each counter read (same index)
    counter_sleep: list = field(default_factory=list)     # cycles slept in WFI so far, at each counter read (same index)
    counter_engine: list = field(default_factory=list)    # cycles the peripheral models worked so far (same index)
    marker_edges: list = field(default_factory=list)      # (model cycles, 1 raised / 0 lowered) per marker write
    stats: dict = field(default_factory=dict)
    timing_report: timing.TimingReport = field(default_factory=timing.TimingReport)   # this run's default-cost instructions
    profiler: FunctionProfile | None = None               # run(profile=True): the image's functions
    profile_snaps: list = field(default_factory=list)     # its counts at each counter read (same index; profile.py)


def _load_elf(ex, elf: Path) -> tuple[int, int, list, dict]:
    """Write the ELF's loadable segments; return (initial SP, reset PC, (address, size) of the
    function symbols, and name -> (address, size) of each: the first symbol of a name)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
    funcs, names = [], {}
    with open(elf, "rb") as f:
        e = ELFFile(f)
        for seg in e.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                ex.write(seg["p_paddr"], seg.data())
        for sec in e.iter_sections():
            if isinstance(sec, SymbolTableSection):
                for sym in sec.iter_symbols():
                    if sym["st_info"]["type"] == "STT_FUNC" and sym["st_size"]:
                        funcs.append((sym["st_value"] & ~1, sym["st_size"]))
                        if sym.name:
                            names.setdefault(sym.name, (sym["st_value"] & ~1, sym["st_size"]))
        vectors = e.get_section_by_name(".isr_vector")
        base = vectors["sh_addr"]
    words = ex.read(base, 8)
    return int.from_bytes(words[:4], "little"), int.from_bytes(words[4:], "little"), funcs, names


class Simulator:
    def __init__(self, device: Device, board: Board):
        self.device, self.board = device, board
        self.dev = timing.DeviceParams(flash_ws=device.flash_ws, prefetch=device.prefetch,
                                       flash_width=device.flash_width, fast_multiplier=device.fast_multiplier,
                                       code_in_flash=device.code_in_flash,
                                       fetch_modelled=self._flash_cache() is not None)
        self.lib = load_library()
        self.mapped_pages: list[int] = []     # the board's register pages a run maps (_map_marker)

    def _flash_cache(self) -> FlashCache | None:
        """The flash memory system cbsim.c models line by line (the fetch unit, its prefetch and any
        caches: docs/sim-model.md "Fetch bandwidth") wherever code runs from flash that waits."""
        d = self.device
        return FlashCache.of(d) if d.code_in_flash and d.flash_ws > 0 else None

    def describe(self) -> dict:
        return {"model": timing.MODEL_NAME, "model_version": timing.MODEL_VERSION, "core": self.device.core,
                "rough": self.device.core in timing.ROUGH, "device": self.device.name,
                "clock_hz": self.device.clock_hz, "flash_ws": self.device.flash_ws,
                "prefetch": self.device.prefetch, "flash_width": self.device.flash_width,
                "code_in_flash": self.device.code_in_flash, "fast_multiplier": self.device.fast_multiplier,
                "source": self.device.source, "condition": self.device.condition,
                **({"device_options": self.device.options} if self.device.options else {})}

    def _emulation(self, elf: Path, on_line) -> "_Emulation":
        """One run's emulation (an executor subclass may give its own)."""
        return _Emulation(self, elf, on_line)

    def run(self, elf: Path, timeout_s: float = 600.0, on_line=lambda line: None, hooks: bool = True,
            profile: bool = False) -> SimReport:
        """One run of `elf`; with `profile`, the per-function counts at each counter read
        (report.profile_snaps: `cryptobench run --profile`)."""
        em = self._emulation(elf, on_line)
        if hooks:
            em.install_accounting()
            if profile:
                em.start_profile()
        wall = em.execute(timeout_s)
        em.finish(wall)
        return em.report

    def _map_marker(self, ex, report: SimReport, cycles, console_write=None) -> None:
        """The board's peripheral registers that the firmware touches: the marker GPIO and the UART
        console with its set-up steps (boards.toml). Registers read back what was written, except
        that a "wait" step's register reads as the value it waits for and the UART is always ready;
        every write to the marker's set / clear register is recorded as an edge at the model's cycle
        count, and console_write(offset, value, registers) gets every write to the UART's page."""
        m = self.board.marker
        uart = self.board.console_uart
        regs: dict[int, int] = {}
        ready: dict[int, int] = {a: v for a, _, v, w in uart.get("init", ()) if w} if uart else {}
        addrs = ([m["set"][0], m["clear"][0]] + [op[0] for op in m["init"]]) if m else []
        addrs += [step[0] for step in uart.get("init", ())] if uart else []
        pages = sorted({a & ~0xFFF for a in addrs})
        uart_page = uart["base"] & ~0xFFF if uart else None
        if uart_page is not None and uart_page not in pages:
            pages.append(uart_page)
        set_addr, clr_addr = (m["set"][0], m["clear"][0]) if m else (None, None)
        self.mapped_pages = list(pages)
        for page in pages:
            def read(offset, size, page=page):
                addr = page + offset
                status = consoleuart.status(uart["kind"], addr - uart["base"]) if page == uart_page else None
                return status if status is not None else ready.get(addr, regs.get(addr, 0))

            def write(offset, size, value, page=page):
                addr = page + offset
                regs[addr] = value
                if page == uart_page and console_write is not None:
                    console_write(addr - uart["base"], value, regs)
                elif addr == set_addr and value & m["set"][1]:
                    report.marker_edges.append((cycles(), 1))
                elif addr == clr_addr and value & m["clear"][1]:
                    report.marker_edges.append((cycles(), 0))

            ex.map_mmio(page, 0x1000, read, write)

    def _code_sites(self, cs, read, funcs) -> "codescan.Sites":
        """Data-dependent instructions, unmasking sites and SEVs, found by disassembling every
        function of the image once (codescan.py)."""
        return codescan.scan(cs, read, funcs, self.device.core, self.dev)


def set_flash_model(lib, sim, simulator: "Simulator", flash_lo: int, flash_len: int) -> None:
    """The device's flash lines and caches on the accounting `sim` (cbsim_set_flash), when the
    profile has them: every runner of an image calls it after cbsim_new."""
    device = simulator.device
    fc = simulator._flash_cache()
    if fc is not None and lib.cbsim_set_flash(
            sim, fc.line_bytes.bit_length() - 1, device.flash_ws + fc.miss_extra, int(device.prefetch),
            flash_lo, flash_lo + flash_len - 1, fc.sets(fc.icache_lines, fc.icache_ways),
            fc.icache_ways, fc.sets(fc.dcache_lines, fc.dcache_ways), fc.dcache_ways,
            int(device.fetch_shared_port)) != 0:
        raise UsageError("could not set up the simulator's flash cache model (out of memory)")


class _Emulation:
    """One run of an image: an executor (executor.py; Unicorn here, the native one in
    native.py) with the board's memory and peripherals, the callbacks that feed the report
    (console lines, counter reads, marker edges, semihosting), and the native cycle accounting."""

    def __init__(self, simulator: Simulator, elf: Path, on_line):
        import capstone
        self.t_start = time.perf_counter()
        self.s, self.lib, self.on_line = simulator, simulator.lib, on_line
        self.report = SimReport()
        self.sim = None            # the native accounting (cbsim.c), once installed
        self.miss = None           # its callback for blocks it has no cost for (kept alive while it runs)
        self.lines = LineSplitter()       # the console, split into lines
        self.flash_lo, self.flash_len = simulator.board.flash
        self.ex = self._executor()
        sp, self.pc, self.funcs, self.names = _load_elf(self.ex, elf)
        self.ex.set_reg("sp", sp)
        self.ex.set_reg("vtor", self.flash_lo)
        self.cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
        self.cs.detail = True
        self.ex.map_mmio(PPB, PPB_SIZE, self._ppb_read, self._ppb_write)
        self.bus = PeripheralBus(simulator.device.peripheral_models, self.ex, core_clock_hz=simulator.device.clock_hz,
                                 core=simulator.device.core)   # crypto peripherals
        # interrupt completion (a driver that enables its engine's line in the NVIC and waits in WFI)
        self.irqs = PeripheralInterrupts(self.bus)
        self.cpu_view = ExecutorCpu(self.ex)          # registers and words, as exceptions.py takes them
        self.irq_waiting = False                      # an interrupt is due but masked
        self.irq_early = False                        # the last alarm stop came before its event
        self.ended = False                            # SYS_EXIT
        self.sleep_cycles = 0                         # cycles the core slept in WFI
        self.exceptions_taken = 0
        self._map_console()
        self._map_peripherals()

    def _executor(self):
        """Unicorn with the board's flash and RAM."""
        ex = UnicornExecutor(CPU_MODEL[self.s.device.core], self._on_intr, self._on_error)
        ex.map_ram(self.flash_lo, self.flash_len)
        ex.map_ram(*self.s.board.ram)
        return ex

    def _on_error(self, problem: str) -> None:
        """A callback failed (the executor stops the run): the first problem is the report's."""
        self.report.problem = self.report.problem or problem

    # --- the target's view -----------------------------------------------------------------------
    def emit(self, text: str) -> None:
        """Console output: whole lines go to on_line and the report (which may end the run); a line
        is held in bounded memory (LineSplitter), however long the image makes it."""
        for raw in self.lines.feed(text.encode("utf-8", "surrogateescape")):
            line = raw.decode("utf-8", "replace")
            self.on_line(line)
            if self.report.feed(line):
                self.ex.stop()

    def cycles(self) -> int:
        return self.lib.cbsim_cycles(self.sim) if self.sim else 0

    def _log_read(self, addr: int) -> int:
        """A counter read: the model's cycles at the reading instruction (stamp.py) and the
        instructions executed so far, logged side by side, so that a cell's instructions come out
        of the log exactly as its cycles do."""
        c = self.stamper.at_access(self.sim, self.ex, addr) if self.sim else 0
        self.report.counter_reads.append(c)
        self.report.counter_insns.append(self.lib.cbsim_insns(self.sim) if self.sim else 0)
        self.report.counter_sleep.append(self.sleep_cycles)
        self.report.counter_engine.append(self.bus.engine_cycles(c) if self.bus else 0)
        if self.report.profiler is not None:
            self.report.profile_snaps.append(self.report.profiler.snap(self.sim, c))
        return c

    def _ppb_read(self, offset, size):
        """The cycle counters (DWT CYCCNT, SysTick's current value) give the model's count, logged."""
        addr = PPB + offset
        if addr == DWT_CYCCNT:
            return self._log_read(addr) & 0xFFFFFFFF
        if addr == SYST_CVR:
            return SYST_TOP - (self._log_read(addr) % (SYST_TOP + 1))
        return 0

    def _ppb_write(self, offset, size, value):
        """NVIC ISER/ICER (interrupts.py): the first enabled line turns interrupt completion on;
        the other system registers' stores are ignored, as before (the cells' images set none)."""
        if self.irqs.write(PPB + offset, value) and self.irqs.enabled:
            self._interrupts_on()
            self._rearm()

    def _interrupts_on(self) -> None:
        """The executor stops where an interrupt may be taken (the native one overrides this)."""

    def _map_console(self) -> None:
        """The board's UART (boards.toml console): always ready, every byte written goes to emit.
        The UARTs the HAL sets up with board steps (console tables) are mapped by _map_marker."""
        kind, _, where = self.s.board.console.partition(":")
        if self.s.board.console_uart:
            self.s._map_marker(self.ex, self.report, self.cycles, self._uart_write)
            return
        self.s._map_marker(self.ex, self.report, self.cycles)
        if kind not in ("nrf-uart", "cmsdk-uart"):
            return
        base = int(where, 16)

        def uart_read(offset, size):
            return 1 if (kind == "nrf-uart" and offset == 0x11C) else 0

        def uart_write(offset, size, value):
            if (kind == "nrf-uart" and offset == 0x51C) or (kind == "cmsdk-uart" and offset == 0):
                self.emit(chr(value & 0xFF))

        self.ex.map_mmio(base & ~0xFFF, 0x1000, uart_read, uart_write)
        self.s.mapped_pages.append(base & ~0xFFF)

    def _map_peripherals(self) -> None:
        """The device's crypto peripheral models (peripherals/), page by page: an access reaches
        its model at the accessing instruction's cycle; a store to a busy engine holds the core.
        A page the board's marker or console already maps may not also hold a model."""
        if not self.bus:
            return
        taken = {page for page in self.s.mapped_pages}
        for base, size in self.bus.pages():
            clash = [p for p in range(base, base + size, 0x1000) if p in taken]
            if clash:
                raise UsageError(f"device {self.s.device.name}: a peripheral model shares the page 0x{clash[0]:08x} "
                                 "with the board's marker or console registers")
            def read(offset, size, base=base):
                addr = base + offset
                return self.bus.access(addr, size, lambda: self._stamp(addr))

            def write(offset, size, value, base=base):
                addr = base + offset
                stall = self.bus.access(addr, size, lambda: self._stamp(addr), value)
                if stall and self.sim:
                    self.lib.cbsim_add_cycles(self.sim, stall)      # the bus held the store: the core waited
                if self.irqs.enabled:
                    self._rearm()            # the store may have started an operation whose end interrupts

            self.ex.map_mmio(base, size, read, write)

    def _stamp(self, addr: int) -> int:
        """The cycle of the instruction accessing `addr` (stamp.py), as a peripheral model sees it."""
        return self.stamper.at_access(self.sim, self.ex, addr) if self.sim else 0

    def _uart_write(self, offset: int, value: int, regs: dict) -> None:
        """A write to a console-table UART: its data register's byte, or the nRF UARTE's DMA buffer."""
        kind = self.s.board.console_uart["kind"]
        if offset == UART_DATA.get(kind):
            self.emit(chr(value & 0xFF))
        elif kind == "nrf-uarte" and offset == 0x008 and value:          # TASKS_STARTTX
            base = self.s.board.console_uart["base"]
            ptr, n = regs.get(base + 0x544, 0), regs.get(base + 0x548, 0)       # TXD.PTR, TXD.MAXCNT
            self.emit(self.ex.read(ptr, n).decode("utf-8", "replace"))

    def _on_intr(self, intno):
        """Semihosting: SYS_WRITE0 prints a string, SYS_EXIT ends the run; Unicorn's exception
        return (a handler's end) is emulated (exceptions.py); anything else is a problem."""
        ex = self.ex
        here = ex.reg("pc")
        if intno == EXCP_EXCEPTION_EXIT:
            try:
                exceptions.leave(self.cpu_view, here | 1)
            except (exceptions.ExceptionError, ValueError) as exc:
                self.report.problem = self.report.problem or f"{exc} (exception return at pc=0x{here:08x})"
                ex.stop()
            ex.set_reg("event", 1)           # an exception return sets the event register (sleep.py)
            return
        if intno == EXCP_SVC:                # SVCall (exception 11), entered as the native executor does
            try:
                self._enter(11)
            except (exceptions.ExceptionError, ValueError) as exc:
                self.report.problem = self.report.problem or f"SVC at pc=0x{here - 2:08x}: {exc}"
                ex.stop()
            return
        op, arg = ex.reg("r0"), ex.reg("r1")
        if op == 0x04:                                   # SYS_WRITE0
            data, a = b"", arg
            while True:
                chunk = ex.read(a, 64)
                i = chunk.find(b"\0")
                data += chunk if i < 0 else chunk[:i]
                if i >= 0:
                    break
                a += 64
            self.emit(data.decode("utf-8", "replace"))
            ex.set_reg("pc", (here + 2) | 1)
        elif op == 0x18:                                 # SYS_EXIT
            self.ended = True
            ex.stop()
        else:
            self.report.problem = f"unexpected exception {intno} (r0=0x{op:x}) at pc=0x{here:08x}"
            ex.stop()

    # --- cycle accounting ------------------------------------------------------------------------
    def _on_miss(self, bp) -> int:
        """cbsim.c asks the cost of a block it has not seen: the timing model's, or -1 to stop."""
        b = bp.contents
        try:
            insns = list(self.cs.disasm(self.ex.read(b.addr, b.size), b.addr))
            cost = timing.block_cost(self.s.device.core, self.s.dev, insns, self.report.timing_report)
        except Exception as exc:        # a model bug must stop the run, loudly
            self.report.problem = f"timing model failed on the block at 0x{b.addr:08x}: {exc}"
            return -1
        b.cycles, b.insns, b.end, b.taken_extra = cost.cycles, cost.insns, cost.end, cost.taken_extra
        b.entry_extra = cost.entry_extra
        fill_line_offsets(b, insns, cost.offsets)
        return 0

    def install_accounting(self) -> None:
        """cbsim.c's hooks on the engine, told the image's data-dependent instructions."""
        device = self.s.device
        self.miss = MISS_FN(self._on_miss)
        self.stamper = stamp.Stamper(self.lib, self.cs, self.ex.read, device.core, self.s.dev)
        sites = self.s._code_sites(self.cs, self.ex.read, self.funcs)
        dyns = sites.dynamic
        ws_data = device.flash_ws if device.code_in_flash else 0
        self.sim = self.lib.cbsim_new(unicorn_handle(self.ex.uc), self.miss, ws_data, self.flash_lo,
                                      self.flash_lo + self.flash_len - 1, len(dyns) + 1)
        if not self.sim:
            raise UsageError("could not install the simulator's hooks")
        self._set_flash_model()
        for addr, kind, ra, rb in dyns:
            self.lib.cbsim_add_dynamic(self.sim, addr, kind, self.ex.reg_id(ra), self.ex.reg_id(rb))
        if self.bus:                 # interrupt completion: a masked interrupt is looked at where it may be unmasked
            for addr in sites.unmasking:
                self.ex.hook_code(addr, self._unmasking)
        self.ex.hook_sev(sites.sev)  # SEV sets the event register a WFE consumes (sleep.py)

    def start_profile(self) -> None:
        """The per-function profile (profile.py) from now on, cut at every counter read."""
        self.report.profiler = FunctionProfile(self.names)
        self.report.profiler.start(self.lib, self.sim)

    def _set_flash_model(self) -> None:
        """The device's flash lines and caches (cbsim_set_flash), when it has them; any executor."""
        set_flash_model(self.lib, self.sim, self.s, self.flash_lo, self.flash_len)

    # --- the run ---------------------------------------------------------------------------------
    def execute(self, timeout_s: float) -> float:
        """Runs the image from its reset vector until it ends, faults or times out; returns the
        wall-clock seconds it took."""
        t0 = time.perf_counter()
        self.ex.set_reg("pc", self.pc | 1)
        if self._loop(lambda left: self.ex.run(self.ex.reg("pc") | 1, left), timeout_s) == PROBLEM:
            self.report.problem = self.report.problem or self.ex.fault("the target")
        wall = time.perf_counter() - t0
        if not self.report.complete and not self.report.problem:
            self.report.problem = f"watchdog: no end after {timeout_s:.0f} s" if wall >= timeout_s * 0.99 else \
                "the image stopped before its end line"
        return wall

    def _loop(self, run, timeout_s: float) -> int:
        """run(seconds_left) until the image ends. A run whose image enabled no interrupt is one
        run, as before. With interrupt completion on, a stop may be the alarm (a model's line is
        due: it is taken), a WFI (the core sleeps until the line rises), or on the native executor
        an exception return or unmasking (a masked interrupt is looked at again). Once a line was
        enabled these stops stay ours even while a handler has disabled every line."""
        deadline = time.perf_counter() + timeout_s
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return TIMEOUT
            if self.irqs.ever and self.sim is not None:
                if self.irq_waiting:
                    self.lib.cbsim_set_alarm(self.sim, self.cycles() + POLL_MASKED, 1)
                else:
                    due = self.irqs.next_due(self.cycles())
                    self.lib.cbsim_set_alarm(self.sim, NO_ALARM if due is None else due, 1 if self.irq_early else 0)
            status = run(left)
            if status != STOPPED or self.ended or self.report.complete or self.report.problem or self.sim is None:
                return status
            fired = self.irqs.ever and self.lib.cbsim_alarm_fired(self.sim)
            if fired or (self.irq_waiting and self.ex.wakes):
                entered = self.exceptions_taken
                self.irq_early = False
                self.irq_waiting = not self._take_irq()
                self.irq_early = fired and self.exceptions_taken == entered and not self.irq_waiting
            elif self.ex.slept():
                self._sleep(self.ex.slept())
                if self.report.problem:
                    return status
            elif not (self.irqs.ever and self.ex.wakes):
                return status                # Unicorn: a stop with no cause of ours is the end (or its timeout)

    def _sleep(self, hint: str) -> None:
        """WFI, or a WFE that found no event (sleep.py): the core sleeps from now until an enabled
        line rises (its cycles counted as sleep), then the interrupt is taken; with none coming
        the run stops, as the core would never wake."""
        now = self.cycles()
        masked = bool(self.ex.reg("primask") & 1) or exceptions.handler_mode(self.cpu_view)
        coming = [now if self.irq_waiting else None, self.irqs.sleep_until(now)]
        wake = sleep.wake_at(hint, now, coming, masked)
        if wake is None:
            at = sleep.hint_before(self.ex.read, self.ex.reg("pc") & ~1)
            self.report.problem = sleep.never_wakes(hint, at[1] if at else self.ex.reg("pc") & ~1, masked)
            return
        if wake > now:
            self.lib.cbsim_add_cycles(self.sim, wake - now)
            self.sleep_cycles += wake - now
        self.irq_waiting = not self._take_irq()

    def _take_irq(self) -> bool:
        """The first enabled peripheral line high now, entered unless masked (PRIMASK, or a
        handler running: one priority); True when none is left waiting. Entry costs the core's
        interrupt latency (exceptions.ENTRY_CYCLES, from its TRM)."""
        due = self.irqs.due(self.cycles())
        if due is None:
            return True
        if self.ex.reg("primask") & 1 or exceptions.handler_mode(self.cpu_view):
            return False
        irq, rise = due
        self.irqs.taken(irq, rise)
        try:
            self._enter(16 + irq)
        except (exceptions.ExceptionError, ValueError) as exc:
            self.report.problem = f"interrupt {irq}: {exc}"
            return True
        self.lib.cbsim_add_cycles(self.sim, exceptions.ENTRY_CYCLES[self.s.device.core])
        self.exceptions_taken += 1
        return True

    def _enter(self, number: int) -> None:
        """Unicorn: the frame pushed and the handler's address set here (exceptions.py); its
        vector is a data read, charged as any other (from flash it waits)."""
        vtor = self.ex.reg("vtor")
        exceptions.enter(self.cpu_view, number, vtor)
        vector = vtor + 4 * number
        if self.flash_lo <= vector < self.flash_lo + self.flash_len:
            self.lib.cbsim_account_flash_read(self.sim, vector, 4)

    def _unmasking(self) -> None:
        """Unicorn's hook before an instruction that may unmask interrupts: a waiting one is looked
        at before the next block (the native executor stops there by itself)."""
        if self.irq_waiting and self.sim is not None:
            self.lib.cbsim_set_alarm(self.sim, self.cycles(), 0)

    def _rearm(self) -> None:
        """After a store that may have changed when an interrupt is due: the alarm again."""
        if self.sim is not None and not self.irq_waiting:
            due = self.irqs.next_due(self.cycles())
            self.lib.cbsim_set_alarm(self.sim, NO_ALARM if due is None else due, 0)

    def finish(self, wall: float) -> None:
        """The run's statistics into the report; frees the native accounting."""
        report, lib, sim = self.report, self.lib, self.sim
        if sim:
            insns = lib.cbsim_insns(sim)
            report.stats = {"cycles": lib.cbsim_cycles(sim), "instructions": insns,
                            "sleep_cycles": self.sleep_cycles, "exceptions_taken": self.exceptions_taken,
                            "blocks": lib.cbsim_blocks(sim), "distinct_blocks": lib.cbsim_distinct_blocks(sim),
                            "wall_s": wall, "instructions_per_s": insns / wall if wall > 0 else None,
                            "unknown_mnemonics": sorted(report.timing_report.unknown_mnemonics)}
            if self.s.device.flash_cache and self.s._flash_cache() is not None:   # caches to count
                counts = (ctypes.c_uint64 * 4)()
                lib.cbsim_flash_stats(sim, ctypes.byref(counts))
                report.stats["flash_cache"] = dict(zip(("icache_hits", "icache_misses", "dcache_hits",
                                                        "dcache_misses"), counts))
            if lib.cbsim_failed(sim) and not report.problem:
                report.problem = "the simulator's accounting failed"
            lib.cbsim_free(sim)
            self.sim = None
        else:
            report.stats = {"wall_s": wall}
        self.miss = None

"""cryptobench's own firmware on the simulator: the firmware run, one client of the machine.

The very ELF built for QEMU and boards runs on the one machine (machine.py) with the board's
flash and RAM and the registers the firmware touches (boards.toml: the marker GPIO, the UART
console and its set-up steps). Its console lines (the UART's bytes, semihosting's text) become
cryptobench's protocol report; every read of the cycle counter (DWT CYCCNT, SysTick's current
value) is logged with the machine's full 64-bit count at the reading instruction, so a cell's
cycles come from the log, exact even where SysTick's 24 bits wrap (sim_reading.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import UsageError
from ..boards import Board
from ..firmware.protocol import FirmwareReport, LineSplitter
from . import consoleuart, runlog, timing
from .devices import Device
from .binding import load_library
from .executor import UnicornExecutor
from .machine import CPU_MODEL, Code, Machine
from .native import NativeExecutor, executor_choice
from .profile import FunctionProfile

UART_DATA = consoleuart.DATA     # data register offsets


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


@dataclass
class Elf:
    """What a run needs of a firmware ELF: its loadable segments (load, run address, bytes), its
    function symbols (address, size) and the first symbol of each name, and its reset state."""
    segments: list
    funcs: list
    names: dict
    vectors: int            # the vector table's address (.isr_vector)


def read_elf(elf: Path) -> Elf:
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
    segments, funcs, names = [], [], {}
    with open(elf, "rb") as f:
        e = ELFFile(f)
        for seg in e.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                segments.append((seg["p_paddr"], seg["p_vaddr"], seg.data()))
        for sec in e.iter_sections():
            if isinstance(sec, SymbolTableSection):
                for sym in sec.iter_symbols():
                    if sym["st_info"]["type"] == "STT_FUNC" and sym["st_size"]:
                        funcs.append((sym["st_value"] & ~1, sym["st_size"]))
                        if sym.name:
                            names.setdefault(sym.name, (sym["st_value"] & ~1, sym["st_size"]))
        vectors = e.get_section_by_name(".isr_vector")
    # cryptobench's images keep their vectors in .isr_vector (harness/firmware/core/startup.c); an
    # image without sections has them at its start, the boot address, as the part boots it
    base = vectors["sh_addr"] if vectors is not None else min((load for load, _, _ in segments), default=0)
    return Elf(segments, funcs, names, base)


class Simulator:
    """The simulator for one device and board: runs cryptobench's firmware images on the
    executor `executor` names (native.executor_choice: native unless told unicorn)."""

    def __init__(self, device: Device, board: Board, executor: str | None = None):
        self.device, self.board = device, board
        self.executor = executor_choice(executor)

    def describe(self) -> dict:
        return {"model": timing.MODEL_NAME, "model_version": timing.MODEL_VERSION, "core": self.device.core,
                "rough": self.device.core in timing.ROUGH, "device": self.device.name,
                "clock_hz": self.device.clock_hz, "flash_ws": self.device.flash_ws,
                "prefetch": self.device.prefetch, "flash_width": self.device.flash_width,
                "code_in_flash": self.device.code_in_flash, "fast_multiplier": self.device.fast_multiplier,
                "source": self.device.source, "condition": self.device.condition,
                **({"device_options": self.device.options} if self.device.options else {}),
                "executor": self.executor}

    def run(self, elf: Path, timeout_s: float = 600.0, on_line=lambda line: None, hooks: bool = True,
            profile: bool = False) -> SimReport:
        """One run of `elf`; with `profile`, the per-function counts at each counter read
        (report.profile_snaps: `cryptobench run --profile`); without `hooks` (Unicorn only: the
        bare executor's speed, bench/sim_speed) no accounting at all."""
        return FirmwareRun(self, elf, on_line).run(timeout_s, hooks, profile)


class FirmwareRun:
    """One run of a firmware image: the machine with the board's memory, and the report."""

    def __init__(self, simulator: Simulator, elf: Path, on_line, executor: str | None = None):
        self.s, self.on_line = simulator, on_line
        self.device, self.board = simulator.device, simulator.board
        self.report = SimReport()
        self.lines = LineSplitter()       # the console, split into lines
        self.elf = read_elf(elf)
        self.ex = self._executor(executor or simulator.executor)
        for load, _, data in self.elf.segments:
            self.ex.write(load, data)
        self.machine = Machine(self.device, self.board, self.ex, vtor=self.board.flash[0],
                               on_console=lambda stream, text: self.emit(text), on_counter=self._counter)
        self.mapped_pages: list[int] = []
        self._map_console()
        self.machine.map_bus(self.mapped_pages)

    def _executor(self, name: str):
        """The executor with the board's flash and RAM."""
        board = self.board
        if name == "native":
            return NativeExecutor(load_library(), self.device.core, board.flash, board.ram)
        ex = UnicornExecutor(CPU_MODEL[self.device.core])
        ex.map_ram(*board.flash)
        ex.map_ram(*board.ram)
        return ex

    # --- the console and the counters ---------------------------------------------------------------
    def emit(self, text: str) -> None:
        """Console output: whole lines go to on_line and the report (which may end the run); a line
        is held in bounded memory (LineSplitter), however long the image makes it."""
        for raw in self.lines.feed(text.encode("utf-8", "surrogateescape")):
            line = raw.decode("utf-8", "replace")
            self.on_line(line)
            if self.report.feed(line):
                self.machine.end()

    def _counter(self, addr: int, stamp: int) -> None:
        """A counter read: the model's cycles at the reading instruction and the instructions
        executed so far, logged side by side, so that a cell's instructions come out of the log
        exactly as its cycles do (and the sleep, the engines' work and the profile with them)."""
        m, r = self.machine, self.report
        r.counter_reads.append(stamp)
        r.counter_insns.append(m.insns())
        r.counter_sleep.append(m.sleep_cycles)
        r.counter_engine.append(m.bus.engine_cycles(stamp) if m.bus else 0)
        if r.profiler is not None:
            r.profile_snaps.append(r.profiler.snap(m.sim, stamp))

    # --- the board's registers ----------------------------------------------------------------------
    def _map_console(self) -> None:
        """The board's UART (boards.toml console): always ready, every byte written goes to emit.
        The UARTs the HAL sets up with board steps (console tables) are mapped by _map_board."""
        kind, _, where = self.board.console.partition(":")
        if self.board.console_uart:
            self._map_board(self._uart_write)
            return
        self._map_board(None)
        if kind not in ("nrf-uart", "cmsdk-uart"):
            return
        base = int(where, 16)

        def uart_read(offset, size):
            return 1 if (kind == "nrf-uart" and offset == 0x11C) else 0

        def uart_write(offset, size, value):
            if (kind == "nrf-uart" and offset == 0x51C) or (kind == "cmsdk-uart" and offset == 0):
                self.emit(chr(value & 0xFF))

        self.ex.map_mmio(base & ~0xFFF, 0x1000, uart_read, uart_write)
        self.mapped_pages.append(base & ~0xFFF)

    def _map_board(self, console_write) -> None:
        """The board's peripheral registers that the firmware touches: the marker GPIO and the UART
        console with its set-up steps (boards.toml). Registers read back what was written, except
        that a "wait" step's register reads as the value it waits for and the UART is always ready;
        every write to the marker's set / clear register is recorded as an edge at the model's cycle
        count, and console_write(offset, value, registers) gets every write to the UART's page."""
        m, uart, cycles = self.board.marker, self.board.console_uart, self.machine.cycles
        report = self.report
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

            self.ex.map_mmio(page, 0x1000, read, write)
        if uart and console_write is not None and uart["kind"] in consoleuart.DATA:
            # a UART with a data register: the executor may serve it (status and data registers, and
            # the bytes a line at a time) rather than call back here for each byte and poll
            serve = getattr(self.ex, "serve_console", None)
            if serve is not None:
                at, value = consoleuart.STATUS[uart["kind"]]
                serve(uart["base"] + at, value, uart["base"] + consoleuart.DATA[uart["kind"]], self.emit)

    def _uart_write(self, offset: int, value: int, regs: dict) -> None:
        """A write to a console-table UART: its data register's byte, or the nRF UARTE's DMA buffer."""
        kind = self.board.console_uart["kind"]
        if offset == UART_DATA.get(kind):
            self.emit(chr(value & 0xFF))
        elif kind == "nrf-uarte" and offset == 0x008 and value:          # TASKS_STARTTX
            base = self.board.console_uart["base"]
            ptr, n = regs.get(base + 0x544, 0), regs.get(base + 0x548, 0)       # TXD.PTR, TXD.MAXCNT
            self.emit(self.ex.read(ptr, n).decode("utf-8", "replace"))

    # --- the run ------------------------------------------------------------------------------------
    def code(self) -> Code:
        return Code(funcs=self.elf.funcs, segments=self.elf.segments)

    def _log(self, hooks: bool, profile: bool) -> None:
        """The run's outcome into $CRYPTOBENCH_SIM_RUN_LOG, when it is set (runlog.py)."""
        if not runlog.wanted():
            return
        r = self.report
        runlog.record({"client": "firmware",
                       "image": runlog.digest_segments([(load, data) for load, _, data in self.elf.segments]),
                       "device": self.device.name, "condition": self.device.condition, "executor": self.ex.name,
                       "hooks": hooks, "profile": profile,
                       "cycles": r.stats.get("cycles"), "instructions": r.stats.get("instructions"),
                       "sleep_cycles": r.stats.get("sleep_cycles"), "exceptions": r.stats.get("exceptions_taken"),
                       "reads": runlog.digest(r.counter_reads), "read_insns": runlog.digest(r.counter_insns),
                       "edges": runlog.digest(r.marker_edges), "engine": runlog.digest(r.counter_engine),
                       "n_reads": len(r.counter_reads), "problem": r.problem or ""})

    def run(self, timeout_s: float, hooks: bool = True, profile: bool = False) -> SimReport:
        m, report = self.machine, self.report
        try:
            if hooks:
                if profile:
                    report.profiler = FunctionProfile(self.elf.names)
                m.install(self.code(), profile=report.profiler)
            elif m.native:
                raise UsageError("the native executor always counts cycles: a run without the accounting "
                                 "(hooks=False) is Unicorn's")
            words = self.ex.read(self.elf.vectors, 8)      # the initial SP and the reset vector
            wall = m.run(int.from_bytes(words[:4], "little"), int.from_bytes(words[4:], "little"), timeout_s)
            report.timing_report = m.timing_report
            report.stats = m.stats(wall)
            o = m.outcome
            report.problem = report.problem or o.problem
            if not report.complete and not report.problem:
                report.problem = f"watchdog: no end after {timeout_s:.0f} s" if o.timed_out else \
                    "the image stopped before its end line"
            self._log(hooks, profile)
        finally:
            m.close()
        return report


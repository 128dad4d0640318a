"""`cryptobench sim run`: an image cryptobench did not build, on the one machine (machine.py),
on either executor: cryptobench's own where the image fits the board's flash and RAM (`fits`),
else Unicorn, with a note that says why. This module is the client: the image's memory map, the
marker, the call log and the result.

The image (image.py) is written at its load addresses; it boots from its vector table. On
Unicorn the memory map is the image's regions; natively the board's flash and RAM are the
executor's flat arrays and the image's other regions reach the callbacks here. Either way the
peripheral region is plainmemory.py's bounded plain memory (its crypto peripherals' pages the
models'), the console UART of the board reads ready, and any other address faults with the same
problem line on both executors. Semihosting (semihosting.py) and the marker (markers.py) are
recorded with the model's cycles and instructions.

The image is data from anyone (docs/promises.md, "What `sim run` guarantees for an untrusted
image"): the memory map is the image's regions and nothing else, the peripheral region is
bounded plain memory, the console, the call log and the segments are boundedlog.py's logs, and
the run stops at an instruction limit as well as at its timeout (limits.py)."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

from ....core.errors import UsageError
from . import consoleuart, limits, markers, runlog, semihosting
from .binding import load_library
from .boundedlog import ConsoleLog, HeadTail, SegmentLog
from .devices import Device
from .executor import UnicornExecutor
from .image import PAGE, Image, Region
from .machine import CPU_MODEL, Code, Machine
from .native import NativeExecutor, executor_choice
from .peripherals.registry import PeripheralError
from .plainmemory import PlainMemory, PlainMemoryFull
from .profile import FunctionProfile

MAX_READS = 100_000           # counter reads kept for the JSON document
MARKER_PAGE = "the marker register"
PLAIN = ("peripherals", MARKER_PAGE)   # regions that are plainmemory.py's, on both executors


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


class _Memory:
    """The image's registers and memory as the machine's host side reads and writes them
    (exceptions.py, semihosting.py): checked against the image's regions first."""

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


class ImageRun:
    """One run of `image` on `device` (with `board`'s flash and RAM), cut at `marker`, on
    `executor` ("unicorn", or "native": call `fits` first; image_run picks)."""

    def __init__(self, image: Image, device: Device, board, marker: markers.Marker, executor: str = "unicorn",
                 profile: bool = False):
        self._check_marker(image, marker)
        self.image, self.device, self.board, self.marker = image, device, board, marker
        self.profile = FunctionProfile(image.symbols) if profile else None
        self.result = ImageResult(notes=list(image.notes))
        self.recorder = markers.Recorder(self.marker, None, None, on_window=self._window)
        self.last_call = None                     # (cycles, insns, label) of the last semihosting call
        self.plain = PlainMemory()
        self.uart = consoleuart.of_board(board)   # (kind, base): its status reads ready (consoleuart.py)
        if self.uart is not None:
            self.result.notes.append(f"the board's console UART ({self.uart[0]} at 0x{self.uart[1]:08x}) reads ready "
                                     "to send and its data register's bytes are the console")
        self.regions = list(image.regions) + self._marker_pages()
        self.plain_regions = [(r.start, r.start + r.size) for r in self.regions if r.what in PLAIN]
        self.reads_dropped = 0
        self.ex = self._native(board) if executor == "native" else self._unicorn()
        self.machine = Machine(device, board, self.ex, _Memory(self), vtor=image.vector_table,
                               on_console=self.result.console.append, on_counter=self._counter,
                               on_semihosting=self._log_call)
        self.bus = self.machine.bus
        for line in self.bus.describe():
            self.result.notes.append(f"peripheral modelled: {line}")
        self._hook_marker()
        self.prepared = False

    def _unicorn(self) -> UnicornExecutor:
        """Unicorn with the image's regions: RAM, except the peripheral region (and a marker
        register's page), which are the bounded plain memory; then the segments' bytes. Unicorn
        refusing a mapping is one line, not UC_ERR_MAP's traceback."""
        import unicorn
        ex = UnicornExecutor(CPU_MODEL[self.device.core])
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

    def _native(self, board) -> NativeExecutor:
        """The native executor: the board's flash and RAM hold the segments; the peripheral region
        and a marker page are mapped plain memory."""
        ex = NativeExecutor(load_library(), self.device.core, board.flash, board.ram)
        for r in self.regions:
            if r.what in PLAIN:
                self._map_plain(ex, r.start, r.size)
        for seg in self.image.segments:
            if seg.data:
                ex.write(seg.load, seg.data)
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
        self.recorder.write(addr, value, size, self.machine.cycles(), self.machine.insns())

    def _window(self, start: tuple, end: tuple, number: int) -> None:
        """A marker window closed: (cycles, insns) at its start and end."""
        self.result.segments.append({"label": f"window {number}", "cycles": end[0] - start[0],
                                     "instructions": end[1] - start[1]})

    def _plain_read(self, addr, size):
        try:
            if self.bus and self.bus.owns(addr):     # a crypto peripheral's page: its state at this instruction
                return self.machine.bus_read(addr, size)
            if self.uart is not None and self.uart[1] <= addr < self.uart[1] + 0x1000:
                ready = consoleuart.status(self.uart[0], addr - self.uart[1])
                if ready is not None:        # the board's console UART: always ready to send
                    return ready
            return self.plain.read(addr, size)
        except Exception as exc:             # a callback must not raise into the executor: the run stops with it
            self.machine.stop(f"reading 0x{addr:08x}: {exc}")
            return 0

    def _plain_write(self, addr, size, value):
        try:
            if self.bus and self.bus.owns(addr):
                self.machine.bus_write(addr, size, value)
                return
            if self.uart is not None and addr == self.uart[1] + consoleuart.DATA.get(self.uart[0], -1):
                self.result.console.append("stdout", chr(value & 0xFF))    # the console UART's byte
            self.plain.write(addr, size, value)
        except PlainMemoryFull as exc:
            self.machine.stop(f"the image faulted: {exc}")
        except PeripheralError as exc:
            self.machine.stop(str(exc))
        except Exception as exc:
            self.machine.stop(f"writing 0x{addr:08x}: {exc}")

    # --- what the machine reports ------------------------------------------------------------------
    def _counter(self, addr: int, stamp: int) -> None:
        if len(self.result.counter_reads) < MAX_READS:
            self.result.counter_reads.append((stamp, self.machine.insns()))
        else:
            self.reads_dropped += 1

    def _log_call(self, call: semihosting.Call, cycles: int, insns: int) -> None:
        """A semihosting call into the bounded call log, and the segment since the last one."""
        entry = (cycles, insns, _label(call))
        self.result.semihosting_calls.append(entry)
        if self.marker.kind == "semihosting" and self.last_call is not None:
            (c0, i0, a), (c1, i1, b) = self.last_call, entry
            self.result.segments.append({"label": f"{a} -> {b}", "cycles": c1 - c0, "instructions": i1 - i0})
        self.last_call = entry

    # --- the run ----------------------------------------------------------------------------------
    def code(self) -> Code:
        """The image's functions in its regions, its segments, and the watched functions' entries."""
        funcs = [f for f in self.image.funcs
                 if any(r.start <= f[0] and f[0] + f[1] <= r.start + r.size for r in self.regions)]
        return Code(funcs=funcs, segments=[(s.load, s.run, s.data) for s in self.image.segments],
                    watched=[self.image.symbols[name][0] for name in self.marker.functions])

    def prepare(self, max_instructions: int | None = None) -> None:
        """Everything before the first instruction (the accounting, the scan of the image's
        functions), with the instruction limit; run() calls it when it was not called."""
        self.machine.install(self.code(), max_instructions, self.profile)
        self.result.max_instructions = max_instructions
        self.prepared = True

    def run(self, timeout_s: float) -> ImageResult:
        if not self.prepared:
            self.prepare()
        sp, reset = self.image.read_word(self.image.vector_table), self.image.read_word(self.image.vector_table + 4)
        wall = 0.0
        try:
            wall = self.machine.run(sp, reset, timeout_s)
        finally:
            self._finish(wall)
        return self.result

    def _function_segments(self) -> None:
        """The watched function's calls (cbsim's event log, itself bounded) as segments."""
        lib, sim = self.machine.lib, self.machine.sim
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
        m, r = self.machine, self.result
        try:
            if self.marker.kind == "function":
                self._function_segments()
            if self.profile is not None:
                r.profile = self.profile.rows(m.sim)
            r.stats = m.stats(wall)
            o = m.outcome
            problem = o.problem
            if o.limit_reached:
                problem = f"{problem} (--max-instructions {r.max_instructions})"
            r.problem = r.problem or problem
            r.exit_code, r.timed_out, r.limit_reached = o.exit_code, o.timed_out, o.limit_reached
            r.exceptions_taken = m.exceptions_taken
            r.notes += m.notes + sorted(m.systick.notes)
            r.notes += [f"peripheral register not modelled: {line}" for line in r.stats.get("undeclared_registers", ())]
            if self.reads_dropped:
                r.notes.append(f"counter reads: the first {MAX_READS} are listed, {self.reads_dropped} more were not")
            self._log()
        finally:
            m.close()

    def _log(self) -> None:
        """The run's outcome into $CRYPTOBENCH_SIM_RUN_LOG, when it is set (runlog.py)."""
        if not runlog.wanted():
            return
        r = self.result
        runlog.record({"client": "image", "image": runlog.digest_segments([(g.load, g.data) for g in self.image.segments]),
                       "device": self.device.name, "condition": self.device.condition, "executor": self.ex.name,
                       "marker": self.marker.spec(), "profile": self.profile is not None,
                       "cycles": r.stats.get("cycles"), "instructions": r.stats.get("instructions"),
                       "sleep_cycles": r.stats.get("sleep_cycles"), "exceptions": r.exceptions_taken,
                       "reads": runlog.digest(r.counter_reads), "segments": runlog.digest(list(r.segments)),
                       "exit": r.exit_code, "problem": r.problem, "max_insns": r.max_instructions})


def fits(image: Image, board) -> str | None:
    """None when the image runs within the board's flash and RAM (and the peripheral region),
    else what does not fit there."""
    inside = [(board.flash[0], board.flash[1]), (board.ram[0], board.ram[1])]

    def covered(lo: int, hi: int) -> bool:
        return any(base <= lo and hi <= base + size for base, size in inside)

    for seg in image.segments:
        for kind, at in (("load", seg.load), ("run", seg.run)):
            if seg.data and not covered(at, at + len(seg.data)):
                where = next((r.name for r in getattr(board, "regions", ())
                              if r.base <= at and at + len(seg.data) <= r.base + r.size), None)
                span = f"0x{at:08x}-0x{at + len(seg.data) - 1:08x}"
                if where:
                    return (f"its {kind} range {span} is in the part's {where}, which the native executor does not "
                            "map (it maps the board entry's flash and RAM)")
                return f"its {kind} range {span} is outside the board's flash and RAM"
    sp = image.read_word(image.vector_table)
    if not covered(sp - 4, sp):
        return f"its initial stack pointer 0x{sp:08x} is outside the board's RAM"
    return None


def image_run(image: Image, device, board, marker, executor: str | None = None, profile: bool = False) -> ImageRun:
    """The run of `image`: on the native executor unless `executor` (or $CRYPTOBENCH_SIM_EXECUTOR)
    says unicorn or the image needs memory beyond the board's flash and RAM (then on Unicorn, with
    a note that says why)."""
    choice = executor_choice(executor)
    if choice == "native":
        why = fits(image, board)
        if why is None:
            return ImageRun(image, device, board, marker, executor="native", profile=profile)
        run = ImageRun(image, device, board, marker, profile=profile)
        run.result.notes.append(f"run on Unicorn, not on the native executor: {why}")
        return run
    return ImageRun(image, device, board, marker, profile=profile)

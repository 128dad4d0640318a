"""Running a firmware ELF on Unicorn with cycle accounting.

Unicorn executes the very image built for QEMU and boards. What Unicorn lacks, the host provides:
semihosting (BKPT 0xAB: SYS_WRITE0, SYS_EXIT), the UART consoles of boards.toml, and the core's
cycle counter (DWT CYCCNT, SysTick's current value), which return the model's count. Every read of
the counter is logged with the full 64-bit count, so a cell's cycles come from the log, exact even
where SysTick's 24 bits would wrap. The costs are added up natively (harness/sim/cbsim.c) from
the per-block costs of sim/timing.py."""
from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..firmware.protocol import FirmwareReport
from ..harness import REPO_ROOT
from ..targets.boards import Board
from . import timing
from .devices import Device

LIB_DEFAULT = REPO_ROOT / "build" / "sim" / "libcbsim.so"
DWT_CYCCNT = 0xE0001004
SYST_CVR = 0xE000E018
SYST_TOP = 0x00FFFFFF
PPB, PPB_SIZE = 0xE0000000, 0x00100000
CPU_MODEL = {"cortex-m0": "UC_CPU_ARM_CORTEX_M0", "cortex-m0plus": "UC_CPU_ARM_CORTEX_M0",
             "cortex-m3": "UC_CPU_ARM_CORTEX_M3", "cortex-m4": "UC_CPU_ARM_CORTEX_M4",
             "cortex-m7": "UC_CPU_ARM_CORTEX_M7"}
REG_ALIASES = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12"}
UNICORN_TESTED = ("2.1.",)       # unicorn releases whose private engine handle unicorn_handle() was tested with
UNICORN_INSTALL = ".venv/bin/pip install 'unicorn>=2.1,<2.2'"


class CbBlock(ctypes.Structure):
    _fields_ = [("addr", ctypes.c_uint32), ("size", ctypes.c_uint32), ("cycles", ctypes.c_uint32),
                ("insns", ctypes.c_uint32), ("end", ctypes.c_uint32), ("taken_extra", ctypes.c_uint32)]


MISS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(CbBlock))


def library_path() -> Path:
    return Path(os.environ.get("CRYPTOBENCH_SIM_LIB", LIB_DEFAULT))


def load_library() -> ctypes.CDLL:
    path = library_path()
    if not path.exists():
        raise UsageError(f"the simulator's native part {path} is missing: run ./setup.sh "
                         "(it builds harness/sim against the unicorn package)")
    lib = ctypes.CDLL(str(path))
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
    marker_edges: list = field(default_factory=list)      # (model cycles, 1 raised / 0 lowered) per marker write
    stats: dict = field(default_factory=dict)
    timing_report: timing.TimingReport = field(default_factory=timing.TimingReport)   # this run's default-cost instructions


def _load_elf(uc, elf: Path) -> tuple[int, int, list]:
    """Write the ELF's loadable segments; return (initial SP, reset PC, function symbols)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
    funcs = []
    with open(elf, "rb") as f:
        e = ELFFile(f)
        for seg in e.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                uc.mem_write(seg["p_paddr"], seg.data())
        for sec in e.iter_sections():
            if isinstance(sec, SymbolTableSection):
                for sym in sec.iter_symbols():
                    if sym["st_info"]["type"] == "STT_FUNC" and sym["st_size"]:
                        funcs.append((sym["st_value"] & ~1, sym["st_size"]))
        vectors = e.get_section_by_name(".isr_vector")
        base = vectors["sh_addr"]
    words = uc.mem_read(base, 8)
    return int.from_bytes(words[:4], "little"), int.from_bytes(words[4:], "little"), funcs


class Simulator:
    def __init__(self, device: Device, board: Board):
        self.device, self.board = device, board
        self.dev = timing.DeviceParams(flash_ws=device.flash_ws, prefetch=device.prefetch,
                                       flash_width=device.flash_width, fast_multiplier=device.fast_multiplier,
                                       code_in_flash=device.code_in_flash)
        self.lib = load_library()

    def describe(self) -> dict:
        return {"model": timing.MODEL_NAME, "model_version": timing.MODEL_VERSION, "core": self.device.core,
                "rough": self.device.core in timing.ROUGH, "device": self.device.name,
                "clock_hz": self.device.clock_hz, "flash_ws": self.device.flash_ws,
                "prefetch": self.device.prefetch, "flash_width": self.device.flash_width,
                "code_in_flash": self.device.code_in_flash, "fast_multiplier": self.device.fast_multiplier,
                "source": self.device.source}

    def run(self, elf: Path, timeout_s: float = 600.0, on_line=lambda line: None, hooks: bool = True) -> SimReport:
        import capstone
        import unicorn
        from unicorn import arm_const as A
        report = SimReport()
        uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
        uc.ctl_set_cpu_model(getattr(A, CPU_MODEL[self.device.core]))
        flash_lo, flash_len = self.board.flash
        uc.mem_map(flash_lo, flash_len)
        uc.mem_map(self.board.ram[0], self.board.ram[1])
        sp, pc, funcs = _load_elf(uc, elf)
        uc.reg_write(A.UC_ARM_REG_SP, sp)
        cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
        cs.detail = True
        sim = None
        partial = []

        def emit(text: str) -> None:
            partial.append(text)
            joined = "".join(partial)
            *lines, rest = joined.split("\n")
            partial[:] = [rest] if rest else []
            for line in lines:
                on_line(line)
                if report.feed(line):
                    uc.emu_stop()

        def cycles() -> int:
            return self.lib.cbsim_cycles(sim) if sim else 0

        def ppb_read(uc_, offset, size, user):
            addr = PPB + offset
            if addr == DWT_CYCCNT:
                c = cycles()
                report.counter_reads.append(c)
                return c & 0xFFFFFFFF
            if addr == SYST_CVR:
                c = cycles()
                report.counter_reads.append(c)
                return SYST_TOP - (c % (SYST_TOP + 1))
            return 0

        def ignore_write(uc_, offset, size, value, user):
            pass

        uc.mmio_map(PPB, PPB_SIZE, ppb_read, None, ignore_write, None)
        kind, _, where = self.board.console.partition(":")
        if kind in ("nrf-uart", "cmsdk-uart"):
            base = int(where, 16)

            def uart_read(uc_, offset, size, user):
                return 1 if (kind == "nrf-uart" and offset == 0x11C) else 0

            def uart_write(uc_, offset, size, value, user):
                if (kind == "nrf-uart" and offset == 0x51C) or (kind == "cmsdk-uart" and offset == 0):
                    emit(chr(value & 0xFF))

            uc.mmio_map(base & ~0xFFF, 0x1000, uart_read, None, uart_write, None)

        self._map_marker(uc, report, cycles)

        def on_intr(uc_, intno, user):
            here = uc_.reg_read(A.UC_ARM_REG_PC)
            op, arg = uc_.reg_read(A.UC_ARM_REG_R0), uc_.reg_read(A.UC_ARM_REG_R1)
            if op == 0x04:                                   # SYS_WRITE0
                data, a = b"", arg
                while True:
                    chunk = bytes(uc_.mem_read(a, 64))
                    i = chunk.find(b"\0")
                    data += chunk if i < 0 else chunk[:i]
                    if i >= 0:
                        break
                    a += 64
                emit(data.decode("utf-8", "replace"))
                uc_.reg_write(A.UC_ARM_REG_PC, (here + 2) | 1)
            elif op == 0x18:                                 # SYS_EXIT
                uc_.emu_stop()
            else:
                report.problem = f"unexpected exception {intno} (r0=0x{op:x}) at pc=0x{here:08x}"
                uc_.emu_stop()

        uc.hook_add(unicorn.UC_HOOK_INTR, on_intr)

        def on_miss(bp) -> int:
            b = bp.contents
            try:
                insns = list(cs.disasm(bytes(uc.mem_read(b.addr, b.size)), b.addr))
                cost = timing.block_cost(self.device.core, self.dev, insns, report.timing_report)
            except Exception as exc:        # a model bug must stop the run, loudly
                report.problem = f"timing model failed on the block at 0x{b.addr:08x}: {exc}"
                return -1
            b.cycles, b.insns, b.end, b.taken_extra = cost.cycles, cost.insns, cost.end, cost.taken_extra
            return 0

        miss = MISS_FN(on_miss)
        if hooks:
            dyns = self._dynamic_sites(cs, uc, funcs)
            ws_data = self.device.flash_ws if self.device.code_in_flash else 0
            sim = self.lib.cbsim_new(unicorn_handle(uc), miss, ws_data, flash_lo,
                                     flash_lo + flash_len - 1, len(dyns) + 1)
            if not sim:
                raise UsageError("could not install the simulator's hooks")
            for addr, kind, ra, rb in dyns:
                self.lib.cbsim_add_dynamic(sim, addr, kind, self._reg(A, ra), self._reg(A, rb))
        t0 = time.perf_counter()
        try:
            uc.emu_start(pc | 1, 0xFFFFFFFF, timeout=int(timeout_s * 1e6))
        except unicorn.UcError as exc:
            here = uc.reg_read(A.UC_ARM_REG_PC)
            report.problem = report.problem or f"the target faulted ({exc}) at pc=0x{here:08x}"
        wall = time.perf_counter() - t0
        if not report.complete and not report.problem:
            report.problem = f"watchdog: no end after {timeout_s:.0f} s" if wall >= timeout_s * 0.99 else \
                "the image stopped before its end line"
        if sim:
            report.stats = {"cycles": self.lib.cbsim_cycles(sim), "instructions": self.lib.cbsim_insns(sim),
                            "blocks": self.lib.cbsim_blocks(sim), "distinct_blocks": self.lib.cbsim_distinct_blocks(sim),
                            "wall_s": wall, "unknown_mnemonics": sorted(report.timing_report.unknown_mnemonics)}
            if self.lib.cbsim_failed(sim) and not report.problem:
                report.problem = "the simulator's accounting failed"
            self.lib.cbsim_free(sim)
        else:
            report.stats = {"wall_s": wall}
        del miss
        return report

    def _map_marker(self, uc, report: SimReport, cycles) -> None:
        """The board's marker GPIO (boards.toml): its registers read back what was written, and
        every write to the set / clear register is recorded as an edge at the model's cycle count."""
        m = self.board.marker
        if not m:
            return
        regs: dict[int, int] = {}
        set_addr, clr_addr = m["set"][0], m["clear"][0]
        pages = sorted({a & ~0xFFF for a in [set_addr, clr_addr] + [op[0] for op in m["init"]]})
        for page in pages:
            def read(uc_, offset, size, user, page=page):
                return regs.get(page + offset, 0)

            def write(uc_, offset, size, value, user, page=page):
                addr = page + offset
                regs[addr] = value
                if addr == set_addr and value & m["set"][1]:
                    report.marker_edges.append((cycles(), 1))
                elif addr == clr_addr and value & m["clear"][1]:
                    report.marker_edges.append((cycles(), 0))

            uc.mmio_map(page, 0x1000, read, None, write, None)

    @staticmethod
    def _reg(A, name: str) -> int:
        name = REG_ALIASES.get(name, name)
        return getattr(A, f"UC_ARM_REG_{name.upper()}")

    def _dynamic_sites(self, cs, uc, funcs) -> list:
        """Data-dependent instructions, found by disassembling every function of the image once."""
        sites = {}
        # its own TimingReport, never the run's: this scan also decodes literal pools, and only
        # what really executes may be reported
        scan = timing.TimingReport()
        for start, size in funcs:
            code = bytes(uc.mem_read(start, size))
            offset = 0
            while offset < size:
                got = False
                for insn in cs.disasm(code[offset:], start + offset):
                    got = True
                    offset = insn.address + insn.size - start
                    for d in timing.block_cost(self.device.core, self.dev, [insn], scan).dynamic:
                        sites[d[0]] = d
                if not got:
                    offset += 2
        return list(sites.values())

"""What the simulator's report says about its cells beyond the console: exact cycles and
instructions from its log of counter reads, the marker GPIO's windows, and the energy the device
profile's active current models (all provenance "simulated" or "modeled"), and the error band the
device's condition class earned against published silicon (sim/error_band.py); with
`cryptobench run --profile`, each cell's per-function profile (sim_profiles)."""
from __future__ import annotations

from collections.abc import Mapping

from ...catalog.ops import OPS
from .reading import Reading
from ..power import modeled_energy, modeled_states_energy, per_unit, profile_from_device
from . import sim

PROFILE_CONDITION = ("per function: every cycle of each cell's median timed repetition given to the ELF function "
                     "symbol holding the PC (with its instructions and calls), simulated")


class SimReading(Reading):
    def __init__(self, report, device):
        self.device = device
        self.stats = report.stats
        self.cycle_windows = sim_cycles(report)
        self.insn_windows = sim_cycles(report, report.counter_insns)
        # cycles the core slept in WFI (interrupt completion), in the same windows
        self.sleep_windows = sim_cycles(report, report.counter_sleep) \
            if len(getattr(report, "counter_sleep", ())) == len(report.counter_reads) else {}
        # cycles the modeled crypto engines worked, in the same windows
        self.engine_windows = sim_cycles(report, report.counter_engine) \
            if len(getattr(report, "counter_engine", ())) == len(report.counter_reads) else {}
        self.markers = sim_marker(report)
        self.profiles = sim_profiles(report)

    def cycles(self, n: int, line: Mapping) -> tuple[list, object]:
        return self.cycle_windows.get(n, (line["cyc"], line.get("overhead")))

    def annotate(self, n: int, op: str, params: Mapping, result: dict) -> None:
        result["flags"] = [f for f in result["flags"] if f != "few-samples"]   # deterministic: two are not "few"
        if n in self.markers:
            result["marker"] = self.markers[n]
        if n in self.insn_windows:
            result["sim"] = sim_counts(op, result, self.insn_windows[n], self.stats)
        if n in self.profiles:
            result["profile"] = dict(self.profiles[n], ops_in_window=2 if OPS[op].halve else 1)
        result["error_band"] = self.error_band()
        sleep = self._sleep_per_op(n, op)
        if sleep is not None:
            result["sleep"] = {"cycles_per_op": sleep, "provenance": "simulated",
                               "what": "cycles per operation the core slept in WFI waiting for an interrupt "
                                       "(the median repetition's)"}
        engine = self._median_rep(self.engine_windows, n, op)
        if engine:
            result["engine_active"] = {"cycles_per_op": engine, "provenance": "modeled",
                                       "what": "cycles per operation the modeled crypto engine(s) worked (their "
                                               "latency; the median repetition's)"}
        energy = self._modeled_energy(result, params, op, sleep or 0)
        if energy:
            result["energy"] = energy

    def error_band(self) -> dict:
        """The band of the device's condition class (bench/sim_vs_silicon's rows), or "unvalidated"."""
        return sim.band_for(self.device, f"{sim.MODEL_NAME} v{sim.MODEL_VERSION}")

    def _sleep_per_op(self, n: int, op: str) -> float | None:
        """The slept cycles of the cell's median repetition (by cycles), per operation; None
        where the core never slept in the cell."""
        return self._median_rep(self.sleep_windows, n, op)

    def _median_rep(self, windows: dict, n: int, op: str) -> float | None:
        """`windows`' count in the cell's median repetition (by cycles), per operation; None where
        it is 0 in every repetition."""
        if n not in windows or n not in self.cycle_windows:
            return None
        cycles, counts = self.cycle_windows[n][0], windows[n][0]
        if not any(counts):
            return None
        r = cycles.index(sorted(cycles)[len(cycles) // 2])
        return counts[r] / (2.0 if OPS[op].halve else 1.0)

    def _modeled_energy(self, result: dict, params: Mapping, op: str, sleep_cycles: float = 0) -> dict | None:
        """Energy from the simulated duration and the device profile's currents (modeled): the
        active current throughout, or, where the core slept in WFI, the idle current for the
        slept cycles and the active current for the rest (TI SWRA667 4.3's two states)."""
        dev = self.device
        if dev.active_current_a <= 0 or dev.clock_hz != sim.DEVICES[dev.name].clock_hz:
            return None              # the profile's current holds at its own clock only
        t = result["time_s"]["median"]
        profile = profile_from_device(dev)
        if sleep_cycles and dev.idle_current_a > 0:
            e = modeled_states_energy(t, sleep_cycles / dev.clock_hz, profile)
        else:
            e = modeled_energy(t, profile)
        nbytes = params.get("bytes") if OPS[op].payload else None
        e.update(per_unit(e["per_op_j"], t, nbytes))
        return e


def sim_marker(report) -> dict:
    """The marker GPIO as the simulator saw it: per ok cell, the count of raised-then-lowered
    windows and their cycles, taken in order (one window per timed repetition). This is what
    a power analyzer's digital input would see on the board."""
    windows, state, rose = [], 0, 0
    for cyc, level in report.marker_edges:       # writes that do not change the level are not edges
        if level and not state:
            rose = cyc
        elif state and not level:
            windows.append((rose, cyc))
        state = level
    if not windows:
        return {}
    out, at = {}, 0
    for i in sorted(report.cells):
        line = report.cells[i]
        if line.get("status") != "ok" or "cyc" not in line:
            continue
        ws = windows[at:at + len(line["cyc"])]
        at += len(line["cyc"])
        out[i] = {"windows": len(ws), "cycles": [b - a for a, b in ws], "provenance": "simulated"}
    return out


def sim_cycles(report, reads: list | None = None) -> dict:
    """Each ok cell's cycles from the simulator's log of counter reads (exact, never wrapped):
    per repetition a (before, after) pair, then one pair for the counter's own overhead. With
    `reads` = the report's counter_insns, the instructions executed in the same windows. Only the
    cells whose windows `paired_cells` found agree with the firmware's own counts are given."""
    reads = report.counter_reads if reads is None else reads
    out = {}
    for i, at in paired_cells(report).items():
        n = len(report.cells[i]["cyc"])
        pairs = [(reads[at + 2 * r], reads[at + 2 * r + 1]) for r in range(n + 1)]
        out[i] = ([b - a for a, b in pairs[:n]], pairs[n][1] - pairs[n][0])
    return out


COUNT_MASK = 0xFFFFFF     # the bits both counters keep (SysTick's 24; DWT CYCCNT's 32 agree on them)


def paired_cells(report) -> dict:
    """Each ok cell's index of its first read in the log of counter reads, for the cells whose
    log windows agree with the counts the firmware printed for them (compared on the low 24 bits,
    which a SysTick-extended count and DWT CYCCNT both keep). The log pairs reads in order, assuming
    that the harness made them all: a library that reads DWT CYCCNT or SysTick itself (a HAL_GetTick
    built on the cycle counter) adds reads that shift every later pair, which would give a cell
    another window's cycles. From the first cell that disagrees on, cells keep the firmware's own
    counts (the same model cycles, read by the image) and have no instruction counts or profile."""
    reads, at, out = report.counter_reads, 0, {}
    for i in sorted(report.cells):
        line = report.cells[i]
        if line.get("status") != "ok" or "cyc" not in line:
            continue
        n = len(line["cyc"])
        if at + 2 * n + 1 >= len(reads):
            break
        if any((reads[at + 2 * r + 1] - reads[at + 2 * r] - c) & COUNT_MASK for r, c in enumerate(line["cyc"])):
            break
        out[i] = at
        at += 2 * (n + 1)
    return out


def sim_counts(op: str, result: dict, insns: tuple[list, int], stats: dict) -> dict:
    """A simulated cell's instructions per operation (the median over its repetitions, from the
    same counter-read windows as its cycles, halved where the op's time is), its CPI (cycles per
    operation / instructions per operation) and the simulator's speed over the image's whole run
    (instructions executed / wall-clock seconds of the run, start-up excluded; measured on the host)."""
    div = 2.0 if OPS[op].halve else 1.0
    per_op = sorted(i / div for i in insns[0])
    ipo = per_op[len(per_op) // 2] if per_op else None
    cyc = (result.get("cycles") or {}).get("per_op_median")
    return {"instructions_per_op": ipo, "instructions_overhead": insns[1],
            "cpi": cyc / ipo if cyc is not None and ipo else None, "provenance": "simulated",
            "run_instructions": stats.get("instructions"), "run_wall_s": stats.get("wall_s"),
            "instructions_per_s": stats.get("instructions_per_s"), "speed_provenance": "measured"}


def sim_profiles(report) -> dict:
    """With the profile on (report.profiler): per ok cell, the per-function rows of its median
    timed repetition, the one whose cycles are the cell's cycles.per_op_median (times 2 for a
    halved op, whose window holds both sides). The rows are the difference of the profile's
    counts at the window's two counter reads, so their cycles sum to that window's cycles and
    their instructions to its instructions, exactly; calls are the entries into each function in
    the window. The reads are paired as sim_cycles pairs them."""
    prof = report.profiler
    if prof is None:
        return {}
    snaps, reads, insns = report.profile_snaps, report.counter_reads, report.counter_insns
    out = {}
    for i, at in paired_cells(report).items():
        n = len(report.cells[i]["cyc"])
        if at + 2 * n <= len(snaps):
            windows = [reads[at + 2 * r + 1] - reads[at + 2 * r] for r in range(n)]
            r = windows.index(sorted(windows)[n // 2])
            a, b = snaps[at + 2 * r], snaps[at + 2 * r + 1]
            if a is not None and b is not None:
                out[i] = {"repetition": r, "cycles": windows[r], "instructions": insns[at + 2 * r + 1] - insns[at + 2 * r],
                          "rows": prof.window(a, b), "provenance": "simulated"}
    return out

"""Scaling over cores (the Pisa paper, Tables I–III): the same operation in N harness processes at once.

`cryptobench run --parallel 1,2,4` (host target) turns every (op, params) of the plan into one
group per N. For each engine and N the runner starts N harness processes of that engine, pins each
to its own CPU (os.sched_setaffinity; CPUs of distinct physical cores first; when N exceeds the
CPUs this process may use, the assignment wraps around and the cell is labelled `oversubscribed`),
sets up the same slot in every process, calibrates k once (in the first process, alone), and then
takes rounds in which all N processes run one batch of k operations at the same time: the `sample`
request goes to all N before any reply is read.

Clocks. Each process times its own batch (CLOCK_MONOTONIC_RAW, stored as the cell's samples). The
aggregate is timed by the orchestrator: time.perf_counter_ns from the first request sent to the
last reply read. That wall time includes the pipe round trips and the start skew of the processes
(measured with N concurrent empty requests and stored as `overhead_ns`); batches last at least
--min-time (20 ms in pisa-a53), so both stay small, and a cell where they exceed 2 % of the median
round is flagged `orchestrator-overhead` (the bias it can put on the aggregate).

Per cell (result["parallel"], docs/schema.md):
  aggregate throughput TH_N = Σ units of the N batches / wall (median over rounds; units are bytes
  for ops with a payload, operations otherwise), per core = TH_N / N, parallel efficiency
  TH_N / (N · TH_1) against the N = 1 cell of the same op, params and engine in the run, with a
  percentile-bootstrap interval over the rounds of both cells.
With --energy, the energy windows are concurrent as well: the meter is read before the `window`
request goes to all N processes and after the last reply, so per-op energy is (ΔE − P_idle·Δt) /
Σ ops of all N and the average power is that of all N processes over idle (the Pisa paper's P).
"""
from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Mapping
from pathlib import Path

from ...catalog.ops import OPS
from ...core.errors import HarnessError, UsageError
from ...stats.summary import ratio_ci, summarize
from ...core.records import Params, Plan, Result, Run
from .engines import check_engine
from .meters.base import CounterReset

MAX_PROCESSES = 256
OVERHEAD_SHARE = 0.02            # flag when the concurrent round trip exceeds this share of a round
OVERHEAD_TRIPS = 5
CLOCK = ("orchestrator time.perf_counter_ns from the first request sent to the last reply read, "
         "around the N concurrent batches (each batch also timed by its own process, CLOCK_MONOTONIC_RAW)")
PARAM = "parallel"               # the key the process count takes in a cell's params


# --- options and plan -------------------------------------------------------------------------------
def parse_parallel(text: str) -> list[int]:
    """'1,2,4' -> [1, 2, 4]; anything else is a one-line usage error."""
    items = [s.strip() for s in str(text).split(",")]
    if not items or any(not s for s in items):
        raise UsageError(f"--parallel: expected process counts separated by commas, e.g. 1,2,4; got {text!r}")
    out = []
    for s in items:
        try:
            n = int(s)
        except ValueError:
            raise UsageError(f"--parallel: '{s}' is not a process count; expected integers >= 1 separated by "
                             f"commas, e.g. 1,2,4")
        if n < 1:
            raise UsageError(f"--parallel: process counts must be >= 1, got {n}")
        if n > MAX_PROCESSES:
            raise UsageError(f"--parallel: at most {MAX_PROCESSES} processes, got {n}")
        out.append(n)
    return sorted(set(out))


def available_cpus() -> list[int]:
    """The CPUs this process may run on, one per physical core first (SMT siblings last)."""
    cpus = sorted(os.sched_getaffinity(0))
    seen, first, rest = set(), [], []
    for cpu in cpus:
        core = _core_of(cpu)
        if core is not None and core in seen:
            rest.append(cpu)
        else:
            seen.add(core)
            first.append(cpu)
    return first + rest


def _core_of(cpu: int):
    topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
    try:
        return ((topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip())
    except OSError:
        return None


def assign_cpus(n: int, cpus: list[int]) -> tuple[list[int], bool]:
    """CPU of each of n processes (wrapping around when n exceeds the CPUs) and whether it wrapped."""
    if not cpus:
        return [], n > 1
    return [cpus[i % len(cpus)] for i in range(n)], n > len(cpus)


def op_params(params: Mapping) -> dict:
    """A cell's operation parameters without the process count (what the harness and the gate see)."""
    return {k: v for k, v in params.items() if k != PARAM}


def expand_plan(plan: Plan, counts: list[int]) -> Plan:
    """One group per (op, params) and process count; the count joins the cell's params as
    `parallel`, so every (op, params, engine, N) is its own stored cell (and resumes as one)."""
    single = ["--single"] if plan.options.single else [g.op for g in plan.groups if g.single]
    if single:
        raise UsageError("--parallel: measures throughput with batches of at least --min-time timed around N "
                         "concurrent processes; it does not apply to single-shot (k = 1) cells "
                         f"({', '.join(dict.fromkeys(single))}); run without --single / use a throughput suite")
    groups = []
    for g in plan.groups:
        for n in counts:
            groups.append(dataclasses.replace(g, params=Params(g.params, **{PARAM: n}), parallel=n))
    options = dataclasses.replace(plan.options, parallel=counts, parallel_cpus=available_cpus())
    return dataclasses.replace(plan, groups=groups, options=options)


def is_parallel_run(run_or_plan: Run | Plan) -> bool:
    plan = run_or_plan.plan if isinstance(run_or_plan, Run) else run_or_plan
    return bool(plan.options.parallel)


# --- measuring ------------------------------------------------------------------------------------
def concurrent(procs: list, req: dict, until: str | None = None) -> tuple[int, list[list[dict]]]:
    """Send `req` to every process, then read every reply: (orchestrator wall ns, replies per process).
    Every process's replies are read even when one fails, so none is left mid-stream."""
    t0 = time.perf_counter_ns()
    for p in procs:
        p.send(req)
    out, first_error = [], None
    for p in procs:
        try:
            out.append(p.collect(until))
        except HarnessError as exc:
            first_error = first_error or exc
            out.append([])
    wall = time.perf_counter_ns() - t0
    if first_error is not None:
        raise first_error
    return wall, out


class ParallelCell:
    """N pinned harness processes of one engine with one slot set up in each."""

    def __init__(self, engine, n: int, cpus: list[int], check=None):
        self.engine, self.n = engine, n
        self.cpus, self.oversubscribed = assign_cpus(n, cpus)
        self.procs: list = []
        self.pinned, self.pin_error = True, ""
        self.slot = None
        check = check or check_engine
        try:
            for i in range(n):
                proc = engine.start()
                self.procs.append(proc)
                _, why = check(engine, proc)
                if why:
                    raise HarnessError(f"process {i + 1} of {n}: {why}")
                if self.cpus:
                    try:
                        os.sched_setaffinity(proc.proc.pid, {self.cpus[i]})
                    except OSError as exc:
                        self.pinned, self.pin_error = False, f"sched_setaffinity: {exc}"
        except BaseException:
            self.close()
            raise
        self.hello = self.procs[0].hello

    def setup(self, slot: int, op: str, params: dict) -> None:
        for p in self.procs:
            p.setup(slot, self.engine.harness_engine, op, params)
        self.slot = slot

    def overhead_ns(self) -> int:
        """Median orchestrator round trip of N concurrent requests that do no work."""
        trips = [concurrent(self.procs, {"cmd": "idle", "ns": 0})[0] for _ in range(OVERHEAD_TRIPS)]
        return int(statistics.median(trips))

    def rounds(self, k: int, count: int) -> list[dict]:
        """`count` rounds of one concurrent batch of k operations per process."""
        out = []
        for _ in range(count):
            wall, replies = concurrent(self.procs, {"cmd": "sample", "slot": self.slot, "k": int(k), "n": 1},
                                       until="done")
            samples = []
            for rep in replies:
                s = next(r for r in rep if r.get("t") == "sample")
                samples.append([int(s["k"]), int(s["ns"]), int(s.get("cyc", 0))])
            out.append({"wall_ns": wall, "samples": samples})
        return out

    def energy_window(self, session, k: int) -> dict:
        """One concurrent energy window: every process runs batches for the window length at once."""
        a = session.meter.read()
        wall, replies = concurrent(self.procs, {"cmd": "window", "slot": self.slot, "k": int(k),
                                                "min_ns": int(session.window_s * 1e9)})
        b = session.meter.read()
        ops = sum(int(rep[0]["ops"]) for rep in replies)
        try:
            joules = session.meter.delta(a, b)
        except CounterReset as exc:
            session.dropped += 1
            return {"reset": str(exc), "ops": ops, "ns": wall}
        # ns: the orchestrator's wall time of the concurrent window, so that time per op = wall / Σ ops
        return {"ops": ops, "ns": wall, "wall_ns": b.t_ns - a.t_ns, "j": joules}

    def close(self) -> None:
        for p in self.procs:
            if self.slot is not None:
                p.teardown(self.slot)
            p.close()
        self.procs = []


def units_per_op(op_id: str, params: dict) -> tuple[str, float]:
    """What throughput counts: ('bytes', payload bytes per op) or ('ops', 1 per reported op)."""
    op = OPS[op_id]
    if op.payload and params.get("bytes"):
        return "bytes", float(params["bytes"])
    return "ops", 2.0 if op.halve else 1.0          # a halved exchange counts as its two sides


def round_throughputs(info: dict) -> list[float]:
    """Aggregate throughput of every kept round (units per second, orchestrator clock)."""
    return [sum(k for k, _, _ in r) * info["units_per_op"] / (w / 1e9)
            for w, r in zip(info["wall_ns"], info["process_samples"]) if w > 0]


def summarize_rounds(op_id: str, params: dict, n: int, cpus: list[int], oversubscribed: bool, pinned: bool,
                     kept: list[dict], overhead_ns: int, available: list[int]) -> dict:
    unit, per_op = units_per_op(op_id, params)
    info = {
        "n": n, "cpus": cpus, "available_cpus": available, "oversubscribed": oversubscribed, "pinned": pinned,
        "clock": CLOCK, "unit": unit, "units_per_op": per_op,
        "rounds": len(kept),
        "wall_ns": [r["wall_ns"] for r in kept],
        "process_samples": [r["samples"] for r in kept],
        "overhead_ns": overhead_ns,
    }
    th = round_throughputs(info)
    s = summarize(th)
    # each process's own clock: Σ over processes of its units / its batch time (assumes the batches overlap)
    harness_th = [sum(k * per_op / (ns / 1e9) for k, ns, _ in r if ns > 0) for r in info["process_samples"]]
    info.update({
        "exec_time_s": sum(info["wall_ns"]) / 1e9,
        "units_total": sum(sum(k for k, _, _ in r) for r in info["process_samples"]) * per_op,
        "aggregate": s.median, "aggregate_ci95": list(s.ci95), "aggregate_rsd_pct": s.rsd_pct,
        "per_core": s.median / n,
        "aggregate_harness_clocks": statistics.median(harness_th) if harness_th else None,
    })
    if unit == "bytes":
        info.update(aggregate_Bps=s.median, per_core_Bps=s.median / n)
    per_s = s.median / per_op if unit == "bytes" else s.median      # operations as time_s counts them
    info.update(aggregate_ops_per_s=per_s, per_core_ops_per_s=per_s / n)
    flags = []
    if oversubscribed:
        flags.append("oversubscribed")
    if not pinned:
        flags.append("not-pinned")
    cores = [_core_of(c) for c in cpus]
    if len(set(cpus)) == len(cpus) and None not in cores and len(set(cores)) < len(cpus):
        flags.append("smt-siblings")
    med_wall = statistics.median(info["wall_ns"]) if info["wall_ns"] else 0
    if med_wall and overhead_ns > OVERHEAD_SHARE * med_wall:
        flags.append("orchestrator-overhead")
    info["flags"] = flags
    return info


def add_efficiency(info: dict, reference: dict | None) -> dict:
    """Parallel efficiency TH_N / (N · TH_1) against the N = 1 cell's rounds, with its interval."""
    n = info["n"]
    if n == 1:
        info.update(efficiency=1.0, efficiency_ci95=None, efficiency_reference="N = 1: 1 by definition")
        return info
    if not reference:
        info.update(efficiency=None, efficiency_ci95=None,
                    efficiency_reference="no N = 1 cell of this op, params and engine in the run")
        return info
    th_n, th_1 = round_throughputs(info), round_throughputs(reference)
    ratio, ci = ratio_ci(th_n, th_1)          # median(TH_N) / median(TH_1)
    info.update(efficiency=ratio / n, efficiency_ci95=[ci[0] / n, ci[1] / n],
                efficiency_reference="TH_N / (N · TH_1), TH_1 from the N = 1 cell of this run; percentile "
                                     "bootstrap over both cells' rounds")
    return info


def load_average() -> float | None:
    """The machine's 1-minute load average (None where the system has none): a scaling cell records it
    at its start and end, so that a throughput that falls as N grows can be told from a busy machine."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def measure(engine, op_id: str, params: dict, n: int, cpus: list[int], slot: int, min_time: float,
            repeat: int, warmup: int, session=None, windows: int = 0) -> dict:
    """One (engine, op, params, N) cell: {"samples", "hello", "info", "energy_windows" | "energy_why"}.
    Raises HarnessError when a process cannot be started, set up or timed."""
    load_start = load_average()
    cell = ParallelCell(engine, n, cpus)
    try:
        cell.setup(slot, op_id, params)
        k = cell.procs[0].calibrate(slot, int(min_time * 1e9))
        overhead = cell.overhead_ns()
        all_rounds = cell.rounds(k, warmup + repeat)
        kept = all_rounds[warmup:]
        info = summarize_rounds(op_id, params, n, cell.cpus, cell.oversubscribed, cell.pinned, kept, overhead,
                                cpus)
        if cell.pin_error:
            info["pin_error"] = cell.pin_error
        info["load_avg"] = {"start": load_start, "end": load_average()}      # other work on the machine
        out = {"samples": [s for r in kept for s in r["samples"]], "hello": cell.hello, "info": info}
        if session is not None and session.started:
            got = []
            try:
                for _ in range(windows):
                    got.append(cell.energy_window(session, k))
                out["energy_windows"] = got
            except HarnessError as exc:
                out["energy_why"] = f"energy windows failed: {exc}"
        return out
    finally:
        cell.close()


ENERGY_METHOD = ("; {n} concurrent pinned processes: the meter read before the window request went to all "
                 "{n} and after the last reply, ops summed over them, time per op = orchestrator wall / Σ ops "
                 "(so avg_power_w is the power of all {n} over idle, the Pisa paper's P)")

"""The host target: engines started, cells verified, then timed in rounds (or group by group for
`--parallel`) and stored cell by cell."""
from __future__ import annotations

import time
from typing import Callable

from . import parallel
from ...catalog.ops import cost_varies, get_op
from ...core.conditions import host_conditions
from .engines import ENGINES, check_engine, served_by
from ...core.errors import HarnessError, UsageError
from ...stats.noise import (ENGINE as NOISE_ENGINE, OP as NOISE_OP, SAMPLE_S as NOISE_SAMPLE_S, SLOT as NOISE_SLOT,
                            noise_summary)
from ...core.records import FAILED, OK, PARTIAL, UNSUPPORTED, Cell, Conditions, Group, Plan, Result, cell_key
from ...stats.results import derive
from ...stats.sampling import DEFAULT_BUDGET_S, DEFAULT_PRECISION, PER_VISIT, CellSamples, RoundSampler, Source, StopRule
from .secure import close_provision, open_provision
from ...stats.summary import summarize
from ..verify import load_vectors
from .verifier import Verifier
from ..base import RunSession
from .meters import MeterUnavailable, get_meter
from .meters.session import EnergySession, measure_group

TARGET = "host"
FINISH_MARGIN_S = 3.0        # of the budget, kept for deriving and storing the results
# A harness process holds at most `max_slots` cells set up at once (its hello says how many; cbh:
# MAX_SLOTS); an engine with more cells to sample is given a further group of processes per that
# many cells, so a plan of 20,000 cells per engine runs whole instead of failing "too many slots".
DEFAULT_MAX_SLOTS = 4096     # a harness whose hello does not say: cbh's limit before it said so
SLOTS_RESERVED = 1           # kept free in every process: the reference loop's slot (stats/noise.py)
SLOT_LIMIT: int | None = None    # a lower limit than the harness's own (tests spread a small plan with it)



def estimator_for(op_id: str, params: dict, engine: str, single: bool) -> str:
    """median where the operation's own cost varies (catalog.cost_varies), where a device answers
    (a secure element or TPM: bus and device time vary by nature) and for single-shot latency (the
    seeds report its median); p1 for every deterministic kernel."""
    device = engine in ENGINES and bool(ENGINES[engine].provision)
    return "median" if single or device or cost_varies(op_id, params) else "p1"


class HostTarget:
    """The host: library engines (and secure elements, TPMs) in harness processes. Every cell is
    verified, then sampled in rounds over the whole run (stats/sampling.py) and stored; `--parallel`
    runs measure group by group instead (parallel.py)."""
    kind = "host"

    def __init__(self, plan: Plan, progress: Callable | None = None, log: Callable[[str], None] = lambda s: None):
        self.plan = plan
        self.progress = progress         # progress(kind, payload): ("prepare", (done, total, label)) or ("sample", sampling.Progress)
        self.log = log
        self.session: RunSession | None = None   # the run measure() is given: where cells are saved
        self.procs: dict = {}            # engine -> its first harness process (verification, energy windows)
        self.extra_procs: dict = {}      # engine -> its further harness processes (rounds take turns)
        self.more_procs: dict = {}       # engine -> further groups of processes, for the cells beyond one's slots
        self.provisions: dict = {}       # engine -> secure.Provision (token / TPM started for the run)
        self.engine_info: dict = {}
        self.unusable: dict = {}
        self.hello: dict = {}
        self.meter = open_meter(plan.options.energy)
        self.energy = None
        self.started = time.monotonic()

    # --- engines ------------------------------------------------------------------------------
    def start_engines(self) -> None:
        for name in self.plan.options.engines:
            self._start(name)

    def _start(self, name: str) -> None:
        engine = ENGINES[name]
        try:
            prov = open_provision(engine)
            if prov is not None:
                self.provisions[name] = prov
            proc = engine.start()
            info, why = check_engine(engine, proc)
        except (HarnessError, UsageError, OSError) as exc:   # unusable here: the run goes on without it
            self.unusable[name] = str(exc)
            return
        if name in self.provisions:
            info = {**info, **self.provisions[name].facts}
        self.engine_info[name] = info
        self.hello = self.hello or proc.hello
        if why:
            self.unusable[name] = why
            proc.close()
        else:
            self.procs[name] = proc

    def processes_per_engine(self, name: str) -> int:
        """Harness processes an engine's cells are spread over: each has its own memory layout, and
        which one is fast is luck. A secure element or TPM is one device: one session to it."""
        if ENGINES[name].provision:
            return 1
        return max(1, int(self.plan.options.processes or 1))

    def _start_extra(self, name: str) -> list:
        """The engine's processes beyond the first (started after verification, used for sampling)."""
        if name not in self.extra_procs:
            self.extra_procs[name] = []
            for _ in range(self.processes_per_engine(name) - 1):
                try:
                    proc = ENGINES[name].start()
                    _, why = check_engine(ENGINES[name], proc)
                except HarnessError as exc:
                    self.log(f"{name}: an extra harness process failed to start ({exc}); sampling with fewer")
                    break
                if why:
                    proc.close()
                    break
                self.extra_procs[name].append(proc)
        return [self.procs[name]] + self.extra_procs[name]

    def slots_per_process(self, name: str) -> int:
        """How many of the engine's cells one of its processes is given (its harness's max_slots,
        less the reserved ones)."""
        limit = int(self.procs[name].hello.get("max_slots") or DEFAULT_MAX_SLOTS)
        if SLOT_LIMIT is not None:
            limit = min(limit, SLOT_LIMIT)
        return max(1, limit - SLOTS_RESERVED)

    def sampling_procs(self, name: str, ordinal: int) -> list:
        """The processes the engine's `ordinal`-th sampled cell is set up and sampled in: the first
        group (its verifying process and the extras) for the first slots_per_process cells, then a
        group of fresh processes per that many more."""
        group = ordinal // self.slots_per_process(name)
        if group == 0:
            return self._start_extra(name)
        groups = self.more_procs.setdefault(name, [])
        while len(groups) < group:
            groups.append(self._start_group(name))
        return groups[group - 1]

    def _start_group(self, name: str) -> list:
        """processes_per_engine fresh processes of the engine; a failure to start one fails the cells
        that were to go there (HarnessError)."""
        procs = []
        try:
            for _ in range(self.processes_per_engine(name)):
                procs.append(ENGINES[name].start())
                _, why = check_engine(ENGINES[name], procs[-1])
                if why:
                    raise HarnessError(f"{name}: a further harness process is unusable ({why})")
        except BaseException:
            for proc in procs:
                proc.close()
            raise
        return procs

    def close(self) -> None:
        for proc in list(self.procs.values()) + [p for ps in self.extra_procs.values() for p in ps] \
                + [p for groups in self.more_procs.values() for ps in groups for p in ps]:
            proc.close()
        for name, prov in self.provisions.items():
            close_provision(ENGINES[name], prov)
        self.provisions = {}
        if self.meter is not None:
            self.meter.close()

    def conditions(self) -> dict:
        hello = {k: v for k, v in self.hello.items() if k != "t"}
        return {"host": host_conditions(), "harness": hello,
                "engines": {n: {"description": ENGINES[n].description, **self.engine_info.get(n, {}),
                                **({"unusable": self.unusable[n]} if n in self.unusable else {})}
                            for n in self.plan.options.engines}}

    # --- the Target protocol ------------------------------------------------------------------
    def open(self) -> dict:
        self.start_engines()
        return self.conditions()

    def measure(self, session: RunSession) -> None:
        self.session = session
        verifier = Verifier(self.procs, load_vectors(extra=self.plan.options.extra.get("vectors") or ()))
        if self.meter is not None:
            self.energy = EnergySession(self.meter, int(self.plan.options.extra.get("energy_windows") or 5),
                                        session.previous_conditions.get("energy_meter"))
        try:
            strategy = self._run_groups if parallel.is_parallel_run(self.plan) else self._run_rounds
            strategy(session.conditions, session.previous_conditions, verifier)
        finally:
            verifier.close()

    def _report(self, kind: str, payload) -> None:
        if self.progress:
            self.progress(kind, payload)

    def _cell(self, seq: int, group: Group, engine: str, status: str, kat: str, detail: str,
              samples: list | None = None, result: dict | None = None) -> Cell:
        return Cell(op=group.op, params=group.params, engine=engine, target=TARGET,
                    provenance="measured" if status in (OK, PARTIAL) else "none", status=status, kat=kat,
                    detail=detail, samples=samples, result=Result(result) if result is not None else None, seq=seq)

    def _check_cell(self, seq: int, group: Group, e: str, verifier: Verifier) -> str | None:
        """Supported and verified: the verification detail; otherwise the cell is stored as
        unsupported or failed and None is returned."""
        op, params = group.op, parallel.op_params(group.params)   # without the process count
        if e in self.procs and (self.procs[e].proc.poll() is not None or self.procs[e].stopped):
            self.log(f"{e}: {self.procs[e].stopped or 'harness exited'}, restarting it")
            del self.procs[e]
            self._start(e)             # a crash costs one cell, not the rest of the run
        if e in self.unusable:
            self.session.save_cell(self._cell(seq, group, e, FAILED, "n/a", f"engine unusable: {self.unusable[e]}"))
            return None
        try:
            ok, why = self.procs[e].supports(ENGINES[e].harness_engine, op, params)
        except HarnessError as exc:
            ok, why = False, f"harness error: {exc}"
        if not ok:
            self.session.save_cell(self._cell(seq, group, e, UNSUPPORTED, "n/a", why))
            return None
        verdict = verifier.verify(e, op, params)
        if verdict.kat != "pass":
            self.session.save_cell(self._cell(seq, group, e, FAILED, "fail", verdict.detail))
            return None
        return verdict.detail

    def _timing_options(self, group: Group) -> tuple[int, float, int, bool]:
        opts = self.plan.options
        pick = lambda key: (getattr(opts, key) if key in opts.overrides or getattr(group, key) is None
                            else getattr(group, key))
        warmup = int(opts.warmup if group.warmup is None else group.warmup)
        return int(pick("repeat")), float(pick("min_time")), warmup, bool(group.single or opts.single)

    # --- rounds (every host run but --parallel) ------------------------------------------------
    def _run_rounds(self, conditions: dict, stored: Conditions, verifier: Verifier) -> None:
        """Verify every cell, set each up in every process of its engine, sample them all in
        rounds until the stop rule holds, then derive and store every cell at once."""
        partial = {c.key: c for c in self.session.stored_cells() if c.status == PARTIAL}
        done = self.session.done_keys()
        cells, meta, deferred = self._prepare_cells(done, partial, verifier)
        noise = self._reference_cell(verifier, stored.noise_floor)
        opts = self.plan.options
        previous_sampling = stored.sampling
        first_round = max([r for c in cells for r in c.rounds] + [-1]) + 1
        fixed = opts.fixed_samples
        end = self.started + float(opts.budget_s or DEFAULT_BUDGET_S) - FINISH_MARGIN_S
        # a device's cells come after the rounds: the rounds leave them their share of the budget
        main_end = time.monotonic() + (end - time.monotonic()) * len(cells) / max(1, len(cells) + len(deferred))
        rule = StopRule(min_samples=max([c_min for c_min in (m["min_samples"] for m in meta.values())] + [1]),
                        fixed=fixed, precision=float(opts.precision or DEFAULT_PRECISION), deadline=main_end)
        sampled = cells + ([noise] if noise is not None else [])
        sampler = RoundSampler(sampled, rule, per_visit=int(opts.per_visit or PER_VISIT),
                               seed=opts.seed, progress=lambda p: self._report("sample", p),
                               checkpoint=lambda _: self._checkpoint(cells, meta, sampler, noise, conditions),
                               first_round=first_round, block_rounds=previous_sampling.get("block_rounds"))
        if cells:
            self._energy_idle(start=True)
            try:
                sampler.run()
            except KeyboardInterrupt:
                self._checkpoint(cells, meta, sampler, noise, conditions)
                raise
        if deferred:
            device_cells = self._sample_deferred(deferred, meta, partial, rule, end)
        drift = sampler.machine()
        record = {**sampler.record(), "processes": {e: len(self.extra_procs.get(e, [])) + 1 for e in self.procs},
                  **self._process_groups(),
                  "budget_s": float(opts.budget_s or DEFAULT_BUDGET_S), "machine_tau_log": drift.tau_stretches,
                  "machine_tau_p1_log": drift.tau_p1, "machine_levels_log": list(drift.levels)}
        if previous_sampling.get("seed") is not None:     # a resumed run: every session's seed
            record["sessions"] = (previous_sampling.get("sessions") or [previous_sampling["seed"]]) + [record["seed"]]
        extra = {"sampling": record}
        if noise is not None:
            extra["noise_floor"] = noise_summary(noise, sampler.block_rounds or 1)
        energy = self._energy_windows(cells, meta)
        if self.energy is not None:
            extra["energy_meter"] = self.energy.summary()
        noise_rsd = machine_rsd((extra.get("noise_floor") or {}).get("rsd_pct"), cells)
        if noise_rsd is not None and "noise_floor" in extra:
            extra["noise_floor"]["judged_rsd_pct"] = noise_rsd       # what high-rsd compared against
        rows = [self._finished_row(c, meta[c.key], meta[c.key].get("sampler", sampler), noise_rsd,
                                   energy.get(c.key), drift.tau(c.estimator)) for c in cells]
        if deferred:
            rows += [self._finished_row(c, meta[c.key], meta[c.key]["sampler"], noise_rsd, None, 0.0)
                     for c in device_cells]
        self.session.save_cells(rows, {**conditions, **extra})
        for c in cells:
            for s in c.sources:
                s.proc.teardown(s.slot)

    def _process_groups(self) -> dict:
        """For the run's record, where an engine's cells were spread over several groups of processes
        (more cells than one process's slots): {"process_groups": {engine: groups}}."""
        groups = {e: 1 + len(g) for e, g in self.more_procs.items() if g}
        return {"process_groups": groups} if groups else {}

    def _prepare_cells(self, done: set, partial: dict, verifier: Verifier):
        """Cells ready to sample: verified, set up in each of their engine's processes, calibrated.
        A device's cells (a secure element, a TPM: few object slots) are only verified here and set
        up one at a time after the rounds (`deferred`)."""
        cells, meta, deferred, ordinals = [], {}, [], {}
        todo = [(gi, g, e, seq) for gi, g, e, seq in self._plan_cells() if cell_key(g.op, g.params, e) not in done]
        for i, (gi, group, e, seq) in enumerate(todo):
            self._report("prepare", (i, len(todo), f"{group.op} {e}"))
            detail = self._check_cell(seq, group, e, verifier)
            if detail is None:
                continue
            repeat, _, _, single = self._timing_options(group)
            key = cell_key(group.op, group.params, e)
            meta[key] = {"group": group, "seq": seq, "detail": detail, "single": single, "min_samples": repeat,
                         "slot": gi + 1, "engine": e}
            if ENGINES[e].provision:
                deferred.append(key)
                continue
            meta[key]["ordinal"] = ordinals[e] = ordinals.get(e, -1) + 1     # which of its engine's processes
            cell = self._setup_cell(key, meta[key], partial.get(key))
            if cell is not None:
                cells.append(cell)
        self._report("prepare", (len(todo), len(todo), "sampling"))
        return cells, meta, deferred

    def _setup_cell(self, key: str, meta: dict, old: Cell | None) -> CellSamples | None:
        """Set the cell up in every process of its engine, calibrate k, warm up; resume its stored
        samples. A failure is stored as the cell's result and gives None."""
        group, e, slot = meta["group"], meta["engine"], meta["slot"]
        repeat, min_time, warmup, single = self._timing_options(group)
        op, params = group.op, parallel.op_params(group.params)
        try:
            procs = self.sampling_procs(e, meta.get("ordinal", 0))
            for proc in procs:
                proc.setup(slot, ENGINES[e].harness_engine, op, params)
            # an operation whose own cost varies is timed one at a time: its median is the quantity
            k = 1 if single or cost_varies(op, params) else procs[0].calibrate(slot, int(min_time * 1e9))
            if warmup:
                for proc in procs:
                    proc.sample(slot, k, warmup)
        except HarnessError as exc:
            self.session.save_cell(self._cell(meta["seq"], group, e, FAILED, "pass", f"timing failed: {exc}"))
            return None
        cell = CellSamples(key, e, op, params, k, estimator_for(op, params, e, single),
                           [Source(p, slot) for p in procs], divisor=2.0 if get_op(op).halve else 1.0,
                           min_samples=repeat)
        if old and old.samples and old.result is not None and old.result.sampling:
            cell.samples = [list(s) for s in old.samples]
            cell.rounds = list(old.result.sampling["rounds"])
            cell.processes = list(old.result.sampling.get("processes") or [0] * len(cell.samples))
            cell.k = int(old.samples[0][0])      # the batch size the stored samples have
        return cell

    def _sample_deferred(self, deferred: list, meta: dict, partial: dict, rule: StopRule,
                         end: float) -> list:
        """A device's cells, one after the other, each set up, sampled in rounds of its own (its
        share of the time left) and torn down."""
        cells = []
        for i, key in enumerate(deferred):
            cell = self._setup_cell(key, meta[key], partial.get(key))
            if cell is None:
                continue
            share = max(0.0, end - time.monotonic()) / (len(deferred) - i)
            own = StopRule(min_samples=cell.min_samples, fixed=rule.fixed, precision=rule.precision,
                           deadline=time.monotonic() + share)
            first = max(cell.rounds + [-1]) + 1
            sampler = RoundSampler([cell], own, per_visit=int(self.plan.options.per_visit or PER_VISIT),
                                   seed=self.plan.options.seed, first_round=first,
                                   progress=lambda p: self._report("sample", p))
            sampler.run()
            meta[key]["sampler"] = sampler
            for s in cell.sources:
                s.proc.teardown(s.slot)
            cells.append(cell)
        return cells

    def _plan_cells(self):
        """(group index, group, engine, seq) of every planned cell, in plan order."""
        seq = 0
        for gi, group in enumerate(self.plan.groups):
            for e in group.engines:
                yield gi, group, e, seq
                seq += 1

    def _reference_cell(self, verifier: Verifier, previous: dict | None) -> CellSamples | None:
        """The no-crypto reference loop as one more cell of the rounds: the machine's noise floor."""
        try:
            verdict = verifier.verify(NOISE_ENGINE, NOISE_OP, {})
            if verdict.kat != "pass":
                self.log(f"machine noise floor: the reference loop failed its check ({verdict.detail})")
                return None
            proc = verifier.proc(NOISE_ENGINE)
            proc.setup(NOISE_SLOT, NOISE_ENGINE, NOISE_OP, {})
            k = proc.calibrate(NOISE_SLOT, int(NOISE_SAMPLE_S * 1e9))
        except HarnessError as exc:
            self.log(f"machine noise floor: reference loop unavailable ({exc})")
            return None
        cell = CellSamples("__reference_loop__", NOISE_ENGINE, NOISE_OP, {}, k, "p1", [Source(proc, NOISE_SLOT)],
                           companion=True)
        if previous and previous.get("rounds"):
            cell.samples = [list(s) for s in previous["samples"]]
            cell.rounds = list(previous["rounds"])
            cell.processes = [0] * len(cell.samples)
        return cell

    def _finished_row(self, cell: CellSamples, meta: dict, sampler: RoundSampler, noise_rsd: float | None,
                      energy, tau: float) -> Cell:
        group = meta["group"]
        if cell.failure or not cell.samples:
            why = cell.failure or "no samples"
            return self._cell(meta["seq"], group, cell.engine, FAILED, "pass", f"timing failed: {why}")
        result = self._derive(cell, meta, sampler, noise_rsd, tau)
        if self.energy is not None:
            # only cells that passed verification and timing get here: no energy without a KAT pass
            if isinstance(energy, str):
                result["energy_note"] = energy
            else:
                en, why = self.energy.cell_energy(cell.op, cell.params, energy or [])
                if en is not None:
                    result["energy"] = en
                else:
                    result["energy_note"] = why + (f" ({self.energy.why})" if self.energy.why else "")
        detail = meta["detail"]
        try:                                  # a PSA engine: builtin software or a driver served the calls
            served = served_by(ENGINES[cell.engine], cell.sources[0].proc, cell.op)
        except HarnessError:
            served = None
        if served:
            result["served_by"] = served
            detail = f"{detail}; served by {served}"
        return self._cell(meta["seq"], group, cell.engine, OK, "pass", detail, cell.samples, result)

    def _derive(self, cell: CellSamples, meta: dict, sampler: RoundSampler, noise_rsd: float | None,
                tau: float) -> dict:
        sampling = {"rounds": cell.rounds, "processes": cell.processes, "block_rounds": sampler.block_rounds or 1,
                    "estimator": cell.estimator, "tau": tau}
        precision = None if sampler.rule.fixed else sampler.rule.precision
        return derive(cell.op, cell.params, cell.samples, cell.sources[0].proc.hello, meta["single"], sampling,
                      noise_rsd, precision)

    def _checkpoint(self, cells: list, meta: dict, sampler: RoundSampler, noise, conditions: dict) -> None:
        """Every cell's samples so far, as `partial` rows (resumed, not redone, by --resume)."""
        rows = []
        for c in cells:
            if c.failure or not c.samples:
                continue
            # what --resume needs and `show` can print; the intervals are computed when the cell finishes
            result = derive(c.op, c.params, c.samples, c.sources[0].proc.hello, meta[c.key]["single"])
            result["sampling"] = {"rounds": list(c.rounds), "processes": list(c.processes),
                                  "block_rounds": sampler.block_rounds or 1}
            result["flags"] = result["flags"] + ["partial"]
            rows.append(self._cell(meta[c.key]["seq"], meta[c.key]["group"], c.engine, PARTIAL, "pass",
                                   meta[c.key]["detail"], c.samples, result))
        extra = {"sampling": {**sampler.record(), "partial": True}}
        if noise is not None and noise.samples:
            extra["noise_floor"] = noise_summary(noise, sampler.block_rounds or 1)
        self.session.save_cells(rows, {**conditions, **extra})

    # --- energy (host meters) ------------------------------------------------------------------
    def _energy_idle(self, start: bool) -> None:
        """The idle baseline: its first windows at the start, one more after every group."""
        if self.energy is None or (start and self.energy.started) or (not start and not self.energy.started):
            return
        proc = next((p for p in self.procs.values() if p.proc.poll() is None), None)   # any harness: it only sleeps
        if proc is None:
            self.energy.why = "no running harness to take idle windows with"
            return
        try:
            if start:
                self.energy.start(proc)
            else:
                self.energy.idle(proc)
        except HarnessError as exc:
            self.energy.why = f"idle window failed: {exc}"

    def _energy_windows(self, cells: list, meta: dict) -> dict:
        """cell key -> its energy windows (or why there are none), group by group after the rounds:
        engines of a group interleaved, an idle window after each group."""
        if self.energy is None or not self.energy.started:
            return {}
        out: dict = {}
        by_group: dict = {}
        for c in cells:
            if not c.failure:
                by_group.setdefault(meta[c.key]["slot"], []).append(c)       # one slot per group
        for group_cells in by_group.values():
            procs = {c.engine: c.sources[0].proc for c in group_cells}
            slot = group_cells[0].sources[0].slot
            windows, failed = measure_group(self.energy, procs, slot, {c.engine: c.k for c in group_cells},
                                            [c.engine for c in group_cells], {})
            for c in group_cells:
                out[c.key] = failed.get(c.engine, windows.get(c.engine))
            self._energy_idle(start=False)
        return out

    # --- group by group (--parallel) -----------------------------------------------------------
    def _run_groups(self, conditions: dict, stored: Conditions, verifier: Verifier) -> None:
        done = self.session.done_keys()
        self.parallel_ref = {}           # (op, params, engine) -> result["parallel"] of its N = 1 cell
        for c in self.session.stored_cells():
            if c.params.get(parallel.PARAM) == 1 and c.ok and c.result is not None:
                self.parallel_ref[cell_key(c.op, parallel.op_params(c.params), c.engine)] = c.result.parallel
        seq = 0
        groups = self.plan.groups
        for gi, group in enumerate(groups):
            base_seq = seq
            seq += len(group.engines)
            pending = [e for e in group.engines if cell_key(group.op, group.params, e) not in done]
            if not pending:
                continue
            self._report("prepare", (gi, len(groups), f"{group.op} ×{group.parallel}"))
            self._energy_idle(start=True)
            ready = []
            for e in pending:
                detail = self._check_cell(base_seq + group.engines.index(e), group, e, verifier)
                if detail is not None:
                    ready.append((e, detail))
            if ready:
                self._run_parallel({e: base_seq + group.engines.index(e) for e in group.engines}, group, ready)
            if self.energy is not None:
                self._energy_idle(start=False)
                self.session.update_conditions({**conditions, "energy_meter": self.energy.summary()})
        self._report("prepare", (len(groups), len(groups), "done"))

    def _run_parallel(self, seqs: dict, group: Group, ready: list) -> None:
        """Scaling cells (parallel.py): per engine, N pinned processes running batches at once.
        Engines are measured one after the other (N processes each already fill the CPUs)."""
        op, params, n = group.op, parallel.op_params(group.params), group.parallel
        repeat, min_time, warmup, single = self._timing_options(group)
        cpus = self.plan.options.parallel_cpus or parallel.available_cpus()
        slot = abs(hash((op, str(params)))) % 1_000_000
        session = self.energy if self.energy is not None and self.energy.started else None
        for e, detail in ready:
            try:
                got = parallel.measure(ENGINES[e], op, params, n, cpus, slot, min_time, repeat, warmup,
                                      session, session.windows if session else 0)
            except HarnessError as exc:
                self.session.save_cell(self._cell(seqs[e], group, e, FAILED, "pass", f"timing failed: {exc}"))
                continue
            result = derive(op, params, got["samples"], got["hello"], single)
            ref_key = cell_key(op, params, e)
            info = parallel.add_efficiency(got["info"], self.parallel_ref.get(ref_key))
            if n == 1:
                self.parallel_ref[ref_key] = info
            result["parallel"] = info
            if self.energy is not None:
                if session is None:
                    result["energy_note"] = f"energy: no idle baseline ({self.energy.why or 'not started'})"
                elif got.get("energy_why"):
                    result["energy_note"] = got["energy_why"]
                else:
                    en, why = self.energy.cell_energy(op, params, got.get("energy_windows") or [])
                    if en is not None:
                        en["method"] += parallel.ENERGY_METHOD.format(n=n)
                        result["energy"] = en
                    else:
                        result["energy_note"] = why + (f" ({self.energy.why})" if self.energy.why else "")
            self.session.save_cell(self._cell(seqs[e], group, e, OK, "pass", detail, got["samples"], result))


def machine_rsd(reference_rsd: float | None, cells: list) -> float | None:
    """The noise a cell is judged against (high-rsd): the larger of the reference loop's RSD and
    the median RSD of the run's deterministic cells. The reference loop runs in registers; crypto
    code (AES units, SIMD, memory) feels a busy neighbour on the same core more, so on a shared
    machine the typical cell is the better yardstick of what the machine does to everyone."""
    import statistics
    rsds = [summarize(c.per_op()).rsd_pct for c in cells if c.estimator == "p1" and len(c.samples) >= 2]
    typical = statistics.median(rsds) if rsds else None
    values = [v for v in (reference_rsd, typical) if v is not None]
    return max(values) if values else None


def open_meter(name: str | None):
    """The energy meter a plan asks for (None: no energy); a meter unusable here is a usage error
    that names the remedy."""
    if not name:
        return None
    try:
        return get_meter(name)
    except MeterUnavailable as exc:
        raise UsageError(f"--energy {name}: {exc.kind}: {exc.reason}"
                         + (f"; remedy: {exc.remedy}" if exc.remedy else ""))
    except ValueError as exc:
        raise UsageError(f"--energy: {exc}")

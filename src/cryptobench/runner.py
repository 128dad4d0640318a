"""Orchestration of a host run: plan, verify, time interleaved, store cell by cell."""
from __future__ import annotations

import signal
from dataclasses import asdict
from typing import Callable

from .catalog import get_op, resolve_params
from .conditions import host_conditions
from .engines import DEFAULT_ENGINES, ENGINES, check_engine
from .secure import close_provision, open_provision
from .errors import HarnessError, UsageError
from .noise import NoiseFloor
from .results import derive
from . import scaling
from .store import Store, cell_key
from .suites import Suite
from .verify import Verifier

TARGET = "host"


def build_plan(suite: Suite | None, engines: list[str] | None, ops: list[str] | None,
               param_overrides: dict[str, list], repeat: int | None, min_time: float | None,
               warmup: int | None, baseline: str | None, single: bool = False) -> dict:
    """The list of comparison groups to run: each an (op, params) and the engines that take part."""
    chosen = engines or (suite.engines if suite and suite.engines else None)
    groups = []
    if suite is not None:
        benches = suite.benches
        if ops:
            benches = [b for b in benches if b.op in ops]
            missing = [o for o in ops if o not in {b.op for b in suite.benches}]
            if missing:
                raise UsageError(f"--op: suite '{suite.name}' has no '{missing[0]}'; it has: "
                                 + ", ".join(dict.fromkeys(b.op for b in suite.benches)))
        for b in benches:
            groups.append({"op": b.op, "params": dict(b.params), "table": b.table,
                           "bench_engines": b.engines, "repeat": b.repeat, "warmup": b.warmup,
                           "min_time": b.min_time, "single": b.single})
    else:
        for op_id in ops or []:
            op = get_op(op_id)
            groups.append({"op": op.id, "params": resolve_params(op, {}, "--op"), "table": "",
                           "bench_engines": None, "repeat": None, "warmup": None, "min_time": None,
                           "single": False})
    if param_overrides:
        groups = _apply_overrides(groups, param_overrides)
    # drop duplicate groups that overrides may create, keeping order
    seen, unique = set(), []
    for g in groups:
        key = cell_key(g["op"], g["params"], "")
        if key not in seen:
            seen.add(key)
            unique.append(g)
    all_engines = chosen or list(DEFAULT_ENGINES)
    for g in unique:
        g["engines"] = [e for e in all_engines if g["bench_engines"] is None or e in g["bench_engines"]]
    return {
        "suite": suite.name if suite else None,
        "title": suite.title if suite else "",
        "source": suite.source if suite else "",
        "baseline": baseline or (suite.baseline if suite else None),
        "relative": bool(suite.relative) if suite else False,
        "options": {
            "repeat": repeat if repeat is not None else (suite.repeat if suite else 20),
            "warmup": warmup if warmup is not None else (suite.warmup if suite else 2),
            "min_time": min_time if min_time is not None else (suite.min_time if suite else 0.01),
            "engines": all_engines,
            "single": single,
            "repeat_from_cli": repeat is not None,
            "min_time_from_cli": min_time is not None,
        },
        "groups": [g for g in unique if g["engines"]],
        "skipped_groups": [f"{g['op']} ({', '.join(g['bench_engines'])} only)" for g in unique
                           if not g["engines"]],
    }


def _apply_overrides(groups: list[dict], overrides: dict[str, list]) -> list[dict]:
    out = []
    for g in groups:
        op = get_op(g["op"])
        names = [n for n in overrides if op.param(n) is not None]
        if not names:
            out.append(g)
            continue
        combos = [{}]
        for n in names:
            combos = [{**c, n: v} for c in combos for v in overrides[n]]
        for c in combos:
            out.append({**g, "params": resolve_params(op, {**g["params"], **c}, "--param")})
    unknown = [n for n in overrides if not any(get_op(g["op"]).param(n) for g in groups)]
    if unknown:
        valid = sorted({p for g in groups for p in get_op(g["op"]).param_names})
        raise UsageError(f"--param: no selected operation has a parameter '{unknown[0]}'; valid: "
                         + ", ".join(valid))
    return out


class Runner:
    def __init__(self, store: Store, plan: dict, progress: Callable | None = None,
                 log: Callable[[str], None] = lambda s: None):
        self.store = store
        self.plan = plan
        self.progress = progress
        self.log = log
        self.procs: dict = {}
        self.provisions: dict = {}       # engine -> secure.Provision (token / TPM started for the run)
        self.engine_info: dict = {}
        self.unusable: dict = {}
        self.hello: dict = {}
        self.meter = open_meter(plan["options"].get("energy"))
        self.energy = None

    # --- engines ------------------------------------------------------------------------------
    def start_engines(self) -> None:
        for name in self.plan["options"]["engines"]:
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

    def close(self) -> None:
        for proc in self.procs.values():
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
                            for n in self.plan["options"]["engines"]}}

    # --- the run --------------------------------------------------------------------------------
    def run(self, run_id: int | None = None) -> int:
        self.start_engines()
        conditions = self.conditions()
        previous_energy = None
        if run_id is None:
            run_id = self.store.create_run(self.plan["suite"], self.plan, conditions)
            previous_noise = None
        else:
            stored = self.store.load_run(run_id)["conditions"]
            previous_noise = stored.get("noise_floor")
            previous_energy = stored.get("energy_meter")
            self.store.update_conditions(run_id, conditions)
            self.store.set_status(run_id, "running")
        done = self.store.done_keys(run_id)
        self.parallel_ref = {}           # (op, params, engine) -> result["parallel"] of its N = 1 cell
        if scaling.is_parallel_run(self.plan):
            for c in self.store.load_run(run_id)["cells"]:
                if c["params"].get(scaling.PARAM) == 1 and c["status"] == "ok":
                    self.parallel_ref[cell_key(c["op"], scaling.op_params(c["params"]), c["engine"])] = \
                        c["result"]["parallel"]
        verifier = Verifier(self.procs)
        noise = NoiseFloor(verifier, previous_noise)
        if self.meter is not None:
            from .meters.session import EnergySession
            self.energy = EnergySession(self.meter, int(self.plan["options"].get("energy_windows") or 5),
                                        previous_energy)
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            seq = 0
            for group in self.plan["groups"]:
                pending = [e for e in group["engines"]
                           if cell_key(group["op"], group["params"], e) not in done]
                base_seq = seq
                seq += len(group["engines"])
                if not pending:
                    continue
                if self.progress:
                    self.progress(group, "start")
                if not noise.k and not noise.why:
                    noise.start()
                if self.energy is not None and not self.energy.started:
                    self._energy_idle(start=True)
                self._run_group(run_id, base_seq, group, pending, verifier)
                noise.sample()
                extra = {"noise_floor": noise.summary()}
                if self.energy is not None:
                    self._energy_idle(start=False)
                    extra["energy_meter"] = self.energy.summary()
                self.store.update_conditions(run_id, {**conditions, **extra})
                if self.progress:
                    self.progress(group, "end")
            self.store.set_status(run_id, "complete")
        except KeyboardInterrupt:
            self.store.set_status(run_id, "interrupted")
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
            verifier.close()
            self.close()
        return run_id

    def _idle_proc(self):
        """A running harness to sleep in during idle windows (any engine's: it only sleeps)."""
        for proc in self.procs.values():
            if proc.proc.poll() is None:
                return proc
        return None

    def _energy_idle(self, start: bool) -> None:
        """The idle baseline: IDLE_FIRST windows at the start, one after every group."""
        proc = self._idle_proc()
        if proc is None:
            self.energy.why = "no running harness to take idle windows with"
            return
        try:
            if start:
                self.energy.start(proc)
            elif self.energy.started:
                self.energy.idle(proc)
        except HarnessError as exc:
            self.energy.why = f"idle window failed: {exc}"

    def _cell(self, group, engine, status, kat, detail, samples=None, result=None) -> dict:
        return {"op": group["op"], "params": group["params"], "engine": engine, "target": TARGET,
                "provenance": "measured" if status == "ok" else "none", "status": status, "kat": kat,
                "detail": detail, "samples": samples, "result": result}

    def _run_group(self, run_id: int, base_seq: int, group: dict, engines: list[str],
                   verifier: Verifier) -> None:
        op, params = group["op"], scaling.op_params(group["params"])   # without the process count
        seqs = {e: base_seq + group["engines"].index(e) for e in engines}
        ready = []
        for e in engines:
            if e in self.procs and self.procs[e].proc.poll() is not None:
                self.log(f"{e}: harness exited, restarting it")
                del self.procs[e]
                self._start(e)             # a crash costs one group, not the rest of the run
            if e in self.unusable:
                self.store.save_cell(run_id, seqs[e], self._cell(group, e, "failed", "n/a",
                                                                 f"engine unusable: {self.unusable[e]}"))
                continue
            proc = self.procs[e]
            try:
                ok, why = proc.supports(ENGINES[e].harness_engine, op, params)
            except HarnessError as exc:
                ok, why = False, f"harness error: {exc}"
            if not ok:
                self.store.save_cell(run_id, seqs[e], self._cell(group, e, "unsupported", "n/a", why))
                continue
            verdict = verifier.verify(e, op, params)
            if verdict.kat != "pass":
                self.store.save_cell(run_id, seqs[e], self._cell(group, e, "failed", "fail", verdict.detail))
                continue
            ready.append((e, verdict.detail))
        if not ready:
            return
        if group.get("parallel"):
            self._run_parallel(run_id, seqs, group, ready)
            return
        samples, failures, energy = self._time_interleaved(group, [e for e, _ in ready])
        opts = self.plan["options"]
        single = bool(group.get("single") or opts["single"])
        for e, detail in ready:
            if e in failures:
                self.store.save_cell(run_id, seqs[e], self._cell(group, e, "failed", "pass",
                                                                 f"timing failed: {failures[e]}"))
                continue
            result = derive(op, params, samples[e], self.procs[e].hello, single)
            if self.energy is not None:
                # only cells that passed verification and timing get here: no energy without a KAT pass
                if isinstance(energy.get(e), str):
                    result["energy_note"] = energy[e]
                else:
                    en, why = self.energy.cell_energy(op, params, energy.get(e) or [])
                    if en is not None:
                        result["energy"] = en
                    else:
                        result["energy_note"] = why + (f" ({self.energy.why})" if self.energy.why else "")
            self.store.save_cell(run_id, seqs[e], self._cell(group, e, "ok", "pass", detail,
                                                             samples[e], result))

    def _timing_options(self, group: dict) -> tuple[int, float, int, bool]:
        opts = self.plan["options"]
        pick = lambda key: opts[key] if opts.get(f"{key}_from_cli") or group.get(key) is None else group[key]
        warmup = int(opts["warmup"] if group.get("warmup") is None else group["warmup"])
        return int(pick("repeat")), float(pick("min_time")), warmup, bool(group.get("single") or opts["single"])

    def _run_parallel(self, run_id: int, seqs: dict, group: dict, ready: list) -> None:
        """Scaling cells (scaling.py): per engine, N pinned processes running batches at once.
        Engines are measured one after the other (N processes each already fill the CPUs)."""
        op, params, n = group["op"], scaling.op_params(group["params"]), group["parallel"]
        repeat, min_time, warmup, single = self._timing_options(group)
        cpus = self.plan["options"].get("parallel_cpus") or scaling.available_cpus()
        slot = abs(hash((op, str(params)))) % 1_000_000
        session = self.energy if self.energy is not None and self.energy.started else None
        for e, detail in ready:
            try:
                got = scaling.measure(ENGINES[e], op, params, n, cpus, slot, min_time, repeat, warmup,
                                      session, session.windows if session else 0)
            except HarnessError as exc:
                self.store.save_cell(run_id, seqs[e], self._cell(group, e, "failed", "pass",
                                                                 f"timing failed: {exc}"))
                continue
            result = derive(op, params, got["samples"], got["hello"], single)
            ref_key = cell_key(op, params, e)
            info = scaling.add_efficiency(got["info"], self.parallel_ref.get(ref_key))
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
                        en["method"] += scaling.ENERGY_METHOD.format(n=n)
                        result["energy"] = en
                    else:
                        result["energy_note"] = why + (f" ({self.energy.why})" if self.energy.why else "")
            self.store.save_cell(run_id, seqs[e], self._cell(group, e, "ok", "pass", detail,
                                                             got["samples"], result))

    def _time_interleaved(self, group: dict, engines: list[str]):
        """Samples of every engine, taken in rounds A B C, B C A, … so drift hits all alike."""
        repeat, min_time, warmup, single = self._timing_options(group)
        failures, ks = {}, {}
        slot = abs(hash((group["op"], str(group["params"])))) % 1_000_000
        for e in engines:
            proc = self.procs[e]
            try:
                proc.setup(slot, ENGINES[e].harness_engine, group["op"], group["params"])
                ks[e] = 1 if single else proc.calibrate(slot, int(min_time * 1e9))
            except HarnessError as exc:
                failures[e] = str(exc)
        active = [e for e in engines if e not in failures]
        samples = {e: [] for e in active}
        for rnd in range(warmup + repeat):
            order = active[rnd % len(active):] + active[:rnd % len(active)] if active else []
            for e in order:
                if e in failures:
                    continue
                try:
                    got = self.procs[e].sample(slot, ks[e], 1)
                except HarnessError as exc:
                    failures[e] = str(exc)
                    continue
                if rnd >= warmup:
                    samples[e].extend([list(s) for s in got])
        energy: dict = {}
        if self.energy is not None and self.energy.started:
            from .meters.session import measure_group
            windows, failed = measure_group(self.energy, self.procs, slot, ks,
                                            [e for e in active if e not in failures], failures)
            energy = {**windows, **failed}
        for e in active:
            self.procs[e].teardown(slot)
        return samples, failures, energy


def open_meter(name: str | None):
    """The energy meter a plan asks for (None: no energy); a meter unusable here is a usage error
    that names the remedy."""
    if not name:
        return None
    from .meters import MeterUnavailable, get_meter
    try:
        return get_meter(name)
    except MeterUnavailable as exc:
        raise UsageError(f"--energy {name}: {exc.kind}: {exc.reason}"
                         + (f"; remedy: {exc.remedy}" if exc.remedy else ""))
    except ValueError as exc:
        raise UsageError(f"--energy: {exc}")


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt()

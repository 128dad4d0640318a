"""A Plan from a suite and the command line's options: the comparison groups (op, params, the
engines that take part) and the options every target reads (repeat, warm-up, min-time, the host
sampler's budget, precision and processes). A microcontroller run's plan adds its target on top
(mcu_plan.py)."""
from __future__ import annotations

import dataclasses

from ..catalog.ops import get_op, resolve_params
from ..targets.host.engines import DEFAULT_ENGINES
from ..core.errors import UsageError
from ..core.records import Group, Options, Plan
from ..stats.sampling import DEFAULT_BUDGET_S, DEFAULT_PRECISION, PER_VISIT, PROCESSES
from .suites import Suite


def build_plan(suite: Suite | None, *, engines: list[str] | None = None, ops: list[str] | None = None,
               param_overrides: dict[str, list] | None = None, repeat: int | None = None,
               min_time: float | None = None, warmup: int | None = None, baseline: str | None = None,
               single: bool = False, sampling: dict | None = None) -> Plan:
    """The list of comparison groups to run: each an (op, params) and the engines that take part.
    Every option is by name; None takes the suite's value, then the default. `sampling` (host runs):
    budget_s, precision (a fraction), processes, seed."""
    groups = _unique(_apply_overrides(_groups(suite, ops), param_overrides or {}))
    all_engines = engines or (suite.engines if suite and suite.engines else None) or list(DEFAULT_ENGINES)
    for g in groups:
        g.engines = [e for e in all_engines if g.bench_engines is None or e in g.bench_engines]
    chosen, chosen_from = pick_baseline(all_engines, baseline, suite.baseline if suite else None)
    return Plan(
        suite=suite.name if suite else None,
        title=suite.title if suite else "",
        source=suite.source if suite else "",
        baseline=chosen,
        baseline_from=chosen_from,
        relative=bool(suite.relative) if suite else False,
        layout=suite.layout if suite else None,
        options=_options(suite, all_engines, repeat, min_time, warmup, single, sampling or {}),
        groups=[g for g in groups if g.engines],
        skipped_groups=[f"{g.op} ({', '.join(g.bench_engines)} only)" for g in groups if not g.engines],
    )


# The engine an ad-hoc run's Improvement divides by when none is named: software first, as the
# studies compare (the portable builds are the closest to a microcontroller library), then the
# first engine given. Microcontroller recipes: Mbed TLS, the studies' software library.
DEFAULT_BASELINES = ("openssl-sw", "mbedtls-portable", "openssl-portable", "mbedtls")


def pick_baseline(engines: list[str], given: str | None, suite_baseline: str | None) -> tuple[str | None, str | None]:
    """The baseline of a run of `engines` and who chose it: the option, the suite (where the suite's
    engine takes part), else the default (module comment); none for a single engine."""
    if given:
        return given, "option"
    if suite_baseline and suite_baseline in engines:
        return suite_baseline, "suite"
    if len(engines) < 2:
        return (suite_baseline, "suite") if suite_baseline else (None, None)
    return next((e for e in DEFAULT_BASELINES if e in engines), engines[0]), "default"


def _groups(suite: Suite | None, ops: list[str] | None) -> list[Group]:
    """The suite's benches (those of `ops` only, when given), or each op with its defaults."""
    if suite is None:
        return [Group(op=op.id, params=resolve_params(op, {}, "--op")) for op in (get_op(op_id) for op_id in ops or [])]
    benches = suite.benches
    if ops:
        benches = [b for b in benches if b.op in ops]
        missing = [o for o in ops if o not in {b.op for b in suite.benches}]
        if missing:
            raise UsageError(f"--op: suite '{suite.name}' has no '{missing[0]}'; it has: "
                             + ", ".join(dict.fromkeys(b.op for b in suite.benches)))
    return [Group(op=b.op, params=dict(b.params), table=b.table, bench_engines=b.engines, repeat=b.repeat,
                  warmup=b.warmup, min_time=b.min_time, single=b.single) for b in benches]


def _unique(groups: list[Group]) -> list[Group]:
    """Without the duplicate groups that parameter overrides may create, in order."""
    seen, unique = set(), []
    for g in groups:
        if g.key not in seen:
            seen.add(g.key)
            unique.append(g)
    return unique


def _options(suite: Suite | None, engines: list[str], repeat: int | None, min_time: float | None,
             warmup: int | None, single: bool, sampling: dict) -> Options:
    """The plan's options: the command line's, else the suite's, else the defaults."""
    return Options(
        repeat=repeat if repeat is not None else (suite.repeat if suite else 20),
        warmup=warmup if warmup is not None else (suite.warmup if suite else 2),
        min_time=min_time if min_time is not None else (suite.min_time if suite else 0.001),
        budget_s=sampling.get("budget_s") or (suite.budget if suite and suite.budget else DEFAULT_BUDGET_S),
        precision=sampling.get("precision") or (suite.precision / 100 if suite and suite.precision
                                                 else DEFAULT_PRECISION),
        processes=sampling.get("processes") or PROCESSES,
        per_visit=PER_VISIT,
        seed=sampling.get("seed"),
        engines=engines,
        single=single,
        # the options given on the command line, which override each bench's own repeat or min_time
        overrides=[name for name, value in (("repeat", repeat), ("min_time", min_time)) if value is not None],
        # a fixed n: --repeat, or a suite that gives its study's n and no budget or precision
        fixed_samples=repeat is not None or bool(suite and suite.repeat_set and not suite.budget
                                                  and not suite.precision and not sampling.get("budget_s")
                                                  and not sampling.get("precision")),
    )


def _apply_overrides(groups: list[Group], overrides: dict[str, list]) -> list[Group]:
    out = []
    for g in groups:
        op = get_op(g.op)
        names = [n for n in overrides if op.param(n) is not None]
        if not names:
            out.append(g)
            continue
        combos = [{}]
        for n in names:
            combos = [{**c, n: v} for c in combos for v in overrides[n]]
        for c in combos:
            out.append(dataclasses.replace(g, params=resolve_params(op, {**g.params, **c}, "--param")))
    unknown = [n for n in overrides if not any(get_op(g.op).param(n) for g in groups)]
    if unknown:
        valid = sorted({p for g in groups for p in get_op(g.op).param_names})
        raise UsageError(f"--param: no selected operation has a parameter '{unknown[0]}'; valid: "
                         + ", ".join(valid))
    return out

"""The records every layer shares (Params, Group, Options, Plan, Cell, Result, Energy,
Conditions, Run; a microcontroller target's, one per transport, are target_specs.py's), the one
place their identities are spelled, and their JSON form (stored.py; the store, store/database.py,
keeps that form in SQLite; results.document() is the exported one).

A cell is identified by its operation, its parameters and its engine; two parameter dicts are the
same cell when they hold the same values, whatever their key order, so every comparison, lookup
and stored key goes through `params_key` (canonical JSON: keys sorted).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .stored import GIVEN, JsonView, Stored
# the microcontroller target's records, one per transport (target_specs.py), named here too: every
# layer takes the plan's records from this module
from .target_specs import (BoardSpec, LabSpec, McuTargetSpec, QemuSpec, SimSpec, TargetSpecError,  # noqa: F401
                           TargetView, place_of)

# a cell's status (store/database.py, docs/schema.md)
OK, UNSUPPORTED, FAILED, PARTIAL = "ok", "unsupported", "failed", "partial"
STATUSES = (OK, UNSUPPORTED, FAILED, PARTIAL)
# what a cell's number is (docs/schema.md, "provenance"; 'none': a cell that has no number) and
# what its known-answer check found
PROVENANCES = ("measured", "simulated", "modeled", "published", "none")
KATS = ("pass", "fail", "n/a")


class VocabularyError(ValueError):
    """A record's field holding a word outside its vocabulary (Cell(status="fialed")): a bug where
    code builds the record, a malformed input where a store or a document holds it."""


def check_word(record: str, name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise VocabularyError(f"{record} {name} {value!r}: expected one of {', '.join(allowed)}")


def params_key(params: Mapping[str, Any]) -> str:
    """The canonical text of a cell's parameters: equal for equal values in any key order."""
    return json.dumps(dict(params), sort_keys=True)


def cell_key(op: str, params: Mapping[str, Any], engine: str) -> str:
    """The stored identity of a cell within its run (the cells table's key)."""
    return f"{op}|{params_key(params)}|{engine}"


class Params(dict):
    """A cell's parameters, frozen: hashable, equal by value, with its canonical `key`. A dict
    (json.dumps and every dict reader take it as it is) whose every mutator refuses."""

    __slots__ = ("key",)

    def __init__(self, values: Mapping[str, Any] | None = None, **more: Any):
        super().__init__({**(values or {}), **more})
        object.__setattr__(self, "key", params_key(self))

    def __setattr__(self, name, value):
        raise AttributeError("Params are frozen")

    def _frozen(self, *args, **kwargs):
        raise TypeError("Params are frozen: make a new Params (Params(old, name=value))")

    __setitem__ = __delitem__ = __ior__ = _frozen
    clear = pop = popitem = setdefault = update = _frozen

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        if isinstance(other, Params):
            return self.key == other.key
        if isinstance(other, Mapping):
            return self.key == params_key(other)
        return NotImplemented

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __repr__(self) -> str:
        return f"Params({dict(self)!r})"

    def __reduce__(self):
        return (Params, (dict(self),))

    def to_dict(self) -> dict:
        return dict(self)


def check_provenances(record: str, data: Mapping[str, Any]) -> None:
    """Every figure of a result says what it is in one of PROVENANCES: its own `provenance` (and
    `speed_provenance`) and those of the figures it holds one level down (cycles, energy, sim, ...)."""
    for key in ("provenance", "speed_provenance"):
        if key in data:
            check_word(record, key, data[key], PROVENANCES)
    for name, value in data.items():
        if isinstance(value, Mapping):
            for key in ("provenance", "speed_provenance"):
                if key in value:
                    check_word(f"{record} {name}", key, value[key], PROVENANCES)


class Energy(JsonView):
    """A cell's energy figure (a host meter, a power-analyzer trace, or the simulator's model)."""

    def __init__(self, data: Mapping[str, Any] | None = None):
        super().__init__(data)
        check_provenances("an energy figure's", self._data)

    @property
    def per_op_j(self) -> float | None:
        return self._data.get("per_op_j")

    @property
    def provenance(self) -> str:
        return self._data.get("provenance", "measured")

    @property
    def flags(self) -> list[str]:
        return list(self._data.get("flags") or [])

    @property
    def stats(self) -> dict:
        return self._data.get("stats") or {}

    @property
    def usable(self) -> bool:
        """A positive figure that is not within the idle baseline's noise: the one rule for which
        energies enter tables' ratios, figures and Energy Efficiency Improvements."""
        return (self.per_op_j or 0) > 0 and "not-above-idle" not in self.flags


class Result(JsonView):
    """A cell's derived statistics (docs/schema.md): the estimate tables print, the time
    summary, cycles, energy, memory and the flags; its figures' provenances are checked here."""

    def __init__(self, data: Mapping[str, Any] | None = None):
        super().__init__(data)
        check_provenances("a result's", self._data)

    @property
    def n(self) -> int | None:
        return self._data.get("n")

    @property
    def k(self) -> int | None:
        return self._data.get("k")

    @property
    def time_s(self) -> dict:
        return self._data.get("time_s") or {}

    @property
    def estimate(self) -> dict:
        return self._data.get("estimate") or {}

    @property
    def sampling(self) -> dict:
        return self._data.get("sampling") or {}

    @property
    def cycles(self) -> dict:
        return self._data.get("cycles") or {}

    @property
    def flags(self) -> list[str]:
        return list(self._data.get("flags") or [])

    @property
    def energy(self) -> Energy | None:
        en = self._data.get("energy")
        return Energy(en) if en else None

    @property
    def stack_bytes(self) -> int | None:
        return self._data.get("stack_bytes")

    @property
    def heap_bytes(self) -> int | None:
        return self._data.get("heap_bytes")

    @property
    def code_size(self) -> dict:
        return self._data.get("code_size") or {}

    @property
    def parallel(self) -> dict:
        return self._data.get("parallel") or {}

    @property
    def sim(self) -> dict:
        """A simulated cell's instructions per operation, CPI and the simulator's speed (sim:CORE)."""
        return self._data.get("sim") or {}

    def reported_time(self) -> tuple[float, tuple[float, float], str] | None:
        """(seconds per operation, its 95 % interval, the estimator's name) as tables print it: the
        estimate of a host run sampled in rounds, else the median and its interval (MCU targets,
        imported traces, scaling runs, runs stored before estimates existed)."""
        est = self.estimate
        if est:
            return est["value"], tuple(est["ci95"]), est["estimator"]
        t = self.time_s
        if t.get("median") is None:
            return None
        return t["median"], tuple(t.get("ci95") or (t["median"], t["median"])), "median"

    def with_fields(self, **fields: Any) -> "Result":
        """A copy with `fields` set (energy import adds an energy figure to a stored cell)."""
        return Result({**self._data, **fields})


@dataclass(eq=False)
class Cell:
    """One (op, params, engine) of a run: its status, what was verified, its raw samples and
    its result. `seq` orders the cells as the plan listed them."""
    op: str
    params: Params
    engine: str
    target: str = "host"
    provenance: str = "measured"
    status: str = OK
    kat: str = "n/a"
    detail: str | None = None
    samples: list | None = None
    result: Result | None = None
    seq: int = 0

    def __post_init__(self):
        for name, allowed in (("status", STATUSES), ("provenance", PROVENANCES), ("kat", KATS)):
            check_word("a cell's", name, getattr(self, name), allowed)
        if not isinstance(self.params, Params):
            self.params = Params(self.params)
        if self.result is not None and not isinstance(self.result, Result):
            self.result = Result(self.result)

    @property
    def key(self) -> str:
        return cell_key(self.op, self.params, self.engine)

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def energy(self) -> Energy | None:
        return self.result.energy if self.result is not None else None

    def reported_time(self) -> tuple[float, tuple[float, float], str] | None:
        return self.result.reported_time() if self.result is not None else None

    def to_json(self) -> dict:
        return {"op": self.op, "params": self.params.to_dict(), "engine": self.engine, "target": self.target,
                "provenance": self.provenance, "status": self.status, "kat": self.kat, "detail": self.detail,
                "samples": self.samples, "result": self.result.to_json() if self.result is not None else None,
                "seq": self.seq}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Cell":
        return cls(op=d["op"], params=Params(d.get("params") or {}), engine=d["engine"],
                   target=d.get("target", "host"), provenance=d.get("provenance") or "measured",
                   status=d.get("status") or OK, kat=d.get("kat") or "n/a", detail=d.get("detail"),
                   samples=d.get("samples"), result=Result(d["result"]) if d.get("result") is not None else None,
                   seq=d.get("seq", 0))


def outcome(cell: Cell | None) -> str:
    """What became of a planned cell, in one word: missing (no row), unsupported, kat-fail, failed
    or ok (diff and the relative view print it)."""
    if cell is None:
        return "missing"
    if cell.status == UNSUPPORTED:
        return "unsupported"
    if cell.kat == "fail":
        return "kat-fail"
    return "failed" if cell.status != OK else "ok"


# how a table prints a cell that has no number, by its outcome
OUTCOME_TEXT = {"missing": "—", "unsupported": "unsupported", "kat-fail": "KAT FAIL", "failed": "failed"}


def outcome_text(cell: Cell | None) -> str | None:
    """What a table prints for a cell that has no number: — (no row), unsupported, KAT FAIL,
    failed (an ok cell without a result too); None for a cell that has its result."""
    word = outcome(cell)
    if word == "ok":
        return None if cell.result is not None else "failed"
    return OUTCOME_TEXT[word]


@dataclass(eq=False)
class Group(Stored):
    """One comparison group of a plan: an (op, params) and the engines that take part, with the
    suite bench's own repeat / warm-up / min-time when it set them."""
    OPTIONAL = ("parallel",)
    op: str                              # (the fields in the order plans have always been stored in)
    params: Params
    table: str = ""
    bench_engines: list[str] | None = None
    repeat: int | None = None
    warmup: int | None = None
    min_time: float | None = None
    single: bool = False
    engines: list[str] = field(default_factory=list)
    parallel: int | None = None          # a scaling group's process count (also in its params)
    extra: dict = field(default_factory=dict)
    given: tuple | None = GIVEN

    def __post_init__(self):
        if not isinstance(self.params, Params):
            self.params = Params(self.params)

    @property
    def key(self) -> str:
        return cell_key(self.op, self.params, "")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Group":
        return cls(**{**cls._split(d), "params": Params(d.get("params") or {})})


@dataclass(eq=False)
class Options(Stored):
    """How a run samples: what the command line or the suite chose (docs/schema.md run.options).
    None: not set (a plan built by plan.build_plan sets repeat, warm-up and min-time)."""
    OPTIONAL = ("parallel", "parallel_cpus", "energy")
    repeat: int | None = None
    warmup: int | None = None
    min_time: float | None = None
    budget_s: float | None = None
    precision: float | None = None
    processes: int | None = None
    per_visit: int | None = None
    seed: int | None = None
    engines: list[str] = field(default_factory=list)
    single: bool = False
    overrides: list[str] = field(default_factory=list)   # options the command line set over each bench's own
    fixed_samples: bool = False                           # exactly `repeat` samples per cell
    parallel: list[int] | None = None                     # a scaling run's process counts
    parallel_cpus: list[int] | None = None
    energy: str | None = None                             # the host energy meter asked for (--energy)
    extra: dict = field(default_factory=dict)
    given: tuple | None = GIVEN

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Options":
        return cls(**cls._split(d))


@dataclass(eq=False)
class Plan(Stored):
    """What a run measures: the groups, the options, and where (a microcontroller `target`, or
    `kind` "trace" for an imported trace; neither: the host)."""
    OPTIONAL = ("target", "kind", "label", "baseline_from", "layout")
    suite: str | None = None
    title: str = ""
    source: str = ""
    baseline: str | None = None
    baseline_from: str | None = None    # who chose it: "option" (--baseline), "suite", "default"
    relative: bool = False
    options: Options = field(default_factory=Options)
    groups: list[Group] = field(default_factory=list)
    skipped_groups: list[str] = field(default_factory=list)
    target: McuTargetSpec | None = None  # a microcontroller target: a QemuSpec, BoardSpec, SimSpec or LabSpec
    kind: str | None = None             # "trace": the cells of an imported energy trace
    label: str | None = None            # free text from --label
    layout: str | None = None           # the suite's own layout of its tables (suites.LAYOUT_NAMES)
    extra: dict = field(default_factory=dict)
    given: tuple | None = GIVEN

    def __post_init__(self):
        if isinstance(self.target, Mapping):          # a target written as its JSON form
            self.target = McuTargetSpec.from_json(self.target)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Plan":
        known = cls._split(d)
        known["groups"] = [Group.from_json(g) for g in d.get("groups") or []]
        known["options"] = Options.from_json(d.get("options") or {})
        return cls(**known)


class Conditions(JsonView):
    """Under what a run measured: host, harness, engines, the noise floor; an MCU run's target and
    builds; an imported trace's file and settings (docs/schema.md "conditions")."""

    @property
    def host(self) -> dict:
        return self._data.get("host") or {}

    @property
    def harness(self) -> dict:
        return self._data.get("harness") or {}

    @property
    def engines(self) -> dict:
        return self._data.get("engines") or {}

    @property
    def target(self) -> TargetView:
        """The target as the run stored it: the plan's, with what its transport added."""
        return TargetView(self._data.get("target") or {})

    @property
    def sampling(self) -> dict:
        return self._data.get("sampling") or {}

    @property
    def noise_floor(self) -> dict:
        return self._data.get("noise_floor") or {}


@dataclass(eq=False)
class Run:
    """A stored run: its plan, its conditions and every cell it finished."""
    id: int
    plan: Plan
    conditions: Conditions
    cells: list[Cell] = field(default_factory=list)
    status: str = "complete"
    created: str | None = None
    finished: str | None = None
    suite: str | None = None

    def __post_init__(self):
        if not isinstance(self.plan, Plan):
            self.plan = Plan.from_json(self.plan)
        if not isinstance(self.conditions, Conditions):
            self.conditions = Conditions(self.conditions)
        self.cells = [c if isinstance(c, Cell) else Cell.from_json(c) for c in self.cells]

    @property
    def label(self) -> str | None:
        return self.plan.label

    def engines(self) -> list[str]:
        """The engines of the run's cells, in the order they first appear."""
        return list(dict.fromkeys(c.engine for c in self.cells))

    def to_json(self) -> dict:
        return {"id": self.id, "created": self.created, "finished": self.finished, "status": self.status,
                "suite": self.suite, "plan": self.plan.to_json(), "conditions": self.conditions.to_json(),
                "cells": [c.to_json() for c in self.cells]}

"""A run read from a file instead of the store: the result document `run --json` writes
(docs/schema.md: "run", "conditions", "results"), or a run as the store holds it (Run.to_json:
"plan", "conditions", "cells"). `gate --json` compares two such files, and in CI one of them may
come from whoever opened the pull request: the file is data, read once, bounded, and its shape
checked at load, so that every later reader can rely on it.

A file that is not a regular file, is larger than MAX_BYTES, is not UTF-8 JSON, nests deeper than
MAX_DEPTH, holds a number longer than MAX_NUMBER_CHARS, or whose fields are not of the types the
gate and diff read is refused in one line naming the file, where (the JSON path, or line:column)
and what was expected. What is *not* checked here are the figures the gate compares (cycles,
instructions, stack, code size, times): a figure that is null, NaN, a string or negative is the
gate's to judge (analysis/gate.py: not a figure, never a pass), so that it can name the cell."""
from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.printable import quoted
from ..core.records import KATS, PROVENANCES, STATUSES, Cell, Run, TargetSpecError
from ..core.target_specs import STORED_NAMES

MAX_BYTES = 64 << 20            # a run document of thousands of cells with their samples is a few MiB
MAX_DEPTH = 64                  # run documents nest about 8 deep
MAX_NUMBER_CHARS = 40           # a float's repr is at most 24 characters, a 64-bit seed 20

# the fields of a result document's cell that are the cell's own; every other one is its result
_CELL_FIELDS = ("op", "params", "engine", "target", "provenance", "status", "kat", "detail", "samples")
_NOT_RESULT = _CELL_FIELDS + ("conditions",)     # conditions: the cell's engine and target, repeated


class Malformed(ValueError):
    """A field of the document that is not what the readers expect: where (a JSON path), what."""

    def __init__(self, where: str, expected: str, got: Any):
        where = where if len(where) <= 100 else where[:100] + "…"        # a path 64 levels deep
        super().__init__(f"at {where or 'the top level'}: expected {expected}, got {_kind(got)}")


class _Oversized:
    """A number whose text is too long to be a figure (a 5000-digit integer, 1e999): kept as its
    length until the shape check names where it is."""

    def __init__(self, text: str):
        self.chars = len(text)


def load_run_file(path: str | Path, what: str = "--json") -> Run:
    """The run in `path`; UsageError naming the file, where and what was expected when it is not one."""
    p = Path(path)
    text = _read_bounded(p, what)
    try:
        doc = json.loads(text, parse_int=_parse_int, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} {p}:{exc.lineno}:{exc.colno}: expected a run's JSON document (run --json), "
                         f"but it is not JSON: {exc.msg}")
    except RecursionError:
        raise UsageError(f"{what} {p}:{_too_deep_at(text)}: nested deeper than {MAX_DEPTH} levels "
                         "(expected a run's JSON document, run --json)")
    try:
        _check_tree(doc)
        if isinstance(doc, dict) and isinstance(doc.get("results"), list) and isinstance(doc.get("run"), dict):
            return _from_document(doc)
        if isinstance(doc, dict) and isinstance(doc.get("cells"), list) and "plan" in doc:
            return _from_stored(doc)
    except Malformed as exc:
        raise UsageError(f"{what} {p}: {exc} (a run document as `run --json` writes; docs/schema.md)")
    raise UsageError(f"{what} {p}: expected a run's JSON document (an object with \"run\" and \"results\", as "
                     "`cryptobench run --json` writes; docs/schema.md)")


# ------------------------------------------------------------------------------------ reading
def _read_bounded(p: Path, what: str) -> str:
    """The file's text, read only when it is a regular file of at most MAX_BYTES: a FIFO, a device
    (/dev/zero) or a folder is refused before any read (opened non-blocking: a FIFO without a
    writer does not wait), and no more than MAX_BYTES + 1 bytes are ever read."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UsageError(f"{what} {p}: cannot read it ({exc.strerror or exc})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{what} {p}: expected a regular file (a run's JSON document), got {_file_kind(st.st_mode)}")
        if st.st_size > MAX_BYTES:
            raise UsageError(f"{what} {p}: {st.st_size} bytes, over the cap of {MAX_BYTES >> 20} MiB for a run document")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{what} {p}: cannot read it ({exc.strerror or exc})")
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:             # it grew while read
        raise UsageError(f"{what} {p}: over the cap of {MAX_BYTES >> 20} MiB for a run document")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {p}: byte {exc.start}: expected UTF-8 JSON (a run's document, run --json), "
                         f"got {exc.reason}")


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _parse_int(text: str):
    return _Oversized(text) if len(text) > MAX_NUMBER_CHARS else int(text)


def _parse_float(text: str):
    value = float(text)
    return _Oversized(text) if len(text) > MAX_NUMBER_CHARS or math.isinf(value) else value


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep_at(text: str) -> str:
    """line:column of the bracket that nests past MAX_DEPTH (only looked for once json gave up)."""
    depth = 0
    for m in _TOKEN.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                return f"{line}:{m.start() - (text.rfind(chr(10), 0, m.start()) + 1) + 1}"
        elif ch in "]}":
            depth -= 1
    return "1:1"


# ------------------------------------------------------------------------------------ the shape
def _kind(v: Any) -> str:
    if isinstance(v, _Oversized):
        return f"a number of {v.chars} characters"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"{str(v).lower()}"
    if isinstance(v, (int, float)):
        return "NaN" if v != v else f"{v!r}"
    if isinstance(v, str):
        return f"the text {quoted(v, 40)}"
    return "a list" if isinstance(v, list) else "an object" if isinstance(v, dict) else type(v).__name__


def _check_tree(doc: Any) -> None:
    """No number too long to be one and no nesting past MAX_DEPTH, anywhere (iteratively: the
    document's own depth never becomes Python's)."""
    stack = [(doc, "", 0)]
    while stack:
        v, where, depth = stack.pop()
        if isinstance(v, _Oversized):
            raise Malformed(where, f"a number of at most {MAX_NUMBER_CHARS} characters", v)
        if isinstance(v, (dict, list)):
            if depth >= MAX_DEPTH:
                raise Malformed(where, f"at most {MAX_DEPTH} levels of nesting", v)
            items = v.items() if isinstance(v, dict) else enumerate(v)
            stack += [(x, _at(where, k) if isinstance(v, dict) else f"{where}[{k}]", depth + 1) for k, x in items]


def _at(where: str, key: object) -> str:
    """A JSON path: results[0].cycles.per_op_median."""
    return f"{where}.{key}" if where else str(key)


def _obj(v: Any, where: str, optional: bool = True) -> dict:
    if v is None and optional:
        return {}
    if not isinstance(v, dict):
        raise Malformed(where, "an object", v)
    return v


def _list(v: Any, where: str, optional: bool = True) -> list:
    if v is None and optional:
        return []
    if not isinstance(v, list):
        raise Malformed(where, "a list", v)
    return v


def _text(v: Any, where: str, optional: bool = True) -> None:
    if not (isinstance(v, str) or (v is None and optional)):
        raise Malformed(where, "a text" + (" or null" if optional else ""), v)


def _number(v: Any, where: str, optional: bool = True) -> None:
    """A finite number >= 0 (counts, sizes, seconds, samples)."""
    if v is None and optional:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise Malformed(where, "a finite number >= 0", v)


def _scalar(v: Any, where: str) -> None:
    """A figure the gate judges itself (analysis/gate.py): any JSON scalar, never a list or object."""
    if isinstance(v, (dict, list)):
        raise Malformed(where, "a number", v)


def _check_conditions(cond: Any, where: str) -> None:
    cond = _obj(cond, where)
    for key in ("host", "harness", "target", "sampling", "noise_floor"):
        _obj(cond.get(key), f"{where}.{key}")
    _obj(_obj(cond.get("target"), f"{where}.target").get("simulator"), f"{where}.target.simulator")
    for key in ("builds", "engines"):
        for name, entry in _obj(cond.get(key), f"{where}.{key}").items():
            _obj(entry, f"{where}.{key}.{name}")


def _check_result(r: dict, where: str) -> None:
    """The result fields the gate, diff and history read (docs/schema.md), of their types."""
    for key in ("cycles", "sim", "time_s", "estimate", "code_size", "profile", "sampling", "parallel", "energy"):
        _obj(r.get(key), f"{where}.{key}")
    for key in ("stack_bytes", "heap_bytes", "n", "k"):
        _scalar(r.get(key), f"{where}.{key}")
    for key, value in (r.get("cycles") or {}).items():
        _scalar(value, f"{where}.cycles.{key}")
    for key, value in (r.get("sim") or {}).items():
        if key.endswith("_per_op"):
            _scalar(value, f"{where}.sim.{key}")
    t = r.get("time_s") or {}
    _scalar(t.get("median"), f"{where}.time_s.median")
    if t.get("ci95") is not None:
        _interval(t["ci95"], f"{where}.time_s.ci95")
    est = r.get("estimate") or {}
    if est:
        _scalar(est.get("value"), f"{where}.estimate.value")
        _interval(est.get("ci95"), f"{where}.estimate.ci95")
        _text(est.get("estimator"), f"{where}.estimate.estimator", optional=False)
        for key in ("sigma_log", "sigma_process_log", "tau_log"):
            _number(est.get(key), f"{where}.estimate.{key}")
    for i, flag in enumerate(_list(r.get("flags"), f"{where}.flags")):
        _text(flag, f"{where}.flags[{i}]", optional=False)
    size = r.get("code_size") or {}
    _scalar(size.get("flash_bytes"), f"{where}.code_size.flash_bytes")
    for name, n in _obj(size.get("functions"), f"{where}.code_size.functions").items():
        _number(n, f"{where}.code_size.functions.{name}", optional=False)
    prof = r.get("profile") or {}
    if prof:
        ops = prof.get("ops_in_window", 1)
        if isinstance(ops, bool) or not isinstance(ops, int) or ops < 1:
            raise Malformed(f"{where}.profile.ops_in_window", "a whole number >= 1", ops)
        for i, row in enumerate(_list(prof.get("rows"), f"{where}.profile.rows")):
            at = f"{where}.profile.rows[{i}]"
            row = _obj(row, at, optional=False)
            _text(row.get("function"), f"{at}.function", optional=False)
            for key in ("cycles", "instructions", "calls"):
                _number(row.get(key), f"{at}.{key}")


def _interval(v: Any, where: str) -> None:
    if not (isinstance(v, list) and len(v) == 2):
        raise Malformed(where, "a list of two numbers", v)
    for i, x in enumerate(v):
        _number(x, f"{where}[{i}]", optional=False)


def _check_cell(c: Any, where: str, result: dict | None) -> None:
    c = _obj(c, where, optional=False)
    for key in ("op", "engine"):
        _text(c.get(key), f"{where}.{key}", optional=False)
    for key in ("target", "provenance", "status", "kat", "detail"):
        _text(c.get(key), f"{where}.{key}")
    for key, allowed in (("status", STATUSES), ("provenance", PROVENANCES), ("kat", KATS)):
        if c.get(key) is not None and c[key] not in allowed:
            raise Malformed(f"{where}.{key}", f"one of {', '.join(allowed)}", c[key])
    for name, value in _obj(c.get("params"), f"{where}.params").items():
        if isinstance(value, (dict, list)) or (isinstance(value, float) and not math.isfinite(value)):
            raise Malformed(f"{where}.params.{name}", "a parameter value (a number or a text)", value)
    for i, sample in enumerate(_list(c.get("samples"), f"{where}.samples")):
        for j, x in enumerate(_list(sample, f"{where}.samples[{i}]", optional=False)):
            _number(x, f"{where}.samples[{i}][{j}]", optional=False)
    if result is not None:
        _check_result(result, where)


def _check_run_info(info: dict, where: str) -> None:
    if info.get("id") is not None and (isinstance(info["id"], bool) or not isinstance(info["id"], int)):
        raise Malformed(_at(where, "id"), "a run id (a whole number)", info["id"])
    for key in ("created", "finished", "status", "suite", "label", "baseline"):
        _text(info.get(key), _at(where, key))
    seed = _obj(info.get("options"), _at(where, "options")).get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise Malformed(_at(where, "options.seed"), "a whole number or null", seed)


def _from_document(doc: dict) -> Run:
    """docs/schema.md's document back into a Run: each result's own fields are its cell's, the rest
    its result (the document writes the result's fields beside the cell's)."""
    info = doc["run"]
    _check_run_info(info, "run")
    _check_conditions(doc.get("conditions"), "conditions")
    cells = []
    for seq, r in enumerate(doc["results"]):
        result = {k: v for k, v in _obj(r, f"results[{seq}]", optional=False).items() if k not in _NOT_RESULT}
        _check_cell(r, f"results[{seq}]", result)
        cells.append(Cell.from_json({**{k: r[k] for k in _CELL_FIELDS if k in r}, "seq": seq,
                                     "result": result or None}))
    plan = {"suite": info.get("suite"), "baseline": info.get("baseline"), "options": info.get("options") or {},
            **({"label": info["label"]} if info.get("label") else {}),
            **({"target": _plan_target(doc["conditions"]["target"])}
               if (doc.get("conditions") or {}).get("target") else {})}
    try:
        return Run(id=info.get("id") or 0, plan=plan, conditions=doc.get("conditions") or {}, cells=cells,
                   status=info.get("status") or "complete", created=info.get("created"),
                   finished=info.get("finished"), suite=info.get("suite"))
    except (TargetSpecError, TypeError) as exc:
        raise Malformed("conditions.target", "a target as `run --json` writes it", str(exc)) from None


def _from_stored(doc: dict) -> Run:
    """A run as the store holds it (Run.to_json), its cells and conditions checked as above."""
    _check_run_info({k: doc.get(k) for k in ("id", "created", "finished", "status", "suite")}, "")
    _check_conditions(doc.get("conditions"), "conditions")
    plan = _obj(doc.get("plan"), "plan")
    _check_run_info({"options": plan.get("options"), "label": plan.get("label")}, "plan")
    for seq, c in enumerate(doc["cells"]):
        _check_cell(c, f"cells[{seq}]", _obj(_obj(c, f"cells[{seq}]", optional=False).get("result"),
                                              f"cells[{seq}].result"))
    try:
        return Run(id=doc.get("id") or 0, plan=plan, conditions=doc.get("conditions") or {}, cells=doc["cells"],
                   status=doc.get("status") or "complete", created=doc.get("created"), finished=doc.get("finished"),
                   suite=doc.get("suite"))
    except (TargetSpecError, TypeError, KeyError, AttributeError, ValueError) as exc:
        raise Malformed("plan", "a plan as the store writes it", str(exc)) from None


def _plan_target(target: dict) -> dict:
    """The plan's target from the conditions' (the document keeps only the latter): the spec's own
    fields, `profile` (a sentence in the conditions) back to the flag it was."""
    spec = {k: v for k, v in target.items() if k in STORED_NAMES}
    if "profile" in spec:
        spec["profile"] = True
    return spec

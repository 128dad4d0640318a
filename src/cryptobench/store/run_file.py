"""A run read from a file instead of the store: the result document `run --json` writes
(docs/schema.md: "run", "conditions", "results"), or a run as the store holds it (Run.to_json:
"plan", "conditions", "cells"). `gate --json` compares two such files (CI keeps the base's
document as an artifact). A file that is neither is refused in one line naming it."""
from __future__ import annotations

import json
from pathlib import Path

from ..core.errors import UsageError
from dataclasses import fields

from ..core.records import Cell, McuTargetSpec, Run

# the fields of a result document's cell that are the cell's own; every other one is its result
_CELL_FIELDS = ("op", "params", "engine", "target", "provenance", "status", "kat", "detail", "samples")
_NOT_RESULT = _CELL_FIELDS + ("conditions",)     # conditions: the cell's engine and target, repeated


def load_run_file(path: str | Path, what: str = "--json") -> Run:
    """The run in `path`; UsageError naming the file and what was expected when it is not one."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{what} {p}: cannot read it ({exc.strerror or exc})")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise UsageError(f"{what} {p}{where}: expected a run's JSON document (run --json), but it is not JSON: {exc}")
    try:
        if isinstance(doc, dict) and isinstance(doc.get("results"), list) and isinstance(doc.get("run"), dict):
            return _from_document(doc)
        if isinstance(doc, dict) and isinstance(doc.get("cells"), list) and "plan" in doc:
            return Run(id=doc.get("id") or 0, plan=doc["plan"], conditions=doc.get("conditions") or {},
                       cells=doc["cells"], status=doc.get("status") or "complete", created=doc.get("created"),
                       finished=doc.get("finished"), suite=doc.get("suite"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{what} {p}: a run document with a malformed field ({type(exc).__name__}: {exc})")
    raise UsageError(f"{what} {p}: expected a run's JSON document (an object with \"run\" and \"results\", as "
                     "`cryptobench run --json` writes; docs/schema.md)")


def _from_document(doc: dict) -> Run:
    """docs/schema.md's document back into a Run: each result's own fields are its cell's, the rest
    its result (the document writes the result's fields beside the cell's)."""
    info = doc["run"]
    cells = []
    for seq, r in enumerate(doc["results"]):
        result = {k: v for k, v in r.items() if k not in _NOT_RESULT}
        cells.append(Cell.from_json({**{k: r[k] for k in _CELL_FIELDS if k in r}, "seq": seq,
                                     "result": result or None}))
    plan = {"suite": info.get("suite"), "baseline": info.get("baseline"), "options": info.get("options") or {},
            **({"label": info["label"]} if info.get("label") else {}),
            **({"target": _plan_target(doc["conditions"]["target"])}
               if (doc.get("conditions") or {}).get("target") else {})}
    return Run(id=info.get("id") or 0, plan=plan, conditions=doc.get("conditions") or {}, cells=cells,
               status=info.get("status") or "complete", created=info.get("created"), finished=info.get("finished"),
               suite=info.get("suite"))


def _plan_target(target: dict) -> dict:
    """The plan's target from the conditions' (the document keeps only the latter): the spec's own
    fields, `profile` (a sentence in the conditions) back to the flag it was."""
    names = {f.name for f in fields(McuTargetSpec)} - {"extra", "given"}
    spec = {k: v for k, v in target.items() if k in names}
    if "profile" in spec:
        spec["profile"] = True
    return spec

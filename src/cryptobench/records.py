"""The records every layer shares, and the one place their identities are spelled.

A cell is identified by its operation, its parameters and its engine; two parameter dicts are the
same cell when they hold the same values, whatever their key order, so every comparison, lookup
and stored key goes through `params_key` (canonical JSON: keys sorted).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# a cell's status (store.py, docs/schema.md)
OK, UNSUPPORTED, FAILED, PARTIAL = "ok", "unsupported", "failed", "partial"
STATUSES = (OK, UNSUPPORTED, FAILED, PARTIAL)


def params_key(params: Mapping[str, Any]) -> str:
    """The canonical text of a cell's parameters: equal for equal values in any key order."""
    return json.dumps(dict(params), sort_keys=True)


def cell_key(op: str, params: Mapping[str, Any], engine: str) -> str:
    """The stored identity of a cell within its run (the cells table's key)."""
    return f"{op}|{params_key(params)}|{engine}"


class Params(Mapping):
    """A cell's parameters, frozen: hashable, comparable by value, with its canonical `key`."""

    __slots__ = ("_items", "key")

    def __init__(self, values: Mapping[str, Any] | None = None, **more: Any):
        items = {**(values or {}), **more}
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "key", params_key(items))

    def __setattr__(self, name, value):
        raise AttributeError("Params are frozen")

    def __getitem__(self, name: str) -> Any:
        return self._items[name]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        if isinstance(other, Params):
            return self.key == other.key
        if isinstance(other, Mapping):
            return self.key == params_key(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Params({self._items!r})"

    def to_dict(self) -> dict:
        return dict(self._items)

"""The JSON form of the records a run stores: `Stored`, the dataclass records of a plan (written
back as they were read), and `JsonView`, the read-only view of an open-ended JSON object (a
result, a run's conditions). records.py and target_specs.py build on both."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import MISSING, field, fields
from typing import Any


class JsonView(Mapping):
    """A read-only view of an open-ended JSON object (a result, an energy figure, a run's
    conditions): the fields every layer reads are typed properties; the rest, which each target
    adds as docs/schema.md describes ("fields are only ever added"), stay reachable by name."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None):
        self._data = dict(data or {})

    def __getitem__(self, name: str) -> Any:
        return self._data[name]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and dict(self._data) == dict(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def to_json(self) -> dict:
        return dict(self._data)


class Stored:
    """The JSON form of a plan's records. One read from the store is written back as it was read
    (the keys it had, plus any field changed since), so a run stored by an older cryptobench keeps
    its form; one built in code writes every field but the OPTIONAL ones left at None. Keys this
    version does not name are kept in `extra`, so a newer cryptobench's additions survive."""
    OPTIONAL: tuple[str, ...] = ()
    NOT_STORED: tuple[str, ...] = ("extra", "given")   # fields that are not keys of the stored form

    def _stored_items(self) -> Iterator[tuple[str, Any, Any]]:
        """(key, value, the value a record without the key has) of each key of the stored form."""
        for f in fields(self):
            if f.name not in self.NOT_STORED:
                yield f.name, getattr(self, f.name), field_default(f)

    @classmethod
    def _stored_names(cls) -> set[str]:
        """The keys of the stored form the record's own fields hold."""
        return {f.name for f in fields(cls)} - set(cls.NOT_STORED)

    def to_json(self) -> dict:
        out = {}
        for name, value, default in self._stored_items():
            if self.given is not None:
                if name not in self.given and value == default:
                    continue
            elif name in self.OPTIONAL and value is None:
                continue
            out[name] = json_value(value)
        out.update(self.extra)
        if self.given is not None:            # in the order it was stored in
            order = {k: i for i, k in enumerate(self.given)}
            out = dict(sorted(out.items(), key=lambda item: order.get(item[0], len(order))))
        return out

    @classmethod
    def _split(cls, d: Mapping[str, Any]) -> dict:
        names = cls._stored_names()
        return {**{k: v for k, v in d.items() if k in names},
                "extra": {k: v for k, v in d.items() if k not in names}, "given": tuple(d)}


def field_default(f) -> Any:
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else MISSING


def json_value(value: Any) -> Any:
    if isinstance(value, Stored):
        return value.to_json()
    if isinstance(value, dict) and hasattr(value, "to_dict"):    # Params: its plain dict
        return value.to_dict()
    if isinstance(value, list):
        return [json_value(v) for v in value]
    return value


GIVEN = field(default=None, repr=False, compare=False)   # the keys a record read from JSON had, in order

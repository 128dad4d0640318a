"""Capstone's instructions with their details read once.

capstone's CsInsn recomputes what the timing model reads on every access (`operands` copies its
ctypes records into new Python objects, `reg_name` asks the library again), and the model
(timing.py, issue.py) reads the same ones several times per instruction. `cached` wraps each
instruction so that every attribute is taken from capstone once and kept: the same values, read
once (the model's costs do not change; only the time to compute them)."""
from __future__ import annotations

from functools import lru_cache


class CachedInsn:
    """One capstone instruction; attributes are capstone's, each fetched on first use and kept."""

    def __init__(self, insn):
        self.__dict__["_insn"] = insn

    def __getattr__(self, name: str):          # only for names not yet kept
        value = getattr(self._insn, name)
        if name == "reg_name":
            value = lru_cache(maxsize=None)(value)
        self.__dict__[name] = value
        return value


def cached(insns) -> list[CachedInsn]:
    return [CachedInsn(i) for i in insns]

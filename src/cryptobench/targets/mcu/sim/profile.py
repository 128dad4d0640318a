"""The per-function profile of a simulated run (`cryptobench sim run --profile`): every cycle and
instruction the model counts goes to the function (ELF function symbol) holding the block it was
counted for, with the calls of each function (harness/sim/cbsim.c, cbsim_profile_*, says which
cycles belong to a block and what a call is). Off by default: with it off cbsim_enter's fast path
is untouched. Where symbols overlap (aliases, a symbol inside another), the one starting later
holds the addresses it covers; code under no symbol is one row, "(no function)".

`cryptobench run --profile` cuts the same counts at the firmware's counter reads (`snap`, at each
read's stamp): a timed window's rows are the difference of the copies at its two reads (`window`),
so their cycles sum to the window's cycles and their instructions to its instructions, exactly."""
from __future__ import annotations

import ctypes

OUTSIDE = "(no function)"


def ranges(symbols: dict) -> list[tuple[int, int, str]]:
    """(start, end, name) sorted and not overlapping, from name -> (address, size); a symbol of
    size 0 covers nothing. Aliases at one address: the first name in sorted order."""
    by_start: dict[int, tuple[int, str]] = {}
    for name in sorted(symbols):
        addr, size = symbols[name][0] & ~1, symbols[name][1]
        if size > 0 and (addr not in by_start or size > by_start[addr][0]):
            by_start[addr] = (size, name)
    out: list[tuple[int, int, str]] = []
    for start in sorted(by_start):
        size, name = by_start[start]
        if out and out[-1][1] > start:          # the one before runs into this one: cut it here
            prev = out.pop()
            if prev[0] < start:
                out.append((prev[0], start, prev[2]))
        out.append((start, start + size, name))
    return out


class FunctionProfile:
    def __init__(self, symbols: dict):
        self.ranges = ranges(symbols)

    def start(self, lib, sim) -> None:
        self.lib = lib
        n = len(self.ranges)
        lo = (ctypes.c_uint32 * max(n, 1))(*[r[0] for r in self.ranges])
        hi = (ctypes.c_uint32 * max(n, 1))(*[r[1] for r in self.ranges])
        if lib.cbsim_profile_on(sim, n, lo, hi) != 0:
            raise MemoryError("out of memory for the per-function profile")

    def snap(self, sim, at: int) -> tuple | None:
        """The counts of every function (and of no function) up to a counter read stamped `at`:
        (cycles, instructions, calls) arrays; None where the stamp lay outside the block under
        way (the window's sums would not be exact: `window` is not given it)."""
        n = len(self.ranges) + 1
        out = tuple((ctypes.c_uint64 * n)() for _ in range(3))
        return out if self.lib.cbsim_profile_snap(sim, at, *out) == 0 else None

    def window(self, a: tuple, b: tuple) -> list[dict]:
        """The rows of the window between two snaps (a before b): {function, cycles,
        instructions, calls} per function that ran in it, most cycles first."""
        out = []
        for n in range(len(self.ranges) + 1):
            c, i, k = (b[j][n] - a[j][n] for j in range(3))
            if c or i or k:
                out.append({"function": self.ranges[n][2] if n < len(self.ranges) else OUTSIDE,
                            "cycles": c, "instructions": i, "calls": k})
        return sorted(out, key=lambda r: (-r["cycles"], r["function"]))

    def rows(self, sim) -> list[dict]:
        """{function, address, cycles, instructions, calls} per function that ran, most cycles first."""
        c, i, k = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        out = []
        for n in range(len(self.ranges) + 1):
            self.lib.cbsim_profile_at(sim, n, ctypes.byref(c), ctypes.byref(i), ctypes.byref(k))
            if c.value or i.value or k.value:
                name, addr = (self.ranges[n][2], self.ranges[n][0]) if n < len(self.ranges) else (OUTSIDE, None)
                out.append({"function": name, "address": addr, "cycles": c.value, "instructions": i.value,
                            "calls": k.value})
        return sorted(out, key=lambda r: (-r["cycles"], r["function"]))

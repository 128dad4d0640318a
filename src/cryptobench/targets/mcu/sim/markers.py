"""Where `cryptobench sim run` cuts an image's cycles (`--marker`), and the cutting, for any executor.

  semihosting                      between consecutive semihosting calls (the default)
  function:NAME                    every call of the function NAME, entry to return (--marker
                                   repeated: of each function named, up to MAX_FUNCTIONS)
  ADDR:MASK                        while bit(s) MASK of the register at ADDR are set (a data
                                   register such as GPIOx_ODR: a write that sets them is a rising
                                   edge, one that clears them a falling edge)
  set=ADDR:MASK,clear=ADDR:MASK    a set/clear register pair (STM32 BSRR: set=0x48000018:0x20,
                                   clear=0x48000018:0x200000; nRF OUTSET/OUTCLR)

The executor records events with the model's cycle and instruction counts; `cut` turns them into
segments."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ....core.errors import UsageError
from .image import parse_addr

FORMS = "semihosting, function:NAME, ADDR:MASK or set=ADDR:MASK,clear=ADDR:MASK"
MAX_FUNCTIONS = 16             # cbsim.c's watched functions (cbsim_watch)


@dataclass(frozen=True)
class Marker:
    kind: str                       # "semihosting", "function", "register", "pair"
    name: str = ""                  # function:NAME
    set_at: tuple = ()              # (addr, mask): the register (and mask) whose write raises the marker
    clear_at: tuple = ()            # (addr, mask) that lowers it (the same register for "register")
    names: tuple = ()               # function: every function named (name is the first)

    @property
    def functions(self) -> tuple:
        return self.names or ((self.name,) if self.kind == "function" else ())

    def spec(self) -> str:
        """The marker as --marker options would give it (several functions: comma-separated)."""
        if self.kind == "function":
            return ",".join(f"function:{n}" for n in self.functions)
        if self.kind == "semihosting":
            return "semihosting"
        if self.kind == "register":
            return f"0x{self.set_at[0]:08x}:0x{self.set_at[1]:x}"
        return f"set=0x{self.set_at[0]:08x}:0x{self.set_at[1]:x},clear=0x{self.clear_at[0]:08x}:0x{self.clear_at[1]:x}"

    def describe(self) -> str:
        if self.kind == "semihosting":
            return "between consecutive semihosting calls"
        if self.kind == "function":
            return f"each call of {', '.join(self.functions)}, entry to return"
        if self.kind == "register":
            return f"while bits 0x{self.set_at[1]:x} of 0x{self.set_at[0]:08x} are set"
        return (f"from a write of 0x{self.set_at[1]:x} to 0x{self.set_at[0]:08x} to a write of "
                f"0x{self.clear_at[1]:x} to 0x{self.clear_at[0]:08x}")


def _addr_mask(text: str, spec: str) -> tuple[int, int]:
    addr, sep, mask = text.partition(":")
    if not sep:
        raise UsageError(f"--marker {spec}: '{text}' is not ADDR:MASK; expected {FORMS}")
    a, m = parse_addr(addr.strip(), "--marker"), parse_addr(mask.strip(), "--marker")
    if m == 0:
        raise UsageError(f"--marker {spec}: the mask is 0; expected the marker's bit(s), e.g. 0x20")
    return a, m


def parse(spec: str | None) -> Marker:
    spec = (spec or "semihosting").strip()
    if spec == "semihosting":
        return Marker("semihosting")
    if spec.startswith("function:"):
        name = spec[len("function:"):].strip()
        if not name:
            raise UsageError(f"--marker {spec}: no function name; expected function:NAME")
        return Marker("function", name=name)
    if spec.startswith("set="):
        parts = dict(p.split("=", 1) for p in spec.split(",") if "=" in p)
        if set(parts) != {"set", "clear"} or spec.count(",") != 1:
            raise UsageError(f"--marker {spec}: expected set=ADDR:MASK,clear=ADDR:MASK")
        return Marker("pair", set_at=_addr_mask(parts["set"], spec), clear_at=_addr_mask(parts["clear"], spec))
    if spec[:1].isdigit():
        am = _addr_mask(spec, spec)
        return Marker("register", set_at=am, clear_at=am)
    raise UsageError(f"--marker {spec}: unknown marker; expected {FORMS}")


def parse_many(specs: list[str] | None) -> Marker:
    """--marker given several times: several function:NAME markers make one marker over all of
    them; any other form stands alone."""
    specs = [s for s in (specs or []) if s is not None]
    if len(specs) <= 1:
        return parse(specs[0] if specs else None)
    marks = [parse(s) for s in specs]
    if any(m.kind != "function" for m in marks):
        raise UsageError(f"--marker given {len(specs)} times ({', '.join(specs)}): only function:NAME markers may be "
                         f"repeated; expected one marker of another form")
    names = tuple(dict.fromkeys(m.name for m in marks))
    if len(names) > MAX_FUNCTIONS:
        raise UsageError(f"--marker: {len(names)} functions; at most {MAX_FUNCTIONS} may be watched in one run")
    return Marker("function", name=names[0], names=names)


@dataclass
class Recorder:
    """What the executor records for a marker: edges (cycles, insns, 1 up / 0 down), semihosting
    calls (cycles, insns, label) and function events (kind 1 entry / 2 return, cycles, insns).
    With `on_window`, each window is handed over as it closes ((cycles, insns) at its start and
    end, its number) and edges are kept only where `edges` is a list: a run that toggles the
    marker forever keeps no edge log."""
    marker: Marker
    edges: list | None
    calls: list | None
    level: int = 0
    on_window: Callable | None = None
    opened: tuple | None = None
    windows: int = 0

    def _edge(self, cycles: int, insns: int, level: int) -> None:
        self.level = level
        if self.edges is not None:
            self.edges.append((cycles, insns, level))
        if level:
            self.opened = self.opened or (cycles, insns)
        elif self.opened is not None:
            self.windows += 1
            if self.on_window is not None:
                self.on_window(self.opened, (cycles, insns), self.windows)
            self.opened = None

    def write(self, addr: int, value: int, size: int, cycles: int, insns: int) -> None:
        """A store of `size` bytes of `value` at `addr` (a marker register or a byte of one)."""
        m = self.marker
        if m.kind == "register":
            touched, on = _bits(m.set_at, addr, value, size)
            if touched and int(on) != self.level:
                self._edge(cycles, insns, int(on))
        elif m.kind == "pair":
            for (reg, level) in ((m.set_at, 1), (m.clear_at, 0)):
                touched, on = _bits(reg, addr, value, size)
                if touched and on and self.level != level:
                    self._edge(cycles, insns, level)
                    break


def _bits(reg: tuple, addr: int, value: int, size: int) -> tuple[bool, bool]:
    """Whether a store of `size` bytes at `addr` writes any of the bits `reg` = (address, mask)
    names, and whether it sets one."""
    base, mask = reg
    if not base - size < addr < base + 4:
        return False, False
    shift = 8 * (addr - base)
    written = ((1 << (8 * size)) - 1) << shift if shift >= 0 else ((1 << (8 * size)) - 1) >> -shift
    value = value << shift if shift >= 0 else value >> -shift
    return bool(mask & written), bool(mask & written & value)


def cut(marker: Marker, edges: list, calls: list, fn_events: list) -> list[dict]:
    """Segments {label, cycles, instructions}: the marker's windows in order."""
    out = []
    if marker.kind == "semihosting":
        for (c0, i0, a), (c1, i1, b) in zip(calls, calls[1:]):
            out.append({"label": f"{a} -> {b}", "cycles": c1 - c0, "instructions": i1 - i0})
    elif marker.kind == "function":
        # events (kind, cycles, insns[, function name]): one stack, as cbsim.c returns calls in LIFO order
        stack, number = [], {}
        for kind, c, i, *name in fn_events:
            if kind == 1:
                fn = name[0] if name else marker.name
                number[fn] = number.get(fn, 0) + 1
                stack.append((c, i, len(out), f"{fn} call {number[fn]}"))
                out.append(None)
            elif stack:
                c0, i0, slot, label = stack.pop()
                out[slot] = {"label": label + (f" (depth {len(stack)})" if stack else ""),
                             "cycles": c - c0, "instructions": i - i0}
        out = [s for s in out if s is not None]       # a call still under way at the end is not a segment
    else:
        start = None
        for c, i, level in edges:
            if level and start is None:
                start = (c, i)
            elif not level and start is not None:
                out.append({"label": f"window {len(out) + 1}", "cycles": c - start[0], "instructions": i - start[1]})
                start = None
    return out

"""Registers as data: a peripheral model's registers, each declared once, and the dispatch of the
core's accesses to them (the shape of Renode's register declarations: offset, name, access, reset
value, what a read gives, what a write does).

A model's class sets `registers = RegisterMap(Register(...), ...)`. For each register:
  read    the value comes from the model method `read` names, else from the model attribute
          `field` names, else it is the constant `reset` (a write-only register reads 0);
  write   a store goes to the method `write` names (what it returns is the cycles the store
          stalls the core; None is none), else to `field` (the `mask` bits kept), else it is
          ignored (a read-only register, a constant);
a handler receives the access's offset from the model's base (a read's aligned to its 32-bit
word, a store's as made), so one handler serves an array (`count` words, `stride` bytes apart).
A store at an offset that is not a word's start reaches only a contiguous array (as the models'
range checks did); elsewhere it is an undeclared offset.

Offsets no register declares lie in the manual's reserved space: a read gives 0 and a store is
ignored, and each is counted in the model's AccessLog (bounded), which PeripheralBus.undeclared()
reports. A register the manual lists but the model does not model (`modelled=False`) reads 0,
ignores stores and is counted too, under its name.

Read horizons (PeripheralBus.read_horizon): the first cycle >= now at which a read of a register
could give another value or have an effect, no access with an effect reaching the models
meanwhile (no store, no read whose horizon was its own cycle). For every t in [now, horizon) a
read at t gives what a read at now gave and leaves the model as if it never happened (the read
at now included, when the horizon is later), so a run may serve those reads from a cache. A
register's horizon is
  * now, for a read with an effect (`effect`: a FIFO pop, a read that clears a flag) and for one
    the log counts (unmodelled, undeclared): every read must reach the model;
  * the method `horizon` names, for a status the model's timing moves (an engine busy until a
    cycle): the next cycle its value changes, from the same state the read uses;
  * NEVER, for a stored value, a constant, or a handler declared `horizon=STATIC` (what it reads
    changes only with a store);
  * now for any other read handler (no guarantee), which is always a correct answer."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import Enum

NEVER = 2 ** 64 - 1         # a horizon: the value cannot change without a store
STATIC = "static"           # Register.horizon: the handler's value changes only with a store
NOW = "now"                 # Register.horizon: no guarantee (every read goes to the model)


class Access(Enum):
    RO = "read-only"                 # a store is ignored
    WO = "write-only"                # reads 0
    RW = "read/write"
    W1C = "write 1 to clear"         # a handler clears what a store's 1 bits name


@dataclass(frozen=True)
class Register:
    """One register (or an array of `count` alike ones) of a model's map."""
    offset: int
    name: str                  # as the manual names it; an array's may hold {n}, its index
    access: Access
    reset: int = 0             # the value after reset: a constant's value, a field's first value
    bits: str = ""             # its fields as the manual names them (documentation)
    read: str = ""             # model method (offset, now) -> value
    write: str = ""            # model method (offset, value, now) -> stall cycles or None
    field: str = ""            # model attribute a plain register keeps its value in
    mask: int = 0xFFFFFFFF     # the bits a store to `field` keeps
    horizon: str = ""          # model method (offset, now) -> horizon, or STATIC / NOW
    effect: str = ""           # what a read does besides reading (its horizon is now)
    count: int = 1
    stride: int = 4
    modelled: bool = True      # False: listed by the manual, not modelled (reads 0, stores ignored)

    def offsets(self) -> list[int]:
        return [self.offset + i * self.stride for i in range(self.count)]

    def name_at(self, offset: int) -> str:
        return self.name.format(n=(offset - self.offset) // self.stride)

    def check(self) -> str | None:
        """What is wrong with the declaration, or None."""
        if self.offset % 4 or self.stride % 4 or self.count < 1:
            return "offsets must be whole 32-bit words"
        if self.access is Access.WO and (self.read or self.horizon):
            return "a write-only register reads 0: no read handler or horizon"
        if self.access is Access.RO and self.write:
            return "a read-only register takes no store"
        if self.field and (self.count > 1 or self.read and self.write):
            return "a field is one register's plain storage"
        if self.effect and self.horizon:
            return "a read with an effect has the horizon now"
        if not self.modelled and (self.read or self.write or self.field):
            return "an unmodelled register has no handler"
        return None


def _ignore(model, offset: int, value: int, now: int) -> None:
    return None


def _now(model, offset: int, now: int) -> int:
    return now


def _never(model, offset: int, now: int) -> int:
    return NEVER


class RegisterMap:
    """A model's registers, and the tables its reads, stores and horizons dispatch through.
    Peripheral.__init_subclass__ binds it to the model's class (the handlers' names resolved there,
    each checked): `bind` returns the bound copy."""

    def __init__(self, *registers: Register, stores: str):
        self.registers = tuple(sorted(registers, key=lambda r: r.offset))
        self.stores = stores        # the store rule a narrow store breaks, e.g. "the HASH registers
                                    # take 32-bit writes (RM0090 25.4)"
        self.by_offset: dict[int, Register] = {}
        for reg in self.registers:
            problem = reg.check()
            if problem:
                raise ValueError(f"register {reg.name} at 0x{reg.offset:x}: {problem}")
            for o in reg.offsets():
                if o in self.by_offset:
                    raise ValueError(f"register {reg.name} at 0x{o:x} overlaps {self.by_offset[o].name}")
                self.by_offset[o] = reg
        self._reads: dict = {}
        self._horizons: dict = {}
        self._writes: dict = {}
        self._unaligned: dict = {}      # word offset -> writer, for a contiguous array's inner stores

    # ---- binding -------------------------------------------------------------------------------
    def bind(self, cls) -> RegisterMap:
        bound = copy.copy(self)
        bound._reads, bound._horizons, bound._writes, bound._unaligned = {}, {}, {}, {}
        for reg in self.registers:
            reader, horizon, writer = (_handler(cls, reg, part) for part in ("read", "horizon", "write"))
            for o in reg.offsets():
                bound._reads[o], bound._horizons[o], bound._writes[o] = reader, horizon, writer
                if reg.count > 1 and reg.stride == 4:
                    bound._unaligned[o] = writer
        return bound

    def reset(self, model) -> None:
        """Each plain register's field to its reset value."""
        for reg in self.registers:
            if reg.field:
                setattr(model, reg.field, reg.reset)

    # ---- the core's accesses -------------------------------------------------------------------
    def read(self, model, offset: int, size: int, now: int) -> int:
        """The `size`-byte part at `offset` of its register's value (0 where none is declared)."""
        o = offset & ~3
        reader = self._reads.get(o)
        if reader is None:
            model.access_log.note(o, "", "read")
            return 0
        value = reader(model, o, now)
        return (value >> (8 * (offset & 3))) & ((1 << (8 * size)) - 1)     # a narrower read: its bytes

    def write(self, model, offset: int, value: int, now: int) -> int:
        """A 32-bit store's stall cycles (0 normally; an undeclared offset's store is ignored)."""
        writer = self._writes.get(offset) if not offset & 3 else self._unaligned.get(offset & ~3)
        if writer is None:
            model.access_log.note(offset, "", "write")
            return 0
        return writer(model, offset, value, now) or 0

    def horizon(self, model, offset: int, now: int) -> int:
        h = self._horizons.get(offset & ~3)
        return now if h is None else max(now, h(model, offset & ~3, now))

    def declares(self, offset: int) -> Register | None:
        return self.by_offset.get(offset & ~3)


def _handler(cls, reg: Register, part: str):
    """The function (model, offset, ...) that serves `part` (read / horizon / write) of `reg`."""
    if not reg.modelled:
        def unmodelled_read(model, o, now, _reg=reg):
            model.access_log.note(o, _reg.name_at(o), "read")
            return 0

        def unmodelled_write(model, o, value, now, _reg=reg):
            model.access_log.note(o, _reg.name_at(o), "write")
        return {"read": unmodelled_read, "write": unmodelled_write, "horizon": _now}[part]
    if part == "read":
        if reg.read:
            return _method(cls, reg, reg.read)
        if reg.field and reg.access is not Access.WO:
            return lambda model, o, now, _f=reg.field: getattr(model, _f)
        value = 0 if reg.access is Access.WO else reg.reset
        return lambda model, o, now, _v=value: _v
    if part == "write":
        if reg.write:
            return _method(cls, reg, reg.write)
        if reg.field and reg.access is not Access.RO:
            def store(model, o, value, now, _f=reg.field, _m=reg.mask):
                setattr(model, _f, value & _m)
            return store
        return _ignore
    if reg.effect or reg.horizon == NOW:
        return _now
    if reg.horizon == STATIC:
        return _never
    if reg.horizon:
        return _method(cls, reg, reg.horizon)
    return _now if reg.read else _never


def _method(cls, reg: Register, name: str):
    fn = getattr(cls, name, None)
    if not callable(fn):
        raise ValueError(f"{cls.__name__} register {reg.name}: no method {name!r}")
    return fn


@dataclass
class AccessLog:
    """A model's accesses to offsets no register declares and to registers it does not model, counted
    by (offset, name, read/write): at most LIMIT kinds itemised, the rest counted in `more` (a run
    that polls a reserved offset cannot grow it without bound)."""
    LIMIT = 32
    counts: dict = field(default_factory=dict)      # (offset, register name or "", "read"/"write") -> n
    more: int = 0

    def note(self, offset: int, name: str, kind: str) -> None:
        key = (offset, name, kind)
        if key in self.counts:
            self.counts[key] += 1
        elif len(self.counts) < self.LIMIT:
            self.counts[key] = 1
        else:
            self.more += 1

    def lines(self, title: str) -> list[str]:
        out = []
        for (offset, name, kind), n in sorted(self.counts.items()):
            what = f"{n} {kind}{'s' if n != 1 else ''} of"
            if name:
                out.append(f"{title}: {what} {name} (offset 0x{offset:03x}), which the model does not model "
                           "(reads 0, stores ignored)")
            else:
                out.append(f"{title}: {what} undeclared offset 0x{offset:03x} (reserved: reads 0, stores ignored)")
        if self.more:
            out.append(f"{title}: {self.more} more accesses to undeclared or unmodelled offsets, not itemised")
        return out

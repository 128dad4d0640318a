"""Capstone's instructions, decoded into plain objects that hold what the timing model reads.

The timing model (timing.py, issue.py) costs each block once per run from its disassembly, and
capstone's Python wrapper was most of that time: its CsInsn copies every instruction's C records
(1.9 kB of detail) into new ctypes objects, builds Python copies of the operands on first use and
asks the library again for each register name. `Decoder` calls the same C disassembler
(cs_disasm, then cs_regs_access for the registers read and written) through the wrapper's own
ctypes bindings and reads the few fields the model needs straight out of the C records, at the
offsets of the wrapper's ctypes structures (capstone 5, which the project pins): each `Insn` has
those attributes of a CsInsn, under the same names and with the same values
(tests/test_sim_insns.py compares the two), so the model reads either, and its costs do not change.
Register names come from one table per decoder, and equal operands are one shared Op.
"""
from __future__ import annotations

import ctypes
import struct


class Shift:
    """op.shift of a CsInsn operand: only its type (ARM_SFT_*; 0 none) is read."""
    __slots__ = ("type",)

    def __init__(self, type_: int):
        self.type = type_


class Mem:
    """op.mem of a CsInsn operand: the base and index registers (0 none)."""
    __slots__ = ("base", "index")

    def __init__(self, base: int, index: int):
        self.base, self.index = base, index


class Op:
    """One operand, as a CsInsn's: type (ARM_OP_*), reg, imm, mem, shift. reg, imm and mem.base
    share capstone's union, as in CsInsn (each is read only for its own operand type)."""
    __slots__ = ("type", "reg", "imm", "mem", "shift")

    def __init__(self, shift_type: int, type_: int, word0: int, word1: int):
        self.type = type_
        self.reg = word0
        self.imm = word0 - (1 << 32) if word0 & 0x80000000 else word0    # the union's int32
        self.mem = Mem(word0, word1)
        self.shift = Shift(shift_type)


class Insn:
    """One instruction: a CsInsn's address, size, mnemonic, cc, update_flags, writeback and
    operands, its reg_name() and its regs_access() (register ids read and written)."""
    __slots__ = ("address", "size", "mnemonic", "cc", "update_flags", "writeback", "operands",
                 "reg_name", "_access")

    def __init__(self, address, size, mnemonic, cc, update_flags, writeback, operands, reg_name, access):
        self.address, self.size, self.mnemonic = address, size, mnemonic
        self.cc, self.update_flags, self.writeback = cc, update_flags, writeback
        self.operands = operands
        self.reg_name = reg_name          # the decoder's table lookup: name of a register id
        self._access = access

    def regs_access(self) -> tuple:
        if self._access is None:
            raise RuntimeError("decoded without the registers read and written (Decoder regs_access=False)")
        return self._access

    def __repr__(self) -> str:
        return f"<Insn 0x{self.address:x}: {self.mnemonic}>"


def _layout(fields, size: int) -> struct.Struct:
    """A struct reading the (offset, format code) fields of a C record of `size` bytes, in offset
    order, skipping the bytes between them (so that iter_unpack steps through an array of them)."""
    fmt, at = "<", 0
    for offset, code in sorted(fields):
        if offset < at:
            raise ValueError(f"overlapping fields at offset {offset}")
        fmt += f"{offset - at}x{code}"
        at = offset + struct.calcsize("<" + code)
    return struct.Struct(f"{fmt}{size - at}x")


class _Operands(dict):
    """Raw operand fields -> Op, made on first sight: operands are values, so blocks share them."""

    def __missing__(self, fields):
        op = self[fields] = Op(*fields)
        return op


class Decoder:
    """Thumb disassembly with detail for the timing model, on `cs` (a capstone Cs for ARM, detail
    on): decode(code, address) gives an Insn where list(cs.disasm(code, address)) gives a CsInsn.
    regs_access=False leaves out the registers read and written (cs_regs_access, a third of the
    decoding), which only some cores' costs read (timing.reads_regs_access)."""

    def __init__(self, cs, regs_access: bool = True):
        import capstone
        from capstone import arm
        if not cs.detail:
            raise ValueError("the decoder reads capstone's detail: set cs.detail")
        self.cs, self._lib, self._error, self._record = cs, capstone._cs, capstone.CsError, capstone._cs_insn
        self._read_records(capstone._cs_insn, capstone._cs_detail, arm)
        # every register's name once, from this handle (a CsInsn asks cs_reg_name each time)
        self.reg_name = {r: cs.reg_name(r) for r in range(1, arm.ARM_REG_ENDING)}.get
        self._operands = _Operands()
        self._with_access = regs_access
        # cs_regs_access's own prototype takes plain addresses: the wrapper's (typed pointers)
        # cost more to call than the C function takes to run
        addr = ctypes.c_void_p
        self._regs_access = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, addr, addr, addr, addr, addr)(
            ("cs_regs_access", self._lib))
        self._read, self._written = (ctypes.c_uint16 * 64)(), (ctypes.c_uint16 * 64)()
        self._nread, self._nwritten = ctypes.c_uint8(), ctypes.c_uint8()
        self._out = [ctypes.addressof(b) for b in (self._read, self._nread, self._written, self._nwritten)]

    def _read_records(self, insn, detail, arm) -> None:
        """The structs that read cs_insn, the ARM part of cs_detail and cs_arm_op, at the offsets of
        the wrapper's ctypes structures."""
        A, O = arm.CsArm, arm.ArmOp
        ptr = "Q" if ctypes.sizeof(ctypes.c_void_p) == 8 else "I"
        self._insn = _layout([(insn.address.offset, "Q"), (insn.size.offset, "H"),
                              (insn.mnemonic.offset, f"{insn.mnemonic.size}s"), (insn.detail.offset, ptr)],
                             ctypes.sizeof(insn))
        arch = detail.arch.offset
        self._arm = _layout([(arch + A.cc.offset, "I"), (arch + A.update_flags.offset, "?"),
                             (arch + A.writeback.offset, "?"), (arch + A.op_count.offset, "B")],
                            arch + A.operands.offset)
        value = O.value.offset             # reg, imm and mem share it (a union)
        self._op = _layout([(O.shift.offset + arm.ArmOpShift.type.offset, "I"), (O.type.offset, "I"),
                            (value + arm.ArmOpMem.base.offset, "I"), (value + arm.ArmOpMem.index.offset, "I")],
                           ctypes.sizeof(O))
        self._ops_at = arch + A.operands.offset
        # a view of a cs_detail record up to the ARM part's end, read in place (a copy costs more
        # than all the rest of an instruction's decoding)
        self._detail = ctypes.c_char * (arch + ctypes.sizeof(A))

    def decode(self, code: bytes, address: int) -> list[Insn]:
        lib, csh = self._lib, self.cs.csh
        records = ctypes.POINTER(self._record)()
        n = lib.cs_disasm(csh, code, len(code), address, 0, ctypes.byref(records))
        if not n:
            status = lib.cs_errno(csh)
            if status:
                raise self._error(status)
            return []
        try:
            first, size = ctypes.addressof(records.contents), self._insn.size
            raw = ctypes.string_at(first, n * size)            # the n records, read at once
            return [self._insn_of(fields, first + i * size)
                    for i, fields in enumerate(self._insn.iter_unpack(raw))]
        finally:
            lib.cs_free(records, n)

    def _insn_of(self, fields: tuple, record: int) -> Insn:
        """The Insn of one cs_insn record (its fields as self._insn reads them, and its address)."""
        address, size, mnemonic, detail = fields
        d = self._detail.from_address(detail)
        cc, update_flags, writeback, count = self._arm.unpack_from(d)
        at = self._ops_at
        ops = tuple(map(self._operands.__getitem__,
                        self._op.iter_unpack(d[at:at + count * self._op.size])))
        return Insn(address, size, mnemonic.split(b"\0", 1)[0].decode("ascii"), cc, update_flags,
                    writeback, ops, self.reg_name, self._access(record) if self._with_access else None)

    def _access(self, record: int) -> tuple:
        """cs_regs_access: the ids of the registers the instruction reads and writes, implicit
        ones included, as CsInsn.regs_access() gives them."""
        status = self._regs_access(self.cs.csh, record, *self._out)
        if status:
            raise self._error(status)
        return self._read[:self._nread.value], self._written[:self._nwritten.value]

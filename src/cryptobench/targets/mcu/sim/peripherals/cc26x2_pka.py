"""The PKA (public-key accelerator, the EIP-28 engine) of TI's CC13x2/CC26x2, as TI's Technical Reference
Manual SWCU185G (CC13x2/CC26x2 SimpleLink TRM, revision G), chapter "Cryptography", sections "PKA
Engine" and "PKA Registers" describe it. Registers at 0x4002 5000, the 2 KiB PKA RAM at 0x4002 6000
(TRM "Memory Map"; TI's hw_memmap.h for the part agrees): the model spans both, the RAM at offset
0x1000.

Registers: the class's `registers` map (registers.py) declares each, with its fields, at its offset
from the base (TRM PKA register map, the same offsets as TI's hw_pka.h), and the PKA RAM's 512
words at 0x1000. SHIFT reads, after a sequencer operation, its result code (TRM table "PKA_SHIFT
result values"): 0 success, 7 point at infinity / no inverse, 31 error. FUNCTION's operation bits:
MULTIPLY 0, ADDSUB 1, MS_ONE 3, ADD 4, SUBTRACT 5, RSHIFT 6, LSHIFT 7, DIVIDE 8, MODULO 9, COMPARE 10,
COPY 11, SEQUENCER_OPERATIONS 14:12 (2 ECmontMUL, 3 ECC-ADD, 5 ECC-MUL, 7 ModInv; 1/4/6 ExpMod).

Operations (TRM tables "PKCP operations" and "ECC operations"): numbers are little-endian 32-bit
words. Multiply A*B -> C; Add A+B -> C; Subtract A-B -> C; Rshift/Lshift A by SHIFT -> C; Divide
A mod B -> C and A div B -> D; Modulo A mod B -> C (DIVMSW); Compare A to B (ALENGTH words) ->
COMPARE; Copy A -> C; ModInv A^-1 mod B -> D; ECC-MUL k (A) x pntC -> pntD over the curve p, a, b
(B); ECC-ADD pntA + pntC -> pntD over p, a (B); ECmontMUL (sequencer operation 2, hw_pka.h's
SEQUENCER_OPERATIONS field) k (A) x u (C, the x coordinate alone) -> x of the result (D) on the
Montgomery curve By^2 = x^3 + Ax^2 + x over p, A (B: p, then A): the layout TI's driverlib
PKAEccMontgomeryMultiplyStart writes, whose Curve25519_a is A = 486662. A point's y, and the
curve's a and b, follow their predecessor "at the next highest even-word address" plus two words
(each BLENGTH long), so a stride of BLENGTH + BLENGTH % 2 + 2 words (the layout TI's driverlib
writes). The results are exact (Python integers; any short-Weierstrass curve, P-256 being the one
the drivers use; for ECmontMUL any Montgomery curve, computed with RFC 7748 section 5's ladder over
all 32 x ALENGTH bits of k as given: the engine is not documented to clamp, so a driver clamps
(RFC 7748 decodeScalar25519) and masks u's top bit (decodeUCoordinate) before loading them; u is
taken mod p; a zero result, the point at infinity, leaves x = 0 in D, MSW.RESULT_IS_ZERO and
SHIFT 7 as ECC-MUL's infinity) and are in PKA RAM when RUN is written; RUN, COMPARE, MSW, DIVMSW
and SHIFT read their done values once the latency has passed.

Interrupt: OPTIONS.INT_MASKING = 0 on this part's configuration (as modelled): the PKA interrupt
(PKA_IRQ, NVIC interrupt 3) is the complement of FUNCTION.RUN, so it is high whenever the engine is
idle and rises when an operation ends; a driver enables it in the NVIC only while it waits.

Timing. SWCU185G gives no cycle counts for the EIP-28 operations (searched: the PKA sections list
functions, vector layouts, restrictions and scratchpad sizes, no latency), and no published CC26x2
PKA per-operation measurement other than TI's SWRA667 (the study this is compared with, never used
here) was found. The latencies are therefore a STRUCTURAL ESTIMATE, an assumption of lower
confidence than a manual figure, from what the TRM says of the engine's structure (a PKCP with one
32x32-bit multiplier, OPTIONS.PKCP_CONFIGURATION; a sequencer running ECC/ModInv firmware):
  * starting an operation costs START = 8 cycles (the TRM's "a few clock cycles ... before the first
    instruction is executed");
  * a word-serial PKCP operation (add, subtract, shift, copy, compare) handles one 32-bit word a
    cycle: START + max(ALENGTH, BLENGTH) cycles;
  * Multiply: one 32x32 multiply-accumulate a cycle: START + ALENGTH x BLENGTH;
  * Divide/Modulo: schoolbook division, one multiply-subtract of BLENGTH + 2 words per quotient
    word, twice (estimate and correction): START + 2 (ALENGTH - BLENGTH + 1)(BLENGTH + 2);
  * ModInv: binary extended Euclid, two word-serial passes over n = BLENGTH words per modulus bit:
    START + 2 x 32n x (n + 1);
  * a modular multiplication inside the sequencer (Montgomery product: n^2 for the product and n^2
    for the reduction, plus 4n word moves): M(n) = 2n^2 + 4n;
  * ECC-MUL: every bit of the 32 x ALENGTH-bit scalar costs one Jacobian doubling (10 M) and one
    mixed addition (11 M) (a regular double-and-add-always ladder, assumed for a side-channel
    resistant engine), plus 6 M of coordinate conversion and one ModInv back to affine;
  * ECC-ADD (affine): one ModInv and 3 M.
  * ECmontMUL (lower confidence still: nothing says how the sequencer firmware runs it): every bit of
    the 32 x ALENGTH-bit scalar costs one RFC 7748 ladder step, 10 modular multiplications on the
    same multiplier (4 squarings, 5 products, 1 by a24; the ladder's additions and conditional swaps
    assumed hidden behind them, as in ECC-MUL's estimate), plus 4 M (u and a24 into the Montgomery
    domain, x2 z2^-1, out of it) and one ModInv for z2^-1.
For P-256 (n = 8) that is 865,744 cycles an ECC-MUL (about 18 ms at 48 MHz); for Curve25519 (n = 8)
414,864 cycles an ECmontMUL (about 8.6 ms at 48 MHz).
Not modelled (each refused with one line): ExpMod (sequencer operations 1, 4, 6),
ADDSUB, MS_ONE, STALL_RESULT, a subtraction with A < B, the host touching the PKA RAM or a vector
register while RUN is set, sequencer reset (SEQCTRL.RESET)."""
from __future__ import annotations

from .base import Peripheral, PeripheralError
from .registers import NEVER, STATIC, Access, Register, RegisterMap

APTR, BPTR, CPTR, DPTR, ALENGTH, BLENGTH, SHIFT, FUNCTION = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x14, 0x18, 0x1C
COMPARE, MSW, DIVMSW, SEQCTRL, OPTIONS, FWREV, HWREV = 0x20, 0x24, 0x28, 0xC8, 0xF4, 0xF8, 0xFC
RAM, RAM_BYTES = 0x1000, 0x800
RAM_WORDS = RAM_BYTES // 4

F_MULTIPLY, F_ADDSUB, F_MS_ONE, F_ADD, F_SUBTRACT = 1, 1 << 1, 1 << 3, 1 << 4, 1 << 5
F_RSHIFT, F_LSHIFT, F_DIVIDE, F_MODULO, F_COMPARE, F_COPY = 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10, 1 << 11
F_RUN, F_STALL_RESULT = 1 << 15, 1 << 24
SEQ_SHIFT, SEQ_MASK = 12, 7
SEQ_ECMONT_MUL, SEQ_ECC_ADD, SEQ_ECC_MUL, SEQ_MODINV = 2, 3, 5, 7
CMP_EQ, CMP_LT, CMP_GT = 1, 2, 4
MSW_ZERO = 1 << 15
SHIFT_OK, SHIFT_INFINITY, SHIFT_ERROR = 0, 7, 31
BASIC = {F_MULTIPLY: "Multiply", F_ADD: "Add", F_SUBTRACT: "Subtract", F_RSHIFT: "Rshift", F_LSHIFT: "Lshift",
         F_DIVIDE: "Divide", F_MODULO: "Modulo", F_COMPARE: "Compare", F_COPY: "Copy"}
SEQ_NAMES = {1: "ExpMod-CRT", 2: "ECmontMUL", 3: "ECC-ADD", 4: "ExpMod-ACT2", 5: "ECC-MUL", 6: "ExpMod-variable",
             7: "ModInv"}

# the assumed structural costs (module docstring): cycles
START = 8
DBL_M, ADD_M, CONV_M, ECC_ADD_M = 10, 11, 6, 3
LADDER_M, MONT_CONV_M = 10, 4         # ECmontMUL: an RFC 7748 ladder step; domain conversions


_NAMES = {APTR: "APTR", BPTR: "BPTR", CPTR: "CPTR", DPTR: "DPTR", ALENGTH: "ALENGTH", BLENGTH: "BLENGTH",
          SHIFT: "SHIFT"}


def modmul_cycles(n: int) -> int:
    """One modular multiplication of n-word numbers in the sequencer (Montgomery, one 32x32 MAC)."""
    return 2 * n * n + 4 * n


def modinv_cycles(n: int) -> int:
    return START + 2 * 32 * n * (n + 1)


def ecc_mul_cycles(alen: int, blen: int) -> int:
    return START + 32 * alen * (DBL_M + ADD_M) * modmul_cycles(blen) + CONV_M * modmul_cycles(blen) + modinv_cycles(blen)


def ecmont_mul_cycles(alen: int, blen: int) -> int:
    return START + 32 * alen * LADDER_M * modmul_cycles(blen) + MONT_CONV_M * modmul_cycles(blen) + modinv_cycles(blen)


def ecc_add_cycles(blen: int) -> int:
    return START + ECC_ADD_M * modmul_cycles(blen) + modinv_cycles(blen)


def basic_cycles(op: int, alen: int, blen: int) -> int:
    if op == F_MULTIPLY:
        return START + alen * blen
    if op in (F_DIVIDE, F_MODULO):
        return START + 2 * max(alen - blen + 1, 0) * (blen + 2)
    return START + max(alen, blen)


def stride(blen: int) -> int:
    """Words from one coordinate / curve parameter to the next (TRM: the next even-word address, plus two)."""
    return blen + blen % 2 + 2


class Cc26x2Pka(Peripheral):
    kind = "cc26x2-pka"
    title = "TI CC26x2 PKA"
    size = RAM + RAM_BYTES
    source = "TI SWCU185G (CC13x2/CC26x2 TRM) chapter 'Cryptography' (PKA engine, PKA registers, PKA RAM)"
    latency_source = ("assumption (structural estimate, lower confidence): SWCU185G gives no PKA cycle counts; one "
                      "32x32 MAC a cycle, word-serial PKCP operations, 8 cycles to start; ECC-MUL 21 modular "
                      "multiplications (2n^2 + 4n cycles each) a scalar bit plus a ModInv (P-256: 865,744 cycles); "
                      "ECmontMUL, lower confidence still, 10 a bit (an RFC 7748 ladder step) plus a ModInv "
                      "(Curve25519: 414,864 cycles)")

    # the TRM PKA register map (SWCU185G "PKA Registers"; hw_pka.h's offsets) and the PKA RAM
    registers = RegisterMap(
        *(Register(o, _NAMES[o], Access.RW, bits="the vector's start in PKA RAM, in 32-bit words (10:0; bit 0 "
                   "must be 0: 8-byte alignment)", read="_vector", write="_set_vector", horizon=STATIC)
          for o in (APTR, BPTR, CPTR, DPTR)),
        *(Register(o, _NAMES[o], Access.RW, bits="the vector's length in 32-bit words (8:0)", read="_vector",
                   write="_set_vector", horizon=STATIC) for o in (ALENGTH, BLENGTH)),
        Register(SHIFT, "SHIFT", Access.RW, bits="bits to shift (4:0); after a sequencer operation its result code",
                 read="_shift", write="_set_vector", horizon="_result_horizon"),
        Register(FUNCTION, "FUNCTION", Access.RW, bits="the operation bits, RUN 15 (cleared by the engine when done), "
                 "STALL_RESULT 24", read="_function_read", write="_function_write", horizon="_result_horizon"),
        Register(COMPARE, "COMPARE", Access.RO, bits="A_EQUALS_B 0, A_LESS_THAN_B 1, A_GREATER_THAN_B 2",
                 read="_result", horizon="_result_horizon"),
        Register(MSW, "MSW", Access.RO, bits="the result's most significant nonzero word address (10:0), "
                 "RESULT_IS_ZERO 15", read="_result", horizon="_result_horizon"),
        Register(DIVMSW, "DIVMSW", Access.RO, bits="the remainder's most significant nonzero word address (10:0), "
                 "RESULT_IS_ZERO 15", read="_result", horizon="_result_horizon"),
        Register(SEQCTRL, "SEQCTRL", Access.RW, bits="RESET 31 (not modelled: refused), SEQUENCER_STATUS 15:8 "
                 "(reads 0)", write="_seqctrl"),
        Register(OPTIONS, "OPTIONS", Access.RO, bits="PKCP with a 32x32 multiplier, standard sequencer, program ROM, "
                 "no interrupt masking", reset=2 | 1 << 5),
        Register(FWREV, "FWREV", Access.RO, bits="FW_CAPABILITIES 2: Modular Inversion and ECC operations",
                 reset=2 << 28),
        Register(HWREV, "HWREV", Access.RO, bits="EIP-28 and its complement", reset=0x1C | 0xE3 << 8),
        Register(RAM, "PKA RAM word {n}", Access.RW, count=RAM_WORDS, read="_ram_read", write="_ram_write",
                 horizon="_ram_horizon"),
        stores="the PKA registers and PKA RAM take 32-bit writes (SWCU185G PKA register map)")

    def __init__(self, base: int, irq: int | None, memory=None):
        super().__init__(base, irq, memory)
        self.ram = bytearray(RAM_BYTES)
        self.regs = {APTR: 0, BPTR: 0, CPTR: 0, DPTR: 0, ALENGTH: 0, BLENGTH: 0, SHIFT: 0}
        self.function = 0
        self.busy_until = 0
        self.done_at: int | None = None
        self.compare = self.msw = self.divmsw = 0
        self.shift_out: int | None = None        # SHIFT's value once a sequencer operation is done
        self.op_name = ""

    def running(self, now: int) -> bool:
        return now < self.busy_until

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _vector(self, o: int, now: int) -> int:
        return self.regs[o]

    def _set_vector(self, o: int, v: int, now: int) -> None:
        self._idle_for(now, f"a write to {_NAMES[o]}")
        mask = {ALENGTH: 0x1FF, BLENGTH: 0x1FF, SHIFT: 0x1F}.get(o, 0x7FF)
        self.regs[o] = v & mask
        if o == SHIFT:
            self.shift_out = None

    def _shift(self, o: int, now: int) -> int:
        if self.running(now) or self.shift_out is None:
            return self.regs[SHIFT]                  # the result code not there yet
        return self.shift_out

    def _function_read(self, o: int, now: int) -> int:
        return (self.function & ~F_RUN) | (F_RUN if self.running(now) else 0)

    def _function_write(self, o: int, v: int, now: int) -> None:
        self._function(v, now)

    def _result(self, o: int, now: int) -> int:
        if self.running(now):
            return 0                                 # results not there yet
        return {COMPARE: self.compare, MSW: self.msw, DIVMSW: self.divmsw}[o]

    def _result_horizon(self, o: int, now: int) -> int:
        """RUN, the results and SHIFT's code change when the operation under way ends, and not again."""
        return self.busy_until if self.running(now) else NEVER

    def _seqctrl(self, o: int, v: int, now: int) -> None:
        if v & (1 << 31):
            raise PeripheralError(f"{self.title}: SEQCTRL.RESET written 1; resetting the sequencer is not modelled "
                                  "(the TRM: 'should always be written with zero' with program ROM)")

    def _ram_read(self, o: int, now: int) -> int:
        self._idle_for(now, f"a read of PKA RAM offset 0x{o - RAM:x}")
        return int.from_bytes(self.ram[o - RAM:o - RAM + 4], "little")

    def _ram_horizon(self, o: int, now: int) -> int:
        """While the engine runs a read is refused (no guarantee); idle, only a store changes the RAM."""
        return now if self.running(now) else NEVER

    def _ram_write(self, o: int, v: int, now: int) -> None:
        self._idle_for(now, f"a write to PKA RAM offset 0x{o - RAM:x}")
        self.ram[o - RAM:o - RAM + 4] = v.to_bytes(4, "little")

    def _idle_for(self, now: int, what: str) -> None:
        if self.running(now):
            raise PeripheralError(f"{self.title}: {what} while the engine runs ({self.op_name}, FUNCTION.RUN = 1 until "
                                  f"cycle {self.busy_until}); poll FUNCTION.RUN (or wait for the PKA interrupt) first")

    def irq_since(self, now: int) -> int | None:
        if self.running(now):
            return None
        return self.done_at if self.done_at is not None else 0     # the complement of RUN: high while idle

    def next_event(self, now: int) -> int | None:
        return self.busy_until if self.running(now) else None

    # ---- an operation --------------------------------------------------------------------------
    def _function(self, v: int, now: int) -> None:
        if not v & F_RUN:
            self.function = v
            return
        self._idle_for(now, "FUNCTION written with RUN")
        if v & (F_STALL_RESULT | F_ADDSUB | F_MS_ONE):
            raise PeripheralError(f"{self.title}: FUNCTION 0x{v:08x} asks for STALL_RESULT, ADDSUB or MS_ONE, which "
                                  "the model does not implement")
        seq = (v >> SEQ_SHIFT) & SEQ_MASK
        basic = [bit for bit in BASIC if v & bit]
        if seq and basic or len(basic) > 1 or not (seq or basic):
            raise PeripheralError(f"{self.title}: FUNCTION 0x{v:08x} with RUN; expected exactly one operation (one of "
                                  "the PKCP bits MULTIPLY..COPY, or SEQUENCER_OPERATIONS 2 ECmontMUL / 3 ECC-ADD / "
                                  "5 ECC-MUL / 7 ModInv)")
        self.function = v
        self.shift_out = None
        if seq:
            if seq not in (SEQ_ECMONT_MUL, SEQ_ECC_ADD, SEQ_ECC_MUL, SEQ_MODINV):
                raise PeripheralError(f"{self.title}: sequencer operation {seq} ({SEQ_NAMES[seq]}) is not modelled; "
                                      "expected 2 (ECmontMUL), 3 (ECC-ADD), 5 (ECC-MUL) or 7 (ModInv)")
            self.op_name = SEQ_NAMES[seq]
            cycles = {SEQ_ECMONT_MUL: self._ecmont_mul, SEQ_ECC_ADD: self._ecc_add, SEQ_ECC_MUL: self._ecc_mul,
                      SEQ_MODINV: self._modinv}[seq]()
        else:
            self.op_name = BASIC[basic[0]]
            cycles = self._basic(basic[0])
        self.busy_until = now + cycles
        self.done_at = self.busy_until
        self.active.add(now, self.busy_until)

    # vectors in PKA RAM
    def _ptr(self, reg: int) -> int:
        p = self.regs[reg]
        if p & 1:
            raise PeripheralError(f"{self.title}: {_NAMES[reg]} = {p} (words); the TRM: 'bit [0] must be zero to "
                                  "ensure that the vector starts at an 8-byte boundary'")
        return p

    def _get(self, at: int, n: int, what: str) -> int:
        self._fits(at, n, what)
        return int.from_bytes(self.ram[4 * at:4 * (at + n)], "little")

    def _put(self, at: int, n: int, value: int, what: str) -> None:
        self._fits(at, n, what)
        self.ram[4 * at:4 * (at + n)] = value.to_bytes(4 * n, "little")

    def _fits(self, at: int, n: int, what: str) -> None:
        if at + n > RAM_WORDS:
            raise PeripheralError(f"{self.title}: {what} (words {at}..{at + n - 1}) runs past the {RAM_BYTES}-byte PKA "
                                  "RAM (512 words)")

    def _lengths(self, need_b: bool = True, need_a: bool = True) -> tuple[int, int]:
        alen, blen = self.regs[ALENGTH], self.regs[BLENGTH]
        if (need_a and alen == 0) or (need_b and blen == 0):
            raise PeripheralError(f"{self.title}: {self.op_name} with ALENGTH {alen}, BLENGTH {blen}; expected nonzero "
                                  "vector lengths (32-bit words)")
        return alen, blen

    def _msw(self, at: int, value: int) -> int:
        """MSW/DIVMSW for a result at word `at`: the address of its top nonzero word, or RESULT_IS_ZERO."""
        if value == 0:
            return MSW_ZERO
        return at + (value.bit_length() - 1) // 32

    def _basic(self, op: int) -> int:  # long: one arm per PKCP operation of the TRM's table
        alen, blen = self._lengths(need_b=op not in (F_RSHIFT, F_LSHIFT, F_COPY, F_COMPARE))
        a = self._get(self._ptr(APTR), alen, "vector A")
        if op == F_COMPARE:
            b = self._get(self._ptr(BPTR), alen, "vector B")
            self.compare = CMP_EQ if a == b else CMP_LT if a < b else CMP_GT
            return START + alen
        c = self._ptr(CPTR)
        if op in (F_RSHIFT, F_LSHIFT, F_COPY):
            n = self.regs[SHIFT]
            r, words = (a >> n, alen) if op == F_RSHIFT else (a << n, alen + 1) if op == F_LSHIFT else (a, alen)
            self._put(c, words, r, "result vector C")
            self.msw = self._msw(c, r)
            return START + alen
        b = self._get(self._ptr(BPTR), blen, "vector B")
        if op == F_MULTIPLY:
            r, words = a * b, alen + blen
        elif op == F_ADD:
            r, words = a + b, max(alen, blen) + 1
        elif op == F_SUBTRACT:
            if a < b:
                raise PeripheralError(f"{self.title}: Subtract with A < B; the model takes A >= B (the negative "
                                      "result's form is not modelled)")
            r, words = a - b, max(alen, blen)
        else:                                           # Divide / Modulo
            if b >> (32 * (blen - 1)) == 0:
                raise PeripheralError(f"{self.title}: {self.op_name} by a B whose most significant word (BLENGTH {blen}) "
                                      "is 0; the TRM requires it nonzero")
            q, rem = divmod(a, b)
            self._put(c, blen + 1, rem, "result vector C")
            self.divmsw = self._msw(c, rem)
            if op == F_DIVIDE:
                d = self._ptr(DPTR)
                self._put(d, max(alen - blen + 1, 1), q, "quotient vector D")
                self.msw = self._msw(d, q)
            return basic_cycles(op, alen, blen)
        self._put(c, words, r, "result vector C")
        self.msw = self._msw(c, r)
        return basic_cycles(op, alen, blen)

    def _modinv(self) -> int:
        alen, blen = self._lengths()
        a = self._get(self._ptr(APTR), alen, "vector A")
        m = self._get(self._ptr(BPTR), blen, "modulus B")
        d = self._ptr(DPTR)
        if m % 2 == 0 or m < 3:
            self.shift_out = SHIFT_ERROR                # the TRM: the modulus must be odd
            self.msw = MSW_ZERO
            return modinv_cycles(blen)
        try:
            r = pow(a, -1, m)
            self.shift_out = SHIFT_OK
        except ValueError:
            r, self.shift_out = 0, SHIFT_INFINITY       # no inverse exists
        self._put(d, blen, r, "result vector D")
        self.msw = self._msw(d, r)
        return modinv_cycles(blen)

    def _curve(self, blen: int, with_b: bool) -> tuple[int, int, int] | None:
        at, s = self._ptr(BPTR), stride(blen)
        p = self._get(at, blen, "curve p")
        a = self._get(at + s, blen, "curve a")
        b = self._get(at + 2 * s, blen, "curve b") if with_b else 0
        if not 1 < blen <= 24 or p % 2 == 0 or p >> (32 * (blen - 1)) == 0 or a >= p or b >= p:
            return None
        return p, a, b

    def _point(self, reg: int, blen: int, what: str) -> tuple[int, int]:
        at = self._ptr(reg)
        return self._get(at, blen, f"{what}.x"), self._get(at + stride(blen), blen, f"{what}.y")

    def _ecc_result(self, blen: int, point) -> None:
        d = self._ptr(DPTR)
        self._fits(d, 2 * stride(blen), "result point D")
        if point is None:
            self.shift_out, self.msw = SHIFT_INFINITY, MSW_ZERO
            return
        self._put(d, blen, point[0], "pntD.x")
        self._put(d + stride(blen), blen, point[1], "pntD.y")
        self.shift_out, self.msw = SHIFT_OK, self._msw(d, point[0])

    def _ecc_mul(self) -> int:
        alen, blen = self._lengths()
        cycles = ecc_mul_cycles(alen, blen)
        curve = self._curve(blen, with_b=True)
        if curve is None:
            self.shift_out, self.msw = SHIFT_ERROR, MSW_ZERO
            return cycles
        k = self._get(self._ptr(APTR), alen, "scalar k")
        self._ecc_result(blen, mul(k, self._point(CPTR, blen, "pntC"), curve[0], curve[1]))
        return cycles

    def _ecmont_mul(self) -> int:
        """ECmontMUL: A scalar, B p then A (the Montgomery coefficient), C u; D the result's x alone."""
        alen, blen = self._lengths()
        cycles = ecmont_mul_cycles(alen, blen)
        curve = self._curve(blen, with_b=False)
        if curve is None:
            self.shift_out, self.msw = SHIFT_ERROR, MSW_ZERO
            return cycles
        k = self._get(self._ptr(APTR), alen, "scalar k")
        u = self._get(self._ptr(CPTR), blen, "u (pntC.x)")
        d = self._ptr(DPTR)
        x = ladder(k, u, curve[0], curve[1], 32 * alen)
        self._put(d, blen, x, "result u (pntD.x)")
        self.shift_out = SHIFT_OK if x else SHIFT_INFINITY
        self.msw = self._msw(d, x)
        return cycles

    def _ecc_add(self) -> int:
        _, blen = self._lengths(need_a=False)           # the TRM: "A_Len is not used"
        curve = self._curve(blen, with_b=False)
        if curve is None:
            self.shift_out, self.msw = SHIFT_ERROR, MSW_ZERO
            return ecc_add_cycles(blen)
        pa, pc = self._point(APTR, blen, "pntA"), self._point(CPTR, blen, "pntC")
        self._ecc_result(blen, add(pa, pc, curve[0], curve[1]))
        return ecc_add_cycles(blen)


# ---- affine short-Weierstrass arithmetic (the exact results; None is the point at infinity) ----
def add(p1, p2, p: int, a: int):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2 and (y1 + y2) % p == 0:
        return None
    if p1 == p2:
        lam = (3 * x1 * x1 + a) * pow(2 * y1, -1, p) % p
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (lam * lam - x1 - x2) % p
    return x3, (lam * (x1 - x3) - y1) % p


def mul(k: int, point, p: int, a: int):
    result, addend = None, point
    while k:
        if k & 1:
            result = add(result, addend, p, a)
        addend = add(addend, addend, p, a)
        k >>= 1
    return result


# ---- the Montgomery ladder (RFC 7748 section 5; x-only, projective (x : z), one inversion at the end) ----
def ladder(k: int, u: int, p: int, a: int, bits: int) -> int:
    """x(k x P) for x(P) = u on By^2 = x^3 + ax^2 + x over p; 0 for the point at infinity. Every one of
    `bits` bits is a ladder step (the engine's scalar is not clamped here: see the module docstring)."""
    a24 = (a - 2) * pow(4, -1, p) % p             # RFC 7748: a24 = (A - 2) / 4 (121665 for Curve25519)
    x1, x2, z2, x3, z3, swap = u % p, 1, 0, u % p, 1, 0
    for t in reversed(range(bits)):
        bit = (k >> t) & 1
        if swap ^ bit:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        aa, bb = (x2 + z2) ** 2 % p, (x2 - z2) ** 2 % p
        e = (aa - bb) % p
        da, cb = (x3 - z3) * (x2 + z2) % p, (x3 + z3) * (x2 - z2) % p
        x3, z3 = (da + cb) ** 2 % p, x1 * (da - cb) ** 2 % p
        x2, z2 = aa * bb % p, e * (aa + a24 * e) % p
    if swap:
        x2, z2 = x3, z3
    return x2 * pow(z2, p - 2, p) % p

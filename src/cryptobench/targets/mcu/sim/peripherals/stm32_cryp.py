"""The cryptographic processor (CRYP) of the STM32F415/417 and F43x, as ST's RM0090 (Rev 11,
chapter 23) describes it: AES-128/192/256 in ECB, CBC and CTR, and on the F43x GCM and CCM,
fed 32 bits at a time by the core through an 8-word IN FIFO and read from an 8-word OUT FIFO.

Registers: the class's `registers` map (registers.py) declares each, with its fields, at its offset
from the CRYP base (RM0090 23.6; 0x50060000 on the F4). ALGOMODE 000/001 TDES-ECB/CBC, 010/011
DES-ECB/CBC, 100 AES-ECB, 101 AES-CBC, 110 AES-CTR, 111 AES key preparation (for ECB/CBC
decryption), 1000 AES-GCM, 1001 AES-CCM (F43x). The key: a 128-bit key in K2LR..K3RR, 192 in
K1LR..K3RR, 256 in K0LR..K3RR, most significant word first.

Behaviour (RM0090 23.3): a block is processed once the IN FIFO holds its 4 words, CRYPEN is set
and the OUT FIFO has room for the result; DATATYPE swaps the bits, bytes or half-words of each
DIN and DOUT word as for the HASH (RM0090 23.3.3). ECB and CBC decryption need the key prepared
first (ALGOMODE = 111 with the encryption key, RM0090 23.3 and 23.6.1 ALGOMODE); the model
refuses a decryption whose key was not prepared, since silicon would silently give wrong data.
GCM and CCM (F43x) go through the phases GCM_CCMPH selects: 00 init (GCM: the hash key H from the
key; CCM: B0 written to the IN FIFO first; CRYPEN clears itself when the phase ends), 01 header
(authenticated only, nothing out), 10 payload, 11 final (GCM: len(A) || len(C) in bits in; CCM:
the counter block CTR0 in; the 16-byte tag out). GCM's IV registers hold the first payload
counter block (J0 + 1: the 32-bit counter at 2 for a 96-bit IV, as ST's own examples load them),
so the tag uses J0 = that block with its counter less 1; CCM's hold CTR1.

Interrupt (RM0090 23.5): the line is CRYP_MISR, INRIS/OUTRIS under CRYP_IMSCR; irq_since says when
the unmasked source rose (OUTRIS when a block's result reached the OUT FIFO, INRIS when the IN FIFO
fell below 4 words with CRYPEN set), next_event when the block under way ends.

Timing: the cycles each block keeps the engine busy are in LATENCY below, each cited, with which
values are confirmed and which are not; BUSY reads 1
for them, a DIN store to a full IN FIFO waits (returns stall cycles) until the engine takes a block.
Not modelled: DES and TDES, DMA requests (DIEN/DOEN need the DMA2 controller), the context swap
registers (they read 0 and refuse writes), partial last blocks beyond what the driver writes (the
engine works on the whole 4-word blocks it is given, as silicon does; RM0090 leaves the padding
to software)."""
from __future__ import annotations

from . import aes_core
from .base import Peripheral, PeripheralError
from .registers import NEVER, Access, Register, RegisterMap
from .stm32_hash import _swap

CR, SR, DIN, DOUT, DMACR, IMSCR, RISR, MISR = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x14, 0x18, 0x1C
KEY_REGS, IV_REGS, CS_LO, CS_HI = 0x20, 0x40, 0x50, 0x90
CR_ALGODIR, CR_FFLUSH, CR_CRYPEN, CR_ALGOMODE3 = 1 << 2, 1 << 14, 1 << 15, 1 << 19
SR_IFEM, SR_IFNF, SR_OFNE, SR_OFFU, SR_BUSY = 1, 2, 4, 8, 16
FIFO_WORDS = 8                          # RM0090 23.3.1: IN and OUT FIFOs of 8 words (two AES blocks)
MODES = {4: "ecb", 5: "cbc", 6: "ctr", 7: "keyprep", 8: "gcm", 9: "ccm"}
KEY_BITS = {0: 128, 1: 192, 2: 256}
PHASES = ("init", "header", "payload", "final")

# Cycles (HCLK = the core clock on the F4) a block keeps the engine busy, by key size.
# RM0090 23.3 Table "Processing time (in clock cycle)": AES 14 / 16 / 18 for 128 / 192 / 256-bit keys
# (ECB, CBC, CTR). RM0090 23.3 Table "Processing time (in clock cycle) for GCM and CCM per 128-bit
# block" (F43x): GCM init 24/28/32, header 10, payload 14/16/18, tag 14/16/18; CCM init 12/14/16,
# header 14/16/18, payload 25/29/33, tag 14/16/18.
# Confidence, per value: CONFIRMED only the AES-128 block, 14 cycles, by ST RM0477 (STM32H7Rx/7Sx)
# Table 324 "CRYP versus SAES features" ("AES 128-bit ECB encryption in cycles: 14"), the same CRYP
# design; NOT CONFIRMED against RM0090's own text: the 192/256-bit block rows and the whole GCM/CCM
# table (transcribed from memory of RM0090 23.3; a search of the stored manual pages and docs
# found no copy of RM0090 chapter 23, so no value could be checked, and none was contradicted).
# The key preparation (ALGOMODE = 111): the manual gives no figure; the model charges one block
# time at the key size (an assumption: the schedule runs the same rounds a block does).
LATENCY = {
    "block": {128: 14, 192: 16, 256: 18},
    "keyprep": {128: 14, 192: 16, 256: 18},
    ("gcm", "init"): {128: 24, 192: 28, 256: 32},
    ("gcm", "header"): {128: 10, 192: 10, 256: 10},
    ("gcm", "payload"): {128: 14, 192: 16, 256: 18},
    ("gcm", "final"): {128: 14, 192: 16, 256: 18},
    ("ccm", "init"): {128: 12, 192: 14, 256: 16},
    ("ccm", "header"): {128: 14, 192: 16, 256: 18},
    ("ccm", "payload"): {128: 25, 192: 29, 256: 33},
    ("ccm", "final"): {128: 14, 192: 16, 256: 18},
}


def _unswap(block_bytes: bytes, datatype: int) -> int:
    """The DOUT word that stands for 4 output bytes: _swap's inverse (each swap is its own inverse)."""
    return int.from_bytes(_swap(int.from_bytes(block_bytes, "big"), datatype), "big")


def _inc32(block: bytes, by: int = 1) -> bytes:
    """The block with its last 32 bits (a big-endian counter) increased by `by` modulo 2^32."""
    return block[:12] + ((int.from_bytes(block[12:], "big") + by) & 0xFFFFFFFF).to_bytes(4, "big")


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


class Stm32Cryp(Peripheral):
    kind = "stm32f4-cryp"
    title = "STM32F4 CRYP"
    size = 0x400
    source = "ST RM0090 Rev 11 chapter 23 (CRYP)"
    latency_source = ("RM0090 23.3 'Processing time (in clock cycle)': AES 14/16/18 cycles a block (128/192/256-bit "
                      "key; the 14 confirmed by RM0477 Table 324, the rest not yet checked against RM0090's text); "
                      "the F43x GCM/CCM table per phase (not yet checked); key preparation one block time "
                      "(assumption: no figure)")

    # RM0090 23.6 "CRYP registers"
    registers = RegisterMap(
        Register(CR, "CRYP_CR", Access.RW, bits="ALGODIR 2, ALGOMODE[2:0] 5:3, DATATYPE 7:6, KEYSIZE 9:8, FFLUSH 14, "
                 "CRYPEN 15 (cleared by hardware when a GCM/CCM init phase ends), GCM_CCMPH 17:16, ALGOMODE[3] 19",
                 field="cr", write="_write_cr", horizon="_busy_horizon"),
        Register(SR, "CRYP_SR", Access.RO, bits="IFEM 0, IFNF 1, OFNE 2, OFFU 3, BUSY 4", read="_read_sr",
                 horizon="_busy_horizon"),
        Register(DIN, "CRYP_DIN", Access.WO, bits="into the IN FIFO", write="_write_din"),
        Register(DOUT, "CRYP_DOUT", Access.RO, bits="out of the OUT FIFO", read="_read_dout",
                 effect="pops the OUT FIFO (the engine may start the next block)"),
        Register(DMACR, "CRYP_DMACR", Access.RW, bits="DIEN 0, DOEN 1 (DMA requests: not modelled, refused; "
                 "reads 0)", write="_write_dmacr"),
        Register(IMSCR, "CRYP_IMSCR", Access.RW, bits="INIM 0, OUTIM 1", field="imscr", mask=3),
        Register(RISR, "CRYP_RISR", Access.RO, bits="INRIS 0, OUTRIS 1", read="_read_risr", horizon="_busy_horizon"),
        Register(MISR, "CRYP_MISR", Access.RO, bits="INMIS 0, OUTMIS 1", read="_read_misr", horizon="_busy_horizon"),
        Register(KEY_REGS, "CRYP_K{n}", Access.WO, bits="K0LR, K0RR, ... K3RR: the key, most significant word first",
                 count=8, write="_write_key_iv"),
        Register(IV_REGS, "CRYP_IV{n}", Access.RW, bits="IV0LR, IV0RR, IV1LR, IV1RR: the IV / counter block, most "
                 "significant word first (the processor updates them as blocks go)", count=4, read="_read_iv",
                 write="_write_key_iv", horizon="_busy_horizon"),
        Register(CS_LO, "CRYP_CS{n}", Access.RW, bits="CSGCMCCM0R-7R, CSGCM0R-7R: the F43x's GCM/CCM context swap "
                 "registers (not modelled: read 0, a store is refused)", count=(CS_HI - CS_LO) // 4,
                 write="_write_context_swap"),
        stores="the CRYP registers take 32-bit writes (RM0090 23.6)")

    def __init__(self, base: int, irq: int | None, memory=None):
        super().__init__(base, irq, memory)
        self._aes_mod = None                        # (key, its round keys): aes_core's schedule
        self.registers.reset(self)                 # CRYP_CR, CRYP_IMSCR
        self.key_words = [0] * 8
        self.iv = bytes(16)
        self.fifo_in: list[int] = []
        self.fifo_out: list[int] = []
        self.busy_until = 0
        self.pending: list[int] | None = None     # the words the block under way will put in the OUT FIFO
        self.prepared: tuple | None = None         # (key, key bits) the last key preparation was for
        self.ctx: dict = {}                        # the GCM/CCM message under way: phase state
        self.ris_since = {1: None, 2: None}        # INRIS / OUTRIS bit -> the cycle it last rose (None: low)

    # ---- the core's view -----------------------------------------------------------------------
    def read(self, offset: int, size: int, now: int) -> int:
        """Through the register map, with the engine caught up to `now` first (the blocks that ended
        by then moved to the OUT FIFO) and the interrupt sources' rises recorded after."""
        self._advance(now)
        value = self.registers.read(self, offset, size, now)
        self._mark(now)
        return value

    def write(self, offset: int, size: int, value: int, now: int) -> int:
        self.check_store(offset, size)
        self._advance(now)
        stall = self.registers.write(self, offset, value & 0xFFFFFFFF, now)
        self._mark(now + stall)
        return stall

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _read_sr(self, o: int, now: int) -> int:
        return self._sr(now)

    def _read_risr(self, o: int, now: int) -> int:
        return self._ris()

    def _read_misr(self, o: int, now: int) -> int:
        return self._ris() & self.imscr

    def _read_iv(self, o: int, now: int) -> int:
        i = o - IV_REGS
        return int.from_bytes(self.iv[i:i + 4], "big")

    def _busy_horizon(self, o: int, now: int) -> int:
        """CR, SR, RISR, MISR and the IV change only when the block under way ends (the engine then
        fills the OUT FIFO and may take the next block): idle, only an access with an effect moves them."""
        self._advance(now)
        return self.busy_until if self.busy_until > now else NEVER

    def _write_dmacr(self, o: int, value: int, now: int) -> None:
        if value & 3:
            raise PeripheralError(f"{self.title}: DMA requests (CRYP_DMACR.DIEN/DOEN) need the DMA2 controller, "
                                  "which is not modelled; feed CRYP_DIN from the core")

    def _write_key_iv(self, o: int, value: int, now: int) -> None:
        if now < self.busy_until:
            raise PeripheralError(f"{self.title}: a key or IV register written at offset 0x{o:x} while "
                                  "BUSY = 1 (RM0090 23.6: write them only when BUSY = 0)")
        if o < IV_REGS:
            self.key_words[(o - KEY_REGS) // 4] = value
        else:
            i = o - IV_REGS
            self.iv = self.iv[:i] + value.to_bytes(4, "big") + self.iv[i + 4:]

    def _write_context_swap(self, o: int, value: int, now: int) -> None:
        raise PeripheralError(f"{self.title}: the GCM/CCM context swap registers (offset 0x{o:x}) are not "
                              "modelled; finish a message before starting another")

    def irq_since(self, now: int) -> int | None:
        """The cycle the interrupt line (CRYP_MISR: the raw INRIS/OUTRIS under CRYP_IMSCR) went high,
        if it is high at `now`: the earliest rise of a source that is high and unmasked."""
        self._advance(now)
        masked = self._ris() & self.imscr
        times = [t for bit, t in self.ris_since.items() if masked & bit and t is not None]
        return min(times) if times else None

    def next_event(self, now: int) -> int | None:
        self._advance(now)
        if self.imscr & 2 and not self.fifo_out and self.pending is not None and self.busy_until > now:
            return self.busy_until               # OUTRIS rises when the block under way ends
        if self.imscr & 1 and len(self.fifo_in) >= 4 and self.busy_until > now:
            return self.busy_until               # INRIS rises when the engine takes a block
        return None

    # ---- state -----------------------------------------------------------------------------------
    @property
    def mode(self) -> str | None:
        m = ((self.cr >> 3) & 7) | (8 if self.cr & CR_ALGOMODE3 else 0)
        return MODES.get(m)

    @property
    def key_bits(self) -> int:
        return KEY_BITS.get((self.cr >> 8) & 3, 0)

    @property
    def datatype(self) -> int:
        return (self.cr >> 6) & 3

    @property
    def phase(self) -> str:
        return PHASES[(self.cr >> 16) & 3]

    def _key(self) -> bytes:
        n = self.key_bits // 32
        return b"".join(w.to_bytes(4, "big") for w in self.key_words[8 - n:])

    def _sr(self, now: int) -> int:
        sr = SR_BUSY if now < self.busy_until else 0
        sr |= SR_IFEM if not self.fifo_in else 0
        sr |= SR_IFNF if len(self.fifo_in) < FIFO_WORDS else 0
        sr |= SR_OFNE if self.fifo_out else 0
        sr |= SR_OFFU if len(self.fifo_out) >= FIFO_WORDS else 0
        return sr

    def _mark(self, t: int) -> None:
        """Records when INRIS and OUTRIS rose (and that they fell) after a change at cycle t."""
        ris = self._ris()
        for bit in (1, 2):
            if not ris & bit:
                self.ris_since[bit] = None
            elif self.ris_since[bit] is None:
                self.ris_since[bit] = t

    def _ris(self) -> int:
        """INRIS: the IN FIFO has fewer than 4 words (room for a block) while CRYPEN is set;
        OUTRIS: the OUT FIFO is not empty (RM0090 23.5 'CRYP interrupts')."""
        ris = 1 if (self.cr & CR_CRYPEN and len(self.fifo_in) < 4) else 0
        return ris | (2 if self.fifo_out else 0)

    # ---- the processor ---------------------------------------------------------------------------
    def _write_cr(self, o: int, value: int, now: int) -> None:
        m = ((value >> 3) & 7) | (8 if value & CR_ALGOMODE3 else 0)
        if value & CR_CRYPEN and m < 4:
            raise PeripheralError(f"{self.title}: DES/TDES (ALGOMODE = {m:03b}) is not modelled; the model has "
                                  "AES ECB, CBC, CTR, GCM and CCM")
        if value & CR_CRYPEN and m not in MODES:
            raise PeripheralError(f"{self.title}: ALGOMODE = {m:04b} is reserved (RM0090 23.6.1)")
        if value & CR_CRYPEN and ((value >> 8) & 3) == 3:
            raise PeripheralError(f"{self.title}: KEYSIZE = 11 is reserved (RM0090 23.6.1)")
        was_on, old_phase, old_mode = self.cr & CR_CRYPEN, self.phase, self.mode
        if value & CR_FFLUSH:                 # both FIFOs emptied (RM0090 23.6.1)
            self.fifo_in, self.fifo_out = [], []
        self.cr = value & ~CR_FFLUSH & 0x000BC3FC
        if self.cr & CR_CRYPEN and self.mode in ("gcm", "ccm"):
            if self.phase == "init" and (not was_on or old_phase != "init"):
                self.ctx = {"mode": self.mode, "key": self._key(), "bits": self.key_bits, "started": False}
            elif not self.ctx or self.ctx.get("mode") != self.mode:
                raise PeripheralError(f"{self.title}: {self.mode.upper()} {self.phase} phase before its init "
                                      "phase (RM0090 23.3: GCM_CCMPH = 00 first)")
        if self.cr & CR_CRYPEN and self.mode == "keyprep" and (not was_on or old_mode != "keyprep"):
            self._run(now, LATENCY["keyprep"][self.key_bits], None)
            self.prepared = (self._key(), self.key_bits)
            return
        self._try_start(now)

    def _write_din(self, o: int, value: int, now: int) -> int:
        stall = 0
        if len(self.fifo_in) >= FIFO_WORDS:
            if not self.cr & CR_CRYPEN or (len(self.fifo_out) > FIFO_WORDS - 4 and self.pending is None):
                raise PeripheralError(f"{self.title}: CRYP_DIN written with the IN FIFO full (IFNF = 0) and the engine "
                                      "unable to take a block (CRYPEN = 0 or the OUT FIFO full): the core would wait "
                                      "forever; read CRYP_DOUT or wait for IFNF")
            stall = max(0, self.busy_until - now)   # held until the block under way ends and the next starts
            self._advance(now + stall)
            if len(self.fifo_in) >= FIFO_WORDS:
                raise PeripheralError(f"{self.title}: CRYP_DIN written with the IN FIFO full and the OUT FIFO full: "
                                      "read CRYP_DOUT first (RM0090 23.3.1)")
        self.fifo_in.append(value)
        self._try_start(now + stall)
        return stall

    def _read_dout(self, o: int, now: int) -> int:
        if not self.fifo_out:
            raise PeripheralError(f"{self.title}: CRYP_DOUT read with the OUT FIFO empty (OFNE = 0); wait for OFNE "
                                  "(RM0090 23.3.1)")
        value = self.fifo_out.pop(0)
        self._try_start(now)
        return value

    def _advance(self, now: int) -> None:
        """Completes the block under way if it has ended by `now`, and starts the next ones (each at
        the cycle it could start) until the engine is busy past `now` or has nothing to do."""
        while self.busy_until <= now and self.pending is not None:
            done = self.busy_until
            self.fifo_out.extend(self.pending)
            self.pending = None
            if self.ctx.get("init_running"):
                self.ctx["init_running"] = False
                self.cr &= ~CR_CRYPEN        # the init phase ends with CRYPEN cleared by hardware
            self._mark(done)
            self._try_start(done)

    def _try_start(self, t: int) -> None:
        if t < self.busy_until or self.pending is not None or not self.cr & CR_CRYPEN:
            return
        mode = self.mode
        if mode in ("gcm", "ccm") and self.phase == "init":
            self._start_init(t)
            return
        if mode == "keyprep" or len(self.fifo_in) < 4:
            return
        produces = not (mode in ("gcm", "ccm") and self.phase == "header")
        if produces and len(self.fifo_out) > FIFO_WORDS - 4:
            return                          # no room for the result: the engine waits for DOUT reads
        words, self.fifo_in = self.fifo_in[:4], self.fifo_in[4:]
        block = b"".join(_swap(w, self.datatype) for w in words)
        out, cycles = self._process(block)
        result = [_unswap(out[i:i + 4], self.datatype) for i in range(0, 16, 4)] if out is not None else []
        self._run(t, cycles, result)

    def _run(self, t: int, cycles: int, result: list[int] | None) -> None:
        """The engine busy from t for `cycles`; `result` (None: nothing) goes to the OUT FIFO at the end."""
        self.busy_until = t + cycles
        self.pending = result if result is not None else []
        self.active.add(t, self.busy_until)
        self._mark(t)                       # the engine took its words from the IN FIFO

    def _start_init(self, t: int) -> None:
        ctx = self.ctx
        if ctx.get("started"):
            return
        bits = ctx["bits"]
        if ctx["mode"] == "gcm":
            ctx["h"] = int.from_bytes(self._enc(bytes(16)), "big")
            ctx["j0"] = _inc32(self.iv, -1)
            ctx["s"], ctx["ctr"] = 0, self.iv
        else:
            if len(self.fifo_in) < 4:
                return                       # CCM: B0 is written to the IN FIFO first (RM0090 23.3)
            words, self.fifo_in = self.fifo_in[:4], self.fifo_in[4:]
            b0 = b"".join(_swap(w, self.datatype) for w in words)
            ctx["x"], ctx["ctr"] = self._enc(b0), self.iv
        ctx["started"] = ctx["init_running"] = True
        self._run(t, LATENCY[(ctx["mode"], "init")][bits], None)

    # ---- the algorithms ---------------------------------------------------------------------------
    def _round_keys(self):
        """The current key's schedule (aes_core.py: FIPS 197 in plain Python, no extra package),
        kept until the key registers change."""
        key = self._key()
        if self._aes_mod is None or self._aes_mod[0] != key:
            self._aes_mod = (key, aes_core.expand_key(key))
        return self._aes_mod[1]

    def _enc(self, block: bytes) -> bytes:
        return aes_core.encrypt_block(self._round_keys(), block)

    def _dec(self, block: bytes) -> bytes:
        return aes_core.decrypt_block(self._round_keys(), block)

    def _process(self, block: bytes) -> tuple[bytes | None, int]:
        """One 16-byte block through the selected mode: (the output block or None, busy cycles)."""
        mode, bits, decrypt = self.mode, self.key_bits, bool(self.cr & CR_ALGODIR)
        if mode in ("ecb", "cbc") and decrypt and self.prepared != (self._key(), bits):
            raise PeripheralError(f"{self.title}: AES-{mode.upper()} decryption without the key prepared for it; run "
                                  "ALGOMODE = 111 (key preparation) with this key first (RM0090 23.3)")
        if mode == "ecb":
            return (self._dec(block) if decrypt else self._enc(block)), LATENCY["block"][bits]
        if mode == "cbc":
            if decrypt:
                out, self.iv = _xor(self._dec(block), self.iv), block
            else:
                out = self._enc(_xor(block, self.iv))
                self.iv = out
            return out, LATENCY["block"][bits]
        if mode == "ctr":
            out = _xor(block, self._enc(self.iv))
            self.iv = _inc32(self.iv)
            return out, LATENCY["block"][bits]
        return self._process_aead(block, mode, bits, decrypt)

    def _process_aead(self, block: bytes, mode: str, bits: int, decrypt: bool) -> tuple[bytes | None, int]:
        ctx, phase = self.ctx, self.phase
        if not ctx.get("started"):
            raise PeripheralError(f"{self.title}: {mode.upper()} {phase} data before the init phase ran")
        cycles = LATENCY[(mode, phase)][bits]
        if mode == "gcm":
            h = ctx["h"]
            if phase == "header":
                ctx["s"] = aes_core.gmul(ctx["s"] ^ int.from_bytes(block, "big"), h)
                return None, cycles
            if phase == "payload":
                out = _xor(block, self._enc(ctx["ctr"]))
                ctx["ctr"] = self.iv = _inc32(ctx["ctr"])
                ctx["s"] = aes_core.gmul(ctx["s"] ^ int.from_bytes(block if decrypt else out, "big"), h)
                return out, cycles
            s = aes_core.gmul(ctx["s"] ^ int.from_bytes(block, "big"), h)       # final: the lengths block
            return _xor(s.to_bytes(16, "big"), self._enc(ctx["j0"])), cycles
        if phase == "header":
            ctx["x"] = self._enc(_xor(ctx["x"], block))
            return None, cycles
        if phase == "payload":
            out = _xor(block, self._enc(ctx["ctr"]))
            ctx["ctr"] = self.iv = _inc32(ctx["ctr"])
            ctx["x"] = self._enc(_xor(ctx["x"], out if decrypt else block))
            return out, cycles
        return _xor(ctx["x"], self._enc(block)), cycles                  # final: CTR0 in, the MAC out

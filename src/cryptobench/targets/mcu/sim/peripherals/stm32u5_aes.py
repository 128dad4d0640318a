"""The STM32U5's two AES engines, as ST's RM0456 describes them: the AES hardware accelerator
(AES, chapter "AES hardware accelerator") and the side-channel-protected secure AES coprocessor
(SAES, chapter "Secure AES coprocessor"), for the question a user asks of one chip: which of its
own engines to use. Both are fed and read by the core, 32 bits at a time, one 128-bit block at a
time (no FIFO): four AES_DINR writes start the block, CCF says it is done, four AES_DOUTR reads
take the result.

Registers (offsets from the base; the register layout and bit fields of ST's STM32U585 SVD, as the
stm32u5 register-access crate 0.16.0 carries it): CR (EN 0, DATATYPE 2:1, MODE 4:3, CHMOD 6:5 with
CHMOD[2] at 16 on the AES, DMAINEN 11, DMAOUTEN 12, GCMPH 14:13 (AES), KEYSIZE 18, KEYPROT 19
(SAES), NPBLB 23:20 (AES), KMOD 25:24, KSHAREID 27:26 and KEYSEL 30:28 (SAES), IPRST 31), SR (CCF 0,
RDERR 1, WRERR 2, BUSY 3, KEYVALID 7), DINR 0x08, DOUTR 0x0C, KEYR0-3 0x10-0x1C and KEYR4-7
0x30-0x3C (KEYR0 the key's least significant word: KEYR3, or KEYR7 with a 256-bit key, holds its
first four bytes), IVR0-3 0x20-0x2C (IVR3 the first four bytes), the AES's SUSPR0-7 0x40-0x5C and
the SAES's DPACFGR 0x100 (kept, not modelled), IER 0x300, ISR 0x304 (CCF 0, RWEIF 1, KEIF 2, and
the SAES's RNGEIF 3), ICR 0x308. The AES at 0x420C0000 (interrupt 93), the SAES at 0x420C0C00
(interrupt 28): the SVD's non-secure aliases and interrupt numbers.

Behaviour: the key is valid (SR.KEYVALID) once every key register its KEYSIZE uses has been
written since the last KEYSIZE change or IPRST (an assumption: RM0456 asks for the registers in
order, the model takes any order); EN set without a valid key raises ISR.KEIF and leaves EN clear;
a DINR write while a block is being processed or before its result was read raises SR.WRERR and
ISR.RWEIF and is ignored, a DOUTR read before the result is ready raises RDERR and RWEIF and reads
0 (what silicon does, by its flags); CCF rises when the block is done and falls only by ICR.CCF, so
a driver may clear it before or after reading DOUTR, as ST's HAL does. DATATYPE swaps each word's
bits, bytes or half-words as the STM32 HASH and CRYP do. The chaining: ECB and CBC encryption on
both engines (the SAES has no other chaining mode on this part, RM0456 Table "AES/SAES features");
CBC updates the IV registers with each ciphertext block.

Timing (LATENCY): RM0456 Table "AES/SAES features" (in the AES chapter and the SAES chapter):
"AES 128-bit ECB encryption in cycles": AES 51, SAES 528. The cycles are taken as core (HCLK)
cycles: the AES runs on AHB2 at HCLK; the SAES's own kernel clock selection is not modelled (if the
SAES runs from a slower kernel clock than HCLK, its figure here is a lower bound). CBC is taken as
ECB's (the table gives ECB only; the chaining XOR is one more gate level). The 256-bit key has no
STM32U5 figure: the AES's is scaled by the rounds (14 / 10, 71 cycles; an estimate), the SAES's by
the ratio ST gives for the SAES of the STM32U3 and H7Rx/7Sx (RM0487 and RM0477: "480 or 680 clock
cycle latency in ECB mode ... 128-bit or 256-bit key", 748 cycles; an estimate from a sister part).

Not modelled (each refused with one line): decryption and key derivation (MODE 01, 10, 11: the
catalog's ops encrypt), CTR, GCM, GMAC and CCM on the AES, DMA requests (DMAINEN, DMAOUTEN),
shared, wrapped and hardware keys (KMOD, KEYSEL: the DHUK and BHK), suspend and resume (SUSPRx),
the SAES's random-number feed from the RNG (RNGEIF stays 0: the RNG is taken to be clocked)."""
from __future__ import annotations

from . import aes_core
from .base import Peripheral, PeripheralError
from .registers import NEVER, Access, Register, RegisterMap
from .stm32_cryp import _unswap, _xor
from .stm32_hash import _swap

CR, SR, DINR, DOUTR, KEYR0, IVR0, KEYR4, SUSPR0, DPACFGR, IER, ISR, ICR = (
    0x00, 0x04, 0x08, 0x0C, 0x10, 0x20, 0x30, 0x40, 0x100, 0x300, 0x304, 0x308)
CR_EN, CR_KEYSIZE, CR_IPRST = 1, 1 << 18, 1 << 31
CR_DMA = (1 << 11) | (1 << 12)
SR_CCF, SR_RDERR, SR_WRERR, SR_BUSY, SR_KEYVALID = 1, 2, 4, 8, 1 << 7
ISR_CCF, ISR_RWEIF, ISR_KEIF = 1, 2, 4
CHAINING = {0: "ecb", 1: "cbc", 2: "ctr", 3: "gcm", 4: "ccm"}     # CHMOD[2] CHMOD[1:0]

# Core cycles a 16-byte block keeps the engine busy, by key size (see the module's Timing).
LATENCY_AES = {128: 51, 256: 71}       # 51: RM0456 Table "AES/SAES features"; 71: estimate (x 14/10 rounds)
LATENCY_SAES = {128: 528, 256: 748}    # 528: the same table; 748: estimate (x 680/480, RM0487/RM0477's SAES)


def _map(saes: bool) -> RegisterMap:
    """The register map of the AES (saes False) or the SAES: the same core registers, the AES's
    suspend registers or the SAES's DPA configuration register."""
    own = (Register(DPACFGR, "SAES_DPACFGR", Access.RW, bits="the DPA countermeasures' configuration (kept, "
                    "not modelled)", field="dpacfgr") if saes else
           Register(SUSPR0, "AES_SUSP{n}R", Access.RW, bits="the suspended message's context (not modelled: "
                    "read 0, stores ignored)", count=8, modelled=False))
    p = "SAES" if saes else "AES"
    return RegisterMap(
        Register(CR, f"{p}_CR", Access.RW, bits="EN 0, DATATYPE 2:1, MODE 4:3, CHMOD 6:5 (CHMOD[2] 16), DMAINEN 11, "
                 "DMAOUTEN 12, KEYSIZE 18, KMOD 25:24, KEYSEL 30:28 (SAES), IPRST 31", field="cr", write="_write_cr"),
        Register(SR, f"{p}_SR", Access.RO, bits="CCF 0, RDERR 1, WRERR 2, BUSY 3, KEYVALID 7", read="_read_sr",
                 horizon="_busy_horizon"),
        Register(DINR, f"{p}_DINR", Access.WO, bits="the block in, its most significant word first", write="_write_din"),
        Register(DOUTR, f"{p}_DOUTR", Access.RO, bits="the block out, its most significant word first",
                 read="_read_dout", effect="takes the next output word"),
        Register(KEYR0, f"{p}_KEYR{{n}}", Access.WO, bits="KEYR0-3: the key's least significant 128 bits, KEYR0 the "
                 "lowest word", count=4, write="_write_key"),
        Register(IVR0, f"{p}_IVR{{n}}", Access.RW, bits="the IV, IVR3 its first (most significant) word; CBC writes "
                 "each ciphertext block back", count=4, read="_read_iv", write="_write_iv", horizon="_busy_horizon"),
        Register(KEYR4, f"{p}_KEYR(4+{{n}})", Access.WO, bits="KEYR4-7: a 256-bit key's most significant 128 bits "
                 "(KEYR7 its first word)", count=4, write="_write_key"),
        own,
        Register(IER, f"{p}_IER", Access.RW, bits="CCFIE 0, RWEIE 1, KEIE 2", field="ier", mask=0x7),
        Register(ISR, f"{p}_ISR", Access.RO, bits="CCF 0, RWEIF 1, KEIF 2", read="_read_isr", horizon="_busy_horizon"),
        Register(ICR, f"{p}_ICR", Access.WO, bits="CCF 0, RWEIF 1 (clears RDERR and WRERR too), KEIF 2: 1 clears",
                 write="_write_icr"),
        stores=f"the {p} registers take 32-bit writes (RM0456: 32-bit single accesses only)")


class Stm32U5Aes(Peripheral):
    kind = "stm32u5-aes"
    title = "STM32U5 AES"
    size = 0x400
    source = "ST RM0456 'AES hardware accelerator (AES)'; register layout from ST's STM32U585 SVD"
    latency_source = ("RM0456 Table 'AES/SAES features': 'AES 128-bit ECB encryption in cycles' 51 (CBC taken as "
                      "ECB); a 256-bit key 71 cycles, an estimate (51 x 14/10 rounds): no STM32U5 figure")
    latency = LATENCY_AES
    registers = _map(saes=False)

    def __init__(self, base: int, irq: int | None, memory=None):
        super().__init__(base, irq, memory)
        self._reset()

    def _reset(self) -> None:
        self.registers.reset(self)                 # CR, IER (and the SAES's DPACFGR)
        self.key_words = [0] * 8
        self.key_written = 0                       # bit i: KEYR(i) written since KEYSIZE or IPRST
        self.iv = bytes(16)
        self.din: list[int] = []
        self.busy_until = 0
        self.out: list[int] = []                   # the result's words not read yet (valid from busy_until)
        self.sr_err = 0                            # RDERR | WRERR
        self.isr = 0                               # RWEIF | KEIF (CCF: ccf_at)
        self.ccf_at: int | None = None             # the cycle CCF rises (None: low)
        self._schedule = None                      # (key, its round keys)

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _key_bits(self) -> int:
        return 256 if self.cr & CR_KEYSIZE else 128

    def _key_valid(self) -> bool:
        need = 0xFF if self._key_bits() == 256 else 0x0F
        return self.key_written & need == need

    def _ccf(self, now: int) -> bool:
        return self.ccf_at is not None and now >= self.ccf_at

    def _read_sr(self, o: int, now: int) -> int:
        sr = self.sr_err | (SR_BUSY if now < self.busy_until else 0) | (SR_KEYVALID if self._key_valid() else 0)
        return sr | (SR_CCF if self._ccf(now) else 0)

    def _read_isr(self, o: int, now: int) -> int:
        return self.isr | (ISR_CCF if self._ccf(now) else 0)

    def _busy_horizon(self, o: int, now: int) -> int:
        """SR, ISR and the IV change only when the block under way ends (CCF rises then): idle, only a
        store moves them."""
        return self.busy_until if self.busy_until > now else NEVER

    def _read_iv(self, o: int, now: int) -> int:
        i = 12 - (o - IVR0)                     # IVR3 holds the IV's first word
        return int.from_bytes(self.iv[i:i + 4], "big")

    def _write_iv(self, o: int, value: int, now: int) -> None:
        self._idle_for("an IV register", o)
        i = 12 - (o - IVR0)
        self.iv = self.iv[:i] + value.to_bytes(4, "big") + self.iv[i + 4:]

    def _write_key(self, o: int, value: int, now: int) -> None:
        self._idle_for("a key register", o)
        n = (o - KEYR0) // 4 if o < IVR0 else 4 + (o - KEYR4) // 4
        self.key_words[n] = value
        self.key_written |= 1 << n

    def _idle_for(self, what: str, o: int) -> None:
        if self.cr & CR_EN:
            raise PeripheralError(f"{self.title}: {what} written at offset 0x{o:x} with EN = 1 (RM0456: write the "
                                  "key and IV registers while the peripheral is disabled)")

    def _write_cr(self, o: int, value: int, now: int) -> None:
        if value & CR_IPRST:
            self._reset()
            return
        mode, chmod = (value >> 3) & 3, ((value >> 5) & 3) | ((value >> 14) & 4)
        if value & CR_EN:
            if mode:
                raise PeripheralError(f"{self.title}: CR.MODE = {mode:02b} (key derivation or decryption) is not "
                                      "modelled; the model encrypts (MODE = 00)")
            self._check_chaining(chmod)
            if value & CR_DMA:
                raise PeripheralError(f"{self.title}: DMA requests (CR.DMAINEN/DMAOUTEN) are not modelled; feed "
                                      "DINR and read DOUTR from the core")
            if (value >> 24) & 3:
                raise PeripheralError(f"{self.title}: CR.KMOD = {(value >> 24) & 3:02b} (wrapped or shared key) is not "
                                      "modelled; load the key through the key registers (KMOD = 00)")
            self._check_extra(value)
        if (value ^ self.cr) & CR_KEYSIZE:
            self.key_written = 0                   # a new key size: the key registers are written again
        turning_on = value & CR_EN and not self.cr & CR_EN
        self.cr = value & ~CR_IPRST
        if turning_on:
            if not self._key_valid():
                self.isr |= ISR_KEIF               # RM0456: EN with KEYVALID = 0 is a key error
                self.cr &= ~CR_EN
                return
            self.din, self.out = [], []
        if not self.cr & CR_EN:
            self.din = []

    def _check_chaining(self, chmod: int) -> None:
        if chmod not in (0, 1):
            what = CHAINING.get(chmod, f"CHMOD = {chmod:03b} (reserved)")
            raise PeripheralError(f"{self.title}: {what.upper() if chmod in CHAINING else what} is not modelled; "
                                  "the model has ECB and CBC encryption")

    def _check_extra(self, value: int) -> None:
        """The SAES's own CR fields (none on the AES)."""

    def _write_din(self, o: int, value: int, now: int) -> None:
        if not self.cr & CR_EN:
            raise PeripheralError(f"{self.title}: DINR written with EN = 0; enable the peripheral after loading the "
                                  "key (RM0456)")
        if now < self.busy_until or self.out:
            self.sr_err |= SR_WRERR                # RM0456: a write during computation or before the output
            self.isr |= ISR_RWEIF                  # phase ends is ignored, WRERR and RWEIF set
            return
        self.din.append(value)
        if len(self.din) == 4:
            self._start(now)

    def _read_dout(self, o: int, now: int) -> int:
        if now < self.busy_until or not self.out:
            self.sr_err |= SR_RDERR
            self.isr |= ISR_RWEIF
            return 0
        return self.out.pop(0)

    def _write_icr(self, o: int, value: int, now: int) -> None:
        if value & ISR_CCF and self._ccf(now):
            self.ccf_at = None
        if value & ISR_RWEIF:
            self.isr &= ~ISR_RWEIF
            self.sr_err = 0
        if value & ISR_KEIF:
            self.isr &= ~ISR_KEIF

    # ---- the engine ----------------------------------------------------------------------------
    def _key(self) -> bytes:
        n = self._key_bits() // 32
        return b"".join(self.key_words[i].to_bytes(4, "big") for i in reversed(range(n)))

    def _start(self, now: int) -> None:
        datatype = (self.cr >> 1) & 3
        block = b"".join(_swap(w, datatype) for w in self.din)
        self.din = []
        key = self._key()
        if self._schedule is None or self._schedule[0] != key:
            self._schedule = (key, aes_core.expand_key(key))
        if ((self.cr >> 5) & 3) == 1:              # CBC: the IV registers chain the blocks
            out = aes_core.encrypt_block(self._schedule[1], _xor(block, self.iv))
            self.iv = out
        else:
            out = aes_core.encrypt_block(self._schedule[1], block)
        self.out = [_unswap(out[i:i + 4], datatype) for i in range(0, 16, 4)]
        self.busy_until = now + self.latency[self._key_bits()]
        self.ccf_at = self.busy_until
        self.active.add(now, self.busy_until)

    # ---- the interrupt line ----------------------------------------------------------------------
    def irq_since(self, now: int) -> int | None:
        """IER under ISR: CCF since the block ended, RWEIF and KEIF since now (they rise at a store)."""
        if self.ier & ISR_CCF and self._ccf(now):
            return self.ccf_at
        return now if self.ier & self.isr & (ISR_RWEIF | ISR_KEIF) else None

    def next_event(self, now: int) -> int | None:
        if self.ier & ISR_CCF and self.ccf_at is not None and self.ccf_at > now:
            return self.ccf_at
        return None


class Stm32U5Saes(Stm32U5Aes):
    kind = "stm32u5-saes"
    title = "STM32U5 SAES"
    source = "ST RM0456 'Secure AES coprocessor (SAES)'; register layout from ST's STM32U585 SVD"
    latency_source = ("RM0456 Table 'AES/SAES features': 'AES 128-bit ECB encryption in cycles' 528 (CBC taken as "
                      "ECB); a 256-bit key 748 cycles, an estimate (528 x 680/480, the SAES of RM0487 and RM0477)")
    latency = LATENCY_SAES
    registers = _map(saes=True)

    def _check_chaining(self, chmod: int) -> None:
        if chmod not in (0, 1):
            raise PeripheralError(f"{self.title}: CHMOD = {chmod:03b}: the STM32U5's SAES chains ECB and CBC only "
                                  "(RM0456 Table 'AES/SAES features'); use the AES for CTR, GCM and CCM")

    def _check_extra(self, value: int) -> None:
        if (value >> 28) & 7:
            raise PeripheralError(f"{self.title}: CR.KEYSEL = {(value >> 28) & 7:03b} (a hardware key: DHUK, BHK) is "
                                  "not modelled; load the key through the key registers (KEYSEL = 000)")

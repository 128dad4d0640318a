"""The CRYPTO module of TI's CC13x2/CC26x2 (the AES and hash engine behind its own DMA), as TI's
Technical Reference Manual SWCU185G (CC13x2/CC26x2 SimpleLink TRM, revision G), chapter "Cryptography"
(AES and Hash Cryptoprocessor, CRYPTO registers) describes it. Base 0x4002 4000 (TRM "Memory Map").

Registers: the class's `registers` map (registers.py) declares each, with its fields, at its offset
from the base (TRM CRYPTO register map, the same offsets as TI's hw_crypto.h). Those the model does
not model (the DMA's bus configuration, port error and version registers, AESKEY2/3, DMAPROTCTL)
read 0, ignore stores and are counted in the run's notes, as are the reserved offsets between.

Behaviour: the DMA path only, as TI's drivers use it. A key goes to the key store through channel 0
(ALGSEL = KEY_STORE, KEYWRITEAREA, KEYSIZE) and into the engine by KEYREADAREA; an AES operation is
AESIV, AESCTL, AESDATALEN, AESAUTHLEN (GCM/CCM), then channel 0 with the AAD (GCM/CCM) and channel
0 + channel 1 with the payload; RESULT_AVAIL ends it, the tag comes from AESTAGOUT once
SAVED_CONTEXT_RDY is set. A hash is ALGSEL = HASH_SHA_256, HASHMODE, HASHINLEN, HASHIOBUFCTRL
(PAD_DMA_MESSAGE on the last part), channel 0 with the message (and channel 1 with the digest when
ALGSEL.TAG is set); the digest is in HASHDIGESTA-H (each word the little-endian image of 4 digest
bytes, TRM "Hash engine" data format example). IRQSTAT's RESULT_AVAIL / DMA_IN_DONE read 1 only
where IRQEN enables them (TRM IRQEN: "the interrupt output is disabled and remains 0"). The
results are exact (aes_core.py, hashlib); the DMA writes its output when started.

Timing. The TRM gives no cycle count for the AES or hash engine (searched: SWCU185G's crypto
chapter; no other published CC26x2 per-block figure outside TI's SWRA667, which is the study this
is compared with and is never used here). The latencies are therefore a STRUCTURAL ESTIMATE,
labelled as an assumption and of lower confidence than a manual figure:
  * the DMA moves one 32-bit word per cycle on the AHB (assumption);
  * AES: one round per cycle (10/12/14 rounds for 128/192/256-bit keys, FIPS 197 5), so a payload
    block costs 4 words in + Nr rounds + 4 words out = Nr + 8 cycles, an AAD block (GCM/CCM) 4 + Nr;
    GCM's GHASH (a GF(2^128) multiplier of its own) runs beside the CTR half (assumption), while a
    CCM block needs two block encryptions (CBC-MAC and CTR, SP 800-38C 6.1) on the one AES core,
    2 Nr + 8 cycles a block plus Nr for B0; a GCM/CCM operation adds one block time for the tag
    (E(J0) / E(A0)). (Model v1 ran CCM's CBC-MAC beside its CTR as GCM's GHASH: a single AES core
    cannot; bench/accel_vs_published's CCM rows, 0.17 of TI's, are what showed it.) Loading a key from the key store
    is one cycle per key word (4/6/8);
  * SHA-256/224: 64 rounds (FIPS 180-4 6.2), one per cycle, plus 16 words in: 80 cycles per 512-bit
    block, one block per padded block of the final part.
An empty message is a final part with HASHINLEN = 0 that still moves a byte (the DMA cannot move
none): the engine pads at HASHINLEN, so the byte is not hashed (TI's driverlib sha2.c says so where
it sends it); any other final part must carry exactly HASHINLEN's bytes.
Not modelled: host-fed data (AESDATAIN / HASHDATAIN with INPUT_READY / DATA_IN_AV), CBC-MAC, SHA-384
and SHA-512 (TI's sources disagree on ALGSEL's SHA-512 bit), resuming a hash from written digest
registers, the GHASH/KEY2/KEY3 context registers (read 0), pulse-type interrupts (IRQTYPE = 0 is
treated as level): each is refused with one line."""
from __future__ import annotations

import hashlib

from . import aes_core
from .base import Peripheral, PeripheralError
from .registers import NEVER, STATIC, Access, Register, RegisterMap

RO, WO, RW, W1C = Access.RO, Access.WO, Access.RW, Access.W1C

DMACH0CTL, DMACH0EXTADDR, DMACH0LEN, DMASTAT, DMASWRESET = 0x000, 0x004, 0x00C, 0x018, 0x01C
DMACH1CTL, DMACH1EXTADDR, DMACH1LEN = 0x020, 0x024, 0x02C
DMABUSCFG, DMAPORTERR, DMAHWVER = 0x078, 0x07C, 0x0FC
KEYWRITEAREA, KEYWRITTENAREA, KEYSIZE, KEYREADAREA = 0x400, 0x404, 0x408, 0x40C
AESKEY2, AESKEY3 = 0x500, 0x510
AESIV, AESCTL, AESDATALEN0, AESDATALEN1, AESAUTHLEN = 0x540, 0x550, 0x554, 0x558, 0x55C
AESDATAIN, AESTAGOUT = 0x560, 0x570
HASHDATAIN, HASHIOBUFCTRL, HASHMODE, HASHINLENL, HASHINLENH, HASHDIGEST = 0x600, 0x680, 0x684, 0x688, 0x68C, 0x6C0
ALGSEL, DMAPROTCTL = 0x700, 0x704
SWRESET, IRQTYPE, IRQEN, IRQCLR, IRQSET, IRQSTAT, HWVER = 0x740, 0x780, 0x784, 0x788, 0x78C, 0x790, 0x7FC

ALG_KEY_STORE, ALG_AES, ALG_SHA256, ALG_TAG = 1, 2, 4, 1 << 31
RESULT_AVAIL, DMA_IN_DONE = 1, 2
KEY_ST_RD_ERR, KEY_ST_WR_ERR, DMA_BUS_ERR = 1 << 29, 1 << 30, 1 << 31
PORT_ERR = 1 << 17                              # DMASTAT
CTL_DIR, CTL_CBC, CTL_CTR, CTL_CBC_MAC, CTL_CCM = 1 << 2, 1 << 5, 1 << 6, 1 << 15, 1 << 18
CTL_SAVE_CONTEXT, CTL_SAVED_CONTEXT_RDY, CTL_CONTEXT_READY = 1 << 29, 1 << 30, 1 << 31
HB_OUTPUT_FULL, HB_RFD_IN, HB_PAD_DMA = 1, 4, 1 << 7
HM_NEW_HASH, HM_SHA256, HM_SHA224, HM_SHA512, HM_SHA384 = 1, 1 << 3, 1 << 4, 1 << 5, 1 << 6
KEY_BYTES = {1: 16, 2: 24, 3: 32}

# the assumed structural costs (module docstring): cycles
DMA_WORD = 1
SHA256_BLOCK = 64 + 16 * DMA_WORD


def aes_rounds(key_bytes: int) -> int:
    return {16: 10, 24: 12, 32: 14}[key_bytes]


class Cc26x2Crypto(Peripheral):
    kind = "cc26x2-crypto"
    title = "TI CC26x2 CRYPTO"
    size = 0x800
    source = "TI SWCU185G (CC13x2/CC26x2 TRM) chapter 'Cryptography' (CRYPTO registers)"
    latency_source = ("assumption (structural estimate, lower confidence): SWCU185G gives no cycle counts; DMA one "
                      "word per cycle, AES one round per cycle (Nr + 8 a payload block; CCM 2 Nr + 8), SHA-256 one round per "
                      "cycle (80 a block with its 16 words)")
    # the memories the crypto DMA may reach: the lp-cc2652r7 map (boards.toml; TRM 'Memory Map':
    # flash from 0x0000 0000, SRAM from 0x2000 0000)
    dma_regions = ((0x00000000, 0x000B0000), (0x20000000, 0x20024000))
    # where its channel 1 (engine -> memory) may write: SRAM. Flash is programmed through the flash
    # controller, never by a bus write (SWCU185G "Flash"), so a DMA write there is an AHB error:
    # nothing is written, IRQSTAT.DMA_BUS_ERR ("an AHB bus error occurred during a DMA transfer")
    # and DMASTAT.PORT_ERR ("transfer errors on the AHB port") are set (SWCU185G CRYPTO registers),
    # which TI's driverlib reads after the operation (AESWaitForIRQFlags returns DMA_BUS_ERR)
    dma_write_regions = ((0x20000000, 0x20024000),)

    # the TRM CRYPTO register map (SWCU185G "CRYPTO Registers"; hw_crypto.h's offsets)
    registers = RegisterMap(
        Register(DMACH0CTL, "DMACH{n}CTL", RW, bits="EN 0, PRIO 1 (channel 0 at 0x000, channel 1 at 0x020)",
                 count=2, stride=0x20, read="_ch_ctl", write="_set_ch_ctl", horizon=STATIC),
        Register(DMACH0EXTADDR, "DMACH{n}EXTADDR", RW, bits="ADDR 31:0", count=2, stride=0x20, read="_ch_addr",
                 write="_set_ch_addr", horizon=STATIC),
        Register(DMACH0LEN, "DMACH{n}LEN", RW, bits="DMALEN 15:0: a nonzero store starts the channel (0: memory -> "
                 "engine, 1: engine -> memory); reads the length until the transfer ends, then 0",
                 count=2, stride=0x20, read="_ch_len", write="_set_ch_len", horizon="_ch_len_horizon"),
        Register(DMASTAT, "DMASTAT", RO, bits="CH0_ACT 0, CH1_ACT 1, PORT_ERR 17", read="_dmastat",
                 horizon="_dmastat_horizon"),
        Register(DMASWRESET, "DMASWRESET", WO, bits="SWRES 0", write="_dma_swreset"),
        Register(DMABUSCFG, "DMABUSCFG", RW, modelled=False),
        Register(DMAPORTERR, "DMAPORTERR", RO, modelled=False),
        Register(DMAHWVER, "DMAHWVER", RO, modelled=False),
        Register(KEYWRITEAREA, "KEYWRITEAREA", RW, bits="RAM_AREA0-7 7:0", field="keywritearea", mask=0xFF),
        Register(KEYWRITTENAREA, "KEYWRITTENAREA", W1C, bits="RAM_AREA_WRITTEN0-7 7:0", read="_keys_written",
                 write="_clear_keys", horizon=STATIC),
        Register(KEYSIZE, "KEYSIZE", RW, bits="SIZE 1:0: 1 = 128, 2 = 192, 3 = 256 bits; a store invalidates the "
                 "key store", field="keysize", write="_set_keysize"),
        Register(KEYREADAREA, "KEYREADAREA", RW, bits="RAM_AREA 3:0 (a store loads that key), BUSY 31",
                 read="_key_busy", write="_set_keyreadarea", horizon="_key_busy_horizon"),
        Register(AESKEY2, "AESKEY2{n}", WO, bits="GHASH H / intermediate values", count=4, modelled=False),
        Register(AESKEY3, "AESKEY3{n}", WO, bits="intermediate values", count=4, modelled=False),
        Register(AESIV, "AESIV{n}", RW, bits="the IV; the result IV once an operation is done", count=4,
                 read="_iv", write="_set_iv", horizon=STATIC),
        Register(AESCTL, "AESCTL", RW, bits="OUTPUT_READY 0, INPUT_READY 1, DIR 2, KEY_SIZE 4:3, CBC 5, CTR 6, "
                 "CTR_WIDTH 8:7, CBC_MAC 15, GCM 17:16, CCM 18, CCM_L 21:19, CCM_M 24:22, SAVE_CONTEXT 29, "
                 "SAVED_CONTEXT_RDY 30, CONTEXT_READY 31", read="_aesctl", write="_set_aesctl",
                 horizon="_aesctl_horizon"),
        Register(AESDATALEN0, "AESDATALEN0", WO, bits="C_LENGTH 31:0", field="datalen"),
        Register(AESDATALEN1, "AESDATALEN1", WO, bits="C_LENGTH 60:32", write="_set_datalen1"),
        Register(AESAUTHLEN, "AESAUTHLEN", WO, bits="AUTH_LENGTH 31:0", field="authlen"),
        Register(AESDATAIN, "AESDATAIN{n}/AESDATAOUT{n}", RW, bits="host-fed data: not modelled (reads 0, a store "
                 "is refused)", count=4, write="_host_fed"),
        Register(AESTAGOUT, "AESTAGOUT{n}", RO, bits="the tag (or result IV)", count=3, read="_tag", horizon=STATIC),
        Register(AESTAGOUT + 12, "AESTAGOUT3", RO, read="_tag", effect="a read once SAVED_CONTEXT_RDY is set "
                 "clears it"),
        Register(HASHDATAIN, "HASHDATAIN{n}", WO, bits="host-fed data: not modelled (a store is refused)", count=32,
                 write="_host_fed"),
        Register(HASHIOBUFCTRL, "HASHIOBUFCTRL", RW, bits="OUTPUT_FULL 0, DATA_IN_AV 1, RFD_IN 2, PAD_MESSAGE 5, "
                 "GET_DIGEST 6, PAD_DMA_MESSAGE 7", read="_hashbuf", write="_set_hashbuf",
                 horizon="_hashbuf_horizon"),
        Register(HASHMODE, "HASHMODE", RW, bits="NEW_HASH 0, SHA256_MODE 3, SHA224_MODE 4, SHA512_MODE 5, "
                 "SHA384_MODE 6", read="_hashmode", write="_set_hashmode", horizon=STATIC),
        Register(HASHINLENL, "HASHINLENL", WO, bits="the message's length in bits, 31:0", field="inlen"),
        Register(HASHINLENH, "HASHINLENH", WO, bits="the message's length in bits, 63:32", write="_set_inlenh"),
        Register(HASHDIGEST, "HASHDIGEST{n}", RW, bits="HASHDIGESTA-P; a store (resuming a hash) is refused",
                 count=16, read="_digest", write="_digest_written", horizon="_digest_horizon"),
        Register(ALGSEL, "ALGSEL", RW, bits="KEY_STORE 0, AES 1, HASH_SHA_256 2, HASH_SHA_512 3, TAG 31",
                 field="algsel", mask=ALG_KEY_STORE | ALG_AES | ALG_SHA256 | ALG_TAG | 8),
        Register(DMAPROTCTL, "DMAPROTCTL", RW, modelled=False),
        Register(SWRESET, "SWRESET", WO, bits="SW_RESET 0", write="_swreset"),
        Register(IRQTYPE, "IRQTYPE", RW, bits="LEVEL 0", field="irqtype", mask=1),
        Register(IRQEN, "IRQEN", RW, bits="RESULT_AVAIL 0, DMA_IN_DONE 1", field="irqen", mask=3),
        Register(IRQCLR, "IRQCLR", WO, bits="RESULT_AVAIL 0, DMA_IN_DONE 1, KEY_ST_RD_ERR 29, KEY_ST_WR_ERR 30, "
                 "DMA_BUS_ERR 31", write="_irqclr"),
        Register(IRQSET, "IRQSET", WO, bits="RESULT_AVAIL 0, DMA_IN_DONE 1", write="_irqset"),
        Register(IRQSTAT, "IRQSTAT", RO, bits="RESULT_AVAIL 0, DMA_IN_DONE 1 (where IRQEN enables them), "
                 "KEY_ST_RD_ERR 29, KEY_ST_WR_ERR 30, DMA_BUS_ERR 31", read="_read_irqstat",
                 horizon="_irqstat_horizon"),
        Register(HWVER, "HWVER", RO, bits="EIP-120t: VER_NUM 0x78 and its complement", reset=0x78 | (0x87 << 8)),
        stores="the CRYPTO registers take 32-bit writes (SWCU185G CRYPTO register map)")

    def __init__(self, base: int, irq: int | None, memory=None):
        super().__init__(base, irq, memory)
        self._reset()

    def _reset(self) -> None:
        self.registers.reset(self)              # the plain registers (IRQEN, ALGSEL, KEYSIZE, ...)
        # "armed": channel 1's DMACH1LEN write not yet served by an AES result (one write, one transfer)
        self.ch = [{"ctl": 0, "addr": 0, "len": 0, "end": 0}, {"ctl": 0, "addr": 0, "len": 0, "end": 0, "armed": False}]
        self.errors = self.irqset = 0
        self.port_err = False                   # DMASTAT.PORT_ERR: a DMA transfer hit a bus error
        self.irqset_at = 0
        self.in_done_at: int | None = None
        self.result_at: int | None = None
        self.busy_until = 0
        self.keys: dict[int, bytes] = {}
        self.key: bytes | None = None           # the key in the AES engine
        self.key_ready_at = 0
        self.iv = bytes(16)
        self.ctl = 0
        self.ctx: dict | None = None            # the AES operation under way
        self.tag = bytes(16)
        self.tag_at: int | None = None
        self.hashmode = 0
        self.hashbuf = 0
        self.hash = None
        self.digest = b""
        self.digest_at: int | None = None

    def _read(self, o: int, now: int) -> int:
        """The value of the register at word offset o, as a 32-bit read there gives it."""
        return self.registers.read(self, o, 4, now)

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _ch_ctl(self, o: int, now: int) -> int:
        return self.ch[o // 0x20]["ctl"]

    def _set_ch_ctl(self, o: int, v: int, now: int) -> None:
        self.ch[o // 0x20]["ctl"] = v & 3

    def _ch_addr(self, o: int, now: int) -> int:
        return self.ch[o // 0x20]["addr"]

    def _set_ch_addr(self, o: int, v: int, now: int) -> None:
        self.ch[o // 0x20]["addr"] = v

    def _ch_len(self, o: int, now: int) -> int:
        c = self.ch[o // 0x20]
        return c["len"] if now < c["end"] else 0

    def _ch_len_horizon(self, o: int, now: int) -> int:
        end = self.ch[o // 0x20]["end"]
        return end if end > now else NEVER

    def _set_ch_len(self, o: int, v: int, now: int) -> None:
        self._dma(o // 0x20, v & 0xFFFF, now)

    def _dmastat(self, o: int, now: int) -> int:
        return sum(1 << i for i in (0, 1) if now < self.ch[i]["end"]) | (PORT_ERR if self.port_err else 0)

    def _dmastat_horizon(self, o: int, now: int) -> int:
        return min((c["end"] for c in self.ch if c["end"] > now), default=NEVER)

    def _dma_swreset(self, o: int, v: int, now: int) -> None:
        if v & 1:
            self.keys.clear()
            self.port_err = False

    def _keys_written(self, o: int, now: int) -> int:
        return sum(1 << a for a in self.keys)

    def _clear_keys(self, o: int, v: int, now: int) -> None:
        for a in range(8):
            if v >> a & 1:
                self.keys.pop(a, None)

    def _set_keysize(self, o: int, v: int, now: int) -> None:
        if v & 3 == 0:
            raise PeripheralError(f"{self.title}: KEYSIZE = 0 is reserved; expected 1 (128), 2 (192) or 3 (256 bits)")
        self.keysize, self.keys = v & 3, {}      # "the KEY_STORE_WRITTEN_AREA register is reset"

    def _key_busy(self, o: int, now: int) -> int:
        return 1 << 31 if now < self.key_ready_at else 0

    def _key_busy_horizon(self, o: int, now: int) -> int:
        return self.key_ready_at if self.key_ready_at > now else NEVER

    def _set_keyreadarea(self, o: int, v: int, now: int) -> None:
        self._key_read(v & 0xF, now)

    def _iv(self, o: int, now: int) -> int:
        i = o - AESIV
        return int.from_bytes(self.iv[i:i + 4], "little")     # the result IV once done

    def _set_iv(self, o: int, v: int, now: int) -> None:
        iv = bytearray(self.iv)
        iv[o - AESIV:o - AESIV + 4] = v.to_bytes(4, "little")
        self.iv = bytes(iv)

    def _aesctl(self, o: int, now: int) -> int:
        v = self.ctl & 0x01FF81E4
        v |= {16: 1, 24: 2, 32: 3}.get(len(self.key or b""), 0) << 3
        if self.tag_at is not None and now >= self.tag_at:
            v |= CTL_SAVED_CONTEXT_RDY
        elif now >= self.busy_until and self.tag_at is None:
            v |= CTL_CONTEXT_READY | 2           # INPUT_READY: the input buffer is empty
        return v

    def _aesctl_horizon(self, o: int, now: int) -> int:
        return min((t for t in (self.tag_at, self.busy_until) if t is not None and t > now), default=NEVER)

    def _set_aesctl(self, o: int, v: int, now: int) -> None:
        self._write_ctl(v, now)

    def _set_datalen1(self, o: int, v: int, now: int) -> None:
        self.datalen |= (v & 0x1FFFFFFF) << 32

    def _host_fed(self, o: int, v: int, now: int) -> None:
        raise PeripheralError(f"{self.title}: host-fed data (offset 0x{o:x}) is not modelled; feed the engine "
                              "through its DMA (DMACH0/DMACH1), as TI's drivers do")

    def _tag(self, o: int, now: int) -> int:
        if o == AESTAGOUT + 12 and self.tag_at is not None and now >= self.tag_at:
            self.tag_at = None                      # the 4th word read clears SAVED_CONTEXT_RDY
            return int.from_bytes(self.tag[12:16], "little")
        return int.from_bytes(self.tag[o - AESTAGOUT:o - AESTAGOUT + 4], "little")

    def _hashbuf(self, o: int, now: int) -> int:
        full = self.digest_at is not None and now >= self.digest_at
        return (HB_OUTPUT_FULL if full else 0) | (HB_RFD_IN if now >= self.busy_until else 0)

    def _hashbuf_horizon(self, o: int, now: int) -> int:
        return min((t for t in (self.digest_at, self.busy_until) if t is not None and t > now), default=NEVER)

    def _set_hashbuf(self, o: int, v: int, now: int) -> None:
        if v & HB_OUTPUT_FULL:
            self.digest_at = None if self.digest_at is not None and now >= self.digest_at else self.digest_at
        if v & 0x62:
            raise PeripheralError(f"{self.title}: HASHIOBUFCTRL 0x{v:x}: DATA_IN_AV / PAD_MESSAGE / GET_DIGEST "
                                  "drive host-fed hashing, which is not modelled; use PAD_DMA_MESSAGE and the DMA")
        self.hashbuf = v & HB_PAD_DMA

    def _hashmode(self, o: int, now: int) -> int:
        return self.hashmode & ~HM_NEW_HASH

    def _set_hashmode(self, o: int, v: int, now: int) -> None:
        if v & (HM_SHA512 | HM_SHA384):
            raise PeripheralError(f"{self.title}: HASHMODE 0x{v:x}: SHA-384/SHA-512 are not modelled")
        self.hashmode = v & 0x7F

    def _set_inlenh(self, o: int, v: int, now: int) -> None:
        self.inlen = (self.inlen & 0xFFFFFFFF) | (v << 32)

    def _digest(self, o: int, now: int) -> int:
        i = o - HASHDIGEST
        ready = self.digest_at is not None and now >= self.digest_at
        return int.from_bytes(self.digest[i:i + 4].ljust(4, b"\0"), "little") if ready else 0

    def _digest_horizon(self, o: int, now: int) -> int:
        return self.digest_at if self.digest_at is not None and self.digest_at > now else NEVER

    def _digest_written(self, o: int, v: int, now: int) -> None:
        raise PeripheralError(f"{self.title}: HASHDIGEST written: resuming a hash from a written digest is not "
                              "modelled; hash the message in one session (HASHMODE.NEW_HASH, then parts)")

    def _swreset(self, o: int, v: int, now: int) -> None:
        if v & 1:
            self.keys.clear()
            self.errors = self.irqset = 0
            self.port_err = False
            self.in_done_at = self.result_at = None

    def _irqclr(self, o: int, v: int, now: int) -> None:
        if v & RESULT_AVAIL:
            self.result_at, self.irqset = None, self.irqset & ~RESULT_AVAIL
        if v & DMA_IN_DONE:
            self.in_done_at, self.irqset = None, self.irqset & ~DMA_IN_DONE
        self.errors &= ~(v & (KEY_ST_RD_ERR | KEY_ST_WR_ERR | DMA_BUS_ERR))

    def _irqset(self, o: int, v: int, now: int) -> None:
        if v & 3 & ~self.irqset:
            self.irqset_at = now
        self.irqset |= v & 3

    def _read_irqstat(self, o: int, now: int) -> int:
        return self._irqstat(now)

    def _irqstat_horizon(self, o: int, now: int) -> int:
        return min((t for t, bit in ((self.result_at, RESULT_AVAIL), (self.in_done_at, DMA_IN_DONE))
                    if t is not None and t > now and self.irqen & bit), default=NEVER)

    # ---- the interrupt line --------------------------------------------------------------------
    def irq_pending(self, now: int) -> bool:
        return bool(self._irqstat(now) & (RESULT_AVAIL | DMA_IN_DONE))

    def irq_since(self, now: int) -> int | None:
        """The cycle the interrupt line (IRQSTAT's enabled RESULT_AVAIL / DMA_IN_DONE) went high,
        if it is high at `now`: the earliest of the set sources (IRQSET's: when it was written)."""
        times = [t for t, bit in ((self.result_at, RESULT_AVAIL), (self.in_done_at, DMA_IN_DONE))
                 if t is not None and t <= now and self.irqen & bit]
        if self.irqset & self.irqen:
            times.append(self.irqset_at)
        return min(times) if times else None

    def next_event(self, now: int) -> int | None:
        times = [t for t, bit in ((self.result_at, RESULT_AVAIL), (self.in_done_at, DMA_IN_DONE))
                 if t is not None and t > now and self.irqen & bit]
        return min(times) if times else None

    # ---- state ---------------------------------------------------------------------------------
    def _irqstat(self, now: int) -> int:
        s = self.errors | (self.irqset & 3)
        if self.result_at is not None and now >= self.result_at:
            s |= RESULT_AVAIL & self.irqen
        if self.in_done_at is not None and now >= self.in_done_at:
            s |= DMA_IN_DONE & self.irqen
        return s

    def _busy(self, what: str, now: int) -> None:
        if now < self.busy_until:
            raise PeripheralError(f"{self.title}: {what} at cycle {now} while the engine is busy until cycle "
                                  f"{self.busy_until}; wait for IRQSTAT.RESULT_AVAIL first")

    def _write_ctl(self, v: int, now: int) -> None:
        if v & CTL_SAVED_CONTEXT_RDY:            # "writing one clears the bit"; other bits ignored
            self.tag_at = None
            return
        self._busy("AESCTL written", now)
        if self.tag_at is not None:
            raise PeripheralError(f"{self.title}: AESCTL written before the tag of the last operation was read "
                                  "(SAVE_CONTEXT: read AESTAGOUT0-3 or write SAVED_CONTEXT_RDY first)")
        if v & CTL_CBC_MAC:
            raise PeripheralError(f"{self.title}: AESCTL.CBC_MAC: CBC-MAC alone is not modelled (CCM is)")
        gcm = (v >> 16) & 3
        if gcm not in (0, 3):
            raise PeripheralError(f"{self.title}: AESCTL.GCM = {gcm}: reserved (TRM: only 11, autonomous GHASH)")
        if (gcm or v & CTL_CCM) and not v & CTL_CTR:
            raise PeripheralError(f"{self.title}: AESCTL GCM/CCM without CTR: the TRM requires CTR set as well")
        self.ctl, self.ctx = v, {"in": bytearray(), "t_in": now}

    def _mode(self) -> str:
        if (self.ctl >> 16) & 3 == 3:
            return "gcm"
        if self.ctl & CTL_CCM:
            return "ccm"
        if self.ctl & CTL_CTR:
            return "ctr"
        return "cbc" if self.ctl & CTL_CBC else "ecb"

    # ---- the key store -------------------------------------------------------------------------
    def _key_read(self, area: int, now: int) -> None:
        self._busy("KEYREADAREA written", now)
        n = KEY_BYTES.get(self.keysize, 16)
        if area > 7 or area not in self.keys or (n > 16 and area % 2):
            self.errors |= KEY_ST_RD_ERR         # TRM IRQSTAT: "a key location ... that is not available"
            return
        self.key = self.keys[area][:n]
        self.key_ready_at = now + n // 4 * DMA_WORD
        self.busy_until = self.key_ready_at
        self.active.add(now, self.key_ready_at)

    def _key_write(self, data: bytes, now: int, end: int) -> None:
        n = KEY_BYTES.get(self.keysize)
        areas = [a for a in range(8) if self.keywritearea >> a & 1]
        # a key over 128 bits takes a pair of areas (0-1, 2-3, 4-5, 6-7): selecting either area of a pair
        # occupies both (TI driverlib aes.h, AESWriteToKeyStore); one pair holds 256 bits, so a 192-bit
        # key is written as 256 bits, its top 64 zero (aes.c: "must be done by writing 256 bits of data")
        starts = areas if n == 16 else sorted({a & ~1 for a in areas})
        stored = 16 if n == 16 else 32
        if n is None or not starts or len(data) != stored * len(starts):
            self.errors |= KEY_ST_WR_ERR         # "a DMA operation does not cover a full key area"
        else:
            for i, a in enumerate(starts):
                self.keys[a] = data[i * stored:i * stored + n]
                if n > 16:
                    self.keys[a + 1] = self.keys[a]   # the pair's second area is written too
        self.in_done_at = self.result_at = end

    # ---- the DMA and the engines -----------------------------------------------------------------
    def _dma(self, ch: int, n: int, now: int) -> None:  # long: the three ALGSEL destinations
        c = self.ch[ch]
        c["len"] = n
        if not n or not c["ctl"] & 1:
            return                                # "starts the transfer if the channel is enabled"
        alg = self.algsel & ~ALG_TAG
        if alg not in (ALG_KEY_STORE, ALG_AES, ALG_SHA256):
            raise PeripheralError(f"{self.title}: DMACH{ch}LEN written with ALGSEL = 0x{self.algsel:x}; expected one "
                                  "of KEY_STORE (1), AES (2), HASH_SHA_256 (4)")
        self._check_range(ch, c["addr"], n)
        if ch == 1:
            c["end"] = now + (n + 3) // 4 * DMA_WORD
            c["armed"] = True
            if alg == ALG_AES:
                self._aes_run(now)
            elif alg == ALG_SHA256:
                self._hash_out(now)
            return
        if alg != ALG_AES or not self.ctx or len(self.ctx["in"]) >= self.authlen:
            self._busy(f"DMACH{ch}LEN written", now)
        data = self.memory.read(c["addr"], n)
        c["end"] = now + (n + 3) // 4 * DMA_WORD
        if alg == ALG_KEY_STORE:
            self._key_write(data, now, c["end"])
            self.busy_until = c["end"]
            self.active.add(now, c["end"])
        elif alg == ALG_AES:
            self._aes_in(data, now)
        else:
            self._hash_in(data, now)

    def _check_range(self, ch: int, addr: int, n: int) -> None:
        if self.memory is None:
            raise PeripheralError(f"{self.title}: DMA started without the image's memory attached")
        if not any(lo <= addr and addr + n <= hi for lo, hi in self.dma_regions):
            raise PeripheralError(f"{self.title}: DMA channel {ch} at 0x{addr:08x}+{n} lies outside the flash "
                                  "(0x00000000-0x000affff) and SRAM (0x20000000-0x20023fff) of the lp-cc2652r7 map")

    def _dma_write(self, addr: int, data: bytes) -> None:
        """Channel 1's output: written where the bus lets it (SRAM), else a bus error (dma_write_regions)."""
        if any(lo <= addr and addr + len(data) <= hi for lo, hi in self.dma_write_regions):
            self.memory.write(addr, data)
            return
        self.errors |= DMA_BUS_ERR
        self.port_err = True

    def _aes_in(self, data: bytes, now: int) -> None:
        ctx = self.ctx
        if ctx is None:
            raise PeripheralError(f"{self.title}: AES DMA before AESCTL set up an operation")
        if self.key is None or now < self.key_ready_at:
            raise PeripheralError(f"{self.title}: AES DMA with no key in the engine; load one with KEYREADAREA "
                                  "and wait for its BUSY bit to clear")
        mode = self._mode()
        aad = self.authlen if mode in ("gcm", "ccm") else 0
        if len(ctx["in"]) + len(data) > aad + self.datalen and self.datalen:
            raise PeripheralError(f"{self.title}: {len(ctx['in']) + len(data)} bytes through DMA channel 0, more than "
                                  f"AESAUTHLEN + AESDATALEN = {aad + self.datalen}")
        before = len(ctx["in"])
        ctx["in"] += data
        nr = aes_rounds(len(self.key))
        if before < aad:                         # an AAD transfer: it ends when its blocks are absorbed
            blocks = (min(len(ctx["in"]), aad) - before + 15) // 16
            self.busy_until = max(now, self.busy_until) + blocks * (4 * DMA_WORD + nr)
            self.active.add(now, self.busy_until)
            self.in_done_at = self.busy_until
            if len(ctx["in"]) == aad and not self.datalen:
                self._aes_finish(now)
        ctx["t_in"] = now
        self._aes_run(now)

    def _aes_run(self, now: int) -> None:
        ctx = self.ctx
        mode = self._mode()
        aad = self.authlen if mode in ("gcm", "ccm") else 0
        if not ctx or not self.datalen or len(ctx["in"]) < aad + self.datalen or ctx.get("done"):
            return
        c1 = self.ch[1]
        # waiting for channel 1 (TI writes it after channel 0); a transfer that served an earlier
        # operation does not serve this one (its length register still reads what was written)
        if not (c1["ctl"] & 1 and c1["armed"] and c1["len"] >= self.datalen):
            return
        self._check_range(1, c1["addr"], self.datalen)
        self._aes_finish(max(now, ctx["t_in"]))
        c1["armed"] = False
        self._dma_write(c1["addr"], ctx["out"])

    def _aes_finish(self, start: int) -> None:  # long: one call per mode
        ctx, mode, key = self.ctx, self._mode(), self.key
        aad_len = self.authlen if mode in ("gcm", "ccm") else 0
        aad, data = bytes(ctx["in"][:aad_len]), bytes(ctx["in"][aad_len:])
        enc = bool(self.ctl & CTL_DIR)
        if mode in ("ecb", "cbc") and len(data) % 16:
            raise PeripheralError(f"{self.title}: AESDATALEN = {len(data)} in {mode.upper()} mode; the TRM requires a "
                                  "multiple of the 16-byte block")
        tag = None
        if mode == "ecb":
            out, iv_after = aes_core.ecb(key, data, enc), self.iv
        elif mode == "cbc":
            out, iv_after = aes_core.cbc(key, self.iv, data, enc)
        elif mode == "ctr":
            width = 32 * (((self.ctl >> 7) & 3) + 1)
            out, iv_after = aes_core.ctr(key, self.iv, data, width)
        elif mode == "gcm":
            out, tag = aes_core.gcm(key, self.iv, aad, data, enc)
            iv_after = self.iv
        else:
            m = 2 * (((self.ctl >> 22) & 7) + 1)
            lq = ((self.ctl >> 19) & 7) + 1
            if self.iv[0] & 7 != lq - 1:
                raise PeripheralError(f"{self.title}: CCM A0 flags give L = {(self.iv[0] & 7) + 1}, AESCTL.CCM_L gives "
                                      f"{lq}; the TRM: 'L must be a copy' of AESCTL's")
            if m < 4:
                raise PeripheralError(f"{self.title}: AESCTL.CCM_M gives a {m}-byte tag; CCM needs 4 to 16 (SP 800-38C)")
            out, tag = aes_core.ccm(key, self.iv, m, aad, data, enc)
            tag = tag.ljust(16, b"\0")
            iv_after = self.iv
        nr = aes_rounds(len(key))
        blocks = (len(data) + 15) // 16
        # CCM needs two block encryptions a block (CBC-MAC and CTR, SP 800-38C 6.1) and one for B0, and
        # the engine has one AES core: they follow each other; GCM's GHASH is a multiplier of its own
        per_block = (2 * nr if mode == "ccm" else nr) + 8 * DMA_WORD
        end = (max(start, self.busy_until) + blocks * per_block + (nr if tag is not None else 0)
               + (nr if mode == "ccm" else 0))
        self.active.add(start, end)
        ctx.update(out=out, iv_after=iv_after, done=True)
        self.busy_until = self.result_at = end
        if data:
            self.in_done_at = end - (nr + 4 * DMA_WORD)
        if tag is not None or self.ctl & CTL_SAVE_CONTEXT:
            self.tag = tag if tag is not None else iv_after
            self.tag_at = end if self.ctl & CTL_SAVE_CONTEXT else None
        self.iv = iv_after

    def _hash_in(self, data: bytes, now: int) -> None:
        algo = "sha224" if self.hashmode & HM_SHA224 else "sha256" if self.hashmode & HM_SHA256 else None
        if algo is None:
            raise PeripheralError(f"{self.title}: hash DMA with HASHMODE = 0x{self.hashmode:x}; expected SHA256_MODE "
                                  "or SHA224_MODE")
        if self.digest_at is not None:
            raise PeripheralError(f"{self.title}: hash DMA while HASHIOBUFCTRL.OUTPUT_FULL is set; read the digest and "
                                  "write OUTPUT_FULL first (TRM HASHIOBUFCTRL)")
        if self.hashmode & HM_NEW_HASH or self.hash is None:
            if not self.hashmode & HM_NEW_HASH:
                raise PeripheralError(f"{self.title}: hash DMA without HASHMODE.NEW_HASH and no session to continue")
            self.hash, self.hashed = hashlib.new(algo), 0
            self.hashmode &= ~HM_NEW_HASH        # "automatically cleared when hash processing is started"
        final = bool(self.hashbuf & HB_PAD_DMA)
        if final and self.inlen == 0 and self.hashed == 0:
            # the empty message: the DMA cannot move 0 bytes, so a driver sends one and HASHINLEN = 0;
            # the engine pads at HASHINLEN and the byte is overwritten (TI driverlib sha2.c, the
            # published statement beside SHA2ExecuteHash's 1-byte transfer; SWCU185G HASHINLENL:
            # "used by the hash engine during the message padding phase")
            data = b""
        self.hash.update(data)
        self.hashed += len(data)
        if final:
            if self.inlen != 8 * self.hashed:
                raise PeripheralError(f"{self.title}: HASHINLENL/H = {self.inlen} bits, but {self.hashed} bytes of the "
                                      "message went through the DMA; the engine pads with HASHINLEN")
            blocks = (len(data) + 9 + 63) // 64
            self.digest = self.hash.digest()
            self.hash = None
        else:
            if len(data) % 64:
                raise PeripheralError(f"{self.title}: a non-final hash part of {len(data)} bytes; without "
                                      "PAD_DMA_MESSAGE a part must be whole 64-byte blocks")
            blocks = len(data) // 64
            self.digest = b""                    # the intermediate state is not modelled (reads 0)
        end = now + blocks * SHA256_BLOCK
        self.active.add(now, end)
        self.busy_until = self.result_at = end
        self.in_done_at = end
        self.digest_at = end if final else None

    def _hash_out(self, now: int) -> None:
        if self.algsel & ALG_TAG and self.digest and self.ch[1]["ctl"] & 1:
            self._dma_write(self.ch[1]["addr"], self.digest[:self.ch[1]["len"]])

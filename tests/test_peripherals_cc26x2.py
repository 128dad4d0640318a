"""The TI CC26x2 CRYPTO module and TRNG models (peripherals/cc26x2_crypto.py, cc26x2_trng.py) against
SWCU185G: known answers through the DMA path (FIPS 197, SP 800-38A, SP 800-38D, SP 800-38C, FIPS 180),
the IRQSTAT flags, the bytes the DMA moves, the modelled cycles, misuse as one line, and a register-level
driver image under `cryptobench sim run --device cc2652` on both executors."""
import hashlib
import subprocess

import pytest
from conftest import cli

from cryptobench.targets.mcu.sim.peripherals import cc26x2_crypto as C
from cryptobench.targets.mcu.sim.peripherals import cc26x2_trng as T
from cryptobench.targets.mcu.sim.peripherals.base import PeripheralError

FIX = __import__("pathlib").Path(__file__).parent / "fixtures" / "peripherals"
SRAM = 0x20000000


class Ram:
    """The image's SRAM as the model's DMA sees it."""

    def __init__(self):
        self.b = bytearray(0x24000)

    def read(self, addr, n):
        return bytes(self.b[addr - SRAM:addr - SRAM + n])

    def write(self, addr, data):
        self.b[addr - SRAM:addr - SRAM + len(data)] = data


class Core:
    """A core driving the model one access per cycle, as TI's drivers order the registers."""

    def __init__(self):
        self.ram = Ram()
        self.p, self.t = C.Cc26x2Crypto(0x40024000, 23, self.ram), 0

    def w(self, off, v):
        self.t += 1 + self.p.write(off, 4, v, self.t)

    def r(self, off):
        self.t += 1
        return self.p.read(off, 4, self.t)

    def wait(self, bits):
        while not self.r(C.IRQSTAT) & bits:
            pass

    def dma(self, src, n, dst=None, m=0):
        self.w(C.DMACH0CTL, 1), self.w(C.DMACH0EXTADDR, src), self.w(C.DMACH0LEN, n)
        if m:
            self.w(C.DMACH1CTL, 1), self.w(C.DMACH1EXTADDR, dst), self.w(C.DMACH1LEN, m)

    def setup(self, algsel):
        self.w(C.IRQTYPE, 1), self.w(C.IRQEN, 3), self.w(C.ALGSEL, algsel), self.w(C.IRQCLR, 3)

    def key(self, key, area=0):
        self.ram.write(SRAM, key)
        self.setup(C.ALG_KEY_STORE)
        self.w(C.KEYSIZE, {16: 1, 24: 2, 32: 3}[len(key)])
        self.w(C.KEYWRITEAREA, 1 << area)
        self.dma(SRAM, len(key))
        self.wait(3)
        self.w(C.IRQCLR, 3)

    def aes(self, key, ctl, iv, data, aad=b"", algsel=C.ALG_AES):
        self.key(key)
        self.setup(algsel)
        self.w(C.KEYREADAREA, 0)
        while self.r(C.KEYREADAREA) >> 31:
            pass
        for i in range(4):
            self.w(C.AESIV + 4 * i, int.from_bytes(iv[4 * i:4 * i + 4], "little"))
        self.w(C.AESCTL, ctl), self.w(C.AESDATALEN0, len(data)), self.w(C.AESDATALEN1, 0)
        if ctl & (C.CTL_CCM | 3 << 16):
            self.w(C.AESAUTHLEN, len(aad))
        if aad:
            self.ram.write(SRAM + 0x100, aad)
            self.dma(SRAM + 0x100, len(aad))
            self.wait(C.DMA_IN_DONE)
            self.w(C.IRQCLR, C.DMA_IN_DONE)
        self.ram.write(SRAM + 0x1000, data)
        start = self.t
        self.dma(SRAM + 0x1000, len(data), SRAM + 0x8000, len(data))
        self.wait(C.RESULT_AVAIL)
        tag = b""
        if ctl & C.CTL_SAVE_CONTEXT:
            assert self.r(C.AESCTL) & C.CTL_SAVED_CONTEXT_RDY
            tag = b"".join(self.r(C.AESTAGOUT + 4 * i).to_bytes(4, "little") for i in range(4))
            assert not self.r(C.AESCTL) & C.CTL_SAVED_CONTEXT_RDY       # the 4th word read clears it
        return self.ram.read(SRAM + 0x8000, len(data)), tag, start

    def sha(self, msg, mode=C.HM_SHA256, words=8):
        self.ram.write(SRAM + 0x1000, msg)
        self.setup(C.ALG_SHA256)
        self.w(C.HASHMODE, C.HM_NEW_HASH | mode), self.w(C.HASHINLENL, 8 * len(msg)), self.w(C.HASHINLENH, 0)
        self.w(C.HASHIOBUFCTRL, C.HB_PAD_DMA)
        self.dma(SRAM + 0x1000, len(msg))
        self.wait(C.RESULT_AVAIL)
        assert self.r(C.HASHIOBUFCTRL) & C.HB_OUTPUT_FULL
        return b"".join(self.r(C.HASHDIGEST + 4 * i).to_bytes(4, "little") for i in range(words))


H = bytes.fromhex
ENC, CBC, CTR, SAVE = C.CTL_DIR, C.CTL_CBC, C.CTL_CTR, C.CTL_SAVE_CONTEXT
GCM = 3 << 16
SP_KEY = H("2b7e151628aed2a6abf7158809cf4f3c")
SP_PT = H("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52ef"
          "f69f2445df4f9b17ad2b417be66c3710")


def test_ecb_fips197_c1_and_c3():
    assert Core().aes(H("000102030405060708090a0b0c0d0e0f"), ENC, bytes(16), H("00112233445566778899aabbccddeeff"))[0] \
        == H("69c4e0d86a7b0430d8cdb78070b4c55a")
    k256 = bytes(range(32))
    assert Core().aes(k256, ENC, bytes(16), H("00112233445566778899aabbccddeeff"))[0] == H("8ea2b7ca516745bfeafc49904b496089")
    assert Core().aes(k256, 0, bytes(16), H("8ea2b7ca516745bfeafc49904b496089"))[0] == H("00112233445566778899aabbccddeeff")


def test_cbc_and_ctr_sp800_38a_and_the_result_iv():
    c = Core()
    ct = c.aes(SP_KEY, ENC | CBC, bytes(range(16)), SP_PT)[0]
    assert ct == H("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e22229516"
                   "3ff1caa1681fac09120eca307586e1a7")
    assert b"".join(c.r(C.AESIV + 4 * i).to_bytes(4, "little") for i in range(4)) == ct[-16:]   # result IV
    assert Core().aes(SP_KEY, CBC, bytes(range(16)), ct)[0] == SP_PT
    ctr_ct = Core().aes(SP_KEY, ENC | CTR | 3 << 7, H("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), SP_PT)[0]
    assert ctr_ct[:16] == H("874d6191b620e3261bef6864990db6ce") and ctr_ct[-16:] == H("1e031dda2fbe03d1792170a0f3009cee")


def test_a_channel_1_transfer_serves_one_operation_only():
    # AESCTRDRBG's state updates run two ECB/CTR operations from different stack buffers: the second
    # one's channel 0 starts before its channel 1 is written, and its result must wait for that
    # channel, not go where the first operation's output went (its DMACH1LEN still reads as written)
    c = Core()
    c.aes(SP_KEY, ENC, bytes(16), SP_PT[:16])
    c.ram.write(SRAM + 0x8000, bytes(16))
    c.setup(C.ALG_AES)
    c.w(C.KEYREADAREA, 0)
    while c.r(C.KEYREADAREA) >> 31:
        pass
    c.w(C.AESCTL, ENC), c.w(C.AESDATALEN0, 16), c.w(C.AESDATALEN1, 0)
    c.ram.write(SRAM + 0x2000, SP_PT[16:32])
    c.w(C.DMACH0CTL, 1), c.w(C.DMACH0EXTADDR, SRAM + 0x2000), c.w(C.DMACH0LEN, 16)
    assert c.ram.read(SRAM + 0x8000, 16) == bytes(16)            # nothing written to the old channel 1 buffer
    c.w(C.DMACH1CTL, 1), c.w(C.DMACH1EXTADDR, SRAM + 0x9000), c.w(C.DMACH1LEN, 16)
    c.wait(C.RESULT_AVAIL)
    assert c.ram.read(SRAM + 0x9000, 16) == H("f5d3d58503b9699de785895a96fdbaaf")   # SP 800-38A F.1.1 block 2
    assert c.ram.read(SRAM + 0x8000, 16) == bytes(16)


def test_gcm_sp800_38d_test_case_4_both_directions():
    key, j0 = H("feffe9928665731c6d6a8f9467308308"), H("cafebabefacedbaddecaf88800000001")
    aad = H("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    pt = H("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
           "b16aedf5aa0de657ba637b39")
    ct, tag, _ = Core().aes(key, ENC | CTR | GCM | SAVE, j0, pt, aad, C.ALG_AES | C.ALG_TAG)
    assert ct == H("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa05"
                   "1ba30b396a0aac973d58e091")
    assert tag == H("5bc94fbc3221a5db94fae95ae7121a47")
    assert Core().aes(key, CTR | GCM | SAVE, j0, ct, aad, C.ALG_AES | C.ALG_TAG)[:2] == (pt, tag)


def test_ccm_sp800_38c_example_2():
    # SP 800-38C C.2: Tlen 48 bits (M = 6), nonce 8 bytes (q = 7, L field 6), AAD 16 bytes, payload 16
    key, nonce = H("404142434445464748494a4b4c4d4e4f"), H("1011121314151617")
    a0 = bytes([6]) + nonce + bytes(7)
    ctl = ENC | CTR | C.CTL_CCM | 6 << 19 | 2 << 22 | SAVE
    ct, tag, _ = Core().aes(key, ctl, a0, H("202122232425262728292a2b2c2d2e2f"), H("000102030405060708090a0b0c0d0e0f"))
    assert ct == H("d2a1f0e051ea5f62081a7792073d593d") and tag[:6] == H("1fc64fbfaccd")


@pytest.mark.parametrize("n", [0, 3, 55, 56, 64, 1000])
def test_sha256_and_sha224_fips180_through_the_dma(n):
    msg = b"abc" if n == 3 else bytes((i * 13 + 5) & 0xFF for i in range(n))
    if n == 0:
        msg = b""
    if msg:
        assert Core().sha(msg) == hashlib.sha256(msg).digest()
        assert Core().sha(msg, C.HM_SHA224, 7) == hashlib.sha224(msg).digest()


def test_an_empty_message_is_one_dma_byte_with_hashinlen_zero():
    """SWCU185G HASHINLENL ("used by the hash engine during the message padding phase"): the DMA
    cannot move 0 bytes, so TI's driverlib (sha2.c SHA2ExecuteHash) sends one with HASHINLEN = 0
    and states that the engine overwrites it; the digest is the empty message's, in one block."""
    c = Core()
    c.ram.write(SRAM + 0x1000, b"\xa5")
    c.setup(C.ALG_SHA256)
    c.w(C.HASHMODE, C.HM_NEW_HASH | C.HM_SHA256), c.w(C.HASHINLENL, 0), c.w(C.HASHINLENH, 0)
    c.w(C.HASHIOBUFCTRL, C.HB_PAD_DMA)
    t0 = c.t
    c.dma(SRAM + 0x1000, 1)                      # DMACH0LEN, the third store, at t0 + 2
    c.wait(C.RESULT_AVAIL)
    assert c.p.result_at == t0 + 2 + C.SHA256_BLOCK   # the one padding block (the structural estimate)
    got = b"".join(c.r(C.HASHDIGEST + 4 * i).to_bytes(4, "little") for i in range(8))
    assert got == hashlib.sha256(b"").digest()


def test_sha256_abc_digest_registers_are_fips180_b1():
    assert Core().sha(b"abc").hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_busy_timing_is_the_documented_structural_estimate():
    # AES-128 CBC, 4 blocks: (10 rounds + 8 DMA words) a block from the later DMA start (the assumption)
    c = Core()
    _, _, start = c.aes(SP_KEY, ENC | CBC, bytes(16), SP_PT)
    ch1_len_write = start + 5                       # the sixth write (ch0 x3, ch1 x3), one a cycle from `start`
    assert c.p.result_at == ch1_len_write + 4 * (10 + 8)
    assert c.p.in_done_at == c.p.result_at - (10 + 4)
    # SHA-256: 80 cycles a padded 512-bit block
    for n, blocks in ((3, 1), (55, 1), (56, 2), (1000, 16)):
        c = Core()
        c.sha(bytes(n))
        spans = c.p.active.spans[-1]
        assert spans[1] - spans[0] == blocks * C.SHA256_BLOCK == blocks * 80


def test_irqstat_flags_follow_irqen_and_irqclr():
    c = Core()
    c.ram.write(SRAM, bytes(16))
    c.w(C.ALGSEL, C.ALG_KEY_STORE), c.w(C.KEYSIZE, 1), c.w(C.KEYWRITEAREA, 1)
    c.dma(SRAM, 16)
    c.t += 50
    assert c.r(C.IRQSTAT) == 0                      # IRQEN = 0: the outputs "remain 0"
    c.w(C.IRQEN, 3)
    assert c.r(C.IRQSTAT) == 3 and c.p.irq_pending(c.t)
    c.w(C.IRQCLR, 1)
    assert c.r(C.IRQSTAT) == 2
    c.w(C.IRQCLR, 2)
    assert c.r(C.IRQSTAT) == 0 and not c.p.irq_pending(c.t)
    assert c.r(C.KEYWRITTENAREA) == 1
    c.w(C.KEYREADAREA, 5)                           # an unwritten area: KEY_ST_RD_ERR, a register flag
    assert c.r(C.IRQSTAT) & C.KEY_ST_RD_ERR
    c.w(C.IRQCLR, C.KEY_ST_RD_ERR)
    assert not c.r(C.IRQSTAT) & C.KEY_ST_RD_ERR
    c.w(C.KEYWRITEAREA, 2)
    c.dma(SRAM, 8)                                  # half a key area: KEY_ST_WR_ERR
    assert c.r(C.IRQSTAT) & C.KEY_ST_WR_ERR


def test_the_dma_moves_exactly_the_payload_and_the_next_events_are_dma_in_done_then_the_result():
    c = Core()
    c.ram.write(SRAM + 0x8000 - 4, b"\xaa" * 4)
    c.ram.write(SRAM + 0x8040, b"\xbb" * 4)
    c.aes(SP_KEY, ENC, bytes(16), SP_PT)
    assert c.ram.read(SRAM + 0x8000 - 4, 4) == b"\xaa" * 4 and c.ram.read(SRAM + 0x8040, 4) == b"\xbb" * 4
    assert c.ram.read(SRAM + 0x1000, 64) == SP_PT
    d = Core()
    d.key(SP_KEY)
    d.setup(C.ALG_AES), d.w(C.KEYREADAREA, 0)
    d.t += 10
    d.w(C.AESCTL, ENC), d.w(C.AESDATALEN0, 16)
    d.ram.write(SRAM + 0x1000, bytes(16))
    d.dma(SRAM + 0x1000, 16, SRAM + 0x2000, 16)
    assert d.p.next_event(d.t) == d.p.in_done_at < d.p.result_at and not d.p.irq_pending(d.t)
    assert d.p.irq_pending(d.p.in_done_at) and d.p.next_event(d.p.in_done_at) == d.p.result_at


def _misuse(steps):
    c = Core()
    c.key(SP_KEY)
    c.setup(C.ALG_AES), c.w(C.KEYREADAREA, 0)
    c.t += 20
    for off, v in steps:
        c.w(off, v)


@pytest.mark.parametrize("steps, message", [
    ([(C.AESCTL, ENC), (C.AESDATALEN0, 16), (C.DMACH0CTL, 1), (C.DMACH0EXTADDR, 0x30000000), (C.DMACH0LEN, 16)],
     "lies outside the flash"),
    ([(C.AESCTL, ENC), (C.AESDATALEN0, 64), (C.DMACH0CTL, 1), (C.DMACH0EXTADDR, SRAM), (C.DMACH0LEN, 64),
      (C.DMACH1CTL, 1), (C.DMACH1EXTADDR, SRAM + 0x100), (C.DMACH1LEN, 64), (C.AESCTL, ENC)],
     "while the engine is busy"),
    ([(C.AESCTL, ENC), (C.AESDATALEN0, 20), (C.DMACH0CTL, 1), (C.DMACH0EXTADDR, SRAM), (C.DMACH0LEN, 20),
      (C.DMACH1CTL, 1), (C.DMACH1EXTADDR, SRAM + 0x100), (C.DMACH1LEN, 20)], "multiple of the 16-byte block"),
    ([(C.AESCTL, ENC | GCM)], "GCM/CCM without CTR"),
    ([(C.AESCTL, ENC | C.CTL_CBC_MAC)], "CBC-MAC alone is not modelled"),
    ([(C.AESDATAIN, 1)], "host-fed data"),
    ([(C.ALGSEL, 0), (C.DMACH0CTL, 1), (C.DMACH0EXTADDR, SRAM), (C.DMACH0LEN, 16)], "expected one of KEY_STORE"),
    ([(C.HASHMODE, C.HM_SHA512)], "SHA-384/SHA-512 are not modelled"),
    ([(C.ALGSEL, C.ALG_SHA256), (C.HASHMODE, 9), (C.HASHINLENL, 8), (C.HASHIOBUFCTRL, C.HB_PAD_DMA),
      (C.DMACH0CTL, 1), (C.DMACH0EXTADDR, SRAM), (C.DMACH0LEN, 3)], "HASHINLENL/H = 8 bits, but 3 bytes"),
])
def test_crypto_misuse_is_one_line(steps, message):
    with pytest.raises(PeripheralError, match=message.replace("(", r"\(").replace(")", r"\)").replace("/", ".")):
        _misuse(steps)


def test_a_narrow_store_is_refused():
    with pytest.raises(PeripheralError, match="a 1-byte store at offset 0x550"):
        C.Cc26x2Crypto(0x40024000, 23, Ram()).write(C.AESCTL, 1, 0, 0)


def test_trng_result_after_the_samples_ctl_and_cfg0_give():
    t = T.Cc26x2Trng(0x40028000, 33)
    t.write(T.CFG0, 4, (2 << 16) | (3 << 8), 0)     # MAX_REFILL 2 x 2^8 samples, a sample every 4 clocks
    t.write(T.CTL, 4, (5 << 16) | T.CTL_TRNG_EN, 10)  # STARTUP 5 x 2^8 samples
    first = 10 + 5 * 256 * 4
    assert t.read(T.IRQFLAGSTAT, 4, first - 1) == T.NEED_CLOCK and t.read(T.OUT0, 4, first - 1) == 0
    assert t.read(T.IRQFLAGSTAT, 4, first) == T.RDY
    v1 = t.read(T.OUT0, 4, first) | t.read(T.OUT1, 4, first) << 32
    t.write(T.IRQFLAGCLR, 4, 1, first + 5)          # take it: the refill starts
    assert t.read(T.IRQFLAGSTAT, 4, first + 5 + 2 * 256 * 4 - 1) == T.NEED_CLOCK
    assert t.read(T.IRQFLAGSTAT, 4, first + 5 + 2 * 256 * 4) == T.RDY
    v2 = t.read(T.OUT0, 4, first + 5000) | t.read(T.OUT1, 4, first + 5000) << 32
    assert v1 != v2
    again = T.Cc26x2Trng(0x40028000, 33)              # deterministic: the same sequence every run
    again.write(T.CTL, 4, (1 << 16) | T.CTL_TRNG_EN, 0)
    assert again.read(T.OUT0, 4, 1 << 20) == v1 & 0xFFFFFFFF
    assert T.refill_samples(0) == 1 << 24 and T.refill_samples(3) == 3 << 6 and T.startup_samples(0) == 1 << 24


def test_a_taken_trng_number_stays_readable_until_the_next_is_ready():
    """TI's TRNGCC26XX.c acknowledges the number (IRQFLAGCLR.RDY) and stops the TRNG before it reads
    OUT0/OUT1: what it reads then is the number it took, not 0."""
    t = T.Cc26x2Trng(0x40028000, 33)
    t.write(T.CTL, 4, (1 << 16) | T.CTL_TRNG_EN, 0)
    ready = 256
    v1 = (t.read(T.OUT0, 4, ready), t.read(T.OUT1, 4, ready))
    t.write(T.IRQFLAGCLR, 4, T.RDY, ready + 1)                       # taken: the next is under way
    assert t.read(T.IRQFLAGSTAT, 4, ready + 2) == T.NEED_CLOCK
    assert (t.read(T.OUT0, 4, ready + 2), t.read(T.OUT1, 4, ready + 2)) == v1
    t.write(T.CTL, 4, 0, ready + 3)                                   # stopped (TRNGDisable)
    assert (t.read(T.OUT0, 4, ready + 4), t.read(T.OUT1, 4, ready + 4)) == v1
    fresh = T.Cc26x2Trng(0x40028000, 33)                              # before any number: 0
    assert fresh.read(T.OUT0, 4, 0) == 0


def test_trng_interrupt_and_misuse():
    t = T.Cc26x2Trng(0x40028000, 33)
    t.write(T.IRQFLAGMASK, 4, 1, 0)
    t.write(T.CTL, 4, (1 << 16) | T.CTL_TRNG_EN, 0)
    assert t.next_event(0) == 256 and not t.irq_pending(255) and t.irq_pending(256)
    with pytest.raises(PeripheralError, match="CFG0 written while CTL.TRNG_EN = 1"):
        t.write(T.CFG0, 4, 0, 300)
    t.write(T.CTL, 4, 0, 300)
    with pytest.raises(PeripheralError, match="MIN_REFILL_CYCLES"):
        t.write(T.CFG0, 4, (1 << 16) | 0xFF, 301)


def test_trng_line_rises_once_per_number_and_falls_when_masked_or_taken():
    """irq_since (peripherals/base.py): the cycle the level RDY & IRQFLAGMASK rose, for the simulator to
    take it once per number."""
    t = T.Cc26x2Trng(0x40028000, 33)
    t.write(T.CFG0, 4, (1 << 16) | 4, 0)                      # 256 samples a number
    t.write(T.CTL, 4, (1 << 16) | T.CTL_TRNG_EN, 0)
    assert t.irq_since(300) is None and t.next_event(0) is None        # masked: no line, no event
    t.write(T.IRQFLAGMASK, 4, T.RDY, 300)
    assert t.irq_since(300) == 256 and t.irq_pending(300)             # ready before it was unmasked
    t.write(T.IRQFLAGMASK, 4, 0, 310)
    assert t.irq_since(310) is None                                   # a handler masking RDY lowers it
    t.write(T.IRQFLAGMASK, 4, T.RDY, 320)
    t.write(T.IRQFLAGCLR, 4, T.RDY, 320)                              # taken: the next number from 320
    assert t.irq_since(400) is None and t.next_event(400) == 576 and t.irq_since(576) == 576
    t.write(T.IRQSET, 4, 2, 600)
    t.write(T.IRQFLAGCLR, 4, T.RDY, 600)
    t.write(T.IRQFLAGMASK, 4, 2, 600)
    assert t.irq_since(601) == 600                                    # IRQSET's flag is a rise of its own


def test_a_random_cell_is_checked_on_its_own_output():
    from cryptobench.targets.mcu.target import random_verdict
    assert random_verdict(hashlib.shake_256(b"y").digest(32), 32)[0] == "pass"
    assert random_verdict(bytes(31), 32) == ("fail", "asked for 32 random bytes, the target returned 31")
    assert random_verdict(bytes(32), 32)[0] == "fail"                  # a driver reading too early: zeros
    verdict, why = random_verdict(b"\x0f" * 1250 + b"\xf0" * 1250, 2500)    # balanced bits, long repeats
    assert verdict == "fail" and "repetition count test failed" in why
    assert random_verdict(hashlib.shake_256(b"x").digest(2500), 2500)[0] == "pass"


def test_the_cc2652_profile_lists_its_models():
    from cryptobench.targets.mcu.sim import devices
    kinds = {(m["kind"], m["base"], m["irq"]) for m in devices._load()["cc2652"].peripheral_models}
    assert kinds == {("cc26x2-crypto", 0x40024000, 23), ("cc26x2-trng", 0x40028000, 33), ("cc26x2-pka", 0x40025000, 3)}


def test_the_driver_image_gives_the_known_answers_with_the_same_cycles_on_both_executors(tmp_path):
    elf = tmp_path / "cc26x2.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-ffreestanding", "-nostdlib",
                    "-T", str(FIX / "cc26x2_link.ld"), str(FIX / "cc26x2_crypto.c"), "-o", str(elf)], check=True)
    outs = {}
    for executor in ("native", "unicorn"):
        proc = cli("sim", "run", str(elf), "--device", "cc2652", env={"CRYPTOBENCH_SIM_EXECUTOR": executor})
        assert proc.returncode == 0, proc.stderr
        assert "peripheral modelled: TI CC26x2 CRYPTO (TI SWCU185G" in proc.stdout
        outs[executor] = [line.split() for line in proc.stderr.splitlines() if line.startswith(("aes", "sha", "trng"))]
    assert outs["native"] == outs["unicorn"] and len(outs["native"]) == 6
    got = {name: value for name, value, _ in outs["native"]}
    msg = bytes((i * 7 + 1) & 0xFF for i in range(1000))
    assert got["aes128-cbc"].startswith("7649abac8119b246cee98e9b12e9197d")
    assert got["aes128-gcm"].startswith("42831ec2217774244b7221b784d0d49c")
    assert got["aes128-gcm-tag"] == "5bc94fbc3221a5db94fae95ae7121a47"
    assert got["sha256-abc"] == hashlib.sha256(b"abc").hexdigest()
    assert got["sha256-1000"] == hashlib.sha256(msg).hexdigest()
    assert len(got["trng"]) == 16 and all(int(c) > 0 for _, _, c in outs["native"])


def _random_cells(tmp_path, executor):
    import json
    import os
    out = tmp_path / f"{executor}.json"
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "cc2652", "--engine", "cc26x2-crypto", "--engine",
               "cc26x2-crypto-irq", "--op", "random", "--param", "bytes=32,2500", "--db",
               str(tmp_path / f"{executor}.sqlite"), "--json", str(out),
               env={**os.environ, "CRYPTOBENCH_SIM_EXECUTOR": executor})
    assert proc.returncode == 0, proc.stderr
    return {(r["engine"], r["params"]["bytes"]): r for r in json.loads(out.read_text())["results"]}


@pytest.mark.e2e
def test_random_through_the_trng_polled_and_by_interrupt_on_both_executors(tmp_path):
    """The TRNG driver (drivers/cc26x2/cc26x2_trng.c): RDY polled, or TRNG_IRQ (NVIC 33; the board's vector
    table holds the part's 38 external interrupts) waited for in WFI."""
    native, uc = _random_cells(tmp_path, "native"), _random_cells(tmp_path, "unicorn")
    assert len(native) == 4
    for (engine, n), r in native.items():
        assert r["status"] == "ok" and r["kat"] == "pass", (engine, n, r["detail"])
        assert r["served_by"].startswith("peripheral: TI CC26x2 TRNG (model of TI SWCU185G"), r["served_by"]
        # the TRNG model's band against TI's Table 17 (engine_bands.toml), or why there is none
        band = r["engine_band"]
        assert (band["engine"], band["class"], band["model"]) == ("cc26x2-trng", "random", "cc26x2-trng v1"), band
        assert band.get("unvalidated") or band["pct"] >= abs(band["median_ratio"] - 1) * 100, band
        assert ("health tests" in r["detail"]) == (n == 2500)
        assert ("sleep" in r) == (engine == "cc26x2-crypto-irq")
        # 256 samples a number, one a cycle: at least that many cycles per 8 bytes
        assert r["cycles"]["per_op_median"] >= 256 * (n // 8)

    def counts(cells):
        return {k: (r["cycles"]["per_op_median"], (r.get("sleep") or {}).get("cycles_per_op")) for k, r in cells.items()}
    assert counts(native) == counts(uc)


def test_the_bit_band_alias_reaches_the_registers_as_driverlib_sets_the_dma_enables():
    """ARMv7-M ARM B3.5.3 / Cortex-M4 TRM 3.7 (SWCU185G "Bit-Banding" for the CC26x2's M4F): the word
    at 0x4200 0000 + (byte - 0x4000 0000) * 32 + bit * 4 is one bit of the peripheral region; TI's
    driverlib writes DMACH0CTL.EN and DMACH1CTL.EN through it (HWREGBITW)."""
    from cryptobench.targets.mcu.sim.peripherals import bitband
    from cryptobench.targets.mcu.sim.peripherals.registry import PeripheralBus
    assert bitband.target(0x42480000, 4) == (0x40024000, 0)          # DMACH0CTL bit 0
    assert bitband.target(0x4248001C, 4) == (0x40024000, 7)
    assert bitband.target(0x42480020, 4) == (0x40024000, 8)          # the next byte, in the same word
    assert bitband.target(0x42480400, 4) == (0x40024020, 0)          # DMACH1CTL bit 0
    spec = {"kind": "cc26x2-crypto", "base": 0x40024000, "irq": 23, "source": "x"}
    bus = PeripheralBus([spec], Ram(), core="cortex-m4")
    assert bus.owns(0x42480400) and (0x42480000, 0x20000) in bus.pages()
    now = lambda: 0                                                      # noqa: E731
    bus.access(0x40024000 + C.ALGSEL, 4, now, C.ALG_AES)
    bus.access(0x42480400, 4, now, 1)                                  # DMACH1CTL.EN = 1
    assert bus.access(0x40024020, 4, now) == 1 and bus.access(0x42480400, 4, now) == 1
    assert bus.access(0x40024000 + C.ALGSEL, 4, now) == C.ALG_AES     # only the addressed word changed
    bus.access(0x42480400, 4, now, 0)
    assert bus.access(0x40024020, 4, now) == 0
    # the Cortex-M33 (and M0, M7) has no bit-band region: the alias is not the bus's there
    m33 = PeripheralBus([spec], Ram(), core="cortex-m33")
    assert not m33.owns(0x42480400) and m33.pages() == [(0x40024000, 0x1000)]

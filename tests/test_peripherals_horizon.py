"""Read horizons (Peripheral.read_horizon, PeripheralBus.read_horizon): the first cycle at which a
read of a register could give another value, no store coming meanwhile. The contract, for each
model: drive an operation, read the status at `now`, take the horizon; a read at any t in
[now, horizon) gives the same value and leaves the model as if it never happened; at the horizon
the change is seen when one is due; and the same after every access of each model's driver sequence
run at random gaps. A register whose read has an effect answers `now`. A bus that serves reads from
a cache under that contract answers a driver exactly as the uncached bus does."""
import random

import pytest

from cryptobench.targets.mcu.sim.peripherals import bitband
from cryptobench.targets.mcu.sim.peripherals import cc26x2_crypto as C
from cryptobench.targets.mcu.sim.peripherals import cc26x2_pka as P
from cryptobench.targets.mcu.sim.peripherals import cc26x2_trng as T
from cryptobench.targets.mcu.sim.peripherals import stm32_cryp as Y
from cryptobench.targets.mcu.sim.peripherals import stm32_hash as H
from cryptobench.targets.mcu.sim.peripherals.base import PeripheralError
from cryptobench.targets.mcu.sim.peripherals.registers import NEVER
from cryptobench.targets.mcu.sim.peripherals.registry import PeripheralBus
from cryptobench.targets.mcu.sim.peripherals.stm32_rng import Stm32Rng

from test_peripherals_cc26x2 import SRAM, Ram  # noqa: F401 (the image's SRAM as a model's DMA sees it)


def snapshot(m, t):
    """What the model answers at cycle t: every declared register without a read effect, its line."""
    out = []
    for o, reg in sorted(m.registers.by_offset.items()):
        if reg.effect or not reg.modelled:
            continue
        try:
            out.append(m.read(o, 4, t))
        except PeripheralError as e:
            out.append(str(e))
    return out, m.irq_since(t), m.next_event(t), list(m.active.spans)


def contract(make, offset, horizon=None, changes=True):
    """Checks the contract at `offset` for the state make() builds (the same on every call: a fresh
    replica stands for a copy). `horizon`: the value expected (NEVER: none due). Returns it."""
    m, now = make()
    v = m.read(offset, 4, now)
    h = m.read_horizon(offset, 4, now)
    assert h >= now
    if horizon is not None:
        assert h == horizon, f"offset 0x{offset:x} at {now}: horizon {h}, expected {horizon}"
    ts = [now, now + 1, (now + h) // 2, h - 1] if h < NEVER else [now, now + 1, now + 10 ** 6, now + 10 ** 12]
    reader, _ = make()
    reader.read(offset, 4, now)
    for t in sorted(t for t in ts if now <= t < h):
        assert reader.read(offset, 4, t) == v, f"offset 0x{offset:x}: the value moved at {t} < horizon {h}"
    quiet, _ = make()
    quiet.read(offset, 4, now)
    later = h if h < NEVER else now + 10 ** 12 + 1
    assert snapshot(reader, later) == snapshot(quiet, later)          # as if those reads never happened
    if h < NEVER and changes:
        assert reader.read(offset, 4, h) != v, f"offset 0x{offset:x}: no change at the horizon {h}"
    return h


# ---- TI CC26x2 PKA ------------------------------------------------------------------------------
def pka_multiply():
    """A Multiply of two 8-word numbers started at cycle 100 (8 + 8 x 8 cycles: done at 172)."""
    p = P.Cc26x2Pka(0x40025000, 3)
    for i in range(8):
        p.write(P.RAM + 4 * i, 4, 0x01020304 + i, i)
        p.write(P.RAM + 4 * (16 + i), 4, 0x0A0B0C0D + i, 10 + i)
    for t, (reg, v) in enumerate(((P.APTR, 0), (P.ALENGTH, 8), (P.BPTR, 16), (P.BLENGTH, 8), (P.CPTR, 32))):
        p.write(reg, 4, v, 50 + t)
    p.write(P.FUNCTION, 4, P.F_RUN | P.F_MULTIPLY, 100)
    return p, 101


def test_pka_run_and_results_change_when_the_operation_ends():
    done = 100 + P.basic_cycles(P.F_MULTIPLY, 8, 8)
    assert done == 172
    assert contract(pka_multiply, P.FUNCTION, done) == done                 # RUN 1 -> 0
    contract(pka_multiply, P.MSW, done)                                     # 0 -> the result's top word
    contract(pka_multiply, P.COMPARE, done, changes=False)                  # 0 before and after
    contract(pka_multiply, P.APTR, NEVER)                                   # only a store changes it


def test_pka_ecc_mul_status_horizon_is_the_whole_operation():
    def ecc_mul():
        p = P.Cc26x2Pka(0x40025000, 3)
        s = P.stride(8)
        for w, v in ((0, 5), (s, 2 ** 256 - 2 ** 224 + 2 ** 192 + 2 ** 96 - 1)):
            for i in range(8):
                p.write(P.RAM + 4 * (w + i), 4, (v >> (32 * i)) & 0xFFFFFFFF, 0)
        for reg, v in ((P.APTR, 0), (P.ALENGTH, 8), (P.BPTR, s), (P.BLENGTH, 8), (P.CPTR, 4 * s), (P.DPTR, 6 * s)):
            p.write(reg, 4, v, 1)
        p.write(P.FUNCTION, 4, P.F_RUN | P.SEQ_ECC_MUL << P.SEQ_SHIFT, 10)
        return p, 11
    # 865,744 cycles (the model's P-256 estimate): a polling loop need not reach the model before then
    contract(ecc_mul, P.FUNCTION, 10 + P.ecc_mul_cycles(8, 8))
    assert P.ecc_mul_cycles(8, 8) == 865_744


def test_pka_ram_is_refused_while_running_and_stable_when_idle():
    p, now = pka_multiply()
    assert p.read_horizon(P.RAM + 4 * 32, 4, now) == now                   # a read now would be refused
    contract(lambda: (pka_multiply()[0], 200), P.RAM + 4 * 32, NEVER)


# ---- TI CC26x2 CRYPTO ---------------------------------------------------------------------------
def crypto_aes(until=None):
    """AES-128-ECB of 2 blocks through the DMA, accesses at fixed cycles: the key store (DMA 16 bytes
    at 10), the key loaded at 21 (4 words: ready at 25), channel 0 started at 42 with 32 bytes (ends
    at 50), channel 1 at 45 (ends at 53), the engine from 45: 2 x (Nr + 8) = 36 cycles, done at 81,
    DMA_IN_DONE with the last block's input at 81 - (Nr + 4) = 67."""
    ram = Ram()
    ram.write(SRAM, bytes(range(16)))
    ram.write(SRAM + 0x1000, bytes(range(32)))
    c = C.Cc26x2Crypto(0x40024000, 23, ram)
    steps = [(0, C.IRQTYPE, 1), (1, C.IRQEN, 3), (2, C.ALGSEL, C.ALG_KEY_STORE), (3, C.IRQCLR, 3), (4, C.KEYSIZE, 1),
             (5, C.KEYWRITEAREA, 1), (6, C.DMACH0CTL, 1), (7, C.DMACH0EXTADDR, SRAM), (10, C.DMACH0LEN, 16),
             (20, C.IRQCLR, 3), (20, C.ALGSEL, C.ALG_AES), (21, C.KEYREADAREA, 0),
             (30, C.AESCTL, C.CTL_DIR), (31, C.AESDATALEN0, 32), (32, C.AESDATALEN1, 0),
             (40, C.DMACH0CTL, 1), (41, C.DMACH0EXTADDR, SRAM + 0x1000), (42, C.DMACH0LEN, 32),
             (43, C.DMACH1CTL, 1), (44, C.DMACH1EXTADDR, SRAM + 0x8000), (45, C.DMACH1LEN, 32)]
    for t, reg, v in steps:
        if until is not None and t >= until:
            return c, until
        c.write(reg, 4, v, t)
    return c, 46


def test_crypto_dma_aes_and_irq_status_horizons():
    contract(lambda: crypto_aes(until=22), C.KEYREADAREA, 25)              # BUSY until the key is in
    contract(crypto_aes, C.DMASTAT, 50)                                     # CH0_ACT falls first
    contract(crypto_aes, C.DMACH0LEN, 50)                                   # the length, then 0
    contract(crypto_aes, C.DMACH1LEN, 53)
    contract(crypto_aes, C.IRQSTAT, 67)                                     # DMA_IN_DONE, then RESULT_AVAIL
    contract(lambda: (crypto_aes()[0], 67), C.IRQSTAT, 81)
    contract(lambda: (crypto_aes()[0], 81), C.IRQSTAT, NEVER)
    contract(crypto_aes, C.AESCTL, 81)                                      # INPUT_READY / CONTEXT_READY
    contract(crypto_aes, C.AESIV, NEVER)
    contract(crypto_aes, C.ALGSEL, NEVER)


def crypto_sha256():
    """SHA-256 of 100 bytes in one final part, the DMA started at 20: 2 padded blocks, 80 cycles each."""
    ram = Ram()
    ram.write(SRAM + 0x1000, bytes(100))
    c = C.Cc26x2Crypto(0x40024000, 23, ram)
    for t, (reg, v) in enumerate(((C.IRQEN, 3), (C.ALGSEL, C.ALG_SHA256), (C.HASHMODE, C.HM_NEW_HASH | C.HM_SHA256),
                                  (C.HASHINLENL, 800), (C.HASHINLENH, 0), (C.HASHIOBUFCTRL, C.HB_PAD_DMA),
                                  (C.DMACH0CTL, 1), (C.DMACH0EXTADDR, SRAM + 0x1000))):
        c.write(reg, 4, v, t)
    c.write(C.DMACH0LEN, 4, 100, 20)
    return c, 21


def test_crypto_hash_status_and_digest_horizons():
    done = 20 + 2 * C.SHA256_BLOCK
    contract(crypto_sha256, C.HASHIOBUFCTRL, done)                          # OUTPUT_FULL and RFD_IN
    contract(crypto_sha256, C.HASHDIGEST, done)                             # 0, then the digest's word
    contract(crypto_sha256, C.HASHMODE, NEVER)


def test_crypto_reads_with_an_effect_answer_now():
    c, now = crypto_aes()
    assert C.Cc26x2Crypto.registers.declares(C.AESTAGOUT + 12).effect
    assert c.read_horizon(C.AESTAGOUT + 12, 4, now) == now
    assert c.read_horizon(C.AESKEY2, 4, now) == now                        # unmodelled: each read counted
    assert c.read_horizon(0x200, 4, now) == now                            # undeclared: likewise


# ---- TI CC26x2 TRNG -----------------------------------------------------------------------------
def trng():
    """The first number after STARTUP_CYCLES = 5 x 2^8 samples, a sample every 4 clocks, from 10."""
    t = T.Cc26x2Trng(0x40028000, 33)
    t.write(T.CFG0, 4, (2 << 16) | (3 << 8), 0)
    t.write(T.CTL, 4, (5 << 16) | T.CTL_TRNG_EN, 10)
    return t, 11


def test_trng_flags_and_output_change_when_the_number_is_ready():
    ready = 10 + 5 * 256 * 4
    contract(trng, T.IRQFLAGSTAT, ready)                                    # NEED_CLOCK -> RDY
    contract(trng, T.IRQSTAT, ready)
    contract(trng, T.OUT0, ready)                                           # 0, then the number
    contract(lambda: (trng()[0], ready), T.OUT1, NEVER)                     # ready: only IRQFLAGCLR moves it
    contract(trng, T.CFG0, NEVER)


# ---- STM32F4 HASH -------------------------------------------------------------------------------
def stm32_hash(dcal=False):
    """SHA-256: 17 words (the 17th at cycle 16 starts the first block: 50 cycles, to 66); with DCAL
    at 100, the last block's digest at 150."""
    h = H.Stm32Hash(0x50060400, 80)
    h.write(H.CR, 4, H.CR_INIT | (2 << 4) | H.CR_ALGO0 | H.CR_ALGO1, 0)
    for i in range(17):
        h.write(H.DIN, 4, i, i)
    if dcal:
        h.write(H.STR, 4, H.STR_DCAL, 100)
        return h, 101
    return h, 17


def test_stm32_hash_status_and_digest_horizons():
    contract(stm32_hash, H.SR, 16 + 50)                                     # BUSY -> DINIS
    contract(lambda: stm32_hash(dcal=True), H.SR, 150)                      # DCIS
    contract(lambda: stm32_hash(dcal=True), H.HR_LONG, 150)                 # the digest's first word
    contract(lambda: stm32_hash(dcal=True), H.HR_SHORT + 4, 150)
    contract(stm32_hash, H.CR, NEVER)                                       # NBW moves with stores only
    assert H.Stm32Hash.registers.declares(H.DIN).access.name == "WO"
    contract(stm32_hash, H.DIN, NEVER, changes=False)                       # reads 0


# ---- STM32F4 CRYP -------------------------------------------------------------------------------
def stm32_cryp():
    """AES-128-ECB: the key, CRYPEN, one block's 4 words (the 4th at 13 starts it: 14 cycles, to 27)."""
    y = Y.Stm32Cryp(0x50060000, 79)
    for i in range(4):
        y.write(0x30 + 4 * i, 4, 0x01020304 * (i + 1), i)
    y.write(Y.CR, 4, (4 << 3) | (2 << 6) | Y.CR_CRYPEN, 5)
    for i in range(4):
        y.write(Y.DIN, 4, i, 10 + i)
    return y, 14


def test_stm32_cryp_status_horizons_and_dout():
    contract(stm32_cryp, Y.SR, 13 + 14)                                     # BUSY -> OFNE
    contract(stm32_cryp, Y.RISR, 13 + 14)                                   # OUTRIS rises
    contract(stm32_cryp, Y.MISR, 13 + 14, changes=False)                    # masked: stays 0
    contract(stm32_cryp, Y.CR, 13 + 14, changes=False)                      # ECB: CRYPEN stays
    y, _ = stm32_cryp()
    assert y.read(Y.SR, 4, 30) & Y.SR_OFNE
    assert y.read_horizon(Y.DOUT, 4, 30) == 30                             # a FIFO pop
    contract(lambda: (stm32_cryp()[0], 30), Y.SR, NEVER)                    # done: only an access moves it


# ---- STM32F4 RNG --------------------------------------------------------------------------------
def rng():
    r = Stm32Rng(0x50060800, 80)                                            # 180 MHz: 150 cycles a value
    r.write(0x00, 4, 1 << 2, 0)
    return r, 1


def test_stm32_rng_status_horizon_and_dr():
    contract(rng, 0x04, 150)                                                # DRDY
    r, _ = rng()
    assert r.read_horizon(0x08, 4, 150) == 150                              # RNG_DR takes the value
    r.read(0x08, 4, 150)
    assert r.read_horizon(0x04, 4, 151) == 300                              # the next value's DRDY


# ---- the bus --------------------------------------------------------------------------------------
def test_bus_horizons_plain_pages_clock_gates_and_the_bit_band_alias():
    specs = [{"kind": "cc26x2-crypto", "base": 0x40024000, "irq": 23, "source": "t", "enable": [0x40082028, 1]}]
    bus = PeripheralBus(specs, Ram(), core="cortex-m4")
    assert bus.read_horizon(0x40024000 + C.DMASTAT, 4, 5) == 5             # clock off: refused, nothing cached
    bus.access(0x40082028, 4, lambda: 6, 1)
    assert bus.read_horizon(0x40082028, 4, 7) == NEVER                      # plain page memory
    assert bus.read_horizon(0x40024000 + C.HWVER, 4, 7) == NEVER
    assert bus.read_horizon(0x30000000, 4, 7) == 7                          # not the bus's
    c = bus.models[0]
    c.write(C.KEYREADAREA, 4, 0, 8)                                         # no key: KEY_ST_RD_ERR, not busy
    alias = bitband.ALIAS_LO + (0x40024000 + C.DMASTAT - bitband.REGION_LO) * 32
    assert bus.read_horizon(alias, 4, 9) == bus.read_horizon(0x40024000 + C.DMASTAT, 4, 9) == NEVER


class CachedBus:
    """The run loop's cache as item 6 plans it: a read below its horizon is served without the model;
    a store, or a read that reached the model and whose horizon is now (it may have had an effect:
    a FIFO pop), drops every cached value."""

    def __init__(self, bus):
        self.bus, self.cache, self.model_reads = bus, {}, 0

    def access(self, addr, size, now, value=None):
        if value is not None:
            self.cache.clear()
            return self.bus.access(addr, size, lambda: now, value)
        hit = self.cache.get((addr, size))
        if hit is not None and now < hit[1]:
            return hit[0]
        self.model_reads += 1
        v = self.bus.access(addr, size, lambda: now)
        h = self.bus.read_horizon(addr, size, now)
        if h == now:
            self.cache.clear()
        else:
            self.cache[(addr, size)] = (v, h)
        return v


STM32_SPECS = [{"kind": "stm32f4-hash", "base": 0x50060400, "irq": 80, "source": "t"},
               {"kind": "stm32f4-cryp", "base": 0x50060000, "irq": 79, "source": "t"},
               {"kind": "stm32f4-rng", "base": 0x50060800, "irq": 80, "source": "t"}]


def _stm32_driver(acc):
    """HASH-256 of 200 bytes polling DINIS/DCIS, two CRYP blocks polling OFNE, two RNG values polling
    DRDY: the values read and the stalls, in order (one access per cycle)."""
    out, t = [], [0]

    def w(addr, v):
        out.append(("w", addr, acc(addr, 4, t[0], v)))
        t[0] += 1 + out[-1][2]

    def r(addr):
        out.append(("r", addr, acc(addr, 4, t[0])))
        t[0] += 1
        return out[-1][2]

    hb, yb, rb = 0x50060400, 0x50060000, 0x50060800
    w(hb + H.CR, H.CR_INIT | (2 << 4) | H.CR_ALGO0 | H.CR_ALGO1)
    for i in range(50):
        if i > 16 and i % 16 == 1:              # after each 17th word (a block under way)
            while not r(hb + H.SR) & H.SR_DINIS:
                pass
        w(hb + H.DIN, i * 0x01010101)
    w(hb + H.STR, H.STR_DCAL)
    while not r(hb + H.SR) & H.SR_DCIS:
        pass
    [r(hb + H.HR_LONG + 4 * i) for i in range(8)]
    for i in range(4):
        w(yb + 0x30 + 4 * i, 0x11111111 * (i + 1))
    w(yb + Y.CR, (4 << 3) | (2 << 6) | Y.CR_CRYPEN)
    for block in range(2):
        for i in range(4):
            w(yb + Y.DIN, block * 4 + i)
        for _ in range(4):
            while not r(yb + Y.SR) & Y.SR_OFNE:
                pass
            r(yb + Y.DOUT)
    w(rb, 1 << 2)
    for _ in range(2):
        while not r(rb + 0x04) & 1:
            pass
        r(rb + 0x08)
    return out, t[0]


def test_a_cached_bus_answers_a_polling_driver_exactly_as_the_models_do():
    plain = PeripheralBus(STM32_SPECS, None)
    cached = CachedBus(PeripheralBus(STM32_SPECS, None))
    want = _stm32_driver(lambda a, s, now, v=None: plain.access(a, s, lambda: now, v))
    got = _stm32_driver(cached.access)
    assert got == want
    polls = sum(1 for kind, *_ in want[0] if kind == "r")
    assert cached.model_reads < polls / 4, (cached.model_reads, polls)     # the polling was served


def _pka_driver(acc):
    """An ECC-MUL of 8-word vectors (over an empty curve: error 31 in SHIFT, after the full time the
    model charges) polled to its end through FUNCTION.RUN, then SHIFT."""
    base, t = 0x40025000, [0]

    def w(off, v):
        acc(base + off, 4, t[0], v)
        t[0] += 1

    for i in range(8):
        w(P.RAM + 4 * i, 7 if i == 0 else 0)
    s = P.stride(8)
    for reg, v in ((P.APTR, 0), (P.ALENGTH, 8), (P.BPTR, s), (P.BLENGTH, 8), (P.CPTR, 4 * s), (P.DPTR, 6 * s)):
        w(reg, v)
    w(P.FUNCTION, P.F_RUN | P.SEQ_ECC_MUL << P.SEQ_SHIFT)
    polls = 0
    while acc(base + P.FUNCTION, 4, t[0]) & P.F_RUN:
        t[0] += 3                                   # LDR, TST, BNE
        polls += 1
    return t[0], polls, acc(base + P.SHIFT, 4, t[0])


def test_a_cached_bus_serves_a_pka_poll_in_one_model_read():
    spec = [{"kind": "cc26x2-pka", "base": 0x40025000, "irq": 3, "source": "t"}]
    plain = PeripheralBus(spec, None)
    cached = CachedBus(PeripheralBus(spec, None))
    want = _pka_driver(lambda a, s, now, v=None: plain.access(a, s, lambda: now, v))
    assert _pka_driver(cached.access) == want
    assert want[1] > 100_000 and cached.model_reads == 3        # the first poll, the one at the end, SHIFT


@pytest.mark.parametrize("make", [crypto_aes, crypto_sha256])
def test_crypto_polling_through_a_cache_matches(make):
    """The CC26x2 operations above polled until RESULT_AVAIL (IRQSTAT, DMASTAT, AESCTL / HASHIOBUFCTRL
    in turn), then the output read: the same answers with and without the cache."""
    def run(read):
        c, t = make()
        out = []
        while not read(c, C.IRQSTAT, t) & C.RESULT_AVAIL:
            out.append((t, read(c, C.DMASTAT, t + 1), read(c, C.AESCTL, t + 2), read(c, C.HASHIOBUFCTRL, t + 3)))
            t += 4
        return out, c.memory.read(SRAM + 0x8000, 32), [read(c, C.HASHDIGEST + 4 * i, t) for i in range(8)]

    cache, model_reads = {}, [0]

    def cached(c, off, t):                  # CachedBus's rule, on the model itself
        hit = cache.get(off)
        if hit and t < hit[1]:
            return hit[0]
        model_reads[0] += 1
        v, h = c.read(off, 4, t), c.read_horizon(off, 4, t)
        if h == t:
            cache.clear()
        else:
            cache[off] = (v, h)
        return v

    want = run(lambda c, off, t: c.read(off, 4, t))
    assert run(cached) == want
    assert model_reads[0] < 4 * len(want[0]) / 2


# ---- the contract along whole driver sequences, at random gaps -------------------------------------
def _steps():
    """Each model's driver sequence as (cycle, 'w' / 'r', offset, value), from the states above."""
    cbc_save = C.CTL_DIR | C.CTL_CBC | C.CTL_SAVE_CONTEXT               # the result IV through AESTAGOUT
    aes = [(t, "w", reg, v) for t, reg, v in (
        (0, C.IRQTYPE, 1), (1, C.IRQEN, 3), (2, C.ALGSEL, C.ALG_KEY_STORE), (3, C.IRQCLR, 3), (4, C.KEYSIZE, 1),
        (5, C.KEYWRITEAREA, 1), (6, C.DMACH0CTL, 1), (7, C.DMACH0EXTADDR, SRAM), (10, C.DMACH0LEN, 16),
        (20, C.IRQCLR, 3), (20, C.ALGSEL, C.ALG_AES), (21, C.KEYREADAREA, 0), (30, C.AESCTL, cbc_save),
        (31, C.AESDATALEN0, 32), (32, C.AESDATALEN1, 0), (40, C.DMACH0CTL, 1), (41, C.DMACH0EXTADDR, SRAM + 0x1000),
        (42, C.DMACH0LEN, 32), (43, C.DMACH1CTL, 1), (44, C.DMACH1EXTADDR, SRAM + 0x8000), (45, C.DMACH1LEN, 32))]
    aes += [(90 + i, "r", C.AESTAGOUT + 4 * i, 0) for i in range(4)] + [(95, "w", C.IRQCLR, 3)]
    pka = [(i, "w", P.RAM + 4 * i, 0x01020304 + i) for i in range(8)] + \
          [(10 + i, "w", P.RAM + 4 * (16 + i), 0x0A0B0C0D + i) for i in range(8)] + \
          [(30 + i, "w", reg, v) for i, (reg, v) in enumerate(((P.APTR, 0), (P.ALENGTH, 8), (P.BPTR, 16),
                                                                (P.BLENGTH, 8), (P.CPTR, 32)))] + \
          [(100, "w", P.FUNCTION, P.F_RUN | P.F_MULTIPLY), (300, "w", P.FUNCTION, P.F_RUN | P.F_COMPARE)]
    trng = [(0, "w", T.CFG0, (1 << 16) | 4), (10, "w", T.CTL, (1 << 16) | T.CTL_TRNG_EN), (300, "r", T.OUT0, 0),
            (301, "w", T.IRQFLAGCLR, T.RDY), (302, "w", T.IRQFLAGMASK, T.RDY)]
    hsh = [(0, "w", H.CR, H.CR_INIT | (2 << 4) | H.CR_ALGO0 | H.CR_ALGO1)] + \
          [(1 + i, "w", H.DIN, i) for i in range(20)] + [(30, "w", H.STR, H.STR_DCAL)]
    cryp = [(i, "w", 0x30 + 4 * i, 0x01020304 * (i + 1)) for i in range(4)] + \
           [(5, "w", Y.CR, (5 << 3) | (2 << 6) | Y.CR_CRYPEN)] + [(10 + i, "w", Y.DIN, i) for i in range(12)] + \
           [(40 + i, "r", Y.DOUT, 0) for i in range(8)]
    rng = [(0, "w", 0x00, (1 << 2) | (1 << 3)), (200, "r", 0x08, 0), (400, "r", 0x08, 0), (401, "w", 0x00, 0)]
    return {"cc26x2-crypto": (lambda: C.Cc26x2Crypto(0x40024000, 23, _aes_ram()), aes),
            "cc26x2-pka": (lambda: P.Cc26x2Pka(0x40025000, 3), pka),
            "cc26x2-trng": (lambda: T.Cc26x2Trng(0x40028000, 33), trng),
            "stm32f4-hash": (lambda: H.Stm32Hash(0x50060400, 80), hsh),
            "stm32f4-cryp": (lambda: Y.Stm32Cryp(0x50060000, 79), cryp),
            "stm32f4-rng": (lambda: Stm32Rng(0x50060800, 80), rng)}


def _aes_ram():
    ram = Ram()
    ram.write(SRAM, bytes(range(16)))
    ram.write(SRAM + 0x1000, bytes(range(32)))
    return ram


@pytest.mark.parametrize("kind", sorted(_steps()))
@pytest.mark.parametrize("seed", [0, 1])
def test_the_contract_holds_after_every_access_of_a_driver_run_at_random_gaps(kind, seed):
    r = random.Random(seed)
    new, steps = _steps()[kind]
    extra, timed = 0, []
    for t, op, off, v in steps:                       # the driver's spacing, stretched at random
        extra += r.choice([0, 0, 1, 3, 17, 200])
        timed.append((t + extra, op, off, v))
    offsets = [o for o, reg in sorted(new().registers.by_offset.items()) if not reg.effect and reg.modelled]
    checked = 0
    for k in range(1, len(timed) + 1):
        now = timed[k - 1][0] + r.choice([0, 1, 2, 9, 50])

        def make(k=k, now=now):
            m = new()
            for t, op, off, v in timed[:k]:
                m.write(off, 4, v, t) if op == "w" else m.read(off, 4, t)
            return m, now
        for off in r.sample(offsets, min(4, len(offsets))):
            try:
                make()[0].read(off, 4, now)
            except PeripheralError:
                continue                                  # refused there (the PKA RAM while it runs)
            contract(make, off, changes=False)
            checked += 1
    assert checked >= len(timed)

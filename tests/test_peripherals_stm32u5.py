"""The STM32U5's AES and SAES models (sim/peripherals/stm32u5_aes.py): FIPS 197 and SP 800-38A
results through the registers, each engine's RM0456 block latency (51 and 528 cycles at AES-128),
the flags silicon raises for a misuse it reports (WRERR, RDERR, KEIF) and one line for what the
model refuses; the bus reaching a model at 0x420C0000 on a core without bit-banding; and (e2e)
both engines' cells on `--device stm32u585` passing their vectors beside Mbed TLS, with the
engine-against-engine line."""
import json

import pytest
from conftest import cli

from cryptobench.targets.mcu.sim.peripherals.base import PeripheralError
from cryptobench.targets.mcu.sim.peripherals.registry import PeripheralBus
from cryptobench.targets.mcu.sim.peripherals.stm32u5_aes import Stm32U5Aes, Stm32U5Saes

CR, SR, DINR, DOUTR, KEYR0, IVR0, KEYR4, IER, ISR, ICR = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x20, 0x30, 0x300, 0x304, 0x308
EN, CBC, KEYSIZE_256, BYTES = 1, 1 << 5, 1 << 18, 2 << 1
CCF, RDERR, WRERR, BUSY, KEYVALID = 1, 2, 4, 8, 0x80
RWEIF, KEIF = 2, 4

FIPS197_KEY128 = bytes(range(16))
FIPS197_KEY256 = bytes(range(32))
FIPS197_PT = bytes.fromhex("00112233445566778899aabbccddeeff")
FIPS197_CT128 = "69c4e0d86a7b0430d8cdb78070b4c55a"         # FIPS 197 C.1
FIPS197_CT256 = "8ea2b7ca516745bfeafc49904b496089"         # FIPS 197 C.3
SP800_38A_KEY = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
SP800_38A_IV = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
SP800_38A_PT = bytes.fromhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
SP800_38A_CBC = "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"   # F.2.1


def _load(m, key: bytes, iv: bytes | None = None, datatype: int = 0, t: int = 0) -> None:
    m.write(CR, 4, (KEYSIZE_256 if len(key) == 32 else 0) | (CBC if iv else 0) | datatype, t)
    for i in range(len(key) // 4):           # KEYR0 the least significant word
        word = int.from_bytes(key[len(key) - 4 * (i + 1):len(key) - 4 * i], "big")
        m.write(KEYR0 + 4 * i if i < 4 else KEYR4 + 4 * (i - 4), 4, word, t)
    for i in range(4 if iv else 0):          # IVR3 the first word
        m.write(IVR0 + 4 * i, 4, int.from_bytes(iv[12 - 4 * i:16 - 4 * i], "big"), t)
    m.write(CR, 4, m.read(CR, 4, t) | EN, t)


def _block(m, block: bytes, t: int) -> tuple[bytes, int]:
    """One block in at cycle t; (the block out, the cycle CCF was first seen set)."""
    for i in range(4):
        m.write(DINR, 4, int.from_bytes(block[4 * i:4 * i + 4], "big"), t)
    done = t
    while not m.read(SR, 4, done) & CCF:
        done += 1
    m.write(ICR, 4, CCF, done)
    return b"".join(m.read(DOUTR, 4, done).to_bytes(4, "big") for _ in range(4)), done


@pytest.mark.parametrize("cls, latency", [(Stm32U5Aes, 51), (Stm32U5Saes, 528)])
def test_fips197_at_both_key_sizes_and_the_rm0456_block_latency(cls, latency):
    for key, want in ((FIPS197_KEY128, FIPS197_CT128), (FIPS197_KEY256, FIPS197_CT256)):
        m = cls(0x420C0000, None)
        assert not m.read(SR, 4, 0) & KEYVALID
        _load(m, key, t=100)
        assert m.read(SR, 4, 100) & KEYVALID
        out, done = _block(m, FIPS197_PT, 100)
        assert out.hex() == want
        assert done - 100 == cls.latency[len(key) * 8]
    assert cls.latency[128] == latency              # RM0456 Table "AES/SAES features"


@pytest.mark.parametrize("cls", [Stm32U5Aes, Stm32U5Saes])
def test_cbc_chains_through_the_iv_registers_and_datatype_swaps_bytes(cls):
    m = cls(0x420C0000, None)
    _load(m, SP800_38A_KEY, SP800_38A_IV)
    out0, t = _block(m, SP800_38A_PT[:16], 0)
    out1, _ = _block(m, SP800_38A_PT[16:], t + 1)
    assert (out0 + out1).hex() == SP800_38A_CBC
    assert b"".join(m.read(IVR0 + 4 * i, 4, t + 600).to_bytes(4, "big") for i in reversed(range(4))) == out1
    m = cls(0x420C0000, None)                        # DATATYPE = bytes: words as little-endian memory holds them
    _load(m, SP800_38A_KEY, SP800_38A_IV, datatype=BYTES)
    for i in range(4):
        m.write(DINR, 4, int.from_bytes(SP800_38A_PT[4 * i:4 * i + 4], "little"), 0)
    words = [m.read(DOUTR, 4, 600) for _ in range(4)]
    assert b"".join(w.to_bytes(4, "little") for w in words).hex() == SP800_38A_CBC[:32]


def test_busy_ccf_and_the_flags_of_a_misuse_silicon_reports():
    m = Stm32U5Aes(0x420C0000, None)
    m.write(CR, 4, EN, 0)                            # no key: KEIF, EN stays clear
    assert m.read(ISR, 4, 0) & KEIF and not m.read(CR, 4, 0) & EN
    m.write(ICR, 4, KEIF, 0)
    assert not m.read(ISR, 4, 0) & KEIF
    _load(m, FIPS197_KEY128)
    for i in range(4):
        m.write(DINR, 4, i, 10)
    assert m.read(SR, 4, 10) & BUSY and not m.read(SR, 4, 60) & CCF and m.read(SR, 4, 61) & CCF
    assert m.read(DOUTR, 4, 20) == 0 and m.read(SR, 4, 20) & RDERR   # read before the result: RDERR
    m.write(DINR, 4, 5, 30)                          # a write during the computation: WRERR, ignored
    assert m.read(SR, 4, 30) & WRERR and m.read(ISR, 4, 30) & RWEIF
    m.write(ICR, 4, RWEIF, 30)
    assert not m.read(SR, 4, 30) & (WRERR | RDERR)
    m.write(ICR, 4, CCF, 70)                         # CCF cleared before DOUTR is read, as ST's HAL does
    assert not m.read(SR, 4, 70) & CCF
    assert [m.read(DOUTR, 4, 70) for _ in range(4)] and not m.read(SR, 4, 70) & RDERR
    m.write(IER, 4, CCF, 80)                         # the line: CCFIE with CCF
    for i in range(4):
        m.write(DINR, 4, i, 80)
    assert m.next_event(80) == 131 and m.irq_since(130) is None and m.irq_since(131) == 131


@pytest.mark.parametrize("cls, cr, want", [
    (Stm32U5Aes, EN | (2 << 3), "MODE = 10"),
    (Stm32U5Aes, EN | (2 << 5), "CTR is not modelled"),
    (Stm32U5Saes, EN | (2 << 5), "SAES chains ECB and CBC only"),
    (Stm32U5Aes, EN | (1 << 11), "DMA requests"),
    (Stm32U5Aes, EN | (2 << 24), "KMOD = 10"),
    (Stm32U5Saes, EN | (1 << 28), "KEYSEL = 001"),
])
def test_what_the_model_refuses_is_one_line(cls, cr, want):
    m = cls(0x420C0000, None)
    with pytest.raises(PeripheralError) as exc:
        m.write(CR, 4, cr, 0)
    assert want in str(exc.value) and "\n" not in str(exc.value)
    m = cls(0x420C0000, None)
    _load(m, FIPS197_KEY128)
    with pytest.raises(PeripheralError, match="written at offset 0x10 with EN = 1"):
        m.write(KEYR0, 4, 0, 0)


@pytest.mark.parametrize("core, reached", [("cortex-m33", True), ("cortex-m4", False)])
def test_0x42000000_is_the_bit_band_alias_only_on_an_m3_or_m4(core, reached):
    spec = {"kind": "stm32u5-aes", "base": 0x420C0000, "irq": 93, "source": "test"}
    bus = PeripheralBus([spec], None, core=core)
    bus.access(0x420C0000 + KEYR0, 4, lambda: 0, 1)
    assert (bus.models[0].key_written == 1) is reached


def _run(tmp_path, name, *args):
    out = tmp_path / f"{name}.json"
    proc = cli("run", "--target", "sim:cortex-m33", "--device", "stm32u585", *args,
               "--db", str(tmp_path / f"{name}.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text()), proc.stdout


@pytest.mark.e2e
def test_both_engines_pass_their_vectors_beside_mbedtls_engine_against_engine(tmp_path):
    doc, text = _run(tmp_path, "u5", "--engine", "stm32u5-aes", "--engine", "stm32u5-saes", "--engine", "mbedtls",
                     "--baseline", "mbedtls", "--op", "aes-ecb-encrypt", "--op", "aes-cbc-encrypt",
                     "--param", "bytes=16,256", "--param", "key_bits=128,256")
    cells = {(r["engine"], r["op"], r["params"]["bytes"], r["params"]["key_bits"]): r for r in doc["results"]}
    assert len(cells) == 24
    for (engine, op, n, bits), r in cells.items():
        assert r["status"] == "ok" and r["kat"] == "pass", (engine, op, n, bits, r["detail"])
        if engine != "mbedtls":
            title = "SAES" if engine == "stm32u5-saes" else "AES"
            assert r["served_by"].startswith(f"peripheral: STM32U5 {title} (model of ST RM0456")
    aes, saes = (cells[(e, "aes-ecb-encrypt", 256, 128)]["cycles"]["per_op_median"] for e in ("stm32u5-aes", "stm32u5-saes"))
    # the same driver: the engines' latencies apart, block by block, to within the CCF poll loop's few
    # cycles a block (the core notices CCF at its next read)
    assert abs(saes - aes - 16 * (528 - 51)) <= 16 * 4
    assert "engine against engine, " in text and "stm32u5-saes ran" in text and "slower than stm32u5-aes" in text

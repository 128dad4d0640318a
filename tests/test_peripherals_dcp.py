"""The i.MX RT1060 DCP model (sim/peripherals/imxrt_dcp.py) and sha_core.py: work packets read from
memory giving FIPS 197, SP 800-38A and hashlib's answers (a key slot or the payload key, the CBC IV
in the payload, a hash over two packets through the context buffer at the words fsl_dcp.c reads,
the digest reversed), READY_CHANNELS and the semaphore until each packet's modeled end, chaining,
the errors CHnSTAT reports and one line for what the model refuses; the example recipe loading
without NXP's SDK; and with the SDK ($CRYPTOBENCH_NXP_SDK: an MCUXpresso SDK tree with CMSIS's core
headers), NXP's fsl_dcp.c, and Mbed TLS through NXP's DCP port (the SDK's middleware/mbedtls), passing the
catalog's vectors on the model."""
import hashlib
import json
import os
import struct
from pathlib import Path

import pytest
from Crypto.Cipher import AES
from conftest import cli

from cryptobench.targets.mcu.firmware.recipes import load_recipe
from cryptobench.targets.mcu.sim.peripherals import sha_core
from cryptobench.targets.mcu.sim.peripherals.base import PeripheralError
from cryptobench.targets.mcu.sim.peripherals.imxrt_dcp import ImxrtDcp

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "nxp-dcp"
PORT_EXAMPLE = EXAMPLE.parent / "nxp-mbedtls-dcp"
SDK = os.environ.get("CRYPTOBENCH_NXP_SDK")
CTRL, STAT, CHANNELCTRL, CONTEXT, KEY, KEYDATA = 0x00, 0x10, 0x20, 0x50, 0x60, 0x70
CH0CMDPTR, CH0SEMA, CH0STAT, CH1CMDPTR, CH1SEMA = 0x100, 0x110, 0x120, 0x140, 0x150
INTERRUPT, DECR, CHAIN, CIPHER, HASH, ENCRYPT, INIT, PAYLOAD_KEY = 1, 2, 4, 1 << 5, 1 << 6, 1 << 8, 1 << 9, 1 << 11
HASH_INIT, HASH_TERM = 1 << 12, 1 << 13
SHA1, SHA256 = 0 << 16, 2 << 16
PKT, PKT2, SRC, DST, PAYLOAD, CTX = 0x1000, 0x1020, 0x2000, 0x3000, 0x4000, 0x5000
KEY128 = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
IV = bytes(range(16))


class Ram:
    def __init__(self):
        self.mem = bytearray(0x8000)

    def read(self, addr, n):
        if addr + n > len(self.mem):
            raise ValueError("outside")
        return bytes(self.mem[addr:addr + n])

    def write(self, addr, data):
        if addr + len(data) > len(self.mem):
            raise ValueError("outside")
        self.mem[addr:addr + len(data)] = data


def _dcp():
    ram = Ram()
    m = ImxrtDcp(0x402FC000, 50, ram)
    m.write(CTRL, 4, 0x00A00000, 0)                  # fsl_dcp.c's DCP_Init: gather writes, context switching
    m.write(CHANNELCTRL, 4, 0xFF, 0)
    m.write(CONTEXT, 4, CTX, 0)
    return m, ram


def _packet(ram, at, c0, c1, src, dst, size, payload, nxt=0):
    ram.write(at, struct.pack("<8I", nxt, c0, c1, src, dst, size, payload, 0))


def _start(m, addr, count=1, t=0, ch=0):
    m.write(CH0CMDPTR + 0x40 * ch, 4, addr, t)
    m.write(CH0SEMA + 0x40 * ch, 4, count, t)


def test_aes_ecb_from_a_key_slot_and_cbc_with_the_payload_key_and_iv():
    m, ram = _dcp()
    msg = bytes(range(64))
    m.write(KEY, 4, 0 << 4, 0)                       # slot 0, subword 0; KEYDATA advances the subword
    for w in struct.unpack("<4I", KEY128):
        m.write(KEYDATA, 4, w, 0)
    ram.write(SRC, msg)
    _packet(ram, PKT, CIPHER | ENCRYPT | DECR, 0x00 | (0 << 8), SRC, DST, 64, 0)
    _start(m, PKT)
    assert ram.read(DST, 64) == AES.new(KEY128, AES.MODE_ECB).encrypt(msg)
    ram.write(PAYLOAD, KEY128 + IV)
    _packet(ram, PKT, CIPHER | ENCRYPT | INIT | PAYLOAD_KEY | DECR, 0x10, SRC, DST, 64, PAYLOAD)
    _start(m, PKT, t=10_000)
    assert ram.read(DST, 64) == AES.new(KEY128, AES.MODE_CBC, IV).encrypt(msg)


@pytest.mark.parametrize("select, algo, words", [(SHA1, "sha1", 5), (SHA256, "sha256", 8)])
def test_a_hash_over_two_packets_goes_through_the_context_fsl_dcp_reads(select, algo, words):
    m, ram = _dcp()
    msg = bytes(range(256)) * 2 + b"tail"                  # 512 bytes in whole blocks, then 4
    ram.write(SRC, msg)
    _packet(ram, PKT, HASH | HASH_INIT | DECR, select, SRC, 0, 512, PAYLOAD)
    _start(m, PKT)
    # channel 0's running hash: the context buffer's word 43 (fsl_dcp.c dcp_hash_save_running_hash)
    saved = struct.unpack(f"<{words + 1}I", ram.read(CTX + 4 * 43, 4 * (words + 1)))
    state = sha_core.SHA1_IV if algo == "sha1" else sha_core.SHA256_IV
    block = sha_core.sha1_block if algo == "sha1" else sha_core.sha256_block
    for i in range(0, 512, 64):
        state = block(state, msg[i:i + 64])
    assert saved == (*state, 512)
    _packet(ram, PKT, HASH | HASH_TERM | DECR, select, SRC + 512, 0, 4, PAYLOAD)
    _start(m, PKT, t=100_000)
    digest = hashlib.new(algo, msg).digest()
    assert ram.read(PAYLOAD, len(digest)) == digest[::-1]      # reversed: fsl_dcp.c reverses it back


def test_ready_channels_and_the_semaphore_last_until_the_packets_modeled_end():
    m, ram = _dcp()
    ram.write(PAYLOAD, KEY128)
    _packet(ram, PKT, CIPHER | ENCRYPT | PAYLOAD_KEY | DECR | CHAIN, 0, SRC, DST, 64, PAYLOAD, nxt=PKT2)
    _packet(ram, PKT2, CIPHER | ENCRYPT | PAYLOAD_KEY | DECR | INTERRUPT, 0, SRC, DST, 16, PAYLOAD)
    _start(m, PKT, count=2, t=100)
    first = 100 + (8 + 4 * 18) * 4                  # a packet fetch and 4 blocks at IPG = AHB / 4
    end = first + (8 + 18) * 4
    assert m.read(STAT, 4, 100) & (1 << 16) and (m.read(STAT, 4, 100) >> 24) & 0xF == 1
    assert m.read(CH0SEMA, 4, first - 1) >> 16 == 2 and m.read(CH0SEMA, 4, first) >> 16 == 1
    assert m.read(STAT, 4, end - 1) & (1 << 16) and not m.read(STAT, 4, end) & (1 << 16)
    assert not m.read(STAT, 4, end - 1) & 1 and m.read(STAT, 4, end) & 1      # the last packet's INTERRUPT
    assert m.irq_since(end) is None                 # CTRL.CHANNEL_INTERRUPT_ENABLE is clear
    m.write(STAT + 8, 4, 1, end)                    # STAT_CLR
    assert not m.read(STAT, 4, end) & 1


def test_what_chstat_reports():
    m, ram = _dcp()
    ram.write(PAYLOAD, KEY128)
    _packet(ram, PKT, CIPHER | ENCRYPT | PAYLOAD_KEY | DECR, 0, SRC, DST, 20, PAYLOAD)    # not whole blocks
    _start(m, PKT)
    assert m.read(CH0STAT, 4, 1000) & (1 << 2) and (m.read(CH0STAT, 4, 1000) >> 16) & 0xFF == 5
    m.write(CH0STAT + 8, 4, 0xFF, 1000)
    m.write(CH0STAT + 8, 4, 0xFF0000, 1000)
    _packet(ram, PKT, CIPHER | ENCRYPT | PAYLOAD_KEY | DECR, 0, SRC, DST, 16, PAYLOAD)    # 2 counted, no chain
    _start(m, PKT, count=2, t=2000)
    assert (m.read(CH0STAT, 4, 9000) >> 16) & 0xFF == 2


@pytest.mark.parametrize("c0, c1, want", [
    (CIPHER | DECR, 0, "decryption"),
    (CIPHER | ENCRYPT | (1 << 10) | DECR, 0, "OTP"),
    (CIPHER | ENCRYPT | (1 << 20) | DECR, 0, "swap options"),
    (HASH | HASH_INIT | HASH_TERM | DECR, 1 << 16, "CRC-32"),
    (CIPHER | HASH | ENCRYPT | DECR, 0, "cipher and hash together"),
])
def test_what_the_model_refuses_is_one_line(c0, c1, want):
    m, ram = _dcp()
    _packet(ram, PKT, c0, c1, SRC, DST, 16, PAYLOAD)
    with pytest.raises(PeripheralError) as exc:
        _start(m, PKT)
    assert want in str(exc.value) and "\n" not in str(exc.value)


def test_a_gated_or_disabled_channel_is_refused():
    m = ImxrtDcp(0x402FC000, 50, Ram())
    with pytest.raises(PeripheralError, match="SFTRST or CLKGATE"):
        _start(m, PKT)
    m.write(CTRL, 4, 0, 0)
    with pytest.raises(PeripheralError, match="channel disabled"):
        _start(m, PKT)


def test_the_example_recipe_loads_without_the_sdk_and_holds_only_cryptobench_files():
    recipe = load_recipe(str(EXAMPLE / "nxp-dcp.toml"))
    assert recipe.name == "nxp-dcp" and recipe.requires == ["imxrt-dcp"]
    assert set(recipe.ops) == {"aes-ecb-encrypt", "aes-cbc-encrypt", "sha1", "sha256"}
    assert "drivers/dcp/fsl_dcp.c" in recipe.sources and "DCP_USE_DCACHE=0" in recipe.defines
    files = sorted(p.name for p in EXAMPLE.iterdir())
    assert files == ["glue.c", "nxp-dcp.toml"]
    for name in files:
        assert "NXP B.V." not in (EXAMPLE / name).read_text()


def test_the_mbedtls_port_recipe_loads_without_the_sdk_and_holds_only_cryptobench_files():
    recipe = load_recipe(str(PORT_EXAMPLE / "nxp-mbedtls-dcp.toml"))
    assert recipe.name == "nxp-mbedtls-dcp" and recipe.requires == ["imxrt-dcp"]
    assert set(recipe.ops) == {"aes-ecb-encrypt", "aes-cbc-encrypt", "sha1", "sha256", "sha512"}
    assert "middleware/mbedtls/port/ksdk/ksdk_mbedtls.c" in recipe.sources
    assert 'MBEDTLS_CONFIG_FILE="ksdk_mbedtls_config.h"' in recipe.defines      # the SDK's own configuration
    files = sorted(p.name for p in PORT_EXAMPLE.iterdir())
    assert files == ["fsl_debug_console.h", "glue.c", "nxp-mbedtls-dcp.toml"]
    for name in files:
        text = (PORT_EXAMPLE / name).read_text()
        assert "NXP B.V." not in text and "Copyright The Mbed TLS Contributors" not in text


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not SDK, reason="NXP's SDK is not in this repository: set CRYPTOBENCH_NXP_SDK to an MCUXpresso "
                                    "SDK tree (drivers/dcp, devices/MIMXRT1062, CMSIS/Core/Include) to run fsl_dcp.c")
def test_nxps_fsl_dcp_passes_the_catalogs_vectors_on_the_model(tmp_path):
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "sim:cortex-m7", "--device", "imxrt1060", "--recipe", str(EXAMPLE / "nxp-dcp.toml"),
               "--library-source", SDK, "--op", "aes-ecb-encrypt", "--op", "aes-cbc-encrypt", "--op", "sha1",
               "--op", "sha256", "--param", "bytes=16,64,1024", "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())["results"]
    assert len(results) == 12
    for r in results:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        assert r["served_by"].startswith("peripheral: i.MX RT1060 DCP")
        assert r["engine_band"]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not SDK, reason="NXP's SDK is not in this repository: set CRYPTOBENCH_NXP_SDK to an MCUXpresso "
                                    "SDK tree with middleware/mbedtls (NXP's Mbed TLS) to run its DCP port")
def test_mbedtls_through_nxps_dcp_port_passes_the_vectors_and_keeps_its_key_in_the_slot(tmp_path):
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "sim:cortex-m7", "--device", "imxrt1060", "--recipe",
               str(PORT_EXAMPLE / "nxp-mbedtls-dcp.toml"), "--library-source", SDK, "--op", "aes-ecb-encrypt",
               "--op", "aes-cbc-encrypt", "--op", "sha1", "--op", "sha256", "--op", "sha512",
               "--param", "bytes=64,1024", "--param", "rekey=0,1", "--db", str(tmp_path / "db.sqlite"),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())["results"]
    assert len(results) == 4 * 2 + 3 * 2                 # AES: bytes x rekey; SHA: bytes
    cycles = {}
    for r in results:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        if r["op"] == "sha512":                            # the DCP has no SHA-512: the port keeps it in software
            assert "peripheral" not in (r.get("served_by") or "")
        else:
            assert r["served_by"].startswith("peripheral: i.MX RT1060 DCP") and r["engine_band"]
        cycles[(r["op"], r["params"]["bytes"], r["params"].get("rekey"))] = r["cycles"]["per_op_median"]
    # the port loads a kept context's key into the DCP's key slot once: the keyed-once cell is cheaper
    assert cycles[("aes-cbc-encrypt", 64, 0)] < cycles[("aes-cbc-encrypt", 64, 1)]
    # mbedtls_aes_crypt_ecb takes one block a call: one work packet per block, dearer than CBC's one packet
    assert cycles[("aes-ecb-encrypt", 1024, 0)] > 2 * cycles[("aes-cbc-encrypt", 1024, 0)]

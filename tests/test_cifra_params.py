"""The Cifra study's parameters (its test code: CCM nonce 11 B with L = 4 and a 16-byte tag, EAX
nonce 12 B, NORX v1.0 of 2015) in the catalog, the cifra-aead suite, the reference rows and the
vectors; the vectors checked against the real OpenSSL (host harness) here, and the CCM nonce
length run on the host engines and on the firmware (real QEMU)."""
import json

import pytest

from conftest import cli

from cryptobench.catalog.ops import OPS, resolve_params
from cryptobench.core.errors import UsageError
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.references import load_reference
from cryptobench.runner.suites import load_suite
from cryptobench.targets.verify import load_vectors

def test_the_catalog_says_what_the_study_measured():
    ccm, eax = OPS["aes-ccm-encrypt"], OPS["aes-eax-encrypt"]
    p = resolve_params(ccm, {"nonce_bytes": 11}, "t")
    assert ccm.iv_len(p) == 11 and p["tag_bytes"] == 16
    assert resolve_params(eax, {}, "t")["nonce_bytes"] == 16            # the EAX paper's length, as before
    assert eax.iv == "nonce" and eax.iv_len(resolve_params(eax, {"nonce_bytes": 12}, "t")) == 12
    with pytest.raises(UsageError):
        resolve_params(eax, {"nonce_bytes": 0}, "t")
    v3, v1 = OPS["norx32-4-1-encrypt"], OPS["norx32-4-1-v1-encrypt"]
    assert "v3.0" in v3.title and "v3.0" in v3.reference and v3.iv_bytes == 16
    assert "v1.0" in v1.title and "Cifra" in v1.title and "Cifra" in v1.reference
    assert v1.iv_bytes == 8 and v1.key_bytes == 16


def test_the_cifra_suite_and_reference_rows_use_the_studys_parameters():
    suite = load_suite("cifra-aead")          # every parameter is checked against the catalog
    ops = {b.op for b in suite.benches}
    assert "norx32-4-1-v1-encrypt" in ops and "norx32-4-1-encrypt" not in ops
    for b in suite.benches:
        if b.op == "aes-ccm-encrypt":
            assert b.params["nonce_bytes"] == 11 and b.params["tag_bytes"] == 16
        if b.op == "aes-eax-encrypt":
            assert b.params["nonce_bytes"] == 12
    rows = load_reference("cifra-aead").rows
    for r in rows:
        if r.op == "aes-ccm-encrypt":
            assert r.given["nonce_bytes"] == 11 and r.given["tag_bytes"] == 16
        if r.op == "aes-eax-encrypt":
            assert r.given["nonce_bytes"] == 12
    assert {r.op for r in rows if "norx" in r.op} == {"norx32-4-1-v1-encrypt"}


def test_the_vectors_for_the_studys_parameters_name_their_provenance():
    vecs = [v for v in load_vectors() if v["op"] in ("aes-ccm-encrypt", "aes-eax-encrypt")]
    ccm11 = [v for v in vecs if v["op"] == "aes-ccm-encrypt" and v["params"]["nonce_bytes"] == 11]
    eax12 = [v for v in vecs if v["op"] == "aes-eax-encrypt" and v["params"]["nonce_bytes"] == 12]
    paper = [v for v in vecs if v["op"] == "aes-eax-encrypt" and v["params"]["nonce_bytes"] == 16]
    assert {v["params"]["key_bits"] for v in ccm11} == {128, 256} == {v["params"]["key_bits"] for v in eax12}
    assert len(ccm11) == len(eax12) == 8 and len(paper) == 10
    for v in ccm11 + eax12 + paper:
        assert len(v["in"]["nonce"]) // 2 == v["params"]["nonce_bytes"]
        assert len(v["in"]["msg"]) // 2 == v["params"]["bytes"] and len(v["in"]["aad"]) // 2 == v["params"]["aad_bytes"]
        assert len(v["out"]["ct"]) // 2 == v["params"]["bytes"] + 16
    assert all("pyca/cryptography" in v["source"] and "pycryptodome" in v["source"] for v in ccm11 + eax12)
    assert all("The EAX Mode of Operation" in v["source"] for v in paper)


def _eax_from_ecb(h, key: bytes, nonce: bytes, aad: bytes, msg: bytes) -> bytes:
    """EAX after the paper, on the host harness's AES-ECB (OpenSSL): an independent check of the
    EAX vectors with no Python crypto package."""
    ecb = lambda block: bytes.fromhex(h.compute("openssl", "aes-ecb-encrypt", {"key_bits": len(key) * 8,
                                                "bytes": len(block)}, {"key": key.hex(), "msg": block.hex()})["ct"])
    dbl = lambda b: (int.from_bytes(b, "big") << 1 ^ (0x87 if b[0] & 0x80 else 0)).to_bytes(17, "big")[1:]
    k1 = dbl(ecb(bytes(16)))
    k2 = dbl(k1)

    def cmac(data: bytes) -> bytes:
        if data and len(data) % 16 == 0:
            last = bytes(a ^ b for a, b in zip(data[-16:], k1))
        else:
            tail = data[len(data) - len(data) % 16:] + b"\x80"
            last = bytes(a ^ b for a, b in zip(tail.ljust(16, b"\0"), k2))
        blocks = [data[i:i + 16] for i in range(0, len(data) - len(data) % 16 - (16 if data and len(data) % 16 == 0 else 0), 16)]
        x = bytes(16)
        for blk in blocks + [last]:
            x = ecb(bytes(a ^ b for a, b in zip(x, blk)))
        return x

    omac = lambda t, data: cmac(bytes(15) + bytes([t]) + data)
    n, hh = omac(0, nonce), omac(1, aad)
    ctr, stream = int.from_bytes(n, "big"), b""
    while len(stream) < len(msg):
        stream += ecb(ctr.to_bytes(16, "big"))
        ctr = (ctr + 1) % (1 << 128)
    ct = bytes(a ^ b for a, b in zip(msg, stream))
    tag = bytes(a ^ b ^ c for a, b, c in zip(n, hh, omac(2, ct)))
    return ct + tag


def test_eax_vectors_agree_with_eax_on_openssls_aes(harness):
    vecs = [v for v in load_vectors() if v["op"] == "aes-eax-encrypt"]
    assert vecs
    with HarnessProcess() as h:
        for v in vecs:
            args = [bytes.fromhex(v["in"][k]) for k in ("key", "nonce", "aad", "msg")]
            assert _eax_from_ecb(h, *args).hex() == v["out"]["ct"], v["id"]


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.mark.e2e
def test_ccm_with_the_studys_11_byte_nonce_on_the_host_engines(tmp_path, harness):
    doc = _run(tmp_path, "--op", "aes-ccm-encrypt", "--param", "nonce_bytes=11", "--param", "aad_bytes=16",
               "--param", "bytes=0,256", "--param", "key_bits=128,256", "--engine", "openssl-sw",
               "--engine", "mbedtls", "--repeat", "2", "--min-time", "0.001")
    assert len(doc["results"]) == 8
    for r in doc["results"]:
        assert r["params"]["nonce_bytes"] == 11
        assert r["status"] == "ok" and r["kat"] == "pass", (r["engine"], r["detail"])
        assert r["detail"] == "4 known-answer vectors"          # the 11-byte-nonce vectors of its key size


@pytest.mark.qemu
def test_ccm_with_the_studys_11_byte_nonce_on_the_firmware(tmp_path):
    doc = _run(tmp_path, "--target", "qemu:mps2-an385", "--op", "aes-ccm-encrypt", "--param", "nonce_bytes=11",
               "--param", "aad_bytes=16", "--param", "bytes=0,256", "--param", "key_bits=128,256",
               "--engine", "mbedtls")
    assert len(doc["results"]) == 4
    for r in doc["results"]:
        assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
        assert "known-answer vectors on the target" in r["detail"] and "matches the host" in r["detail"]

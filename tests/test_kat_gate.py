"""Verify before timing: the real engines pass the vectors, and a corrupted vector blocks timing."""
import json
import shutil

import pytest

from conftest import cli
from cryptobench.catalog.ops import OPS
from cryptobench.targets.host.engines import ENGINES
from cryptobench.targets.host.verifier import Verifier
from cryptobench.targets.verify import VECTORS_DIR, load_vectors

ENGINE_OPS = [
    ("openssl-hw", "sha256", {"bytes": 64}),
    ("openssl-hw", "aes-cbc-encrypt", {"key_bits": 256, "bytes": 64}),
    ("openssl-hw", "aes-ccm-encrypt", {"key_bits": 128, "bytes": 64, "aad_bytes": 32, "tag_bytes": 16, "nonce_bytes": 13}),
    ("openssl-hw", "aes-gcm-encrypt", {"key_bits": 128, "bytes": 64, "aad_bytes": 32}),
    ("openssl-sw", "aes-gcm-encrypt", {"key_bits": 256, "bytes": 64, "aad_bytes": 32}),
    ("mbedtls", "aes-ccm-encrypt", {"key_bits": 128, "bytes": 64, "aad_bytes": 32, "tag_bytes": 16, "nonce_bytes": 13}),
    ("mbedtls", "ctr-drbg-generate", {"bytes": 32}),
    ("mbedtls-portable", "aes-gcm-encrypt", {"key_bits": 128, "bytes": 64, "aad_bytes": 32}),
    ("mbedtls-portable", "ecdsa-sign", {"curve": "p256"}),
    ("mbedtls-portable", "rsa-sign", {"rsa_bits": 1024}),
    ("mbedtls-portable", "ecjpake-exchange", {"curve": "p256"}),
    ("openssl-hw", "ctr-drbg-instantiate", {}),
    ("libsodium", "chacha20-poly1305-encrypt", {"bytes": 64, "aad_bytes": 16}),
    ("openssl-hw", "ecdh-shared-secret", {"curve": "x25519"}),
    ("mbedtls", "ecdh-keygen", {"curve": "p256"}),
    ("mbedtls", "ecdsa-sign", {"curve": "p256"}),
    ("openssl-hw", "ecdsa-verify", {"curve": "p521"}),
    ("mbedtls", "ecjpake-exchange", {"curve": "p256"}),
    ("openssl-hw", "rsa-sign", {"rsa_bits": 1024}),
    ("mbedtls", "rsa-verify", {"rsa_bits": 1024}),
    ("openssl-hw", "rsa-keygen", {"rsa_bits": 1024}),
    ("system", "random", {"bytes": 32, "source": "getrandom"}),
    ("system", "reference-loop", {}),
]


@pytest.fixture(scope="module")
def verifier(harness):
    v = Verifier({})
    yield v
    v.close()


@pytest.mark.parametrize("engine, op, params", ENGINE_OPS, ids=[f"{e}:{o}" for e, o, _ in ENGINE_OPS])
def test_real_engines_pass_the_gate(verifier, engine, op, params):
    full = {**OPS[op].defaults(), **params}
    proc = verifier.proc(engine)
    ok, why = proc.supports(ENGINES[engine].harness_engine, op, full)
    if not ok:
        pytest.skip(f"{engine} does not support {op} here: {why}")
    verdict = verifier.verify(engine, op, full)
    assert verdict.kat == "pass", verdict.detail


def test_vectors_are_well_formed_and_name_their_source():
    vectors = load_vectors()
    assert len(vectors) >= 50
    for v in vectors:
        assert v["op"] in OPS, v["id"]
        assert v.get("source"), f"{v['id']} names no source"
        for value in list(v["in"].values()) + list(v["out"].values()):
            bytes.fromhex(value)
    covered = {v["op"] for v in vectors}
    for op in ("sha1", "sha224", "sha256", "sha384", "sha512", "aes-ecb-encrypt", "aes-cbc-encrypt",
               "aes-ctr-encrypt", "aes-ccm-encrypt", "aes-gcm-encrypt", "chacha20-poly1305-encrypt",
               "ecdh-keygen", "ecdh-shared-secret", "ecdsa-verify", "rsa-sign", "rsa-verify"):
        assert op in covered, f"no known-answer vector for {op}"
    assert covered & {"ctr-drbg-instantiate", "ctr-drbg-reseed", "ctr-drbg-generate"}


@pytest.mark.e2e
def test_corrupted_vector_blocks_timing(tmp_path, db, harness):
    corrupt = tmp_path / "vectors"
    shutil.copytree(VECTORS_DIR, corrupt)
    path = corrupt / "sha.json"
    doc = json.loads(path.read_text())
    victim = next(v for v in doc["vectors"] if v["op"] == "sha256")
    digest = victim["out"]["digest"]
    victim["out"]["digest"] = ("0" if digest[0] != "0" else "1") + digest[1:]
    path.write_text(json.dumps(doc))
    out = tmp_path / "run.json"
    args = ["run", "--op", "sha256", "--op", "sha512", "--engine", "openssl-hw", "--param", "bytes=64",
            "--repeat", "3", "--min-time", "0.001", "--db", str(db), "--json", str(out)]
    proc = cli(*args, env={"CRYPTOBENCH_VECTORS": str(corrupt)})
    assert proc.returncode == 1, proc.stderr            # the corrupted cell failed, the others were measured
    doc = json.loads(out.read_text())
    sha256 = next(r for r in doc["results"] if r["op"] == "sha256")
    assert sha256["kat"] == "fail" and sha256["status"] == "failed"
    assert victim["id"] in sha256["detail"]
    assert "time_s" not in sha256 and not sha256["samples"]
    assert "KAT FAIL" in proc.stdout
    sha512 = next(r for r in doc["results"] if r["op"] == "sha512")   # an honest op is still timed
    assert sha512["kat"] == "pass" and sha512["status"] == "ok" and sha512["n"] == 3

    proc = cli(*args, "--force")                     # the shipped vectors: timed (over the first run's JSON)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    sha256 = next(r for r in doc["results"] if r["op"] == "sha256")
    assert sha256["kat"] == "pass" and sha256["time_s"]["median"] > 0


@pytest.mark.parametrize("engine", ["mbedtls", "openssl-sw"])
def test_params_without_a_vector_are_cross_checked(verifier, engine):
    params = {"key_bits": 192, "bytes": 100, "aad_bytes": 7, "tag_bytes": 12, "nonce_bytes": 11}
    verdict = verifier.verify(engine, "aes-ccm-encrypt", params)
    assert verdict.kat == "pass", verdict.detail
    assert "same output as" in verdict.detail


def _fake_generator(verifier, monkeypatch, draws):
    """Make the random operation return the given draws, one per request."""
    left = list(draws)
    monkeypatch.setattr(verifier, "_compute", lambda engine, op, params, inputs: {"bits": left.pop(0).hex()})


def test_one_unlucky_random_draw_is_not_a_failure_but_two_are(monkeypatch):
    import random
    # fixed draws, not os.urandom: 420 extra ones on top of random bytes sit only about 2 standard
    # deviations past the monobit bound, so a fresh draw fell back inside it about once in 50 runs
    rng = random.Random(2026)
    verifier = Verifier({})
    good = rng.randbytes(2500)
    lopsided = bytes([0xFF, 0xFE] * 60) + rng.randbytes(2380)     # about 420 extra ones: past the monobit bounds
    _fake_generator(verifier, monkeypatch, [lopsided, good])
    assert verifier._cross_random("system", "random", {"source": "getrandom"}).kat == "pass"
    _fake_generator(verifier, monkeypatch, [lopsided, bytes([0xFE, 0xFF] * 60) + rng.randbytes(2380)])
    verdict = verifier._cross_random("system", "random", {"source": "getrandom"})
    assert verdict.kat == "fail" and "monobit" in verdict.detail and "second draw" in verdict.detail
    _fake_generator(verifier, monkeypatch, [good, good])
    assert "same bytes" in verifier._cross_random("system", "random", {"source": "getrandom"}).detail
    _fake_generator(verifier, monkeypatch, [good, good[:100]])
    assert "got 100" in verifier._cross_random("system", "random", {"source": "getrandom"}).detail

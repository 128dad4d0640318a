"""Raw ChaCha20 (chacha20-encrypt, RFC 8439 §2.4): every host engine that has it passes the RFC's
known answers before timing and times both rekey settings, the engines agree with each other and
with pycryptodome on random inputs, a counter that would wrap is refused alike everywhere, and a
wrong vector is refused by the loader or fails the gate."""
import json
import shutil

import pytest

from conftest import cli
from cryptobench.catalog.ops import OPS
from cryptobench.core.errors import UsageError
from cryptobench.targets.host.engines import ENGINES
from cryptobench.targets.host.verifier import Verifier
from cryptobench.targets.verify import load_vectors, python_reference

OP = "chacha20-encrypt"
HOST_ENGINES = ["openssl-hw", "openssl-sw", "openssl-portable", "mbedtls", "mbedtls-portable", "libsodium"]


@pytest.fixture(scope="module")
def verifier(harness):
    v = Verifier({})
    yield v
    v.close()


def _supported(verifier, engine, params):
    ok, why = verifier.proc(engine).supports(ENGINES[engine].harness_engine, OP, params)
    if not ok:
        pytest.skip(f"{engine} has no {OP} here: {why}")


def test_catalog_op_and_its_vectors():
    op = OPS[OP]
    assert op.family == "stream" and op.key_len({}) == 32 and op.iv == "iv" and op.iv_len({}) == 16
    assert {"bytes", "rekey"} <= set(op.param_names) and op.payload
    ids = {v["id"] for v in load_vectors() if v["op"] == OP}
    assert ids == {"chacha20-rfc8439-2.4.2", "chacha20-rfc8439-a2-tv1", "chacha20-rfc8439-a2-tv2",
                   "chacha20-rfc8439-a2-tv3"}


def test_python_reference_gives_the_rfc_answers():
    pytest.importorskip("Crypto")
    for v in (v for v in load_vectors() if v["op"] == OP):
        values = {k: bytes.fromhex(x) for k, x in v["in"].items()}
        ct, by = python_reference(OP, v["params"], values)
        assert ct.hex() == v["out"]["ct"] and "pycryptodome" in by


@pytest.mark.parametrize("engine", HOST_ENGINES)
def test_host_engines_pass_the_rfc_8439_vectors(verifier, engine):
    params = {**OPS[OP].defaults(), "bytes": 64}
    _supported(verifier, engine, params)
    verdict = verifier.verify(engine, OP, params)
    assert verdict.kat == "pass" and verdict.detail == "4 known-answer vectors", verdict.detail


@pytest.mark.parametrize("engine", ["openssl-hw", "mbedtls", "libsodium"])
@pytest.mark.parametrize("rekey", [0, 1])
def test_host_engines_time_both_rekey_settings(verifier, engine, rekey):
    params = {**OPS[OP].defaults(), "bytes": 256, "rekey": rekey}
    _supported(verifier, engine, params)
    proc = verifier.proc(engine)
    proc.setup(0, ENGINES[engine].harness_engine, OP, params)
    try:
        samples = proc.sample(0, 4, 2)
        assert len(samples) == 2 and all(k == 4 and ns > 0 for k, ns, _ in samples)
    finally:
        proc.teardown(0)


def test_engines_agree_on_random_inputs_without_vectors(harness):
    v = Verifier({}, vectors=[])              # no known answer: the cross-check decides
    try:
        for engine in ("openssl-hw", "mbedtls", "libsodium"):
            verdict = v.verify(engine, OP, {"bytes": 1000, "rekey": 0})
            assert verdict.kat == "pass" and "same output as" in verdict.detail, (engine, verdict.detail)
    finally:
        v.close()


def test_a_counter_that_would_wrap_is_refused_by_every_engine(verifier):
    ins = {"key": "00" * 32, "iv": "ffffffff" + "00" * 12}
    last = verifier.proc("openssl-hw").compute("openssl", OP, {"bytes": 64}, {**ins, "msg": "00" * 64})["ct"]
    for engine in ("openssl-hw", "mbedtls", "libsodium"):
        proc, name = verifier.proc(engine), ENGINES[engine].harness_engine
        # block 2^32 - 1 alone is fine, and the same everywhere
        assert proc.compute(name, OP, {"bytes": 64}, {**ins, "msg": "00" * 64})["ct"] == last
        with pytest.raises(Exception, match="32-bit block counter would pass"):
            proc.compute(name, OP, {"bytes": 65}, {**ins, "msg": "00" * 65})


def _vector_file(tmp_path, change):
    v = dict(next(v for v in load_vectors() if v["id"] == "chacha20-rfc8439-2.4.2"))
    v = {k: v[k] for k in ("id", "op", "params", "in", "out", "source")}
    change(v)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"family": "stream", "vectors": [v]}, indent=1))
    return path


def test_a_vector_of_the_wrong_shape_is_refused_on_load(tmp_path):
    short_iv = _vector_file(tmp_path, lambda v: v["in"].update(iv=v["in"]["iv"][8:]))   # a bare 12-byte nonce
    with pytest.raises(UsageError, match=r"mine.json:\d+: vector 'chacha20-rfc8439-2.4.2': in.iv has 12 bytes, "
                                         r"expected 16"):
        load_vectors(extra=[short_iv])
    tagged = _vector_file(tmp_path, lambda v: v["out"].update(ct=v["out"]["ct"] + "00" * 16))   # no tag here
    with pytest.raises(UsageError, match="out.ct has 130 bytes, expected 114"):
        load_vectors(extra=[tagged])


def test_a_wrong_answer_fails_the_gate(verifier, tmp_path):
    def flip(v):
        ct = v["out"]["ct"]
        v["out"]["ct"] = ct[:-2] + ("00" if ct[-2:] != "00" else "01")
    wrong = load_vectors(extra=[_vector_file(tmp_path, flip)])[-1]      # a user's file comes last
    assert wrong["id"] == "chacha20-rfc8439-2.4.2"
    bad = Verifier({"openssl-hw": verifier.proc("openssl-hw")}, vectors=[wrong])
    verdict = bad.verify("openssl-hw", OP, {"bytes": 114, "rekey": 0})
    assert verdict.kat == "fail" and "chacha20-rfc8439-2.4.2" in verdict.detail


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
                    reason="gcc-arm-none-eabi and qemu-system-arm are installed by ./setup.sh")
def test_firmware_glues_pass_the_vectors_under_qemu(tmp_path):
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "qemu:mps2-an385", "--op", OP, "--param", "bytes=0,114", "--param", "rekey=0,1",
               "--engine", "mbedtls", "--engine", "bearssl", "--engine", "monocypher",
               "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    cells = {(r["engine"], r["params"]["bytes"], r["params"]["rekey"]): r for r in json.loads(out.read_text())["results"]}
    for engine in ("mbedtls", "bearssl", "monocypher"):
        for n in (0, 114):
            r = cells[(engine, n, 1)]
            assert r["status"] == "ok" and r["kat"] == "pass", (engine, n, r["detail"])
            assert "4 known-answer vectors on the target" in r["detail"] and "matches the host's OpenSSL" in r["detail"]
    for engine in ("mbedtls", "bearssl", "monocypher"):   # rekey=0 is honoured (fw_lib_keeps_key)
        assert cells[(engine, 114, 0)]["status"] == "ok" and cells[(engine, 114, 0)]["kat"] == "pass"

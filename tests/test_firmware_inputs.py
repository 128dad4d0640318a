"""Firmware measurement semantics: rekey=0 keeps one key schedule per cell, and a cell's inputs and
random stream come from the run's --seed (targets/mcu/firmware/seeded.py), so runs repeat."""
import json

import pytest

from conftest import cli
from cryptobench.targets.mcu.firmware.plan import Cell, Inputs, plan_c
from cryptobench.targets.mcu.firmware.seeded import ORDER, cell_seed, ecdsa_signature, scalar
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.targets.mcu.target import make_inputs


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / f"{name}.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_a_cell_seed_depends_on_the_run_seed_and_the_cell_only():
    a = cell_seed(1, "ecdsa-sign", {"curve": "p256"})
    assert a == cell_seed(1, "ecdsa-sign", {"curve": "p256"})
    assert a != cell_seed(2, "ecdsa-sign", {"curve": "p256"})
    assert a != cell_seed(1, "ecdsa-verify", {"curve": "p256"})
    assert 0 <= a < 2 ** 32


@pytest.mark.parametrize("curve", ["p256", "p521"])
def test_seeded_scalars_are_in_range_and_repeat(curve):
    for seed in range(50):
        d = int.from_bytes(scalar(curve, seed), "big")
        assert 1 <= d < ORDER[curve]
    assert scalar(curve, 7) == scalar(curve, 7) != scalar(curve, 8)


def test_plan_c_carries_each_cells_seed_and_rekey():
    keep = Cell(Inputs("aes-ecb-encrypt", {"key_bits": 128, "bytes": 16, "rekey": 0}, {}), 2, seed=1234)
    every = Cell(Inputs("aes-ecb-encrypt", {"key_bits": 128, "bytes": 16, "rekey": 1}, {}), 2, seed=5)
    sha = Cell(Inputs("sha256", {"bytes": 16}, {}), 2, seed=6)
    src = plan_c([], [keep, every, sha], "b", "m3", "x")
    assert '"", 0}' in src and src.count('"", 1}') == 2       # fw_params ends with rekey
    assert ", 2, 1234u}" in src and ", 2, 5u}" in src


@pytest.mark.parametrize("curve", ["p256", "p521"])
def test_seeded_ecc_inputs_repeat_and_the_signature_verifies(harness, curve):
    with HarnessProcess() as host:
        _check_seeded_ecc(host, curve)


def _check_seeded_ecc(harness, curve):
    params = {"curve": curve}
    first, _ = make_inputs(harness, "ecdsa-verify", params, 99)
    again, _ = make_inputs(harness, "ecdsa-verify", params, 99)
    other, _ = make_inputs(harness, "ecdsa-verify", params, 100)
    assert first.values == again.values and first.values["q"] != other.values["q"]
    v = first.values
    ok = harness.compute("openssl", "ecdsa-verify", params, {"q": v["q"].hex(), "hash": v["hash"].hex(),
                                                           "sig": v["sig"].hex()})
    assert ok["ok"] == "01"
    bad = bytearray(v["sig"])
    bad[-1] ^= 1
    ok = harness.compute("openssl", "ecdsa-verify", params, {"q": v["q"].hex(), "hash": v["hash"].hex(),
                                                           "sig": bytes(bad).hex()})
    assert ok["ok"] == "00"
    sign, check = make_inputs(harness, "ecdsa-sign", params, 99)
    assert sign.values["d"] == scalar(curve, 99 * 4) and check["verify"][1] == sign.values["hash"].hex()


def test_a_degenerate_signature_is_refused():
    with pytest.raises(ValueError):
        ecdsa_signature("p256", b"\1" * 32, b"\0" * 32, b"\1" * 32, b"\4" + b"\0" * 64)


@pytest.mark.e2e
def test_ecdsa_cycles_repeat_between_simulated_runs_and_follow_the_seed(tmp_path):
    args = ("--target", "sim:cortex-m4", "--engine", "mbedtls", "--op", "ecdsa-sign", "--op", "ecdsa-verify",
            "--repeat", "2")

    def cells(doc):
        out = {}
        for r in doc["results"]:
            assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
            out[r["op"]] = (r["input_seed"], r["cycles"]["per_op_median"])
        return out
    one, two = cells(_run(tmp_path, *args, name="one")), cells(_run(tmp_path, *args, name="two"))
    assert one == two
    other = cells(_run(tmp_path, *args, "--seed", "2", name="other"))
    for op in ("ecdsa-sign", "ecdsa-verify"):
        assert other[op][0] != one[op][0] and other[op][1] != one[op][1]


@pytest.mark.e2e
def test_rekey_0_keeps_the_key_schedule_out_of_the_timed_operation(tmp_path):
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--engine", "mbedtls", "--engine", "bearssl",
               "--engine", "psa", "--engine", "psa-testdriver",
               "--op", "aes-ecb-encrypt", "--op", "aes-gcm-encrypt", "--op", "aes-ctr-encrypt",
               "--op", "chacha20-poly1305-encrypt", "--op", "chacha20-encrypt",
               "--param", "bytes=16", "--param", "rekey=0,1", "--repeat", "2")
    cells = {(r["engine"], r["op"], r["params"]["rekey"]): r for r in doc["results"]}

    def pair(engine, op):
        keep, every = cells[(engine, op, 0)], cells[(engine, op, 1)]
        for r in (keep, every):
            assert r["status"] == "ok" and r["kat"] == "pass", (engine, op, r["detail"])
        return keep, every

    def cycles(r):
        return r["cycles"]["per_op_median"]

    # mbedtls and bearssl: the AES key expansion (and GCM's H = AES_K(0)) is no longer in the timed
    # operation; psa/psa-testdriver: the key is imported once (psa_import_key, psa_destroy_key left
    # out), while Mbed TLS 3.5 expands the AES key again inside psa_cipher_encrypt_setup and
    # psa_aead_encrypt, so the saving is smaller but there
    for engine, ops in (("mbedtls", ("aes-ecb-encrypt", "aes-gcm-encrypt", "aes-ctr-encrypt")),
                        ("bearssl", ("aes-gcm-encrypt", "aes-ctr-encrypt")),
                        ("psa", ("aes-ecb-encrypt", "aes-gcm-encrypt", "aes-ctr-encrypt",
                                 "chacha20-poly1305-encrypt")),
                        ("psa-testdriver", ("aes-gcm-encrypt", "aes-ctr-encrypt"))):
        for op in ops:
            keep, every = pair(engine, op)
            assert cycles(keep) < cycles(every), (engine, op, cycles(keep), cycles(every))
    # BearSSL's AES schedule (br_aes_ct_keysched) is most of a 16-byte operation
    keep, every = pair("bearssl", "aes-ctr-encrypt")
    assert cycles(keep) < 0.75 * cycles(every)
    # BearSSL's ChaCha20 and ChaCha20-Poly1305 take the key in every call (no schedule): the same work
    for op in ("chacha20-poly1305-encrypt", "chacha20-encrypt"):
        keep, every = pair("bearssl", op)
        assert cycles(keep) == cycles(every), (op, cycles(keep), cycles(every))
    # the driver served the rekey=0 calls too (the glue fails a call the driver did not serve)
    assert cells[("psa-testdriver", "aes-gcm-encrypt", 0)]["served_by"].startswith("driver:")
    # a key the rekey=0 cell kept is destroyed before the next cell (rekey=0,1 runs the rekey=0 cell
    # first, in the same image): it does not add to the rekey=1 cell's heap
    for engine in ("psa", "psa-testdriver"):
        keep, every = pair(engine, "aes-gcm-encrypt")
        assert every["heap_bytes"] == keep["heap_bytes"] > 0

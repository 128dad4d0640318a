"""The PSA Crypto API (docs/psa.md): the `psa` and `psa-testdriver` firmware recipes on QEMU and the
simulator, the `psa` and `psa-testdriver` host engines, and the proof that a call was dispatched
to Mbed TLS's transparent test driver, recorded per cell as `served_by`. These start the real
toolchain, QEMU, simulator and host harness binaries; a missing one is a failure."""
import json
import subprocess

import pytest

from conftest import ROOT, cli, make_host

from cryptobench.targets.host.engines import ENGINES
from cryptobench.targets.mcu.firmware.recipes import load_recipe, resolve
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.targets.mcu.target import served_by_firmware

BUILD = ROOT / "build" / "host"
DRIVER = "driver: mbedtls_test_transparent"


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    return {(r["op"], r["params"].get("curve"), r["engine"]): r for r in doc["results"]}, doc


def _built_psa_harness():
    make_host("psa")
    for name in ("cbh-psa", "cbh-psa-testdriver"):
        assert (BUILD / name).exists(), name


# --- recipes ---------------------------------------------------------------------------------------

def test_psa_recipes_name_mbedtls_351_from_the_psa_crypto_sys_crate():
    for name in ("psa", "psa-testdriver"):
        r = resolve(load_recipe(name))
        assert (r.crate, r.crate_version) == ("psa-crypto-sys", "0.13.0")
        build_info = (r.source_dir / "include" / "mbedtls" / "build_info.h").read_text()
        assert '#define MBEDTLS_VERSION_STRING         "3.5.1"' in build_info
        assert {"sha256", "aes-gcm-encrypt", "aes-ccm-encrypt", "chacha20-poly1305-encrypt", "ecdh-shared-secret",
                "ecdsa-sign", "ecdsa-verify"} <= set(r.ops)
        assert all(f.exists() for f in r.files())
    assert "PSA_CRYPTO_DRIVER_TEST" in load_recipe("psa-testdriver").defines
    assert "PSA_CRYPTO_DRIVER_TEST" not in load_recipe("psa").defines
    assert ".cache/crates/psa-crypto-sys-0.13.0" not in subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout


def test_served_by_is_read_from_the_glue_version_string():
    assert served_by_firmware("Mbed TLS 3.5.1 PSA Crypto API (served by builtin)") == "builtin"
    assert served_by_firmware(f"Mbed TLS 3.5.1 PSA Crypto API (served by {DRIVER})") == DRIVER
    assert served_by_firmware("2.28.10") is None
    # a glue driving two engines names one per op family; an op neither names is served by neither
    two = "drivers (served by peripheral: STM32F4 HASH for sha*; peripheral: STM32F4 CRYP for aes-*)"
    assert served_by_firmware(two, "sha256") == "peripheral: STM32F4 HASH"
    assert served_by_firmware(two, "aes-cbc-encrypt") == "peripheral: STM32F4 CRYP"
    assert served_by_firmware(two, "hmac-sha256") is None


# --- firmware ---------------------------------------------------------------------------------------

@pytest.mark.qemu
def test_psa_on_qemu_passes_kats_and_records_the_test_driver(tmp_path):
    cells, doc = _run(tmp_path, "--target", "qemu:mps2-an385", "--engine", "psa", "--engine", "psa-testdriver",
                      "--op", "sha256", "--op", "aes-ccm-encrypt", "--op", "chacha20-poly1305-encrypt",
                      "--op", "ecdh-shared-secret", "--op", "ecdsa-sign")
    assert len(cells) == 10
    for (op, curve, engine), r in cells.items():
        assert r["status"] == "ok" and r["kat"] == "pass", (op, engine, r["detail"])
        assert ("known-answer vectors on the target" in r["detail"] or
                "signature verifies in the host's OpenSSL" in r["detail"]), r["detail"]
        want = DRIVER if engine == "psa-testdriver" else "builtin"
        assert r["served_by"] == want and r["detail"].endswith(f"served by {want}"), r
    builds = doc["conditions"]["builds"]
    assert "served by driver: mbedtls_test_transparent" in builds["psa-testdriver"]["library_version"]
    assert "served by builtin" in builds["psa"]["library_version"]


@pytest.mark.e2e
def test_psa_on_the_simulator_reports_cycles_stack_and_code_size(tmp_path):
    cells, _ = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "cc2652", "--engine", "psa",
                    "--op", "sha256", "--op", "ecdsa-sign", "--param", "bytes=1024")
    for key in (("sha256", None, "psa"), ("ecdsa-sign", "p256", "psa")):
        r = cells[key]
        assert r["status"] == "ok" and r["kat"] == "pass" and r["provenance"] == "simulated", r
        assert r["served_by"] == "builtin"
        assert r["cycles"]["per_op_median"] > 0 and 0 < r["stack_bytes"] < 16384
        assert 0 < r["code_size"]["flash_bytes"] < 200_000


# --- host -------------------------------------------------------------------------------------------

def test_host_test_driver_engine_dispatches_every_call_to_the_driver():
    _built_psa_harness()
    for name, want in (("psa", "builtin"), ("psa-testdriver", DRIVER)):
        with HarnessProcess(path=ENGINES[name].harness()) as proc:
            out = proc.compute("psa", "sha256", {"bytes": 3}, {"msg": b"abc".hex()})
            assert out["digest"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
            facts = proc.engine_info("psa")
            assert facts["version"] == "3.5.1"
            d = facts["dispatch"]["sha256"]
            assert d["calls"] == 1 and d["served_by"] == want
            assert d["driver_calls"] == (1 if name == "psa-testdriver" else 0)
            assert "rekey=1" in facts["key_setup"] and "rekey=0" in facts["key_setup"]
            # a timed slot at rekey=0 keeps its key; at rekey=1 it imports it in every operation
            for rekey in (0, 1):
                params = {"key_bits": 128, "bytes": 64, "aad_bytes": 0, "rekey": rekey}
                proc.setup(rekey + 1, "psa", "aes-gcm-encrypt", params)
                proc.sample(rekey + 1, 10)
                proc.teardown(rekey + 1)
            d = proc.engine_info("psa")["dispatch"]["aes-gcm-encrypt"]
            assert d["calls"] == 20 and d["served_by"] == want


@pytest.mark.e2e
def test_host_psa_engines_pass_their_kats_and_cells_record_served_by(tmp_path):
    _built_psa_harness()
    cells, doc = _run(tmp_path, "--engine", "psa", "--engine", "psa-testdriver", "--op", "aes-gcm-encrypt",
                      "--op", "ecdh-shared-secret", "--op", "ecdsa-verify", "--repeat", "3", "--budget", "5")
    assert len(cells) == 6
    for (op, _, engine), r in cells.items():
        assert r["status"] == "ok" and r["kat"] == "pass", (op, engine, r["detail"])
        assert r["served_by"] == (DRIVER if engine == "psa-testdriver" else "builtin"), r
    engines = doc["conditions"]["engines"]
    assert engines["psa-testdriver"]["driver"].startswith("mbedtls_test_transparent")
    assert engines["psa"]["driver"].startswith("none")

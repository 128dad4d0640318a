"""Cortex-M33 (ARMv8-M Mainline): --cpu m33 / m33f, QEMU's mps2-an505 in the Secure state, and the
simulator's rough M33 model. These start the real cross compiler, QEMU and Unicorn: no skips."""
import json

import pytest

from conftest import cli

from cryptobench.targets.mcu.sim import timing as T
from cryptobench.targets.mcu.sim.devices import DEVICES
from cryptobench.targets.mcu.boards import BOARDS, CPUS


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out.read_text())


@pytest.mark.qemu
def test_mbedtls_kats_pass_on_mps2_an505_built_for_m33(tmp_path):
    _, doc = _run(tmp_path, "--target", "qemu:mps2-an505", "--cpu", "m33", "--op", "sha256",
                  "--op", "aes-gcm-encrypt", "--param", "bytes=64", "--engine", "mbedtls")
    assert len(doc["results"]) == 2
    for r in doc["results"]:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["detail"])
        assert "known-answer vectors on the target" in r["detail"]
        assert 0 < r["stack_bytes"] and r["code_size"]["flash_bytes"] > 0
    build = doc["conditions"]["builds"]["mbedtls"]
    assert "-mcpu=cortex-m33" in build["cflags"] and "-mfloat-abi=soft" in build["cflags"]
    assert build["cpu"] == "m33" and build["board"] == "mps2-an505"


@pytest.mark.qemu
def test_the_an505_default_is_m33_with_the_fpu(tmp_path):
    _, doc = _run(tmp_path, "--target", "qemu:mps2-an505", "--op", "sha256", "--param", "bytes=16",
                  "--engine", "bearssl")
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    assert "-mfpu=fpv5-sp-d16 -mfloat-abi=hard" in doc["conditions"]["builds"]["bearssl"]["cflags"]


def test_m33_code_is_refused_on_cores_that_cannot_run_it():
    proc = cli("run", "--target", "qemu:mps2-an386", "--cpu", "m33", "--op", "sha256")
    assert proc.returncode != 0 and "cannot run m33 code" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_the_m33_builds_and_boards():
    assert "-mcpu=cortex-m33" in CPUS["m33"]["flags"] and "-mcpu=cortex-m33" in CPUS["m33f"]["flags"]
    assert BOARDS["mps2-an505"].flash[0] == 0x10000000 and BOARDS["mps2-an505"].ram[0] == 0x38000000
    assert {"m33", "m33f"} <= set(BOARDS["ek-ra6m4"].cpus)


@pytest.mark.e2e
def test_sim_cortex_m33_runs_kats_with_a_rough_model(tmp_path):
    assert "cortex-m33" in T.CORES and "cortex-m33" in T.ROUGH
    assert DEVICES["ideal-m33"].core == "cortex-m33"
    proc, doc = _run(tmp_path, "--target", "sim:cortex-m33", "--op", "sha256", "--param", "bytes=64",
                     "--engine", "mbedtls")
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    assert r["provenance"] == "simulated" and r["cycles"]["per_op_median"] > 0
    sim = doc["conditions"]["target"]["simulator"]
    assert sim["core"] == "cortex-m33" and sim["rough"] is True
    assert "(rough)" in doc["conditions"]["target"]["timing"]
    assert "-mcpu=cortex-m33" in doc["conditions"]["builds"]["mbedtls"]["cflags"]
    assert "no cost in the model" not in proc.stderr + proc.stdout

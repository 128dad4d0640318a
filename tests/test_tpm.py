"""The tpm engine against a real swtpm (started by the run's provision or by the test): verification
of every op, a suite run, a TPM that disappears mid-run, and a TCTI that points nowhere."""
import hashlib
import json
import os
import socket
from pathlib import Path

import pytest

from conftest import cli
from cryptobench.catalog.ops import OPS
from cryptobench.targets.host.engines import ENGINES, probe_engines
from cryptobench.core.errors import HarnessError, UsageError
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.runner.plan import build_plan
from cryptobench.runner.runner import Runner
from cryptobench.targets.host.target import HostTarget
from cryptobench.targets.host.secure import close_provision, open_provision
from cryptobench.targets.host.secure import tpm as tpm_mod
from cryptobench.store.database import Store
from cryptobench.runner.suites import load_suite
from cryptobench.targets.host.verifier import Verifier

pytestmark = pytest.mark.skipif(
    not tpm_mod.shutil.which("swtpm") and not os.environ.get(tpm_mod.TCTI_ENV)
    and not os.access(tpm_mod.DEVICE, os.R_OK | os.W_OK),
    reason="no swtpm and no TPM here: ./setup.sh installs swtpm")

TPM = ENGINES["tpm"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tpm(harness):
    """The run's provision (a swtpm of its own unless a TPM is configured), installed on the engine."""
    prov = open_provision(TPM)
    yield prov
    close_provision(TPM, prov)


@pytest.fixture(scope="module")
def verifier(tpm):
    v = Verifier({})
    yield v
    v.close()


@pytest.fixture(scope="module")
def proc(tpm):
    p = TPM.start()
    yield p
    p.close()


GATE = [
    ("random", {"bytes": 32, "source": "library"}),
    ("sha256", {"bytes": 64}),
    ("ecc-keygen", {"curve": "p256"}),
    ("ecdsa-sign", {"curve": "p256"}),
    ("ecdsa-verify", {"curve": "p256"}),
    ("rsa-keygen", {"rsa_bits": 2048}),
    ("rsa-sign", {"rsa_bits": 2048}),
    ("rsa-verify", {"rsa_bits": 2048}),
    ("rsa-keygen", {"rsa_bits": 1024}),
    ("rsa-sign", {"rsa_bits": 1024}),
    ("rsa-verify", {"rsa_bits": 1024}),
]


@pytest.mark.parametrize("op, params", GATE, ids=[f"{o}:{list(p.values())[0]}" for o, p in GATE])
def test_every_op_passes_the_gate(verifier, op, params):
    full = {**OPS[op].defaults(), **params}
    ok, why = verifier.proc("tpm").supports("tpm", op, full)
    if not ok:
        assert params.get("rsa_bits") == 1024, why      # only RSA-1024 may be missing from a TPM
        pytest.skip(f"this TPM: {why}")
    verdict = verifier.verify("tpm", op, full)
    assert verdict.kat == "pass", verdict.detail
    if op in ("ecdsa-sign", "ecc-keygen"):
        assert "openssl-hw" in verdict.detail
    if op == "sha256":
        assert "known-answer" in verdict.detail


def test_signatures_cross_both_ways_and_bad_ones_are_answers(proc, verifier):
    ossl = verifier.proc("openssl-hw")
    h = hashlib.sha256(b"tpm cross").hexdigest()
    pair = ossl.compute("openssl", "ecc-keygen", {"curve": "p256"}, {})
    sig = proc.compute("tpm", "ecdsa-sign", {"curve": "p256"}, {"d": pair["d"], "hash": h})["sig"]
    assert len(sig) == 128
    assert ossl.compute("openssl", "ecdsa-verify", {"curve": "p256"},
                        {"q": pair["q"], "hash": h, "sig": sig})["ok"] == "01"
    theirs = ossl.compute("openssl", "ecdsa-sign", {"curve": "p256"}, {"d": pair["d"], "hash": h})["sig"]
    verify = lambda s: proc.compute("tpm", "ecdsa-verify", {"curve": "p256"},
                                    {"q": pair["q"], "hash": h, "sig": s})["ok"]
    assert verify(theirs) == "01"
    assert verify(theirs[:-2] + f"{int(theirs[-2:], 16) ^ 1:02x}") == "00"     # an answer, not an error

    key = ossl.compute("openssl", "rsa-keygen", {"rsa_bits": 2048}, {})
    rsig = proc.compute("tpm", "rsa-sign", {"rsa_bits": 2048}, {**key, "hash": h})["sig"]
    assert ossl.compute("openssl", "rsa-verify", {"rsa_bits": 2048},
                        {"n": key["n"], "e": key["e"], "hash": h, "sig": rsig})["ok"] == "01"
    osig = ossl.compute("openssl", "rsa-sign", {"rsa_bits": 2048}, {**key, "hash": h})["sig"]
    assert osig == rsig                                   # PKCS#1 v1.5 is deterministic
    bad = osig[:-2] + f"{int(osig[-2:], 16) ^ 1:02x}"
    assert proc.compute("tpm", "rsa-verify", {"rsa_bits": 2048},
                        {"n": key["n"], "e": key["e"], "hash": h, "sig": bad})["ok"] == "00"


def test_generated_keys_stay_inside(proc):
    out = proc.compute("tpm", "ecc-keygen", {"curve": "p256"}, {})
    assert set(out) == {"q"} and out["q"].startswith("04") and len(out["q"]) == 130
    out = proc.compute("tpm", "rsa-keygen", {"rsa_bits": 2048}, {"hash": "11" * 32})
    assert set(out) == {"n", "e", "sig"} and out["e"] == "010001" and len(out["n"]) == 512


def test_long_messages_and_many_random_bytes(proc):
    msg = bytes(range(256)) * 20                          # 5120 B: a hash sequence, not one TPM2_Hash
    out = proc.compute("tpm", "sha256", {"bytes": len(msg)}, {"msg": msg.hex()})
    assert out["digest"] == hashlib.sha256(msg).hexdigest()
    bits = proc.compute("tpm", "random", {"bytes": 1000, "source": "library"}, {})["bits"]
    assert len(bits) == 2000                              # several TPM2_GetRandom calls


def test_unsupported_ops_say_why(proc):
    for op, params, words in [("aes-gcm-encrypt", {"key_bits": 128, "bytes": 64, "aad_bytes": 0}, "implements"),
                              ("ecdsa-sign", {"curve": "p521"}, "P-256"),
                              ("random", {"bytes": 32, "source": "rdrand"}, "library"),
                              ("sha512", {"bytes": 64}, "SHA-256")]:
        ok, why = proc.supports("tpm", op, {**OPS[op].defaults(), **params})
        assert not ok and words in why


def test_engine_facts(tpm, proc):
    info = proc.engine_info("tpm")
    assert "unusable" not in info, info.get("unusable")
    assert info["round_trip_ns"] > 0 and info["tcti"] == tpm.env[tpm_mod.TCTI_ENV]
    for key in ("manufacturer", "vendor", "firmware_version", "spec", "random_bytes_per_call"):
        assert info[key] != ""


@pytest.mark.e2e
def test_zhaw_suite_run_with_openssl_and_tpm(tmp_path, harness):
    out = tmp_path / "run.json"
    args = ["run", "--suite", "zhaw-iot", "--engine", "openssl-hw", "--engine", "tpm", "--repeat", "5",
            "--op", "random", "--op", "sha256", "--op", "ecc-keygen", "--op", "ecdsa-sign",
            "--op", "ecdsa-verify", "--op", "rsa-sign", "--op", "rsa-verify",
            "--param", "bytes=32,1024", "--db", str(tmp_path / "db.sqlite"), "--json", str(out)]
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    cells = [r for r in doc["results"] if r["engine"] == "tpm"]
    assert {r["op"] for r in cells} == {"random", "sha256", "ecc-keygen", "ecdsa-sign", "ecdsa-verify",
                                         "rsa-sign", "rsa-verify"}
    for r in cells:
        if r["status"] == "unsupported":
            assert r["params"].get("rsa_bits") == 1024, r
            continue
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        assert r["provenance"] == "measured" and r["n"] == 5 and r["time_s"]["median"] > 0
    facts = doc["conditions"]["engines"]["tpm"]
    assert facts["round_trip_ns"] > 0 and facts["manufacturer"] and facts["spec"]
    assert facts["tpm"] and facts["tcti"]
    if facts["tpm_source"] == "swtpm started for this run":
        assert "swtpm" in facts["tpm"] and "software stand-in" in facts["tpm"]
        port = int(facts["tcti"].rsplit("=", 1)[1])      # the run stopped its swtpm
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()


@pytest.mark.e2e
def test_tpm_killed_mid_run_fails_later_cells_with_the_reason(tmp_path, harness, monkeypatch):
    own = tpm_mod.start_swtpm()                          # "the user's" swtpm, named by the variable
    try:
        monkeypatch.setenv(tpm_mod.TCTI_ENV, own.env[tpm_mod.TCTI_ENV])
        plan = build_plan(load_suite("zhaw-iot"), engines=["openssl-hw", "tpm"],
                          ops=["random", "sha256", "ecdsa-sign"], param_overrides={"bytes": [32]}, repeat=3)
        killed = []
        setup_cell = HostTarget._setup_cell

        def setup_then_kill(self, key, meta, old):
            # a device's cells are set up and sampled one at a time after the rounds: the TPM dies
            # once the first of them (random) is done
            if meta["engine"] == "tpm" and meta["group"].op != "random" and not killed:
                own.process.kill()
                own.process.wait()
                killed.append("random")
            return setup_cell(self, key, meta, old)

        monkeypatch.setattr(HostTarget, "_setup_cell", setup_then_kill)
        store = Store(tmp_path / "db.sqlite")
        run_id = Runner(store, plan).run()
        run = store.load_run(run_id)
    finally:
        own.close()
    assert killed == ["random"] and run.status == "complete"
    cells = {(c.op, c.engine): c for c in run.cells}
    assert cells[("random", "tpm")].status == "ok"
    for op in ("sha256", "ecdsa-sign"):
        assert cells[(op, "openssl-hw")].status == "ok"
        cell = cells[(op, "tpm")]
        assert cell.status == "failed" and not cell.samples
        assert tpm_mod.TCTI_ENV in cell.detail, cell.detail
        assert "stopped answering" in cell.detail or "cannot reach" in cell.detail, cell.detail


def test_tcti_pointing_nowhere_makes_the_engine_unusable(harness, monkeypatch):
    nowhere = f"swtpm:host=127.0.0.1,port={_free_port()}"
    monkeypatch.setenv(tpm_mod.TCTI_ENV, nowhere)
    _, why = probe_engines(["tpm"])["tpm"]
    assert why and "\n" not in why and tpm_mod.TCTI_ENV in why and nowhere in why
    monkeypatch.setenv(tpm_mod.TCTI_ENV, "device:/dev/no-such-tpm")
    _, why = probe_engines(["tpm"])["tpm"]
    assert tpm_mod.TCTI_ENV in why and "does not exist" in why
    # the harness says the same when started without the provision's check
    with HarnessProcess(env_overrides={tpm_mod.TCTI_ENV: nowhere, "TSS2_LOG": "all+NONE"}) as p:
        info = p.engine_info("tpm")
        assert tpm_mod.TCTI_ENV in info["unusable"] and "\n" not in info["unusable"]
        ok, _ = p.supports("tpm", "sha256", {"bytes": 32})
        assert ok                                     # supported in principle: the cell fails with the reason
        with pytest.raises(HarnessError, match=tpm_mod.TCTI_ENV):
            p.compute("tpm", "sha256", {"bytes": 3}, {"msg": "616263"})
    with HarnessProcess(env_overrides={tpm_mod.TCTI_ENV: None}) as p:
        assert tpm_mod.TCTI_ENV in p.engine_info("tpm")["unusable"]


def test_no_swtpm_and_no_tpm_names_setup_and_the_variable(tmp_path, monkeypatch):
    if os.path.exists(tpm_mod.DEVICE):
        pytest.skip(f"{tpm_mod.DEVICE} exists here")
    monkeypatch.delenv(tpm_mod.TCTI_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))            # no swtpm on the PATH
    with pytest.raises(UsageError) as exc:
        tpm_mod.provision()
    assert "./setup.sh" in str(exc.value) and tpm_mod.TCTI_ENV in str(exc.value)


@pytest.mark.subprocess
def test_started_swtpm_is_stopped_and_removed():
    prov = tpm_mod.start_swtpm()
    state = Path(prov.state_dir)
    assert state.is_dir() and prov.process.poll() is None
    prov.close()
    prov.close()                                         # idempotent
    assert prov.process.poll() is not None and not state.exists()

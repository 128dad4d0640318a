"""The pkcs11 engine against a real SoftHSM2 token that the tests set up themselves (no mocks):
the gate (known answers, cross-checks with OpenSSL both ways), a zhaw-iot run, a user-configured
token, configuration errors, a token that disappears mid-run, and no PIN anywhere."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from cryptobench.catalog.ops import OPS
from cryptobench.targets.host.engines import ENGINES
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.runner.plan import build_plan
from cryptobench.runner.runner import Runner
from cryptobench.targets.host.target import HostTarget
from cryptobench.targets.host.secure import close_provision, open_provision
from cryptobench.targets.host.secure.pkcs11 import init_softhsm_token, softhsm_module, softhsm_token
from cryptobench.store.database import Store
from cryptobench.runner.suites import load_suite
from cryptobench.targets.host.verifier import Verifier

MODULE = softhsm_module()
pytestmark = pytest.mark.skipif(MODULE is None, reason="SoftHSM2 is not installed (./setup.sh installs it)")

PKCS11_VARS = ("CRYPTOBENCH_PKCS11_MODULE", "CRYPTOBENCH_PKCS11_TOKEN", "CRYPTOBENCH_PKCS11_SLOT",
               "CRYPTOBENCH_PKCS11_PIN", "CRYPTOBENCH_PKCS11_PIN_FILE", "SOFTHSM2_CONF")

# every op the engine offers, on the parameters the zhaw-iot suite uses and a few more
GATE = [
    ("random", {"bytes": 32, "source": "library"}),
    ("sha256", {"bytes": 64}), ("sha1", {"bytes": 64}), ("sha224", {"bytes": 64}),
    ("sha384", {"bytes": 64}), ("sha512", {"bytes": 64}),
    ("aes-ecb-encrypt", {"key_bits": 128, "bytes": 64}),
    ("aes-cbc-encrypt", {"key_bits": 256, "bytes": 64}),
    ("aes-ctr-encrypt", {"key_bits": 192, "bytes": 64}),
    ("aes-gcm-encrypt", {"key_bits": 128, "bytes": 64, "aad_bytes": 16}),
    ("ecc-keygen", {"curve": "p256"}), ("ecc-keygen", {"curve": "p521"}),
    ("ecdsa-sign", {"curve": "p256"}), ("ecdsa-verify", {"curve": "p256"}),
    ("ecdsa-sign", {"curve": "p521"}), ("ecdsa-verify", {"curve": "p521"}),
    ("rsa-keygen", {"rsa_bits": 1024}), ("rsa-keygen", {"rsa_bits": 2048}),
    ("rsa-sign", {"rsa_bits": 1024}), ("rsa-sign", {"rsa_bits": 2048}),
    ("rsa-verify", {"rsa_bits": 1024}), ("rsa-verify", {"rsa_bits": 2048}),
]


def _clean_env(extra=None):
    """This process's environment without any PKCS#11 configuration, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in PKCS11_VARS}
    env.update(extra or {})
    return env


def _cli(*args, env):
    """The real command line with exactly `env` as its environment (PKCS#11 variables included)."""
    return subprocess.run([sys.executable, "-m", "cryptobench.cli", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def token(harness):
    """A throw-away SoftHSM2 token (the run's own provisioning) and a harness talking to it."""
    engine = ENGINES["pkcs11"]
    prov = open_provision(engine)
    proc = engine.start()
    yield prov, proc
    proc.close()
    close_provision(engine, prov)


@pytest.fixture(scope="module")
def verifier(token):
    v = Verifier({"pkcs11": token[1]})
    yield v
    v.close()


@pytest.fixture
def user_token(tmp_path):
    """A SoftHSM2 token initialised by the test, as a user would configure a real device."""
    pin = "user-pin-" + os.urandom(6).hex()
    pin_file = init_softhsm_token(tmp_path, MODULE, "my-se", pin=pin)
    env = _clean_env({"CRYPTOBENCH_PKCS11_MODULE": MODULE, "CRYPTOBENCH_PKCS11_TOKEN": "my-se",
                      "CRYPTOBENCH_PKCS11_PIN_FILE": str(pin_file),
                      "SOFTHSM2_CONF": str(tmp_path / "softhsm2.conf")})
    return pin, env


# --- the engine ---------------------------------------------------------------------------------

def test_describe_names_token_mechanisms_and_round_trip(token):
    prov, proc = token
    info = proc.engine_info("pkcs11")
    assert "unusable" not in info, info
    assert info["token_label"] == "cryptobench" and info["token_model"] == "SoftHSM v2"
    assert info["library_manufacturer"] == "SoftHSM"
    assert info["logged_in"] == 1
    for mech in ("CKM_SHA256", "CKM_EC_KEY_PAIR_GEN", "CKM_ECDSA", "CKM_RSA_PKCS_KEY_PAIR_GEN", "CKM_RSA_PKCS"):
        assert mech in info["mechanisms"].split()
    assert info["round_trip_ns"] > 0 and info["call_ns"] > 0 and info["round_trip_n"] > 0
    assert info["round_trip_call"].startswith("C_GenerateRandom")
    assert "SoftHSM2" in prov.facts["pkcs11_provision"]
    assert not any("pin" in k.lower() and "file" not in k.lower() for k in prov.facts)


@pytest.mark.parametrize("op, params", GATE, ids=[f"{o}:{','.join(map(str, p.values()))}" for o, p in GATE])
def test_every_supported_op_passes_the_gate_and_times(token, verifier, op, params):
    proc = token[1]
    full = {**OPS[op].defaults(), **params}
    ok, why = proc.supports("pkcs11", op, full)
    assert ok, why
    verdict = verifier.verify("pkcs11", op, full)
    assert verdict.kat == "pass", verdict.detail
    proc.setup(901, "pkcs11", op, full)
    try:
        samples = proc.sample(901, 1, 2)
    finally:
        proc.teardown(901)
    assert len(samples) == 2 and all(ns > 0 for _, ns, _ in samples)


def test_sha256_known_answers(token):
    proc = token[1]
    for msg, digest in ((b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
                        (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")):
        out = proc.compute("pkcs11", "sha256", {"bytes": len(msg)}, {"msg": msg.hex()})
        assert out["digest"] == digest


def test_signatures_cross_openssl_both_ways(token, verifier):
    """A signature made in the token verifies in OpenSSL, and OpenSSL's verifies in the token."""
    proc, ossl = token[1], verifier.proc("openssl-hw")
    h = hashlib.sha256(b"cross").hexdigest()
    pair = ossl.compute("openssl", "ecc-keygen", {"curve": "p256"}, {})
    sig = proc.compute("pkcs11", "ecdsa-sign", {"curve": "p256"}, {"d": pair["d"], "hash": h})["sig"]
    assert ossl.compute("openssl", "ecdsa-verify", {"curve": "p256"},
                        {"q": pair["q"], "hash": h, "sig": sig})["ok"] == "01"
    sig2 = ossl.compute("openssl", "ecdsa-sign", {"curve": "p256"}, {"d": pair["d"], "hash": h})["sig"]
    assert proc.compute("pkcs11", "ecdsa-verify", {"curve": "p256"},
                        {"q": pair["q"], "hash": h, "sig": sig2})["ok"] == "01"
    bad = sig2[:-2] + f"{int(sig2[-2:], 16) ^ 1:02x}"
    assert proc.compute("pkcs11", "ecdsa-verify", {"curve": "p256"},
                        {"q": pair["q"], "hash": h, "sig": bad})["ok"] == "00"

    key = ossl.compute("openssl", "rsa-keygen", {"rsa_bits": 1024}, {})
    sig = proc.compute("pkcs11", "rsa-sign", {"rsa_bits": 1024}, {**key, "hash": h})["sig"]
    assert sig == ossl.compute("openssl", "rsa-sign", {"rsa_bits": 1024}, {**key, "hash": h})["sig"]
    pub = {"n": key["n"], "e": key["e"], "hash": h}
    assert ossl.compute("openssl", "rsa-verify", {"rsa_bits": 1024}, {**pub, "sig": sig})["ok"] == "01"
    assert proc.compute("pkcs11", "rsa-verify", {"rsa_bits": 1024}, {**pub, "sig": sig})["ok"] == "01"

    # a key generated in the token stays there: q only, and a signature with it verifies outside
    gen = proc.compute("pkcs11", "ecc-keygen", {"curve": "p256"}, {"hash": h})
    assert "d" not in gen and gen["q"].startswith("04") and len(gen["q"]) == 130
    assert ossl.compute("openssl", "ecdsa-verify", {"curve": "p256"},
                        {"q": gen["q"], "hash": h, "sig": gen["sig"]})["ok"] == "01"


def test_unsupported_ops_say_why(token):
    proc = token[1]
    for op, params, words in (("aes-ccm-encrypt", {"key_bits": 128, "bytes": 64}, "CKM_AES_CCM"),
                              ("ecdsa-sign", {"curve": "x25519"}, "p256"),
                              ("random", {"bytes": 32, "source": "rdrand"}, "library"),
                              ("aes-gcm-encrypt", {"key_bits": 128, "bytes": 64, "rekey": 1}, "rekey"),
                              ("ecjpake-exchange", {"curve": "p256"}, "pkcs11 engine")):
        ok, why = proc.supports("pkcs11", op, {**OPS[op].defaults(), **params})
        assert not ok and words in why, (op, why)


def test_keys_are_session_objects(token):
    """Nothing the engine creates is written to the token's store (CKA_TOKEN false)."""
    prov, proc = token
    proc.compute("pkcs11", "ecc-keygen", {"curve": "p256"}, {"hash": "00" * 32})
    proc.setup(902, "pkcs11", "ecdsa-sign", {"curve": "p256"})
    proc.sample(902, 2, 1)
    proc.teardown(902)
    store = Path(prov.env["SOFTHSM2_CONF"]).parent / "tokens"
    assert [p.name for p in store.rglob("*.object") if p.name != "token.object"] == []


@pytest.mark.subprocess
def test_throwaway_token_is_removed_and_pin_is_private():
    prov = softhsm_token()
    root = Path(prov.env["SOFTHSM2_CONF"]).parent
    pin_file = Path(prov.env["CRYPTOBENCH_PKCS11_PIN_FILE"])
    assert oct(pin_file.stat().st_mode & 0o777) == "0o600"
    pin = pin_file.read_text().strip()
    assert pin and pin not in json.dumps(prov.facts) and pin not in json.dumps(prov.env)
    prov.close()
    prov.close()                     # idempotent
    assert not root.exists()


# --- runs ---------------------------------------------------------------------------------------

@pytest.mark.e2e
def test_zhaw_iot_run_with_openssl_and_pkcs11(tmp_path, harness):
    db, out = tmp_path / "r.sqlite", tmp_path / "r.json"
    ops = ["random", "sha256", "ecc-keygen", "ecdsa-sign", "ecdsa-verify", "rsa-sign", "rsa-verify"]
    args = ["run", "--suite", "zhaw-iot", "--engine", "openssl-hw", "--engine", "pkcs11", "--repeat", "5",
            "--warmup", "1", "--db", str(db), "--json", str(out), "--quiet", "--format", "md"]
    for op in ops:
        args += ["--op", op]
    r = _cli(*args, env=_clean_env())
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    run = Store(db).load_run(1)
    cells = [c for c in run.cells if c.engine == "pkcs11"]
    assert {c.op for c in cells} == set(ops)
    for c in cells:
        assert c.status == "ok" and c.kat == "pass" and c.provenance == "measured", c
        assert len(c.samples) == 5
    facts = run.conditions.engines["pkcs11"]
    assert facts["round_trip_ns"] > 0 and "SoftHSM2" in facts["pkcs11_provision"]
    assert facts["token_label"] == "cryptobench"
    assert "round_trip_ns" in json.dumps(doc)
    assert "pkcs11" in r.stdout


@pytest.mark.e2e
def test_user_configured_token_and_no_pin_anywhere(tmp_path, user_token, harness):
    pin, env = user_token
    db, out = tmp_path / "u.sqlite", tmp_path / "u.json"
    outputs = []
    r = _cli("run", "--engine", "pkcs11", "--engine", "openssl-hw", "--op", "sha256", "--op", "ecdsa-sign",
             "--op", "rsa-verify", "--param", "rsa_bits=1024", "--repeat", "3", "--min-time", "0.001",
             "--db", str(db), "--json", str(out), "--format", "md", env=env)
    outputs += [r.stdout, r.stderr]
    assert r.returncode == 0, r.stderr
    run = Store(db).load_run(1)
    assert all(c.status == "ok" for c in run.cells), [c.detail for c in run.cells]
    facts = run.conditions.engines["pkcs11"]
    assert facts["token_label"] == "my-se"
    assert facts["pkcs11_provision"].startswith("user-configured")
    for fmt in ("json", "table", "csv", "md"):
        s = _cli("show", "latest", "--db", str(db), "--format", fmt, env=env)
        assert s.returncode == 0, s.stderr
        outputs += [s.stdout, s.stderr]
    # the PIN given in the environment instead of a file: login works and it is wiped in the harness
    env_pin = {k: v for k, v in env.items() if k != "CRYPTOBENCH_PKCS11_PIN_FILE"}
    env_pin["CRYPTOBENCH_PKCS11_PIN"] = pin
    r = _cli("run", "--engine", "pkcs11", "--op", "random", "--param", "bytes=32", "--repeat", "2",
             "--min-time", "0.001", "--db", str(db), "--format", "json", env=env_pin)
    outputs += [r.stdout, r.stderr]
    assert r.returncode == 0, r.stderr
    assert Store(db).load_run(2).cells[0].status == "ok"
    proc = HarnessProcess(env_overrides={**{k: None for k in PKCS11_VARS}, **{
        k: v for k, v in env_pin.items() if k in PKCS11_VARS}})
    try:
        info = proc.engine_info("pkcs11")
        assert info["logged_in"] == 1
        outputs.append(json.dumps(info))
        environ = Path(f"/proc/{proc.proc.pid}/environ").read_bytes()
        assert pin.encode() not in environ
    finally:
        proc.close()
    outputs.append("\n".join(proc._stderr_tail))
    files = [p for p in tmp_path.iterdir() if p.name.startswith(("u.sqlite", "u.json"))]
    blobs = [p.read_bytes() for p in files]
    assert files and blobs
    for text in outputs:
        assert pin not in text
    for blob in blobs:
        assert pin.encode() not in blob


@pytest.mark.e2e
def test_missing_pin_is_a_usage_error(tmp_path, harness):
    env = _clean_env({"CRYPTOBENCH_PKCS11_MODULE": MODULE})
    r = _cli("run", "--engine", "pkcs11", "--op", "sha256", "--db", str(tmp_path / "x.sqlite"), env=env)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "CRYPTOBENCH_PKCS11_PIN_FILE" in lines[0], r.stderr
    env["CRYPTOBENCH_PKCS11_MODULE"] = str(tmp_path / "nope.so")
    env["CRYPTOBENCH_PKCS11_PIN_FILE"] = "/dev/null"
    r = _cli("run", "--engine", "pkcs11", "--op", "sha256", "--db", str(tmp_path / "x.sqlite"), env=env)
    assert r.returncode == 2 and "CRYPTOBENCH_PKCS11_MODULE" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_wrong_pin_makes_the_engine_unusable_with_the_reason(tmp_path, user_token, harness):
    pin, env = user_token
    wrong = tmp_path / "wrong-pin"
    wrong.write_text("not-the-pin-4711\n")
    env = {**env, "CRYPTOBENCH_PKCS11_PIN_FILE": str(wrong)}
    db = tmp_path / "w.sqlite"
    r = _cli("run", "--engine", "pkcs11", "--op", "sha256", "--param", "bytes=32", "--repeat", "2",
             "--db", str(db), "--format", "md", env=env)
    assert r.returncode == 3 and "nothing measured" in r.stderr, r.stderr      # its one cell failed
    cell = Store(db).load_run(1).cells[0]
    assert cell.status == "failed" and "C_Login: CKR_PIN_INCORRECT" in cell.detail
    assert "not-the-pin-4711" not in r.stdout + r.stderr + db.read_bytes().decode("latin-1")


@pytest.mark.e2e
def test_token_removed_mid_run_fails_later_cells_and_the_run_completes(tmp_path, harness):
    suite = load_suite("zhaw-iot")
    plan = build_plan(suite, engines=["openssl-hw", "pkcs11"], ops=["random", "sha256", "ecdsa-sign"], repeat=3,
                      warmup=0)
    store = Store(tmp_path / "gone.sqlite")
    seen = {}

    setup_cell = HostTarget._setup_cell
    pkcs11_setups = []

    def setup_then_remove(self, key, meta, old):
        # a device's cells are set up and sampled one at a time after the rounds: the token's store
        # vanishes once the first of them is done
        if meta["engine"] == "pkcs11":
            pkcs11_setups.append(key)
        if len(pkcs11_setups) == 2 and not seen:
            conf = Path(ENGINES["pkcs11"].runtime_env["SOFTHSM2_CONF"])
            seen["pin"] = Path(ENGINES["pkcs11"].runtime_env["CRYPTOBENCH_PKCS11_PIN_FILE"]).read_text().strip()
            shutil.rmtree(conf.parent / "tokens")
        return setup_cell(self, key, meta, old)

    HostTarget._setup_cell = setup_then_remove
    try:
        run_id = Runner(store, plan).run()
    finally:
        HostTarget._setup_cell = setup_cell
    run = store.load_run(run_id)
    assert run.status == "complete"
    pk = [c for c in run.cells if c.engine == "pkcs11"]
    ossl = [c for c in run.cells if c.engine == "openssl-hw"]
    assert len(pk) == len(plan.groups)
    assert all(c.status == "ok" for c in ossl), [(c.op, c.params, c.detail) for c in ossl
                                                     if c.status != "ok"]
    assert pk[0].status == "ok"
    for c in pk[1:]:
        assert c.status == "failed", c
        assert "token is gone" in c.detail and "C_GetTokenInfo" in c.detail, c.detail
    assert {c.op for c in pk[1:]} == {"random", "sha256", "ecdsa-sign"}
    raw = (tmp_path / "gone.sqlite").read_bytes()
    assert seen["pin"] and seen["pin"].encode() not in raw
    assert seen["pin"] not in json.dumps(run.to_json())


@pytest.mark.subprocess
def test_the_pin_reaches_the_pkcs11_harness_only(monkeypatch):
    """A PIN in this process's environment is not copied into any other harness process."""
    from cryptobench.targets.host.harness import HarnessProcess
    from cryptobench.targets.host.secure.pkcs11 import user_token
    monkeypatch.setenv("CRYPTOBENCH_PKCS11_PIN", "4711-secret")
    monkeypatch.setenv("CRYPTOBENCH_PKCS11_MODULE", "/bin/true")     # a file: the configuration check passes
    proc = HarnessProcess()
    try:
        environ = Path(f"/proc/{proc.proc.pid}/environ").read_bytes()
    finally:
        proc.close()
    assert b"4711-secret" not in environ and b"CRYPTOBENCH_PKCS11_PIN=" not in environ
    assert user_token().env == {"CRYPTOBENCH_PKCS11_PIN": "4711-secret"}   # the pkcs11 engine's own harness gets it


def test_token_directories_left_by_a_killed_run_are_removed_at_the_next_start(tmp_path):
    import subprocess
    import sys
    from cryptobench.core.processes import process_identity
    from cryptobench.targets.host.secure.pkcs11 import OWNER_FILE, TOKEN_PREFIX, remove_stale_tokens
    gone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    identity = process_identity(gone.pid)                  # what the killed run wrote while it ran
    gone.kill()
    gone.wait()
    stale, live, foreign = (tmp_path / f"{TOKEN_PREFIX}{n}" for n in ("stale", "live", "foreign"))
    for d in (stale, live, foreign):
        d.mkdir()
        (d / "pin").write_text("1234\n")
    (stale / OWNER_FILE).write_text(identity + "\n")                        # its process was killed
    (live / OWNER_FILE).write_text(process_identity(os.getpid()) + "\n")  # this process: still running
    # `foreign` has no owner file: not one cryptobench made, left alone
    assert remove_stale_tokens(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and foreign.exists()


def test_a_pin_file_that_is_a_directory_is_named_as_such(monkeypatch, tmp_path):
    from cryptobench.core.errors import UsageError
    from cryptobench.targets.host.secure.pkcs11 import check_config
    monkeypatch.setenv("CRYPTOBENCH_PKCS11_MODULE", "/bin/true")
    monkeypatch.setenv("CRYPTOBENCH_PKCS11_PIN_FILE", str(tmp_path))
    monkeypatch.delenv("CRYPTOBENCH_PKCS11_PIN", raising=False)
    with pytest.raises(UsageError, match="a directory; expected a file holding the PIN"):
        check_config()

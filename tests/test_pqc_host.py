"""The `pqclean` host engine (docs/pqc.md): ML-KEM (FIPS 203) and ML-DSA (FIPS 204) from PQClean's clean
sources in build/host/cbh-pqclean. Every bundled NIST-ACVP-derived vector of every level runs through
the real harness binary; the cross-check (targets/pqc_check.py) runs both ways against kyber-py /
dilithium-py, which the `pqc` extra installs (./setup.sh installs it: a missing module is a failure
here, not a skip); a ciphertext with one bit flipped gives the implicit-rejection key, a flipped
signature is rejected; a spoilt ML-KEM vector file is refused with one line."""
import json

import pytest

from conftest import ROOT, cli, make_host

from cryptobench.catalog.ops import OPS
from cryptobench.core.errors import UsageError
from cryptobench.targets import pqc_check
from cryptobench.targets.host.engines import ENGINES
from cryptobench.targets.host.harness import HarnessProcess
from cryptobench.targets.verify import load_vectors

BUILD = ROOT / "build" / "host"
PQ_OPS = [op for op, o in OPS.items() if o.family in ("ml-kem", "ml-dsa")]
LEVELS = {"ml-kem": (512, 768, 1024), "ml-dsa": (44, 65, 87)}
CELLS = [(op, level) for op in PQ_OPS for level in LEVELS[OPS[op].family]]


@pytest.fixture(scope="module")
def pq():
    """The real cbh-pqclean, built by the project's Makefile (make pqclean) when it is not there yet."""
    make_host("pqclean")
    assert (BUILD / "cbh-pqclean").exists()
    with HarnessProcess(path=ENGINES["pqclean"].harness()) as proc:
        yield proc


def _params(op: str, level: int, **more) -> dict:
    return {**{p.name: p.default for p in OPS[op].params}, "level": level, **more}


def _compute(proc):
    return lambda op, params, inputs: proc.compute("pqclean", op, params, inputs)


def _bare(v: dict) -> dict:
    """A loaded vector as a file holds it (load_vectors adds where it came from)."""
    return {k: v[k] for k in ("id", "op", "params", "in", "out", "source")}


def _flip(hexed: str, at: int) -> str:
    b = bytearray.fromhex(hexed)
    b[at] ^= 0x01
    return b.hex()


def test_the_vectors_cover_every_op_and_level_and_name_their_acvp_source():
    vectors = [v for v in load_vectors() if v["op"] in PQ_OPS]
    assert {(v["op"], v["params"]["level"]) for v in vectors} == set(CELLS)
    for v in vectors:
        assert "ACVP-Server" in v["source"] and "v1.1.0.35" in v["source"], v["id"]
    # decapsulation vectors include NIST's modified ciphertexts (implicit rejection), not only valid ones
    assert any("(modify ciphertext)" in v["source"]
               for v in vectors if v["op"] == "ml-kem-decaps")
    assert any(v["out"] == {"ok": "00"} for v in vectors if v["op"] == "ml-dsa-verify")


def test_every_bundled_vector_recomputes_with_the_pure_python_implementations():
    """Offline: the vector files are what kyber-py / dilithium-py compute from their inputs (the script that
    wrote them, scripts/vectors_pqc.py, also needs NIST's files; this needs neither them nor a network)."""
    from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87
    from kyber_py.ml_kem import ML_KEM_512, ML_KEM_768, ML_KEM_1024
    kem = {512: ML_KEM_512, 768: ML_KEM_768, 1024: ML_KEM_1024}
    dsa = {44: ML_DSA_44, 65: ML_DSA_65, 87: ML_DSA_87}
    for v in (v for v in load_vectors() if v["op"] in PQ_OPS):
        i = {k: bytes.fromhex(x) for k, x in v["in"].items()}
        lv = v["params"]["level"]
        if v["op"] == "ml-kem-keygen":
            got = dict(zip(("ek", "dk"), kem[lv]._keygen_internal(i["d"], i["z"])))
        elif v["op"] == "ml-kem-encaps":
            got = dict(zip(("k", "c"), kem[lv]._encaps_internal(i["ek"], i["m"])))
        elif v["op"] == "ml-kem-decaps":
            got = {"k": kem[lv].decaps(i["dk"], i["c"])}
        elif v["op"] == "ml-dsa-keygen":
            got = dict(zip(("pk", "sk"), dsa[lv]._keygen_internal(i["seed"])))
        elif v["op"] == "ml-dsa-sign":
            got = {"sig": dsa[lv]._sign_internal(i["sk"], b"\x00\x00" + i["msg"], i["rnd"])}
        else:
            got = {"ok": b"\x01" if dsa[lv].verify(i["pk"], i["msg"], i["sig"]) else b"\x00"}
        assert {k: x.hex() for k, x in got.items()} == v["out"], v["id"]


def test_every_vector_of_every_level_passes_through_the_engine(pq):
    vectors = [v for v in load_vectors() if v["op"] in PQ_OPS]
    for v in vectors:
        out = pq.compute("pqclean", v["op"], {**_params(v["op"], 0), **v["params"]}, v["in"])
        assert out == v["out"], v["id"]
    assert len(vectors) == 54


@pytest.mark.parametrize("op,level", CELLS)
def test_the_cross_check_passes_both_ways(pq, op, level):
    passed, detail = pqc_check.check(op, _params(op, level), _compute(pq))
    assert passed, detail
    assert ("kyber-py" if op.startswith("ml-kem") else "dilithium-py") in detail


@pytest.mark.parametrize("level", LEVELS["ml-kem"])
def test_a_flipped_ciphertext_bit_gives_the_implicit_rejection_key(pq, level):
    from kyber_py.ml_kem import ML_KEM_512, ML_KEM_768, ML_KEM_1024
    ref = {512: ML_KEM_512, 768: ML_KEM_768, 1024: ML_KEM_1024}[level]
    p = _params("ml-kem-keygen", level)
    keys = pq.compute("pqclean", "ml-kem-keygen", p, {})
    enc = pq.compute("pqclean", "ml-kem-encaps", p, {"ek": keys["ek"]})
    assert pq.compute("pqclean", "ml-kem-decaps", p, {"dk": keys["dk"], "c": enc["c"]}) == {"k": enc["k"]}
    for at in (0, len(enc["c"]) // 4, len(enc["c"]) // 2 - 1):
        bad = _flip(enc["c"], at)
        k = pq.compute("pqclean", "ml-kem-decaps", p, {"dk": keys["dk"], "c": bad})["k"]
        # FIPS 203 Algorithm 18: K-bar = J(z || c), a key other than the sender's and the same everywhere
        assert k != enc["k"] and k == ref.decaps(bytes.fromhex(keys["dk"]), bytes.fromhex(bad)).hex()


@pytest.mark.parametrize("level", LEVELS["ml-dsa"])
def test_a_flipped_signature_or_message_is_rejected(pq, level):
    p = _params("ml-dsa-sign", level)
    keys = pq.compute("pqclean", "ml-dsa-keygen", p, {})
    msg = bytes(range(59)).hex()
    sig = pq.compute("pqclean", "ml-dsa-sign", p, {"sk": keys["sk"], "msg": msg})["sig"]

    def ok(s, m=msg, pk=keys["pk"]):
        return pq.compute("pqclean", "ml-dsa-verify", p, {"pk": pk, "msg": m, "sig": s})["ok"]
    assert ok(sig) == "01"
    for at in (0, 40, len(sig) // 2 - 1):          # c~, z and the hint bytes
        assert ok(_flip(sig, at)) == "00", at
    assert ok(sig, m=_flip(msg, 3)) == "00"
    assert ok(sig[:-2]) == "00" and ok(sig, pk=keys["pk"][:-2]) == "00"    # wrong lengths: rejected, no error


def test_the_cross_check_fails_an_engine_that_returns_the_senders_key_on_a_bad_ciphertext(pq):
    """The check has teeth: an engine without implicit rejection (same key for any c) fails it."""
    real = _compute(pq)
    last = {}

    def no_rejection(op, params, inputs):
        out = real(op, params, inputs)
        if op == "ml-kem-decaps":
            out = last.setdefault("k", out)              # the first (valid) key, whatever c follows
        return out
    passed, detail = pqc_check.check("ml-kem-decaps", _params("ml-kem-decaps", 768), no_rejection)
    assert not passed and "the sender's key" in detail


def test_the_cross_check_fails_an_engine_that_accepts_any_signature(pq):
    real = _compute(pq)

    def accepts_all(op, params, inputs):
        return {"ok": "01"} if op == "ml-dsa-verify" else real(op, params, inputs)
    passed, detail = pqc_check.check("ml-dsa-verify", _params("ml-dsa-verify", 65), accepts_all)
    assert not passed and "one bit flipped" in detail


def test_a_vector_file_with_a_short_encapsulation_key_is_refused_with_one_line(tmp_path):
    v = next(v for v in load_vectors() if v["op"] == "ml-kem-encaps" and v["params"]["level"] == 512)
    bad = {**_bare(v), "id": "mine-short-ek", "in": {**v["in"], "ek": v["in"]["ek"][:-2]}}
    path = tmp_path / "bad.json"
    path.write_text('{"vectors": [\n' + json.dumps(bad) + "\n]}\n")
    with pytest.raises(UsageError) as err:
        load_vectors(extra=[str(path)])
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}:2:") and "ek" in message and "800" in message, message


@pytest.mark.slow
@pytest.mark.e2e
def test_the_command_line_refuses_a_spoilt_ml_kem_vector_file_before_any_work(tmp_path):
    v = next(v for v in load_vectors() if v["op"] == "ml-kem-decaps" and v["params"]["level"] == 768)
    path = tmp_path / "bad.json"
    path.write_text('{"vectors": [\n' + json.dumps({**_bare(v), "params": {"level": 777}}) + "\n]}\n")
    db = tmp_path / "db.sqlite"
    proc = cli("run", "--op", "ml-kem-decaps", "--engine", "pqclean", "--vectors", str(path), "--db", str(db))
    assert proc.returncode == 2 and f"{path}:2:" in proc.stderr and "level" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not db.exists()


@pytest.mark.slow
@pytest.mark.e2e
def test_a_run_verifies_then_times_and_records_which_code_served_it(tmp_path, pq):
    out = tmp_path / "run.json"
    proc = cli("run", "--engine", "pqclean", "--op", "ml-kem-encaps", "--op", "ml-dsa-sign", "--repeat", "3", "--budget", "5", "--db", str(tmp_path / "db.sqlite"),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    cells = {(r["op"], r["params"]["level"]): r for r in doc["results"]}
    assert set(cells) == {("ml-kem-encaps", 768), ("ml-dsa-sign", 65)}          # the default levels
    for (op, _), r in cells.items():
        assert r["status"] == "ok" and r["kat"] == "pass" and r["provenance"] == "measured", r["detail"]
        ref = "kyber-py" if op.startswith("ml-kem") else "dilithium-py"
        assert "known-answer vectors" in r["detail"] and ref in r["detail"], r["detail"]
        assert r["time_s"]["median"] > 0
    # signing's rejection loop makes its cost vary: its typical (median) cost is shown, not its fastest
    assert cells[("ml-dsa-sign", 65)]["estimate"]["estimator"] == "median"
    assert cells[("ml-kem-encaps", 768)]["estimate"]["estimator"] == "p1"
    facts = doc["conditions"]["engines"]["pqclean"]
    assert facts["crates"] == "pqcrypto-mlkem 0.1.0, pqcrypto-mldsa 0.1.0"
    assert "pq-crystals/kyber/tree/10b478fc" in facts["ml_kem"]
    assert "pq-crystals/dilithium/commit/cbcd8753" in facts["ml_dsa"]
    assert "-fno-tree-vectorize" in facts["libflags"]

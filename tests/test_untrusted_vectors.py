"""Vectors are data (docs/promises.md, "Recipes and vectors are data"): every vector file, the
bundled ones and a user's `--vectors PATH`, is checked against the catalog before any value is used
(catalog/vector_check.py); a refused file is one line naming the file, the line, the vector and the field;
a vector that checks nothing can never count as a pass; every string reaches generated C through
one escaper (targets/mcu/firmware/plan.py, c_string).

tests/hostile/vectors/: one small vector file spoilt one way per case. JSON has no comment line, so
each case's expectation is in VECTOR_TABLE: FILE: (LINE, FRAGMENT), LINE the line the error names."""
import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, cli
from cryptobench.core.errors import HarnessError, UsageError
from cryptobench.targets.mcu.firmware.plan import Cell, Inputs, Kat, c_string, kat_from_vector, plan_c
from cryptobench.targets.host.verifier import Verifier
from cryptobench.targets.verify import load_vectors

CORPUS = ROOT / "tests" / "hostile" / "vectors"

VECTOR_TABLE = {
    'out-empty.json': (3, "vector 'mine-abc': out is empty"),
    'out-ok-on-sha.json': (3, 'out.ok is not an output of sha256'),
    'out-ok-on-gcm.json': (3, 'out.ok is not an output of aes-gcm-encrypt; valid: ct'),
    'out-ok-on-ecdh.json': (3, 'out.ok is not an output of ecdh-keygen; valid: q'),
    'out-unknown-name.json': (3, 'out.hash is not an output of sha256; valid: digest'),
    'out-missing.json': (3, "vector 'mine-abc': lacks out"),
    'out-not-object.json': (3, 'out must map names to lowercase hex strings'),
    'in-unknown-name.json': (3, 'in.message is not an input of sha256'),
    'in-not-hex.json': (3, 'in.msg is not hex'),
    'in-odd-hex.json': (3, 'in.msg is not hex'),
    'in-hex-with-spaces.json': (3, 'in.msg is not hex'),
    'in-number.json': (3, 'in.msg is not hex'),
    'in-not-object.json': (3, 'in must map names to lowercase hex strings'),
    'digest-short.json': (3, 'out.digest has 31 bytes, expected 32'),
    'msg-length-mismatch.json': (3, 'in.msg has 3 bytes, expected 4'),
    'key-length.json': (3, 'in.key has 15 bytes, expected 16'),
    'ct-length.json': (3, 'out.ct has 16 bytes, expected 32'),
    'curve-incbin.json': (3, 'params.curve must be one of p256, p521, x25519'),
    'curve-newline.json': (3, 'params.curve must be one of'),
    'curve-unknown.json': (3, "params.curve must be one of p256, p521, x25519; got 'p384'"),
    'curve-number.json': (3, 'params.curve must be a text'),
    'curve-missing.json': (3, 'params.curve is missing'),
    'key-bits-choice.json': (3, 'params.key_bits must be one of 128, 192, 256'),
    'key-bits-string.json': (3, 'params.key_bits must be a whole number'),
    'key-bits-true.json': (3, 'params.key_bits must be a whole number'),
    'bytes-float.json': (3, 'params.bytes must be a whole number'),
    'bytes-negative.json': (3, 'params.bytes must be between 0 and'),
    'bytes-huge.json': (3, 'params.bytes must be between 0 and'),
    'bytes-nan.json': (3, 'params.bytes must be a whole number'),
    'ecb-partial-block.json': (3, 'whole 16-byte blocks'),
    'param-unknown.json': (3, "'curve' is not a parameter of sha256"),
    'params-not-object.json': (3, 'params must be an object'),
    'op-unknown.json': (3, "unknown op 'sha3-256'"),
    'op-number.json': (3, "unknown op '256'"),
    'op-random-output.json': (3, 'no known answer can check it'),
    'ok-value.json': (3, "out.ok is '02'; expected 01 (valid) or 00 (invalid)"),
    'id-control-characters.json': (3, 'id must be a text of 1 to 120 printable'),
    'id-number.json': (3, 'vector #0: id must be a text'),
    'id-too-long.json': (3, 'id must be a text of 1 to 120 printable'),
    'unknown-field.json': (3, "'expect' is not a field of a vector"),
    'source-number.json': (3, 'source must be a text'),
    'vectors-empty.json': (1, 'the "vectors" list is empty'),
    'vectors-not-list.json': (1, 'expected an object with a "vectors" list'),
    'top-level-list.json': (1, 'expected an object with a "vectors" list'),
    'vector-not-object.json': (1, 'vector #0: must be an object'),
    'malformed.json': (3, 'malformed vector file'),
    'deep-nesting.json': (1, 'malformed vector file'),
    'huge-integer.json': (1, 'malformed vector file'),
    'latin1.json': (3, 'not UTF-8 text (byte 0xe9)'),
    'construction-on-sha.json': (3, 'construction is a field of CTR_DRBG vectors only; sha256 has none'),
    'construction-unknown.json': (3, "construction must be one of df, no-df, got 'hash'"),
    'nodf-short-entropy.json': (3, 'in.entropy is 32 bytes; a no-df AES-256 CTR_DRBG takes exactly 48 (seedlen)'),
    'nodf-nonce.json': (3, 'in.nonce is given; a CTR_DRBG without a derivation function takes no nonce'),
}


def test_every_corpus_file_has_an_expectation_and_every_expectation_a_file():
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(VECTOR_TABLE)


@pytest.mark.parametrize("name", sorted(VECTOR_TABLE))
def test_a_spoilt_vector_file_is_one_line_naming_the_file_the_line_and_the_field(name):
    path = CORPUS / name
    line, fragment = VECTOR_TABLE[name]
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(UsageError) as err:
        load_vectors(extra=[str(path)])
    message = str(err.value)
    assert "\n" not in message and "\x1b" not in message, message
    assert message.startswith(f"{path}:{line}:") and fragment in message, message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_the_bundled_vectors_pass_the_same_checks():
    vectors = load_vectors()
    assert len(vectors) == 269 and all(v["out"] for v in vectors)


@pytest.mark.parametrize("name", ["out-empty.json", "out-ok-on-sha.json", "curve-incbin.json", "in-not-hex.json",
                                  "id-control-characters.json"])
def test_the_command_line_refuses_a_spoilt_vector_file_before_any_work(tmp_path, name):
    path = CORPUS / name
    line, fragment = VECTOR_TABLE[name]
    op = json.loads(path.read_text())["vectors"][0]["op"]
    db = tmp_path / "db.sqlite"
    proc = cli("run", "--op", op, "--engine", "openssl-sw", "--vectors", str(path), "--db", str(db))
    assert proc.returncode == 2 and f"{path}:{line}:" in proc.stderr and fragment in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "\x1b" not in proc.stderr and not db.exists()


def test_a_folder_with_a_spoilt_file_is_refused_as_a_whole(tmp_path):
    good = tmp_path / "a.json"
    good.write_text(json.dumps({"vectors": [{"id": "mine-abc", "op": "sha256", "params": {"bytes": 3},
                                             "in": {"msg": "616263"}, "out": {"digest": SHA256_ABC}}]}))
    assert [v["id"] for v in load_vectors(extra=[str(tmp_path)])][-1] == "mine-abc"
    (tmp_path / "b.json").write_bytes((CORPUS / "out-empty.json").read_bytes())
    with pytest.raises(UsageError, match="out is empty"):
        load_vectors(extra=[str(tmp_path)])


def test_a_fifo_is_refused_not_read(tmp_path):
    import os
    fifo = tmp_path / "v.json"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        load_vectors(extra=[str(tmp_path)])


SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


class _Stub(Verifier):
    """The gate with a harness that refuses every input (as a verifier rejecting malformed input does)."""

    def __init__(self, vectors, refuse=True):
        super().__init__({}, vectors)
        self.refuse = refuse

    def _compute(self, engine, op, params, inputs):
        if self.refuse:
            raise HarnessError("bad input")
        return {"digest": SHA256_ABC}


def test_a_vector_that_checks_nothing_never_counts_as_a_pass():
    """Were a vector with `"out": {}` or an `ok` on a non-verify op to reach the gate (the loader
    refuses both), it checks nothing: it is not a known-answer pass."""
    empty = {"id": "e", "op": "sha256", "params": {"bytes": 3}, "in": {"msg": "616263"}, "out": {}, "file": "x"}
    ok = {**empty, "id": "o", "out": {"ok": "00"}}
    verdict = _Stub([empty], refuse=False)._run_vectors("openssl-sw", "sha256", {"bytes": 3}, [empty])
    assert verdict.kat == "fail"
    verdict = _Stub([ok])._run_vectors("openssl-sw", "sha256", {"bytes": 3}, [ok])
    assert verdict.kat == "fail" and "bad input" in verdict.detail


def test_a_real_vector_still_passes_and_a_verifier_may_reject_malformed_input():
    good = {"id": "g", "op": "sha256", "params": {"bytes": 3}, "in": {"msg": "616263"},
            "out": {"digest": SHA256_ABC}, "file": "x"}
    assert _Stub([good], refuse=False)._run_vectors("openssl-sw", "sha256", {"bytes": 3}, [good]).kat == "pass"
    reject = {"id": "r", "op": "ecdsa-verify", "params": {"curve": "p256"}, "in": {}, "out": {"ok": "00"}, "file": "x"}
    assert _Stub([reject])._run_vectors("openssl-sw", "ecdsa-verify", {"curve": "p256"}, [reject]).kat == "pass"


# --- generated C ---------------------------------------------------------------------------------

HOSTILE = 'x", .incbin "/etc/hostname"\n#include </etc/passwd>\n??/ \\ \x1b é'


def _literal(text: str) -> bytes:
    """The bytes a C string literal written by c_string stands for (its escapes are all octal)."""
    assert text[0] == text[-1] == '"'
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), text[1:-1].encode("ascii"))


def test_every_string_reaches_c_as_one_literal_of_printable_ascii():
    lit = c_string(HOSTILE)
    assert _literal(lit) == HOSTILE.encode("utf-8")
    assert all(0x20 <= ord(c) < 0x7f for c in lit) and '"' not in lit[1:-1] and "?" not in lit


def test_a_curve_that_is_not_the_catalogs_never_reaches_the_plan():
    kat = Kat("k", Inputs("ecdh-keygen", {"curve": 'p256", .incbin "/etc/hostname'}, {"key": bytes(32)}), bytes(65))
    with pytest.raises(ValueError, match="not a catalog curve"):
        plan_c([kat], [], "mps2-an385", "m3", "x")


def test_the_plan_with_hostile_names_compiles_to_no_incbin(tmp_path):
    """The vector id, the board, the cpu and the build text are escaped: the compiler reads them as
    strings, so no directive of theirs is ever assembled."""
    kat = Kat(HOSTILE, Inputs("sha256", {"bytes": 3}, {"msg": b"abc"}), bytes(32))
    cell = Cell(Inputs("ecdh-keygen", {"curve": "p521"}, {"key": bytes(66)}), 1)
    source = plan_c([kat], [cell], HOSTILE, HOSTILE, HOSTILE)
    outside_literals = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', source)
    assert ".incbin" not in outside_literals and "/etc" not in outside_literals and "hostname" not in outside_literals
    assert outside_literals.count("#include") == 1            # plan.h, its own
    assert re.findall(r"fw_board\[\] = (\"[^\n]*\");", source) == [c_string(HOSTILE)]
    plan = tmp_path / "plan.c"
    plan.write_text(source)
    fw = ROOT / "harness" / "firmware"
    proc = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-std=c11", "-S", "-o", "-",
                           f"-I{fw / 'core'}", f"-I{fw.parent / 'common'}", str(plan)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not any(line.strip().startswith(".incbin") for line in proc.stdout.splitlines())
    assert "hostname" not in proc.stderr


def test_a_vector_whose_output_the_firmware_does_not_return_is_no_kat():
    v = {"id": "v", "op": "sha256", "params": {"bytes": 3}, "in": {"msg": "616263"}, "out": {"digest": SHA256_ABC}}
    assert kat_from_vector(v).expect.hex() == SHA256_ABC
    assert kat_from_vector({**v, "op": "rsa-verify", "out": {"ok": "01"}}) is None     # the firmware returns `ct`


def test_two_vectors_with_one_id_are_refused_naming_the_second(tmp_path):
    vector = {"id": "mine-abc", "op": "sha256", "params": {"bytes": 3}, "in": {"msg": "616263"},
              "out": {"digest": SHA256_ABC}}
    path = tmp_path / "twice.json"
    path.write_text(json.dumps({"vectors": [vector, vector]}, indent=1))
    second = [n for n, line in enumerate(path.read_text().splitlines(), 1) if '"op"' in line][1]
    with pytest.raises(UsageError) as exc:
        load_vectors(extra=[str(path)])
    assert str(exc.value).startswith(f"{path}:{second}: vector 'mine-abc': id is used twice"), str(exc.value)


def test_a_file_of_many_vectors_names_the_line_of_the_bad_one(tmp_path):
    good = {"id": "", "op": "sha256", "params": {"bytes": 3}, "in": {"msg": "616263"}, "out": {"digest": SHA256_ABC}}
    vectors = [{**good, "id": f"v{i}"} for i in range(20000)] + [{**good, "id": "last", "out": {}}]
    path = tmp_path / "many.json"
    path.write_text("{\"vectors\": [\n" + ",\n".join(json.dumps(v) for v in vectors) + "\n]}\n")
    with pytest.raises(UsageError) as exc:
        load_vectors(extra=[str(path)])
    assert str(exc.value).startswith(f"{path}:20002: vector 'last': out is empty"), str(exc.value)

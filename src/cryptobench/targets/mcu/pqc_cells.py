"""Inputs and checks of ML-KEM (FIPS 203) / ML-DSA (FIPS 204) firmware cells, from the pure-Python
kyber-py and dilithium-py (the independent implementation the host cells' cross-check uses,
targets/pqc_check.py). A firmware image takes no requests, so the cross-check is made ahead: the
cell's inputs (keys, ciphertexts, signatures) come from that implementation, its output is compared
with that implementation's, and the rejection cases (a ciphertext or a signature with one bit
flipped, another message) go into the image as known-answer tests, checked on the target before
any cell is timed. Every input derives from the cell's seed (seeded.cell_seed), so a cell repeats."""
from __future__ import annotations

from collections.abc import Mapping

from ..pqc_check import DILITHIUM, KYBER, flip_bit, ml_dsa, ml_kem
from .firmware.plan import Inputs, Kat, fill


def pqc_cell(op: str, params: Mapping, seed: int) -> tuple[Inputs, dict]:
    """(the cell's inputs, its check: {"expect", "by", "kats"}) for an ml-kem-* / ml-dsa-* cell."""
    level = int(params["level"])
    s = lambda k: fill(32, seed * 8 + k)                 # noqa: E731 - the cell's 32-byte seeds
    if op.startswith("ml-kem-"):
        ref = ml_kem(level)
        ek, dk = ref._keygen_internal(s(0), s(1))
        if op == "ml-kem-keygen":
            return Inputs(op, params, {"d": s(0), "z": s(1)}), {"expect": ek + dk, "by": KYBER}
        k, c = ref._encaps_internal(ek, s(2))
        if op == "ml-kem-encaps":
            return Inputs(op, params, {"ek": ek, "m": s(2)}), {"expect": c + k, "by": KYBER}
        bad = flip_bit(c, seed)
        rejected = ref.decaps(dk, bad)
        assert rejected != k, "kyber-py's implicit rejection gave the sender's key"
        kat = Kat(f"{KYBER.split()[0]}-mlkem{level}-flipped-c", Inputs(op, params, {"dk": dk, "c": bad}), rejected)
        return Inputs(op, params, {"dk": dk, "c": c}), {"expect": k, "by": KYBER, "kats": [kat]}
    ref = ml_dsa(level)
    pk, sk = ref._keygen_internal(s(0))
    if op == "ml-dsa-keygen":
        return Inputs(op, params, {"seed": s(0)}), {"expect": pk + sk, "by": DILITHIUM}
    msg = fill(int(params.get("bytes", 59)), seed * 8 + 3)
    sig = ref._sign_internal(sk, b"\x00\x00" + msg, s(2))     # pure ML-DSA, empty context (FIPS 204 Alg. 2)
    if op == "ml-dsa-sign":
        return Inputs(op, params, {"sk": sk, "msg": msg, "rnd": s(2)}), {"expect": sig, "by": DILITHIUM}
    tag = f"{DILITHIUM.split()[0]}-mldsa{level}"
    kats = [Kat(f"{tag}-flipped-sig", Inputs(op, params, {"pk": pk, "msg": msg, "sig": flip_bit(sig, 40 + len(msg))}),
                b"\x00"),
            Kat(f"{tag}-other-msg", Inputs(op, params, {"pk": pk, "msg": flip_bit(msg, 0) if msg else b"\x00",
                                                         "sig": sig}), b"\x00")]
    return Inputs(op, params, {"pk": pk, "msg": msg, "sig": sig}), {"expect": b"\x01", "by": DILITHIUM, "kats": kats}

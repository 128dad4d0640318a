"""Cross-checks of ML-KEM (FIPS 203) and ML-DSA (FIPS 204) cells against an independent implementation,
the pure-Python kyber-py and dilithium-py (pip install 'cryptobench[pqc]'), in the same run as the
known-answer vectors: what the engine encapsulates decapsulates there to the same key and the other
way round, what it signs verifies there and the other way round, a ciphertext with one bit flipped
decapsulates to the implicit-rejection key (FIPS 203 Algorithm 18: a key other than the sender's, the
same on both sides), and a signature with one bit flipped is rejected.

`compute(op, params, inputs)` runs one op on the engine under test and returns its outputs (hex)."""
from __future__ import annotations

import os
from collections.abc import Callable

from ..core.extras import require

Compute = Callable[[str, dict, dict], dict]
KYBER = "kyber-py (pure-Python ML-KEM)"
DILITHIUM = "dilithium-py (pure-Python ML-DSA)"


def ml_kem(level: int):
    """kyber-py's ML-KEM parameter set (the `pqc` extra)."""
    mod = require("kyber_py.ml_kem", "pqc", "the ML-KEM cross-check")
    return getattr(mod, f"ML_KEM_{level}")


def ml_dsa(level: int):
    """dilithium-py's ML-DSA parameter set (the `pqc` extra)."""
    mod = require("dilithium_py.ml_dsa", "pqc", "the ML-DSA cross-check")
    return getattr(mod, f"ML_DSA_{level}")


def flip_bit(data: bytes, at: int) -> bytes:
    """`data` with the low bit of byte `at` (modulo its length) flipped."""
    out = bytearray(data)
    out[at % len(out)] ^= 0x01
    return bytes(out)


def check(op: str, params: dict, compute: Compute) -> tuple[bool, str]:
    """(passed, what was checked or what failed) for one ML-KEM / ML-DSA op."""
    level = int(params["level"])
    if op.startswith("ml-kem-"):
        return _check_kem(op, level, params, compute)
    return _check_dsa(op, level, params, compute)


def _check_kem(op: str, level: int, params: dict, compute: Compute) -> tuple[bool, str]:
    ref = ml_kem(level)
    if op == "ml-kem-keygen":
        d, z = os.urandom(32), os.urandom(32)
        got = compute(op, params, {"d": d.hex(), "z": z.hex()})
        ek, dk = ref._keygen_internal(d, z)
        if (got.get("ek"), got.get("dk")) != (ek.hex(), dk.hex()):
            return False, f"key pair from random seeds d, z differs from {KYBER}'s"
        fresh = compute(op, params, {})                     # a key pair from the engine's own randomness
        k, c = ref.encaps(bytes.fromhex(fresh["ek"]))
        mine = compute("ml-kem-decaps", params, {"dk": fresh["dk"], "c": c.hex()}).get("k")
        if mine != k.hex():
            return False, f"a key generated here does not decapsulate {KYBER}'s encapsulation to its key"
        return True, f"same key pair as {KYBER} for random seeds; a fresh key pair works with {KYBER}'s encapsulation"
    ek, dk = ref.keygen()
    if op == "ml-kem-encaps":
        m = os.urandom(32)
        got = compute(op, params, {"ek": ek.hex(), "m": m.hex()})
        k, c = ref._encaps_internal(ek, m)
        if (got.get("c"), got.get("k")) != (c.hex(), k.hex()):
            return False, f"ciphertext or key for random ek, m differs from {KYBER}'s"
        fresh = compute(op, params, {"ek": ek.hex()})
        if ref.decaps(dk, bytes.fromhex(fresh["c"])).hex() != fresh["k"]:
            return False, f"{KYBER} decapsulates the engine's encapsulation to another key"
        return True, f"same (c, K) as {KYBER} for random m; {KYBER} decapsulates a fresh encapsulation to its key"
    k, c = ref.encaps(ek)
    mine = compute(op, params, {"dk": dk.hex(), "c": c.hex()}).get("k")
    if mine != k.hex():
        return False, f"decapsulates {KYBER}'s encapsulation to another key"
    bad = flip_bit(c, int.from_bytes(os.urandom(2), "little"))
    rejected = compute(op, params, {"dk": dk.hex(), "c": bad.hex()}).get("k")
    if rejected == k.hex() or rejected != ref.decaps(dk, bad).hex():
        return False, ("a ciphertext with one bit flipped gives "
                       + ("the sender's key" if rejected == k.hex() else f"another key than {KYBER}'s implicit rejection"))
    return True, (f"decapsulates {KYBER}'s encapsulation to its key; one flipped ciphertext bit gives the "
                  f"implicit-rejection key, the same as {KYBER}'s")


def _check_dsa(op: str, level: int, params: dict, compute: Compute) -> tuple[bool, str]:
    ref = ml_dsa(level)
    msg = os.urandom(int(params.get("bytes", 59)))
    if op == "ml-dsa-keygen":
        seed = os.urandom(32)
        got = compute(op, params, {"seed": seed.hex()})
        pk, sk = ref._keygen_internal(seed)
        if (got.get("pk"), got.get("sk")) != (pk.hex(), sk.hex()):
            return False, f"key pair from a random seed xi differs from {DILITHIUM}'s"
        fresh = compute(op, params, {})
        sig = ref.sign(bytes.fromhex(fresh["sk"]), msg)
        if not ref.verify(bytes.fromhex(fresh["pk"]), msg, sig):
            return False, f"a signature {DILITHIUM} makes with a key generated here does not verify there"
        return True, f"same key pair as {DILITHIUM} for a random seed; a fresh key pair signs and verifies there"
    pk, sk = ref.keygen()
    if op == "ml-dsa-sign":
        rnd = os.urandom(32)
        got = compute(op, {**params, "bytes": len(msg)}, {"sk": sk.hex(), "msg": msg.hex(), "rnd": rnd.hex()})
        if got.get("sig") != ref._sign_internal(sk, b"\x00\x00" + msg, rnd).hex():
            return False, f"signature for a random rnd differs from {DILITHIUM}'s"
        hedged = bytes.fromhex(compute(op, {**params, "bytes": len(msg)}, {"sk": sk.hex(), "msg": msg.hex()})["sig"])
        if not ref.verify(pk, msg, hedged):
            return False, f"a hedged signature made here does not verify in {DILITHIUM}"
        if ref.verify(pk, msg, flip_bit(hedged, 40 + len(msg))):
            return False, f"{DILITHIUM} accepts the engine's signature with one bit flipped"
        return True, (f"same signature as {DILITHIUM} for a given rnd; a hedged one verifies there, "
                      "and with one bit flipped does not")
    sig = ref.sign(sk, msg)
    args = lambda s, m=msg: {"pk": pk.hex(), "msg": m.hex(), "sig": s.hex()}
    if compute(op, params, args(sig)).get("ok") != "01":
        return False, f"rejects a valid signature made by {DILITHIUM}"
    if compute(op, params, args(flip_bit(sig, 40 + len(msg)))).get("ok") != "00":
        return False, "accepts a signature with one bit flipped"
    if compute(op, params, args(sig, flip_bit(msg, 0) if msg else b"\x00")).get("ok") != "00":
        return False, "accepts a signature over another message"
    return True, f"accepts {DILITHIUM}'s signature; rejects it with one bit flipped, or over another message"

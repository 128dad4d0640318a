"""Known-answer vectors are data (docs/promises.md, "Recipes and vectors are data"): a vector file
passed between people is checked against the catalog before any value is used. Its op is a
catalog op with a known-answer check; every parameter is one the op has, with a value the catalog
allows (an enumerated curve is one of the catalog's, a number a whole number in range); every
input and output name is one of the op's (the `compute` table of docs/protocol.md), every byte
string even-length hex of the length the op and its parameters give; `out` names at least one
output, so a vector always checks something, and `ok` (an output of the verify ops only) is 00 or
01. A refused vector is one UsageError line naming the file, the line, the vector and the field."""
from __future__ import annotations

import re
from pathlib import Path

from .ops import OPS, Op
from ..core.errors import UsageError
from ..core.printable import printable, quoted

# op -> (its compute inputs, its compute outputs): docs/protocol.md, "compute"
_CIPHER = (("key", "iv", "nonce", "aad", "msg"), ("ct",))
_SHA = (("msg",), ("digest",))
_DRBG = (("entropy", "nonce", "perso", "entropy_reseed", "add_reseed", "add1", "add2"), ("bits",))
IO: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    **{op.id: _CIPHER for op in OPS.values() if op.family in ("aes", "aead", "stream")},
    **{op.id: _SHA for op in OPS.values() if op.family == "sha"},
    **{op.id: _DRBG for op in OPS.values() if op.family == "drbg"},
    "ecdh-keygen": (("d",), ("q",)),
    "ecdh-shared-secret": (("d", "peer"), ("z",)),
    "ecdsa-sign": (("d", "hash"), ("sig",)),
    "ecdsa-verify": (("q", "hash", "sig"), ("ok",)),
    "rsa-sign": (("n", "e", "d", "hash"), ("sig",)),
    "rsa-verify": (("n", "e", "hash", "sig"), ("ok",)),
    "reference-loop": (("v",), ("v",)),
    # FIPS 203 / 204 names (as in NIST's ACVP files): seeds d, z (ML-KEM) and xi as `seed` (ML-DSA); rnd:
    # ML-DSA's 32 signing random bytes (all zero: the deterministic variant)
    "ml-kem-keygen": (("d", "z"), ("ek", "dk")),
    "ml-kem-encaps": (("ek", "m"), ("c", "k")),
    "ml-kem-decaps": (("dk", "c"), ("k",)),
    "ml-dsa-keygen": (("seed",), ("pk", "sk")),
    "ml-dsa-sign": (("sk", "msg", "rnd"), ("sig",)),
    "ml-dsa-verify": (("pk", "msg", "sig"), ("ok",)),
}
# ops whose output is fresh randomness every time: no known answer can check them (targets/verify.py
# cross-checks them instead)
RANDOM_OUTPUT = {"ecc-keygen": "a fresh key pair", "rsa-keygen": "a fresh key pair", "random": "random bytes",
                 "ecjpake-exchange": "a secret from fresh random values"}
VECTOR_KEYS = {"id", "op", "params", "in", "out", "source", "construction"}
# a CTR_DRBG vector's construction (its "construction" field; absent: "df"). A DRBG engine is checked
# against the vectors of its own construction only (a recipe's ctr_drbg key; every host engine: df)
DRBG_CONSTRUCTIONS = {"df": "with the derivation function (SP 800-90A 10.3.2), as Mbed TLS and OpenSSL build it",
                      "no-df": "without a derivation function (SP 800-90A 10.2.1.3.1, 10.2.1.4.1: the entropy input "
                               "is seedlen (48 B for AES-256) long and used as given, no nonce), as TI's AESCTRDRBG"}
NODF_SEED_BYTES = 48               # AES-256 seedlen: key (32 B) + block (16 B), SP 800-90A Table 3
# the parameters that choose which cells a vector checks (verify.matching_vectors): a vector names
# each its op has, or it would be run against every key size, curve or modulus
SELECTING = ("key_bits", "curve", "rsa_bits", "tag_bytes", "nonce_bytes", "level")
MAX_FIELD_BYTES = 1 << 20          # one input or output: 1 MiB (the bundled vectors' longest is 1 KiB)
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_ID = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,120}")
# curve -> (private scalar, public key, shared secret, ECDSA signature) in bytes
CURVE_BYTES = {"p256": (32, 65, 32, 64), "p521": (66, 133, 66, 132), "x25519": (32, 32, 32, 0)}
# FIPS 203 Table 3 (ek, dk, c) / FIPS 204 Table 2 (pk, sk, sig) lengths in bytes, by level
MLKEM_BYTES = {512: (800, 1632, 768), 768: (1184, 2400, 1088), 1024: (1568, 3168, 1568)}
MLDSA_BYTES = {44: (1312, 2560, 2420), 65: (1952, 4032, 3309), 87: (2592, 4896, 4627)}
DIGEST_BYTES = {"sha1": 20, "sha224": 28, "sha256": 32, "sha384": 48, "sha512": 64}


class _Where:
    """Names a vector in its errors: `FILE:LINE: vector 'ID'` (or `#N` before its id is known)."""

    def __init__(self, path: Path, line: int, index: int):
        self.head, self.name = f"{path}:{line}", f"#{index}"

    def refuse(self, what: str) -> UsageError:
        return UsageError(f"{self.head}: vector {self.name}: {what}")


def check_vector(path: Path, line: int, index: int, v: object) -> dict:
    """The vector, checked (see the module's docstring); its params hold the catalog's values."""
    where = _Where(path, line, index)
    if not isinstance(v, dict):
        raise where.refuse("must be an object with op, in and out (src/cryptobench/catalog/vectors/README.md)")
    if "id" in v:
        if not (isinstance(v["id"], str) and _ID.fullmatch(v["id"])):
            raise where.refuse(f"id must be a text of 1 to 120 printable characters, got {quoted(v['id'])}")
        where.name = repr(v["id"])
    missing = [k for k in ("op", "in", "out") if k not in v]
    if missing:
        raise where.refuse(f"lacks {', '.join(missing)}")
    unknown = sorted(set(v) - VECTOR_KEYS, key=str)
    if unknown:
        raise where.refuse(f"{quoted(unknown[0])} is not a field of a vector; valid: {', '.join(sorted(VECTOR_KEYS))}")
    if "source" in v and not isinstance(v["source"], str):
        raise where.refuse(f"source must be a text, got {quoted(v['source'])}")
    op = _op(where, v["op"])
    if "construction" in v:
        if op.family != "drbg":
            raise where.refuse(f"construction is a field of CTR_DRBG vectors only; {op.id} has none")
        if v["construction"] not in DRBG_CONSTRUCTIONS:
            raise where.refuse(f"construction must be one of {', '.join(DRBG_CONSTRUCTIONS)}, got "
                               f"{quoted(v['construction'])}")
    params = _params(where, op, v.get("params", {}))
    unnamed = [s for s in SELECTING if op.param(s) is not None and s not in params]
    if unnamed:
        raise where.refuse(f"params.{unnamed[0]} is missing: a vector of {op.id} names "
                           + ", ".join(s for s in SELECTING if op.param(s) is not None) + ", the parameters that "
                           "choose the cells it checks")
    if op.id in ("aes-ecb-encrypt", "aes-cbc-encrypt") and params.get("bytes", 0) % 16:
        raise where.refuse(f"params.bytes is {params['bytes']}; {op.id} takes whole 16-byte blocks (no padding)")
    ins, outs = IO[op.id]
    values = {part: _hex_fields(where, op.id, part, v[part], names) for part, names in (("in", ins), ("out", outs))}
    if not values["out"]:
        raise where.refuse(f"out is empty: a vector names at least one output of {op.id} ({', '.join(outs)}) "
                           "with its expected value, or it checks nothing")
    if values["out"].get("ok") not in (None, b"\x00", b"\x01"):
        raise where.refuse(f"out.ok is {quoted(v['out']['ok'])}; expected 01 (valid) or 00 (invalid)")
    _lengths(where, op, {**op.defaults(), **params}, params, values)
    if construction_of(v) == "no-df":
        _nodf_lengths(where, values["in"])
    return {**v, "params": params}


def construction_of(v: dict) -> str:
    """A CTR_DRBG vector's construction: its field, else "df" (DRBG_CONSTRUCTIONS)."""
    return v.get("construction", "df")


def _nodf_lengths(where: _Where, ins: dict[str, bytes]) -> None:
    """SP 800-90A 10.2.1.3.1 / 10.2.1.4.1 without a derivation function: the entropy inputs are
    seedlen long, there is no nonce, and personalization and additional inputs are at most seedlen."""
    for name in ("entropy", "entropy_reseed"):
        if name in ins and len(ins[name]) != NODF_SEED_BYTES:
            raise where.refuse(f"in.{name} is {len(ins[name])} bytes; a no-df AES-256 CTR_DRBG takes exactly "
                               f"{NODF_SEED_BYTES} (seedlen)")
    if ins.get("nonce"):
        raise where.refuse("in.nonce is given; a CTR_DRBG without a derivation function takes no nonce")
    for name in ("perso", "add_reseed", "add1", "add2"):
        if len(ins.get(name, b"")) > NODF_SEED_BYTES:
            raise where.refuse(f"in.{name} is {len(ins[name])} bytes; without a derivation function it is at most "
                               f"{NODF_SEED_BYTES} (seedlen)")


def _op(where: _Where, name: object) -> Op:
    if not isinstance(name, str) or name not in OPS:
        raise where.refuse(f"op: unknown op {quoted(name)}; expected a catalog op (cryptobench list ops)")
    if name in RANDOM_OUTPUT:
        raise where.refuse(f"op: {name} returns {RANDOM_OUTPUT[name]} each time, so no known answer can check it "
                           "(its outputs are cross-checked instead)")
    return OPS[name]


def _params(where: _Where, op: Op, params: object) -> dict:
    """The vector's parameters, each one the op has with a value the catalog allows."""
    if not isinstance(params, dict):
        raise where.refuse("params must be an object of catalog parameters")
    out = {}
    for name, value in params.items():
        param = op.param(name)
        if param is None:
            raise where.refuse(f"params.{printable(name, keep_newlines=False)[:40]}: {quoted(name)} is not a parameter "
                               f"of {op.id}; valid: {', '.join(op.param_names) or '(none)'}")
        number = isinstance(param.default, int)
        if number and not (isinstance(value, int) and not isinstance(value, bool)):
            raise where.refuse(f"params.{name} must be a whole number, got {quoted(value)}")
        if not number and not isinstance(value, str):
            raise where.refuse(f"params.{name} must be a text, got {quoted(value)}")
        if param.choices and value not in param.choices:
            raise where.refuse(f"params.{name} must be one of {', '.join(map(str, param.choices))}; got {quoted(value)}")
        if number and not 0 <= value <= MAX_FIELD_BYTES * 8:
            raise where.refuse(f"params.{name} must be between 0 and {MAX_FIELD_BYTES * 8}, got {value}")
        out[name] = value
    return out


def _hex_fields(where: _Where, op: str, part: str, fields: object, names: tuple[str, ...]) -> dict[str, bytes]:
    """`in` or `out`: each name one of the op's, each value even-length hex of at most 1 MiB."""
    if not isinstance(fields, dict):
        raise where.refuse(f"{part} must map names to lowercase hex strings")
    out = {}
    for name, text in fields.items():
        if name not in names:
            raise where.refuse(f"{part}.{printable(name, keep_newlines=False)[:40]} is not an "
                               f"{'input' if part == 'in' else 'output'} of {op}; valid: {', '.join(names)}")
        if not isinstance(text, str) or len(text) > 2 * MAX_FIELD_BYTES or not _HEX.fullmatch(text):
            what = (f"longer than {MAX_FIELD_BYTES} bytes" if isinstance(text, str) and len(text) > 2 * MAX_FIELD_BYTES
                    else f"expected an even number of hex digits, got {quoted(text)}")
            raise where.refuse(f"{part}.{name} is not hex: {what}")
        out[name] = bytes.fromhex(text)
    return out


def _lengths(where: _Where, op: Op, p: dict, given: dict, values: dict) -> None:
    """Every byte string has the length the op and its parameters give (where they give one)."""
    for part in ("in", "out"):
        for name, data in values[part].items():
            want = expected_length(op, p, given, name, values["in"])
            if want is not None and len(data) not in want:
                shown_want = (f"{want[0]}" if len(want) == 1 else f"a multiple of {want.step}" if want.step > 1
                              else f"{want[0]} to {want[-1]}")
                raise where.refuse(f"{part}.{name} has {len(data)} bytes, expected {shown_want} for {op.id} with "
                                   + (", ".join(f"{k}={v}" for k, v in given.items()) or "its default parameters"))


# long: one table of lengths, op family by op family, read top to bottom
def expected_length(op: Op, p: dict, given: dict, name: str, ins: dict) -> range | None:
    """The lengths `name` may have in a vector of `op` with parameters `p` (`given`: those the
    vector names; a payload length it leaves out is not checked); None: any (up to 1 MiB)."""
    exact = lambda n: range(n, n + 1)
    if name == "msg" and "bytes" in given and op.family != "drbg":
        return exact(given["bytes"])
    if name == "aad" and "aad_bytes" in given:
        return exact(given["aad_bytes"])
    if op.family in ("aes", "aead", "stream"):
        if name == "msg" and op.id in ("aes-ecb-encrypt", "aes-cbc-encrypt"):      # no padding
            return range(0, MAX_FIELD_BYTES + 1, 16)
        if name == "key":
            return exact(op.key_len(p))
        if name in ("iv", "nonce"):
            return exact(op.iv_len(p)) if name == op.iv else exact(0)
        if name == "ct":
            untagged = op.family == "stream" or op.id in ("aes-ecb-encrypt", "aes-cbc-encrypt", "aes-ctr-encrypt")
            tag = 0 if untagged else int(p.get("tag_bytes", 16))
            return exact(len(ins.get("msg", b"")) + tag)
        return None
    if op.family == "sha":
        return exact(DIGEST_BYTES[op.id]) if name == "digest" else None
    if op.family == "drbg":
        return (exact(given["bytes"]) if "bytes" in given else range(1, 65537)) if name == "bits" else range(0, 257)
    if op.family in ("ecdh", "ecdsa"):
        scalar, public, secret, sig = CURVE_BYTES[p["curve"]]
        return {"d": exact(scalar), "q": exact(public), "peer": exact(public), "z": exact(secret), "sig": exact(sig),
                "hash": range(1, 65), "ok": exact(1)}.get(name)
    if op.family == "rsa":
        k = int(p["rsa_bits"]) // 8
        return {"n": exact(k), "sig": exact(k), "d": range(1, k + 1), "e": range(1, k + 1), "hash": exact(32),
                "ok": exact(1)}.get(name)
    if op.family == "ml-kem":
        ek, dk, c = MLKEM_BYTES[int(p["level"])]
        return {"d": exact(32), "z": exact(32), "m": exact(32), "k": exact(32), "ek": exact(ek), "dk": exact(dk),
                "c": exact(c)}.get(name)
    if op.family == "ml-dsa":
        pk, sk, sig = MLDSA_BYTES[int(p["level"])]
        return {"seed": exact(32), "rnd": exact(32), "pk": exact(pk), "sk": exact(sk), "sig": exact(sig),
                "ok": exact(1)}.get(name)
    if op.id == "reference-loop":
        return exact(32)
    return None

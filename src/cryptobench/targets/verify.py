"""Verify before timing: known-answer vectors and cross-engine checks.

Every (engine, op, params) cell passes this gate before it is timed. Ops with published vectors
(NIST / RFC, in `vectors/*.json`) are checked against all vectors that match the cell's selecting
parameters (key size, curve, modulus, tag and nonce length). Ops whose output is random (key
generation, ECDSA signatures, EC-JPAKE, random bytes) are checked against another engine in the
same run or against plain arithmetic. An op with neither never gets a timing.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UsageError
from ..core.files import read_utf8
from ..core.paths import PACKAGE_DIR
from ..catalog.vector_check import SELECTING, check_vector, construction_of
from ..core.extras import require

VECTORS_DIR = PACKAGE_DIR / "catalog" / "vectors"
MAX_FILE_BYTES = 16 << 20        # one vector file (the bundled ones are at most 40 KB)
CHECKER_PREFERENCE = ("openssl-hw", "mbedtls", "libsodium", "openssl-sw")
DRBG_OPS = ("ctr-drbg-instantiate", "ctr-drbg-reseed", "ctr-drbg-generate")
VERIFY_OPS = ("ecdsa-verify", "rsa-verify", "ml-dsa-verify")      # the ops whose output is `ok`


@dataclass
class Verdict:
    kat: str          # "pass" | "fail"
    detail: str       # what was checked, or why it failed
    unsupported: bool = False


def gate(checks: Iterable[Verdict | None], nothing: str) -> Verdict:
    """No number without a pass, for every target: the first failed check fails the cell (the
    checks after it are not run when `checks` is a generator); no check at all (None: a check that
    does not apply) fails it with `nothing`; otherwise it passes with every check's detail."""
    passed = []
    for verdict in checks:
        if verdict is None:
            continue
        if verdict.kat != "pass":
            return verdict
        passed.append(verdict.detail)
    return Verdict("pass", "; ".join(passed)) if passed else Verdict("fail", nothing)


def vectors_dir() -> Path:
    """The base set of known-answer vectors: the bundled vectors/, or CRYPTOBENCH_VECTORS (a
    directory that replaces them). `run --vectors PATH` adds a user's files on top of this set."""
    return Path(os.environ.get("CRYPTOBENCH_VECTORS", VECTORS_DIR))


def load_vectors(directory: Path | None = None, extra: list | tuple = ()) -> list[dict]:
    """Every vector of the base directory, then of each `extra` folder or file (`run --vectors
    PATH`: the user's own, same format, docs/own-library.md). Every vector is checked against the
    catalog (catalog/vector_check.py), the bundled ones too; a file that fails is a UsageError naming the
    file, the line, the vector and the field."""
    directory = directory or vectors_dir()
    vectors = _load_dir(directory, user=False)
    for more in extra:
        vectors += _load_dir(Path(more), user=True)
    return vectors


def _load_dir(directory: Path, user: bool) -> list[dict]:
    """The vectors of a folder's *.json files, or (a user's --vectors) of one .json file."""
    if user and directory.is_file():
        paths = [directory]
    elif directory.is_dir():
        paths = sorted(directory.glob("*.json"))
    else:
        raise UsageError(f"--vectors: '{directory}' is not a directory or a file (expected a folder of *.json "
                         "vector files, or one such file)" if user else
                         f"CRYPTOBENCH_VECTORS: '{directory}' is not a directory of *.json vector files")
    if user and not paths:
        raise UsageError(f"--vectors: '{directory}' holds no *.json vector file")
    vectors = []
    for path in paths:
        vectors += _load_file(path, user)
    return vectors


def _load_file(path: Path, user: bool) -> list[dict]:
    """One vector file: a regular file of at most MAX_FILE_BYTES of UTF-8 JSON, an object whose
    "vectors" list holds (for a user's file, at least) one vector, each checked."""
    try:
        info = path.stat()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if info.st_size > MAX_FILE_BYTES:
        raise UsageError(f"{path}: {info.st_size} bytes; a vector file holds at most {MAX_FILE_BYTES} bytes")
    text = read_utf8(path, regular="a .json vector file")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: malformed vector file ({exc.msg})") from None
    except RecursionError:                          # arrays nested 100,000 deep
        raise UsageError(f"{path}:1: malformed vector file (arrays or objects nested too deep)") from None
    except ValueError as exc:                       # a number of 5,000 digits
        raise UsageError(f"{path}:1: malformed vector file ({str(exc).split(':')[0]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("vectors", []), list):
        raise UsageError(f"{path}:1: expected an object with a \"vectors\" list (src/cryptobench/catalog/vectors/README.md)")
    if user and not doc.get("vectors"):
        raise UsageError(f"{path}:1: the \"vectors\" list is empty; expected at least one vector")
    vectors, lines, ids = [], _vector_lines(text), set()
    for i, v in enumerate(doc.get("vectors", [])):
        line = lines[i] if i < len(lines) else 1
        v = check_vector(path, line, i, v)
        v.setdefault("id", f"{path.stem}#{i}")
        if v["id"] in ids:          # a cell's detail names the vectors that checked it: one name, one vector
            raise UsageError(f"{path}:{line}: vector {v['id']!r}: id is used twice in this file; give each its own")
        ids.add(v["id"])
        v["file"] = path.name
        vectors.append(v)
    return vectors


def _vector_lines(text: str) -> list[int]:
    """The line of each `"op":` key of a vector file, in order (vectors are objects with one op);
    one pass, so a file of 100,000 vectors costs no more than reading it."""
    lines, line, at = [], 1, 0
    while (found := text.find('"op"', at)) >= 0:
        line += text.count("\n", at, found)
        lines.append(line)
        at = found + 1
    return lines


# Ops that no host engine implements: a maintained Python package computes the same output, so the
# target's output is cross-checked against it (pip install 'cryptobench[reference]': pycryptodome).
NO_REFERENCE = {
    "norx32-4-1-encrypt": "no host engine implements NORX and no maintained Python package does (NORX, a CAESAR "
                          "finalist, was never standardised; give known-answer vectors with --vectors PATH)",
}


def python_reference(op: str, params, values: dict) -> tuple[bytes, str] | None:
    """The output of `op` on `values` (name -> bytes) computed by a maintained Python package,
    and its name; None when there is no such reference for the op. A MissingExtra when the
    package is not installed."""
    if op == "chacha20-encrypt":
        return _chacha20_reference(values)
    if op != "aes-eax-encrypt":
        return None
    aes = require("Crypto.Cipher.AES", "reference", "the AES-EAX host reference")
    import Crypto
    nonce = values.get("iv", values.get("nonce", b""))
    cipher = aes.new(values["key"], aes.MODE_EAX, nonce=nonce, mac_len=int(params.get("tag_bytes", 16) or 16))
    if values.get("aad"):
        cipher.update(values["aad"])
    ct, tag = cipher.encrypt_and_digest(values.get("msg", b""))
    return ct + tag, f"pycryptodome {Crypto.__version__} (AES-EAX)"


def _chacha20_reference(values: dict) -> tuple[bytes, str]:
    """Raw ChaCha20 (RFC 8439 §2.4): the catalog's iv is the block counter (32-bit little-endian)
    and the 12-byte nonce; pycryptodome takes the nonce, and the counter as a seek to 64 bytes a block."""
    chacha = require("Crypto.Cipher.ChaCha20", "reference", "the ChaCha20 host reference")
    import Crypto
    iv = values["iv"]
    cipher = chacha.new(key=values["key"], nonce=iv[4:])
    cipher.seek(64 * int.from_bytes(iv[:4], "little"))
    return cipher.encrypt(values.get("msg", b"")), f"pycryptodome {Crypto.__version__} (ChaCha20)"


def _random_iv(op: str, n: int) -> bytes:
    """A random IV or nonce; ChaCha20's block counter (its first 4 bytes, little-endian) below 2^31, so
    that no message up to 2^31 blocks passes 2^32 - 1, which engines refuse (harness/common/cb_chacha20.h)."""
    iv = bytearray(os.urandom(n))
    if op == "chacha20-encrypt":
        iv[3] &= 0x7F
    return bytes(iv)


def matching_vectors(vectors: list[dict], op: str, params: dict, construction: str = "df") -> list[dict]:
    """The vectors that check a cell of `op` with `params`: the op's own (a CTR_DRBG vector's whole
    flow checks all three DRBG ops) with its selecting parameters, and for a DRBG only those of the
    engine's `construction` (every host engine's CTR_DRBG has the derivation function)."""
    ops = DRBG_OPS if op in DRBG_OPS else (op,)
    out = []
    for v in vectors:
        if v["op"] not in ops or (op in DRBG_OPS and construction_of(v) != construction):
            continue
        if all(v["params"].get(k, params.get(k)) == params.get(k) for k in SELECTING if k in params):
            out.append(v)
    return out


def _pkcs1_sha256_em(digest: bytes, k: int) -> int:
    prefix = bytes.fromhex("3031300d060960864801650304020105000420")
    t = prefix + digest
    return int.from_bytes(b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t, "big")


HEALTH_BYTES = 2500                 # FIPS 140-2's monobit test: 20,000 bits


def health_failure(draw: bytes) -> str | None:
    """Why 2,500 random bytes fail the FIPS 140-2 monobit or a repetition count test; None if they pass."""
    ones = sum(bin(x).count("1") for x in draw)
    if not 9725 < ones < 10275:
        return f"monobit test failed: {ones} ones in 20000 bits (FIPS 140-2 bounds)"
    return repetition_failure(draw)


def repetition_failure(draw: bytes) -> str | None:
    """Why random bytes fail the repetition count test (a byte repeated 5 times running); None if not."""
    run = longest = 1
    for x, y in zip(draw, draw[1:]):
        run = run + 1 if x == y else 1
        longest = max(longest, run)
    if longest >= 5:
        return f"repetition count test failed: a byte repeated {longest} times"
    return None

"""Seeded inputs for firmware cells, so the same cell measures the same work in every run.

A run's seed (--seed, default DEFAULT_SEED, stored in run.options.seed) and a cell's op and
parameters give the cell's own seed (cell_seed): it picks the ECC keys, the ECDSA hash and the
signature an ecdsa-verify cell checks, and it starts the firmware's fw_random stream (ECDSA
nonces, key generation; core/main.c) at the cell's start. ECC timing depends on the scalars'
bits, so inputs that changed from run to run moved the cycles of identical runs by a few percent.
Not a secure RNG: benchmark inputs only."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from .plan import fill

DEFAULT_SEED = 1        # a run without --seed: every run of a cell measures the same inputs
# the group orders (n), big-endian: SEC 2 v2.0 §2.4.2 (secp256r1) and §2.6.1 (secp521r1)
ORDER = {"p256": int("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16),
         "p521": int("01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
                     "fa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409", 16)}
SCALAR_BYTES = {"p256": 32, "p521": 66, "x25519": 32}


def cell_seed(seed: int, op: str, params: Mapping) -> int:
    """A cell's seed (32 bits, as the firmware's plan stores it): the run's seed and the cell's
    op and parameters, so a cell's inputs do not depend on which other cells the run has."""
    text = json.dumps([int(seed), op, sorted((str(k), str(v)) for k, v in params.items())])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def scalar(curve: str, seed: int) -> bytes:
    """A private scalar in [1, n-1] (any 32 bytes for X25519, which clamps), from `seed`."""
    size = SCALAR_BYTES[curve]
    raw = fill(size + 8, seed)        # 64 bits more than n: the reduction's bias is negligible
    if curve not in ORDER:
        return raw[:size]
    n = ORDER[curve]
    return (int.from_bytes(raw, "big") % (n - 1) + 1).to_bytes(size, "big")


def ecdsa_signature(curve: str, d: bytes, digest: bytes, k: bytes, kq: bytes) -> bytes:
    """r||s of `digest` under `d` with nonce `k`, where `kq` = 04||X||Y is k·G (the host's
    public-from-private computes it): r = X mod n, s = k^-1 (e + r·d) mod n (FIPS 186-5 §6.4.1).
    The digest is no longer than n here (32 B on P-256, 64 B on P-521), so e is all of it."""
    n, size = ORDER[curve], SCALAR_BYTES[curve]
    x = int.from_bytes(kq[1:1 + size], "big")
    r = x % n
    e = int.from_bytes(digest, "big")
    s = pow(int.from_bytes(k, "big"), -1, n) * (e + r * int.from_bytes(d, "big")) % n
    if r == 0 or s == 0:
        raise ValueError("degenerate signature: choose another seed")
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")

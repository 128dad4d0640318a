"""The operation catalog: stable operation ids, their parameters and what they mean.

An operation id never changes meaning; every engine and target names work by these ids, and
results are stored under them. Parameters have a type, a default, and (where finite) the values
that are allowed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import UsageError


@dataclass(frozen=True)
class Param:
    name: str
    default: object
    choices: tuple = ()          # empty: any non-negative integer
    doc: str = ""
    # A harness applies `default` itself when a request leaves this parameter out; any other
    # parameter left out reads as absent there (-1, or "" for text). See harness_default().
    harness_default: bool = False

    def coerce(self, raw: object, where: str) -> object:
        """Turn a command-line or suite value into the parameter's type, or raise UsageError."""
        if isinstance(self.default, int) and not isinstance(self.default, bool):
            # true is not 1 and 64.5 is not 64: a value that is not a whole number is refused, not rounded
            whole = (isinstance(raw, int) and not isinstance(raw, bool)) or (isinstance(raw, float) and raw.is_integer())
            try:
                value = int(raw) if whole or isinstance(raw, str) else None
            except (TypeError, ValueError):
                value = None
            if value is None:
                raise UsageError(f"{where}: parameter '{self.name}' expects an integer, got {raw!r}")
            if value < 0:
                raise UsageError(f"{where}: parameter '{self.name}' must be >= 0, got {value}")
        else:
            value = str(raw)
        if self.choices and value not in self.choices:
            valid = ", ".join(str(c) for c in self.choices)
            raise UsageError(f"{where}: parameter '{self.name}' must be one of {valid}; got {raw!r}")
        return value


KEY_BITS = Param("key_bits", 128, (128, 192, 256), "AES key length in bits")
BYTES = Param("bytes", 64, (), "payload (message) length in bytes")
AAD = Param("aad_bytes", 0, (), "associated data length in bytes")
TAG = Param("tag_bytes", 16, (4, 6, 8, 10, 12, 14, 16), "CCM tag length in bytes", harness_default=True)
REKEY = Param("rekey", 0, (0, 1), "1: set the key again before every operation (the key schedule is "
              "part of the timed work, as in `openssl speed -aead`); 0: once per cell", harness_default=True)
NONCE = Param("nonce_bytes", 13, (7, 8, 9, 10, 11, 12, 13), "CCM nonce length in bytes (15 - L: 11 is L = 4, "
              "as in the Cifra study; 13 is L = 2)", harness_default=True)
# EAX takes a nonce of any length (Bellare, Rogaway, Wagner); 16 B is the EAX paper's test vectors', 12 B the
# Cifra study's. A harness reads a left-out nonce_bytes as CCM's 13 (one value per name, cb_ops.h); the
# orchestrator always sends the op's own, resolved value, so EAX requests and plans carry theirs.
EAX_NONCE = Param("nonce_bytes", 16, tuple(range(1, 33)), "EAX nonce length in bytes (any length; 1-32 here)",
                  harness_default=True)
ECDH_CURVE = Param("curve", "p256", ("p256", "p521", "x25519"), "elliptic curve")
ECDSA_CURVE = Param("curve", "p256", ("p256", "p521"), "elliptic curve")
JPAKE_CURVE = Param("curve", "p256", ("p256",), "elliptic curve")
RSA_BITS = Param("rsa_bits", 2048, (1024, 2048, 3072, 4096), "RSA modulus length in bits")
DRBG_BYTES = Param("bytes", 32, (), "bytes generated per request")
RANDOM_SOURCE = Param("source", "library", ("library", "getrandom", "rdrand", "rdseed", "hwrng"),
                      "where random bytes come from: the engine's own CSPRNG, or an OS/CPU source",
                      harness_default=True)
# FIPS 203 / 204 parameter sets, by the number in their names (ML-KEM-768, ML-DSA-65)
MLKEM_LEVEL = Param("level", 768, (512, 768, 1024), "ML-KEM parameter set: ML-KEM-512, -768 or -1024 (FIPS 203)")
MLDSA_LEVEL = Param("level", 65, (44, 65, 87), "ML-DSA parameter set: ML-DSA-44, -65 or -87 (FIPS 204)")
# 59 bytes is pqm4's MLEN (mupq's speed benchmark), so its published signing rows compare
MLDSA_BYTES = Param("bytes", 59, (), "message length in bytes (default 59: pqm4's MLEN)")


@dataclass(frozen=True)
class Op:
    id: str
    family: str
    params: tuple[Param, ...]
    title: str
    payload: bool = False        # has a `bytes` payload: throughput and cycles/byte apply
    halve: bool = False          # reported time is half the measured one (both sides of a protocol)
    reference: str = ""
    extra: dict = field(default_factory=dict)
    key_bytes: int = 0           # fixed key length, for ciphers without a key_bits parameter
    iv: str = ""                 # the compute input that carries the IV or nonce ("": none)
    iv_bytes: int = 0            # its length, unless the op has a nonce_bytes parameter
    # timed executions per microcontroller cell by default, for an op whose cost differs from one
    # execution to the next by design (a rejection loop): its distribution is the result, so one
    # number per cell (or the simulator's 2 deterministic repetitions) would hide it; 0: the plan's
    executions: int = 0

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def key_len(self, params: dict) -> int:
        """Key length in bytes: key_bits / 8 where the op has that parameter, else key_bytes."""
        p = self.param("key_bits")
        return int(params.get("key_bits", p.default)) // 8 if p is not None else self.key_bytes

    def iv_len(self, params: dict) -> int:
        """Length of the IV or nonce input (0: the op has none): nonce_bytes where the op has
        that parameter, else iv_bytes."""
        if not self.iv:
            return 0
        p = self.param("nonce_bytes")
        return int(params.get("nonce_bytes", p.default)) if p is not None else self.iv_bytes


def _aes(mode: str, title: str, aead: bool = False, ccm: bool = False, iv: str = "iv", iv_bytes: int = 16,
         nonce: Param | None = None) -> Op:
    params = [KEY_BITS, BYTES]
    if aead:
        params.append(AAD)
    if ccm:
        params += [TAG, NONCE]
    elif nonce is not None:
        params.append(nonce)
    params.append(REKEY)
    return Op(f"aes-{mode}-encrypt", "aes", tuple(params), title, payload=True, iv=iv, iv_bytes=iv_bytes)


OPS: dict[str, Op] = {op.id: op for op in [
    _aes("ecb", "AES-ECB encrypt", iv="", iv_bytes=0),
    _aes("cbc", "AES-CBC encrypt"),
    _aes("ctr", "AES-CTR encrypt"),
    _aes("ccm", "AES-CCM encrypt+tag", aead=True, ccm=True, iv="nonce", iv_bytes=0),
    _aes("gcm", "AES-GCM encrypt+tag", aead=True, iv_bytes=12),
    _aes("eax", "AES-EAX encrypt+tag (16 B tag)", aead=True, iv="nonce", iv_bytes=0, nonce=EAX_NONCE),
    Op("chacha20-poly1305-encrypt", "aead", (BYTES, AAD, REKEY), "ChaCha20-Poly1305 encrypt+tag",
       payload=True, reference="RFC 8439", key_bytes=32, iv="nonce", iv_bytes=12),
    # Raw ChaCha20 (no tag): the 16-byte iv is the 32-bit little-endian initial block counter followed
    # by the 12-byte nonce, the form OpenSSL's EVP_chacha20 takes (RFC 8439 §2.3's state words 12-15).
    Op("chacha20-encrypt", "stream", (BYTES, REKEY), "ChaCha20 encrypt (no tag)", payload=True,
       reference="RFC 8439 §2.4", key_bytes=32, iv="iv", iv_bytes=16),
    Op("norx32-4-1-encrypt", "aead", (BYTES, AAD), "NORX32-4-1 v3.0 encrypt+tag", payload=True,
       reference="NORX v3.0 specification (Aumasson, Jovanovic, Neves)", key_bytes=16, iv="nonce", iv_bytes=16),
    # The NORX of 2014-2015 is another function (other rate, nonce and initialisation): the Cifra study
    # measured Cifra's implementation of it (64-bit nonce, 40-byte blocks as the study's chart shows). No
    # bundled library implements either version, and no maintained Python package has one.
    Op("norx32-4-1-v1-encrypt", "aead", (BYTES, AAD),
       "NORX32-4-1 v1.0 encrypt+tag (CAESAR round 1, 2014; 8 B nonce, as Cifra 2015)", payload=True,
       reference="NORX v1.0 specification (Aumasson, Jovanovic, Neves, CAESAR round 1), as implemented by "
                 "Cifra (ctz/cifra src/norx.c) at the time of the Cifra AEAD study",
       key_bytes=16, iv="nonce", iv_bytes=8),
    Op("ctr-drbg-instantiate", "drbg", (), "AES-256 CTR_DRBG instantiate", reference="SP 800-90A"),
    Op("ctr-drbg-reseed", "drbg", (), "AES-256 CTR_DRBG reseed", reference="SP 800-90A"),
    Op("ctr-drbg-generate", "drbg", (DRBG_BYTES,), "AES-256 CTR_DRBG generate", payload=True,
       reference="SP 800-90A"),
    *[Op(h, "sha", (BYTES,), h.upper().replace("SHA", "SHA-"), payload=True, reference="FIPS 180-4")
      for h in ("sha1", "sha224", "sha256", "sha384", "sha512")],
    Op("ecdh-keygen", "ecdh", (ECDH_CURVE,), "ECDH public key generation"),
    Op("ecdh-shared-secret", "ecdh", (ECDH_CURVE,), "ECDH shared secret"),
    Op("ecc-keygen", "ecc", (ECDH_CURVE,), "EC key-pair generation"),
    Op("ecdsa-sign", "ecdsa", (ECDSA_CURVE,), "ECDSA sign (digest)"),
    Op("ecdsa-verify", "ecdsa", (ECDSA_CURVE,), "ECDSA verify (digest)"),
    Op("ecjpake-exchange", "ecjpake", (JPAKE_CURVE,), "EC-JPAKE whole exchange, per side",
       halve=True, reference="RFC 8236; TI SWRA667 §6.2.3 (reported halved)"),
    Op("rsa-keygen", "rsa", (RSA_BITS,), "RSA key-pair generation (e=65537)"),
    Op("rsa-sign", "rsa", (RSA_BITS,), "RSA PKCS#1 v1.5 sign (SHA-256 digest)"),
    Op("rsa-verify", "rsa", (RSA_BITS,), "RSA PKCS#1 v1.5 verify (SHA-256 digest)"),
    # Post-quantum: ML-KEM (FIPS 203) and ML-DSA (FIPS 204, pure ML-DSA with an empty context string).
    # Key generation from its seeds (d, z / xi) when the request gives them, else from fresh randomness.
    Op("ml-kem-keygen", "ml-kem", (MLKEM_LEVEL,), "ML-KEM key generation", reference="FIPS 203 Algorithm 19"),
    Op("ml-kem-encaps", "ml-kem", (MLKEM_LEVEL,), "ML-KEM encapsulation", reference="FIPS 203 Algorithm 20"),
    Op("ml-kem-decaps", "ml-kem", (MLKEM_LEVEL,), "ML-KEM decapsulation", reference="FIPS 203 Algorithm 21"),
    Op("ml-dsa-keygen", "ml-dsa", (MLDSA_LEVEL,), "ML-DSA key generation", reference="FIPS 204 Algorithm 1"),
    # signing repeats its rejection loop a random number of times (FIPS 204 Algorithm 7): pqm4's
    # benchmarks.md times 1000 executions of each ML-DSA scheme (its "ml-dsa-65 (1000 executions)"
    # rows, commit cc2c1b99, references/data/pqm4.toml), each signing a fresh random message with
    # fresh randomness (mupq crypto_sign/speed.c)
    Op("ml-dsa-sign", "ml-dsa", (MLDSA_LEVEL, MLDSA_BYTES), "ML-DSA sign (hedged; empty context)",
       reference="FIPS 204 Algorithm 2", executions=1000),
    Op("ml-dsa-verify", "ml-dsa", (MLDSA_LEVEL, MLDSA_BYTES), "ML-DSA verify (empty context)",
       reference="FIPS 204 Algorithm 3"),
    Op("random", "random", (BYTES, RANDOM_SOURCE), "random bytes", payload=True),
    Op("reference-loop", "reference", (), "reference loop (integer add-rotate-xor mix, no crypto)",
       reference="the machine's noise floor: see docs/statistics.md"),
]}


def harness_default(name: str) -> object:
    """What a harness reads for parameter `name` when a request leaves it out (docs/protocol.md):
    the catalog's default for a parameter marked harness_default, else absent: -1, or "" for text."""
    for op in OPS.values():
        p = op.param(name)
        if p is not None:
            if p.harness_default:
                return p.default
            return "" if isinstance(p.default, str) else -1
    raise KeyError(f"no catalog parameter '{name}'")


def get_op(op_id: str, where: str = "--op") -> Op:
    try:
        return OPS[op_id]
    except KeyError:
        raise UsageError(f"{where}: unknown operation '{op_id}'; valid: {', '.join(OPS)}")


def resolve_params(op: Op, given: dict, where: str) -> dict:
    """Complete `given` with the op's defaults, checking names and values."""
    unknown = [k for k in given if op.param(k) is None]
    if unknown:
        valid = ", ".join(op.param_names) or "(none)"
        raise UsageError(f"{where}: operation '{op.id}' has no parameter '{unknown[0]}'; valid: {valid}")
    out = op.defaults()
    for name, raw in given.items():
        out[name] = op.param(name).coerce(raw, where)
    if op.family == "aes" and op.id.split("-")[1] in ("ecb", "cbc") and out["bytes"] % 16:
        raise UsageError(f"{where}: {op.id} needs bytes as a multiple of 16 (no padding); got {out['bytes']}")
    return out


VARIABLE_COST_SOURCES = ("rdseed", "hwrng")


def cost_varies(op_id: str, params: dict) -> bool:
    """Whether one operation's own cost varies from call to call, so that its typical cost (a
    median), not its fastest, is the quantity: RSA key generation (the prime search), and entropy
    sources that wait for entropy (RDSEED retries, a hardware RNG device), and ML-DSA signing: its
    rejection loop repeats a random number of times (FIPS 204 Table 1: 4.25 / 5.1 / 3.85 expected
    repetitions for ML-DSA-44 / 65 / 87), so its fastest calls are the one-pass ones."""
    return op_id in ("rsa-keygen", "ml-dsa-sign") or (op_id == "random" and params.get("source") in VARIABLE_COST_SOURCES)

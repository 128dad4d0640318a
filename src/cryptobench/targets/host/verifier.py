"""The host's gate: every host engine's cell is checked before it is timed, against known-answer
vectors (verify.py) and, where an op's output is random or has no vector, against another host
engine in the same run (a different library first) or plain arithmetic. An op with neither never
gets a timing. The harness processes of the checking engines are the run's own, or started here
and closed with the gate."""
from __future__ import annotations

import hashlib
import os

from ...catalog.ops import OPS
from ...catalog.vector_check import SELECTING
from ...core.errors import HarnessError
from .. import pqc_check
from ..verify import (CHECKER_PREFERENCE, HEALTH_BYTES, VERIFY_OPS, Verdict, _pkcs1_sha256_em, _random_iv, gate,
                      health_failure, load_vectors, matching_vectors, python_reference)
from .engines import ENGINES


class Verifier:
    """Runs the gate; `procs` maps engine name -> running HarnessProcess (more are started lazily)."""

    def __init__(self, procs: dict, vectors: list[dict] | None = None):
        self.procs = procs
        self._own: dict = {}
        self.vectors = load_vectors() if vectors is None else vectors
        self.cache: dict = {}

    def close(self) -> None:
        for proc in self._own.values():
            proc.close()

    def proc(self, engine: str):
        """The engine's harness process: the run's own, or one started (and closed) by the gate."""
        if engine in self.procs:
            return self.procs[engine]
        own = self._own.get(engine)
        if own is not None and (own.stopped or own.proc.poll() is not None):
            own.close()                # killed for not answering, or crashed: a fresh one for the next check
            own = None
        if own is None:
            self._own[engine] = ENGINES[engine].start()
        return self._own[engine]

    def _compute(self, engine: str, op: str, params: dict, inputs: dict) -> dict:
        return self.proc(engine).compute(ENGINES[engine].harness_engine, op, params, inputs)

    def _checkers(self, engine: str, op: str, params: dict) -> list[str]:
        """Other engines that support `op` here, a different library first."""
        lib = ENGINES[engine].harness_engine
        order = sorted((e for e in CHECKER_PREFERENCE if e != engine),
                       key=lambda e: ENGINES[e].harness_engine == lib)
        found = []
        for name in order:
            try:
                ok, _ = self.proc(name).supports(ENGINES[name].harness_engine, op, params)
            except HarnessError:
                continue
            if ok:
                found.append(name)
        return found

    def verify(self, engine: str, op: str, params: dict) -> Verdict:
        key = (engine, op, tuple((k, params.get(k)) for k in SELECTING))
        if op == "random":
            key += (params.get("source"),)
        if key not in self.cache:
            try:
                self.cache[key] = self._verify(engine, op, params)
            except HarnessError as exc:
                self.cache[key] = Verdict("fail", f"harness error during verification: {exc}")
        return self.cache[key]

    # --- the gate --------------------------------------------------------------------------
    def _verify(self, engine: str, op: str, params: dict) -> Verdict:
        return gate(self._checks(engine, op, params), f"no known-answer vector and no cross-check for {op} with "
                    + ", ".join(f"{k}={params[k]}" for k in SELECTING if k in params))

    def _checks(self, engine: str, op: str, params: dict):
        """The checks of one cell, each run only when the ones before it passed (gate stops at a fail)."""
        vectors = matching_vectors(self.vectors, op, params)
        if vectors:
            yield self._run_vectors(engine, op, params, vectors)
        cross = getattr(self, "_cross_" + op.replace("-", "_"), None)
        if OPS[op].family in ("ml-kem", "ml-dsa"):
            cross = self._cross_pqc
        if cross is not None:
            yield cross(engine, op, params)
        if not vectors and cross is None and OPS[op].family in ("aes", "aead", "stream", "sha"):
            yield self._cross_same_output(engine, op, params)

    def _run_vectors(self, engine: str, op: str, params: dict, vectors: list[dict]) -> Verdict:
        passed, skipped = [], []
        for v in vectors:
            if not v["out"]:                   # checks nothing (load_vectors refuses it): never a pass
                continue
            vparams = {**params, **v["params"]}
            try:
                got = self._compute(engine, op, vparams, v["in"])
            except HarnessError as exc:
                if "unsupported" in str(exc).lower():
                    skipped.append(v["id"])
                    continue
                if v["out"] == {"ok": "00"} and op in VERIFY_OPS:
                    passed.append(v["id"])     # a verifier refusing malformed input rejects it correctly
                    continue
                return Verdict("fail", f"vector {v['id']} ({v.get('source', v['file'])}): {exc}")
            for name, expected in v["out"].items():
                if got.get(name, "").lower() != expected.lower():
                    return Verdict("fail", f"vector {v['id']} ({v.get('source', v['file'])}): output "
                                           f"'{name}' is {got.get(name, '(missing)')[:64]}, expected "
                                           f"{expected[:64]}")
            passed.append(v["id"])
        if not passed:
            return Verdict("fail", f"all {len(skipped)} matching vectors unsupported by {engine}")
        return Verdict("pass", f"{len(passed)} known-answer vectors")

    # --- cross-checks for ops whose output is random ------------------------------------------
    def _cross_pqc(self, engine, op, params) -> Verdict:
        """ML-KEM / ML-DSA both ways against the pure-Python kyber-py / dilithium-py (pqc_check)."""
        passed, detail = pqc_check.check(op, params, lambda o, p, i: self._compute(engine, o, p, i))
        return Verdict("pass" if passed else "fail", detail)

    def _cross_same_output(self, engine, op, params) -> Verdict:
        """Deterministic ops without a vector for these parameters: same inputs, same output elsewhere."""
        checkers = self._checkers(engine, op, params)
        if not checkers and op in ("aes-eax-encrypt", "chacha20-encrypt"):
            return self._python_reference(engine, op, params)
        if not checkers:
            return Verdict("fail", f"no known-answer vector for {op} with these parameters and no second "
                                   "engine to cross-check with")
        rnd = lambda n: os.urandom(n).hex()
        inputs = {"msg": rnd(params.get("bytes", 64))}
        o = OPS[op]
        if o.family != "sha":                  # a cipher: its key, IV or nonce (the catalog's lengths), AAD
            inputs["key"] = rnd(o.key_len(params) or 32)
            if o.iv:
                inputs[o.iv] = _random_iv(op, o.iv_len(params)).hex()
            if o.param("aad_bytes") is not None:
                inputs["aad"] = rnd(params.get("aad_bytes", 0))
        mine = self._compute(engine, op, params, inputs)
        theirs = self._compute(checkers[0], op, params, inputs)
        if not mine or mine != theirs:
            return Verdict("fail", f"output differs from {checkers[0]}'s for the same random inputs")
        return Verdict("pass", f"same output as {checkers[0]} on random inputs")

    def _python_reference(self, engine, op, params) -> Verdict:
        """Same random inputs, same output as a maintained Python package (python_reference)."""
        values = {"key": os.urandom(OPS[op].key_len(params)), "iv": _random_iv(op, OPS[op].iv_len(params)),
                  "aad": os.urandom(params.get("aad_bytes", 0) or 0), "msg": os.urandom(params.get("bytes", 64))}
        ref = python_reference(op, params, values)
        mine = self._compute(engine, op, params, {k: v.hex() for k, v in values.items()})
        got = bytes.fromhex(mine.get("ct", "")) if mine else b""
        if got != ref[0]:
            return Verdict("fail", f"output differs from {ref[1]} for the same random inputs")
        return Verdict("pass", f"same output as {ref[1]} on random inputs")

    def _keypair(self, engine: str, curve: str) -> dict:
        return self._compute(engine, "ecc-keygen", {"curve": curve}, {})

    def _cross_ecc_keygen(self, engine, op, params) -> Verdict:
        curve = params["curve"]
        pair = self._keypair(engine, curve)
        if "d" not in pair:
            return self._sealed_ecc_keygen(engine, curve, pair)
        checkers = self._checkers(engine, "ecdh-keygen", {"curve": curve}) or [engine]
        q = self._compute(checkers[0], "ecdh-keygen", {"curve": curve}, {"d": pair["d"]}).get("q")
        if q != pair.get("q"):
            return Verdict("fail", f"generated public key does not match {checkers[0]}'s d·G")
        return Verdict("pass", f"key pair consistent with {checkers[0]}")

    # Keys generated inside a TPM or secure element keep their private part there: keygen's compute
    # returns only the public key (q, or n and e) and, given an input `hash`, a signature over it made
    # with the new key (docs/protocol.md). Such a key pair is checked by verifying that signature
    # outside the device; two generated keys must differ.
    def _sealed_ecc_keygen(self, engine, curve, first: dict) -> Verdict:
        h = (hashlib.sha512 if curve == "p521" else hashlib.sha256)(b"cryptobench key pair").hexdigest()
        out = self._compute(engine, "ecc-keygen", {"curve": curve}, {"hash": h})
        if not out.get("q") or not out.get("sig"):
            return Verdict("fail", "key generation returns neither d nor a signature made with the new key")
        if out["q"] == first.get("q"):
            return Verdict("fail", "two key generations returned the same public key")
        verifiers = self._checkers(engine, "ecdsa-verify", {"curve": curve})
        if not verifiers:
            return Verdict("fail", "private key stays inside and no second engine verifies its signature")
        ok = self._compute(verifiers[0], "ecdsa-verify", {"curve": curve},
                           {"q": out["q"], "hash": h, "sig": out["sig"]}).get("ok")
        if ok != "01":
            return Verdict("fail", f"a signature made with the generated key does not verify in "
                                   f"{verifiers[0]} against the generated public key")
        return Verdict("pass", f"private key stays inside; a signature made with it verifies in {verifiers[0]}")

    def _sealed_rsa_keygen(self, engine, bits, first: dict) -> Verdict:
        digest = hashlib.sha256(b"cryptobench key pair").digest()
        key = self._compute(engine, "rsa-keygen", {"rsa_bits": bits}, {"hash": digest.hex()})
        if not key.get("n") or not key.get("e") or not key.get("sig"):
            return Verdict("fail", "key generation returns neither d nor a signature made with the new key")
        n, e, sig = (int(key[x], 16) for x in ("n", "e", "sig"))
        if n.bit_length() != bits:
            return Verdict("fail", f"modulus has {n.bit_length()} bits, expected {bits}")
        if e != 65537:
            return Verdict("fail", f"public exponent is {e}, expected 65537")
        if key["n"] == first.get("n"):
            return Verdict("fail", "two key generations returned the same modulus")
        if pow(sig, e, n) != _pkcs1_sha256_em(digest, (n.bit_length() + 7) // 8):
            return Verdict("fail", "a PKCS#1 v1.5 signature made with the generated key does not verify "
                                   "against its public key")
        return Verdict("pass", "private key stays inside; modulus size, e = 65537, and a signature made "
                               "with it verifies against n, e")

    def _cross_ecdh_keygen(self, engine, op, params) -> Verdict:
        curve = params["curve"]
        checkers = self._checkers(engine, "ecc-keygen", {"curve": curve})
        if not checkers:
            return Verdict("pass", "no second engine for a cross-check") if matching_vectors(
                self.vectors, op, params) else Verdict("fail", "no vector and no second engine")
        pair = self._keypair(checkers[0], curve)
        q = self._compute(engine, op, {"curve": curve}, {"d": pair["d"]}).get("q")
        if q != pair["q"]:
            return Verdict("fail", f"public key differs from {checkers[0]}'s for the same private key")
        return Verdict("pass", f"agrees with {checkers[0]}")

    def _cross_ecdh_shared_secret(self, engine, op, params) -> Verdict:
        curve = params["curve"]
        checkers = self._checkers(engine, op, {"curve": curve})
        if not checkers:
            return Verdict("pass", "no second engine for a cross-check") if matching_vectors(
                self.vectors, op, params) else Verdict("fail", "no vector and no second engine")
        a, b = self._keypair(engine, curve), self._keypair(checkers[0], curve)
        z1 = self._compute(engine, op, {"curve": curve}, {"d": a["d"], "peer": b["q"]}).get("z")
        z2 = self._compute(checkers[0], op, {"curve": curve}, {"d": b["d"], "peer": a["q"]}).get("z")
        if not z1 or z1 != z2:
            return Verdict("fail", f"shared secret differs from {checkers[0]}'s end")
        return Verdict("pass", f"both ends agree with {checkers[0]}")

    def _cross_ecdsa_sign(self, engine, op, params) -> Verdict:
        curve = params["curve"]
        pair = self._keypair(engine, curve)
        if "d" not in pair:          # its generated keys stay inside: sign with a key made elsewhere
            keygens = self._checkers(engine, "ecc-keygen", {"curve": curve})
            if not keygens:
                return Verdict("fail", "no private key to sign with: generated keys stay inside and no "
                                       "second engine generates one")
            pair = self._keypair(keygens[0], curve)
        digest = hashlib.sha512 if curve == "p521" else hashlib.sha256
        h = digest(b"cryptobench cross-check").hexdigest()
        sig = self._compute(engine, op, {"curve": curve}, {"d": pair["d"], "hash": h})["sig"]
        verifiers = self._checkers(engine, "ecdsa-verify", {"curve": curve}) or [engine]
        for name in verifiers[:2]:
            ok = self._compute(name, "ecdsa-verify", {"curve": curve},
                               {"q": pair["q"], "hash": h, "sig": sig}).get("ok")
            if ok != "01":
                return Verdict("fail", f"signature rejected by {name}")
            bad = sig[:-2] + f"{int(sig[-2:], 16) ^ 1:02x}"
            if self._compute(name, "ecdsa-verify", {"curve": curve},
                             {"q": pair["q"], "hash": h, "sig": bad}).get("ok") != "00":
                return Verdict("fail", f"{name} accepted a tampered signature")
        return Verdict("pass", "signatures verify in " + ", ".join(verifiers[:2]))

    def _cross_ecdsa_verify(self, engine, op, params) -> Verdict:
        curve = params["curve"]
        signers = self._checkers(engine, "ecdsa-sign", {"curve": curve})
        if not signers:
            return Verdict("pass", "no second engine for a cross-check")
        pair = self._keypair(signers[0], curve)
        h = (hashlib.sha512 if curve == "p521" else hashlib.sha256)(b"cryptobench").hexdigest()
        sig = self._compute(signers[0], "ecdsa-sign", {"curve": curve}, {"d": pair["d"], "hash": h})["sig"]
        ok = self._compute(engine, op, {"curve": curve}, {"q": pair["q"], "hash": h, "sig": sig}).get("ok")
        if ok != "01":
            return Verdict("fail", f"rejects a valid signature made by {signers[0]}")
        return Verdict("pass", f"accepts {signers[0]}'s signature")

    def _cross_rsa_keygen(self, engine, op, params) -> Verdict:
        bits = params["rsa_bits"]
        key = self._compute(engine, op, {"rsa_bits": bits}, {})
        if "d" not in key:
            return self._sealed_rsa_keygen(engine, bits, key)
        n, e, d = (int(key[x], 16) for x in ("n", "e", "d"))
        if n.bit_length() != bits:
            return Verdict("fail", f"modulus has {n.bit_length()} bits, expected {bits}")
        if e != 65537:
            return Verdict("fail", f"public exponent is {e}, expected 65537")
        for m in (2, 3, 0x1234567890ABCDEF):
            if pow(pow(m, e, n), d, n) != m:
                return Verdict("fail", "d does not invert e modulo the key's group order")
        return Verdict("pass", "key pair consistent (modulus size, e = 65537, m^(ed) = m)")

    def _rsa_key(self, engine: str, bits: int) -> dict:
        """A fresh RSA key, made by another engine where one can."""
        keygens = self._checkers(engine, "rsa-keygen", {"rsa_bits": bits}) or [engine]
        return self._compute(keygens[0], "rsa-keygen", {"rsa_bits": bits}, {})

    def _cross_rsa_sign(self, engine, op, params) -> Verdict:
        bits = params["rsa_bits"]
        key = self._rsa_key(engine, bits)
        n, e, d = (int(key[x], 16) for x in ("n", "e", "d"))
        digest = hashlib.sha256(b"cryptobench").digest()
        sig = self._compute(engine, op, {"rsa_bits": bits},
                            {"n": key["n"], "e": key["e"], "d": key["d"], "hash": digest.hex()})["sig"]
        k = (n.bit_length() + 7) // 8
        if int(sig, 16) != pow(_pkcs1_sha256_em(digest, k), d, n):
            return Verdict("fail", "signature differs from the PKCS#1 v1.5 reference computation")
        return Verdict("pass", "matches a PKCS#1 v1.5 reference computation")

    def _cross_rsa_verify(self, engine, op, params) -> Verdict:
        bits = params["rsa_bits"]
        key = self._rsa_key(engine, bits)
        n, d = int(key["n"], 16), int(key["d"], 16)
        digest = hashlib.sha256(b"cryptobench").digest()
        k = (n.bit_length() + 7) // 8
        sig = pow(_pkcs1_sha256_em(digest, k), d, n).to_bytes(k, "big").hex()
        inputs = {"n": key["n"], "e": key["e"], "hash": digest.hex(), "sig": sig}
        if self._compute(engine, op, {"rsa_bits": bits}, inputs).get("ok") != "01":
            return Verdict("fail", "rejects a valid PKCS#1 v1.5 signature")
        inputs["sig"] = sig[:-2] + f"{int(sig[-2:], 16) ^ 1:02x}"
        if self._compute(engine, op, {"rsa_bits": bits}, inputs).get("ok") != "00":
            return Verdict("fail", "accepts a tampered signature")
        return Verdict("pass", "accepts a reference signature, rejects a tampered one")

    def _cross_ecjpake_exchange(self, engine, op, params) -> Verdict:
        pw = b"threadjpaketest".hex()
        out = self._compute(engine, op, params, {"password_client": pw, "password_server": pw})
        if not out.get("pms_client") or out.get("pms_client") != out.get("pms_server"):
            return Verdict("fail", "the two sides derived different secrets from the same password")
        try:
            bad = self._compute(engine, op, params, {"password_client": pw,
                                                     "password_server": b"wrong".hex()})
            if bad.get("pms_client") == bad.get("pms_server"):
                return Verdict("fail", "different passwords gave the same secret")
        except HarnessError:
            pass  # the library refusing the exchange is also a correct outcome
        return Verdict("pass", "both sides agree; a wrong password does not")

    def _cross_random(self, engine, op, params) -> Verdict:
        p = {**params, "bytes": HEALTH_BYTES}
        a = bytes.fromhex(self._compute(engine, op, p, {})["bits"])
        b = bytes.fromhex(self._compute(engine, op, p, {})["bits"])
        if len(a) != HEALTH_BYTES or len(b) != HEALTH_BYTES:
            return Verdict("fail", f"asked for 2500 bytes, got {len(a) if len(a) != 2500 else len(b)}")
        if a == b:
            return Verdict("fail", "two requests returned the same bytes")
        # a good generator fails the monobit bounds once in about 10,000 draws: only a failure that
        # the second, independent draw repeats condemns it (about one false alarm in 10^8)
        why = health_failure(a)
        if why and health_failure(b):
            return Verdict("fail", why + "; a second draw failed as well")
        return Verdict("pass", "health tests (distinct outputs, FIPS 140-2 monobit, repetition count)")

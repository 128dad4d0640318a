"""Write (or --check) src/cryptobench/catalog/vectors/mlkem.json and mldsa.json.

    python scripts/vectors_pqc.py KYBER_ASSETS DILITHIUM_ASSETS [--check]

KYBER_ASSETS / DILITHIUM_ASSETS: the `assets/` folders of the kyber-py 1.2.0 and dilithium-py 1.5.1
source distributions (`pip download --no-binary :all: --no-deps kyber-py==1.2.0 dilithium-py==1.5.1`),
which carry NIST's ACVP-Server release v1.1.0.35 gen-val JSON files (internalProjection.json).

ML-KEM keyGen / encapsulation / decapsulation and ML-DSA keyGen vectors are NIST's, a few test cases
per parameter set, each recomputed here with kyber-py / dilithium-py before it is written. ACVP
v1.1.0.35's ML-DSA sigGen / sigVer cases test the *internal* interface (Sign_internal on a message
M' given whole), which an implementation of pure ML-DSA (ML-DSA.Sign, M' = 0 || |ctx| || ctx || M)
such as PQClean's cannot take; the ml-dsa-sign / ml-dsa-verify vectors are therefore computed: keys
from NIST's keyGen cases, 59-byte messages, empty context, signatures made by dilithium-py after it
reproduced every ACVP sigGen and sigVer case of that release (checked here, every run), and for
verify each valid signature with one bit flipped (expected 00).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "cryptobench" / "catalog" / "vectors"
ACVP = "NIST ACVP-Server (github usnistgov/ACVP-Server) release v1.1.0.35, gen-val/json-files/{dir}/internalProjection.json"
COPY = "transcribed from the copy in the {pkg} source distribution (assets/{dir})"
PER_SET = 3           # test cases per parameter set and function


def _load(assets: Path, name: str) -> dict:
    return json.loads((assets / name / "internalProjection.json").read_text())


def _src(name: str, pkg: str, where: str) -> str:
    return f"{ACVP.format(dir=name)}, {where}; {COPY.format(pkg=pkg, dir=name)}"


def _level(parameter_set: str) -> int:
    return int(parameter_set.rsplit("-", 1)[1])


def mlkem(assets: Path) -> list[dict]:
    from kyber_py.ml_kem import ML_KEM_512, ML_KEM_768, ML_KEM_1024
    kem = {512: ML_KEM_512, 768: ML_KEM_768, 1024: ML_KEM_1024}
    out = []
    keygen = _load(assets, "ML-KEM-keyGen-FIPS203")
    for g in keygen["testGroups"]:
        lv = _level(g["parameterSet"])
        for t in g["tests"][:PER_SET]:
            ek, dk = kem[lv]._keygen_internal(bytes.fromhex(t["d"]), bytes.fromhex(t["z"]))
            assert (ek.hex(), dk.hex()) == (t["ek"].lower(), t["dk"].lower()), t["tcId"]
            out.append({"id": f"acvp-mlkem{lv}-keygen-tc{t['tcId']}", "op": "ml-kem-keygen", "params": {"level": lv},
                        "in": {"d": t["d"].lower(), "z": t["z"].lower()},
                        "out": {"ek": t["ek"].lower(), "dk": t["dk"].lower()},
                        "source": _src("ML-KEM-keyGen-FIPS203", "kyber-py 1.2.0",
                                       f"tgId {g['tgId']} ({g['parameterSet']}) tcId {t['tcId']}")})
    ed = _load(assets, "ML-KEM-encapDecap-FIPS203")
    for g in ed["testGroups"]:
        lv = _level(g["parameterSet"])
        where = lambda t: f"tgId {g['tgId']} ({g['parameterSet']}, {g['function']}) tcId {t['tcId']}"
        if g["function"] == "encapsulation":
            for t in g["tests"][:PER_SET]:
                k, c = kem[lv]._encaps_internal(bytes.fromhex(t["ek"]), bytes.fromhex(t["m"]))
                assert (c.hex(), k.hex()) == (t["c"].lower(), t["k"].lower()), t["tcId"]
                out.append({"id": f"acvp-mlkem{lv}-encaps-tc{t['tcId']}", "op": "ml-kem-encaps",
                            "params": {"level": lv}, "in": {"ek": t["ek"].lower(), "m": t["m"].lower()},
                            "out": {"c": t["c"].lower(), "k": t["k"].lower()},
                            "source": _src("ML-KEM-encapDecap-FIPS203", "kyber-py 1.2.0", where(t))})
        elif g["function"] == "decapsulation":
            # the group's cases alternate a valid ciphertext and modified ones (implicit rejection): take both kinds
            picked = _varied(g["tests"])
            for t in picked:
                k = kem[lv]._decaps_internal(bytes.fromhex(g["dk"]), bytes.fromhex(t["c"]))
                assert k.hex() == t["k"].lower(), t["tcId"]
                out.append({"id": f"acvp-mlkem{lv}-decaps-tc{t['tcId']}", "op": "ml-kem-decaps",
                            "params": {"level": lv}, "in": {"dk": g["dk"].lower(), "c": t["c"].lower()},
                            "out": {"k": t["k"].lower()},
                            "source": _src("ML-KEM-encapDecap-FIPS203", "kyber-py 1.2.0",
                                           f"{where(t)} ({t.get('reason', '')})")})
    return out


def _varied(tests: list[dict]) -> list[dict]:
    """Up to PER_SET cases, one per distinct `reason` first (a valid one and the implicit rejections)."""
    seen, picked = set(), []
    for t in tests:
        if t.get("reason") not in seen:
            seen.add(t.get("reason"))
            picked.append(t)
    picked += [t for t in tests if t not in picked]
    return sorted(picked[:PER_SET], key=lambda t: t["tcId"])


def _anchor_dilithium(assets: Path, dsa: dict) -> int:
    """dilithium-py reproduces every ACVP v1.1.0.35 sigGen and sigVer case (internal interface)."""
    n = 0
    for g in _load(assets, "ML-DSA-sigGen-FIPS204")["testGroups"]:
        impl = dsa[_level(g["parameterSet"])]
        for t in g["tests"]:
            rnd = bytes.fromhex(t["rnd"]) if "rnd" in t else bytes(32)
            sig = impl._sign_internal(bytes.fromhex(t["sk"]), bytes.fromhex(t["message"]), rnd)
            assert sig.hex() == t["signature"].lower(), ("sigGen", t["tcId"])
            n += 1
    for g in _load(assets, "ML-DSA-sigVer-FIPS204")["testGroups"]:
        impl = dsa[_level(g["parameterSet"])]
        for t in g["tests"]:
            ok = impl._verify_internal(bytes.fromhex(g["pk"]), bytes.fromhex(t["message"]),
                                       bytes.fromhex(t["signature"]))
            assert ok == t["testPassed"], ("sigVer", t["tcId"])
            n += 1
    return n


def _message(level: int, i: int) -> bytes:
    """A 59-byte message (pqm4's MLEN): byte j = (31 j + 7 i + level) mod 256."""
    return bytes((31 * j + 7 * i + level) % 256 for j in range(59))


def mldsa(assets: Path) -> list[dict]:
    from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87
    dsa = {44: ML_DSA_44, 65: ML_DSA_65, 87: ML_DSA_87}
    anchored = _anchor_dilithium(assets, dsa)
    out = []
    for g in _load(assets, "ML-DSA-keyGen-FIPS204")["testGroups"]:
        lv = _level(g["parameterSet"])
        for i, t in enumerate(g["tests"][:PER_SET]):
            pk, sk = dsa[lv]._keygen_internal(bytes.fromhex(t["seed"]))
            assert (pk.hex(), sk.hex()) == (t["pk"].lower(), t["sk"].lower()), t["tcId"]
            keysrc = _src("ML-DSA-keyGen-FIPS204", "dilithium-py 1.5.1",
                          f"tgId {g['tgId']} ({g['parameterSet']}) tcId {t['tcId']}")
            out.append({"id": f"acvp-mldsa{lv}-keygen-tc{t['tcId']}", "op": "ml-dsa-keygen", "params": {"level": lv},
                        "in": {"seed": t["seed"].lower()}, "out": {"pk": t["pk"].lower(), "sk": t["sk"].lower()},
                        "source": keysrc})
            if i >= 2:
                continue
            # two signing cases per level on the first two keys: deterministic (rnd = 0), and hedged with a given rnd
            msg = _message(lv, i)
            rnd = bytes(32) if i == 0 else bytes((0xA5 ^ j) for j in range(32))
            sig = dsa[lv]._sign_internal(sk, b"\x00\x00" + msg, rnd)       # ML-DSA.Sign, ctx = b""
            assert dsa[lv].verify(pk, msg, sig)
            how = (f"computed: ML-DSA.Sign (FIPS 204 Algorithm 2, empty context, rnd = {'0^32' if i == 0 else 'given'}) "
                   f"by dilithium-py 1.5.1, which reproduced all {anchored} ACVP v1.1.0.35 ML-DSA sigGen/sigVer "
                   f"(internal interface) cases first; key: {keysrc}")
            params = {"level": lv, "bytes": 59}
            out.append({"id": f"mldsa{lv}-sign-key-tc{t['tcId']}-{'det' if i == 0 else 'rnd'}", "op": "ml-dsa-sign",
                        "params": params, "in": {"sk": sk.hex(), "msg": msg.hex(), "rnd": rnd.hex()},
                        "out": {"sig": sig.hex()}, "source": how})
            out.append({"id": f"mldsa{lv}-verify-key-tc{t['tcId']}-{i}", "op": "ml-dsa-verify", "params": params,
                        "in": {"pk": pk.hex(), "msg": msg.hex(), "sig": sig.hex()}, "out": {"ok": "01"},
                        "source": how})
            bad = bytearray(sig)
            bad[100 + i] ^= 0x01             # a bit of z (c~ is 32, 48 or 64 bytes long)
            assert not dsa[lv].verify(pk, msg, bytes(bad))
            out.append({"id": f"mldsa{lv}-verify-key-tc{t['tcId']}-{i}-flipped", "op": "ml-dsa-verify",
                        "params": params, "in": {"pk": pk.hex(), "msg": msg.hex(), "sig": bytes(bad).hex()},
                        "out": {"ok": "00"}, "source": how + f"; bit 0 of signature byte {100 + i} flipped"})
    return out


def render(family: str, vectors: list[dict]) -> str:
    lines = ",\n".join("  " + json.dumps(v) for v in vectors)
    return f'{{"family": "{family}", "vectors": [\n{lines}\n]}}\n'


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    files = {"mlkem.json": render("ml-kem", mlkem(Path(argv[0]))), "mldsa.json": render("ml-dsa", mldsa(Path(argv[1])))}
    status = 0
    for name, text in files.items():
        path = OUT / name
        if "--check" in argv:
            same = path.exists() and path.read_text() == text
            print(f"{name}: {'same' if same else 'DIFFERS'}")
            status |= not same
        else:
            path.write_text(text)
            print(f"wrote {path} ({len(json.loads(text)['vectors'])} vectors)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

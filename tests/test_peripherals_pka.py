"""The TI CC26x2 PKA model (peripherals/cc26x2_pka.py) against SWCU185G: P-256 known answers through
ECC-MUL / ECC-ADD with the TRM's vector layout, the PKCP operations TI's ECDSA path needs (multiply,
add, subtract, modulo, ModInv, compare) with MSW/DIVMSW/COMPARE/SHIFT, FUNCTION.RUN clearing after the
modelled latency, the interrupt as RUN's complement, misuse as one line, the sequencer's ECmontMUL
against RFC 7748's X25519 vectors, and ecdsa-verify / ECDH (P-256 and X25519) cells through the
register-level driver on the simulated cc2652."""
import pytest
from conftest import cli

from cryptobench.targets.mcu.sim.peripherals import cc26x2_pka as P
from cryptobench.targets.mcu.sim.peripherals.base import PeripheralError

PRIME = 2**256 - 2**224 + 2**192 + 2**96 - 1                       # FIPS 186-4 D.1.2.3 (P-256)
A_COEF = PRIME - 3
B_COEF = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
GX = 0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296
GY = 0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5
C25519_P, C25519_A = 2**255 - 19, 486662                          # RFC 7748 4.1 (TI's Curve25519_a is A)
N = 8                                                               # words
S = P.stride(N)                                                    # 10 words between coordinates


class Core:
    """A core driving the model one access per cycle, vectors laid out as the TRM's ECC table says."""

    def __init__(self):
        self.p, self.t = P.Cc26x2Pka(0x40025000, 3), 0

    def w(self, off, v):
        self.t += 1 + self.p.write(off, 4, v, self.t)

    def r(self, off):
        self.t += 1
        return self.p.read(off, 4, self.t)

    def put(self, word_at, value, n=N):
        for i in range(n):
            self.w(P.RAM + 4 * (word_at + i), (value >> (32 * i)) & 0xFFFFFFFF)

    def get(self, word_at, n=N):
        return sum(self.r(P.RAM + 4 * (word_at + i)) << (32 * i) for i in range(n))

    def wait(self):
        while self.r(P.FUNCTION) & P.F_RUN:
            pass

    def run(self, function):
        self.w(P.FUNCTION, P.F_RUN | function)
        start = self.t
        self.wait()
        return start

    def ecc_mul(self, k, x, y):
        self.put(0, k)
        self.w(P.APTR, 0), self.w(P.ALENGTH, N)
        for i, v in enumerate((PRIME, A_COEF, B_COEF)):
            self.put(S + i * S, v)
        self.w(P.BPTR, S), self.w(P.BLENGTH, N)
        self.put(4 * S, x), self.put(5 * S, y)
        self.w(P.CPTR, 4 * S), self.w(P.DPTR, 6 * S)
        start = self.run(P.SEQ_ECC_MUL << P.SEQ_SHIFT)
        return self.r(P.SHIFT), self.get(6 * S), self.get(7 * S), start

    def ecmont_mul(self, k, u, prime=C25519_P):
        """ECmontMUL with the layout TI's driverlib writes: A k at 0; B p, then A from 10; C u; D the result."""
        self.put(0, k)
        self.put(S, prime), self.put(2 * S, C25519_A)
        self.put(3 * S, u)
        self.w(P.APTR, 0), self.w(P.ALENGTH, N), self.w(P.BPTR, S), self.w(P.BLENGTH, N)
        self.w(P.CPTR, 3 * S), self.w(P.DPTR, 4 * S)
        start = self.run(P.SEQ_ECMONT_MUL << P.SEQ_SHIFT)
        return self.r(P.SHIFT), self.get(4 * S), start

    def basic(self, function, a, b, alen=N, blen=N):
        self.put(0, a, alen)
        self.put(16, b, blen)
        self.w(P.APTR, 0), self.w(P.ALENGTH, alen), self.w(P.BPTR, 16), self.w(P.BLENGTH, blen)
        self.w(P.CPTR, 32), self.w(P.DPTR, 64)
        self.run(function)


def test_ecc_mul_gives_rfc5903_public_keys_and_the_shared_secret():
    d_i = 0xC88F01F510D9AC3F70A292DAA2316DE544E9AAB8AFE84049C62A9C57862D1433
    d_r = 0xC6EF9C5D78AE012A011164ACB397CE2088685D8F06BF9BE0B283AB46476BEE53
    shift, qx, qy, _ = Core().ecc_mul(d_i, GX, GY)
    assert shift == P.SHIFT_OK
    assert qx == 0xDAD0B65394221CF9B051E1FECA5787D098DFE637FC90B9EF945D0C3772581180
    assert qy == 0x5271A0461CDB8252D61F1C456FA3E59AB1F45B33ACCF5F58389E0577B8990BB3
    shift, rx, ry, _ = Core().ecc_mul(d_r, GX, GY)
    shift, zx, _, _ = Core().ecc_mul(d_r, qx, qy)                  # RFC 5903 8.1: the shared x
    assert zx == 0xD6840F6B42F6EDAFD13116E0E12565202FEF8E9ECE7DCE03812464D04B9442DE
    assert Core().ecc_mul(d_i, rx, ry)[1] == zx


def test_ecc_mul_by_the_order_is_the_point_at_infinity_and_a_bad_prime_is_error_31():
    c = Core()
    shift, _, _, _ = c.ecc_mul(ORDER, GX, GY)
    assert shift == P.SHIFT_INFINITY and c.r(P.MSW) & P.MSW_ZERO
    c = Core()
    c.put(P.stride(N), PRIME - 1)                                 # an even p: the TRM's "error"
    c.p.ram[4 * S:4 * S + 32] = (PRIME - 1).to_bytes(32, "little")
    c.w(P.APTR, 0), c.w(P.ALENGTH, N), c.w(P.BPTR, S), c.w(P.BLENGTH, N), c.w(P.CPTR, 4 * S), c.w(P.DPTR, 6 * S)
    c.run(P.SEQ_ECC_MUL << P.SEQ_SHIFT)
    assert c.r(P.SHIFT) == P.SHIFT_ERROR


def x25519(k_hex, u_hex):
    """RFC 7748's X25519 on the model: the scalar clamped and u's top bit masked first, as the driver does."""
    k = bytearray(bytes.fromhex(k_hex))
    k[0] &= 248
    k[31] = (k[31] & 127) | 64
    u = int.from_bytes(bytes.fromhex(u_hex), "little") & (2**255 - 1)
    shift, r, _ = Core().ecmont_mul(int.from_bytes(k, "little"), u)
    assert shift == P.SHIFT_OK
    return r.to_bytes(32, "little").hex()


def test_ecmont_mul_gives_rfc7748_x25519_vectors():
    # section 5.2, the two test vectors (the second u has its top bit set: masked)
    assert x25519("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
                  "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c") == \
        "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"
    assert x25519("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
                  "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493") == \
        "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"
    nine = "09" + "00" * 31                                           # 5.2: one iteration of k = u = 9
    assert x25519(nine, nine) == "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"
    # section 6.1: both public keys from u = 9, and the shared secret from both sides
    alice, bob = ("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
                  "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
    alice_pub, bob_pub = x25519(alice, nine), x25519(bob, nine)
    assert alice_pub == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    assert bob_pub == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
    shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
    assert x25519(alice, bob_pub) == shared and x25519(bob, alice_pub) == shared


def test_ecmont_mul_latency_infinity_and_a_bad_prime():
    c = Core()
    shift, _, start = c.ecmont_mul(9, 9)
    assert shift == P.SHIFT_OK
    assert c.p.busy_until == start - 1 + P.ecmont_mul_cycles(N, N) == start - 1 + 414_864
    assert c.p.active.spans[-1][1] - c.p.active.spans[-1][0] == 414_864
    c = Core()
    shift, x, _ = c.ecmont_mul(1 << 254, 0)                        # u = 0, a point of order 2: infinity
    assert shift == P.SHIFT_INFINITY and x == 0 and c.r(P.MSW) & P.MSW_ZERO
    assert Core().ecmont_mul(9, 9, prime=C25519_P - 1)[0] == P.SHIFT_ERROR   # an even p


def test_ecc_add_doubles_and_adds():
    c = Core()
    c.put(0, GX), c.put(S, GY)
    c.put(2 * S, PRIME), c.put(3 * S, A_COEF)
    c.put(4 * S, GX), c.put(5 * S, GY)
    c.w(P.APTR, 0), c.w(P.BPTR, 2 * S), c.w(P.BLENGTH, N), c.w(P.CPTR, 4 * S), c.w(P.DPTR, 6 * S)
    c.run(P.SEQ_ECC_ADD << P.SEQ_SHIFT)
    two_g = P.mul(2, (GX, GY), PRIME, A_COEF)
    assert c.r(P.SHIFT) == 0 and (c.get(6 * S), c.get(7 * S)) == two_g
    c.put(4 * S, GX), c.put(5 * S, PRIME - GY)                     # G + (-G)
    c.run(P.SEQ_ECC_ADD << P.SEQ_SHIFT)
    assert c.r(P.SHIFT) == P.SHIFT_INFINITY


def test_pkcp_operations_and_their_result_registers():
    a, b = 0x1234_5678_9ABC_DEF0 << 190 | 77, ORDER
    c = Core()
    c.basic(P.F_MULTIPLY, a, b)
    assert c.get(32, 16) == a * b and c.r(P.MSW) == 32 + ((a * b).bit_length() - 1) // 32
    c.basic(P.F_ADD, a, b)
    assert c.get(32, 9) == a + b
    c.basic(P.F_SUBTRACT, b, a)
    assert c.get(32) == b - a
    c.basic(P.F_MODULO, a * b + 5, b, alen=16)
    assert c.get(32, 9) == 5 and c.r(P.DIVMSW) == 32
    c.basic(P.F_DIVIDE, a * b + 5, b, alen=16)
    assert c.get(64, 9) == a and c.r(P.MSW) == 64 + (a.bit_length() - 1) // 32
    c.basic(P.F_MODULO, 2 * b, b, alen=16)
    assert c.r(P.DIVMSW) == P.MSW_ZERO                              # a zero remainder
    c.basic(P.SEQ_MODINV << P.SEQ_SHIFT, a, b)
    assert c.r(P.SHIFT) == 0 and c.get(64) * a % b == 1
    c.basic(P.F_COMPARE, a, b)
    assert c.r(P.COMPARE) == P.CMP_LT
    c.basic(P.F_COMPARE, b, a)
    assert c.r(P.COMPARE) == P.CMP_GT
    c.basic(P.F_COMPARE, a, a)
    assert c.r(P.COMPARE) == P.CMP_EQ
    c.w(P.SHIFT, 4)
    c.basic(P.F_RSHIFT, a, 0)
    assert c.get(32) == a >> 4


def test_run_clears_after_the_structural_latency_and_the_interrupt_is_its_complement():
    c = Core()
    _, _, _, start = c.ecc_mul(5, GX, GY)
    write_at = start - 1                                            # the FUNCTION write's cycle
    assert c.p.busy_until == write_at + P.ecc_mul_cycles(N, N) == write_at + 865_744
    assert P.modmul_cycles(8) == 160 and P.modinv_cycles(8) == 4616
    assert not c.p.irq_pending(write_at + 10) and c.p.next_event(write_at + 10) == c.p.busy_until
    assert c.p.irq_since(c.p.busy_until) == c.p.busy_until
    d = Core()
    d.basic(P.F_MULTIPLY, 3, 5)
    span = d.p.active.spans[-1]
    assert span[1] - span[0] == P.START + N * N
    assert Core().p.read(P.HWREV, 4, 0) == 0xE31C and Core().p.read(P.FWREV, 4, 0) >> 28 == 2


@pytest.mark.parametrize("steps, message", [
    ([(P.FUNCTION, P.F_RUN)], "expected exactly one operation"),
    ([(P.FUNCTION, P.F_RUN | P.F_ADD | P.F_MULTIPLY)], "expected exactly one operation"),
    ([(P.FUNCTION, P.F_RUN | 1 << P.SEQ_SHIFT)], "sequencer operation 1 (ExpMod-CRT) is not modelled"),
    ([(P.FUNCTION, P.F_RUN | P.F_ADDSUB)], "STALL_RESULT, ADDSUB or MS_ONE"),
    ([(P.APTR, 3), (P.FUNCTION, P.F_RUN | P.F_ADD)], "bit [0] must be zero"),
    ([(P.APTR, 508), (P.FUNCTION, P.F_RUN | P.F_ADD)], "runs past the 2048-byte PKA RAM"),
    ([(P.ALENGTH, 0), (P.FUNCTION, P.F_RUN | P.F_ADD)], "expected nonzero vector lengths"),
    ([(P.ALENGTH, 0), (P.FUNCTION, P.F_RUN | P.SEQ_ECMONT_MUL << P.SEQ_SHIFT)], "ECmontMUL with ALENGTH 0"),
    ([(P.FUNCTION, P.F_RUN | P.F_MULTIPLY), (P.RAM, 1)], "a write to PKA RAM offset 0x0 while the engine runs"),
    ([(P.FUNCTION, P.F_RUN | P.F_MULTIPLY), (P.APTR, 0)], "a write to APTR while the engine runs"),
    ([(P.FUNCTION, P.F_RUN | P.F_MULTIPLY), (P.FUNCTION, P.F_RUN | P.F_ADD)], "FUNCTION written with RUN while"),
])
def test_pka_misuse_is_one_line(steps, message):
    c = Core()
    c.w(P.ALENGTH, N), c.w(P.BLENGTH, N), c.w(P.BPTR, 16), c.w(P.CPTR, 32)
    c.put(16, 1 << 255)
    with pytest.raises(PeripheralError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")) as e:
        for off, v in steps:
            c.w(off, v)
    assert "\n" not in str(e.value)


def test_subtract_below_zero_and_a_narrow_store_are_refused():
    c = Core()
    with pytest.raises(PeripheralError, match="Subtract with A < B"):
        c.basic(P.F_SUBTRACT, 1, 2)
    with pytest.raises(PeripheralError, match="a 1-byte store at offset 0x1c"):
        c.p.write(P.FUNCTION, 1, 0, c.t)


def test_the_cc2652_profile_lists_the_pka():
    from cryptobench.targets.mcu.sim import devices
    kinds = {(m["kind"], m["base"], m["irq"]) for m in devices._load()["cc2652"].peripheral_models}
    assert ("cc26x2-pka", 0x40025000, 3) in kinds


def _run(tmp_path, *args):
    out = tmp_path / "run.json"
    proc = cli("run", *args, "--db", str(tmp_path / "run.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return __import__("json").loads(out.read_text())


@pytest.mark.e2e
def test_ecc_cells_on_the_modelled_pka_pass_their_vectors_and_name_the_pka(tmp_path):
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "cc2652", "--engine", "cc26x2-crypto",
               "--op", "ecdsa-verify", "--op", "ecdh-shared-secret", "--op", "ecdh-keygen", "--op", "ecdsa-sign",
               "--param", "curve=p256", "--timeout", "300")
    cells = [r for r in doc["results"] if r["engine"] == "cc26x2-crypto"]
    assert {r["op"] for r in cells} == {"ecdsa-verify", "ecdh-shared-secret", "ecdh-keygen", "ecdsa-sign"}
    for r in cells:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        assert r["served_by"].startswith("peripheral: TI CC26x2 PKA (model of TI SWCU185G"), r["served_by"]
    # the engine's ECC-MUL dominates: an ECDH cell is at least one modelled ECC-MUL
    ecdh = next(r for r in cells if r["op"] == "ecdh-shared-secret")
    assert ecdh["cycles"]["per_op_median"] > P.ecc_mul_cycles(N, N)


def _run_env(tmp_path, name, executor, *args):
    import json
    import os
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / f"{name}.sqlite"), "--json", str(out),
               env={**os.environ, "CRYPTOBENCH_SIM_EXECUTOR": executor})
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.mark.e2e
def test_ecc_cells_by_pka_interrupt_sleep_pass_their_vectors_and_count_the_same_on_both_executors(tmp_path):
    """cc26x2-crypto-irq: each PKA operation waited for in WFI until PKA_IRQ (RUN's complement), the
    handler masking the level line in the NVIC (cc26x2_pka.c, cc26x2_irq.c)."""
    args = ("--target", "sim:cortex-m4", "--device", "cc2652", "--engine", "cc26x2-crypto-irq", "--op", "ecdsa-verify",
            "--op", "ecdh-shared-secret", "--op", "ecdh-keygen", "--op", "ecdsa-sign", "--param", "curve=p256")
    docs = {ex: _run_env(tmp_path, ex, ex, *args) for ex in ("native", "unicorn")}

    def counts(doc):
        return {r["op"]: (r["cycles"]["per_op_median"], r["sleep"]["cycles_per_op"], r["sim"]["instructions_per_op"])
                for r in doc["results"]}
    for r in docs["native"]["results"]:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["detail"])
        assert r["served_by"].startswith("peripheral: TI CC26x2 PKA (model of TI SWCU185G"), r["served_by"]
        # the core slept through the engine's work: nearly all of an ECC-MUL's modelled latency at least
        # (the NVIC enable and the test of RUN come after the start)
        assert 0.99 * P.ecc_mul_cycles(N, N) < r["sleep"]["cycles_per_op"] < r["cycles"]["per_op_median"]
        assert r["energy"]["states"]["asleep_s"] > 0
    assert len(counts(docs["native"])) == 4 and counts(docs["native"]) == counts(docs["unicorn"])
    assert docs["native"]["conditions"]["builds"]["cc26x2-crypto-irq"]["driver_completion"] == "interrupt"


@pytest.mark.e2e
def test_x25519_cells_on_the_pka_by_polling_and_by_interrupt_pass_their_vectors_and_name_the_pka(tmp_path):
    """X25519 (ecdh-keygen, ecdh-shared-secret) through the driver's ECmontMUL, polled and in WFI."""
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "cc2652", "--engine", "cc26x2-crypto",
               "--engine", "cc26x2-crypto-irq", "--op", "ecdh-shared-secret", "--op", "ecdh-keygen",
               "--param", "curve=x25519")
    cells = doc["results"]
    assert {(r["engine"], r["op"]) for r in cells} == {(e, o) for e in ("cc26x2-crypto", "cc26x2-crypto-irq")
                                                        for o in ("ecdh-shared-secret", "ecdh-keygen")}
    for r in cells:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["engine"], r["op"], r["detail"])
        assert r["served_by"].startswith("peripheral: TI CC26x2 PKA (model of TI SWCU185G"), r["served_by"]
        assert r["cycles"]["per_op_median"] > P.ecmont_mul_cycles(N, N)          # one ECmontMUL a cell
        if r["engine"] == "cc26x2-crypto-irq":
            assert 0.99 * P.ecmont_mul_cycles(N, N) < r["sleep"]["cycles_per_op"] < r["cycles"]["per_op_median"]

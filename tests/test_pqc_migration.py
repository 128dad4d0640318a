"""The `pqc-migration` suite and layout (analysis/migration.py, report/layouts/migration.py): each
protocol party's post-quantum work beside its classical work, as ratios of time, stack, code size,
energy and bytes sent, from one stored run."""

import pytest

from conftest import cli, make_host
from storeutil import stored_run

from cryptobench.analysis.migration import ROLES, costs, pairs
from cryptobench.report.layouts import layout_tables
from cryptobench.runner.suites import load_suite

SIM = {"kind": "sim", "board": "sim-stm32f407", "cpu": "m4", "opt": "O2", "core": "cortex-m4",
       "device": "stm32f407", "clock_hz": 24_000_000, "libraries": ["pqclean", "mbedtls"]}
HZ = SIM["clock_hz"]
# simulated cycles per op (made up, round numbers so the sums are easy to read)
CYCLES = {("ml-kem-keygen", "pqclean"): 1_000_000, ("ml-kem-encaps", "pqclean"): 1_200_000,
          ("ml-kem-decaps", "pqclean"): 1_300_000, ("ml-dsa-keygen", "pqclean"): 4_000_000,
          ("ml-dsa-sign", "pqclean"): 10_000_000, ("ml-dsa-verify", "pqclean"): 4_500_000,
          ("ecdh-keygen", "mbedtls"): 2_000_000, ("ecdh-shared-secret", "mbedtls"): 2_100_000,
          ("ecc-keygen", "mbedtls"): 2_000_000, ("ecdsa-sign", "mbedtls"): 2_500_000,
          ("ecdsa-verify", "mbedtls"): 5_000_000}
PARAMS = {"ml-kem": {"level": 768}, "ml-dsa": {"level": 65}, "ec": {"curve": "p256"}}


def _cells(ops=CYCLES):
    out = []
    for (op, engine), cyc in ops.items():
        params = PARAMS["ml-kem" if op.startswith("ml-kem") else "ml-dsa" if op.startswith("ml-dsa") else "ec"]
        out.append((op, engine, dict(params), cyc / HZ))
    return out


def _stack(op, engine, params):
    return {"stack_bytes": 15_000 if op.startswith("ml-") else 1_500,
            "code_size": {"flash_bytes": 12_000 if op.startswith("ml-") else 20_000, "ram_bytes": 8}}


def test_roles_sum_time_and_take_the_largest_stack(tmp_path):
    run = stored_run(tmp_path / "m.sqlite", _cells(), target=SIM, extra=_stack, layout="pqc-migration")
    found = {(p.role, p.pq.scheme, p.classical.scheme): p for p in pairs(costs(run))}
    init = found[("key exchange, initiator", "ML-KEM-768", "ECDH P-256")]
    assert init.pq.cycles == pytest.approx(2_300_000, rel=0.02)            # keygen + decaps
    assert init.classical.cycles == pytest.approx(4_100_000, rel=0.02)     # keygen + shared secret
    assert init.pq.stack_bytes == 15_000 and init.classical.stack_bytes == 1_500
    assert init.pq.wire_bytes == 1184 and init.classical.wire_bytes == 65  # ek vs an uncompressed point
    resp = found[("key exchange, responder", "ML-KEM-768", "ECDH P-256")]
    assert resp.pq.wire_bytes == 1088 and resp.ratio("stack_bytes") == 10.0
    sign = found[("signature, sign", "ML-DSA-65", "ECDSA P-256")]
    assert sign.ratio("cycles") == pytest.approx(4.0, rel=0.02) and sign.pq.wire_bytes == 3309
    assert sign.classical.wire_bytes == 64
    assert {p.role for p in found.values()} == {r.name for r in ROLES}


def test_a_role_missing_an_operation_is_not_paired(tmp_path):
    ops = {k: v for k, v in CYCLES.items() if k[0] != "ml-kem-decaps"}
    run = stored_run(tmp_path / "m.sqlite", _cells(ops), target=SIM, extra=_stack)
    roles = {p.role for p in pairs(costs(run))}
    assert "key exchange, initiator" not in roles and "key exchange, responder" in roles


def test_the_layout_prints_ratios_then_costs_on_a_simulated_run(tmp_path):
    run = stored_run(tmp_path / "m.sqlite", _cells(), target=SIM, extra=_stack, layout="pqc-migration")
    ratios, cost = layout_tables(run, "pqc-migration")
    assert ratios.headers == ["Role", "Post-quantum", "Classical", "× time", "× stack", "× code size", "× bytes sent"]
    row = next(r.cells for r in ratios.rows if r.cells[0] == "signature, sign")
    assert row[1] == "ML-DSA-65 (pqclean)" and row[2] == "ECDSA P-256 (mbedtls)"
    assert row[3] == "×4.00" and row[4] == "×10.0" and row[5] == "×0.60" and row[6] == "×51.7"   # 3309 / 64
    verify = next(r.cells for r in ratios.rows if r.cells[0] == "signature, verify")
    assert verify[6] == "—"                                                 # a verifier sends nothing
    assert any("FIPS 203 Table 3" in n for n in ratios.notes)
    assert any("energy is left out" in n for n in ratios.notes)
    assert cost.headers == ["Role", "Scheme", "Engine", "Cycles", "Stack (B)", "Code size (B)", "Bytes sent"]
    assert next(r.cells for r in cost.rows if r.cells[1] == "ECDSA P-256")[4:] == ["1,500", "20,000", "65"]


def test_the_layout_on_the_host_times_in_microseconds_and_says_why_stack_is_out(tmp_path):
    cells = [(op, "openssl-sw" if e == "mbedtls" else e, p, t) for op, e, p, t in _cells()]
    run = stored_run(tmp_path / "h.sqlite", cells)
    ratios, cost = layout_tables(run, "pqc-migration")
    assert ratios.headers == ["Role", "Post-quantum", "Classical", "× time", "× bytes sent"]
    assert cost.headers == ["Role", "Scheme", "Engine", "Time (µs)", "Bytes sent"]      # no stack, size, energy
    assert next(r.cells for r in cost.rows if r.cells[1] == "ML-DSA-65")[-1] == "1,952"
    assert any("only microcontroller targets" in n for n in ratios.notes)


def test_energy_ratio_where_both_sides_have_a_usable_figure(tmp_path):
    def extra(op, engine, params):
        cyc = CYCLES[(op, engine)]
        return {**_stack(op, engine, params), "energy": {"per_op_j": cyc * 1e-9, "provenance": "modeled"}}
    run = stored_run(tmp_path / "e.sqlite", _cells(), target=SIM, extra=extra)
    ratios, _ = layout_tables(run, "pqc-migration")
    assert "× energy" in ratios.headers
    row = next(r for r in ratios.rows if r.cells[0] == "signature, sign")
    assert row.values[ratios.headers.index("× energy")] == pytest.approx(4.0)


def test_the_suite_names_the_layout_and_pairs_768_with_p256_and_x25519():
    suite = load_suite("pqc-migration")
    assert suite.layout == "pqc-migration"
    combos = {(g.op, g.params.get("level") or g.params.get("curve")) for g in suite.benches}
    assert ("ml-kem-encaps", 768) in combos and ("ml-dsa-sign", 65) in combos
    assert ("ecdh-keygen", "x25519") in combos and ("ecdsa-verify", "p256") in combos


@pytest.mark.slow
@pytest.mark.e2e
def test_the_suite_on_the_host_prints_the_ratios_with_the_real_engines(tmp_path, harness):
    """The real suite on the host: pqclean, Mbed TLS and OpenSSL verified, then timed and paired."""
    make_host("pqclean")
    proc = cli("run", "--suite", "pqc-migration", "--repeat", "3", "--budget", "10", "--db", str(tmp_path / "db.sqlite"))
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "What the migration costs" in out and "ML-KEM-768 (pqclean)" in out and "ECDSA P-256 (openssl-sw)" in out
    assert "×51.7" in out                       # an ML-DSA-65 signature is 3309 bytes against 64


def test_ecdh_keygen_stands_in_for_an_ecdsa_key_pair_and_says_so(tmp_path):
    ops = {k: v for k, v in CYCLES.items() if k[0] != "ecc-keygen"}
    run = stored_run(tmp_path / "m.sqlite", _cells(ops), target=SIM, extra=_stack)
    pair = next(p for p in pairs(costs(run)) if p.role == "signature, key pair")
    assert pair.classical.scheme == "ECDSA P-256" and pair.classical.stand_in == ("ecdh-keygen",)
    assert pair.classical.cycles == pytest.approx(2_000_000, rel=0.02)
    ratios, _ = layout_tables(run, "pqc-migration")
    assert any("ecdh-keygen stands in" in n and "mbedtls" in n for n in ratios.notes)
    # with its own ecc-keygen the engine is paired once, without a stand-in
    run = stored_run(tmp_path / "n.sqlite", _cells(), target=SIM, extra=_stack)
    kp = [p for p in pairs(costs(run)) if p.role == "signature, key pair"]
    assert len(kp) == 1 and kp[0].classical.stand_in == ()

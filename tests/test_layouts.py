"""The studies' own layouts (layouts/, docs/layouts.md): each study's tables from a stored run, with
its column headers, units and table order; `run`/`show --layout` and a suite's `layout`."""
import json

import pytest

from conftest import cli
from storeutil import stored_run

from cryptobench.core.errors import UsageError
from cryptobench.report.layouts import LAYOUTS, NAMES, layout_for, layout_tables
from cryptobench.runner.suites import load_suite

SIM = {"kind": "sim", "board": "nucleo-f030r8", "cpu": "m0", "opt": "Os", "core": "cortex-m0",
       "device": "stm32f030", "clock_hz": 48000000, "libraries": ["bearssl", "mbedtls"]}


def _titles(tables):
    return [t.title for t in tables]


# ------------------------------------------------------------------------------------------------ TI
@pytest.fixture
def ti_run(tmp_path):
    """A host run of the TI set, its [[bench]] tables listed out of order (13 before 9 and 6)."""
    cells = []
    for e, f in (("mbedtls-portable", 10.0), ("openssl-hw", 1.0)):
        cells += [("sha512", e, {"bytes": 64}, 2.0e-6 * f), ("ctr-drbg-instantiate", e, {}, 3.0e-6 * f),
                  ("ctr-drbg-generate", e, {"bytes": 32}, 1.0e-6 * f),
                  ("aes-cbc-encrypt", e, {"key_bits": 128, "bytes": 64}, 2.23e-6 * f),
                  ("aes-cbc-encrypt", e, {"key_bits": 128, "bytes": 8000}, 1.0e-4 * f),
                  ("ecdh-keygen", e, {"curve": "p256"}, 1e-4 * f), ("ecdh-keygen", e, {"curve": "x25519"}, 5e-5 * f)]
    tables = {"sha512": "Table 13", "ctr-drbg-instantiate": "Table 9", "ctr-drbg-generate": "Table 9",
              "aes-cbc-encrypt": "Table 6", "ecdh-keygen": "Table 14"}
    return stored_run(tmp_path / "ti.sqlite", cells, baseline="mbedtls-portable", tables=tables, layout="ti")


def test_ti_tables_in_the_reports_order_columns_and_units(ti_run):
    ts = layout_tables(ti_run, "ti")
    assert [t.title.split(".")[0] for t in ts] == ["Table 6", "Table 9", "Table 13", "Table 14"]  # 9 before 13
    assert ts[0].title.startswith("Table 6. AES CBC Benchmark Results")
    assert ts[0].headers == ["Payload Length (bytes)", "Duration mbedtls-portable (ms)", "Duration openssl-hw (ms)",
                             "Duration Improvement openssl-hw"]
    assert [c.unit for c in ts[0].columns[1:]] == ["ms", "ms", "x"]
    assert [c.group for c in ts[0].columns[1:]] == ["mbedtls-portable", "openssl-hw", "openssl-hw"]
    row = ts[0].rows[0].cells
    assert row[0] == "64" and row[1].rstrip("*") == "0.0223"          # 3 significant figures in ms, not 0.022
    assert row[3].startswith("10.0 [")                                  # t_sw / t_hw with its interval
    assert ts[1].headers[0] == "Operation" and [r.cells[0] for r in ts[1].rows] == ["Initialize", "Generate bytes (32)"]
    assert ts[3].headers[:2] == ["Operation", "Curve"] and {r.cells[1] for r in ts[3].rows} == {"NIST-P256", "Curve25519"}
    # no energy: the current and EEI columns are left out, and the first table says why
    assert not any("Average Current" in h for t in ts for h in t.headers)
    assert any("Average Current and Energy Efficiency Improvement are left out" in n for n in ts[0].notes)


def test_ti_average_current_and_eei_where_the_run_has_energy(tmp_path):
    cur = {"mbedtls-portable": 3.1e-3, "openssl-hw": 2.0e-3}
    t = {"mbedtls-portable": 1e-3, "openssl-hw": 1e-4}
    extra = lambda op, e, p: {"energy": {"per_op_j": t[e] * 3.3 * cur[e], "avg_current_a": cur[e],
                                         "provenance": "modeled"}}
    run = stored_run(tmp_path / "e.sqlite", [("sha256", e, {"bytes": 64}, t[e]) for e in t],
                     baseline="mbedtls-portable", tables={"sha256": "Table 11"}, extra=extra)
    (table,) = layout_tables(run, "ti")
    assert table.headers == ["Payload Length (bytes)", "Duration mbedtls-portable (ms)",
                             "Average Current mbedtls-portable (mA)", "Duration openssl-hw (ms)",
                             "Duration Improvement openssl-hw", "Average Current openssl-hw (mA)",
                             "Energy Efficiency Improvement openssl-hw"]
    cells = table.rows[0].cells
    assert cells[2] == "3.10" and cells[5] == "2.00" and cells[6] == "15.5"      # (t_sw I_sw) / (t_hw I_hw)
    assert any("modeled" in n for n in table.notes)


# ------------------------------------------------------------------------------------------------ NXP
def test_nxp_kb_per_s_with_the_blogs_kilobyte_and_cycles_per_byte(tmp_path):
    cells = [(op, e, p, t) for e, t in (("mbedtls-portable", 2.048e-6), ("openssl-hw", 1.024e-6))
             for op, p in (("sha1", {"bytes": 1024}), ("aes-cbc-encrypt", {"key_bits": 192, "bytes": 1024}))]
    run = stored_run(tmp_path / "n.sqlite", cells, baseline="mbedtls-portable")
    (table,) = layout_tables(run, "nxp")
    assert table.headers[0] == "Test algorithm item"
    assert table.headers[1] == "Opt-distro mbedtls-portable KB/s (KB = 1024 B)"
    assert table.headers[2] == "Opt-distro mbedtls-portable cycles/byte (TSC)"       # host: TSC reference cycles
    assert [c.unit for c in table.columns[1:3]] == ["KB/s", "cycles/B"]
    assert [r.cells[0] for r in table.rows] == ["SHA-1", "AES-CBC-192"]
    # 1024 B in 1.024 µs = 1e9 B/s = 976,562.5 KB/s with KB = 1024 B (1,000,000 with KB = 1000)
    assert table.rows[0].cells[3].rstrip("*") == "976,562"          # no decimals from 1,000 up
    assert any("1024" in n and "KB" in n for n in table.notes)


def test_nxp_on_a_microcontroller_names_its_optimisation_level(tmp_path):
    run = stored_run(tmp_path / "m.sqlite", [("sha256", "mbedtls", {"bytes": 1024}, 1e-3)], target=SIM)
    (table,) = layout_tables(run, "nxp")
    assert table.headers[1:] == ["Opt-Os mbedtls KB/s (KB = 1024 B)", "Opt-Os mbedtls cycles/byte"]
    assert table.rows[0].cells[2] == "46.88"                     # 48,000 cycles / 1024 B


# ------------------------------------------------------------------------------------------------ Cifra
def _cifra_cells(setup=10_000, per_byte=500):
    """AES-128-GCM on two libraries over a 0…256 B sweep, cycles = setup + per_byte · length."""
    return [("aes-gcm-encrypt", lib, {"key_bits": 128, "aad_bytes": 16, "bytes": n}, (setup + k * per_byte * n) / 48e6)
            for lib, k in (("bearssl", 1), ("mbedtls", 2)) for n in range(0, 257, 32)]


def test_cifra_table_at_256_bytes_and_likely_throughput_from_a_long_message(tmp_path):
    run = stored_run(tmp_path / "c.sqlite", _cifra_cells(), target=SIM)
    results, *charts = layout_tables(run, "cifra")
    assert results.title.startswith("Results: encrypting a 256-byte message")
    assert results.headers == ["Algorithm", "Library", "Cycles", "Cycles/byte", "Stack (B)", "Code size (B)",
                               "Likely throughput (KB/s, KB = 1000 B)"]
    row = results.rows[0].cells
    assert row[:2] == ["AES-128-GCM", "bearssl"] and row[2].rstrip("*") == "138,000"    # 10,000 + 500 · 256
    # one long message: 48 MHz / 500 cycles per byte = 96,000 B/s; the 256-byte message's own rate
    # (48e6 · 256 / 138,000 = 89,043 B/s) counts its set-up, and is not what the post means
    assert row[6] == "96.00" and "89.04" not in json.dumps([r.cells for r in results.rows])
    assert any("slope" in n and "set-up" in n for n in results.notes)
    assert [c.title for c in charts] == ["Cycles vs message length (the post's chart) — bearssl",
                                         "Cycles vs message length (the post's chart) — mbedtls"]
    assert charts[0].headers == ["Message size (bytes)", "AES-128-GCM"] and len(charts[0].rows) == 9


def test_cifra_on_the_host_leaves_stack_and_code_size_out_and_says_why(tmp_path):
    run = stored_run(tmp_path / "h.sqlite", _cifra_cells())
    results = layout_tables(run, "cifra")[0]
    assert "Stack (B)" not in results.headers and "Code size (B)" not in results.headers
    assert "Cycles (TSC)" in results.headers
    assert any("Stack is left out" in n for n in results.notes)


# ------------------------------------------------------------------------------------------------ ZHAW
@pytest.fixture
def zhaw_run(tmp_path):
    times = {"openssl-hw": 1.0, "pkcs11": 30.0}
    cells = []
    for e, f in times.items():
        cells += [("rsa-keygen", e, {"rsa_bits": 2048}, 0.2 * f), ("ecdsa-sign", e, {"curve": "p256"}, 4.0e-4 * f),
                  ("ecc-keygen", e, {"curve": "p256"}, 5.0e-4 * f),
                  ("random", e, {"bytes": 32, "source": "library"}, 8.19e-5 * f),
                  ("sha256", e, {"bytes": 32}, 1.0e-4 * f)]
    tables = {"rsa-keygen": "Table 4", "ecdsa-sign": "Table 4", "ecc-keygen": "Table 4", "random": "Table 3 (random)",
              "sha256": "Table 3 (hash)"}
    return stored_run(tmp_path / "z.sqlite", cells, baseline="openssl-hw", tables=tables)


def test_zhaw_tables_3_to_9_seconds_to_three_significant_digits(zhaw_run):
    ts = layout_tables(zhaw_run, "zhaw")
    assert [t.key for t in ts] == ["Table 3", "Table 4", "Table 5", "Table 7", "Table 9"]   # no energy: no 6, 8
    t3, t4, t5, t7, t9 = ts
    assert t3.headers == ["Primitive", "Bytes", "openssl-hw Time [s]", "pkcs11 Time [s]"]
    assert [c.unit for c in t3.columns[2:]] == ["s", "s"]
    assert [r.cells[:2] for r in t3.rows] == [["Random", "32"], ["Hash", "32"]]         # the suite's order
    assert t3.rows[0].cells[2] == "8.19e-05"
    assert [r.cells[:2] for r in t4.rows] == [["ECDSA", "Key Gen."], ["ECDSA", "Sign"], ["RSA2048", "Key Gen."]]
    assert t4.rows[2].cells[3] == "6.00e+00"
    assert any("Energy [J] is left out" in n for n in t3.notes)
    # the highest RSDs, RSA key generation excluded (non-deterministic) as the paper does
    assert t5.headers == ["openssl-hw", "pkcs11"] and t5.title.startswith("Table 5: Execution time measurements")
    assert not any("RSA2048 Key Gen." in c for r in t5.rows for c in r.cells)
    assert t5.rows[0].cells[0].endswith("%" + t5.rows[0].cells[0].split("%", 1)[1])
    assert any("RSA key generation (non-deterministic)" in n for n in t5.notes)
    assert "the same tests for all engines" in t7.title
    assert t9.headers == ["n", "Time"] and t9.rows[0].cells == ["openssl-hw", "3"]


# ------------------------------------------------------------------------------------------------ Pisa
def test_pisa_tables_i_to_v_in_roman_order(tmp_path):
    t = {"openssl-sw": 1e-4, "openssl-hw": 1e-5}
    extra = lambda op, e, p: {"energy": {"per_op_j": t[e] * 0.5, "avg_power_w": 0.5, "provenance": "measured"}}
    cells = [(op, e, p, t[e]) for e in t for op, p in (("ecdsa-sign", {"curve": "p521"}),
                                                       ("aes-ecb-encrypt", {"key_bits": 256, "bytes": 16384}))]
    run = stored_run(tmp_path / "p.sqlite", cells, baseline="openssl-sw", extra=extra,
                     tables={"ecdsa-sign": "Table III", "aes-ecb-encrypt": "Table I"})
    ts = layout_tables(run, "pisa")
    assert [x.key for x in ts] == ["Table I", "Table III", "Table IV", "Table V"]
    t1 = ts[0]
    assert t1.title.startswith("Table I. Performance data for AES-ECB-256")
    assert t1.headers == ["Number of core", "openssl-sw Exec. time (s)", "openssl-sw D (Mb)", "openssl-sw TH (Mbps)",
                          "openssl-sw P (mW)", "openssl-sw E (mJ/Mb)", "openssl-hw Exec. time (s)", "openssl-hw D (Mb)",
                          "openssl-hw TH (Mbps)", "openssl-hw P (mW)", "openssl-hw E (mJ/Mb)"]
    assert t1.rows[0].cells[0] == "1" and t1.rows[0].cells[3] == "1,311"       # 16384 · 8 / 1e6 Mb / 100 µs
    assert ts[1].headers[3] == "openssl-sw TH (Op/s)" and ts[1].headers[5] == "openssl-sw E (mJ/Op)"
    assert [r.cells[:2] for r in ts[2].rows] == [["AES-ECB-256", "openssl-hw"], ["ECDSA P-521", "openssl-hw"]]
    assert ts[3].headers == ["Algorithm", "FoM openssl-sw (1 core)", "FoM openssl-hw (1 core)"]


def test_pisa_without_energy_leaves_p_e_and_table_v_out(tmp_path):
    run = stored_run(tmp_path / "p.sqlite", [("sha256", e, {"bytes": 16384}, 1e-4) for e in ("openssl-sw", "openssl-hw")],
                     baseline="openssl-sw", tables={"sha256": "Table II"})
    ts = layout_tables(run, "pisa")
    assert [x.key for x in ts] == ["Table II", "Table IV"]
    assert not any("P (mW)" in h for h in ts[0].headers)
    assert any("Table V (FoM = TH / E) is left out" in n for n in ts[-1].notes)


# ------------------------------------------------------------------------------------------------ registry, suites, CLI
def test_every_study_suite_names_its_layout_and_the_registry_has_them():
    assert set(LAYOUTS) | {"default"} == set(NAMES)
    for suite, name in (("ti-cc26x2", "ti"), ("nxp-imxrt", "nxp"), ("cifra-aead", "cifra"), ("zhaw-iot", "zhaw"),
                        ("pisa-a53", "pisa")):
        assert load_suite(suite).layout == name
    assert load_suite("default").layout is None


def test_a_suite_with_an_unknown_layout_is_refused_with_its_line(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[suite]\ntitle = "x"\nlayout = "ieee"\n\n[[bench]]\nop = "sha256"\n')
    with pytest.raises(UsageError) as exc:
        load_suite(str(path))
    assert f"{path}:3" in str(exc.value) and "'layout'" in str(exc.value) and "'ti'" in str(exc.value)


@pytest.mark.e2e
def test_show_prints_the_suites_layout_and_layout_default_the_plain_tables(ti_run, tmp_path):
    db = str(tmp_path / "ti.sqlite")
    assert layout_for(ti_run) == "ti" and layout_for(ti_run, "default") == "default"
    out = cli("show", "latest", "--db", db).stdout
    assert "Table 6. AES CBC Benchmark Results" in out and "layout ti:" in out
    plain = cli("show", "latest", "--db", db, "--layout", "default").stdout
    assert "Table 6." not in plain and "Impr. openssl-hw" in plain
    md = cli("show", "latest", "--db", db, "--format", "md").stdout
    assert "## Table 9. AES CTR DRBG Benchmark Results" in md and "| Operation | Duration mbedtls-portable (ms) |" in md
    # csv and json keep their data forms unless --layout is named
    assert cli("show", "latest", "--db", db, "--format", "json").stdout.lstrip().startswith('{\n  "schema"')
    tables = json.loads(cli("show", "latest", "--db", db, "--format", "json", "--layout", "ti").stdout)
    assert [t["title"].split(".")[0] for t in tables] == ["Table 6", "Table 9", "Table 13", "Table 14"]
    assert tables[0]["columns"][1] == {"label": "Duration mbedtls-portable (ms)", "align": "right", "unit": "ms",
                                       "group": "mbedtls-portable"}
    csv = cli("show", "latest", "--db", db, "--format", "csv", "--layout", "ti").stdout.splitlines()
    assert csv[0].startswith("table,Payload Length (bytes),Duration mbedtls-portable (ms)")
    bad = cli("show", "latest", "--db", db, "--layout", "ieee")
    assert bad.returncode == 2 and "--layout" in bad.stderr


@pytest.mark.e2e
def test_run_and_show_help_name_the_layouts_and_their_default():
    for cmd in ("run", "show"):
        text = " ".join(cli(cmd, "--help").stdout.split())
        assert "--layout {default,ti,nxp,cifra,zhaw,pisa,pqm4,pqc-migration}" in text and "Default: the run's suite's layout" in text

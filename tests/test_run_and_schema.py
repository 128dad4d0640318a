"""A real run end to end: tables, stored conditions, the documented JSON schema, comparisons."""
import json

import jsonschema
import pytest

from conftest import ROOT, cli

SCHEMA = json.loads((ROOT / "docs" / "result.schema.json").read_text())


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, harness):
    tmp = tmp_path_factory.mktemp("run")
    suite = tmp / "small.toml"
    suite.write_text('''
[suite]
baseline = "openssl-sw"
repeat = 5
warmup = 1
min_time = 0.002

[[bench]]
op = "aes-gcm-encrypt"
bytes = [64, 8000]
aad_bytes = 32

[[bench]]
op = "aes-cbc-encrypt"
bytes = 64

[[bench]]
op = "ecdsa-sign"

[[bench]]
op = "ecjpake-exchange"

[[bench]]
op = "random"
bytes = 32
source = ["getrandom", "hwrng"]
engines = ["system"]
''')
    db, out = tmp / "db.sqlite", tmp / "run.json"
    proc = cli("run", "--suite", str(suite), "--db", str(db), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out.read_text()), db


@pytest.mark.slow
def test_document_matches_schema(small_run):
    _, doc, _ = small_run
    jsonschema.validate(doc, SCHEMA)


def test_every_cell_is_accounted_for(small_run):
    _, doc, _ = small_run
    engines = doc["run"]["options"]["engines"]
    for op in ("aes-gcm-encrypt", "aes-cbc-encrypt", "ecdsa-sign", "ecjpake-exchange"):
        cells = [r for r in doc["results"] if r["op"] == op]
        assert {r["engine"] for r in cells} == set(engines), op
    cbc = {r["engine"]: r for r in doc["results"] if r["op"] == "aes-cbc-encrypt"}
    assert cbc["libsodium"]["status"] == "unsupported" and cbc["libsodium"]["detail"]
    assert cbc["system"]["status"] == "unsupported"
    for r in doc["results"]:
        if r["status"] == "ok":
            assert r["kat"] == "pass" and r["provenance"] == "measured"
            assert r["time_s"]["min"] <= r["time_s"]["median"] <= r["time_s"]["max"]
            assert len(r["samples"]) == r["n"] == 5
        else:
            assert r["detail"]


def test_throughput_and_halving(small_run):
    _, doc, _ = small_run
    gcm = next(r for r in doc["results"] if r["op"] == "aes-gcm-encrypt" and r["engine"] == "openssl-hw"
               and r["params"]["bytes"] == 8000)
    assert gcm["throughput_Bps"] == pytest.approx(8000 / gcm["estimate"]["value"])     # the printed time
    assert gcm["KiBps"] == pytest.approx(gcm["throughput_Bps"] / 1024)
    jpake = [r for r in doc["results"] if r["op"] == "ecjpake-exchange" and r["status"] == "ok"]
    for r in jpake:
        k, ns, _ = r["samples"][0]
        assert r["halved"] is True
        assert min(ns / k / 2e9 for k, ns, _ in r["samples"]) == pytest.approx(r["time_s"]["min"])


def test_comparisons_against_the_baseline(small_run):
    _, doc, _ = small_run
    comps = [c for c in doc["comparisons"] if c["op"] == "aes-gcm-encrypt" and c["engine"] == "openssl-hw"]
    assert len(comps) == 2
    for c in comps:
        assert c["baseline"] == "openssl-sw"
        assert c["ci95"][0] <= c["duration_improvement"] <= c["ci95"][1]


def test_conditions_are_recorded(small_run):
    _, doc, _ = small_run
    cond = doc["conditions"]
    assert cond["host"]["cpu"]["model"] and cond["host"]["os"] and cond["host"]["cryptobench"]
    assert cond["harness"]["compiler"] and "-O" in cond["harness"]["cflags"]
    sw = cond["engines"]["openssl-sw"]
    assert "OpenSSL" in sw["version"]
    if "aes" in cond["host"]["cpu"]["crypto_flags"]:
        assert sw["mask_verified"] is True and "AES-NI" in sw["extensions_masked"]
        assert "AES-NI" in cond["engines"]["openssl-hw"]["extensions_enabled"]
        assert "AES-NI" not in sw["extensions_enabled"]
    assert "2.28" in cond["engines"]["mbedtls"]["version"]


@pytest.mark.e2e
def test_tables_and_show_formats(small_run):
    proc, doc, db = small_run
    assert "AES-GCM" in proc.stdout and "Impr. openssl-hw" in proc.stdout
    run_id = str(doc["run"]["id"])
    md = cli("show", run_id, "--db", str(db), "--format", "md")
    assert md.returncode == 0 and "| bytes |" in md.stdout
    csv = cli("show", "latest", "--db", str(db), "--format", "csv")
    assert csv.returncode == 0 and csv.stdout.splitlines()[0].startswith("run_id,op,params_json,engine")
    js = cli("show", "latest", "--db", str(db), "--format", "json")
    again = json.loads(js.stdout)
    assert again["results"] == doc["results"] and again["comparisons"] == doc["comparisons"]


def test_noise_floor_is_measured_and_reported(small_run):
    proc, doc, _ = small_run
    noise = doc["conditions"]["noise_floor"]
    rounds = doc["conditions"]["sampling"]["rounds"]        # sampled in every round, 2 batches a visit
    assert noise["op"] == "reference-loop" and noise["provenance"] == "measured"
    assert noise["n"] == len(noise["samples"]) == len(noise["rounds"]) == 2 * rounds
    assert noise["rsd_pct"] >= 0 and noise["max_over_median"] >= 1
    assert "machine noise floor" in proc.stdout


@pytest.mark.e2e
def test_rekey_is_a_timing_parameter_of_every_cipher_engine(harness, tmp_path):
    """rekey=1 (set the key before every operation, as `openssl speed -aead`) runs on every engine
    that has the cipher; it does not select vectors, so the same KATs gate it."""
    out = tmp_path / "rekey.json"
    proc = cli("run", "--op", "aes-gcm-encrypt", "--op", "chacha20-poly1305-encrypt", "--param", "rekey=0,1",
               "--param", "key_bits=256", "--repeat", "3", "--min-time", "0.001", "--engine", "openssl-hw",
               "--engine", "mbedtls", "--engine", "libsodium", "--db", str(tmp_path / "db.sqlite"),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    cells = json.loads(out.read_text())["results"]
    rekeyed = [c for c in cells if c["params"].get("rekey") == 1]
    assert len(rekeyed) == 6
    for c in rekeyed:
        assert c["status"] == "ok", (c["engine"], c["op"], c["detail"])
        assert c["kat"] == "pass"


def test_portable_openssl_masks_vector_units_and_says_so(harness):
    """openssl-portable: the studies' "software" (no crypto extensions, no SIMD, no BMI/ADX where
    OpenSSL lets them be masked); the mask is read back from OpenSSL itself."""
    from cryptobench.targets.host.engines import ENGINES, probe_engines
    info, why = probe_engines(["openssl-portable"])["openssl-portable"]
    assert why is None, why
    assert {"AES-NI", "SHA-NI", "SSSE3", "AVX", "AVX2", "BMI2", "ADX"} <= set(info["extensions_masked"])
    assert info["mask_verified"] is True and info["extensions_enabled"] == []
    assert not ENGINES["openssl-portable"].default          # offered, not in every run


def test_portable_mbedtls_is_built_without_cpu_specific_code_and_says_so(harness):
    """mbedtls-portable: Mbed TLS built here as portable C; the harness reports its own
    configuration and the conditions say what was compiled out."""
    from cryptobench.targets.host.engines import ENGINES, probe_engines
    info, why = probe_engines(["mbedtls-portable"])["mbedtls-portable"]
    assert why is None, why
    assert info["config"] == {"MBEDTLS_AESNI_C": 0, "MBEDTLS_HAVE_ASM": 0, "MBEDTLS_PADLOCK_C": 0}
    assert info["mask_verified"] is True and info["aesni"] == 0
    assert any("AES-NI" in m for m in info["extensions_masked"])
    assert "-fno-tree-vectorize" in info["library_cflags"] and "built by cryptobench" in info["build"]
    system, _ = probe_engines(["mbedtls"])["mbedtls"]
    assert system["build"] == "system libmbedcrypto" and "mask" not in system
    assert not ENGINES["mbedtls-portable"].default


def test_a_portable_engine_whose_build_has_cpu_code_on_is_refused():
    from cryptobench.targets.host.engines import ENGINES, check_engine

    class Harness:
        def engine_info(self, engine):
            return {"version": "Mbed TLS 2.28.10",
                    "config": {"MBEDTLS_AESNI_C": 1, "MBEDTLS_HAVE_ASM": 0, "MBEDTLS_PADLOCK_C": 0}}

    info, why = check_engine(ENGINES["mbedtls-portable"], Harness())
    assert why == "not a portable build: the harness reports MBEDTLS_AESNI_C on"
    assert info["mask_verified"] is False


def test_a_portable_engine_without_its_binary_says_how_to_build_it(monkeypatch, tmp_path):
    from cryptobench.targets.host.engines import probe_engines
    fake = tmp_path / "cbh"
    fake.write_text("")
    monkeypatch.setenv("CRYPTOBENCH_HARNESS", str(fake))
    info, why = probe_engines(["mbedtls-portable"])["mbedtls-portable"]
    assert "cbh-mbedtls-portable is not built" in why and "make -C harness/host portable" in why

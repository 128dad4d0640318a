"""`compare` sets published values beside yours only where the comparison means something: absolute
values for the same kind of target, otherwise the study's Improvement beside yours (ratio against
ratio) with one line saying why; the study's KB said; Cifra's likely throughput against a long
message only; tables in the study's order; significant figures."""
import json

import pytest

from conftest import cli
from storeutil import stored_run

from cryptobench.analysis.compare import compare, tables, text_lines
from cryptobench.references import load_reference

SIM = {"kind": "sim", "board": "lp-cc2652r7", "cpu": "m4", "opt": "Os", "core": "cortex-m4", "device": "cc2652",
       "clock_hz": 48000000, "libraries": ["mbedtls"]}

# a TI-like study: an MCU's accelerator over its software library, an Improvement row as printed
# (Table 13 before Table 9 in the file, as the TI transcription has them), and durations
REF = """
[reference]
name = "mini"
title = "An MCU study"
document = "Test document"
seed = "none"

[[source]]
id = "hw"
engine_kind = "on-chip accelerator"
engine = "AES engine"
device = "CC2652"
cpu = "Arm Cortex-M4F"
target_kind = "mcu"
clock_hz = 48000000
improvement_over = "sw"

[[source]]
id = "sw"
engine_kind = "sw library"
engine = "mbed TLS 2.7.9"
device = "CC2652"
cpu = "Arm Cortex-M4F"
target_kind = "mcu"
clock_hz = 48000000

[[row]]
table = "Table 13"
label = "SHA-512 64 B sw"
op = "sha512"
params = { bytes = 64 }
source = "sw"
metric = "duration"
value = 0.44
unit = "ms"

[[row]]
table = "Table 13"
label = "SHA-512 64 B hw"
op = "sha512"
params = { bytes = 64 }
source = "hw"
metric = "duration"
value = 0.022
unit = "ms"

[[row]]
table = "Table 13"
label = "SHA-512 64 B Duration Improvement"
op = "sha512"
params = { bytes = 64 }
source = "hw"
metric = "duration_improvement"
value = 20.0
unit = "x"
derived = "t_sw / t_hw"

[[row]]
table = "Table 9"
label = "Generate sw"
op = "ctr-drbg-generate"
params = { bytes = 32 }
source = "sw"
metric = "duration"
value = 0.227
unit = "ms"

[[row]]
table = "Table 9"
label = "Generate hw"
op = "ctr-drbg-generate"
params = { bytes = 32 }
source = "hw"
metric = "duration"
value = 0.072
unit = "ms"
"""


@pytest.fixture
def ref(tmp_path):
    path = tmp_path / "mini.toml"
    path.write_text(REF)
    return load_reference(path)


def _host_run(tmp_path, name="host.sqlite"):
    cells = [(op, e, p, t * f) for e, f in (("mbedtls-portable", 4.0), ("openssl-hw", 1.0))
             for op, p, t in (("sha512", {"bytes": 64}, 2e-7), ("ctr-drbg-generate", {"bytes": 32}, 1e-7))]
    return stored_run(tmp_path / name, cells, baseline="mbedtls-portable")


def test_a_host_run_is_not_set_beside_an_mcu_study_its_improvements_are(tmp_path, ref):
    doc = compare(_host_run(tmp_path), ref)
    assert doc["groups"] == []                                # no 2.4 GHz x86 beside a 48 MHz Cortex-M4F
    assert len(doc["not_same_kind"]) == 4
    (why,) = doc["kind_lines"]
    assert "x86_64 host" in why and "48 MHz Arm Cortex-M4F" in why and "comparing Improvement ratios only" in why
    assert why in text_lines(doc)
    ts = tables(doc)
    # ratio against ratio, the tables in the study's order (Table 9 before Table 13)
    assert [t.title for t in ts] == ["Table 9 — Duration Improvement (ratio against ratio)",
                                     "Table 13 — Duration Improvement (ratio against ratio)"]
    t13 = ts[1]
    assert t13.headers == ["operation", "parameters", "published hw over sw", "yours openssl-hw over mbedtls-portable"]
    cells = t13.rows[0].cells
    assert cells[2] == "20.0"                                 # the study's own Improvement row, as printed
    assert cells[3].startswith("4.00 [")                      # yours, with its interval
    assert any("as printed" in n for n in t13.notes)
    # where the study prints no Improvement, it is computed from its two durations, and said so
    assert ts[0].rows[0].cells[2] == "3.15"                   # 0.227 / 0.072
    assert any("computed here from the published duration" in n for n in ts[0].notes)
    assert doc["unmatched_yours"] == []                       # compared by ratio: not "no published row"


def test_without_a_baseline_a_host_run_says_there_is_nothing_to_compare(tmp_path, ref):
    run = stored_run(tmp_path / "n.sqlite", [("sha512", "openssl-hw", {"bytes": 64}, 2e-7)])
    doc = compare(run, ref)
    assert tables(doc) == [] and "no baseline engine" in doc["kind_lines"][0]


def test_an_mcu_run_is_set_beside_an_mcu_study_with_significant_figures(tmp_path, ref):
    run = stored_run(tmp_path / "s.sqlite", [("sha512", "mbedtls", {"bytes": 64}, 1.5e-3),
                                             ("sha512", "bearssl", {"bytes": 64}, 2.0e-3),
                                             ("ctr-drbg-generate", "mbedtls", {"bytes": 32}, 2.23e-5)], target=SIM)
    doc = compare(run, ref)
    assert doc["kind_lines"] == [] and doc["not_same_kind"] == []
    ts = tables(doc)
    assert [t.title for t in ts] == ["Table 9 — duration", "Table 13 — duration"]
    t9, t13 = ts
    assert t13.headers[2:5] == ["published sw (ms)", "published hw (ms)", "mbedtls (ms)"]
    assert t13.rows[0].cells[2:5] == ["0.440", "0.0220", "1.50"]   # not 0.022 but 0.0220: significant figures
    assert t9.headers[2:5] == ["published sw (µs)", "published hw (µs)", "mbedtls (µs)"]
    assert t9.rows[0].cells[2:5] == ["227", "72.0", "22.3"]
    assert any(h.endswith("cycles") for h in t9.headers)      # both sides have a clock


NXP = """
[reference]
name = "kb"
title = "KB study"
document = "Test"
seed = "none"

[[source]]
id = "sw"
engine_kind = "sw library"
engine = "mbedTLS"
device = "RT1060"
target_kind = "mcu"
clock_hz = 600000000

[[source]]
id = "hw"
engine_kind = "on-chip accelerator"
engine = "DCP"
device = "RT1060"
target_kind = "mcu"
clock_hz = 600000000
improvement_over = "sw"

[[row]]
table = "Section 3.2 table"
label = "SHA-1 sw"
op = "sha1"
params = { bytes = 1024 }
source = "sw"
metric = "throughput"
value = 1000.0
unit = "KiB/s"

[[row]]
table = "Section 3.2 table"
label = "SHA-1 hw"
op = "sha1"
params = { bytes = 1024 }
source = "hw"
metric = "throughput"
value = 4000.0
unit = "KiB/s"
"""


def test_the_studys_kilobyte_is_said_and_kept(tmp_path):
    path = tmp_path / "kb.toml"
    path.write_text(NXP)
    ref = load_reference(path)
    # at the study's 600 MHz: a rate at another clock is scaled to it (tests/test_compare_clocks.py)
    run = stored_run(tmp_path / "k.sqlite", [("sha1", "mbedtls", {"bytes": 1024}, 1.024e-3)],
                     target={**SIM, "clock_hz": 600000000})
    (t,) = tables(compare(run, ref))
    assert t.headers[2] == "published sw (KB/s, KB = 1024 B as the study counts)"
    assert t.rows[0].cells[2] == "1,000"                      # as printed, not 1,024 KB of 1000 B
    assert t.rows[0].cells[4] == "977"                         # 1024 B / 1.024 ms = 1e6 B/s = 977 KB of 1024 B
    assert any("KB = 1024 B" in n for n in t.notes)
    host = compare(_host_run(tmp_path, "h2.sqlite"), ref)
    assert host["ratios"] == []                                # the host run has no SHA-1: nothing to set beside


CIFRA = """
[reference]
name = "cifra"
title = "Cifra"
document = "Test"
seed = "none"

[[source]]
id = "cifra"
engine_kind = "sw library"
engine = "Cifra"
device = "STM32F030"
target_kind = "mcu"
clock_hz = 48000000

[[row]]
table = "Results table (256-byte message)"
label = "AES-128-GCM, Likely throughput"
op = "aes-gcm-encrypt"
params = { key_bits = 128, bytes = 256, aad_bytes = 16 }
source = "cifra"
metric = "throughput"
value = 41.3
unit = "KB/s"
"""


@pytest.mark.e2e
def test_cifra_likely_throughput_only_against_a_long_message(tmp_path):
    path = tmp_path / "cifra.toml"
    path.write_text(CIFRA)
    ref = load_reference(path)
    sweep = [("aes-gcm-encrypt", "bearssl", {"key_bits": 128, "aad_bytes": 16, "bytes": n}, (10_000 + 500 * n) / 48e6)
             for n in range(0, 257, 32)]
    doc = compare(stored_run(tmp_path / "c.sqlite", sweep, target=SIM), ref)
    (g,) = doc["groups"]
    assert g["metric"] == "likely_throughput"
    assert g["yours"]["bearssl"] == pytest.approx(96_000, rel=1e-4)     # 48 MHz / 500 cycles per byte, not 256 B / 138,000 cycles
    (t,) = tables(doc)
    assert "likely throughput (one long message)" in t.title and any("slope" in n for n in t.notes)
    # one 256 B message alone is not a long message: not compared, and said why
    single = compare(stored_run(tmp_path / "one.sqlite", sweep[-1:], target=SIM), ref)
    assert single["groups"] == []
    assert "a short message's cost / length" in single["unmatched_published"][0]["why"]


@pytest.mark.e2e
def test_compare_cli_prints_the_kind_line_and_json_has_the_ratios(tmp_path, ref):
    _host_run(tmp_path)
    db = str(tmp_path / "host.sqlite")
    r = cli("compare", "latest", "--reference", str(ref.path), "--db", db)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "absolute values are not compared, comparing Improvement ratios only" in text
    assert text.index("Table 9 — Duration Improvement") < text.index("Table 13 — Duration Improvement")
    j = json.loads(cli("compare", "latest", "--reference", str(ref.path), "--db", db, "--format", "json").stdout)
    assert j["run_kind"] == "host" and {r["table"] for r in j["ratios"]} == {"Table 9", "Table 13"}


def test_the_five_studies_state_their_sources_kind():
    for name, kinds in (("ti-cc26x2", {"mcu"}), ("nxp-imxrt", {"mcu"}), ("cifra-aead", {"mcu"}), ("zhaw-iot", {"mcu"}),
                        ("pisa-a53", {"host", "model"})):
        ref = load_reference(name)
        assert {s.target_kind for s in ref.sources.values()} == kinds, name
        for s in ref.sources.values():
            assert not s.improvement_over or s.improvement_over in ref.sources


CURRENT = REF + """
[[row]]
table = "Table 13"
label = "SHA-512 64 B sw current"
op = "sha512"
params = { bytes = 64 }
source = "sw"
metric = "average_current"
value = 3.10
unit = "mA"
"""


def test_a_modeled_current_is_not_set_beside_the_published_one(tmp_path):
    path = tmp_path / "cur.toml"
    path.write_text(CURRENT)
    energy = lambda op, engine, params: {"energy": {"per_op_j": 1.5e-3 * 3.3 * 3.1e-3, "avg_current_a": 3.1e-3,
                                                    "provenance": "modeled"}}
    run = stored_run(tmp_path / "c.sqlite", [("sha512", "mbedtls", {"bytes": 64}, 1.5e-3)], target=SIM, extra=energy)
    doc = compare(run, load_reference(path))
    assert all(g["metric"] != "average_current" for g in doc["groups"])     # the profile's own 3.10 mA, not a result
    (why,) = [u["why"] for u in doc["unmatched_published"] if u["metric"] == "average_current"]
    assert "modeled from its device profile" in why

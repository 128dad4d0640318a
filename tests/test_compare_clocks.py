"""`compare` never divides quantities taken at different clocks: cycles against cycles as they are;
a time or a rate of an MCU run only at the clock the published one belongs to (scaled there from the
run's cycles, said in the table and in the comparison's record) or not at all. The Cifra post counts
its cycles at the STM32F030's 8 MHz reset clock and computes its likely throughput at 48 MHz: a
reset-clock run's ratios then read the same way as its cycles (issue 31, item 1)."""
import json

import pytest

from conftest import cli
from storeutil import stored_run

from cryptobench.analysis.compare import compare, tables, text_lines, unmatched_lines
from cryptobench.core.errors import UsageError
from cryptobench.report.layouts import layout_tables
from cryptobench.references import load_reference

RESET = {"kind": "sim", "board": "nucleo-f030r8", "cpu": "m0", "opt": "Os", "core": "cortex-m0",
         "device": "stm32f030", "clock_hz": 8000000, "libraries": ["mbedtls"]}
CCM = {"key_bits": 128, "aad_bytes": 16, "nonce_bytes": 11, "tag_bytes": 16}
SETUP, PER_BYTE = 20_000, 340          # mbedtls's cycles: 20,000 + 340 per byte (107,040 at 256 B)


def _sweep(clock_hz: float) -> list:
    """AES-128-CCM over the Cifra suite's lengths, the same cycles at any clock (time = cycles / clock)."""
    return [("aes-ccm-encrypt", "mbedtls", {**CCM, "bytes": n}, (SETUP + PER_BYTE * n) / clock_hz)
            for n in range(0, 257, 16)]


def _group(doc: dict, metric: str) -> dict:
    return next(g for g in doc["groups"] if g["op"] == "aes-ccm-encrypt" and g["metric"] == metric
                and g["params"].get("key_bits") == 128)


def test_the_cifra_reference_says_which_clock_each_value_belongs_to():
    ref = load_reference("cifra-aead")
    assert ref.sources["cifra"].clock_hz == 8e6              # cycles counted at the reset clock (its boot.c sets none)
    likely = [r for r in ref.rows if r.metric == "throughput"]
    assert len(likely) == 8 and all(r.at_hz == 48e6 for r in likely)   # the post's rate: computed at 48 MHz
    assert all(r.at_hz == 8e6 for r in ref.rows if r.metric == "cycles")


@pytest.mark.e2e
def test_a_reset_clock_run_reads_the_same_way_in_cycles_and_in_rate(tmp_path):
    run = stored_run(tmp_path / "r.sqlite", _sweep(8e6), target=RESET)
    doc = compare(run, load_reference("cifra-aead"))
    cyc, rate = _group(doc, "cycles"), _group(doc, "likely_throughput")
    assert cyc["ratio"]["mbedtls"] == pytest.approx(107_040 / 200_048, rel=1e-3)   # fewer cycles than Cifra
    assert cyc["clock"] is None                                                     # cycles: as they are
    # the rate at the study's 48 MHz from the run's cycles: 48 MHz / 340 cycles per byte, not 8 MHz's
    assert rate["yours"]["mbedtls"] == pytest.approx(48e6 / PER_BYTE, rel=1e-3)
    assert rate["ratio"]["mbedtls"] == pytest.approx(48e6 / PER_BYTE / 70_270, rel=1e-3)
    assert (cyc["ratio"]["mbedtls"] < 1) and (rate["ratio"]["mbedtls"] > 1)       # both say: mbedtls is faster
    assert rate["clock"] == {"what": "rate", "yours_hz": 8e6, "published_hz": 48e6, "factor": pytest.approx(6.0)}
    by_title = {t.title: t for t in tables(doc)}
    t_rate = next(t for title, t in by_title.items() if "likely throughput" in title)
    assert any("at 48 MHz" in h for h in t_rate.headers)
    assert any("counted at 8 MHz" in n and "48 MHz" in n for n in t_rate.notes)
    assert any("above 1: yours is faster" in n for n in t_rate.notes)
    t_cyc = next(t for title, t in by_title.items() if title.endswith("— cycles"))
    assert any("below 1: yours is faster" in n for n in t_cyc.notes)
    assert any("shown at the study's clock (48 MHz)" in line for line in text_lines(doc))


@pytest.mark.e2e
def test_a_run_at_the_rates_own_clock_is_not_scaled(tmp_path):
    run = stored_run(tmp_path / "r.sqlite", _sweep(48e6), target={**RESET, "clock_hz": 48000000})
    rate = _group(compare(run, load_reference("cifra-aead")), "likely_throughput")
    assert rate["clock"] is None and rate["yours"]["mbedtls"] == pytest.approx(48e6 / PER_BYTE, rel=1e-3)


@pytest.mark.e2e
def test_the_cli_prints_and_records_the_scaling(tmp_path):
    db = tmp_path / "r.sqlite"
    stored_run(db, _sweep(8e6), target=RESET)
    r = cli("compare", "latest", "--reference", "cifra-aead", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "at 48 MHz" in r.stdout and "counted at 8 MHz" in r.stdout
    j = json.loads(cli("compare", "latest", "--reference", "cifra-aead", "--db", str(db), "--format", "json").stdout)
    scaled = [g for g in j["groups"] if g["clock"]]
    assert scaled and all(g["metric"] == "likely_throughput" and g["clock"]["published_hz"] == 48e6 for g in scaled)


UNSTATED = """
[reference]
name = "noclock"
title = "A rate at no stated clock"
document = "Test"
seed = "none"

[[source]]
id = "lib"
engine_kind = "sw library"
engine = "Some library"
device = "Some MCU"
target_kind = "mcu"

[[row]]
table = "Table 1"
label = "SHA-256 1 KiB rate"
op = "sha256"
params = { bytes = 1024 }
source = "lib"
metric = "throughput"
value = 100.0
unit = "KB/s"

[[row]]
table = "Table 1"
label = "SHA-256 1 KiB time"
op = "sha256"
params = { bytes = 1024 }
source = "lib"
metric = "duration"
value = 1.0
unit = "ms"
clock_hz = 48000000
"""


def test_a_rate_at_an_unstated_clock_is_refused_and_a_time_is_scaled(tmp_path):
    path = tmp_path / "noclock.toml"
    path.write_text(UNSTATED)
    run = stored_run(tmp_path / "r.sqlite", [("sha256", "mbedtls", {"bytes": 1024}, 6e-3)], target=RESET)
    doc = compare(run, load_reference(path))
    (g,) = doc["groups"]                         # the time only: the rate is never divided across clocks
    assert g["metric"] == "duration"
    assert g["yours"]["mbedtls"] == pytest.approx(1e-3)          # 6 ms at 8 MHz is 1 ms at the row's 48 MHz
    assert g["ratio"]["mbedtls"] == pytest.approx(1.0) and g["clock"]["factor"] == pytest.approx(8 / 48)
    (u,) = doc["unmatched_published"]
    assert u["metric"] == "throughput" and "does not state the clock" in u["why"]
    assert "compared only at one clock" in u["why"]


def test_a_malformed_row_clock_is_rejected_with_the_file_and_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(UNSTATED.replace("clock_hz = 48000000", 'clock_hz = "fast"'))
    with pytest.raises(UsageError) as exc:
        load_reference(path)
    assert f"{path}:" in str(exc.value) and "field 'clock_hz'" in str(exc.value)


@pytest.mark.e2e
def test_the_cifra_layout_says_the_factor_to_the_posts_clock(tmp_path):
    results = layout_tables(stored_run(tmp_path / "r.sqlite", _sweep(8e6), target=RESET), "cifra")[0]
    assert any("at the core clock (8 MHz)" in n for n in results.notes)
    assert any("likely throughput is at 48 MHz" in n and "x 6 " in n for n in results.notes)
    at_48 = layout_tables(stored_run(tmp_path / "f.sqlite", _sweep(48e6), target={**RESET, "clock_hz": 48000000}),
                          "cifra")[0]
    assert not any("likely throughput is at 48 MHz" in n for n in at_48.notes)


def test_a_clock_too_far_from_the_runs_is_not_scaled(tmp_path):
    path = tmp_path / "far.toml"
    path.write_text(UNSTATED.replace("clock_hz = 48000000", "clock_hz = 1e300"))
    run = stored_run(tmp_path / "r.sqlite", [("sha256", "mbedtls", {"bytes": 1024}, 6e-3)], target=RESET)
    doc = compare(run, load_reference(path))
    assert doc["groups"] == []
    assert any("too far apart to scale" in u["why"] for u in doc["unmatched_published"])
    assert "too far apart" in "\n".join(unmatched_lines(doc))

"""What a run prints beside its numbers: the baseline an ad-hoc run compares with (and who chose
it), the ratio in words under each table (hyperfine's summary), and one advice line for a noisy
machine in place of a note per cell."""
import re

import pytest

from cryptobench.runner.plan import build_plan, pick_baseline
from cryptobench.report.verdicts import improvement_text, summary_line, summary_rows
from cryptobench.runner.suites import load_suite


def test_an_ad_hoc_run_compares_with_the_software_engine_by_default():
    plan = build_plan(None, engines=["openssl-hw", "openssl-sw"], ops=["aes-gcm-encrypt"])
    assert (plan.baseline, plan.baseline_from) == ("openssl-sw", "default")
    assert plan.to_json()["baseline_from"] == "default"


@pytest.mark.parametrize("engines, given, suite, expected", [
    (["openssl-hw", "mbedtls"], None, None, ("mbedtls", "default")),          # software first
    (["libsodium", "openssl-hw"], None, None, ("libsodium", "default")),      # else the first given
    (["openssl-hw", "openssl-sw"], "openssl-hw", None, ("openssl-hw", "option")),
    (["mbedtls-portable", "openssl-hw"], None, "mbedtls-portable", ("mbedtls-portable", "suite")),
    (["openssl-hw", "mbedtls"], None, "mbedtls-portable", ("mbedtls", "default")),   # the suite's is not in the run
    (["openssl-hw"], None, None, (None, None)),                                 # nothing to compare
    (["bearssl", "mbedtls", "monocypher"], None, "mbedtls", ("mbedtls", "suite")),   # MCU recipes
])
def test_pick_baseline(engines, given, suite, expected):
    assert pick_baseline(engines, given, suite) == expected


def test_a_suite_keeps_its_baseline():
    plan = build_plan(load_suite("ti-cc26x2"))
    assert (plan.baseline, plan.baseline_from) == ("mbedtls-portable", "suite")


def _comp(engine, ratio, lo, hi):
    return {"engine": engine, "duration_improvement": ratio, "ci95": [lo, hi]}


def test_summary_line_words_each_ratio_as_hyperfine_does():
    line = summary_line([_comp("openssl-hw", 3.635, 3.617, 3.654), _comp("mbedtls", 0.5, 0.49, 0.51)],
                        "openssl-sw", "bytes=16000")
    assert line == ("bytes=16000: openssl-hw ran 3.635 ± 0.019 times faster than openssl-sw; "
                    "mbedtls ran 2.000 ± 0.041 times slower than openssl-sw")
    assert summary_line([_comp("openssl-hw", 0.997, 0.987, 1.007)], "openssl-sw") == \
        "openssl-hw ran as fast as openssl-sw (0.997 [0.987–1.007])"      # the interval holds 1
    assert summary_line([_comp("bearssl", 1.822, 1.822, 1.822)], "mbedtls") == "bearssl ran 1.822 times faster than mbedtls"
    assert summary_line([], "x") is None


def test_improvement_cells_and_summary_rows():
    assert improvement_text(_comp("a", 1.754, 1.732, 1.776)) == "1.754 [1.732–1.776]"
    assert improvement_text(_comp("a", 1.5, 1.5, 1.5)) == "1.500"       # a simulated ratio has no spread
    assert improvement_text(None) == "—"
    assert summary_rows(3) == [0, 1, 2] and summary_rows(65) == [0, 64]


@pytest.mark.e2e
def test_an_ad_hoc_run_prints_its_ratio_in_words_and_fits_80_columns(harness, db):
    from conftest import cli
    proc = cli("run", "--op", "sha256", "--param", "bytes=64,1024", "--engine", "openssl-hw", "--engine", "openssl-sw",
               "--repeat", "3", "--quiet", "--db", str(db), env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert max(len(l) for l in out.splitlines()) <= 80 and "…" not in out
    assert "openssl-sw: the default baseline" in " ".join(out.split())
    # the verdict's words depend on the machine's noise (an interval that holds 1 reads "as fast as"):
    # either form is the behaviour asked for, a ratio said in words against the baseline
    assert re.search(r"bytes=64: openssl-hw ran (as fast as|[\d.,]+( ± [\d.,]+)? times (faster|slower) than) "
                     r"openssl-sw", " ".join(out.split())), out
    assert "* outliers" not in out and "* high-rsd" not in out          # summed up in one advice line, if any
    assert sum("noisy machine" in l for l in out.splitlines()) <= 1

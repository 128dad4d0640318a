"""`cryptobench diff RUN_A RUN_B`: matched cells, change in median, Mann-Whitney U, verdicts, the exit
code for CI gates, and every output format. Runs are synthetic: seeded lognormal noise around known
medians, stored in a temporary SQLite database; nothing here depends on how fast this machine is."""
import csv
import io
import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from conftest import cli

from cryptobench.analysis.diff import parse_threshold
from cryptobench.core.errors import UsageError
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from cryptobench.core.records import Cell, Plan
from storeutil import save_cell_at

K = 1000                                   # operations per sample
N = 30                                     # samples per cell

# (op, params, engine): the three cells every synthetic run has
CELLS = [("sha256", {"bytes": 64}, "openssl"),
         ("sha256", {"bytes": 64}, "mbedtls"),
         ("aes-gcm-encrypt", {"bytes": 1024, "key_bits": 128}, "openssl")]
BASE = {"openssl": 1e-6, "mbedtls": 2e-6}   # per-op seconds, per engine


def _samples(per_op_s, seed, sigma, n=N):
    rng = np.random.default_rng(seed)
    return [[K, int(round(per_op_s * K * 1e9 * f)), 0] for f in rng.lognormal(0.0, sigma, n)]


def _stored_run(db, seed, slow=None, sigma=0.03, status=None, drop=(), cpu="Test CPU 1",
                versions=None, label=None, n=N, reference_loop_s=None, rounds=False, single=False, tau=0.0):
    """A stored run of CELLS: slow = {engine: factor} scales that engine's times; status =
    {engine: (status, kat)} marks its cells failed/unsupported; drop leaves engines' cells out."""
    store = Store(db)
    engines = sorted({e for _, _, e in CELLS})
    plan = {"suite": None, "baseline": None, "options": {"engines": engines, "repeat": n, "single": single},
            "groups": []}
    if label:
        plan["label"] = label
    versions = versions or {}
    cond = {"host": {"cpu": {"model": cpu}},
            "engines": {e: {"description": e, "version": versions.get(e, "1.0")} for e in engines}}
    if reference_loop_s:
        cond["noise_floor"] = {"op": "reference-loop", "median_s": reference_loop_s, "rsd_pct": 2.0}
    if rounds:
        cond["sampling"] = {"method": "rounds", "seed": seed, "per_visit": 1, "rounds": n, "block_rounds": 3}
    rid = store.create_run(Plan.from_json({**plan, "suite": None}), cond)
    seq = 0
    for i, (op, params, engine) in enumerate(CELLS):
        if engine in drop:
            continue
        st, kat = (status or {}).get(engine, ("ok", "pass"))
        cell = {"op": op, "params": params, "engine": engine, "target": "host", "provenance": "measured",
                "status": st, "kat": kat, "detail": "" if st == "ok" else f"synthetic {st}",
                "samples": None, "result": None}
        if st == "ok":
            t = BASE[engine] * (slow or {}).get(engine, 1.0) * (1 + i / 10)
            cell["samples"] = _samples(t, seed * 100 + i, sigma, n)
            sampling = ({"rounds": list(range(n)), "processes": [0] * n, "block_rounds": 3, "estimator": "p1",
                         "tau": tau} if rounds else None)
            cell["result"] = derive(op, params, cell["samples"], {}, n == 1, sampling)
        save_cell_at(store, rid, seq, cell)
        seq += 1
    store.set_status(rid, "complete")
    return rid


def _json(db, a, b, *extra):
    proc = cli("diff", str(a), str(b), "--db", str(db), "--format", "json", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _row(doc, engine, op="sha256"):
    return next(r for r in doc["rows"] if r["engine"] == engine and r["op"] == op)


# ------------------------------------------------------------------------------------ verdicts
@pytest.mark.e2e
def test_same_distribution_different_seeds_is_all_same_and_exit_0(db):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2)
    rc, doc = _json(db, a, b)
    assert rc == 0
    assert [r["verdict"].startswith("same") for r in doc["rows"]] == [True, True, True]
    assert doc["regressions"] == 0 and doc["improvements"] == 0 and doc["unchanged"] == 3
    assert all(r["n_a"] == N and r["n_b"] == N and r["method"] == "exact" for r in doc["rows"])


@pytest.mark.e2e
def test_one_engine_slowed_20_percent_is_a_regression_and_exit_1(db):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2, slow={"mbedtls": 1.2})
    rc, doc = _json(db, a, b)
    assert rc == 1
    slow = _row(doc, "mbedtls")
    assert slow["verdict"] == "slower" and slow["kind"] == "regression"
    assert slow["change"] == pytest.approx(0.2, abs=0.03) and slow["p"] < 1e-6
    assert slow["estimate_b_s"] / slow["estimate_a_s"] == pytest.approx(1 + slow["change"])
    assert all(r["verdict"].startswith("same") for r in doc["rows"] if r["engine"] == "openssl")
    assert doc["regressions"] == 1
    table = cli("diff", str(a), str(b), "--db", str(db))
    assert table.returncode == 1
    assert "1 regression, 0 improvements, 2 unchanged" in table.stdout


@pytest.mark.e2e
def test_one_engine_20_percent_faster_is_an_improvement_and_exit_0(db):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2, slow={"openssl": 0.8})
    rc, doc = _json(db, a, b)
    assert rc == 0
    fast = [r for r in doc["rows"] if r["engine"] == "openssl"]
    assert [r["verdict"] for r in fast] == ["faster", "faster"]
    assert all(r["change"] == pytest.approx(-0.2, abs=0.03) for r in fast)
    assert doc["improvements"] == 2 and doc["regressions"] == 0
    assert _row(doc, "mbedtls")["verdict"].startswith("same")


@pytest.mark.e2e
def test_a_significant_change_within_the_threshold_is_not_a_regression(db):
    # 0.5 % noise: a 2 % slowdown is clearly significant, but below the 5 % threshold
    a = _stored_run(db, seed=1, sigma=0.005)
    b = _stored_run(db, seed=2, sigma=0.005, slow={"mbedtls": 1.02})
    rc, doc = _json(db, a, b, "--threshold", "5%")
    assert rc == 0
    row = _row(doc, "mbedtls")
    assert row["p"] < doc["alpha"] and row["change"] == pytest.approx(0.02, abs=0.005)
    assert row["verdict"] == "same (within threshold)"
    rc, doc = _json(db, a, b, "--threshold", "1%")           # the same data, a tighter gate
    assert rc == 1 and _row(doc, "mbedtls")["verdict"] == "slower"


@pytest.mark.e2e
def test_a_large_but_noisy_change_is_not_significant(db):
    # 50 % noise, 5 samples a side: a 10 % shift is far from significant at alpha 0.01
    a = _stored_run(db, seed=1, sigma=0.5, n=5)
    b = _stored_run(db, seed=2, sigma=0.5, n=5, slow={"mbedtls": 1.1})
    rc, doc = _json(db, a, b)
    assert rc == 0
    assert _row(doc, "mbedtls")["verdict"] == "same (not significant)"


@pytest.mark.e2e
def test_same_run_twice_is_all_same(db):
    a = _stored_run(db, seed=1)
    rc, doc = _json(db, a, a)
    assert rc == 0
    assert all(r["verdict"] == "same (not significant)" and r["p"] == 1.0 and r["change"] == 0
               for r in doc["rows"])
    assert doc["warnings"] == []
    rc, doc = _json(db, "latest", "latest")
    assert rc == 0 and doc["a"]["id"] == doc["b"]["id"] == a


@pytest.mark.e2e
def test_single_sample_cells_are_never_significant(db):
    a = _stored_run(db, seed=1, n=1)
    b = _stored_run(db, seed=2, n=1, slow={"mbedtls": 2.0})
    rc, doc = _json(db, a, b)
    assert rc == 0
    row = _row(doc, "mbedtls")
    assert row["verdict"] == "not enough samples" and row["p"] is None
    assert row["change"] == pytest.approx(1.0, abs=0.2)        # the change is still shown
    assert doc["regressions"] == 0 and doc["not_compared"] == 3


# ------------------------------------------------------------------------------------ one-sided / failed cells
@pytest.mark.e2e
def test_cell_missing_in_b_or_only_in_b_is_listed_not_a_regression(db):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2, drop=("mbedtls",))
    rc, doc = _json(db, a, b)
    assert rc == 0
    row = _row(doc, "mbedtls")
    assert row["verdict"] == "only in A" and row["estimate_a_s"] and row["estimate_b_s"] is None
    assert doc["not_compared"] == 1 and doc["unchanged"] == 2
    rc, doc = _json(db, b, a)
    assert rc == 0 and _row(doc, "mbedtls")["verdict"] == "only in B"
    assert doc["rows"][-1]["engine"] == "mbedtls"                 # B-only cells come after A's


@pytest.mark.e2e
@pytest.mark.parametrize("status,word,rc", [(("failed", "n/a"), "failed in B", 1),
                                            (("failed", "fail"), "KAT FAIL in B", 1),
                                            (("unsupported", "n/a"), "unsupported in B", 0)])
def test_cell_not_ok_in_b(db, status, word, rc):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2, status={"mbedtls": status})
    got, doc = _json(db, a, b)
    assert got == rc
    row = _row(doc, "mbedtls")
    assert row["verdict"] == word and row["status_b"] != "ok" and row["detail"].startswith("synthetic")
    assert doc["regressions"] == rc


@pytest.mark.e2e
def test_cell_fixed_in_b_is_listed_not_counted(db):
    a, b = _stored_run(db, seed=1, status={"mbedtls": ("failed", "n/a")}), _stored_run(db, seed=2)
    rc, doc = _json(db, a, b)
    assert rc == 0
    assert _row(doc, "mbedtls")["verdict"] == "failed in A" and doc["improvements"] == 0


# ------------------------------------------------------------------------------------ header and warnings
@pytest.mark.e2e
def test_header_names_both_runs_and_warns_on_different_device_or_engine_version(db):
    a = _stored_run(db, seed=1, label="before patch")
    b = _stored_run(db, seed=2, label="after patch", cpu="Other CPU 9", versions={"openssl": "3.1"})
    proc = cli("diff", str(a), str(b), "--db", str(db), "--alpha", "0.05", "--threshold", "3%")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f'A: run {a} "before patch"' in out and f'B: run {b} "after patch"' in out
    assert "device Test CPU 1" in out and "device Other CPU 9" in out
    assert "Mann-Whitney U" in out and "alpha 0.05" in out and "threshold ±3 %" in out
    assert "warning: measured on different devices" in out
    assert "warning: engine openssl differs in version (A: 1.0, B: 3.1)" in out
    doc = json.loads(cli("diff", str(a), str(b), "--db", str(db), "--format", "json").stdout)
    assert len(doc["warnings"]) == 2 and doc["a"]["label"] == "before patch"


# ------------------------------------------------------------------------------------ usage errors
@pytest.mark.e2e
@pytest.mark.parametrize("args,flag", [(["--threshold", "-5%"], "--threshold"),
                                       (["--threshold", "abc"], "--threshold"),
                                       (["--threshold", "nan"], "--threshold"),
                                       (["--threshold", "%"], "--threshold"),
                                       (["--alpha", "1.5"], "--alpha"),
                                       (["--alpha", "0"], "--alpha")])
def test_bad_flags_exit_2_with_one_line(db, args, flag):
    a = _stored_run(db, seed=1)
    proc = cli("diff", str(a), str(a), "--db", str(db), *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and flag in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("ref", ["99", "last", "-1"])
def test_unknown_run_exits_2_with_one_line(db, ref):
    a = _stored_run(db, seed=1)
    for args in ([str(a), ref], [ref, str(a)]):
        proc = cli("diff", *args, "--db", str(db))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("text,value", [("5%", 0.05), ("5 %", 0.05), ("5", 0.05), ("0.05", 0.05), ("0", 0.0),
                                        ("0.5%", 0.005), ("12.5", 0.125), ("0.5", 0.5)])
def test_threshold_parsing(text, value):
    assert parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["-1", "-0.05", "inf", "five", ""])
def test_threshold_rejects_nonsense(text):
    with pytest.raises(UsageError, match="--threshold"):
        parse_threshold(text)


# ------------------------------------------------------------------------------------ formats
@pytest.mark.e2e
def test_every_format_parses(db):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2, slow={"mbedtls": 1.2}, drop=("openssl",))
    rc, doc = _json(db, a, b)
    assert rc == 1
    assert set(doc) >= {"a", "b", "threshold", "alpha", "rows", "regressions"}
    assert doc["threshold"] == pytest.approx(0.05) and doc["alpha"] == pytest.approx(0.01)
    assert doc["a"]["id"] == a and doc["b"]["id"] == b and len(doc["rows"]) == 3

    proc = cli("diff", str(a), str(b), "--db", str(db), "--format", "csv")
    assert proc.returncode == 1
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 3
    by_engine = {(r["op"], r["engine"]): r for r in rows}
    assert by_engine[("sha256", "mbedtls")]["verdict"] == "slower"
    assert float(by_engine[("sha256", "mbedtls")]["change"]) == pytest.approx(0.2, abs=0.03)
    assert by_engine[("sha256", "openssl")]["verdict"] == "only in A"
    assert json.loads(by_engine[("sha256", "openssl")]["params"]) == {"bytes": 64}

    proc = cli("diff", str(a), str(b), "--db", str(db), "--format", "md")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| op |"))
    assert lines[header + 1].startswith("|---")
    body = [line for line in lines[header + 2:] if line.startswith("| ")]
    assert len(body) == 3 and all(line.count(" | ") == 8 for line in body)
    assert lines[-1] == "1 regression, 0 improvements, 0 unchanged (2 not compared)"

    proc = cli("diff", str(a), str(b), "--db", str(db), "--format", "table")
    assert proc.returncode == 1
    assert ("median A" in proc.stdout or "p1 A" in proc.stdout) and "slower" in proc.stdout and "only in A" in proc.stdout
    assert re.search(r"2\.\d+ µs +│ +2\.\d+ µs +│ +\+\d+\.\d % ", proc.stdout)


@pytest.mark.e2e
def test_why_a_pair_was_not_compared_is_a_note_in_every_table_format(db):
    a, b = _stored_run(db, seed=1), _stored_run(db, seed=2, status={"mbedtls": ("failed", "fail")})
    note = "sha256 mbedtls: KAT FAIL in B — synthetic failed"
    for fmt, prefix in (("table", "  "), ("md", "- ")):
        proc = cli("diff", str(a), str(b), "--db", str(db), "--format", fmt)
        assert proc.returncode == 1 and f"{prefix}{note}\n" in proc.stdout, proc.stdout
    md = cli("diff", str(a), str(b), "--db", str(db), "--format", "md").stdout.splitlines()
    divider = next(line for line in md if line.startswith("|---"))
    assert divider == "|---|---|---|---|---:|---:|---:|---:|---|"          # numbers right-aligned


@pytest.mark.e2e
def test_a_machine_that_slowed_down_as_a_whole_is_named_in_a_warning(db):
    """Every engine 2x slower and the run's own no-crypto reference loop 2x slower too: the
    regressions stand (the test cannot know better), but the header says the machine slowed."""
    a = _stored_run(db, 1, reference_loop_s=1e-6)
    b = _stored_run(db, 2, slow={"openssl": 2.0, "mbedtls": 2.0}, reference_loop_s=2.1e-6)
    rc, doc = _json(db, a, b)
    assert rc == 1 and doc["machine_drift"] == pytest.approx(2.1)
    assert any("the machine itself ran 110 % slower in B" in w for w in doc["warnings"])
    c = _stored_run(db, 3, reference_loop_s=1.02e-6)             # within the threshold: no warning
    rc, doc = _json(db, a, c)
    assert rc == 0 and not any("machine itself" in w for w in doc["warnings"])


# ------------------------------------------------------------------------- honest intervals and methods
@pytest.mark.e2e
def test_runs_with_repeat_intervals_are_judged_against_the_run_level_variation(db):
    """The same 6 % slowdown: a regression when each run's machine term is small, not one when the
    runs say their machine drifts by 5 % (the change is within what a rerun gives)."""
    a = _stored_run(db, 1, rounds=True, sigma=0.01)
    b = _stored_run(db, 2, rounds=True, sigma=0.01, slow={"mbedtls": 1.06})
    rc, doc = _json(db, a, b)
    row = _row(doc, "mbedtls")
    assert row["method"] == "repeat-interval z" and row["kind"] == "regression" and rc == 1
    assert row["estimate_a_s"] == pytest.approx(next(c for c in Store(db).load_run(a).cells
                                                   if c.engine == "mbedtls").result.estimate["value"])
    c = _stored_run(db, 3, rounds=True, sigma=0.01, tau=0.05)
    d = _stored_run(db, 4, rounds=True, sigma=0.01, tau=0.05, slow={"mbedtls": 1.06})
    rc, doc = _json(db, c, d)
    assert _row(doc, "mbedtls")["kind"] == "unchanged" and rc == 0
    assert not doc["method_warnings"]


@pytest.mark.e2e
def test_different_methods_are_warned_about_and_refused_with_strict(db):
    a = _stored_run(db, 1, rounds=True)
    b = _stored_run(db, 2)                                     # cell by cell, the median
    c = _stored_run(db, 3, rounds=True, single=True)
    rc, doc = _json(db, a, b)
    text = " ".join(doc["method_warnings"])
    assert "different sampling: A rounds, B cell by cell" in text and "different estimators" in text
    assert any(w.startswith("different sampling") for w in doc["warnings"])
    table = cli("diff", str(a), str(c), "--db", str(db))
    assert "warning: A is batched, B single-shot" in table.stdout
    strict = cli("diff", str(a), str(b), "--db", str(db), "--strict")
    assert strict.returncode == 2 and strict.stderr.count("\n") == 1 and "not comparable" in strict.stderr
    same = cli("diff", str(a), str(a), "--db", str(db), "--strict")
    assert same.returncode == 0, same.stderr


@pytest.mark.e2e
def test_nothing_compared_is_said_and_refused_with_strict(db):
    a = _stored_run(db, 1, drop=("openssl",))
    b = _stored_run(db, 2, drop=("mbedtls",))
    rc, doc = _json(db, a, b)
    assert any(w.startswith("nothing was compared") for w in doc["warnings"])
    assert cli("diff", str(a), str(b), "--db", str(db), "--strict").returncode == 2


def test_a_layout_sensitive_cell_is_judged_on_its_widened_interval():
    """A cell whose harness processes disagree (flag `layout`) has an interval reaching its slowest
    process; diff tests a change against that width, not against the narrower bootstrap terms."""
    from cryptobench.analysis.diff import _run_level, compare_pair

    def cell(value, lo, hi, flags):
        est = {"estimator": "p1", "value": value, "ci95": [lo, hi], "sigma_log": 0.002,
               "sigma_process_log": 0.002, "tau_log": 0.002}
        return Cell.from_json({"op": "sha256", "params": {"bytes": 64}, "engine": "mbedtls", "target": "host",
                               "status": "ok", "samples": [[1, 0, int(value * 1e9)]] * 40,
                               "result": {"estimate": est, "flags": flags, "time_s": {"median": value}}})

    narrow = _run_level(cell(1e-6, 0.99e-6, 1.01e-6, []))[1]
    assert narrow == pytest.approx(2 * 0.002 ** 2)                  # max(σ, σ_p)² + τ²
    wide = _run_level(cell(1e-6, 0.99e-6, 1.10e-6, ["layout"]))[1]
    assert wide == pytest.approx((math.log(1.10) / 1.96) ** 2 / 2)
    a, b = cell(1e-6, 0.99e-6, 1.10e-6, ["layout"]), cell(1.06e-6, 1.05e-6, 1.17e-6, ["layout"])
    assert compare_pair(a, b, 0.05, 0.01)["kind"] == "unchanged"
    a, b = (replace(c, result=c.result.with_fields(flags=[])) for c in (a, b))
    assert compare_pair(a, b, 0.05, 0.01)["kind"] == "regression"

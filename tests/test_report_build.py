"""The report's page and table files (report/build.py, report/html.py) from stored runs made with the
figure tests' helpers: table titles, which tables are written, where each run's conditions appear."""
import re

from cryptobench.report.build import build_report
from test_report_figures import _sweep_run


def _build(runs, out, **kw):
    summary = build_report(runs, out, **kw)
    return summary, (out / "report.html").read_text(encoding="utf-8")


def _table_titles(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t) for t in re.findall(r'<h3 id="tab-[^"]*">(.*?)</h3>', html, re.S)]


def test_relative_table_titles_are_not_prefixed_twice(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite")
    _, html = _build([run], tmp_path / "out")
    titles = _table_titles(html)
    relative = [t for t in titles if t.startswith("Relative to")]
    assert relative == ["Relative to openssl-sw: SHA-256"]
    assert not any(t.count("Relative to") > 1 for t in titles), titles
    md = (tmp_path / "out" / "tables" / "tables.md").read_text()
    assert "Relative to openssl-sw: Relative to" not in md

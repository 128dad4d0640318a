"""`cryptobench report`: real runs (a host sweep, a scaling run, a simulated Cortex-M0 sweep, a
two-supply trace import) turned into one HTML file, figures and table files; the HTML opened in
headless Chromium (Debian's, started here) with no console errors, every figure and table
rendered, a screenshot saved; run text escaped everywhere."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import ROOT, cli
from cryptobench.targets.trace import synth
from cryptobench.core.table import Table, columns
from cryptobench.report.table_files import latex_escape, markdown_escape, to_latex, to_markdown

LABEL = "<script>alert('pwned')</script> & <b>bold</b> “µ-label”"
KINDS = {"duration", "energy", "cycles", "heatmap", "energy-split", "scaling", "crossover"}
ARTIFACTS = ROOT / "build" / "test-artifacts"


def _ok(proc):
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


@pytest.fixture(scope="module")
def report(tmp_path_factory, harness):
    tmp = tmp_path_factory.mktemp("report")
    db = str(tmp / "runs.sqlite")
    _ok(cli("run", "--db", db, "--quiet", "--op", "sha256", "--op", "aes-gcm-encrypt",
            "--param", "bytes=64,1024,16384", "--engine", "openssl-hw", "--engine", "openssl-sw",
            "--engine", "mbedtls", "--baseline", "openssl-sw", "--repeat", "3", "--min-time", "0.001",
            "--label", LABEL))
    _ok(cli("run", "--db", db, "--quiet", "--op", "sha256", "--param", "bytes=1024", "--engine", "openssl-hw",
            "--parallel", "1,2", "--repeat", "3", "--min-time", "0.002"))
    _ok(cli("run", "--db", db, "--quiet", "--target", "sim:cortex-m0", "--device", "stm32f030",
            "--op", "chacha20-poly1305-encrypt", "--param", "bytes=16,64,256", "--param", "aad_bytes=16",
            "--repeat", "2"))
    plan = synth.PulsePlan(n=12, width_s=2e-3, gap_s=1e-3, high_a=0.012, low_a=0.002, dt=1e-5,
                           second=synth.Supply(name="se", high_a=0.030, low_a=0.0002, v=1.8))
    trace = tmp / "trace.csv"
    opts = synth.write_generic_csv(trace, plan)
    imp = ["energy", "import", str(trace), "--db", db, "--format", "generic-csv", "--op", "ecdsa-sign",
           "--engine", "se050-like"]
    for k, v in opts.items():
        imp += ["--option", f"{k}={v}"]
    _ok(cli(*imp))
    out = tmp / "out"
    proc = _ok(cli("report", "1", "2", "3", "4", "--db", db, "--out", str(out), "--baseline", "openssl-sw",
                   "--reference", "cifra-aead"))
    return {"db": db, "out": out, "stdout": proc.stdout, "html": (out / "report.html").read_text(encoding="utf-8")}


@pytest.mark.slow
def test_report_writes_html_figures_and_table_files(report):
    out = report["out"]
    assert "report.html" in report["stdout"]
    pngs = sorted(p.stem for p in (out / "figures").glob("*.png"))
    svgs = sorted(p.stem for p in (out / "figures").glob("*.svg"))
    assert pngs and pngs == svgs
    for p in (out / "figures").glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    kinds = set(re.findall(r'data-kind="([a-z-]+)"', report["html"]))
    assert kinds == KINDS, f"missing figure kinds: {KINDS - kinds}"
    assert report["html"].count('class="cb-figure"') == len(pngs)
    for ext in ("md", "csv", "tex"):
        assert list((out / "tables").glob(f"run1-*.{ext}")), ext
    assert (out / "tables" / "tables.tex").read_text().count(r"\begin{table}") == report["html"].count('class="cb-table"')
    # every figure states its provenance and conditions in its caption
    for cap in re.findall(r"<figcaption>(.*?)</figcaption>", report["html"], re.S):
        assert re.search(r'class="prov (measured|simulated|modeled|published)"', cap), cap[:200]
    assert "stm32f030" in report["html"] and "OpenSSL" in report["html"]
    # --reference cifra-aead: the post's published cycles beside the simulated Cortex-M0 sweep (AAD 16 B)
    cycles = re.search(r'data-kind="cycles">.*?</figure>', report["html"], re.S).group(0)
    assert 'class="prov published"' in cycles and "€1 devices" in cycles


def test_report_is_self_contained_and_escapes_run_text(report):
    html = report["html"]
    assert "<script" not in html.lower()                      # no script at all, the label's included
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html)   # nothing fetched from a network
    assert "Content-Security-Policy" in html


@pytest.mark.slow
def test_report_renders_in_headless_chromium(report):
    from browser import Chromium, chromium_path
    if chromium_path() is None:
        pytest.skip("chromium is not installed (setup.sh installs it)")
    html_path = report["out"] / "report.html"
    n_figures = len(list((report["out"] / "figures").glob("*.png")))
    with Chromium() as browser:
        page = browser.open(html_path, width=1280, height=900)
        assert page.console_errors == []
        assert all(u.startswith(("file:", "data:")) for u in page.requests), page.requests
        figs = page.evaluate("""Array.from(document.querySelectorAll('figure.cb-figure img')).map(
            i => ({w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().width, ok: i.complete}))""")
        assert len(figs) == n_figures
        assert all(f["ok"] and f["w"] > 100 and f["h"] > 100 and f["shown"] > 100 for f in figs), figs
        tables = page.evaluate("""Array.from(document.querySelectorAll('table.cb-table')).map(
            t => ({rows: t.tBodies[0].rows.length, h: t.getBoundingClientRect().height}))""")
        assert tables and all(t["rows"] >= 1 and t["h"] > 0 for t in tables), tables
        text = page.evaluate("document.body.innerText")
        assert LABEL in text                                   # the label shown as text, not run
        assert page.evaluate("typeof window.pwned === 'undefined' && document.querySelectorAll('b').length === 0")
        shot = report["out"] / "report-screenshot.png"
        page.screenshot(shot, full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, ARTIFACTS / "report-screenshot.png")   # kept for a person to look at


@pytest.mark.e2e
def test_report_errors_are_one_line(report, tmp_path):
    r = cli("report", "99", "--db", report["db"], "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "no run 99" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("report", "1", "--db", report["db"], "--out", str(tmp_path / "y"), "--baseline", "nosuch")
    assert r.returncode == 2 and "--baseline" in r.stderr and "openssl-hw" in r.stderr
    f = tmp_path / "file"
    f.write_text("")
    r = cli("report", "1", "--db", report["db"], "--out", str(f))
    assert r.returncode == 2 and "not a directory" in r.stderr


@pytest.mark.e2e
def test_label_is_stored_and_shown(report):
    r = _ok(cli("show", "1", "--db", report["db"], "--format", "json"))
    assert LABEL in r.stdout or json.dumps(LABEL)[1:-1] in r.stdout
    r = _ok(cli("show", "1", "--db", report["db"], "--format", "md"))
    assert "label: " in r.stdout


def test_table_files_escape_their_formats():
    assert latex_escape("50% of $x_1 & {y} #2 ~ ^ \\") == (r"50\% of \$x\_1 \& \{y\} \#2 \textasciitilde{} "
                                                          r"\textasciicircum{} \textbackslash{}")
    assert latex_escape("1.5 µs × 2 – 3") == r"1.5 \textmu{}s $\times$ 2 -- 3"
    assert markdown_escape("a|b <script>") == r"a\|b &lt;script&gt;"
    table = Table("T_1 & <i>", columns(["op", "t (µs)"]), notes=["50 %"])
    table.add(["a|b", "1.5"])
    md = to_markdown(table, "cap")
    assert r"| a\|b | 1.5 |" in md and "&lt;i&gt;" in md
    tex = to_latex(table, "run 1", label="x y")
    assert r"\toprule" in tex and r"T\_1 \& \textless{}i\textgreater{}" in tex and r"\label{tab:x-y}" in tex
    assert r"t (\textmu{}s)" in tex

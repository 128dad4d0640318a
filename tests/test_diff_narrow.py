"""`cryptobench diff` on a narrow terminal (issue 31 item 6 e): each cell pair's row carries its
change and verdict on its first line, the table is never split into parts, and no line is wider
than the terminal; a wide terminal keeps every column. Runs are the synthetic ones of test_diff."""
import json

import pytest
from rich.cells import cell_len

from conftest import cli
from test_diff import _stored_run

from cryptobench.analysis.diff import fmt_change

# end to end: the real command line on stored or measured runs (the slow tier)
pytestmark = pytest.mark.e2e


@pytest.fixture
def runs(db):
    """Run A, and run B with openssl 20 % slower (two regressions), mbedtls failed in B."""
    a = _stored_run(db, 1, rounds=True)
    b = _stored_run(db, 2, slow={"openssl": 1.2}, rounds=True, status={"mbedtls": ("failed", "fail")})
    return a, b


def _diff(db, a, b, columns, fmt=()):
    proc = cli("diff", str(a), str(b), "--db", str(db), *fmt, env={"COLUMNS": str(columns)})
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def _row_first_lines(text):
    """The table's body lines that start a row: the verdict (last) cell is not blank (a wrapped
    name's further lines leave every cell but the name blank)."""
    body = text.split("┡", 1)[1].split("└", 1)[0].splitlines()[1:]
    return [line for line in body if line.startswith("│") and line.split("│")[-2].strip()]


@pytest.mark.parametrize("columns", [100, 80])
def test_each_row_carries_its_change_and_verdict_on_one_line(db, runs, columns):
    doc = json.loads(_diff(db, *runs, 200, ("--format", "json")))
    text = _diff(db, *runs, columns)
    lines = _row_first_lines(text)
    assert len(lines) == len(doc["rows"]) == 3, text
    for line, row in zip(lines, doc["rows"]):
        assert fmt_change(row["change"]) in line and row["verdict"] in line, text
        assert row["op"] in line, text
    assert "(2/" not in text                       # never split into parts
    assert "p1 A" in text and "p1 B" in text       # the estimator named


@pytest.mark.parametrize("columns", [100, 80, 60, 50])
def test_no_line_is_wider_than_the_terminal(db, runs, columns):
    text = _diff(db, *runs, columns)
    assert max(cell_len(line) for line in text.splitlines()) <= columns, text


def test_at_100_columns_each_row_is_one_line(db, runs):
    text = _diff(db, *runs, 100)
    assert len(_row_first_lines(text)) == len(text.split("┡", 1)[1].split("└", 1)[0].splitlines()) - 1
    assert "aes-gcm-encrypt bytes=1024 key_bits=128 openssl" in text
    assert "target host" in text                    # the one target, named in the title
    assert "p value is in --format json and csv" in text


def test_a_wide_terminal_keeps_every_column(db, runs):
    text = _diff(db, *runs, 200)
    header = next(line for line in text.splitlines() if "verdict" in line)
    for label in ("op", "params", "engine", "target", "p1 A", "p1 B", "change", "p", "verdict"):
        assert f" {label} " in header, header


def test_a_very_narrow_console_prints_a_line_per_pair_led_by_verdict_and_change(db, runs):
    text = _diff(db, *runs, 50)
    assert "slower, +" in text and "KAT FAIL in B, —: sha256" in text
    assert "┃" not in text.split("run 1 → run 2", 1)[1]

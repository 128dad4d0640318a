"""Tables on a terminal (report/terminal.py): at 80, 100, 120 and 200 columns no line is wider than
the terminal, no cell is cut ("…"), every number is printed whole on one line and every word of
every name and header is printed; wide tables split into parts that repeat the key columns and
keep column groups together, and a table too wide for any split is printed as records."""
import io
import re

import pytest
from rich.console import Console

from cryptobench.core.table import LEFT, Column, Table
from cryptobench.report.terminal import column_widths, console_for, print_table, split_to_fit

WIDTHS = [80, 100, 120, 200]
ENGINES = ["openssl-hw", "openssl-sw", "openssl-portable", "mbedtls", "mbedtls-portable", "libsodium", "pkcs11"]


def _host_table() -> Table:
    """Seven engines' times and RSDs, then six Improvement columns with intervals."""
    cols = [Column("bytes", LEFT)]
    for e in ENGINES:
        cols += [Column(f"{e} (ns)", group=e), Column("RSD %", group=e)]
    cols += [Column(f"Impr. {e}", group="Impr.") for e in ENGINES[1:]]     # wider than 80 together
    t = Table("AES-256 CTR_DRBG generate — key_bits=128, aad_bytes=32, tag_bytes=16, nonce_bytes=13", cols, key="x")
    for i, size in enumerate([64, 8000, 16000]):
        cells = [str(size)]
        for j, _ in enumerate(ENGINES):
            cells += [f"{(i + 1) * (j + 3) * 1234.5:,.0f}*", f"{13.8 + j:.1f}"]
        cells += [f"{1.754 + j:.3f} [{1.732 + j:.3f}–{1.776 + j:.3f}]" for j in range(len(ENGINES) - 1)]
        t.add(cells)
    t.notes = ["a note that is longer than eighty columns, so that it wraps on a narrow terminal and is still whole"]
    return t


def _render(table: Table, width: int) -> str:
    buf = io.StringIO()
    print_table(Console(file=buf, width=width, color_system=None), table)
    return buf.getvalue()


def _check_whole(table: Table, out: str, width: int) -> None:
    lines = out.splitlines()
    assert max(len(l) for l in lines) <= width
    assert "…" not in out
    words = set(re.findall(r"[^\s│┃]+", out))
    for row in table.rows:
        for col, text in zip(table.columns, row.cells):
            if col.align == LEFT:
                assert set(text.split()) <= words, text
            else:
                assert any(f" {text} " in l for l in lines), text      # a number whole, on one line
    for col in table.columns:
        assert set(col.label.split()) <= words, col.label


@pytest.mark.parametrize("width", WIDTHS)
def test_a_wide_host_table_never_cuts_a_name_or_a_number(width):
    table = _host_table()
    out = _render(table, width)
    _check_whole(table, out, width)
    parts = split_to_fit(table, width)
    assert parts is not None
    for part in parts:
        assert part.columns[0].label == "bytes"                 # the key column repeats in every part
        groups = [c.group for c in part.columns if c.group]
        for e in ENGINES:                                       # an engine's time and RSD stay together
            assert groups.count(e) in (0, 2)
    if width < 200:
        assert len(parts) > 1 and "(2/" in out
    impr = [i for i, p in enumerate(parts) if any(c.group == "Impr." for c in p.columns)]
    assert all(c.group in ("", "Impr.") for i in impr for c in parts[i].columns)    # ratios in parts of their own


def test_a_table_that_fits_is_printed_whole_in_one_part():
    t = Table("small", [Column("op", LEFT), Column("time (ns)")])
    t.add(["sha256", "1,234"])
    assert split_to_fit(t, 80) == [t]
    assert column_widths(t, 80) == [6, 9]


def test_text_wraps_at_spaces_before_a_table_is_split():
    t = Table("wrap", [Column("operation", LEFT), Column("openssl-hw (ns)"), Column("openssl-sw (ns)")])
    t.add(["AES-256 CTR_DRBG instantiate with a long name that needs wrapping here", "897.1", "2,300"])
    widths = column_widths(t, 60)
    assert widths is not None and sum(widths) + 3 * 3 + 1 <= 60
    _check_whole(t, _render(t, 60), 60)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_single_group_too_wide_for_the_terminal_is_printed_as_records(width):
    t = Table("records", [Column("op", LEFT), Column("x" * 70 + " value", group="g"), Column("y" * 60, group="g")])
    t.add(["sha256", "1" * 150, "2" * 66])
    out = _render(t, width)
    assert max(len(l) for l in out.splitlines()) <= width and "…" not in out
    if width < 160:
        assert split_to_fit(t, width) is None
        assert "─ op sha256" in out and "2" * 66 in out
        assert "1" * 150 in out.replace("\n", "")           # folded over lines, never cut


def test_a_group_wider_than_the_terminal_is_split_into_its_columns():
    t = Table("wide group", [Column("op", LEFT)] + [Column(f"Impr. engine-{i}", group="Impr.") for i in range(6)])
    t.add(["sha256"] + ["1.754 [1.732–1.776]"] * 6)
    parts = split_to_fit(t, 80)
    assert parts is not None and len(parts) == 2 and [len(p.columns) for p in parts] == [4, 4]


def test_a_pipe_takes_columns_from_the_environment(monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    assert console_for(io.StringIO()).width == 90
    monkeypatch.delenv("COLUMNS")
    assert console_for(io.StringIO()).width == 200


@pytest.mark.parametrize("width", WIDTHS)
def test_the_tables_of_stored_runs_fit(width, tmp_path):
    import shutil
    from pathlib import Path
    from cryptobench.report.tables import build_tables
    from cryptobench.store.database import Store
    db = tmp_path / "r.sqlite"
    shutil.copy(Path(__file__).parent / "fixtures" / "store-8b58c6d.sqlite", db)
    store = Store(db)
    for summary in store.run_summaries():
        for table in build_tables(store.load_run(summary["id"])):
            _check_whole(table, _render(table, width), width)

"""What the eye meets (issue 31 item 6): the small things a reader sees first in the layouts, `list
runs`, `compare`, `diff`, a cross-check failure, the flags' notes, a scaling run and a failure note."""
import itertools

import pytest

from storeutil import stored_run

from cryptobench.report.layouts import layout_tables

QEMU = {"kind": "qemu", "board": "mps2-an385", "cpu": "m3", "opt": "Os", "libraries": ["bearssl"]}


# ------------------------------------------------------------------------------------------------ a. Cifra on QEMU
def test_cifra_on_qemu_shows_the_stored_code_size_in_every_row(tmp_path):
    cells = [("aes-gcm-encrypt", "bearssl", {"key_bits": k, "aad_bytes": 16, "bytes": 256}, 1e-3) for k in (128, 256)]
    run = stored_run(tmp_path / "q.sqlite", cells, target=QEMU)
    results = layout_tables(run, "cifra")[0]
    assert results.headers == ["Algorithm", "Library", "Stack (B)", "Code size (B)"]
    assert [r.cells[2:] for r in results.rows] == [["600", "2000"], ["600", "2000"]]   # storeutil's stack, flash
    assert [r.values[3] for r in results.rows] == [2000, 2000]
    assert any("QEMU runs are functional" in n for n in results.notes)
    assert not any("estimate_s" in n for n in results.notes)        # no times on QEMU: no estimator note


# ------------------------------------------------------------------------------------------------ b, h. NXP
def test_nxp_buffer_column_says_n_a_for_an_operation_without_a_message(tmp_path):
    cells = [("sha256", "mbedtls", {"bytes": 64}, 1e-6), ("sha256", "mbedtls", {"bytes": 1024}, 1e-5),
             ("ecdsa-sign", "mbedtls", {"curve": "p256"}, 1e-3)]
    run = stored_run(tmp_path / "n.sqlite", cells)
    (table,) = layout_tables(run, "nxp")
    assert table.headers[1] == "Buffer (bytes)"
    assert [r.cells[1] for r in table.rows] == ["64", "1024", "n/a"]
    assert "None" not in str([r.cells for r in table.rows])
    assert any(n.startswith("Buffer n/a: the operation takes no message") for n in table.notes)


def test_nxp_kb_per_s_to_about_three_significant_figures(tmp_path):
    # 1024 B in 1.024 µs, 10.24 µs, 1.024 ms, 102.4 ms: 976,562.5, 97,656.25, 976.5625, 9.765625 KB/s
    cells = [("sha1", f"e{i}", {"bytes": 1024}, t) for i, t in enumerate((1.024e-6, 1.024e-5, 1.024e-3, 1.024e-1))]
    run = stored_run(tmp_path / "k.sqlite", cells)
    (table,) = layout_tables(run, "nxp")
    kbs = [c.rstrip("*") for c in table.rows[0].cells[1::2]]
    assert kbs == ["976,562", "97,656", "976.6", "9.766"]
    assert any("no decimals from 1,000 up" in n for n in table.notes)


# ------------------------------------------------------------------------------------------------ c. list runs
@pytest.mark.qemu
def test_list_runs_names_core_device_and_clock_and_keeps_each_run_on_one_line(tmp_path):
    import os
    from conftest import cli
    from cryptobench.store.database import run_target_text
    sim = {"kind": "sim", "board": "nucleo-f030r8", "cpu": "m0", "core": "cortex-m0", "device": "stm32f030"}
    assert run_target_text(sim, {"clock_hz": 8_000_000}) == "sim:cortex-m0 stm32f030 @8 MHz"
    assert run_target_text({"kind": "qemu", "board": "mps2-an385"}, {}) == "qemu:mps2-an385"
    db = tmp_path / "r.sqlite"
    label = "a long label that goes on and on to see how the list of runs fits a hundred columns " * 2
    stored_run(db, [("sha256", "mbedtls", {"bytes": 64}, 1e-3)], target={**sim, "clock_hz": 8_000_000},
               suite="cifra-aead", extra=None)
    import sqlite3
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET plan = json_set(plan, '$.label', ?)", (label,))
    for width in (100, 80):
        proc = cli("list", "runs", "--db", str(db), env={"COLUMNS": str(width)})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == 3 and all(len(l) <= width for l in lines[1:]), lines
        assert lines[2].split()[0] == "1" and lines[2].endswith("…")
    assert "sim:cortex-m0 stm32f030 @8 MHz" in cli("list", "runs", "--db", str(db), env={"COLUMNS": "100"}).stdout
    assert label.strip() in cli("list", "runs", "--db", str(db), env={"COLUMNS": "400"}).stdout


# ------------------------------------------------------------------------------------------------ d. compare
@pytest.mark.qemu
def test_compare_lists_unmatched_published_rows_one_line_per_operation_and_reason(tmp_path):
    import json
    from conftest import cli
    db = tmp_path / "c.sqlite"
    stored_run(db, [("aes-gcm-encrypt", "bearssl", {"key_bits": 128, "aad_bytes": 16, "bytes": 256}, 1e-3)],
               target=QEMU, suite="cifra-aead")
    proc = cli("compare", "1", "--reference", "cifra-aead", "--db", str(db), env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(cli("compare", "1", "--reference", "cifra-aead", "--db", str(db), "--format", "json").stdout)
    rows = doc["unmatched_published"]
    reasons = {(u["op"], u["why"]) for u in rows}
    assert len(rows) > 100 and len(reasons) < 20
    listed = [l for l in proc.stdout.splitlines() if l.startswith("  aes-ccm-encrypt (")]
    ccm = sum(1 for u in rows if u["op"] == "aes-ccm-encrypt")
    assert len(listed) == 1 and listed[0].startswith(f"  aes-ccm-encrypt ({ccm} rows: cycles")
    assert f"published rows with no matching result in run 1 ({len(rows)}; by operation and reason" in proc.stdout
    each = lambda out: sum(1 for l in out.splitlines() for u in rows[:1] if l.startswith(f"  {u['table']} · "))  # noqa: E731
    out = proc.stdout.splitlines()
    at = next(i for i, l in enumerate(out) if l.startswith("published rows with no matching result"))
    block = list(itertools.takewhile(lambda l: l.startswith("  "), out[at + 1:]))
    assert len(block) == len(reasons)                         # a line per operation and reason
    verbose = cli("compare", "1", "--reference", "cifra-aead", "--db", str(db), "--verbose", env={"COLUMNS": "200"})
    assert each(verbose.stdout) == sum(1 for u in rows if u["table"] == rows[0]["table"]) > 1


# ------------------------------------------------------------------------------------------------ f. cross-check
def test_a_cross_check_failure_names_the_offset_and_the_bytes_there_in_both():
    from cryptobench.catalog.bytes_diff import difference_text
    from cryptobench.targets.mcu.target import McuTarget
    expected = bytes(range(64))
    got = bytearray(expected)
    got[37] = 0xff
    verdict, detail = McuTarget._check(None, "sha256", {}, bytes(got), {"expect": expected, "by": "hashlib"})
    assert verdict == "fail"
    assert detail == ("output differs from hashlib: first difference at byte 37 of 64: "
                      "got …1d1e1f2021222324[ff]262728292a2b2c2d…, expected …1d1e1f2021222324[25]262728292a2b2c2d…")
    assert difference_text(expected[:10], expected[:12]) == ("first difference at byte 10 of 12 (got 10 bytes): "
                                                            "got …0203040506070809[end], expected …0203040506070809[0a]0b")
    assert difference_text(b"\x01\x02", b"\x03\x02") == "first difference at byte 0 of 2: got [01]02, expected [03]02"


# ------------------------------------------------------------------------------------------------ g. flags said
def test_near_timer_resolution_is_said_under_the_table_that_flags_it(tmp_path):
    from cryptobench.report.tables import build_tables
    flagged = lambda op, engine, params: {"flags": ["near-timer-resolution"]}    # noqa: E731
    run = stored_run(tmp_path / "r.sqlite", [("ctr-drbg-generate", "mbedtls", {"bytes": 32}, 3e-6)], extra=flagged)
    (table,) = [t for t in build_tables(run) if t.key == "ctr-drbg-generate"]
    assert any("* near-timer-resolution" in n for n in table.notes)
    legend = [n for n in table.notes if n.startswith("near-timer-resolution: ")]
    assert len(legend) == 1 and "less than 1000× the timer's resolution" in legend[0]
    assert "batch more operations per sample" in legend[0]
    ti = [n for t in layout_tables(run, "ti") for n in t.notes]
    assert sum(1 for n in ti if n.startswith("near-timer-resolution: ")) == 1


# ------------------------------------------------------------------------------------------------ j. failure notes
PROTOCOL_TAIL = " | ".join(['{"t":"cell","i":%d,"status":"ok","out":"%s"}' % (i, "ab" * 100) for i in range(5)]
                           + ['{"t":"error","msg":"hard fault at 0x08001234"}'])


def test_a_failure_note_is_one_line_with_what_the_target_said(tmp_path):
    from storeutil import save_cell_at
    from cryptobench.report.failure_text import failure_note
    from cryptobench.report.tables import build_tables
    from cryptobench.store.database import Store
    detail = "no result from the target: the image stopped; last lines: " + PROTOCOL_TAIL
    assert len(detail) > 1000
    note = failure_note(detail)
    assert note == "no result from the target: the image stopped; the target said: hard fault at 0x08001234"
    raw = failure_note("no result: last lines: " + "\x1b[31m" + "x" * 500)
    assert len(raw) == 200 and raw.endswith("…") and "\x1b" not in raw and "\\x1b" in raw
    db = tmp_path / "f.sqlite"
    run = stored_run(db, [("sha256", "mbedtls", {"bytes": 64}, 1e-5)])
    save_cell_at(Store(db), run.id, 5, {"op": "sha256", "params": {"bytes": 1024}, "engine": "mbedtls",
                                        "target": "host", "provenance": "none", "status": "failed", "kat": "n/a",
                                        "detail": detail, "samples": None, "result": None})
    notes = [n for t in build_tables(Store(db).load_run(run.id)) for n in t.notes if "failed" in n]
    assert notes == ["mbedtls bytes=1024: failed — " + note]


# ------------------------------------------------------------------------------------------------ i. scaling load
def _parallel_cell(n, aggregate, start, end):
    from types import SimpleNamespace
    parallel = {"aggregate": aggregate, "load_avg": {"start": start, "end": end}}
    return SimpleNamespace(result=SimpleNamespace(parallel=parallel))


def test_scaling_names_the_load_average_where_throughput_drops_or_the_machine_is_busy():
    from cryptobench.report.scaling_tables import load_notes
    from cryptobench.targets.host.parallel import load_average
    assert load_average() is None or load_average() >= 0
    by_n = {1: _parallel_cell(1, 100.0, 0.1, 1.0), 2: _parallel_cell(2, 60.0, 3.5, 4.2)}
    (note,) = load_notes(by_n, {1: 100.0, 2: 60.0}, ncpu=2)
    assert note.startswith("N=2: throughput below N=1's; load average 3.5 at its start, 4.2 at its end, on 2 CPU(s)")
    assert "other work took CPUs" in note
    quiet = {1: _parallel_cell(1, 100.0, 0.0, 1.0), 2: _parallel_cell(2, 190.0, 1.0, 2.0)}
    assert load_notes(quiet, {1: 100.0, 2: 190.0}, ncpu=16) == []
    idle_drop = {1: _parallel_cell(1, 100.0, 0.0, 1.0), 2: _parallel_cell(2, 90.0, 1.0, 2.0)}
    assert load_notes(idle_drop, {1: 100.0, 2: 90.0}, ncpu=16) == [
        "N=2: throughput below N=1's; load average 1.0 at its start, 2.0 at its end, on 16 CPU(s)"]

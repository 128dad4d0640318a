"""What cryptobench promises (docs/promises.md), from the command line: outputs checked before any
work and never over an input or the database, exit codes that say what was measured, a resumed run
keeps its plan, large plans need --yes."""
import json

import pytest

from conftest import cli

SHA = ["--op", "sha256", "--engine", "openssl-sw", "--repeat", "2"]


@pytest.mark.e2e
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_min_time_must_be_finite(tmp_path, value):
    proc = cli("run", *SHA, "--min-time", value, "--db", str(tmp_path / "r.sqlite"))
    assert proc.returncode == 2 and "--min-time: must be a finite number" in proc.stderr
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.e2e
def test_json_never_replaces_the_database_and_an_existing_file_needs_force(tmp_path):
    db = tmp_path / "r.sqlite"
    assert cli("run", *SHA, "--db", str(db)).returncode == 0
    before = db.read_bytes()
    proc = cli("run", *SHA, "--db", str(db), "--json", str(db))
    assert proc.returncode == 2 and "an output never replaces the results database" in proc.stderr
    assert db.read_bytes() == before
    out = tmp_path / "r.json"
    out.write_text("keep me")
    proc = cli("run", *SHA, "--db", str(db), "--json", str(out))
    assert proc.returncode == 2 and "exists; give --force" in proc.stderr and out.read_text() == "keep me"
    assert len(json.loads(cli("show", "latest", "--format", "json", "--db", str(db)).stdout)["results"]) == 1
    assert cli("show", "2", "--db", str(db)).returncode == 2                  # the refused runs never started
    assert cli("run", *SHA, "--db", str(db), "--json", str(out), "--force").returncode == 0
    assert json.loads(out.read_text())["schema"] == "cryptobench-result/1"


def test_json_into_a_missing_directory_is_refused_before_the_run(tmp_path):
    proc = cli("run", *SHA, "--db", str(tmp_path / "r.sqlite"), "--json", str(tmp_path / "no" / "r.json"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.e2e
def test_a_run_where_nothing_could_be_measured_exits_3(tmp_path):
    proc = cli("run", *SHA, "--db", str(tmp_path / "r.sqlite"),
               env={"CRYPTOBENCH_HARNESS": str(tmp_path / "no-such-harness")})
    assert proc.returncode == 3, proc.stderr
    assert "nothing measured" in proc.stderr and "--resume" in proc.stderr


@pytest.mark.e2e
def test_resume_keeps_the_plan_and_refuses_options_that_would_change_it(tmp_path):
    db = tmp_path / "r.sqlite"
    assert cli("run", *SHA, "--db", str(db)).returncode == 0
    for extra in (["--op", "sha512"], ["--engine", "mbedtls"], ["--repeat", "5"], ["--param", "bytes=16"]):
        proc = cli("run", "--resume", "1", *extra, "--db", str(db))
        assert proc.returncode == 2 and f"{extra[0]} with --resume" in proc.stderr, extra
    proc = cli("run", "--resume", "1", "--db", str(db))
    assert proc.returncode == 2 and "already complete, with no failed cell" in proc.stderr


def test_a_very_large_plan_needs_yes(tmp_path):
    values = ",".join(str(16 * i) for i in range(1, 2600))
    proc = cli("run", "--op", "sha256", "--op", "sha512", "--engine", "openssl-sw", "--param", f"bytes={values}",
               "--db", str(tmp_path / "r.sqlite"))
    assert proc.returncode == 2 and "this run plans 5,198 cells" in proc.stderr and "--yes" in proc.stderr
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.e2e
def test_export_never_replaces_the_database_and_needs_force_over_a_file(tmp_path):
    db = tmp_path / "r.sqlite"
    assert cli("run", *SHA, "--db", str(db)).returncode == 0
    before = db.read_bytes()
    proc = cli("export", "latest", "--format", "csv", "--out", str(db), "--db", str(db))
    assert proc.returncode == 2 and "never replaces the results database" in proc.stderr and db.read_bytes() == before
    out = tmp_path / "cells.csv"
    assert cli("export", "latest", "--format", "csv", "--out", str(out), "--db", str(db)).returncode == 0
    proc = cli("export", "latest", "--format", "csv", "--out", str(out), "--db", str(db))
    assert proc.returncode == 2 and "exists; give --force" in proc.stderr
    assert cli("export", "latest", "--format", "csv", "--out", str(out), "--db", str(db), "--force").returncode == 0


@pytest.mark.e2e
def test_energy_import_never_writes_its_trace_and_json_needs_a_run(tmp_path):
    from cryptobench.targets.trace import synth
    trace = tmp_path / "t.csv"
    synth.write_generic_csv(trace, synth.PulsePlan(n=3, width_s=4e-5, gap_s=4e-5, dt=1e-5))
    before = trace.read_bytes()
    base = ["energy", "import", str(trace), "--format", "generic-csv", "--db", str(tmp_path / "r.sqlite")]
    proc = cli(*base, "--op", "sha256", "--engine", "dev", "--json", str(trace))
    assert proc.returncode == 2 and "never replaces the trace" in proc.stderr
    proc = cli(*base, "--json", str(tmp_path / "w.json"))
    assert proc.returncode == 2 and "give --op OP --engine LABEL" in proc.stderr
    assert trace.read_bytes() == before and not (tmp_path / "w.json").exists()


@pytest.mark.e2e
def test_list_runs_shows_every_stored_run_and_a_killed_one_as_interrupted(tmp_path):
    import sqlite3
    db = tmp_path / "r.sqlite"
    assert cli("run", *SHA, "--label", "first", "--db", str(db)).returncode == 0
    assert cli("run", *SHA, "--db", str(db)).returncode == 0
    con = sqlite3.connect(str(db))
    con.execute("UPDATE runs SET status = 'running' WHERE id = 2")      # as a run killed with -9 leaves it
    con.commit()
    con.close()
    proc = cli("list", "runs", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()[2:]                  # after the store's line and the header: a run a line
    assert len(lines) == 2 and "complete" in lines[0] and "first" in lines[0] and "openssl" not in lines[0]
    assert "interrupted" in lines[1] and "running" not in lines[1]

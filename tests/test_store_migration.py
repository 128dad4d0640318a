"""The result database carries its version: a database written by 8b58c6d (before versions) is
migrated when a newer cryptobench opens it, every command reads it, and a newer version is refused."""
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import cli
from cryptobench.core.errors import UsageError
from cryptobench.store.database import STORE_VERSION, Store

FIXTURE = Path(__file__).parent / "fixtures" / "store-8b58c6d.sqlite"


@pytest.fixture
def old_db(tmp_path):
    db = tmp_path / "old.sqlite"
    shutil.copy(FIXTURE, db)
    return db


def _user_version(path) -> int:
    con = sqlite3.connect(str(path))
    try:
        return con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()


def test_the_fixture_is_an_unversioned_8b58c6d_database():
    assert _user_version(FIXTURE) == 0
    con = sqlite3.connect(f"file:{FIXTURE}?mode=ro", uri=True)
    plans = [json.loads(p) for (p,) in con.execute("SELECT plan FROM runs ORDER BY id")]
    con.close()
    assert [p["options"]["repeat_from_cli"] for p in plans] == [True, False]


@pytest.mark.e2e
def test_an_8b58c6d_database_is_migrated_and_every_command_reads_it(old_db, tmp_path):
    before = FIXTURE.read_bytes()
    store = Store(old_db)
    assert _user_version(old_db) == STORE_VERSION
    first, second = store.load_run(1), store.load_run(2)
    store.close()
    assert first.plan.options.overrides == ["repeat"] and second.plan.options.overrides == []
    assert all(r.plan.options.fixed_samples is True for r in (first, second))
    assert not any("_from_cli" in k for r in (first, second) for k in r.plan.options.to_json())
    assert first.plan.label == "written by 8b58c6d" and len(first.cells) == 4
    assert all(c.ok for c in first.cells + second.cells)
    for args in (["show", "1"], ["show", "1-2", "--format", "md"], ["show", "latest", "--format", "json"],
                 ["diff", "1", "2"], ["export", "1-latest", "--format", "csv"]):
        proc = cli(*args, "--db", str(old_db))
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert proc.stdout.strip(), args
    assert "written by 8b58c6d" in cli("show", "1", "--db", str(old_db)).stdout
    assert FIXTURE.read_bytes() == before                      # the fixture itself is never written


def test_a_stored_plan_reads_back_as_it_was_stored(old_db):
    """A plan read from the store writes out the very JSON it was stored as: no field it did not
    have (an older cryptobench's plan, an imported trace's), its keys in their order."""
    Store(old_db).close()
    con = sqlite3.connect(str(old_db))
    stored = [p for (p,) in con.execute("SELECT plan FROM runs ORDER BY id")]
    con.close()
    store = Store(old_db)
    assert [json.dumps(store.load_run(i).plan.to_json()) for i in (1, 2)] == stored
    store.close()


def test_migrating_twice_changes_nothing(old_db):
    Store(old_db).close()
    once = [r for r in sqlite3.connect(str(old_db)).execute("SELECT plan FROM runs ORDER BY id")]
    Store(old_db).close()
    twice = [r for r in sqlite3.connect(str(old_db)).execute("SELECT plan FROM runs ORDER BY id")]
    assert once == twice and _user_version(old_db) == STORE_VERSION


def test_a_new_database_starts_at_the_current_version(tmp_path):
    Store(tmp_path / "new.sqlite").close()
    assert _user_version(tmp_path / "new.sqlite") == STORE_VERSION


def test_a_database_from_a_newer_cryptobench_is_refused_and_left_alone(old_db):
    Store(old_db).close()
    con = sqlite3.connect(str(old_db))
    con.execute(f"PRAGMA user_version = {STORE_VERSION + 1}")
    con.commit()
    con.close()
    before = old_db.read_bytes()
    with pytest.raises(UsageError, match=rf"written by a newer cryptobench \(store version {STORE_VERSION + 1}"):
        Store(old_db)
    assert old_db.read_bytes() == before
    proc = cli("show", "1", "--db", str(old_db))
    assert proc.returncode == 2 and "newer cryptobench" in proc.stderr and proc.stderr.count("\n") == 1

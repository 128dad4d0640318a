"""A stored plan whose target this version cannot read (written by hand, a newer version, or a
damaged file) is one line naming the store and the run, never a traceback."""
import json

import pytest

from cryptobench.core.errors import UsageError
from cryptobench.core.records import Plan
from cryptobench.store.database import Store
from conftest import cli


def _run_with_target(db, target: dict) -> int:
    store = Store(db)
    run_id = store.create_run(Plan(), {})
    with store.backend.transaction():
        store.backend.execute("UPDATE runs SET plan = ? WHERE id = ?", (json.dumps({"target": target}), run_id))
    return run_id


def test_an_unknown_target_kind_is_one_line_naming_the_run(tmp_path):
    db = tmp_path / "r.sqlite"
    run_id = _run_with_target(db, {"kind": "x\x1b[31m"})
    with pytest.raises(UsageError) as err:
        Store(db).load_run(run_id)
    text = str(err.value)
    assert f"run {run_id}: its stored target is not one this cryptobench reads" in text
    assert "\x1b" not in text and "\n" not in text
    proc = cli("show", str(run_id), "--db", str(db))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "stored target" in proc.stderr

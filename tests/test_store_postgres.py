"""The result store on a real PostgreSQL server (devtools/pgserver.py starts one): the same schema
and behaviour as SQLite, `cryptobench run/show/export/diff --db postgresql://…`, concurrent
writers, and `cryptobench db migrate` for a shared store that an older cryptobench wrote."""
import json
import multiprocessing

import pytest

from conftest import cli
from cryptobench.core.errors import UsageError
from cryptobench.core.records import Plan
from cryptobench.store.database import STORE_VERSION, Store


def test_a_new_store_has_the_sqlite_schema_and_version(pg_db, tmp_path):
    pg, lite = Store(pg_db), Store(tmp_path / "r.sqlite")
    assert pg.version == lite.version == STORE_VERSION
    assert pg.backend.tables() - {"store_meta"} == lite.backend.tables() - {"sqlite_sequence"}
    run_id = pg.create_run(Plan(), {"host": "h"})
    assert run_id == 1 and pg.create_run(Plan(), {}) == 2
    assert [r["status"] for r in pg.run_summaries()] == ["interrupted", "interrupted"]    # nobody holds them
    assert pg.lock_run(run_id) is None and pg.run_summaries()[0]["status"] == "running"
    pg.set_status(run_id, "complete")
    assert pg.load_run(run_id).status == "complete" and pg.load_run(run_id).conditions["host"] == "h"
    pg.unlock_run(run_id)
    assert "***" not in pg.label and "cryptobench@127.0.0.1" in pg.label


def test_a_password_never_reaches_a_message():
    from cryptobench.store.location import redact        # tests/test_untrusted_store.py: the other forms
    assert redact("postgresql://lab:s3cret@db.example:5432/bench") == "postgresql://lab:***@db.example:5432/bench"
    assert redact("postgresql://lab@db/bench") == "postgresql://lab@db/bench"


@pytest.mark.e2e
def test_an_unreachable_server_is_one_line(tmp_path):
    proc = cli("list", "runs", "--db", "postgresql://nobody:pw@127.0.0.1:1/none")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "cannot connect" in proc.stderr and "pw" not in proc.stderr
    # a URL the driver cannot parse: its message quotes the URL, never with the password
    proc = cli("list", "runs", "--db", "postgresql://x:s3cret@[bad")
    assert proc.returncode == 2 and "cannot connect" in proc.stderr and "s3cret" not in proc.stderr


@pytest.mark.e2e
def test_run_show_export_and_diff_read_and_write_postgresql(pg_db):
    common = ("--engine", "openssl-sw", "--op", "sha256", "--param", "bytes=64", "--repeat", "5", "--db", pg_db)
    for _ in range(2):
        proc = cli("run", *common)
        assert proc.returncode == 0, proc.stderr
        assert "stored as run" in proc.stderr
    show = cli("show", "latest", "--db", pg_db)
    assert show.returncode == 0 and "SHA-256" in show.stdout
    exp = cli("export", "2", "--format", "json", "--db", pg_db)
    assert exp.returncode == 0, exp.stderr
    (cell,) = json.loads(exp.stdout)
    assert cell["op"] == "sha256" and cell["kat"] == "pass"
    diff = cli("diff", "1", "2", "--db", pg_db)
    assert diff.returncode in (0, 1) and "sha256" in diff.stdout.lower() + diff.stderr.lower(), diff.stderr
    runs = cli("list", "runs", "--db", pg_db)
    assert "2 run(s) in postgresql://cryptobench@127.0.0.1" in " ".join(runs.stdout.split())
    from_env = cli("list", "runs", env={"CRYPTOBENCH_DB": pg_db})        # the URL from the environment, not --db
    assert "2 run(s) in postgresql://cryptobench@127.0.0.1" in " ".join(from_env.stdout.split()), from_env.stderr


def _writer(url: str, run_id: int, who: int, n: int) -> None:
    from cryptobench.core.records import Cell, Params
    from cryptobench.store.database import Store
    store = Store(url)
    for i in range(n):
        store.save_cell(run_id, Cell(op="sha256", params=Params({"bytes": who * 1000 + i}), engine=f"w{who}",
                                     target="host", provenance="measured", status="ok", kat="pass", seq=i))
    store.close()


@pytest.mark.e2e
def test_concurrent_writers_lose_nothing(pg_db):
    store = Store(pg_db)
    run_id = store.create_run(Plan(), {})
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(pg_db, run_id, who, 25)) for who in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    cells = store.load_run(run_id).cells
    assert len(cells) == 100 and len({(c.engine, c.params.key) for c in cells}) == 100


@pytest.mark.e2e
def test_an_older_shared_store_waits_for_db_migrate(pg_db):
    store = Store(pg_db)                  # as version 2 left it: no lease or hold tables yet
    store.backend.execute("DROP TABLE leases")
    store.backend.execute("DROP TABLE holds")
    store.backend.execute("UPDATE store_meta SET value = '2' WHERE key = 'version'")
    store.close()
    with pytest.raises(UsageError, match=rf"store version 2, this cryptobench writes {STORE_VERSION}; .* cryptobench db "
                                         "migrate"):
        Store(pg_db)
    proc = cli("list", "runs", "--db", pg_db)
    assert proc.returncode == 2 and "cryptobench db migrate --db postgresql://" in proc.stderr
    proc = cli("db", "migrate", "--db", pg_db)
    assert proc.returncode == 0 and f"migrated from store version 2 to {STORE_VERSION}" in proc.stdout, proc.stderr
    assert Store(pg_db).version == STORE_VERSION
    assert {"leases", "holds"} <= Store(pg_db).backend.tables()
    assert "up to date" in cli("db", "migrate", "--db", pg_db).stdout


def test_a_database_of_another_program_is_refused_untouched(pg_db):
    import psycopg
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id INT)")
    with pytest.raises(UsageError, match="not a cryptobench database .* customers"):
        Store(pg_db)
    with psycopg.connect(pg_db, autocommit=True) as conn:
        names = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert names == {"customers"}

"""bench/sim_vs_silicon's handling of a library no crate carries (rows.toml `source_marker`):
without --source its rows are listed as not run, and a wrong --source is one clear line. The
bench's figures themselves are measurements (docs/sim-model.md quotes them), not tested here."""
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "sim_vs_silicon"


def bench(*args, cwd):
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, cwd=cwd)


def test_a_library_without_a_crate_is_listed_as_not_run_without_its_source(tmp_path):
    proc = bench("--only", "cortexm-AES", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "# cortexm-AES: 58 rows not run: no crate carries its code; give --source cortexm-AES=DIR, " \
           "a checkout of jnk0le/cortexm-AES (figures read at b18b7a463df7)" in proc.stdout
    assert "# not run (no --source): cortexm-AES" in proc.stdout


def test_an_unknown_or_wrong_source_is_one_line(tmp_path):
    proc = bench("--source", "nosuch=/tmp", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--source nosuch: no such library; rows.toml's libraries that need one: cortexm-AES" in proc.stderr
    proc = bench("--only", "cortexm-AES", "--source", f"cortexm-AES={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"--source cortexm-AES={tmp_path}: no aes/lookup_tables.c there; expected a "
                                   "checkout of jnk0le/cortexm-AES")


def test_every_source_image_row_names_its_figure_and_every_board_its_build():
    doc = tomllib.loads((ROOT / "bench" / "silicon" / "rows.toml").read_text())
    lib = next(lib for lib in doc["library"] if lib["name"] == "cortexm-AES")
    for key in ("repository", "commit", "source_marker", "source", "how", "image"):
        assert lib[key], key
    assert (ROOT / "bench" / "silicon" / lib["image"] / "image.c").is_file()
    for board in lib["board"]:
        assert {"core", "device", "board", "cpu", "opt", "compiler", "impl", "runs"} <= set(board)
        assert all(isinstance(row["cycles"], int) and row["label"] for row in board["rows"])


def _bench_module():
    """bench/sim_vs_silicon as a module (it has no .py suffix), for its pure helpers."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("sim_vs_silicon", str(BENCH))
    spec = importlib.util.spec_from_loader("sim_vs_silicon", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_fips_203_204_rows_parse_and_cite_pqm4_and_the_crates():
    doc = tomllib.loads((ROOT / "bench" / "silicon" / "rows.toml").read_text())
    lib = next(lib for lib in doc["library"] if lib["name"] == "PQClean FIPS 203/204")
    assert lib["kind"] == "image" and (ROOT / "bench" / "silicon" / lib["image"] / "image.c").is_file()
    # the figures' commit (the newest pqm4 read) and the commits each group was last measured at
    for cited in ("cc2c1b992b60", "4af91da", "68e1ca7", "PQClean c3e6861"):
        assert cited in lib["source"], cited
    assert "c3e6861" in lib["version_note"] and "cycles outside hashing" in lib["compared"]
    rows = [(board, row) for board in lib["board"] for row in board["rows"]]
    for board, _ in rows:
        # pqm4's NUCLEO-L4R5ZI at its CLOCK_BENCHMARK (20 MHz, 0 WS, caches and prefetch on), linked as there
        assert board["device"] == "stm32l4r5:clock=20MHz,prefetch=on,cache=on" and board["clock_hz"] == 20_000_000
        assert "NUCLEO-L4R5ZI" in board["board"] and "hal-opencm3.c" in board["board"]
        assert (ROOT / "bench" / "silicon" / lib["image"] / board["link"]).is_file()
        assert board["opt"] == "O3" and board["cpu"] == "m4" and board["compiler"] in ("gcc12", "gcc8")
    kem = {(r["scheme"], r["op"]) for _, r in rows if r["crate"] == "pqcrypto-mlkem"}
    assert kem == {(f"ml-kem-{n}", op) for n in (512, 768, 1024) for op in ("keypair", "encaps", "decaps")}
    dsa = {(r["scheme"], r["op"], r.get("stat")) for _, r in rows if r["crate"] == "pqcrypto-mldsa"}
    assert dsa == {(f"ml-dsa-{n}", op, stat) for n in (44, 65, 87)
                   for op, stat in (("keypair", None), ("verify", None), ("sign", "expected"), ("sign", "min"),
                                    ("sign", "max"))}
    for _, r in rows:
        assert r["crate_version"] == "0.1.0" and isinstance(r["cycles"], int) and 0 < r["hash_pct"] < 100
    # signing is checked at FIPS 204's expected attempts (Table 1); its min and max are information only
    expected = {r["scheme"]: r["expected_attempts"] for _, r in rows if r.get("stat") == "expected"}
    assert expected == {"ml-dsa-44": 4.25, "ml-dsa-65": 5.1, "ml-dsa-87": 3.85}
    assert all(r["check"] is False for _, r in rows if r.get("stat") in ("min", "max"))
    assert all(b.get("count_attempts") for b in lib["board"] if any(r["op"] == "sign" for r in b["rows"]))


def test_a_distribution_row_is_labelled_with_its_statistic_and_count():
    bench_mod = _bench_module()
    board = {"iterations": 10}
    assert bench_mod.row_label({"label": "ml-dsa-44 sign", "stat": "min"}, board) == "ml-dsa-44 sign min/10"
    assert bench_mod.row_label({"label": "ml-kem-512 keypair"}, board) == "ml-kem-512 keypair"
    assert bench_mod.STATS["max"]([3, 9, 4]) == 9 and bench_mod.STATS["mean"]([2, 4]) == 3
    fit_row = {"label": "ml-dsa-44 sign", "stat": "expected", "expected_attempts": 4.25}
    assert bench_mod.row_label(fit_row, board) == "ml-dsa-44 sign fit@4.25/10"
    # published cycles outside hashing: the figure times (1 - the hashing share)
    assert bench_mod.published_cycles({"cycles": 1000, "hash_pct": 25.0}, board) == 750.0


def test_the_attempts_fit_recovers_a_line_and_the_geometric_counts_sum_to_the_executions():
    bench_mod = _bench_module()
    xs = [1, 2, 3, 4, 6]
    a, b, sd = bench_mod.fit_line(xs, [1000 + 250 * x for x in xs])
    assert (round(a, 6), round(b, 6), round(sd, 6)) == (1000, 250, 0)
    a, b, sd = bench_mod.fit_line([1, 1, 2, 2], [10, 12, 20, 22])    # residuals +-1 about 1 + 10 x
    assert (a, b) == (1.0, 10.0) and abs(sd - 2 ** 0.5) < 1e-12
    # the fit's standard error is smallest at the mean of the attempts
    assert bench_mod.fit_se([1, 1, 2, 2], 1.0, 1.5) < bench_mod.fit_se([1, 1, 2, 2], 1.0, 4.25)
    with pytest.raises(ValueError):
        bench_mod.fit_line([3, 3, 3], [1, 2, 3])
    counts = [bench_mod.geometric(100, 4.25, k) for k in range(1, 400)]
    assert abs(sum(counts) - 100) < 1e-9 and abs(counts[0] - 100 / 4.25) < 1e-12
    assert abs(sum(k * c for k, c in zip(range(1, 400), counts)) / 100 - 4.25) < 1e-9

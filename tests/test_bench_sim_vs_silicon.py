"""bench/sim_vs_silicon's handling of a library no crate carries (rows.toml `source_marker`):
without --source its rows are listed as not run, and a wrong --source is one clear line. The
bench's figures themselves are measurements (docs/sim-model.md quotes them), not tested here."""
import subprocess
import sys
import tomllib
from pathlib import Path

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

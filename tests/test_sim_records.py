"""What a simulated cell records beside its cycles: instructions per operation, CPI and the
simulator's speed; shown by `cryptobench show` and carried by `export`."""
import csv
import io
import json

import pytest

from conftest import cli
from test_sim import needs_sim

# end to end: the real command line on stored or measured runs (the slow tier)
pytestmark = pytest.mark.e2e

COMMON = ("--op", "sha256", "--param", "bytes=64,256", "--engine", "mbedtls")


def _run(tmp_path, *args, name):
    out = tmp_path / f"{name}.json"
    db = tmp_path / f"{name}.sqlite"
    proc = cli("run", *args, "--db", str(db), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return db, json.loads(out.read_text())


@needs_sim
def test_a_simulated_cell_records_instructions_cpi_and_speed(tmp_path):
    db, doc = _run(tmp_path, "--target", "sim:cortex-m0", "--device", "stm32f030", *COMMON, name="a")
    cells = [r for r in doc["results"] if r["status"] == "ok"]
    assert len(cells) == 2
    for r in cells:
        sim, cycles = r["sim"], r["cycles"]["per_op_median"]
        assert sim["provenance"] == "simulated" and sim["speed_provenance"] == "measured"
        assert sim["instructions_per_op"] > 0 and sim["instructions_overhead"] > 0
        assert sim["cpi"] * sim["instructions_per_op"] == pytest.approx(cycles, rel=1e-9)
        assert 1.0 <= sim["cpi"] < 3.0                 # an M0 with one wait state: some cycles per instruction
        assert sim["run_instructions"] >= sim["instructions_per_op"] and sim["run_wall_s"] > 0
        assert sim["instructions_per_s"] == pytest.approx(sim["run_instructions"] / sim["run_wall_s"])
    by = {r["params"]["bytes"]: r["sim"]["instructions_per_op"] for r in cells}
    assert by[64] < by[256]
    # deterministic: the same image and profile give the same instructions and cycles
    _, again = _run(tmp_path, "--target", "sim:cortex-m0", "--device", "stm32f030", *COMMON, name="b")
    key = lambda d: {r["params"]["bytes"]: (r["sim"]["instructions_per_op"], r["cycles"]["per_op_median"])
                     for r in d["results"] if r["status"] == "ok"}
    assert key(again) == key(doc)
    # show prints both per cell; export carries them
    shown = cli("show", "latest", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())           # caption lines wrap at the terminal's width
    assert "insns" in text and "CPI" in text and "M instructions/s median over the cells' images" in text
    exported = cli("export", "latest", "--format", "csv", "--db", str(db))
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    for row, r in zip(sorted(rows, key=lambda x: int(x["param_bytes"])), sorted(cells, key=lambda x: x["params"]["bytes"])):
        assert float(row["sim_instructions_per_op"]) == r["sim"]["instructions_per_op"]
        assert float(row["sim_cpi"]) == pytest.approx(r["sim"]["cpi"])
        assert float(row["sim_instructions_per_s"]) > 0
    js = json.loads(cli("export", "latest", "--format", "json", "--db", str(db)).stdout)
    rows = js if isinstance(js, list) else js.get("rows") or js.get("cells")
    assert all(row["sim_cpi"] > 0 for row in rows)

"""`cryptobench run --target sim:CORE --profile`: each simulated cell's per-function profile (the
ELF function holding the PC, cycles, instructions and calls of its median timed repetition),
stored with the cell, shown, exported, the same on both executors, and absent by default."""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import cli
from test_sim import needs_sim

SHA = ("--op", "sha256", "--param", "bytes=64,256", "--engine", "mbedtls")
BLOCK_FN = "mbedtls_internal_sha256_process"      # Mbed TLS's SHA-256 compression of one 64-byte block


def _run(tmp_path, *args, name, executor="native"):
    out, db = tmp_path / f"{name}.json", tmp_path / f"{name}.sqlite"
    proc = cli("run", *args, "--db", str(db), "--json", str(out), "--quiet",
               env={"CRYPTOBENCH_SIM_EXECUTOR": executor})
    assert proc.returncode == 0, proc.stderr
    return db, proc, json.loads(out.read_text())


def _ok(doc) -> list:
    cells = [r for r in doc["results"] if r["status"] == "ok"]
    assert cells, doc["results"]
    return sorted(cells, key=lambda r: r["params"]["bytes"])


# --- the pieces, without a simulator run ------------------------------------------------------------
def test_a_window_is_the_difference_of_two_snaps_most_cycles_first():
    from cryptobench.targets.mcu.sim.profile import OUTSIDE, FunctionProfile
    prof = FunctionProfile({"f": (0x100, 0x20), "g": (0x120, 0x10), "f_alias": (0x100, 0x20)})
    assert [r[2] for r in prof.ranges] == ["f", "g"]          # aliases: the first name in sorted order
    a = ([10, 0, 1], [5, 0, 1], [1, 0, 0])                    # (cycles, insns, calls) of f, g, (no function)
    b = ([30, 50, 1], [15, 30, 3], [2, 1, 0])
    rows = prof.window(a, b)
    assert rows == [{"function": "g", "cycles": 50, "instructions": 30, "calls": 1},
                    {"function": "f", "cycles": 20, "instructions": 10, "calls": 1},
                    {"function": OUTSIDE, "cycles": 0, "instructions": 2, "calls": 0}]


def test_a_cells_profile_is_its_median_repetition_paired_as_its_cycles_are():
    from cryptobench.targets.mcu.sim_reading import sim_profiles

    class Prof:
        def window(self, a, b):
            return [{"function": "f", "cycles": b - a, "instructions": 0, "calls": 0}]

    # two cells of 3 repetitions: reads (before, after) per repetition, then the overhead pair
    reads = [0, 10, 20, 50, 60, 80, 90, 91] + [100, 105, 110, 112, 120, 124, 130, 131]
    report = SimpleNamespace(profiler=Prof(), profile_snaps=list(reads), counter_reads=reads,
                             counter_insns=[2 * r for r in reads],
                             cells={0: {"status": "ok", "cyc": [10, 30, 20]}, 1: {"status": "failed"},
                                    2: {"status": "ok", "cyc": [5, 2, 4]}})
    got = sim_profiles(report)
    assert set(got) == {0, 2}
    assert got[0]["repetition"] == 2 and got[0]["cycles"] == 20 and got[0]["instructions"] == 40   # 10, 30, 20
    assert got[2]["repetition"] == 2 and got[2]["cycles"] == 4                                      # 5, 2, 4
    assert got[0]["rows"] == [{"function": "f", "cycles": 20, "instructions": 0, "calls": 0}]
    assert sim_profiles(SimpleNamespace(profiler=None)) == {}


def test_a_counter_read_the_harness_did_not_make_does_not_shift_later_cells_windows():
    """A library that reads DWT CYCCNT itself (a HAL_GetTick built on it, as a user's glue for ST's
    HAL might write) adds a read inside a timed window: pairing the log in order would give each
    later window another's cycles. The firmware's own counts expose it; from there on the cells
    keep those counts and get no instruction counts or profile."""
    from cryptobench.targets.mcu.sim_reading import paired_cells, sim_cycles, sim_profiles

    class Prof:
        def window(self, a, b):
            return []

    # cell 0 as the harness reads it; cell 2 with one extra read (at 105) inside its first window
    reads = [0, 10, 20, 50, 90, 91] + [100, 105, 107, 110, 112, 130, 131]
    cells = {0: {"status": "ok", "cyc": [10, 30]}, 2: {"status": "ok", "cyc": [7, 2]}}
    report = SimpleNamespace(profiler=Prof(), profile_snaps=list(reads), counter_reads=reads,
                             counter_insns=list(reads), cells=cells)
    assert paired_cells(report) == {0: 0}
    assert sim_cycles(report) == {0: ([10, 30], 1)}
    assert set(sim_profiles(report)) == {0}
    # a firmware count that wrapped (SysTick keeps 24 bits) still agrees: the log keeps the exact one
    report.counter_reads = [0, (1 << 24) + 10, 20, 50, 90, 91]
    report.cells = {0: {"status": "ok", "cyc": [10, 30]}}
    assert paired_cells(report) == {0: 0}


def test_profile_applies_to_sim_targets_only():
    from cryptobench.core.records import McuTargetSpec, SimSpec, TargetSpecError
    with pytest.raises(TargetSpecError, match="target profile"):
        McuTargetSpec.from_json({"kind": "qemu", "board": "mps2-an386", "profile": True})
    spec = SimSpec(board="nucleo-f401re", core="cortex-m4", profile=True)
    assert spec.to_json()["profile"] is True
    assert "profile" not in SimSpec(board="nucleo-f401re", core="cortex-m4").to_json()
    proc = cli("run", "--op", "sha256", "--profile")
    assert proc.returncode != 0
    assert "--profile: applies to sim:CORE targets only" in proc.stderr and "--target host" in proc.stderr


# --- end to end --------------------------------------------------------------------------------------
@pytest.mark.e2e
@needs_sim
@pytest.mark.parametrize("target,device", [("sim:cortex-m4", "cc2652"), ("sim:cortex-m0", "stm32f030")])
def test_a_profiled_sha256_cell_sums_to_its_cycles_on_both_executors(tmp_path, target, device):
    """The rows of the median repetition sum to the cell's cycles per operation exactly (SHA-256 is
    not halved: one operation per window), their instructions to its instructions; the top
    function is Mbed TLS's block function, called once per 64-byte block (the message's blocks and
    the padding's); native and Unicorn give the same profile, and the profile changes no count."""
    args = ("--target", target, "--device", device, *SHA)
    db, proc, doc = _run(tmp_path, *args, "--profile", name="native")
    cells = _ok(doc)
    assert len(cells) == 2
    for r in cells:
        p = r["profile"]
        assert p["provenance"] == "simulated" and p["ops_in_window"] == 1 and p["repetition"] in (0, 1)
        assert sum(row["cycles"] for row in p["rows"]) == p["cycles"] == r["cycles"]["per_op_median"]
        assert sum(row["instructions"] for row in p["rows"]) == p["instructions"] == r["sim"]["instructions_per_op"]
        assert p["rows"] == sorted(p["rows"], key=lambda row: -row["cycles"])
        top = p["rows"][0]
        assert top["function"] == BLOCK_FN
        assert top["calls"] == r["params"]["bytes"] // 64 + 1        # the message's blocks, then the padding's
        assert top["cycles"] > p["cycles"] / 2
    assert doc["conditions"]["target"]["profile"].startswith("per function")
    import jsonschema
    schema = Path(__file__).resolve().parents[1] / "docs" / "result.schema.json"
    jsonschema.validate(doc, json.loads(schema.read_text()))

    _, _, uni = _run(tmp_path, *args, "--profile", name="unicorn", executor="unicorn")
    assert [r["profile"] for r in _ok(uni)] == [r["profile"] for r in cells]

    _, _, plain = _run(tmp_path, *args, name="plain")                # the default stores none
    assert all("profile" not in r for r in plain["results"]) and "profile" not in plain["conditions"]["target"]
    assert [(r["cycles"]["per_op_median"], r["sim"]["instructions_per_op"]) for r in _ok(plain)] == \
           [(r["cycles"]["per_op_median"], r["sim"]["instructions_per_op"]) for r in cells]

    if device != "cc2652":
        return
    show = cli("show", "1", "--db", str(db))
    assert show.returncode == 0, show.stderr
    assert "top functions" in show.stdout and BLOCK_FN in show.stdout
    assert "top functions" in proc.stdout                             # the run's own tables too
    exp = cli("export", "1", "--db", str(db), "--format", "json")
    assert exp.returncode == 0, exp.stderr
    rows = sorted(json.loads(exp.stdout), key=lambda row: row["param_bytes"])
    assert [row["sim_profile_top_function"] for row in rows] == [BLOCK_FN, BLOCK_FN]
    assert [json.loads(row["sim_profile_json"]) for row in rows] == [r["profile"] for r in cells]

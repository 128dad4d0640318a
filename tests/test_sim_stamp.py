"""Counter reads stamped at the reading instruction, several function markers, the per-function
profile, a console UART that reads ready, and the executor `sim run` names: on hand-written images
(tests/fixtures/sim_image/*.S, built here with arm-none-eabi-gcc), on both executors."""
import json
import subprocess

import pytest

from conftest import ROOT, cli

FIX = ROOT / "tests" / "fixtures" / "sim_image"
EXECUTORS = ("native", "unicorn")
# the model's costs the expectations are made of (targets/mcu/sim/timing.py, from the TRMs' tables):
# a load 2 (1 when pipelined after a load, M3/M4 TRM 3.3.2), BL 4 on the M0 (DDI 0432C 3.3) and 1+P = 2 on the M4
LOAD = {"cortex-m0": 2, "cortex-m4": 2}
PIPELINED_LOAD = {"cortex-m0": 2, "cortex-m4": 1}
BL = {"cortex-m0": 4, "cortex-m4": 2}
DEVICE = {"cortex-m0": "ideal-m0", "cortex-m4": "ideal-m4"}


def build(tmp_path, source: str, core: str, flash: int, defines=()) -> str:
    out = tmp_path / f"{source}-{core}.elf"
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={core}", "-mthumb", "-nostdlib", "-Wl,--entry=reset", *defines,
                    f"-Wl,--section-start=.isr_vector={flash:#x}", f"-Wl,-Ttext={flash + 0x400:#x}",
                    str(FIX / f"{source}.S"), "-o", str(out)], check=True, capture_output=True)
    return str(out)


def sim_run(image, device, *args, executor="native"):
    proc = cli("sim", "run", image, "--device", device, "--json", "-", *args,
               env={"CRYPTOBENCH_SIM_EXECUTOR": executor})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout)


def stamp_image(tmp_path, core):
    # the M0 has no DWT: its reads are of SysTick's CVR (counting down; the log has the model's count)
    defines = ("-DBASE=0xE000E010", "-DOFF=8", "-DSYSTICK=1") if core == "cortex-m0" else \
        ("-DBASE=0xE0001000", "-DOFF=4", "-DSYSTICK=0")
    return build(tmp_path, "stamp", core, 0, defines)


@pytest.mark.parametrize("core", sorted(DEVICE))
def test_counter_reads_are_stamped_at_the_reading_instruction(tmp_path, core):
    """Back to back, two reads differ by the second load's cost in the model (its data phase is its
    last cycle: 1 on the M4, where it pipelines after the first; 2 on the M0), not 0 as a count
    taken at the end of their block would; a bracket around BL f reads f's cycles (its
    function-marker segment) plus the BL and the second read's load. Both executors alike."""
    image = stamp_image(tmp_path, core)
    docs = {ex: sim_run(image, DEVICE[core], "--marker", "function:f", executor=ex)[1] for ex in EXECUTORS}
    for ex, doc in docs.items():
        assert doc["exit_code"] == 0 and doc["simulator"]["executor"] == ex, doc["notes"]
        r = [x["cycles"] for x in doc["counter_reads"]]
        (f,) = [s["cycles"] for s in doc["segments"]]
        assert len(r) == 4
        assert r[1] - r[0] == r[2] - r[1] == PIPELINED_LOAD[core]          # the empty bracket
        assert r[3] - r[2] == f + BL[core] + LOAD[core]                   # the bracket around f
    assert docs["native"]["counter_reads"] == docs["unicorn"]["counter_reads"]


def test_a_console_uart_polled_for_txe_reads_ready_and_prints(tmp_path):
    """USART2's SR (RM0090 "Status register (USART_SR)": TXE bit 7) reads ready on the stm32f411
    (linked for the NUCLEO-F401RE, whose console it is): a polling driver does not spin to the
    instruction limit, and its bytes are the console."""
    image = build(tmp_path, "uart_poll", "cortex-m4", 0x08000000)
    for ex in EXECUTORS:
        proc, doc = sim_run(image, "stm32f411", "--max-instructions", "100000", executor=ex)
        assert proc.returncode == 0 and doc["exit_code"] == 0 and not doc["instruction_limit_reached"]
        assert "hi uart\n" in proc.stderr
        assert any("console UART (stm32-usart at 0x40004400) reads ready" in n for n in doc["notes"])


def test_several_function_markers_and_the_per_function_profile(tmp_path):
    """reset calls f and g three times each and f calls g: each call of each function is a
    segment; the profile gives every cycle and instruction of the run to reset, f or g (f's own
    cycles: its calls less g's inside them), with 3 calls of f and 6 of g; both executors alike."""
    image = build(tmp_path, "calls", "cortex-m4", 0)
    docs = {}
    for ex in EXECUTORS:
        proc, doc = sim_run(image, "ideal-m4", "--marker", "function:f", "--marker", "function:g", "--profile",
                            executor=ex)
        assert proc.returncode == 0, proc.stderr
        docs[ex] = doc
    doc = docs["native"]
    assert docs["unicorn"]["profile"] == doc["profile"] and docs["unicorn"]["segments"] == doc["segments"]
    assert doc["marker"] == {"spec": "function:f,function:g", "meaning": "each call of f, g, entry to return"}
    labels = [s["label"] for s in doc["segments"]]
    assert labels == ["f call 1", "g call 1 (depth 1)", "g call 2", "f call 2", "g call 3 (depth 1)", "g call 4",
                      "f call 3", "g call 5 (depth 1)", "g call 6"]
    seg = {s["label"]: s for s in doc["segments"]}
    rows = {r["function"]: r for r in doc["profile"]}
    assert set(rows) == {"reset", "f", "g"}
    assert [r["cycles"] for r in doc["profile"]] == sorted((r["cycles"] for r in doc["profile"]), reverse=True)
    assert sum(r["cycles"] for r in doc["profile"]) == doc["total"]["cycles"]
    assert sum(r["instructions"] for r in doc["profile"]) == doc["total"]["instructions"]
    assert (rows["reset"]["calls"], rows["f"]["calls"], rows["g"]["calls"]) == (0, 3, 6)
    g = seg["g call 2"]
    assert rows["g"]["cycles"] == 6 * g["cycles"] and rows["g"]["instructions"] == 6 * g["instructions"]
    f = seg["f call 1"]
    assert rows["f"]["cycles"] == 3 * (f["cycles"] - seg["g call 1 (depth 1)"]["cycles"])
    text = " ".join(cli("sim", "run", image, "--device", "ideal-m4", "--profile").stdout.split())
    assert "cycles and instructions per function" in text and "the native executor" in text


def test_sim_run_names_the_executor_that_ran(tmp_path):
    image = build(tmp_path, "calls", "cortex-m4", 0)
    for ex, words in (("native", "on the native executor"), ("unicorn", "on Unicorn")):
        proc = cli("sim", "run", image, "--device", "ideal-m4", env={"CRYPTOBENCH_SIM_EXECUTOR": ex})
        assert proc.returncode == 0 and words in " ".join(proc.stdout.split()), proc.stdout
        _, doc = sim_run(image, "ideal-m4", executor=ex)
        assert doc["simulator"]["executor"] == doc["stats"]["executor"] == ex
        assert "profile" in doc and doc["profile"] is None          # off unless asked


def test_only_function_markers_repeat(tmp_path):
    image = build(tmp_path, "calls", "cortex-m4", 0)
    proc = cli("sim", "run", image, "--device", "ideal-m4", "--marker", "function:f", "--marker", "semihosting")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "only function:NAME markers" in proc.stderr
    proc = cli("sim", "run", image, "--device", "ideal-m4", "--marker", "function:f", "--marker", "function:nope")
    assert proc.returncode == 2 and "no function nope" in proc.stderr

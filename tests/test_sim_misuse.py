"""Images that misuse the simulator (issue 43, class 9) give one answer on both executors, as the
part would: SVC with a handler is taken; WFI and WFE sleep until an interrupt coming (the cycles
counted as slept) and stop the run in one line when nothing is coming; SEV and an exception
return set the event register a WFE consumes; YIELD goes on; an engine's DMA over code in RAM runs
the new bytes; the CC26x2 CRYPTO DMA cannot write flash; a profile's load near the symbol cap is
quick (codescan.py, elfread.py)."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import cli
from cryptobench.devtools import hostile_images as hi
from cryptobench.devtools import misuse_images as mi
from cryptobench.targets.mcu.sim import codescan, sleep

EXECUTORS = ("native", "unicorn")
FIX = Path(__file__).parent / "fixtures" / "peripherals"
HANG_GUARD_S = 600          # subprocess timeout: only so that a regression fails instead of hanging
NEVER = "the core would sleep for ever"


def run(image, executor, *args, device=hi.DEVICE):
    proc = cli("sim", "run", str(image), "--device", device, "--max-instructions", "1000000", *args, "--json", "-",
               env={"CRYPTOBENCH_SIM_EXECUTOR": executor}, timeout=HANG_GUARD_S)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["stats"]["executor"] == executor
    return proc, doc


def both(image, *args, device=hi.DEVICE):
    """The two executors' answers, which must be the same: exit code, problem, cycles, slept
    cycles and instructions."""
    out = {}
    for executor in EXECUTORS:
        proc, doc = run(image, executor, *args, device=device)
        s = doc["stats"]
        out[executor] = (proc.returncode, doc.get("problem"), s["cycles"], s["sleep_cycles"], s["instructions"])
    assert out["native"] == out["unicorn"]
    return out["native"]


def test_svc_with_a_handler_is_taken_on_both_executors(tmp_path):
    rc, problem, *_ = both(mi.svc_handled(tmp_path / "svc.elf"))
    assert (rc, problem) == (0, None)


def test_svc_whose_vector_is_empty_faults_alike(tmp_path):
    answers = {e: run(mi.svc_without_handler(tmp_path / f"{e}.elf"), e) for e in EXECUTORS}
    for proc, doc in answers.values():
        assert proc.returncode == 1 and "write of 4 bytes at unmapped 0x1fffffe0" in doc["problem"]


@pytest.mark.parametrize("name, halfwords, hint, at", [
    ("cpsid-wfi-wfe", (0xB672, 0xBF30, 0xBF20), "WFI", 0x42),
    ("wfi", (0xBF30,), "WFI", 0x40),
    ("wfi-t2", (0xF3AF, 0x8003), "WFI", 0x40),
    ("wfe", (0xBF20,), "WFE", 0x40),
    ("wfe-t2", (0xF3AF, 0x8002), "WFE", 0x40),
    ("wfe-in-a-masked-wait", (0xB672, 0xBF40, 0xBF20, 0xBF20), "WFE", 0x46),
])
def test_a_sleep_with_nothing_coming_stops_the_run_in_one_line_on_both(tmp_path, name, halfwords, hint, at):
    rc, problem, *_ = both(mi.hints(tmp_path / f"{name}.elf", *halfwords))
    assert rc == 1 and problem.startswith(f"{hint} at pc=0x{at:08x} with ") and NEVER in problem
    assert "\n" not in problem


def test_wfi_with_a_line_enabled_but_nothing_started_stops_the_run(tmp_path):
    rc, problem, *_ = both(mi.wfi_line_enabled_nothing_started(tmp_path / "line.elf"))
    assert rc == 1 and problem.startswith("WFI at pc=") and NEVER in problem


@pytest.mark.parametrize("masked", [False, True])
def test_wfi_sleeps_until_systick_and_counts_the_slept_cycles(tmp_path, masked):
    rc, problem, cycles, slept, _ = both(mi.wfi_with_systick(tmp_path / "wfi.elf", masked))
    assert (rc, problem) == (0, None)
    assert 0 < slept < cycles and slept <= 1000          # to the first wrap, 1000 cycles after SysTick started


def test_wfe_sleeps_until_an_interrupt_and_the_event_register_ends_the_next_waits(tmp_path):
    rc, problem, cycles, slept, _ = both(mi.wfe_with_systick(tmp_path / "wfe.elf"))
    assert (rc, problem) == (0, None) and 0 < slept < cycles


@pytest.mark.parametrize("halfwords", [(0xBF40, 0xBF20), (0xF3AF, 0x8004, 0xF3AF, 0x8002), (0xBF10,),
                                       (0xF3AF, 0x8001), (0xBF40, 0xBF40, 0xBF20)])
def test_sev_then_wfe_and_yield_go_on_on_both(tmp_path, halfwords):
    rc, problem, *_ = both(mi.hints(tmp_path / "hint.elf", *halfwords))
    assert (rc, problem) == (0, None)


def _cc26x2(tmp_path, case):
    elf = tmp_path / f"dma{case}.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-ffreestanding", "-nostdlib",
                    "-Wno-unused-function", f"-DCASE={case}", f"-I{FIX}", "-T", str(FIX / "cc26x2_link.ld"),
                    str(FIX / "cc26x2_misuse.c"), "-o", str(elf)], check=True)
    return elf


@pytest.mark.parametrize("case", [1, 2, 3], ids=["over-code-in-ram", "into-flash", "over-the-vector-table"])
def test_the_cc26x2_crypto_dma_follows_the_bus_rules_on_both(tmp_path, case):
    # the image checks itself: the new code runs (1); flash and the vectors keep their bytes and
    # IRQSTAT.DMA_BUS_ERR / DMASTAT.PORT_ERR say so (2, 3)
    rc, problem, *_ = both(_cc26x2(tmp_path, case), device="cc2652")
    assert (rc, problem) == (0, None)


def test_the_crypto_model_does_not_write_flash_and_flags_the_bus_error():
    from cryptobench.targets.mcu.sim.peripherals import cc26x2_crypto as C

    class Memory:
        def __init__(self):
            self.writes = []

        def write(self, addr, data):
            self.writes.append((addr, data))

    m = C.Cc26x2Crypto(0x40024000, 4, Memory())
    m._dma_write(0x1000, b"x" * 16)
    assert m.memory.writes == [] and m._irqstat(0) & C.DMA_BUS_ERR and m._read(C.DMASTAT, 0) & C.PORT_ERR
    m._dma_write(0x20000000, b"y" * 16)
    assert m.memory.writes == [(0x20000000, b"y" * 16)]
    m.write(C.IRQCLR, 4, C.DMA_BUS_ERR, 0)
    m.write(C.DMASWRESET, 4, 1, 0)
    assert not m._irqstat(0) & C.DMA_BUS_ERR and not m._read(C.DMASTAT, 0) & C.PORT_ERR


def test_wake_rules():
    assert sleep.wake_at("wfi", 10, [None, 50, 30], masked=True) == 30      # WFI wakes under PRIMASK
    assert sleep.wake_at("wfe", 10, [None, 50], masked=True) is None        # WFE: only for one taken
    assert sleep.wake_at("wfi", 10, [5], masked=False) == 10                # already pending: at once
    assert sleep.wake_at("wfi", 10, [None], masked=False) is None
    read = lambda addr, n: bytes.fromhex("aff30380")[addr - 0x100:addr - 0x100 + n]   # noqa: E731
    assert sleep.hint_before(read, 0x104) == ("wfi", 0x100)


def test_the_scans_merge_functions_and_find_sev_and_cpsie():
    assert codescan.merged([(0, 4), (2, 4), (10, 2), (6, 0)]) == [(0, 6), (10, 12)]
    raw = codescan.raw_sites([(0x100, bytes.fromhex("40bf62b6aff30480"))])
    assert raw.sev == [0x100, 0x104] and raw.unmasking == [0x102]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_profile_near_the_symbol_cap_loads_and_attributes_on_both(tmp_path, executor):
    image = mi.many_symbols(tmp_path / "many.elf", 200_000)
    proc, doc = run(image, executor, "--profile")
    assert proc.returncode == 0 and doc.get("problem") is None
    assert [r["function"] for r in doc["profile"]] == ["f0"]

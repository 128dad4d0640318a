"""`cryptobench sim run` on images from anyone (issue 30): malformed and hostile ELFs are refused
with one line, runs stay bounded in memory, unmapped accesses fault on both executors alike, and
--timeout / --max-instructions end every run. The images are written byte by byte by
cryptobench.devtools.hostile_images (no compiler needed)."""
import hashlib
import json
import time

import pytest

from conftest import cli
from cryptobench.devtools import hostile_images as hi

REFUSED = {name: case for name, case in hi.CASES.items() if case[2] == 2}
FAULTS = {name: case for name, case in hi.CASES.items() if case[2] == 1 and name != "semihosting_flood"}
HANG_GUARD_S = 600          # subprocess timeout: only so that a regression fails instead of hanging


def sim_run(image, *args, executor="native"):
    proc = cli("sim", "run", str(image), "--device", hi.DEVICE, *args, env={"CRYPTOBENCH_SIM_EXECUTOR": executor},
               timeout=HANG_GUARD_S)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def sim_json(image, *args, executor="native"):
    proc = sim_run(image, *args, "--json", "-", executor=executor)
    return proc, json.loads(proc.stdout)


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_malformed_or_hostile_image_is_refused_with_one_line(tmp_path, name):
    writer, args, code, fragment = REFUSED[name]
    image = writer(tmp_path / f"{name}.elf")
    before = hashlib.sha256(image.read_bytes()).hexdigest() if image.is_file() and image.stat().st_size < 1 << 20 \
        else None
    proc = sim_run(image, *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("cryptobench: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert fragment in proc.stderr and str(image) in proc.stderr
    if before is not None:                           # the input is never written
        assert hashlib.sha256(image.read_bytes()).hexdigest() == before


@pytest.mark.e2e
@pytest.mark.parametrize("executor", ["native", "unicorn"])
@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_hostile_run_ends_with_the_same_problem_on_both_executors(tmp_path, name, executor):
    writer, args, code, fragment = FAULTS[name]
    proc, doc = sim_json(writer(tmp_path / f"{name}.elf"), *args, executor=executor)
    assert proc.returncode == 1 and fragment in doc["problem"] and doc["stats"]["executor"] == executor
    assert doc["exit_code"] is None           # SYS_EXIT after the fault (wild_read) is never reached
    text = sim_run(writer(tmp_path / f"again-{name}.elf"), *args, executor=executor)
    assert text.returncode == 1 and fragment in text.stdout and "end: " in text.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wild_read", "runaway_stack", "page_write_sweep", "peripheral_sweep",
                                  "systick_bad_stack", "semihosting_bad_pointer", "sys_write_4gb"])
def test_unmapped_accesses_agree_between_executors(tmp_path, name):
    """A wild read, a runaway stack, a store per page, an exception frame or a semihosting
    pointer outside the map: the same fault, instructions, cycles and exceptions on both."""
    writer, _, _, fragment = hi.CASES[name]
    image = writer(tmp_path / f"{name}.elf")
    native, unicorn = (sim_json(image, executor=ex)[1] for ex in ("native", "unicorn"))
    assert fragment in native["problem"] and fragment in unicorn["problem"]
    for key in ("total", "systick_exceptions", "semihosting_calls", "exit_code"):
        assert native[key] == unicorn[key], key
    if name != "systick_bad_stack":          # Unicorn's line says the fault was in the exception entry
        assert native["problem"] == unicorn["problem"]


@pytest.mark.e2e
def test_a_semihosting_flood_keeps_the_first_and_last_of_everything(tmp_path):
    """150,000 SYS_WRITEC calls (the instruction limit makes the run the same on any machine):
    the console keeps 64 KiB from each end and says how much it dropped, the call log and the
    segments keep their first and last entries, and the rest is counted and summed."""
    image = hi.semihosting_flood(tmp_path / "flood.elf")
    proc, doc = sim_json(image, "--max-instructions", "600000", "--timeout", "600")
    calls = doc["semihosting_calls_total"]
    assert doc["instruction_limit_reached"] and 149_000 < calls <= 150_001
    assert len(doc["semihosting_calls"]) == 2000 and doc["console"]["characters"] == calls
    assert doc["console"]["characters_not_shown"] == calls - 2 * 65536
    gap = doc["segments_not_listed"]
    assert len(doc["segments"]) == 1000 and gap["count"] == calls - 1 - 1000 and gap["after"] == 500
    assert gap["min_cycles"] == gap["max_cycles"] and gap["cycles"] == gap["count"] * gap["min_cycles"]
    assert f"[cryptobench: {calls - 2 * 65536} characters of console output not shown" in proc.stderr
    assert proc.stderr.count("A") == 2 * 65536
    assert any("semihosting calls:" in n and "the first 1000 and the last 1000" in n for n in doc["notes"])
    table = sim_run(image, "--max-instructions", "600000", "--timeout", "600")
    assert f"... {gap['count']} segments not listed (in all)" in table.stdout


@pytest.mark.slow
def test_the_flood_times_out_cleanly(tmp_path):
    proc, doc = sim_json(hi.semihosting_flood(tmp_path / "flood.elf"), "--timeout", "1")
    assert proc.returncode == 1 and doc["timed_out"] and not doc["problem"]
    assert len(doc["semihosting_calls"]) <= 2000 and len(doc["segments"]) <= 1000


@pytest.mark.parametrize("executor", ["native", "unicorn"])
def test_the_instruction_limit_stops_an_endless_loop_at_the_same_count(tmp_path, executor):
    proc, doc = sim_json(hi.endless_loop(tmp_path / "loop.elf"), "--max-instructions", "1e6", executor=executor)
    assert proc.returncode == 1 and doc["instruction_limit_reached"] and doc["max_instructions"] == 1_000_000
    assert doc["total"]["instructions"] == 1_000_000
    assert doc["problem"] == ("stopped at the instruction limit: 1000000 instructions executed "
                              "(--max-instructions 1000000)")


def test_console_escapes_from_the_image_reach_the_terminal_escaped(tmp_path):
    proc = sim_run(hi.console_escapes(tmp_path / "esc.elf"))
    assert proc.returncode == 0 and "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert proc.stderr == "\\x1b]0;pwned\\x07\\x1b[2Jhello\n"          # CR LF read as a newline


def test_the_timeout_covers_loading_the_image(tmp_path):
    proc = sim_run(hi.endless_loop(tmp_path / "loop.elf"), "--timeout", "0.000001")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "--timeout 1e-06 s ran out while loading the image" in proc.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("args, message", [
    (["--timeout", "nan"], "--timeout nan: expected a number of seconds greater than 0 and at most 86400"),
    (["--timeout", "inf"], "--timeout inf: expected a number of seconds"),
    (["--timeout", "-1"], "--timeout -1: expected"),
    (["--timeout", "0"], "--timeout 0: expected"),
    (["--timeout", "1e9"], "at most 86400"),
    (["--max-instructions", "0"], "--max-instructions 0: expected a whole number of instructions from 1 to"),
    (["--max-instructions", "-5"], "--max-instructions -5: expected"),
    (["--max-instructions", "1.5"], "--max-instructions 1.5: expected"),
    (["--max-instructions", "lots"], "--max-instructions lots: expected"),
    (["--max-instructions", "1e30"], "--max-instructions 1e30: expected"),
    (["--device", "ideal-m3:ws=4294967296"], "ws '4294967296' is out of range; expected a whole number of flash wait "
                                             "states from 0 to 15"),
    (["--device", "ideal-m3:ws=-1"], "ws '-1' is not a whole number of wait states; expected 0 to 15"),
    (["--device", "ideal-m3:clock=5000MHz"], "clock '5000MHz' is out of range; expected 1 Hz to 1000 MHz"),
    (["--device", "ideal-m3:clock=99999999999999999999999"], "is out of range"),
    (["--device", "ideal-m3:clock=0"], "clock '0' must be a positive whole number of Hz"),
    (["--device", "ideal-m3:clock=-8MHz"], "clock '-8MHz' is not a frequency"),
    (["--marker", "0xe000e010:0x1"], "--marker: 0xe000e010 lies in the system region"),
])
def test_bad_options_are_one_line_naming_the_option_and_range(tmp_path, args, message):
    image = hi.endless_loop(tmp_path / "loop.elf")
    device = [] if "--device" in args else ["--device", hi.DEVICE]
    proc = cli("sim", "run", str(image), *device, *args, timeout=HANG_GUARD_S)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr


def test_a_fifo_as_the_image_does_not_block(tmp_path):
    """Looked at before it is opened: the command returns although nobody writes to the FIFO
    (the subprocess timeout is only a hang guard)."""
    proc = sim_run(hi.fifo(tmp_path / "image.elf"))
    assert proc.returncode == 2 and "a FIFO, not an image file" in proc.stderr


def test_a_device_file_as_the_image_is_refused():
    proc = sim_run("/dev/zero")
    assert proc.returncode == 2 and "/dev/zero: a device, not an image file" in proc.stderr


# --- the pieces, one at a time ------------------------------------------------------------------
def test_the_console_log_keeps_head_and_tail_in_order():
    from cryptobench.targets.mcu.sim.boundedlog import ConsoleLog
    log = ConsoleLog(head=10, tail=6)
    for i in range(1000):
        log.append("stdout" if i % 3 else "stderr", str(i % 10))
    kept = log.chunks()
    text = "".join(t for s, t in kept if s != "gap")
    assert text == "0123456789" + "".join(str(i % 10) for i in range(994, 1000))
    assert ("gap", "984 characters") in kept and log.chars == 1000 and log.dropped == 984
    assert sum(len(t) for s, t in log.last) == 6 and len(log.last) <= 6


def test_a_console_write_larger_than_the_log_is_cut_not_kept():
    from cryptobench.targets.mcu.sim.boundedlog import ConsoleLog
    log = ConsoleLog(head=4, tail=4)
    log.append("stdout", "abcdefghijklmnop")
    assert [t for _, t in log.chunks()] == ["abcd", "8 characters", "mnop"]


def test_the_segment_log_summarises_what_it_drops():
    from cryptobench.targets.mcu.sim.boundedlog import SegmentLog
    log = SegmentLog(2, 3)
    for i in range(100):
        log.append({"label": str(i), "cycles": i, "instructions": 2 * i})
    assert [s["label"] for s in log] == ["0", "1", "97", "98", "99"]
    assert (log.summary.count, log.summary.cycles, log.summary.instructions) == (95, sum(range(2, 97)),
                                                                                2 * sum(range(2, 97)))
    assert (log.summary.min_cycles, log.summary.max_cycles, log.count) == (2, 96, 100)


def test_plain_memory_is_bounded_and_handles_a_store_across_pages():
    from cryptobench.targets.mcu.sim.plainmemory import PlainMemory, PlainMemoryFull
    mem = PlainMemory(max_pages=2)
    mem.write(0x40000FFE, 4, 0x11223344)                  # straddles two pages
    assert mem.read(0x40000FFE, 4) == 0x11223344 and len(mem.pages) == 2
    assert all(len(p) == 4096 for p in mem.pages.values())
    with pytest.raises(PlainMemoryFull, match="more than 2 distinct 4 KiB pages"):
        mem.write(0x40005000, 4, 1)
    assert mem.read(0x50000000, 4) == 0                    # reading allocates nothing
    assert len(mem.pages) == 2


def test_semihosting_refuses_a_length_before_reading_it():
    from cryptobench.targets.mcu.sim.semihosting import SemihostingError, serve

    class Memory:
        words = {0: 1, 4: 0x100, 8: 0xFFFFFFF0}

        def read32(self, addr):
            return self.words[addr]

        def read(self, addr, n):
            raise AssertionError(f"read {n} bytes")

    with pytest.raises(SemihostingError, match="SYS_WRITE .* of 4294967280 bytes at 0x00000100: more than the 1 MiB"):
        serve(0x05, 0, Memory(), 0, 48_000_000)


def test_the_native_executors_read_checks_the_range_before_allocating():
    from cryptobench.targets.mcu.sim.binding import load_library
    from cryptobench.targets.mcu.sim.native import Cpu
    cpu = Cpu(load_library(), "cortex-m3", (0, 0x1000), (0x20000000, 0x1000))
    try:
        with pytest.raises(ValueError, match="are not in flash or RAM"):
            cpu.read(0x20000000, 0xFFFFFFF0)
        assert cpu.read(0x20000FFC, 4) == bytes(4)
    finally:
        cpu.close()


def test_the_deadline_interrupts_a_step_but_not_a_run():
    from cryptobench.targets.mcu.sim.deadline import CommandTimeout, Deadline
    d = Deadline(0.2)
    with pytest.raises(CommandTimeout) as exc:
        with d.guard("loading the image"):
            time.sleep(30)
    assert exc.value.what == "loading the image" and d.run_budget() == 0.0
    with pytest.raises(CommandTimeout):                  # past the deadline: refused at once
        with d.guard("writing the result"):
            pass
    with d.guard("writing the result", grace=30):
        pass


def test_the_loader_reads_no_more_than_the_limits_allow(tmp_path, monkeypatch):
    """Limits lowered for the test: a symbol table and a section count above them are refused."""
    from cryptobench.core.errors import UsageError
    from cryptobench.targets.mcu.sim import limits
    from cryptobench.targets.mcu.sim.image import load_image
    image = hi.symtab_entsize_zero(tmp_path / "s.elf")
    monkeypatch.setattr(limits, "MAX_SECTIONS", 3)
    with pytest.raises(UsageError, match="the ELF has 4 sections; at most 3 are read"):
        load_image(image, (0, 0x100000), (0x20000000, 0x40000))


def test_the_watched_call_log_keeps_its_first_events_and_counts_the_rest():
    """cbsim's log of a watched function's entries and returns stops growing at 2^17 events: an
    image calling the function in a tight loop costs the host bounded memory."""
    import ctypes
    from cryptobench.targets.mcu.sim.binding import MISS_FN, load_library
    lib = load_library()
    lib.cbsim_enter.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]

    def cost(bp):
        bp.contents.cycles = bp.contents.insns = 1
        return 0

    miss = MISS_FN(cost)
    lr = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)(lambda ctx: 0x201)
    sim = lib.cbsim_new(None, miss, 0, 0, 0, 1)
    try:
        lib.cbsim_watch(sim, 0x100)
        for _ in range(70_000):                            # call at 0x100, return to 0x200
            assert lib.cbsim_enter(sim, 0x100, 2, lr, None) == 0
            assert lib.cbsim_enter(sim, 0x200, 2, lr, None) == 0
        assert lib.cbsim_events(sim) == 1 << 17 and lib.cbsim_events_dropped(sim) == 140_000 - (1 << 17)
        lib.cbsim_set_insn_limit(sim, 1)                   # and the instruction limit stops the next block
        assert lib.cbsim_enter(sim, 0x100, 2, lr, None) == 1 and lib.cbsim_limit_hit(sim)
    finally:
        lib.cbsim_free(sim)


# --- a console an image (or a recipe's library inside cryptobench's own firmware) floods ----------------
def test_a_line_longer_than_the_limit_is_cut_and_the_rest_dropped_up_to_its_newline():
    from cryptobench.targets.mcu.firmware.protocol import LineSplitter
    lines = LineSplitter(max_line=10)
    got = lines.feed(b"short\nx" + b"y" * 30) + lines.feed(b"z" * 1000) + lines.feed(b"w\nnext\npart")
    assert got[0] == b"short"
    assert got[1].startswith(b"x" + b"y" * 9) and b"line cut" in got[1]
    assert got[2] == b"next" and len(got) == 3
    assert lines.rest() == b"part" and len(lines.buf) == 4


def test_a_report_that_claims_more_than_any_plan_is_stopped():
    import json as _json
    from cryptobench.targets.mcu.firmware.protocol import MAX_KATS, FirmwareReport
    report = FirmwareReport()
    stopped = [report.feed(_json.dumps({"t": "kat", "op": "sha256", "ok": True})) for _ in range(MAX_KATS + 1)]
    assert stopped[-1] and not any(stopped[:-1])
    assert "more than any plan holds" in report.problem and not report.complete

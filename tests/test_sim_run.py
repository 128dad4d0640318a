"""`cryptobench sim run`: images cryptobench did not build, on the simulator. The images are built
here with arm-none-eabi-gcc directly (tests/fixtures/sim_image: their own start-up code, linker
script and vector tables), never through cryptobench's firmware builder; a missing compiler fails."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, cli

FIX = ROOT / "tests" / "fixtures" / "sim_image"
# core, device, flash (start, size) and RAM (start, size) of the device's board (targets/boards.toml)
CORES = {"cortex-m0": ("stm32f030", (0x08000000, 0x10000), (0x20000000, 0x2000)),
         "cortex-m3": ("ideal-m3", (0x00000000, 0x100000), (0x20000000, 0x40000)),
         "cortex-m4": ("stm32f411", (0x08000000, 0x80000), (0x20000000, 0x18000))}
LONG = 3_000_000           # iterations of work(): 42 to 63 M cycles, more than two SysTick wraps (2^24)


def build(tmp_path, core, name="app", section=".vectors", place="later", offset=0, iters=1000, exit_code=0,
          ram=None, masked=False):
    """The fixture image for `core`: its vector table in output section `section`, placed first
    in flash or later (1 KiB aligned), the image starting `offset` bytes into flash."""
    _, flash, board_ram = CORES[core]
    ram = ram or board_ram
    vec = f"{section} : ALIGN(1024) {{ KEEP(*({section})) }} > FLASH"
    ld = (FIX / "link.ld.in").read_text()
    for key, value in dict(flash=hex(flash[0]), flash_len=hex(flash[1]), ram=hex(ram[0]), ram_len=hex(ram[1]),
                           offset=hex(offset), first=vec if place == "first" else "",
                           later=vec if place != "first" else "").items():
        ld = ld.replace("{" + key + "}", value)
    out = tmp_path / f"{name}-{core}.elf"
    out.with_suffix(".ld").write_text(ld)
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={core}", "-mthumb", "-O2", "-ffreestanding", "-nostdlib",
                    f'-DVEC_SECTION="{section}"', f"-DITERS={iters}", f"-DEXIT_CODE={exit_code}",
                    f"-DHAS_VTOR={int(core != 'cortex-m0')}", f"-DMASKED={int(masked)}", "-T", str(out.with_suffix(".ld")), str(FIX / "app.c"),
                    "-o", str(out), "-lgcc"], check=True)
    return out


def sim_run(image, device, *args, executor=None):
    """The run's JSON document (from --json -), and the process (its stderr: the image's console);
    `executor` sets $CRYPTOBENCH_SIM_EXECUTOR (default: the native executor)."""
    env = {"CRYPTOBENCH_SIM_EXECUTOR": executor} if executor else None
    proc = cli("sim", "run", str(image), "--device", device, "--json", "-", *args, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout) if proc.stdout.startswith("{") else None


def console_values(stderr: str) -> dict:
    """'self 0x…' lines the image printed -> {'self': int}."""
    out = {}
    for line in stderr.splitlines():
        key, _, value = line.rpartition(" ")
        if value.startswith("0x"):
            out[key] = int(value, 16)
    return out


def window(doc, first: str) -> tuple[dict, list]:
    """The semihosting segment from the SYS_WRITE0 printing `first` (its start) to the next call,
    and the counter reads (model cycles) between them."""
    calls = doc["semihosting_calls"]
    (i,) = [n for n, c in enumerate(calls) if c["call"].startswith(f"SYS_WRITE0 '{first}")]
    lo, hi = calls[i]["cycles"], calls[i + 1]["cycles"]
    return doc["segments"][i], [r["cycles"] for r in doc["counter_reads"] if lo < r["cycles"] < hi]


@pytest.mark.e2e
@pytest.mark.parametrize("core", sorted(CORES))
def test_a_foreign_image_boots_copies_its_ram_code_and_times_itself_with_systick(tmp_path, core):
    """Vector table in a section at flash + 1 KiB (not the boot address), a second table VTOR is
    pointed at (M3/M4; the M0 has no VTOR), .data and a RAM function copied from their load
    addresses by the image's own start-up code, and a SysTick_Handler overflow counter (LOAD =
    0xFFFFFF) over more than two wraps: the image's own count, (overflows << 24) + (LOAD - VAL),
    equals the simulator's count between the two VAL reads exactly, and the semihosting window
    around them by the few cycles of the reads and calls only."""
    device, flash, ram = CORES[core]
    proc, doc = sim_run(build(tmp_path, core, iters=LONG), device)
    assert proc.returncode == 0, proc.stderr
    assert doc["provenance"] == "simulated" and doc["exit_code"] == 0 and not doc["timed_out"]
    assert doc["vector_table"] == {"address": flash[0] + 0x400, "found_by": "section .vectors"}
    said = console_values(proc.stderr)
    assert "data ok" in proc.stderr
    assert ram[0] <= said["ramfunc at"] < ram[0] + ram[1]          # it ran from RAM, copied there
    assert said["bad"] == 0, "a SysTick went through the boot table after VTOR moved it"
    assert said["overflows"] >= 2 and doc["systick_exceptions"] == said["overflows"]
    seg, reads = window(doc, "start")
    assert said["self"] > 2 * (1 << 24)
    # exactly: the image's own SysTick count is the simulator's between its two VAL reads
    assert said["self"] == reads[-1] - reads[0]
    # the semihosting cut also holds the reads' tail, the calls and the BKPTs: a few cycles more
    assert 0 < seg["cycles"] - said["self"] < 64
    assert seg["time_s"] == pytest.approx(seg["cycles"] / doc["clock_hz"])
    if core != "cortex-m0":           # DWT CYCCNT, zeroed and read around work(100): the simulator's count
        _, reads = window(doc, "result")
        assert len(reads) == 2 and said["dwt"] == reads[1] - reads[0] > 100
        assert said["dwt from zero"] < 10


@pytest.mark.e2e
def test_the_self_measured_and_the_simulated_window_differ_by_the_same_cycles_short_or_long(tmp_path):
    """Over two SysTick wraps or none, the semihosting cut exceeds the image's own count by the
    same cycles: no wrap is lost or counted twice."""
    diffs = []
    for iters in (1000, LONG):
        proc, doc = sim_run(build(tmp_path, "cortex-m3", name=f"i{iters}", iters=iters), "ideal-m3")
        seg, _ = window(doc, "start")
        diffs.append(seg["cycles"] - console_values(proc.stderr)["self"])
    assert diffs[0] == diffs[1]


@pytest.mark.e2e
def test_a_masked_systick_waits_for_primask_and_pends_once(tmp_path):
    """Two wraps under CPSID I: the exception is taken once, after CPSIE I (one pending bit), so
    the image's own count misses one wrap, as it would on the part."""
    proc, doc = sim_run(build(tmp_path, "cortex-m4", iters=LONG, masked=True), "stm32f411")
    said = console_values(proc.stderr)
    assert proc.returncode == 0 and said["overflows"] == 1 and doc["systick_exceptions"] == 1
    _, reads = window(doc, "start")
    assert said["self"] == reads[-1] - reads[0] - (1 << 24)


@pytest.mark.e2e
def test_markers_cut_function_calls_and_register_edges(tmp_path):
    image = build(tmp_path, "cortex-m4")
    _, fn = sim_run(image, "stm32f411", "--marker", "function:work")
    calls = [s["cycles"] for s in fn["segments"]]
    # work(1000), work(100) (timed with DWT CYCCNT), then work(10) and work(20) in pulse()
    assert [s["label"] for s in fn["segments"]] == [f"work call {n}" for n in (1, 2, 3, 4)]
    calls = calls[2:] + calls[:2]                                 # pulse()'s calls first
    assert 0 < calls[0] < calls[1] < calls[3] < calls[2]
    _, odr = sim_run(image, "stm32f411", "--marker", "0x48000014:0x20")
    _, bsrr = sim_run(image, "stm32f411", "--marker", "set=0x48000018:0x1,clear=0x48000018:0x10000")
    (w1,), (w2,) = odr["segments"], bsrr["segments"]
    assert calls[0] < w1["cycles"] < calls[0] + 40                # around work(10): the call and a store
    assert calls[1] < w2["cycles"] < calls[1] + 40
    assert w1["instructions"] > 0 and odr["marker"]["meaning"] == "while bits 0x20 of 0x48000014 are set"
    proc = cli("sim", "run", str(image), "--device", "stm32f411", "--marker", "function:work")
    assert proc.returncode == 0 and "work call 4" in proc.stdout and "simulated" in proc.stdout
    assert "device condition: 100 MHz" in proc.stdout


def test_exit_code_and_console(tmp_path):
    proc, doc = sim_run(build(tmp_path, "cortex-m0", exit_code=3), "stm32f030")
    assert proc.returncode == 1 and doc["exit_code"] == 3
    assert proc.stderr.startswith("data ok\n")                    # the image's console on stderr
    assert doc["segments"][-1]["label"].endswith("-> SYS_EXIT_EXTENDED (3)")


@pytest.mark.e2e
def test_vector_table_at_the_boot_address_or_given(tmp_path):
    # a section of no known name, first in flash: the lowest load address is the boot address
    proc, doc = sim_run(build(tmp_path, "cortex-m4", name="first", section=".myvec", place="first"), "stm32f411")
    assert proc.returncode == 0 and doc["vector_table"]["address"] == 0x08000000
    assert doc["vector_table"]["found_by"].startswith("the lowest load address")
    # an image 4 KiB into flash with such a section: no table found, until --vector-table names it
    image = build(tmp_path, "cortex-m4", name="offset", section=".myvec", offset=0x1000)
    proc, _ = sim_run(image, "stm32f411")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "no vector table found" in proc.stderr and "--vector-table" in proc.stderr
    vt = [ln for ln in subprocess.run(["arm-none-eabi-objdump", "-h", str(image)], capture_output=True,
                                      text=True, check=True).stdout.splitlines() if ".myvec" in ln][0].split()[3]
    proc, doc = sim_run(image, "stm32f411", "--vector-table", "0x" + vt)
    assert proc.returncode == 0 and doc["vector_table"]["found_by"] == f"--vector-table 0x{int(vt, 16):08x}"


def test_a_range_outside_the_device_memory_is_mapped_with_a_note(tmp_path):
    proc, doc = sim_run(build(tmp_path, "cortex-m3", ram=(0x10000000, 0x8000)), "ideal-m3")
    assert proc.returncode == 0 and "data ok" in proc.stderr
    assert any(n.startswith("0x10000000-") and "outside the device's flash and RAM" in n for n in doc["notes"])
    # the native executor has the board's flash and RAM only: such an image runs on Unicorn, said so
    assert doc["stats"]["executor"] == "unicorn"
    assert any(n.startswith("run on Unicorn, not on the native executor: its ") for n in doc["notes"])


def test_a_range_in_one_of_the_parts_other_memories_is_named(tmp_path):
    # the STM32L476's SRAM2 at 0x10000000 (boards.toml regions; `list targets` shows it): real memory
    # of the part, named as such and timed as RAM, not "outside the device's flash and RAM"
    proc, doc = sim_run(build(tmp_path, "cortex-m4", ram=(0x10000000, 0x8000)), "stm32l476")
    assert proc.returncode == 0 and "data ok" in proc.stderr
    assert any(n.startswith("0x10000000-") and "the part's SRAM2" in n and "timed as RAM" in n for n in doc["notes"])
    assert not any("outside the device's" in n for n in doc["notes"])
    assert any("is in the part's SRAM2, which the native executor does not map" in n for n in doc["notes"])


@pytest.mark.e2e
@pytest.mark.parametrize("core, device, masked", [
    ("cortex-m0", "stm32f030", False), ("cortex-m3", "ideal-m3", False), ("cortex-m4", "stm32f411", False),
    ("cortex-m4", "stm32f411:cache=off", True), ("cortex-m4", "stm32f407", False),
])
def test_the_native_executor_and_unicorn_give_the_same_run(tmp_path, core, device, masked):
    """The same image over SysTick wraps (masked or not), on both executors: the same console,
    cycles, instructions, segments, counter reads and exceptions. Unicorn is the oracle; the native
    executor is the default because it charges flash data wait states without Unicorn's read hook,
    which can leave the IT state set (scripts/unicorn_it_state_repro.py; these images have no IT
    block that loads from flash, so both run them right)."""
    image = build(tmp_path, core, iters=LONG, masked=masked)
    runs = {ex: sim_run(image, device, executor=ex) for ex in ("native", "unicorn")}
    (pn, native), (pu, unicorn) = runs["native"], runs["unicorn"]
    assert pn.returncode == pu.returncode == 0 and pn.stderr == pu.stderr
    assert (native["stats"]["executor"], unicorn["stats"]["executor"]) == ("native", "unicorn"), native["notes"]
    for key in ("total", "segments", "counter_reads", "semihosting_calls", "systick_exceptions", "exit_code"):
        assert native[key] == unicorn[key], key
    assert not any("IT state" in n for n in native["notes"])


@pytest.mark.e2e
def test_a_run_that_does_not_end_stops_at_the_timeout_with_its_cycles(tmp_path):
    proc, doc = sim_run(build(tmp_path, "cortex-m3", iters=0xFFFFFFFF), "ideal-m3", "--timeout", "1")
    assert proc.returncode == 1 and doc["timed_out"] and doc["total"]["cycles"] > 0
    proc = cli("sim", "run", str(build(tmp_path, "cortex-m3", iters=0xFFFFFFFF)), "--device", "ideal-m3",
               "--timeout", "0.5")
    assert "timed out after 0.5 s: the cycles so far" in proc.stdout


@pytest.mark.parametrize("args, message", [
    ([str(ROOT / "tests/fixtures/sim_image/app.c"), "--device", "ideal-m3"], "app.c: not an ELF file"),
    ([sys.executable, "--device", "ideal-m3"], "not ARM; expected a 32-bit ARM"),
    (["IMAGE", "--device", "no-such-part"], "--device: unknown device 'no-such-part'; valid: stm32f030"),
    (["IMAGE", "--device", "ideal-m3", "--marker", "function:nosuch"], "no function nosuch in the symbols of"),
    (["IMAGE", "--device", "ideal-m3", "--marker", "0x48000014"], "is not ADDR:MASK"),
    (["IMAGE", "--device", "ideal-m3", "--vector-table", "nowhere"], "--vector-table nowhere: not an address"),
    (["/no/such.elf", "--device", "ideal-m3"], "cannot read the image"),
])
def test_bad_input_is_one_line_with_exit_code_2(tmp_path, args, message):
    if "IMAGE" in args:
        args = [str(build(tmp_path, "cortex-m3")) if a == "IMAGE" else a for a in args]
    proc = cli("sim", "run", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("cryptobench: error: ") and proc.stderr.count("\n") == 1
    assert message in proc.stderr


def test_unserved_semihosting_is_named():
    from cryptobench.targets.mcu.sim.semihosting import SemihostingError, serve
    with pytest.raises(SemihostingError, match=r"semihosting operation 0x07 \(SYS_READC\) is not served"):
        serve(0x07, 0, _Mem(), 0, 48_000_000)
    with pytest.raises(SemihostingError, match=r"semihosting operation 0x06 \(SYS_READ\) is not served"):
        serve(0x06, 0, _Mem(), 0, 48_000_000)              # a read of stdin (handle 0)


def test_systick_reload_countflag_and_wraps():
    """ARMv7-M ARM B3.3: from CVR = 0 the counter reloads RVR on the next cycle and reaches 0 every
    RVR + 1 cycles; COUNTFLAG reads 1 once per transition to 0; writing CVR restarts it."""
    from cryptobench.targets.mcu.sim.systick import COUNTFLAG, SYST_CSR, SYST_CVR, SYST_RVR, SysTick
    st = SysTick()
    st.write(SYST_RVR, 99, 0)
    st.write(SYST_CVR, 123, 0)
    st.write(SYST_CSR, 7, 1000)
    assert [st.read(SYST_CVR, t) for t in (1000, 1001, 1099, 1100, 1101, 1200)] == [0, 99, 1, 0, 99, 0]
    assert st.next_wrap() == 1100
    assert st.read(SYST_CSR, 1099) & COUNTFLAG == 0
    assert st.read(SYST_CSR, 1100) & COUNTFLAG and not st.read(SYST_CSR, 1150) & COUNTFLAG
    st.take(1101)
    assert st.next_wrap() == 1200
    st.write(SYST_CSR, 0, 1150)                                   # disabled: the counter holds
    assert st.read(SYST_CVR, 5000) == 50 and st.next_wrap() is None


class _Mem:
    """Target memory for the semihosting calls: a bytearray at address 0."""

    def __init__(self, size=256):
        self.b = bytearray(size)

    def read(self, addr, n):
        return bytes(self.b[addr:addr + n])

    def read32(self, addr):
        return int.from_bytes(self.b[addr:addr + 4], "little")

    def write32(self, addr, value):
        self.b[addr:addr + 4] = value.to_bytes(4, "little")


class _EndOfMemory(_Mem):
    """Memory that ends at its size, as the last mapped page of RAM does: reading past it faults."""

    def read(self, addr, n):
        if addr + n > len(self.b):
            raise MemoryError(f"read of {n} bytes at {addr} runs past the end of memory")
        return super().read(addr, n)


def test_a_string_at_the_top_of_ram_is_read_without_running_past_it():
    # SYS_WRITE0 of a string on the stack, 10 bytes below the end of RAM (found on a PQClean image)
    from cryptobench.targets.mcu.sim.semihosting import serve
    mem = _EndOfMemory(256)
    mem.b[246:256] = b"top of ra\0"
    assert serve(0x04, 246, mem, 0, 48_000_000).text == "top of ra"


def test_semihosting_calls_from_the_models_cycles():
    from cryptobench.targets.mcu.sim.semihosting import APPLICATION_EXIT, serve
    mem = _Mem()
    mem.b[100:106] = b"hello\0"
    mem.b[120:123] = b":tt"
    assert serve(0x04, 100, mem, 0, 48_000_000).text == "hello"                     # SYS_WRITE0
    assert serve(0x03, 100, mem, 0, 48_000_000).text == "h"                         # SYS_WRITEC
    for i, v in enumerate((2, 100, 4)):                                            # SYS_WRITE [fd, buf, len]
        mem.write32(8 + 4 * i, v)
    call = serve(0x05, 8, mem, 0, 48_000_000)
    assert (call.text, call.stream, call.r0) == ("hell", "stderr", 0)
    for i, v in enumerate((120, 4, 3)):                                            # SYS_OPEN ":tt", "w"
        mem.write32(32 + 4 * i, v)
    assert serve(0x01, 32, mem, 0, 48_000_000).r0 == 1
    assert serve(0x10, 0, mem, 96_000_000, 48_000_000).r0 == 200                    # SYS_CLOCK: centiseconds
    assert serve(0x31, 0, mem, 0, 48_000_000).r0 == 48_000_000                      # SYS_TICKFREQ
    serve(0x30, 48, mem, (5 << 32) + 7, 48_000_000)                                # SYS_ELAPSED: 64-bit ticks
    assert (mem.read32(48), mem.read32(52)) == (7, 5)
    assert serve(0x18, APPLICATION_EXIT, mem, 0, 1).exit_code == 0                 # SYS_EXIT
    assert serve(0x18, 0x20023, mem, 0, 1).exit_code == 1
    mem.write32(64, APPLICATION_EXIT)
    mem.write32(68, 7)
    assert serve(0x20, 64, mem, 0, 1).exit_code == 7                               # SYS_EXIT_EXTENDED


def test_a_newlib_image_with_the_toolchains_own_startup_and_rdimon(tmp_path):
    """printf and exit code through newlib's semihosting (crt0, rdimon: SYS_HEAPINFO, SYS_OPEN ':tt'
    and ':semihosting-features', SYS_WRITE, SYS_EXIT_EXTENDED), on an image linked at 0."""
    image = tmp_path / "newlib.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "--specs=rdimon.specs",
                    str(FIX / "newlib.c"), "-o", str(image), "-Wl,--section-start=.isr_vector=0x0",
                    "-Wl,--defsym=__stack=0x20018000"], check=True)
    proc, doc = sim_run(image, "ideal-m4")
    assert proc.returncode == 1 and doc["exit_code"] == 5 and not doc["problem"]
    assert proc.stderr == "hello 42\nto stderr\n"
    calls = [c["call"] for c in doc["semihosting_calls"]]
    assert "SYS_WRITE 'hello 42'" in calls and calls[-1] == "SYS_EXIT_EXTENDED (5)"


def test_marker_edges_from_word_and_byte_stores():
    from cryptobench.targets.mcu.sim.markers import Recorder, cut, parse
    rec = Recorder(parse("0x48000014:0x20"), [], [])
    rec.write(0x48000014, 0x20, 4, 100, 10)           # up
    rec.write(0x48000015, 0x00, 1, 110, 11)           # another byte: no edge
    rec.write(0x48000014, 0x21, 1, 120, 12)           # still up
    rec.write(0x48000014, 0x01, 1, 150, 15)           # down
    assert cut(rec.marker, rec.edges, [], []) == [{"label": "window 1", "cycles": 50, "instructions": 5}]
    pair = Recorder(parse("set=0x48000018:0x1,clear=0x48000018:0x10000"), [], [])
    pair.write(0x48000018, 0x1, 4, 10, 1)
    pair.write(0x4800001A, 0x1, 2, 40, 4)             # BSRR's upper half by a halfword store: clear
    assert cut(pair.marker, pair.edges, [], []) == [{"label": "window 1", "cycles": 30, "instructions": 3}]


IT_LOAD = """
    .syntax unified
    .thumb
    .section .isr_vector, "a"
    .word 0x20001000
    .word reset
    .text
    .thumb_func
reset:
    ldr     r1, =table          @ a constant in flash
    ldr     r4, =0x20000000
    movs    r2, #1
    cmp     r2, #0              @ NE holds
    itt     ne
    ldrbne  r3, [r1], #1        @ a flash data read (wait states charged) inside the IT block
    strbne  r3, [r4], #1
    movs    r5, #0              @ after the block: sets Z
    beq     good                @ must be taken
    movs    r2, #1
    b       leave
good:
    movs    r2, #0
leave:
    ldr     r1, =0x20000100     @ SYS_EXIT_EXTENDED's block: ApplicationExit, exit code r2
    ldr     r0, =0x20026
    str     r0, [r1]
    str     r2, [r1, #4]
    movs    r0, #0x20
    bkpt    0xab
    b       .
    .ltorg
table:
    .byte   0x42
"""


def test_an_it_block_that_loads_from_flash_runs_right_with_wait_states(tmp_path):
    """scripts/unicorn_it_state_repro.py as a foreign image on the stm32f411 (3 wait states):
    under Unicorn the hook that charges flash data reads leaves the IT state set after such a
    block; `sim run` runs it on the native executor, which takes the branch and exits 0."""
    src = tmp_path / "it.S"
    src.write_text(IT_LOAD)
    elf = tmp_path / "it.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,--entry=reset",
                    "-Wl,--section-start=.isr_vector=0x08000000", "-Wl,-Ttext=0x08000400", str(src), "-o", str(elf)],
                   check=True)
    proc, doc = sim_run(elf, "stm32f411")
    assert doc["stats"]["executor"] == "native" and not any("IT state" in n for n in doc["notes"])
    assert proc.returncode == 0 and doc["exit_code"] == 0, (proc.stdout, proc.stderr)

"""The device profiles of the boards people run (issue 33): each loads and validates, states its
condition with sources, accepts its part's maximum clock with the reference manual's wait states
there and refuses one above it, is listed with its memory map by `cryptobench list targets`, and
runs a small image linked for that map on the simulator."""
import subprocess

import pytest

from conftest import ROOT, cli
from test_sim import needs_sim
from test_sim_run import sim_run
from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.boards import BOARDS, BoardsFileError, _regions, memory_map
from cryptobench.targets.mcu.sim.condition import ws_for
from cryptobench.targets.mcu.sim.devices import DEVICES, get_device

# name: (core, maximum clock in MHz, wait states there, flash width in bytes, the document the table
# comes from). The wait states at the maximum are the manuals' own rows, written here independently
# of devices.toml: ST RM0008/PM0075 (F1), RM0390 (F446, 2.7-3.6 V), RM0351 (L476/L4A6, range 1),
# RM0432 (L4R5, range 1 boost), RM0433 (H743/H753, VOS0, AXI at 240 MHz), RM0456 (U585, range 1),
# Renesas RA6M4 user's manual FLWT; parts with no table (cache assumed to hide the flash, or TCM) 0.
NEW = {
    "stm32f103": ("cortex-m3", 72, 2, 8, "PM0075"),
    "stm32f446": ("cortex-m4", 180, 5, 16, "RM0390"),
    "stm32l476": ("cortex-m4", 80, 4, 8, "RM0351"),
    "stm32l4a6": ("cortex-m4", 80, 4, 8, "RM0351"),
    "stm32l4r5": ("cortex-m4", 120, 5, 8, "RM0432"),
    "stm32h743": ("cortex-m7", 480, 4, 32, "RM0433"),
    "stm32h753": ("cortex-m7", 480, 4, 32, "RM0433"),
    "stm32u585": ("cortex-m33", 160, 4, 16, "RM0456"),
    "nrf5340": ("cortex-m33", 128, 0, 4, None),
    "ra6m4": ("cortex-m33", 200, 3, 8, "FLWT"),
    "imxrt1170": ("cortex-m7", 1000, 0, 8, None),
    "rp2350": ("cortex-m33", 150, 0, 4, None),
}
# the memory map each new profile is linked for: flash (base, size), RAM (base, size)
MAPS = {
    "stm32f103": ((0x08000000, 128 << 10), (0x20000000, 20 << 10)),
    "stm32f446": ((0x08000000, 512 << 10), (0x20000000, 128 << 10)),
    "stm32l476": ((0x08000000, 1 << 20), (0x20000000, 128 << 10)),
    "stm32l4a6": ((0x08000000, 1 << 20), (0x20000000, 320 << 10)),
    "stm32l4r5": ((0x08000000, 2 << 20), (0x20000000, 640 << 10)),
    "stm32h743": ((0x08000000, 2 << 20), (0x20000000, 128 << 10)),
    "stm32h753": ((0x08000000, 2 << 20), (0x20000000, 128 << 10)),
    "stm32u585": ((0x08000000, 2 << 20), (0x20000000, 768 << 10)),
    "nrf5340": ((0x00000000, 1 << 20), (0x20000000, 512 << 10)),
    "ra6m4": ((0x00000000, 1 << 20), (0x20000000, 256 << 10)),
    "imxrt1170": ((0x00000000, 256 << 10), (0x20000000, 256 << 10)),
    "rp2350": ((0x10000000, 4 << 20), (0x20000000, 520 << 10)),
}
# the existing profiles' maxima, accepted likewise (the STM32F4 family and the others)
OLD_MAX = {"stm32f030": 48, "stm32f091": 48, "stm32f411": 100, "stm32f407": 168, "stm32f207": 120,
           "stm32f746": 216, "cc2652": 48, "nrf52840": 64, "imxrt1060": 600}
REQUIRED = ("title", "core", "board", "clock_hz", "flash_width", "source", "energy_source", "notes", "clock_source",
            "max_clock_hz", "max_clock_source", "prefetch_source", "accelerator", "accelerator_source")


@pytest.mark.parametrize("name", sorted(NEW))
def test_every_new_profile_loads_with_its_figures_and_sources(name):
    core, max_mhz, ws_max, width, doc = NEW[name]
    d = DEVICES[name]
    assert d.core == core and d.board in BOARDS and d.flash_width == width
    for key in REQUIRED:
        assert getattr(d, key), (name, key)
    assert d.max_clock_hz == max_mhz * 10**6 and d.clock_hz <= d.max_clock_hz
    if doc:
        assert d.wait_states and doc in d.wait_states_source and doc in d.source
        assert ws_for(d.wait_states, d.max_clock_hz) == ws_max
        assert d.wait_states == sorted(d.wait_states) and d.wait_states[-1][0] == d.max_clock_hz
    else:
        assert not d.wait_states and d.flash_ws == 0
    if d.flash_cache:
        fc = d.flash_cache
        assert fc["source"] and fc["icache_lines"] % max(1, fc["icache_ways"]) == 0
    assert d.energy_source.startswith("unknown") and d.active_current_a == 0
    resolved = get_device(name, core)
    assert (resolved.clock_hz, resolved.flash_ws) == (d.clock_hz, d.flash_ws)
    for key in ("clock_hz", "clock_source", "flash_ws", "prefetch", "accelerator"):
        assert resolved.condition[key]["source"], key


@pytest.mark.parametrize("name", sorted(NEW) + sorted(OLD_MAX))
def test_the_maximum_clock_is_accepted_and_one_above_it_refused(name):
    d = DEVICES[name]
    max_mhz = NEW[name][1] if name in NEW else OLD_MAX[name]
    at_max = get_device(f"{name}:clock={max_mhz}MHz", d.core)
    assert at_max.clock_hz == max_mhz * 10**6
    if name in NEW:
        assert at_max.flash_ws == NEW[name][2]
        assert "contradicts" not in at_max.condition["flash_ws"]
    if max_mhz * 10**6 < 1_000_000_000:          # above 1 GHz every profile refuses (condition.MAX_CLOCK_HZ)
        spec = f"{name}:clock={max_mhz + 1}MHz"
        with pytest.raises(UsageError) as exc:
            get_device(spec, d.core)
        msg = str(exc.value)
        assert msg.startswith(f"--device {spec}: {max_mhz + 1} MHz is above the {name}'s maximum of {max_mhz} MHz")
        assert "\n" not in msg


def test_the_family_maxima_named_in_the_issue():
    assert get_device("stm32f407:clock=168MHz", "cortex-m4").flash_ws == 5      # RM0090 Table 10
    assert get_device("stm32f446:clock=180MHz", "cortex-m4").flash_ws == 5      # RM0390
    assert get_device("stm32h743:clock=480MHz", "cortex-m7").flash_ws == 4      # RM0433, VOS0
    assert get_device("stm32f411:clock=100MHz", "cortex-m4").flash_ws == 3      # RM0383
    assert get_device("stm32l476:clock=24MHz", "cortex-m4").flash_ws == 1       # RM0351 range 1
    assert get_device("ra6m4:clock=120MHz", "cortex-m33").flash_ws == 2         # FLWT
    reset = get_device("stm32l476:clock=reset", "cortex-m4")                    # MSI 4 MHz, caches on at reset
    assert (reset.clock_hz, reset.flash_ws, reset.prefetch) == (4_000_000, 0, False)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_each_new_profile_is_linked_for_its_parts_map(name):
    board = BOARDS[DEVICES[name].board]
    assert (board.flash, board.ram) == MAPS[name]
    assert DEVICES[name].core.removeprefix("cortex-") in {c.rstrip("f") for c in board.cpus}


def test_the_f411_has_its_own_128_kib_ram():
    board = BOARDS[DEVICES["stm32f411"].board]
    assert board.name == "nucleo-f411re" and board.ram == (0x20000000, 128 << 10)
    assert board.flash == (0x08000000, 512 << 10)
    assert board.console_uart == BOARDS["nucleo-f401re"].console_uart     # the same USART2 console
    assert BOARDS["nucleo-f401re"].ram == (0x20000000, 96 << 10)            # the F401's own map, unchanged


def test_the_h743_lists_its_tcm_and_sram():
    text = memory_map(BOARDS["sim-stm32h743zi"])
    assert text.startswith("flash 0x08000000 2 MiB · RAM 0x20000000 128 KiB · ITCM 0x00000000 64 KiB · AXI SRAM "
                           "0x24000000 512 KiB")


def test_a_bad_region_is_one_line():
    with pytest.raises(BoardsFileError) as exc:
        _regions([{"name": "ITCM", "base": 0}], "boards.toml:1: [board.x]")
    assert str(exc.value).startswith("boards.toml:1: [board.x]: regions: bad entry") and "\n" not in str(exc.value)


def test_list_targets_prints_each_profiles_memory_map():
    proc = cli("list", "targets")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for name, (flash, ram) in MAPS.items():
        (i,) = [n for n, line in enumerate(lines) if line.strip().startswith(f"{name}: ")]
        memory = lines[i + 1].strip()
        assert memory.startswith(f"memory ({DEVICES[name].board}): flash {flash[0]:#010x} "), memory
        assert f"RAM {ram[0]:#010x} " in memory
        assert f"clock= up to {NEW[name][1]:g} MHz" in lines[i]
    assert any("memory (nucleo-f411re): flash 0x08000000 512 KiB · RAM 0x20000000 128 KiB" in ln for ln in lines)


def build(tmp_path, name):
    """The sim_image fixture (tests/fixtures/sim_image) linked for the profile's memory map."""
    (flash, flash_len), (ram, ram_len) = MAPS[name]
    core = NEW[name][0]
    vec = ".vectors : ALIGN(1024) { KEEP(*(.vectors)) } > FLASH"
    ld = (ROOT / "tests" / "fixtures" / "sim_image" / "link.ld.in").read_text()
    for key, value in dict(flash=hex(flash), flash_len=hex(flash_len), ram=hex(ram), ram_len=hex(ram_len),
                           offset="0x0", first=vec, later="").items():
        ld = ld.replace("{" + key + "}", value)
    out = tmp_path / f"{name}.elf"
    out.with_suffix(".ld").write_text(ld)
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={core}", "-mthumb", "-mfloat-abi=soft", "-O2", "-ffreestanding",
                    "-nostdlib", "-DITERS=2000", "-DHAS_VTOR=1", "-T", str(out.with_suffix(".ld")),
                    str(ROOT / "tests" / "fixtures" / "sim_image" / "app.c"), "-o", str(out), "-lgcc"], check=True)
    return out


@pytest.mark.e2e
@needs_sim
@pytest.mark.parametrize("name", sorted(NEW))
def test_a_small_image_runs_on_each_new_profile(tmp_path, name):
    """The same image (start-up copy, VTOR moved, SysTick over the timed work) linked for each part's
    map runs to its exit on the native executor, at the profile's clock and wait states."""
    proc, doc = sim_run(build(tmp_path, name), name)
    assert proc.returncode == 0, proc.stderr
    assert "data ok" in proc.stderr and doc["exit_code"] == 0
    assert doc["stats"]["executor"] == "native", doc["notes"]
    assert doc["total"]["cycles"] > doc["total"]["instructions"] > 0

"""Device profiles that state their condition: --device NAME[:clock=…,ws=…,prefetch=…], the wait
states from the part's reference-manual table, the resolved condition stored with the run."""
import json

import pytest

from conftest import cli
from test_sim import needs_sim
from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.sim.condition import describe, parse_hz, split_spec, ws_for
from cryptobench.targets.mcu.sim.devices import DEVICES, get_device


def test_specs_parse():
    assert split_spec("stm32f030") == ("stm32f030", {})
    assert split_spec("stm32f030:clock=8MHz") == ("stm32f030", {"clock": "8MHz"})
    assert split_spec("stm32f030:clock=30MHz, ws=0,prefetch=off") == (
        "stm32f030", {"clock": "30MHz", "ws": "0", "prefetch": "off"})
    assert [parse_hz(t, "x") for t in ("8MHz", "8 mhz", "800kHz", "32768Hz", "48000000", "1.5MHz")] == \
        [8_000_000, 8_000_000, 800_000, 32768, 48_000_000, 1_500_000]


@pytest.mark.parametrize("spec, core, want", [
    ("stm32f030:clck=8MHz", "cortex-m0", "unknown key 'clck'; valid: clock, ws, prefetch"),
    ("stm32f030:clock", "cortex-m0", "'clock' is not key=value"),
    ("stm32f030:clock=fast", "cortex-m0", "clock 'fast' is not a frequency"),
    ("stm32f030:clock=8GHz", "cortex-m0", "clock '8GHz' is out of range; expected 1 Hz to 1000 MHz"),
    ("stm32f030:clock=8W", "cortex-m0", "clock '8W' is not a frequency"),
    ("stm32f030:clock=49MHz", "cortex-m0", "49 MHz is above the stm32f030's maximum of 48 MHz"),
    ("stm32f411:clock=101MHz", "cortex-m4", "101 MHz is above the stm32f411's maximum of 100 MHz"),
    ("stm32f030:ws=two", "cortex-m0", "ws 'two' is not a whole number"),
    ("stm32f030:prefetch=maybe", "cortex-m0", "prefetch 'maybe'; expected on or off"),
    ("stm32f030:clock=8MHz,clock=9MHz", "cortex-m0", "'clock' given twice"),
    ("stm32f411:clock=reset", "cortex-m4", "states no reset clock"),
])
def test_bad_specs_are_one_line_errors(spec, core, want):
    with pytest.raises(UsageError) as exc:
        get_device(spec, core)
    assert want in str(exc.value) and str(exc.value).startswith(f"--device {spec}:") and "\n" not in str(exc.value)


def test_bad_spec_on_the_command_line_is_one_line():
    proc = cli("run", "--op", "sha256", "--target", "sim:cortex-m0", "--device", "stm32f030:clock=60MHz")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "60 MHz is above the stm32f030's maximum of 48 MHz" in proc.stderr


def test_the_wait_state_table_lookup():
    f030 = DEVICES["stm32f030"].wait_states
    assert [ws_for(f030, hz) for hz in (8_000_000, 24_000_000, 24_000_001, 48_000_000)] == [0, 0, 1, 1]
    assert ws_for(f030, 48_000_001) is None
    f411 = DEVICES["stm32f411"].wait_states
    assert [ws_for(f411, mhz * 10**6) for mhz in (16, 30, 31, 64, 84, 90, 100)] == [0, 0, 1, 1, 2, 2, 3]
    f207 = DEVICES["stm32f207"].wait_states
    assert [ws_for(f207, mhz * 10**6) for mhz in (30, 60, 61, 120)] == [0, 1, 2, 3]
    f407 = DEVICES["stm32f407"].wait_states      # RM0090 Table 10, 2.7-3.6 V
    assert [ws_for(f407, mhz * 10**6) for mhz in (24, 30, 31, 120, 121, 150, 168)] == [0, 0, 1, 3, 4, 4, 5]


def test_every_profile_agrees_with_its_own_table():
    """A profile's own flash_ws is what its table gives at its clock, and every table and
    accelerator names a source."""
    for d in DEVICES.values():
        resolved = get_device(d.name, d.core)
        assert resolved.clock_hz == d.clock_hz and resolved.flash_ws == d.flash_ws, d.name
        if d.wait_states:
            assert d.wait_states_source and d.max_clock_hz
            table = ws_for(d.wait_states, d.clock_hz)
            assert resolved.condition["flash_ws"]["value"] == table
            assert d.flash_ws == table, d.name
        for key in ("clock_hz", "clock_source", "flash_ws", "prefetch", "accelerator"):
            assert resolved.condition[key]["source"], (d.name, key)


def test_the_new_profiles():
    f091, f411, f207 = (get_device(n, c) for n, c in (("stm32f091", "cortex-m0"), ("stm32f411", "cortex-m4"),
                                                     ("stm32f207", "cortex-m3")))
    assert (f091.clock_hz, f091.flash_ws, f091.prefetch) == (48_000_000, 1, True)
    assert (f411.clock_hz, f411.condition["flash_ws"]["value"], f411.flash_ws) == (100_000_000, 3, 3)
    assert (f207.clock_hz, f207.condition["flash_ws"]["value"], f207.flash_ws) == (120_000_000, 3, 3)
    f407 = get_device("stm32f407:clock=24MHz", "cortex-m4")     # pqm4's benchmark condition
    assert (f407.clock_hz, f407.flash_ws, f407.prefetch) == (24_000_000, 0, True)
    for art in (f411, f207, f407):  # the ART accelerator, modelled line by line (cbsim.c)
        assert art.flash_cache["line_bytes"] == 16 and art.condition["caches"]["value"] == "on"
        assert (art.flash_cache["icache_lines"], art.flash_cache["dcache_lines"]) == (64, 8)
    assert "RM0091" in f091.wait_states_source and "RM0383" in f411.wait_states_source
    assert "RM0033" in f207.wait_states_source
    assert f091.energy_source.startswith("unknown") and f091.active_current_a == 0
    assert "nucleo-f030r8" in f091.notes and "nucleo-f401re" in f411.notes and "nucleo-f401re" in f207.notes


def test_conditions_resolve_with_their_sources():
    reset = get_device("stm32f030:clock=reset", "cortex-m0")       # the Cifra study's board
    assert (reset.clock_hz, reset.flash_ws, reset.prefetch) == (8_000_000, 0, True)
    c = reset.condition
    assert c["clock_source"]["value"].startswith("HSI 8 MHz") and "RM0360" in c["clock_source"]["source"]
    assert "0x0000 0030" in c["prefetch"]["source"] and "RM0360" in c["flash_ws"]["source"]
    slow = get_device("stm32f030:clock=8MHz", "cortex-m0")
    assert (slow.clock_hz, slow.flash_ws) == (8_000_000, 0) and "contradicts" not in slow.condition["flash_ws"]
    forced = get_device("stm32f030:clock=30MHz,ws=0,prefetch=off", "cortex-m0")
    assert (forced.clock_hz, forced.flash_ws, forced.prefetch) == (30_000_000, 0, False)
    assert "gives 1 WS at 30 MHz; fewer than the part needs" in forced.condition["flash_ws"]["contradicts"]
    assert forced.condition["prefetch"]["source"] == "--device option prefetch=off"
    assert get_device("stm32f030:ws=1", "cortex-m0").condition["flash_ws"].get("contradicts") is None
    off = get_device("stm32f411:cache=off", "cortex-m4")
    assert off.flash_cache["icache_lines"] == off.flash_cache["dcache_lines"] == 0
    assert off.condition["caches"] == {"value": "off", "source": "--device option cache=off"}
    assert "caches off" in describe(off.condition)


@pytest.mark.parametrize("spec, message", [
    ("stm32f411:cache=maybe", "cache 'maybe'; expected on or off"),
    ("stm32f030:cache=off", "the stm32f030 profile models no flash cache"),
])
def test_cache_option_errors(spec, message):
    with pytest.raises(UsageError, match=message):
        get_device(spec, DEVICES[spec.split(":")[0]].core)


@pytest.mark.e2e
@needs_sim
def test_a_slower_clock_with_fewer_wait_states_takes_fewer_cycles(tmp_path):
    """The same image on stm32f030 at 8 MHz (0 WS by RM0360's table) takes fewer cycles than at the
    profile's 48 MHz with 1 WS; its time is cycles / 8 MHz; the condition is stored and shown."""
    common = ("--op", "sha256", "--param", "bytes=256", "--engine", "mbedtls", "--db", str(tmp_path / "db.sqlite"))
    docs = {}
    for spec in ("stm32f030", "stm32f030:clock=8MHz"):
        out = tmp_path / f"{spec.replace(':', '_')}.json"
        proc = cli("run", "--target", "sim:cortex-m0", "--device", spec, *common, "--json", str(out))
        assert proc.returncode == 0, proc.stderr
        docs[spec] = (proc, json.loads(out.read_text()))
    (fast,), (slow,) = (d["results"] for _, d in docs.values())
    assert slow["target"] == "sim:cortex-m0:stm32f030:clock=8MHz" and slow["status"] == "ok"
    assert slow["cycles"]["per_op_median"] < fast["cycles"]["per_op_median"]
    assert slow["sim"]["instructions_per_op"] == fast["sim"]["instructions_per_op"]   # the same code ran
    assert slow["time_s"]["median"] == pytest.approx(slow["cycles"]["per_op_median"] / 8e6, rel=1e-5)
    assert "energy" not in slow                   # the profile's current is stated at 48 MHz only
    target = docs["stm32f030:clock=8MHz"][1]["conditions"]["target"]
    assert target["device"] == "stm32f030" and target["device_options"] == {"clock": "8MHz"}
    assert target["clock_hz"] == 8_000_000 and target["simulator"]["flash_ws"] == 0
    cond = target["simulator"]["condition"]
    assert cond["clock_hz"] == {"value": 8_000_000, "source": "--device option clock=8MHz"}
    assert cond["flash_ws"]["value"] == 0 and "RM0360" in cond["flash_ws"]["source"]
    shown = " ".join(docs["stm32f030:clock=8MHz"][0].stdout.split())
    assert "condition (clock=8MHz): 8 MHz from" in shown and "0 flash wait state(s), prefetch on" in shown


def test_the_m7_profiles_state_caches_and_tcm():
    """The Cortex-M7 per device: the STM32F746 runs code from flash over AXI behind the core's L1
    caches (32-byte lines, 4 KiB 2-way instruction and 4 KiB 4-way data cache: ARM DDI 0489 5.9,
    ST AN4839), the i.MX RT1060 profile from TCM (no flash, no cache)."""
    f746 = get_device("stm32f746", "cortex-m7")
    fc = f746.flash_cache
    assert (fc["line_bytes"], fc["icache_lines"], fc["icache_ways"], fc["dcache_lines"], fc["dcache_ways"]) \
        == (32, 128, 2, 128, 4)
    assert (f746.clock_hz, f746.flash_ws) == (216_000_000, 7) and "RM0385" in f746.wait_states_source
    assert get_device("stm32f746:clock=108MHz", "cortex-m7").flash_ws == 3      # RM0385 Table 5
    rt = get_device("imxrt1060", "cortex-m7")
    assert rt.code_in_flash is False and not rt.flash_cache


@pytest.mark.e2e
@needs_sim
def test_m7_caches_on_off_and_tcm_order_the_same_code(tmp_path):
    """The same AES image on the M7: from TCM (imxrt1060) fewest cycles, from flash behind the L1
    caches more (line fills at 7 wait states), with the caches off most; the same instructions."""
    common = ("--op", "aes-cbc-encrypt", "--param", "bytes=256", "--engine", "mbedtls", "--repeat", "3",
              "--db", str(tmp_path / "db.sqlite"))
    got = {}
    for spec in ("imxrt1060", "stm32f746", "stm32f746:cache=off"):
        out = tmp_path / f"{spec.replace(':', '_')}.json"
        proc = cli("run", "--target", "sim:cortex-m7", "--device", spec, *common, "--json", str(out))
        assert proc.returncode == 0, proc.stderr
        (cell,) = json.loads(out.read_text())["results"]
        assert cell["status"] == "ok"
        got[spec] = (cell["cycles"]["per_op_median"], cell["sim"]["instructions_per_op"])
    tcm, on, off = (got[s] for s in ("imxrt1060", "stm32f746", "stm32f746:cache=off"))
    assert tcm[1] == on[1] == off[1]
    assert tcm[0] < on[0] < off[0]

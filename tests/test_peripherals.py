"""Timing-annotated crypto peripheral models (src/cryptobench/targets/mcu/sim/peripherals/): the
STM32F4 HASH processor against RM0090 chapter 25 (registers, status flags, padding, the per-block
cycles of 25.3.1, misuse), and the same model under `cryptobench sim run` on both executors."""
import hashlib
import subprocess

import pytest
from conftest import cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.sim.peripherals.base import ActiveTime, PeripheralError
from cryptobench.targets.mcu.sim.peripherals.registry import PeripheralBus, check_spec
from cryptobench.targets.mcu.sim.peripherals.stm32_hash import Stm32Hash

FIX = __import__("pathlib").Path(__file__).parent / "fixtures" / "peripherals"
CR, DIN, STR, SR, HR = 0x00, 0x04, 0x08, 0x24, 0x310
INIT, BYTES = 1 << 2, 2 << 4
ALGO = {"sha1": 0, "md5": 1 << 7, "sha224": 1 << 18, "sha256": (1 << 18) | (1 << 7)}
WORDS = {"sha1": 5, "md5": 4, "sha224": 7, "sha256": 8}
DINIS, DCIS, BUSY = 1, 2, 8


class Driver:
    """A core feeding the model as RM0090 25.3.3 says, one access per cycle."""

    def __init__(self):
        self.h, self.t = Stm32Hash(0x50060400, 80), 0

    def w(self, off, value):
        self.t += 1 + self.h.write(off, 4, value, self.t)

    def r(self, off):
        self.t += 1
        return self.h.read(off, 4, self.t)

    def digest(self, algo, msg, wait_dinis=True, datatype=BYTES):
        self.w(CR, INIT | datatype | ALGO[algo])
        n = 0
        for i in range(0, len(msg), 4):
            self.w(DIN, int.from_bytes(msg[i:i + 4].ljust(4, b"\0"), "little"))
            n += 1
            if n == 17:
                while wait_dinis and not self.r(SR) & DINIS:
                    pass
                n = 1
        self.w(STR, (8 * (len(msg) % 4)) | 1 << 8)
        start = self.t
        while not self.r(SR) & DCIS:
            pass
        return b"".join(self.h.read(HR + 4 * i, 4, self.t).to_bytes(4, "big") for i in range(WORDS[algo])), \
            self.t - start


@pytest.mark.parametrize("algo", ["sha256", "sha224", "sha1", "md5"])
@pytest.mark.parametrize("length", [0, 1, 3, 4, 55, 56, 63, 64, 65, 1000])
def test_hash_digests_equal_hashlibs(algo, length):
    msg = bytes((i * 13 + 5) & 0xFF for i in range(length))
    for wait in (True, False):                 # waiting for DINIS, or back to back as ST's HAL writes
        assert Driver().digest(algo, msg, wait)[0] == hashlib.new(algo, msg).digest()


def test_hash_datatypes_swap_as_rm0090_25_3_2():
    # the same 4 message bytes "abcd", written as 32-bit (no swap), half-word, byte and bit data
    msg = b"abcd"
    for datatype, word in ((0 << 4, 0x61626364), (1 << 4, 0x63646162), (2 << 4, 0x64636261),
                           (3 << 4, int(f"{0x61626364:032b}"[::-1], 2))):
        d = Driver()
        d.w(CR, INIT | datatype | ALGO["sha256"])
        d.w(DIN, word)
        d.w(STR, 1 << 8)
        while not d.r(SR) & DCIS:
            pass
        got = b"".join(d.h.read(HR + 4 * i, 4, d.t).to_bytes(4, "big") for i in range(8))
        assert got == hashlib.sha256(msg).digest(), hex(datatype)


def test_hash_block_and_final_cycles_are_rm0090s():
    # 25.3.1: an intermediate block 50 cycles (SHA-256), 66 (SHA-1); the last block one block time
    # per padded block: 1 for a tail of up to 55 bytes, 2 from 56 bytes
    for algo, block in (("sha256", 50), ("sha1", 66)):
        d = Driver()
        d.w(CR, INIT | BYTES | ALGO[algo])
        for _ in range(16):
            d.w(DIN, 0)
        assert d.h.read(SR, 4, d.t) & DINIS == 0          # a full FIFO takes no new block
        t17 = d.t
        d.w(DIN, 0)                                        # the 17th word starts the block
        assert d.h.read(SR, 4, t17 + 1) == BUSY
        assert d.h.read(SR, 4, t17 + block - 1) & BUSY
        assert d.h.read(SR, 4, t17 + block) == DINIS       # ready again exactly `block` cycles later
    for tail, blocks in ((0, 1), (55, 1), (56, 2), (64, 2)):    # counted from the cycle after DCAL's store
        assert Driver().digest("sha256", b"x" * tail)[1] == 50 * blocks - 1


def test_a_write_to_a_busy_hash_stalls_the_core_until_the_block_is_done():
    h = Stm32Hash(0x50060400, 80)
    h.write(CR, 4, INIT | BYTES | ALGO["sha256"], 0)
    for t in range(17):
        assert h.write(DIN, 4, 0, t) == 0
    assert h.write(DIN, 4, 0, 20) == 16 + 50 - 20          # the block started at cycle 16 ends at 66
    assert h.write(STR, 4, 1 << 8, 30) == 36


@pytest.mark.parametrize("steps, message", [
    ([(DIN, 4, 1)], "HASH_DIN written before HASH_CR.INIT"),
    ([(STR, 4, 1 << 8)], "DCAL written before HASH_CR.INIT"),
    ([(CR, 4, INIT | (1 << 6))], "HMAC mode (HASH_CR.MODE = 1) is not modelled"),
    ([(CR, 4, INIT | (1 << 3))], "DMA requests (HASH_CR.DMAE) need the DMA2 controller"),
    ([(CR, 4, INIT), (DIN, 2, 1)], "a 2-byte store at offset 0x4"),
    ([(CR, 4, INIT), (STR, 4, 1 << 8), (DIN, 4, 1)], "HASH_DIN written after DCAL"),
    ([(CR, 4, INIT), (DIN, 4, 1), (STR, 4, 12 | 1 << 8)], "NBLW = 12"),
])
def test_hash_misuse_is_one_line(steps, message):
    h = Stm32Hash(0x50060400, 80)
    with pytest.raises(PeripheralError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        for t, (off, size, value) in enumerate(steps):
            h.write(off, size, value, 10 * t)


def test_hash_interrupt_line_follows_imr_and_the_flags():
    h = Stm32Hash(0x50060400, 80)
    h.write(CR, 4, INIT | BYTES | ALGO["sha256"], 0)
    h.write(0x20, 4, 2, 0)                                   # DCIE
    h.write(STR, 4, 1 << 8, 10)
    assert not h.irq_pending(59) and h.next_event(59) == 60
    assert h.irq_pending(60) and h.next_event(60) is None
    assert h.active.within(0, 1000) == 50


def test_active_time_merges_and_clips():
    a = ActiveTime()
    a.add(10, 20)
    a.add(15, 30)
    a.add(40, 45)
    assert a.spans == [(10, 30), (40, 45)] and a.within(0, 100) == 25 and a.within(25, 42) == 7


def test_peripheral_specs_are_checked_with_one_line():
    assert check_spec({"kind": "stm32f4-hash", "base": 0x50060400, "irq": 80, "source": "RM0090"}, "w") is None
    assert "expected one of stm32f4-hash" in check_spec({"kind": "nope", "base": 0x50060400, "source": "x"}, "w")
    assert "expected an address in the peripheral region" in check_spec(
        {"kind": "stm32f4-hash", "base": 0x20000000, "source": "x"}, "w")
    assert "has no source" in check_spec({"kind": "stm32f4-hash", "base": 0x50060400}, "w")
    bus = PeripheralBus([{"kind": "stm32f4-hash", "base": 0x50060400, "irq": 80, "source": "x"}], None)
    assert bus.find(0x50060424) is bus.models[0] and bus.find(0x50060800) is None
    assert bus.pages() == [(0x50060000, 0x1000)]


def _image(tmp_path, wait, irq=0):
    elf = tmp_path / f"hash{wait}{irq}.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-ffreestanding", "-nostdlib",
                    f"-DWAIT_DINIS={wait}", f"-DIRQ={irq}", "-T", str(FIX / "link.ld"), str(FIX / "stm32_hash.c"),
                    "-o", str(elf)], check=True)
    return elf


def _lines(elf, executor, *args):
    proc = cli("sim", "run", str(elf), "--device", "stm32f437", *args, env={"CRYPTOBENCH_SIM_EXECUTOR": executor})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return [line.split() for line in proc.stderr.splitlines() if line.startswith(("sha", "irqs"))]


def test_completion_by_interrupt_wakes_a_core_in_wfi_with_the_same_cycles_on_both_executors(tmp_path):
    # HASH_IMR.DCIE and the NVIC's enable for HASH_RNG (80): the handler runs once per digest, at the
    # cycle DCIS rises (taken after the block that passes it), and the core waits in WFI meanwhile
    polled, irq = _lines(_image(tmp_path, 1, 0), "native"), {}
    for executor in ("native", "unicorn"):
        irq[executor] = _lines(_image(tmp_path, 1, 1), executor)
    assert irq["native"] == irq["unicorn"]
    assert irq["native"][-1] == ["irqs", "00000003", "0"]
    for (name, digest, c_poll), (name2, digest2, c_irq) in zip(polled, irq["native"]):
        assert (name, digest) == (name2, digest2)
        # entry (12 cycles, DDI 0439 5.5.1), the handler and the return cost more than the polling loop
        assert int(c_poll) < int(c_irq) < int(c_poll) + 100


@pytest.mark.parametrize("wait", [0, 1])
def test_a_driver_image_gets_the_right_digests_with_the_same_cycles_on_both_executors(tmp_path, wait):
    elf = _image(tmp_path, wait)
    outs = {}
    for executor in ("native", "unicorn"):
        proc = cli("sim", "run", str(elf), "--device", "stm32f437", env={"CRYPTOBENCH_SIM_EXECUTOR": executor})
        assert proc.returncode == 0, proc.stderr
        outs[executor] = [line.split() for line in proc.stderr.splitlines() if line.startswith(("sha256-", "sha1-"))]
        assert "peripheral modelled: STM32F4 HASH (ST RM0090 Rev 11 chapter 25 (HASH))" in proc.stdout
    assert outs["native"] == outs["unicorn"] and len(outs["native"]) == 3
    msg = bytes((i * 7 + 1) & 0xFF for i in range(1000))
    want = {"sha256-abc": hashlib.sha256(b"abc"), "sha256-1000": hashlib.sha256(msg), "sha1-64": hashlib.sha1(msg[:64])}
    for name, digest, cycles in outs["native"]:
        assert digest == want[name].hexdigest() and int(cycles) > 50


def test_a_device_without_the_model_leaves_the_registers_plain(tmp_path):
    # on the stm32f407 profile (no HASH model listed) the same image's DCIS never comes: it times out
    proc = cli("sim", "run", str(_image(tmp_path, 0)), "--device", "stm32f407", "--timeout", "3")
    assert "timed out" in proc.stdout and "sha256-abc" not in proc.stderr


def test_a_bad_peripheral_model_in_devices_toml_is_one_line(tmp_path, monkeypatch):
    from cryptobench.targets.mcu.sim import devices
    bad = tmp_path / "devices.toml"
    text = devices.DEVICES_FILE.read_text().replace('kind = "stm32f4-hash", base = 0x50060400',
                                                    'kind = "stm32f4-hash", base = 0x20000000', 1)
    bad.write_text(text)
    monkeypatch.setattr(devices, "DEVICES_FILE", bad)
    with pytest.raises(UsageError, match=r"devices\.toml: \[device\.stm32f437\]: stm32f4-hash base 536870912"):
        devices._load()


def test_a_model_with_its_clock_off_refuses_and_its_enable_register_reads_back():
    bus = PeripheralBus([{"kind": "stm32f4-hash", "base": 0x50060400, "irq": 80, "enable": [0x40023834, 0x20],
                          "source": "x"}], None)
    assert bus.owns(0x40023834) and bus.owns(0x50060424) and not bus.owns(0x40024000)
    assert bus.pages() == [(0x40023000, 0x1000), (0x50060000, 0x1000)]
    with pytest.raises(PeripheralError, match=r"STM32F4 HASH: accessed at 0x50060424 with its clock off "
                                              r"\(bit 0x20 of 0x40023834 clear\)"):
        bus.access(0x50060424, 4, lambda: 0)
    bus.access(0x40023834, 4, lambda: 0, 0x20)                # RCC_AHB2ENR.HASHEN
    assert bus.access(0x40023834, 4, lambda: 0) == 0x20 and bus.access(0x40023835, 1, lambda: 0) == 0
    assert bus.access(0x50060424, 4, lambda: 0) == DINIS       # HASH_SR: ready for data
    assert "enable [1]; expected [register address, bit mask]" in check_spec(
        {"kind": "stm32f4-hash", "base": 0x50060400, "enable": [1], "source": "x"}, "w")


# ---- the cell path: a driver recipe's cells on the modelled peripheral ------------------------------

def _run(tmp_path, *args):
    out = tmp_path / "run.json"
    proc = cli("run", *args, "--db", str(tmp_path / "run.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return __import__("json").loads(out.read_text())


@pytest.mark.e2e
def test_hash_cells_on_the_modelled_peripheral_pass_their_vectors_and_name_what_served_them(tmp_path):
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "stm32f437", "--engine", "stm32-cryp-hash",
               "--engine", "mbedtls", "--op", "sha256", "--op", "sha1", "--op", "sha224",
               "--param", "bytes=0,3,64,1000")
    cells = [r for r in doc["results"] if r["engine"] == "stm32-cryp-hash"]
    assert len(cells) == 12
    for r in cells:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        assert r["served_by"] == "peripheral: STM32F4 HASH (model of ST RM0090 Rev 11 chapter 25 (HASH))"
        assert r["provenance"] == "simulated"
    models = doc["conditions"]["target"]["peripheral_models"]
    assert {"peripheral": "STM32F4 HASH", "registers": "ST RM0090 Rev 11 chapter 25 (HASH)",
            "provenance": "modeled", "latency": Stm32Hash.latency_source} in models
    assert all(m["provenance"] == "modeled" and m["latency"] for m in models)
    assert all("served_by" not in r for r in doc["results"] if r["engine"] == "mbedtls")


@pytest.mark.e2e
def test_aes_cells_on_the_modelled_cryp_pass_their_vectors_and_name_the_cryp(tmp_path):
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "stm32f437", "--engine", "stm32-cryp-hash",
               "--op", "aes-ecb-encrypt", "--op", "aes-cbc-encrypt", "--param", "bytes=16,1024",
               "--param", "key_bits=128,256")
    cells = [r for r in doc["results"] if r["engine"] == "stm32-cryp-hash"]
    assert len(cells) == 8
    for r in cells:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        assert r["served_by"] == "peripheral: STM32F4 CRYP (model of ST RM0090 Rev 11 chapter 23 (CRYP))"
    # the engine's rounds are few next to the core feeding its FIFO: a 256-bit key costs more, not much
    cyc = {(r["op"], r["params"]["bytes"], r["params"]["key_bits"]): r["cycles"]["per_op_median"] for r in cells}
    assert cyc[("aes-ecb-encrypt", 1024, 128)] < cyc[("aes-ecb-encrypt", 1024, 256)]
    assert cyc[("aes-ecb-encrypt", 16, 128)] < cyc[("aes-ecb-encrypt", 1024, 128)]


def test_a_driver_recipe_runs_only_where_its_peripheral_is(tmp_path):
    # by default a device without the model leaves the driver recipe out; asked for, it is one line
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "stm32f407", "--engine", "stm32-cryp-hash",
               "--op", "sha256", "--db", str(tmp_path / "x.sqlite"))
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("--engine stm32-cryp-hash: drives stm32f4-hash, stm32f4-cryp, stm32f4-rng, which --device stm32f407 "
                                        "does not have; on the simulator pick a device that models it (cryptobench "
                                        "list targets: 'peripherals modelled')")
    from cryptobench.runner.mcu_plan import _mcu_libraries
    from cryptobench.targets.mcu.sim.devices import get_device
    opts = type("O", (), {"library_source": None, "recipes": [], "library_cc": None, "engines": [],
                          "target": "sim:cortex-m4"})()

    def names(device):
        return [lib for lib, _ in _mcu_libraries(opts, device)]
    assert "stm32-cryp-hash" in names(get_device("stm32f437", "cortex-m4"))
    assert "stm32-cryp-hash" not in names(get_device("stm32f407", "cortex-m4"))
    assert "mbedtls" in names(get_device("stm32f407", "cortex-m4"))


def test_a_recipe_requiring_an_unknown_peripheral_is_one_line(tmp_path):
    from cryptobench.targets.mcu.firmware.recipes import load_recipe
    glue = tmp_path / "glue.c"
    glue.write_text("/* */\n")
    recipe = tmp_path / "r.toml"
    recipe.write_text('[library]\nname = "x"\nversion = "1"\nglue = "glue.c"\nsources = ["a.c"]\n'
                      'requires = ["nope"]\n[ops]\n"sha256" = "x"\n')
    with pytest.raises(UsageError, match=r"r\.toml:6: 'requires' names 'nope'; expected peripheral model kinds: "
                                         r".*stm32f4-hash"):
        load_recipe(str(recipe))


@pytest.mark.e2e
def test_cc26x2_crypto_cells_pass_their_vectors_on_the_modelled_engine(tmp_path):
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "cc2652", "--engine", "cc26x2-crypto",
               "--op", "aes-cbc-encrypt", "--op", "aes-ctr-encrypt", "--op", "aes-ecb-encrypt", "--op", "aes-gcm-encrypt",
               "--op", "aes-ccm-encrypt",
               "--op", "sha256", "--op", "sha224", "--param", "bytes=64,1024", "--param", "key_bits=128,256",
               "--param", "aad_bytes=16", "--timeout", "120")
    cells = [r for r in doc["results"] if r["status"] != "unsupported"]
    assert cells
    for r in cells:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["params"], r["detail"])
        assert r["served_by"].startswith("peripheral: TI CC26x2 CRYPTO (model of TI SWCU185G")
    assert {r["op"] for r in cells} == {"aes-cbc-encrypt", "aes-ctr-encrypt", "aes-ecb-encrypt", "aes-gcm-encrypt",
                                        "aes-ccm-encrypt", "sha256", "sha224"}

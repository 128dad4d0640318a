"""Interrupt completion on the STM32F437 profile (stm32-cryp-hash-irq): the models' lines as the
simulator takes them (CRYP on interrupt 79; HASH and RNG sharing HASH_RNG, 80, RM0090 12.2), the
irq cells passing their vectors and the RNG's cells their health checks, both executors counting
alike, and WFI sleep where the engine works long enough for the core to sleep."""
import json
import os

import pytest
from conftest import cli

from cryptobench.targets.mcu.sim.interrupts import NVIC_ISER, PeripheralInterrupts
from cryptobench.targets.mcu.sim.peripherals.stm32_cryp import Stm32Cryp
from cryptobench.targets.mcu.sim.peripherals.stm32_hash import Stm32Hash
from cryptobench.targets.mcu.sim.peripherals.stm32_rng import Stm32Rng
from cryptobench.targets.mcu.target import random_verdict

CRYP_CR, CRYP_DIN, CRYP_DOUT, CRYP_IMSCR, CRYP_MISR = 0x00, 0x08, 0x0C, 0x14, 0x1C
ECB, BYTES, CRYPEN, OUTIM = 4 << 3, 2 << 6, 1 << 15, 2
HASH_CR, HASH_DIN, HASH_STR, HASH_IMR = 0x00, 0x04, 0x08, 0x20
INIT, SHA256, DCAL, DCIE, DINIE = 1 << 2, (1 << 18) | (1 << 7), 1 << 8, 2, 1
RNG_CR, RNG_DR, RNGEN, IE = 0x00, 0x08, 1 << 2, 1 << 3


class Bus:
    def __init__(self, *models):
        self.models = list(models)

    def __bool__(self):
        return True


def test_cryp_outris_rises_when_the_block_is_done_and_falls_as_dout_empties():
    c = Stm32Cryp(0x50060000, 79)
    c.write(CRYP_CR, 4, ECB | BYTES | CRYPEN, 0)
    for t in range(1, 5):
        c.write(CRYP_DIN, 4, t, t)
    c.write(CRYP_IMSCR, 4, OUTIM, 5)
    assert c.irq_since(5) is None and c.next_event(5) == 4 + 14     # RM0090 23.3: 14 cycles, AES-128
    assert c.irq_since(18) == 18 and c.read(CRYP_MISR, 4, 18) == OUTIM
    for t in range(19, 23):
        c.read(CRYP_DOUT, 4, t)
    assert c.irq_since(23) is None                                   # OUT FIFO empty: OUTRIS low
    c.write(CRYP_IMSCR, 4, 0, 24)
    assert c.irq_since(24) is None


def test_rng_line_with_ie_and_drdy_only():
    r = Stm32Rng(0x50060800, 80)
    r.write(RNG_CR, 4, RNGEN, 0)
    assert r.irq_since(200) is None and r.next_event(0) is None      # IE clear: no line
    r.write(RNG_CR, 4, RNGEN | IE, 10)                               # already on: the value stays due at 150
    assert r.next_event(10) == 150 and r.irq_since(149) is None and r.irq_since(150) == 150
    r.read(RNG_DR, 4, 160)
    assert r.irq_since(161) is None and r.next_event(161) == 310


def test_hash_and_rng_share_interrupt_80_and_each_rise_is_taken_once():
    hash_, rng = Stm32Hash(0x50060400, 80), Stm32Rng(0x50060800, 80)
    irqs = PeripheralInterrupts(Bus(hash_, rng))
    irqs.write(NVIC_ISER + 8, 1 << (80 - 64))
    hash_.write(HASH_CR, 4, INIT | SHA256, 0)
    hash_.write(HASH_DIN, 4, 0x61626380, 1)
    hash_.write(HASH_IMR, 4, DCIE, 2)
    hash_.write(HASH_STR, 4, 24 | DCAL, 3)                          # digest at 3 + 50 (RM0090 25.3.1)
    rng.write(RNG_CR, 4, RNGEN | IE, 0)                             # first value at 150
    assert irqs.sleep_until(4) == 53 and irqs.due(53) == (80, 53)
    irqs.taken(80, 53)
    assert irqs.due(60) is None and irqs.sleep_until(60) == 150     # the RNG's rise is still to come
    assert irqs.due(150) == (80, 150)
    irqs.taken(80, 150)
    assert irqs.due(200) is None
    # both high at one entry: the entry serves both sources (the handler reads both registers)
    hash_.write(HASH_CR, 4, INIT | SHA256, 300)
    hash_.write(HASH_STR, 4, DCAL, 301)
    rng.read(RNG_DR, 4, 302)                                        # next value at 452
    assert irqs.due(460) == (80, 351)
    irqs.taken(80, 351)
    assert irqs.due(461) is None


def test_a_random_cell_is_checked_by_length_and_health_tests():
    good = bytes(range(256)) * 10
    assert random_verdict(good, 2560)[0] == "pass" and "monobit" in random_verdict(good, 2560)[1]
    assert random_verdict(good[:64], 64) == ("pass", random_verdict(good[:64], 64)[1])
    assert random_verdict(good[:63], 64)[0] == "fail"
    assert "repetition" in random_verdict(bytes(64), 64)[1]
    assert "monobit" in random_verdict(bytes([0x0F, 0x01]) * 1250, 2500)[1]


def _run(tmp_path, name, *args, env=None):
    out = tmp_path / f"{name}.json"
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "stm32f437", *args,
               "--db", str(tmp_path / f"{name}.sqlite"), "--json", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.mark.e2e
def test_polling_and_interrupt_cells_pass_and_the_core_sleeps_where_the_engine_is_slow(tmp_path):
    doc = _run(tmp_path, "both", "--engine", "stm32-cryp-hash", "--engine", "stm32-cryp-hash-irq",
               "--op", "aes-cbc-encrypt", "--op", "sha256", "--op", "sha1", "--op", "random",
               "--param", "bytes=64,2560")
    cells = {(r["engine"], r["op"], r["params"]["bytes"]): r for r in doc["results"]}
    assert len(cells) == 16
    for (engine, op, n), r in cells.items():
        assert r["status"] == "ok" and r["kat"] == "pass", (engine, op, n, r["detail"])
        title = {"aes-cbc-encrypt": "CRYP", "random": "RNG"}.get(op, "HASH")
        assert r["served_by"].startswith(f"peripheral: STM32F4 {title} (model of ST RM0090")
    assert "monobit" in cells[("stm32-cryp-hash-irq", "random", 2560)]["detail"]
    for op in ("sha256", "sha1", "random"):     # 50-66 cycles a block, 150 a value: the core sleeps
        poll, irq = cells[("stm32-cryp-hash", op, 2560)], cells[("stm32-cryp-hash-irq", op, 2560)]
        assert "sleep" not in poll
        assert 0 < irq["sleep"]["cycles_per_op"] < irq["cycles"]["per_op_median"]
        assert irq["cycles"]["per_op_median"] > poll["cycles"]["per_op_median"]    # entry and return cost
    # the CRYP's block (14 cycles, AES-128) ends before the core reaches WFI: it never sleeps
    cbc = cells[("stm32-cryp-hash-irq", "aes-cbc-encrypt", 2560)]
    assert "sleep" not in cbc
    assert cbc["cycles"]["per_op_median"] > cells[("stm32-cryp-hash", "aes-cbc-encrypt", 2560)]["cycles"]["per_op_median"]
    builds = doc["conditions"]["builds"]
    assert builds["stm32-cryp-hash"]["driver_completion"] == "polling"
    assert builds["stm32-cryp-hash-irq"]["driver_completion"] == "interrupt"


@pytest.mark.e2e
def test_stm32_interrupt_cells_count_the_same_on_both_executors(tmp_path):
    args = ("--engine", "stm32-cryp-hash-irq", "--op", "aes-ecb-encrypt", "--op", "sha256", "--op", "random",
            "--param", "bytes=64,1024")
    native = _run(tmp_path, "native", *args, env={**os.environ, "CRYPTOBENCH_SIM_EXECUTOR": "native"})
    uc = _run(tmp_path, "unicorn", *args, env={**os.environ, "CRYPTOBENCH_SIM_EXECUTOR": "unicorn"})

    def counts(doc):
        return {(r["op"], r["params"]["bytes"]): (r["status"], r["cycles"]["per_op_median"],
                                                  (r.get("sleep") or {}).get("cycles_per_op"),
                                                  r["sim"]["instructions_per_op"]) for r in doc["results"]}
    assert counts(native) == counts(uc)
    assert all(v[0] == "ok" for v in counts(native).values())
    assert counts(native)[("sha256", 1024)][2] and counts(native)[("random", 64)][2]

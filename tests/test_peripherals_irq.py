"""Interrupt completion in cryptobench's own cells (sim/interrupts.py, engine.py's run loop): a
driver that enables its engine's line in the NVIC and waits in WFI is woken by the model's
interrupt, the slept cycles are counted and priced at the idle current, both executors agree,
and the polling-vs-blocking energy crossover (TI SWRA667 Table 3's question) comes out of the
model."""
import json
import os

import pytest
from conftest import cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.sim.interrupts import NVIC_ICER, NVIC_ISER, PeripheralInterrupts, nvic_word
from cryptobench.targets.power import PowerProfile, modeled_states_energy


class FakeModel:
    """A peripheral whose line goes high at `at` (None: never)."""

    def __init__(self, irq, at):
        self.irq, self.at = irq, at

    def irq_since(self, now):
        return self.at if self.at is not None and now >= self.at else None

    def next_event(self, now):
        return self.at if self.at is not None and self.at > now else None


class FakeBus:
    def __init__(self, *models):
        self.models = list(models)

    def __bool__(self):
        return True


def test_nvic_words_enable_and_disable_lines():
    irqs = PeripheralInterrupts(FakeBus())
    assert nvic_word(NVIC_ISER) == 0 and nvic_word(NVIC_ICER + 4) == 1 and nvic_word(NVIC_ISER + 2) is None
    assert nvic_word(0xE000E200) is None
    assert irqs.write(NVIC_ISER, 1 << 23) and irqs.enabled == {23}
    assert irqs.write(NVIC_ISER + 4, 1 << 1) and irqs.enabled == {23, 33}
    assert irqs.write(NVIC_ISER, 0) and irqs.enabled == {23, 33}          # 0s do nothing
    assert irqs.write(NVIC_ICER, 1 << 23) and irqs.enabled == {33}
    assert not irqs.write(0xE000ED08, 0x1000)                              # VTOR: not the NVIC's
    irqs.write(NVIC_ICER + 4, 1 << 1)
    assert irqs.enabled == set() and irqs.ever      # completion stays on after a handler masks its line
    assert not PeripheralInterrupts(FakeBus()).ever


def test_wfi_sleeps_until_an_enabled_line_rises_and_each_rise_is_taken_once():
    crypto, trng = FakeModel(23, 500), FakeModel(33, 300)
    irqs = PeripheralInterrupts(FakeBus(crypto, trng))
    assert irqs.sleep_until(100) is None          # nothing enabled: the core would sleep for ever
    irqs.write(NVIC_ISER, 1 << 23)
    assert irqs.sleep_until(100) == 500           # the TRNG's earlier event is not enabled
    assert irqs.due(499) is None and irqs.due(500) == (23, 500)
    irqs.taken(23, 500)
    assert irqs.due(600) is None and irqs.sleep_until(600) is None      # taken: no new rise coming
    irqs.write(NVIC_ISER + 4, 1 << 1)
    assert irqs.due(600) == (33, 300)             # a line already high is due at once
    assert irqs.sleep_until(600) == 600


def test_state_energy_prices_the_slept_time_at_the_idle_current():
    p = PowerProfile(3.3, 0.0031, 0.00059, source="test")
    e = modeled_states_energy(10e-6, 6e-6, p)
    assert e["per_op_j"] == pytest.approx(3.3 * (0.0031 * 4e-6 + 0.00059 * 6e-6))
    assert e["states"] == {"active_s": pytest.approx(4e-6), "asleep_s": 6e-6}
    assert e["provenance"] == "modeled" and "idle" in e["method"]
    # never more asleep than the operation lasted
    assert modeled_states_energy(1e-6, 5e-6, p)["per_op_j"] == pytest.approx(3.3 * 0.00059 * 1e-6)


def test_a_recipe_completion_mode_must_be_polling_or_interrupt(tmp_path):
    from cryptobench.targets.mcu.firmware.recipes import load_recipe, RECIPES_DIR
    text = (RECIPES_DIR / "cc26x2-crypto-irq.toml").read_text().replace('completion = "interrupt"',
                                                                        'completion = "dma"')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(UsageError) as e:
        load_recipe(str(bad))
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith("completion"))
    assert str(e.value).startswith(f"{bad}:{line}: 'completion' = ") and "\n" not in str(e.value)
    assert load_recipe("cc26x2-crypto-irq").completion == "interrupt"
    assert load_recipe("cc26x2-crypto").completion == "polling"


def _run(tmp_path, name, *args, env=None):
    out = tmp_path / f"{name}.json"
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "cc2652", *args, "--db", str(tmp_path / f"{name}.sqlite"),
               "--json", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.mark.e2e
def test_polling_and_interrupt_cells_agree_and_the_blocking_energy_crossover_comes_from_the_model(tmp_path):
    doc = _run(tmp_path, "both", "--engine", "cc26x2-crypto", "--engine", "cc26x2-crypto-irq",
               "--op", "aes-cbc-encrypt", "--op", "sha256", "--param", "bytes=16,64,256,1024,4096")
    cells = {(r["engine"], r["op"], r["params"]["bytes"]): r for r in doc["results"]}
    assert len(cells) == 20
    for r in cells.values():           # the same vectors pass whichever way the driver waits
        assert r["status"] == "ok" and r["kat"] == "pass", (r["engine"], r["op"], r["detail"])
        assert r["served_by"].startswith("peripheral: TI CC26x2 CRYPTO (model of ")
    for op in ("aes-cbc-encrypt", "sha256"):
        poll, irq = cells[("cc26x2-crypto", op, 4096)], cells[("cc26x2-crypto-irq", op, 4096)]
        assert "sleep" not in poll
        # the core slept through most of the engine's work, woken by its interrupt
        assert 0 < irq["sleep"]["cycles_per_op"] < irq["cycles"]["per_op_median"]
        assert irq["energy"]["states"]["asleep_s"] > 0 and "idle" in irq["energy"]["method"]
        # the engine worked the same cycles whichever way the driver waited, and the core slept
        # through no more than the engine's work plus the wake-up
        assert irq["engine_active"] == poll["engine_active"] and irq["engine_active"]["provenance"] == "modeled"
        assert irq["sleep"]["cycles_per_op"] <= irq["engine_active"]["cycles_per_op"]
        # blocking costs time (the interrupt's entry and return) and saves energy on long payloads
        assert irq["cycles"]["per_op_median"] > poll["cycles"]["per_op_median"]
        assert irq["energy"]["per_op_j"] < poll["energy"]["per_op_j"]
    small = cells[("cc26x2-crypto", "aes-cbc-encrypt", 16)], cells[("cc26x2-crypto-irq", "aes-cbc-encrypt", 16)]
    assert small[1]["energy"]["per_op_j"] > small[0]["energy"]["per_op_j"]     # short: polling is cheaper
    builds = doc["conditions"]["builds"]            # the driver's completion mode is a condition of its cells
    assert builds["cc26x2-crypto"]["driver_completion"] == "polling"
    assert builds["cc26x2-crypto-irq"]["driver_completion"] == "interrupt"
    # TI's Table 3 question at the level of the model: from which payload blocking uses less energy
    proc = cli("model", "crossover", "latest", "--op", "aes-cbc-encrypt", "--a", "cc26x2-crypto",
               "--b", "cc26x2-crypto-irq", "--db", str(tmp_path / "both.sqlite"))
    assert proc.returncode == 0, proc.stderr
    energy = next(line for line in proc.stdout.splitlines() if line.strip().startswith("energy:"))
    at = float(energy.split("cheaper from ")[1].split(" bytes")[0])
    assert 16 < at < 1024
    assert "time: B is not cheaper" in proc.stdout          # blocking is never faster
    assert "A polls, B completes by interrupt" in proc.stdout


@pytest.mark.e2e
def test_interrupt_cells_count_the_same_on_both_executors(tmp_path):
    args = ("--engine", "cc26x2-crypto-irq", "--op", "aes-cbc-encrypt", "--op", "sha256", "--param", "bytes=64,1024")
    native = _run(tmp_path, "native", *args, env={**os.environ, "CRYPTOBENCH_SIM_EXECUTOR": "native"})
    uc = _run(tmp_path, "unicorn", *args, env={**os.environ, "CRYPTOBENCH_SIM_EXECUTOR": "unicorn"})

    def counts(doc):
        return {(r["op"], r["params"]["bytes"]): (r["cycles"]["per_op_median"], (r.get("sleep") or {}).get("cycles_per_op"),
                                                  r["sim"]["instructions_per_op"]) for r in doc["results"]}
    assert counts(native) == counts(uc)
    assert all(v[1] for v in counts(native).values())       # every one of them slept


def test_active_time_until_is_within_from_zero():
    from cryptobench.targets.mcu.sim.peripherals.base import ActiveTime
    a = ActiveTime()
    for s, e in ((10, 20), (15, 30), (40, 50), (60, 61), (61, 70)):
        a.add(s, e)
    assert a.spans == [(10, 30), (40, 50), (60, 70)]
    for t in (0, 10, 11, 30, 35, 45, 50, 65, 70, 1000):
        assert a.until(t) == a.within(0, t), t

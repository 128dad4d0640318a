"""Power models and the figures derived from energy, against hand-computed values."""
import json

import pytest

from conftest import cli
from cryptobench.analysis.power import energy_efficiency_improvement
from cryptobench.targets.power import PowerProfile, load_profile, modeled_energy, per_unit
from cryptobench.targets.mcu.sim.devices import DEVICES


def test_modeled_energy_is_t_v_i():
    e = modeled_energy(2e-3, PowerProfile(3.3, 0.0034, source="datasheet"))
    assert e["per_op_j"] == pytest.approx(2e-3 * 3.3 * 0.0034)
    assert e["provenance"] == "modeled" and "3.3 V" in e["method"]
    with pytest.raises(ValueError):
        modeled_energy(1.0, PowerProfile(3.3, 0.0))


def test_ti_energy_efficiency_improvement_with_interval():
    # t_sw = 100 us at 3 mA, t_hw = 10 us at 4 mA: (100*3)/(10*4) = 7.5
    r = energy_efficiency_improvement(100e-6, 3e-3, 10e-6, 4e-3, t_sw_ci=(99e-6, 101e-6), t_hw_ci=(9.9e-6, 10.1e-6),
                                      current_rel_unc=0.05)
    assert r["value"] == pytest.approx(7.5)
    assert r["duration_improvement"] == pytest.approx(10.0)
    lo, hi = r["ci"]
    assert lo == pytest.approx((99e-6 * 3e-3 * 0.95) / (10.1e-6 * 4e-3 * 1.05))
    assert hi == pytest.approx((101e-6 * 3e-3 * 1.05) / (9.9e-6 * 4e-3 * 0.95))
    assert lo < 7.5 < hi


def test_per_unit_and_pisa_fom():
    # 1 KiB in 1 ms using 2 mJ: 8192 bits -> 8.192 Mb/s, 2 mJ / 0.008192 Mb = 244.14 mJ/Mb
    r = per_unit(2e-3, 1e-3, 1024)
    assert r["throughput_Mbps"] == pytest.approx(8.192)
    assert r["mJ_per_Mb"] == pytest.approx(2 / 0.008192)
    assert r["fom"] == pytest.approx(8.192 / (2 / 0.008192))
    assert r["avg_power_w"] == pytest.approx(2.0)
    assert "mJ_per_Mb" not in per_unit(1e-3, 1e-3)


# ------------------------------------------- the cc2652 profile: TI SWRA667's own currents at 3.3 V
def test_cc2652_profile_takes_tis_measured_current_at_the_voltage_it_computes_with():
    """The TI CC13x2/CC26x2 report (SWRA667) measured every 'Average Current SW mbed TLS' (Tables
    6-16) at 3.10 mA on a LaunchPad powered with 3.3 V: the profile's active current is that figure,
    at that voltage, and says so (not the CC2652R data sheet's 3.4 mA, which is at 3.0 V)."""
    from cryptobench.references import load_reference
    ref = load_reference("ti-cc26x2")
    sw = {r.value for r in ref.rows if r.metric == "average_current" and r.source.engine_kind == "sw library"}
    assert sw == {3.10} and "3.3 V" in next(r.source.notes for r in ref.rows if r.source.engine_kind == "sw library")
    prof = load_profile("cc2652")
    assert prof.active_current_a == pytest.approx(3.10e-3, abs=1e-12)
    assert prof.supply_v == prof.current_at_v == 3.3
    assert prof.idle_current_a == pytest.approx(0.59e-3)                   # SWRA667 4.1, at 3.3 V
    assert "3.10 mA at 3.3 V" in prof.source and "SWRA667" in prof.source and "Tables 6-16" in prof.source


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_every_device_current_is_taken_at_its_supply_voltage(name):
    dev = DEVICES[name]
    assert dev.current_at_v in (0.0, dev.supply_v), f"{name}: current at {dev.current_at_v} V, energy at {dev.supply_v} V"


def test_a_profile_with_currents_at_another_voltage_is_refused(tmp_path):
    path = tmp_path / "board.toml"
    path.write_text("supply_v = 3.3\nactive_current_a = 0.0034\ncurrent_at_v = 3.0\n")
    with pytest.raises(ValueError, match=r"board.toml:3: the currents were measured at 3 V but supply_v is 3.3 V"):
        load_profile(str(path))
    path.write_text("supply_v = 3.0\nactive_current_a = 0.0034\ncurrent_at_v = 3.0\n")
    assert load_profile(str(path)).current_at_v == 3.0


@pytest.mark.e2e
def test_energy_model_states_current_voltage_and_their_source(tmp_path):
    p = cli("energy", "model", "--profile", "cc2652", "--time", "1e-3", "--json", str(tmp_path / "e.json"))
    assert p.returncode == 0, p.stderr
    assert "cc2652: E = t x 3.3 V x 3.1 mA (active) (provenance: modeled)" in p.stdout
    assert "inputs: 3.1 mA (active) at a 3.3 V supply (the current measured at 3.3 V); source: active 3.10 mA " \
           "at 3.3 V: measured by TI, 'Average Current SW mbed TLS' in TI SWRA667" in p.stdout
    doc = json.loads((tmp_path / "e.json").read_text())
    assert doc["per_op_j"] == pytest.approx(1e-3 * 3.3 * 3.10e-3)
    assert doc["supply_v"] == doc["current_at_v"] == 3.3 and doc["avg_current_a"] == pytest.approx(3.10e-3)
    # a profile that records no voltage for its current says that instead
    p = cli("energy", "model", "--profile", "stm32f030", "--time", "1e-3")
    assert p.returncode == 0 and "(the profile records no voltage the current was measured at)" in p.stdout

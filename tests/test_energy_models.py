"""Power models and the figures derived from energy, against hand-computed values."""
import pytest

from cryptobench.energy.models import PowerProfile, energy_efficiency_improvement, modeled_energy, per_unit


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

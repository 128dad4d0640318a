"""ML-DSA signing's per-execution distribution on microcontroller targets (issue 35): how many timed
executions a cell asks its image for (targets/mcu/executions.py), each one sample (k = 1), and the
summary result["distribution"] the record carries (stats/distribution.py, docs/schema.md)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cryptobench.catalog.ops import OPS
from cryptobench.core.records import Options
from cryptobench.stats.distribution import quantile, summarize_distribution
from cryptobench.targets.mcu.executions import cell_executions, kept_repetitions
from cryptobench.targets.mcu.target import McuTarget
from cryptobench.targets.mcu.transports import QEMU_REPEAT, SIM_REPEAT


def _opts(repeat=20, overrides=()):
    return Options(repeat=repeat, overrides=list(overrides))


def test_only_ml_dsa_signing_varies_by_design_and_its_default_is_pqm4s_1000():
    assert OPS["ml-dsa-sign"].executions == 1000            # pqm4 benchmarks.md: "ml-dsa-65 (1000 executions)"
    assert [o.id for o in OPS.values() if o.executions] == ["ml-dsa-sign"]


def test_simulator_signs_many_times_but_keeps_its_two_repetitions_for_other_ops():
    kept = kept_repetitions(192 * 1024)                     # an STM32F407's RAM: the image keeps 256
    assert kept == 256
    ex = cell_executions("ml-dsa-sign", None, _opts(), SIM_REPEAT, False, kept)
    assert (ex.repeat, ex.asked, ex.source) == (256, 1000, "op")
    for op in ("ml-dsa-verify", "ml-dsa-keygen", "ecdsa-sign"):
        assert cell_executions(op, None, _opts(), SIM_REPEAT, False, kept).repeat == SIM_REPEAT
    # a small board keeps fewer
    assert cell_executions("ml-dsa-sign", None, _opts(), SIM_REPEAT, False, kept_repetitions(16 * 1024)).repeat == 64


def test_qemu_has_no_cycle_model_so_one_execution_even_for_signing():
    ex = cell_executions("ml-dsa-sign", None, _opts(), QEMU_REPEAT, True, 256)
    assert (ex.repeat, ex.source) == (1, "transport")


@pytest.mark.parametrize("bench, overrides, repeat, want", [
    (None, ["repeat"], 40, (40, "option")),       # --repeat 40 on the command line
    (100, [], 20, (100, "bench")),                # the suite's bench gives its own
    (100, ["repeat"], 40, (40, "option")),        # the command line overrides a bench's own
    (None, [], 20, (256, "op")),                  # the suite's plain repeat does not lower the op's own
])
def test_where_a_signing_cells_count_comes_from(bench, overrides, repeat, want):
    ex = cell_executions("ml-dsa-sign", bench, _opts(repeat, overrides), SIM_REPEAT, False, 256)
    assert (ex.repeat, ex.source) == want


def test_boards_without_a_fixed_count_keep_the_old_rule_for_other_ops():
    assert cell_executions("sha256", 7, _opts(20), None, False, 256).repeat == 7
    assert cell_executions("sha256", None, _opts(20), None, False, 256).repeat == 20
    assert cell_executions("sha256", None, _opts(1000), None, False, 256).repeat == 256     # the image's limit


def test_summary_of_the_distribution():
    xs = [5.0, 9.0, 12.0, 12.4, 13.0, 16.0, 20.5]
    d = summarize_distribution(xs, "cycles per execution")
    assert d["n"] == 7 and d["min"] == 5.0 and d["max"] == 20.5 and d["max_over_min"] == 4.1
    assert d["mean"] == pytest.approx(sum(xs) / 7) and d["p50"] == 12.4
    assert d["p10"] == pytest.approx(5.0 + 0.6 * 4.0)            # linear between order statistics
    assert quantile(sorted(xs), 0.9) == d["p90"]
    assert set(d) >= {"of", "stdev", "p25", "p75", "p99"}
    with pytest.raises(ValueError):
        summarize_distribution([], "cycles")


class _Reading:
    def cycles(self, n, line):
        return [int(c) for c in line["cyc"]], 2

    def annotate(self, n, op, params, result):
        pass


def _target():
    """Just what McuTarget._result reads: a simulated transport at 24 MHz on an STM32F4DISCOVERY."""
    transport = SimpleNamespace(provenance="simulated", clock_hz=lambda: 24e6, counter=lambda r: "model")
    target = SimpleNamespace(functional_only=False, transport=transport, board=SimpleNamespace(name="stm32f4discovery"))
    target._distribution = lambda *a: McuTarget._distribution(target, *a)
    return target


t = _target()


def test_signing_cell_keeps_every_execution_and_summarizes_it():
    cyc = [5_100_000, 9_000_000, 12_000_000, 12_400_000, 20_500_000]
    ex = cell_executions("ml-dsa-sign", None, _opts(), SIM_REPEAT, False, 5)      # an image that keeps 5
    line = {"stack": 79600, "heap": 0, "cyc": cyc}
    result, samples = McuTarget._result(t, 0, "ml-dsa-sign", {"level": 65, "bytes": 59}, line, {}, SimpleNamespace(hello={}),
                                        _Reading(), ex)
    assert [s[0] for s in samples] == [1] * 5 and [s[2] for s in samples] == cyc      # k = 1, each execution
    d = result["distribution"]
    assert d["n"] == 5 and d["min"] == 5_100_000 and d["max"] == 20_500_000 and d["p50"] == 12_000_000
    assert d["of"] == "cycles per execution" and d["provenance"] == "simulated"
    assert (d["executions_asked"], d["executions_from"]) == (1000, "op")
    assert "keeps 5 timed repetitions" in d["limited_by"] and "stm32f4discovery" in d["limited_by"]
    assert result["k"] == 1 and result["n"] == 5


def test_other_ops_carry_no_distribution():
    ex = cell_executions("ml-dsa-verify", None, _opts(), SIM_REPEAT, False, 256)
    result, _ = McuTarget._result(t, 0, "ml-dsa-verify", {"level": 65, "bytes": 59},
                                  {"stack": 1, "heap": 0, "cyc": [10, 10]}, {}, SimpleNamespace(hello={}), _Reading(), ex)
    assert "distribution" not in result

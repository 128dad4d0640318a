"""Statistics against values computed by hand (worked in the comments)."""
import math

import pytest

from cryptobench.stats.summary import (flags_for, median_ci_ranks, quantile, ratio_ci, summarize,
                               tukey_outliers)


def test_summary_of_five_values_with_an_outlier():
    s = summarize([3.0, 1.0, 100.0, 2.0, 4.0])
    assert s.n == 5
    assert s.median == 3.0
    assert s.mean == 22.0                       # 110 / 5
    # deviations -21 -20 -19 -18 78 -> squares sum 7610; / (n-1) = 1902.5
    assert s.stdev == pytest.approx(math.sqrt(1902.5))
    assert s.rsd_pct == pytest.approx(100 * math.sqrt(1902.5) / 22.0)   # 198.26 %
    assert (s.min, s.max) == (1.0, 100.0)
    # Q1 = 2, Q3 = 4 (linear interpolation), IQR 2, fences -1 and 7: only 100 is outside
    assert s.outliers == 1
    # n = 5 cannot reach 95 %: the interval is (min, max) with coverage 1 - 2/32
    assert s.ci95 == (1.0, 100.0)
    assert s.ci_coverage == pytest.approx(1 - 2 / 32)


def test_median_interval_ranks_match_the_binomial_table():
    # n = 10: P(B<=1) = 11/1024, doubled 0.0215 <= 0.05; P(B<=2) = 56/1024 doubled 0.109 > 0.05
    assert median_ci_ranks(10)[:2] == (2, 9)
    assert median_ci_ranks(10)[2] == pytest.approx(1 - 22 / 1024)
    # n = 6: P(B<=0) = 1/64, doubled 0.03125 -> ranks (1, 6), coverage 0.96875
    assert median_ci_ranks(6) == (1, 6, pytest.approx(1 - 2 / 64))
    # n = 20: the classic table gives ranks 6 and 15 (coverage 95.86 %)
    l, u, cov = median_ci_ranks(20)
    assert (l, u) == (6, 15)
    assert cov == pytest.approx(0.9586, abs=1e-4)


def test_even_count_median_and_quantiles():
    s = summarize([4.0, 1.0, 3.0, 2.0])
    assert s.median == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert tukey_outliers([1.0, 2.0, 3.0]) == 0       # too few values to judge


def test_single_sample_has_zero_spread():
    s = summarize([5.0])
    assert (s.median, s.stdev, s.rsd_pct) == (5.0, 0.0, 0.0)


def test_flags():
    s = summarize([1.0, 1.2, 0.8, 1.0, 1.0, 1.0])     # rsd ~12.6 %
    flags = flags_for(s, batch_ns_median=500, timer_floor_ns=20)
    assert "high-rsd" in flags
    assert "near-timer-resolution" in flags          # 500 ns < 1000 x 20 ns
    calm = summarize([1.0] * 10)
    assert flags_for(calm, batch_ns_median=10_000_000, timer_floor_ns=20) == []


def test_ratio_of_medians_and_interval():
    base = [2.0] * 10
    eng = [1.0] * 10
    ratio, (lo, hi) = ratio_ci(base, eng)
    assert ratio == 2.0 and lo == 2.0 and hi == 2.0
    base = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0, 10.2, 9.8]
    eng = [5.0, 5.5, 4.5, 5.0, 5.2, 4.8, 5.1, 4.9]
    ratio, (lo, hi) = ratio_ci(base, eng)
    assert ratio == pytest.approx(10.0 / 5.0)
    assert lo <= ratio <= hi
    assert ratio_ci(base, eng) == ratio_ci(base, eng)   # seeded: reproducible


def test_large_n_ranks_from_the_float_tail_equal_the_exact_ones(monkeypatch):
    """Above EXACT_RANKS_MAX_N the binomial tail is summed in floating point (energy traces give
    hundreds of thousands of windows); just above the switch it must pick the exact path's ranks."""
    import cryptobench.stats.summary as st
    l, u, cov = st.median_ci_ranks(333_332)           # a 100-million-sample trace's window count
    assert l + u == 333_333 and 0.95 <= cov < 0.951
    ns = range(st.EXACT_RANKS_MAX_N + 1, st.EXACT_RANKS_MAX_N + 25)
    floats = [st.median_ci_ranks(n) for n in ns]
    monkeypatch.setattr(st, "EXACT_RANKS_MAX_N", 10 ** 9)
    exact = [st.median_ci_ranks(n) for n in ns]
    assert [f[:2] for f in floats] == [e[:2] for e in exact]
    assert [f[2] for f in floats] == pytest.approx([e[2] for e in exact], rel=1e-9)

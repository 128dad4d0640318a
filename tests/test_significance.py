"""The Mann-Whitney U test (stats/significance.py) against hand-checkable values and against a brute-force
enumeration of every permutation of the pooled sample."""
import itertools
import math

import pytest

from cryptobench.stats.significance import mann_whitney_u, median_ratio, ranks, u_counts


def _u(a, b):
    """U of a by its definition: pairs with a > b, ties counted one half."""
    return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)


def _permutation_p(a, b):
    """Exact two-sided permutation p of U: the share of all C(n, n_a) splits of the pooled values whose
    U lies at least as far from n_a·n_b/2 as the observed one (ties kept as they are)."""
    pool = list(a) + list(b)
    n1, mu = len(a), len(a) * len(b) / 2
    observed = abs(_u(a, b) - mu)
    hits = total = 0
    for idx in itertools.combinations(range(len(pool)), n1):
        chosen = set(idx)
        u = _u([pool[i] for i in idx], [pool[i] for i in range(len(pool)) if i not in chosen])
        hits += abs(u - mu) >= observed - 1e-9
        total += 1
    return hits / total


def test_fully_separated_five_and_five_is_two_in_252():
    r = mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert r["method"] == "exact" and r["u"] == 0
    assert r["p"] == pytest.approx(2 / 252) and r["p"] == pytest.approx(0.00794, abs=1e-5)
    flipped = mann_whitney_u([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
    assert flipped["u"] == 25 and flipped["p"] == pytest.approx(2 / 252)


def test_fully_separated_ten_and_ten_and_three_and_three():
    assert mann_whitney_u(range(10), range(10, 20))["p"] == pytest.approx(2 / math.comb(20, 10))
    assert mann_whitney_u([1, 2, 3], [4, 5, 6])["p"] == pytest.approx(2 / 20)


def test_identical_samples_give_p_one():
    r = mann_whitney_u([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0])
    assert r["p"] == 1.0 and r["u"] == 8.0            # n_a·n_b/2
    assert mann_whitney_u([5.0] * 6, [5.0] * 6)["p"] == 1.0     # every value tied: no evidence at all


def test_null_distribution_counts_small_cases_by_hand():
    # n=3/3: U values 0..9 arise 1,1,2,3,3,3,3,2,1,1 times among the C(6,3)=20 orderings
    assert u_counts(3, 3) == (1, 1, 2, 3, 3, 3, 3, 2, 1, 1)
    assert u_counts(1, 4) == (1, 1, 1, 1, 1)
    for n1, n2 in [(2, 5), (4, 6), (7, 3), (12, 9)]:
        counts = u_counts(n1, n2)
        assert sum(counts) == math.comb(n1 + n2, n1) and counts == counts[::-1]


def test_ranks_average_ties():
    r, ties = ranks([10, 20, 20, 30, 20, 5])
    assert r == [2, 4, 4, 6, 4, 1] and ties == [3]


@pytest.mark.parametrize("a,b", [
    ([1.1, 2.5, 3.3, 4.0, 7.2, 9.9], [2.0, 5.5, 6.1, 8.8, 10.2, 11.0, 12.5]),
    ([0.3, 0.9, 1.7, 2.2, 2.4], [0.1, 0.5, 0.6, 1.0, 1.2, 1.4]),
    ([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.6], [2.7, 1.8, 2.8, 8.0, 4.5]),
])
def test_exact_p_equals_brute_force_enumeration(a, b):
    r = mann_whitney_u(a, b)
    assert r["method"] == "exact"
    assert r["u"] == _u(a, b)
    assert r["p"] == pytest.approx(_permutation_p(a, b), rel=1e-12)


@pytest.mark.parametrize("a,b", [
    ([1, 2, 2, 3, 4, 4, 4, 6], [3, 4, 5, 5, 6, 7, 7, 8]),
    ([10, 11, 11, 12, 13, 13, 14, 15], [11, 12, 13, 14, 15, 15, 16, 16]),
    ([2, 2, 3, 3, 3, 4, 5, 6, 6], [1, 1, 2, 2, 3, 3, 4, 4]),
])
def test_normal_approximation_with_ties_is_close_to_the_permutation_p(a, b):
    r = mann_whitney_u(a, b)
    assert r["method"] == "normal"                    # ties: the exact table does not apply
    assert r["u"] == _u(a, b)
    assert r["p"] == pytest.approx(_permutation_p(a, b), abs=0.02)


def test_normal_approximation_against_a_worked_value():
    # a = 1..8, b = 5..12 (5, 6, 7, 8 in both: four pairs of ties), worked by hand:
    # pooled ranks: 1..4 -> 1..4; values 5,6,7,8 appear twice -> ranks 5.5, 7.5, 9.5, 11.5; 9..12 -> 13..16
    # R_a = 1+2+3+4 + 5.5+7.5+9.5+11.5 = 44, U = 44 - 36 = 8; mu = 32
    # var = 64/12 * (17 - 4*(8-2)/(16*15)) = 64/12 * 16.9 = 90.1333…; z = (24 - 0.5)/sqrt(90.1333) = 2.47530…
    r = mann_whitney_u(list(range(1, 9)), list(range(5, 13)))
    assert r["u"] == 8 and r["method"] == "normal"
    z = 23.5 / math.sqrt(64 / 12 * 16.9)
    assert r["p"] == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-12)
    assert r["p"] == pytest.approx(0.01331, abs=5e-5)


def test_forced_methods_and_bad_input():
    a, b = [1.0, 2.0, 3.5, 4.0], [3.0, 5.0, 6.0, 7.0, 8.0]
    assert mann_whitney_u(a, b, method="normal")["method"] == "normal"
    assert mann_whitney_u(a, b, method="exact")["p"] == pytest.approx(_permutation_p(a, b))
    with pytest.raises(ValueError):
        mann_whitney_u([1, 2, 2], [2, 3], method="exact")
    with pytest.raises(ValueError):
        mann_whitney_u([], [1.0])
    with pytest.raises(ValueError):
        mann_whitney_u([1.0, float("nan")], [1.0])


def test_large_samples_use_the_normal_approximation_and_agree_in_direction():
    a = [1.0 + i / 1000 for i in range(60)]
    b = [1.03 + i / 1000 for i in range(60)]
    r = mann_whitney_u(a, b)
    assert r["method"] == "normal" and r["p"] < 0.01 and r["u"] < 60 * 60 / 2
    assert mann_whitney_u(b, a)["p"] == pytest.approx(r["p"])


def test_median_ratio():
    assert median_ratio([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(2.0)
    assert median_ratio([0.0, 0.0, 1.0], [1.0]) is None

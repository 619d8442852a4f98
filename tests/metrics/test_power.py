"""Power floors: whether an AUC or TPR interval could clear a threshold at all with so many records.

Each claim is checked against the interval functions themselves: at the size the functions name, some scores
give an interval above the threshold; one record fewer, no scores do (every ranking where that is feasible,
random near-perfect rankings with swaps and ties beyond).
"""

import itertools
import math
import warnings

import numpy as np
import pytest

from leakaudit.exceptions import InvalidParameterError
from leakaudit.metrics import (
    auc_ci_can_exceed,
    bootstrap_auc_ci,
    bootstrap_tpr_at_fpr_ci,
    min_nonmembers_for_tpr,
    min_records_for_auc,
    tpr_ci_can_exceed,
)


def _labels(n1, n0):
    return np.r_[np.ones(n1, int), np.zeros(n0, int)]


def _perfect(n1, n0):
    return np.r_[n0 + np.arange(n1, dtype=float), np.arange(n0, dtype=float)]


def _lower(n1, n0, s, confidence=0.95):
    return bootstrap_auc_ci(_labels(n1, n0), s, confidence=confidence)[0]


def _near_perfect(n1, n0, rng, n_rankings):
    """Random rankings a few steps from perfect separation: adjacent member/non-member swaps near the boundary,
    ties between them, and shuffled input order (which the exact interval's pairing depends on)."""
    for _ in range(n_rankings):
        s = _perfect(n1, n0)
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(0, min(3, n1)))  # one of the lowest members ...
            j = n1 + n0 - 1 - int(rng.integers(0, min(3, n0)))  # ... against one of the highest non-members
            if rng.random() < 0.5:
                s[i], s[j] = s[j], s[i]
            else:
                s[i] = s[j]
        perm = np.r_[rng.permutation(n1), n1 + rng.permutation(n0)]
        yield s[perm]


def _best_lower_by_search(n1, n0, confidence=0.95, rng=None, n_random=300):
    """The largest lower bound over every ranking of distinct scores (when there are at most 1,000), or over
    perfect separation and random near-perfect rankings."""
    best = _lower(n1, n0, _perfect(n1, n0), confidence)
    if math.comb(n1 + n0, n1) <= 1000:
        for pos in itertools.combinations(range(n1 + n0), n1):
            s = np.r_[np.array(pos, float), np.setdiff1d(np.arange(n1 + n0), pos).astype(float)]
            best = max(best, _lower(n1, n0, s, confidence))
    for s in _near_perfect(n1, n0, rng or np.random.default_rng(0), n_random):
        best = max(best, _lower(n1, n0, s, confidence))
    return best


# ---------------------------------------------------------------------------------------------------- AUC


@pytest.mark.parametrize("confidence", [0.95, 0.99])
@pytest.mark.parametrize("threshold", [0.5, 0.6, 0.75, 0.9, 0.95, 0.99])
def test_min_records_for_auc_is_the_first_size_some_scores_exceed(threshold, confidence):
    n = min_records_for_auc(threshold, confidence=confidence)
    assert auc_ci_can_exceed(n, n, threshold, confidence=confidence)
    # at n: some actual scores give an interval above the threshold (perfect, or one tie at the boundary)
    tied = _perfect(n, n)
    tied[0] = n - 1.0
    assert max(_lower(n, n, _perfect(n, n), confidence), _lower(n, n, tied, confidence)) > threshold
    if n > 1:
        assert not auc_ci_can_exceed(n - 1, n - 1, threshold, confidence=confidence)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            best = _best_lower_by_search(n - 1, n - 1, confidence, n_random=150)
        assert best <= threshold, (n, best)


def test_exact_regime_matches_the_closed_form():
    # below the size rule a perfect attack's bound is (alpha/2)^(1/k): 0.9 needs k = 36 (0.025^(1/35) = 0.89997)
    assert 0.025 ** (1 / 35) < 0.9 < 0.025 ** (1 / 36)
    assert min_records_for_auc(0.9, ratio=10) == 36  # 360 members, 36 non-members: the exact interval
    assert auc_ci_can_exceed(360, 36, 0.9) and not auc_ci_can_exceed(350, 35, 0.9)
    assert _lower(360, 36, _perfect(360, 36)) == pytest.approx(0.025 ** (1 / 36))
    # balanced below 10 per class: also exact
    assert min_records_for_auc(0.5) == 6 and 0.025 ** (1 / 5) < 0.5 < 0.025 ** (1 / 6)


def test_one_tied_pair_beats_perfect_separation_under_delong():
    """Why the functions look beyond perfect separation: at 10 + 10 records (DeLong's interval) perfect
    separation falls back to the exact interval, lower bound 0.025^(1/10) = 0.69, while one tied pair gives
    0.92 -- an attack there can show AUC > 0.9, so "cannot be exceeded" would be false."""
    p = _perfect(10, 10)
    tied = p.copy()
    tied[0] = 9.0
    assert _lower(10, 10, p) == pytest.approx(0.025 ** 0.1)
    assert _lower(10, 10, tied) > 0.9
    assert auc_ci_can_exceed(10, 10, 0.9)
    assert min_records_for_auc(0.9) == 10 and not auc_ci_can_exceed(9, 9, 0.9)


@pytest.mark.parametrize("size", [(10, 10), (12, 15), (40, 30), (100, 300), (150, 100)])
def test_no_near_perfect_ranking_beats_the_reported_best(size):
    from leakaudit.metrics._intervals import _best_auc_lower

    n1, n0 = size
    best = _best_auc_lower(n1, n0, 0.95)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = _best_lower_by_search(n1, n0, n_random=200, rng=np.random.default_rng(n1 * n0))
    assert found == pytest.approx(best, abs=1e-12)  # attained by one of its rankings and never beaten


def test_more_records_in_the_larger_class_can_lose_power():
    # the size rule's DeLong interval holds up to 1.5 times as many in the larger class; beyond, the exact one
    assert auc_ci_can_exceed(10, 15, 0.9) and not auc_ci_can_exceed(10, 16, 0.9)
    assert auc_ci_can_exceed(16, 10, 0.9) is False


def test_auc_threshold_one_is_never_exceeded_and_bad_arguments():
    assert not auc_ci_can_exceed(10**5, 10**5, 1.0)
    with pytest.raises(InvalidParameterError, match="n_members"):
        auc_ci_can_exceed(0, 5, 0.5)
    with pytest.raises(InvalidParameterError, match="n_nonmembers"):
        auc_ci_can_exceed(5, 2.5, 0.5)
    with pytest.raises(InvalidParameterError, match="threshold"):
        auc_ci_can_exceed(5, 5, 1.5)
    with pytest.raises(InvalidParameterError, match="confidence"):
        auc_ci_can_exceed(5, 5, 0.5, confidence=1.0)
    with pytest.raises(InvalidParameterError, match="threshold"):
        min_records_for_auc(1.0)
    with pytest.raises(InvalidParameterError, match="ratio"):
        min_records_for_auc(0.9, ratio=0.0)


# ---------------------------------------------------------------------------------------------------- TPR


def _tpr_lower(n1, n0, fpr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bootstrap_tpr_at_fpr_ci(_labels(n1, n0), _perfect(n1, n0), fpr)[0]


def test_tpr_at_fpr_0001_cannot_be_exceeded_with_1000_nonmembers():
    # the upper order statistic is finite once P(no non-member above the true quantile) = 0.999^n0 <= 0.05 / 4
    n0 = math.ceil(math.log(0.0125) / math.log(1 - 0.001))
    assert n0 == 4380
    assert not tpr_ci_can_exceed(1000, 1000, 0.001, 0.0)  # no attack shows any TPR at 0.1% FPR
    assert _tpr_lower(1000, 1000, 0.001) == 0.0
    assert min_nonmembers_for_tpr(0.001, 0.05, n_members=1000) == n0
    assert _tpr_lower(1000, n0 - 1, 0.001) == 0.0 and _tpr_lower(1000, n0, 0.001) > 0.05
    assert not tpr_ci_can_exceed(1000, n0 - 1, 0.001, 0.05) and tpr_ci_can_exceed(1000, n0, 0.001, 0.05)


@pytest.mark.parametrize("fpr,threshold,expected", [(0.1, 0.5, 42), (0.1, 0.95, 86), (0.01, 0.1, 437)])
def test_min_nonmembers_balanced_closed_form(fpr, threshold, expected):
    # balanced: n0 for a finite upper order statistic, and 0.0125^(1/n) > threshold for a perfect attack's bound
    n_fin = math.ceil(math.log(0.0125) / math.log(1 - fpr))
    n_members = math.floor(math.log(0.0125) / math.log(threshold)) + 1
    assert max(n_fin, n_members) == expected
    n = min_nonmembers_for_tpr(fpr, threshold)
    assert n == expected
    assert _tpr_lower(n, n, fpr) > threshold >= _tpr_lower(n - 1, n - 1, fpr)
    assert _tpr_lower(n, n, fpr) == pytest.approx(0.0125 ** (1 / n))


def test_no_scores_beat_perfect_separation_for_tpr():
    rng = np.random.default_rng(3)
    n1, n0, fpr = 30, 60, 0.1
    best = _tpr_lower(n1, n0, fpr)
    m = _labels(n1, n0)
    for _ in range(200):
        s = _perfect(n1, n0)
        s[: rng.integers(0, 5)] -= rng.uniform(0, n0, 1)  # some members fall among the non-members
        lo = bootstrap_tpr_at_fpr_ci(m, s[np.r_[rng.permutation(n1), n1 + rng.permutation(n0)]], fpr)[0]
        assert lo <= best


def test_too_few_members_for_any_number_of_nonmembers():
    # 3 members: a perfect attack's bound is 0.0125^(1/3) = 0.23 at most; 0.5 needs 7 members (0.0125^(1/7) = 0.53)
    assert 0.0125 ** (1 / 6) <= 0.5 < 0.0125 ** (1 / 7)
    with pytest.raises(InvalidParameterError, match=r"n_members=3 .* at least 7 members and 437 non-members"):
        min_nonmembers_for_tpr(0.01, 0.5, n_members=3)
    assert not tpr_ci_can_exceed(3, 10**6, 0.01, 0.5)
    assert min_nonmembers_for_tpr(0.01, 0.5, n_members=7) == 437


def test_tpr_not_estimable_and_bad_arguments():
    assert not tpr_ci_can_exceed(100, 50, 0.01, 0.0)  # 50 * 0.01 < 1: no interval at all
    with pytest.raises(InvalidParameterError, match="fpr"):
        tpr_ci_can_exceed(10, 10, 0.0, 0.5)
    with pytest.raises(InvalidParameterError, match="threshold"):
        min_nonmembers_for_tpr(0.1, 1.0)
    with pytest.raises(InvalidParameterError, match="n_members"):
        min_nonmembers_for_tpr(0.1, 0.5, n_members=0)
    with pytest.raises(InvalidParameterError, match="confidence"):
        tpr_ci_can_exceed(10, 10, 0.1, 0.5, confidence=0.0)


@pytest.mark.slow
def test_every_ranking_at_10_plus_10_stays_below_the_reported_best():
    """Exhaustive (184,756 rankings of distinct scores) where DeLong's interval is first used."""
    from leakaudit.metrics._intervals import _best_auc_lower

    best = _best_auc_lower(10, 10, 0.95)
    m = _labels(10, 10)
    found = 0.0
    for pos in itertools.combinations(range(20), 10):
        s = np.r_[np.array(pos, float), np.setdiff1d(np.arange(20), pos).astype(float)]
        found = max(found, bootstrap_auc_ci(m, s)[0])
    assert found <= best + 1e-12

"""DeLong's AUC variance (Sun & Xu's fast algorithm) and the AUC interval methods, against references."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from leakaudit.exceptions import InvalidParameterError
from leakaudit.metrics import (
    AUC_CI_METHODS,
    bootstrap_auc_ci,
    clopper_pearson,
    delong_auc_variance,
    delong_placements,
    evaluate_membership,
)
from leakaudit.metrics._intervals import _bca_acceleration, _midranks


def _brute_delong(m, s):
    """DeLong et al. (1988) eqs. 3-5 by the O(m n) definition."""
    x, y = s[m == 1], s[m == 0]
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), v10, v01, v10.var(ddof=1) / x.size + v01.var(ddof=1) / y.size


@pytest.mark.parametrize("seed", range(4))
def test_placements_and_variance_equal_the_definition(seed):
    rng = np.random.default_rng(seed)
    m = (rng.random(57) < 0.4).astype(int)
    m[:2], m[2:4] = 1, 0
    s = np.round(rng.normal(size=57) + 0.6 * m, 1)  # rounded: many ties
    a, v10, v01, var = _brute_delong(m, s)
    a2, w10, w01 = delong_placements(m, s)
    np.testing.assert_allclose([a2], [a], rtol=0, atol=1e-12)
    np.testing.assert_allclose(w10, v10, atol=1e-12)
    np.testing.assert_allclose(w01, v01, atol=1e-12)
    a3, var3 = delong_auc_variance(m, s)
    assert a3 == pytest.approx(roc_auc_score(m, s), abs=1e-12)
    assert var3 == pytest.approx(var, rel=1e-10)


def test_hand_computed_variance():
    # members 3, 1; non-members 2, 0: psi = [[1, 1], [0, 1]] -> AUC 3/4,
    # V10 = (1, 1/2), V01 = (1/2, 1); var = (1/8)/2 + (1/8)/2 = 1/8
    a, var = delong_auc_variance([1, 1, 0, 0], [3.0, 1.0, 2.0, 0.0])
    assert a == 0.75 and var == pytest.approx(0.125)


def test_midranks_equal_scipy():
    rng = np.random.default_rng(0)
    for x in (rng.normal(size=40), np.round(rng.normal(size=200), 1), np.zeros(6), np.array([2.0])):
        np.testing.assert_array_equal(_midranks(x), stats.rankdata(x, method="average"))


def test_delong_logit_interval_formula():
    rng = np.random.default_rng(3)
    m = np.r_[np.ones(80, int), np.zeros(120, int)]
    s = rng.normal(size=200) + 0.7 * m
    a, var = delong_auc_variance(m, s)
    z = stats.norm.ppf(0.975)
    lg, se = np.log(a / (1 - a)), np.sqrt(var) / (a * (1 - a))
    want = stats.logistic.cdf([lg - z * se, lg + z * se])
    np.testing.assert_allclose(bootstrap_auc_ci(m, s), want, rtol=1e-12)
    np.testing.assert_allclose(bootstrap_auc_ci(m, s, method="delong"),
                               [a - z * np.sqrt(var), a + z * np.sqrt(var)], rtol=1e-12)


def test_perfect_separation_gives_the_clopper_pearson_interval_of_disjoint_pairs():
    m = np.r_[np.ones(7, int), np.zeros(10, int)]
    s = np.r_[np.arange(10, 17), np.arange(10)].astype(float)
    lo, hi = bootstrap_auc_ci(m, s)
    assert (lo, hi) == (clopper_pearson(7, 7)[0], 1.0)
    assert lo == pytest.approx(0.025 ** (1 / 7))
    lo, hi = bootstrap_auc_ci(m, -s, method="delong")
    assert (lo, hi) == (0.0, clopper_pearson(0, 7)[1])
    assert bootstrap_auc_ci(m, np.zeros(17)) == (0.0, 1.0)  # every score tied: no information


def test_single_member_falls_back_to_a_valid_interval():
    lo, hi = bootstrap_auc_ci([1, 0, 0, 0], [0.9, 0.1, 0.2, 0.95])
    assert 0.0 <= lo <= hi <= 1.0 and hi == 1.0


def test_bca_acceleration_equals_the_brute_force_jackknife():
    rng = np.random.default_rng(1)
    m = np.r_[np.ones(15, int), np.zeros(12, int)]
    s = rng.normal(size=27) + m
    _, v10, v01 = delong_placements(m, s)
    num = den = 0.0
    for cls in (1, 0):
        idx = np.flatnonzero(m == cls)
        jack = np.array([roc_auc_score(np.delete(m, i), np.delete(s, i)) for i in idx])
        u = (idx.size - 1) * (jack.mean() - jack)
        num += np.sum(u**3) / idx.size**3
        den += np.sum(u**2) / idx.size**2
    assert _bca_acceleration(v10, v01) == pytest.approx(num / (6 * den**1.5), rel=1e-9)


@pytest.mark.parametrize("method", AUC_CI_METHODS)
def test_every_method_brackets_the_estimate_and_is_deterministic(method):
    rng = np.random.default_rng(4)
    m = np.r_[np.ones(150, int), np.zeros(150, int)]
    s = rng.normal(size=300) + 0.5 * m
    lo, hi = bootstrap_auc_ci(m, s, method=method, n_boot=400, random_state=2)
    assert 0 < lo < roc_auc_score(m, s) < hi < 1
    assert (lo, hi) == bootstrap_auc_ci(m, s, method=method, n_boot=400, random_state=2)


def test_bad_method_is_our_error():
    with pytest.raises(InvalidParameterError, match="method"):
        bootstrap_auc_ci([1, 0], [0.2, 0.1], method="wald")


def test_evaluate_membership_uses_the_chosen_method():
    rng = np.random.default_rng(6)
    m = np.r_[np.ones(200, int), np.zeros(200, int)]
    s = rng.normal(size=400) + 0.4 * m
    r = evaluate_membership(m, s, fprs=(0.1,), n_boot=200, random_state=0)
    assert tuple(r.auc_ci) == bootstrap_auc_ci(m, s)
    r = evaluate_membership(m, s, fprs=(0.1,), n_boot=200, random_state=0, auc_ci_method="percentile")
    assert tuple(r.auc_ci) == bootstrap_auc_ci(m, s, n_boot=200, random_state=0, method="percentile")


def test_tpr_at_subnormal_fpr_is_not_estimable_not_a_crash():
    """Found by the long fuzz run: fpr = 5e-324 made 1 / fpr infinite and int() overflow."""
    import warnings

    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.metrics import tpr_at_fpr

    with pytest.warns(NotEstimableWarning, match="need at least inf"):
        assert np.isnan(tpr_at_fpr([1, 0], [0.0, 0.0], 5e-324))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        assert np.isnan(tpr_at_fpr([1, 0, 0], [0.5, 0.1, 0.2], 1e-300))

"""The TPR-at-fixed-FPR interval: distribution-free order-statistic bounds (default) vs the bootstrap."""

import warnings

import numpy as np
import pytest
from scipy import stats

from leakaudit.exceptions import InvalidParameterError
from leakaudit.metrics import bootstrap_tpr_at_fpr_ci, tpr_at_fpr


def _coverage(method, n, d, fpr, sims, seed=11):
    truth = 1 - stats.norm.cdf(stats.norm.ppf(1 - fpr) - d)
    m = np.r_[np.ones(n, int), np.zeros(n, int)]
    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(sims):
        s = np.r_[rng.normal(d, 1, n), rng.normal(0, 1, n)]
        lo, hi = bootstrap_tpr_at_fpr_ci(m, s, fpr, n_boot=200, random_state=i, method=method)
        hits += lo <= truth <= hi
    return hits / sims


def test_order_statistic_interval_covers_where_the_bootstrap_does_not():
    # 100 + 100 records at FPR 0.01: the threshold rests on the single top non-member
    sims = 400
    se = np.sqrt(0.95 * 0.05 / sims)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cov_os = _coverage("order-statistic", 100, 1.81, 0.01, sims)
        cov_bs = _coverage("bootstrap", 100, 1.81, 0.01, 150)
    assert cov_os >= 0.95 - 3 * se, cov_os  # valid (measured 0.999: conservative by construction)
    assert cov_bs < 0.9, cov_bs  # the percentile bootstrap under-covers here (measured 0.76)


def test_order_statistic_bounds_by_hand():
    # 20 non-members 0..19 (descending 19..0), fpr 0.1, confidence 0.5 -> alpha/4 = 0.125 each side
    neg = np.arange(20.0)
    pos = np.array([25.0, 18.5, 17.5, 16.5, 10.5, 3.5])
    m = np.r_[np.ones(pos.size, int), np.zeros(neg.size, int)]
    s = np.r_[pos, neg]
    b = stats.binom(20, 0.1)
    j_hi = max(j for j in range(20) if b.sf(j) >= 0.875)  # = 0: neg_desc[0] = 19 (sf(0) = 0.878)
    j_lo = int(b.ppf(0.875))  # = 4: neg_desc[4] = 15
    assert (j_hi, j_lo) == (0, 4)
    k_lo, k_hi = 1, 4  # members above 19 and above 15
    lo, hi = bootstrap_tpr_at_fpr_ci(m, s, 0.1, confidence=0.5)
    assert lo == pytest.approx(stats.beta.ppf(0.125, k_lo, 6 - k_lo + 1))
    assert hi == pytest.approx(stats.beta.ppf(0.875, k_hi + 1, 6 - k_hi))
    assert lo <= tpr_at_fpr(m, s, 0.1) <= hi


def test_tpr_interval_method_is_checked():
    m, s = np.r_[np.ones(10, int), np.zeros(10, int)], np.arange(20.0)
    with pytest.raises(InvalidParameterError, match="method"):
        bootstrap_tpr_at_fpr_ci(m, s, 0.1, method="wald")

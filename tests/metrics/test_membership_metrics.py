import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from leakaudit.exceptions import InvalidInputError, NotEstimableWarning
from leakaudit.metrics import (
    advantage_at_threshold,
    auc,
    bootstrap_auc_ci,
    bootstrap_tpr_at_fpr_ci,
    clopper_pearson,
    decision_metrics,
    evaluate_membership,
    membership_advantage,
    pearson,
    tpr_at_fpr,
)

# Hand-computed case: 4 members, 4 non-members.
M = np.array([1, 1, 1, 1, 0, 0, 0, 0])
S = np.array([0.9, 0.8, 0.4, 0.35, 0.7, 0.3, 0.2, 0.1])


def test_auc_hand_computed():
    # member/non-member pairs won: 0.9 and 0.8 beat all 4 (8); 0.4 and 0.35 beat 3 each (6) -> 14/16
    assert auc(M, S) == pytest.approx(14 / 16)
    assert auc(M, S) == pytest.approx(roc_auc_score(M, S))


def test_auc_ties_count_half():
    assert auc([1, 0], [0.5, 0.5]) == 0.5


def test_advantage_hand_computed():
    # threshold 0.8: TPR 2/4, FPR 0 -> 0.5; threshold 0.35: TPR 1, FPR 1/4 -> 0.75 (max)
    assert membership_advantage(M, S) == pytest.approx(0.75)
    assert advantage_at_threshold(M, S, 0.8) == pytest.approx(0.5)


def test_tpr_at_fpr_hand_computed():
    # 4 non-members: FPR 0.25 allows one false positive (0.7): members above 0.3 -> all 4 -> TPR 1
    assert tpr_at_fpr(M, S, 0.25) == 1.0
    # FPR 0.249 allows none: members above 0.7 -> 2 of 4
    with pytest.warns(NotEstimableWarning):
        assert np.isnan(tpr_at_fpr(M, S, 0.01))


def test_tpr_at_fpr_matches_roc_definition(rng):
    m = np.r_[np.ones(500), np.zeros(2000)].astype(int)
    s = rng.normal(size=2500) + m
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(m, s)
    for f in (0.01, 0.001, 0.1):
        assert tpr_at_fpr(m, s, f) == pytest.approx(tpr[fpr <= f + 1e-12].max())


def test_decision_metrics():
    d = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    out = decision_metrics(M, d)
    assert out["accuracy"] == pytest.approx(5 / 8)
    assert out["precision"] == pytest.approx(2 / 3)
    assert out["recall"] == pytest.approx(0.5)
    assert out["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert out["advantage"] == pytest.approx(0.5 - 0.25)
    with pytest.warns(NotEstimableWarning):
        assert np.isnan(decision_metrics(M, np.zeros(8, int))["precision"])


def test_bad_inputs():
    with pytest.raises(InvalidInputError, match="no non-members"):
        auc([1, 1], [0.1, 0.2])
    with pytest.raises(InvalidInputError, match="scores contains NaN"):
        auc([1, 0], [np.nan, 0.2])
    with pytest.raises(InvalidInputError, match="is_member must hold only 0"):
        auc([2, 0], [0.1, 0.2])
    with pytest.raises(InvalidInputError, match="inconsistent"):
        auc([1, 0, 1], [0.1, 0.2])
    with pytest.raises(InvalidInputError, match="is_member is empty"):
        auc([], [])


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10))
    lo, hi = clopper_pearson(5, 10)
    assert lo == pytest.approx(0.187086, abs=1e-5) and hi == pytest.approx(0.812914, abs=1e-5)
    with pytest.raises(InvalidInputError):
        clopper_pearson(3, 0)


def test_bootstrap_intervals_cover_point_and_are_seeded(rng):
    m = np.r_[np.ones(300), np.zeros(300)].astype(int)
    s = rng.normal(size=600) + 0.5 * m
    lo, hi = bootstrap_auc_ci(m, s, n_boot=300, random_state=1)
    assert lo < auc(m, s) < hi
    assert (lo, hi) == bootstrap_auc_ci(m, s, n_boot=300, random_state=1)
    lo, hi = bootstrap_tpr_at_fpr_ci(m, s, 0.01, n_boot=200, random_state=1)
    assert lo <= tpr_at_fpr(m, s, 0.01) <= hi


def test_auc_interval_coverage_simulation():
    """The 95% interval covers the true AUC in roughly 95% of simulated experiments."""
    from scipy.stats import norm

    true_auc = norm.cdf(0.5 / np.sqrt(2))  # members N(0.5,1), non-members N(0,1)
    rng = np.random.default_rng(0)
    hits = 0
    trials = 60
    for _ in range(trials):
        m = np.r_[np.ones(200), np.zeros(200)].astype(int)
        s = rng.normal(size=400) + 0.5 * m
        lo, hi = bootstrap_auc_ci(m, s, n_boot=200, random_state=rng)
        hits += lo <= true_auc <= hi
    # 95% nominal; with 60 trials, fewer than 50 hits would be a clear under-coverage (p < 0.01)
    assert hits >= 50


def test_pearson():
    r, p = pearson([1, 2, 3, 4], [2, 4, 6, 8.5])
    assert r == pytest.approx(np.corrcoef([1, 2, 3, 4], [2, 4, 6, 8.5])[0, 1])
    with pytest.warns(NotEstimableWarning):
        assert np.isnan(pearson([1, 1, 1], [1, 2, 3])[0])


def test_evaluate_membership_summary(rng):
    m = np.r_[np.ones(1000), np.zeros(1000)].astype(int)
    s = rng.normal(size=2000) + m
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no stray warnings: NaN TPR at 1e-4 is reported, not warned
        r = evaluate_membership(m, s, n_boot=100)
    assert r.auc_ci[0] < r.auc < r.auc_ci[1]
    assert np.isnan(r.tpr_at_fpr["0.0001"]["tpr"])
    assert 0 < r.tpr_at_fpr["0.01"]["tpr"] < 1

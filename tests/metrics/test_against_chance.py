"""An attack's accuracy and advantage over random guessing on held-out records (AISVS 11.3.3), with intervals."""

import numpy as np
import pytest
from scipy import stats

from leakaudit.metrics import against_chance, evaluate_membership


def test_values_and_their_intervals():
    m = np.r_[np.ones(200), np.zeros(200)]
    perfect = against_chance(m, m * 10.0, confidence=0.95)
    assert perfect["advantage"] == 1.0 and perfect["accuracy"] == 1.0 and perfect["advantage_ci"][1] == 1.0
    assert perfect["n_eval_members"] == perfect["n_eval_nonmembers"] == 100
    none = against_chance(m, np.zeros(400))
    assert none["advantage"] == 0.0 and none["accuracy"] == 0.5
    assert none["advantage_ci"][0] < 0 < none["advantage_ci"][1]
    few = against_chance([1, 0, 0], [1.0, 0.0, 0.5])
    assert np.isnan(few["accuracy"]) and "2 members" in few["reason"]
    res = evaluate_membership(m, m + np.random.default_rng(0).normal(size=400), n_boot=50)
    assert res.against_chance == against_chance(m, m + np.random.default_rng(0).normal(size=400))


def test_the_interval_covers_the_true_advantage():
    """Scores N(shift, 1) for members, N(0, 1) for non-members: the chosen threshold t's true advantage is
    Phi(t) - Phi(t - shift), and its interval, measured on records t was not chosen on, covers it at least at the
    stated rate (Newcombe's hybrid on Clopper-Pearson intervals is conservative)."""
    rng = np.random.default_rng(1)
    shift, n = 0.6, 400
    m = np.r_[np.ones(n), np.zeros(n)]
    cover = []
    for seed in range(200):
        r = against_chance(m, rng.normal(size=2 * n) + shift * m, confidence=0.9, random_state=seed)
        lo, hi = r["advantage_ci"]
        true = stats.norm.cdf(r["threshold"]) - stats.norm.cdf(r["threshold"] - shift)
        assert lo <= r["advantage"] <= hi and r["accuracy"] == pytest.approx((1 + r["advantage"]) / 2)
        cover.append(lo <= true <= hi)
    assert np.mean(cover) >= 0.88

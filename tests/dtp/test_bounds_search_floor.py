"""Lipschitz bound (Thm 6.9), search estimate, noise floor, verdict, correlation."""

import numpy as np
import pytest

from leakaudit.dtp import (
    correlation_vs_measurements,
    dtp1_verdict,
    dtp_exact,
    dtp_search,
    dtp_search_estimate,
    lipschitz_dtp_bound,
    logistic_lipschitz_bound,
    normalised_pdtp,
    pdtp,
    pdtp_attack_correlation,
    sampling_noise_floor,
    seed_noise_floor,
    softmax_lipschitz_constant,
)
from leakaudit.dtp.pdtp import abs_log_ratio
from leakaudit.exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from leakaudit.learners.logistic import LogisticRegression
from leakaudit.learners.naive_bayes import NaiveBayes

from _dtp_helpers import NoisyMeanLearner


def _lr_data(rng, n=40, d=3, k=3):
    X = rng.normal(size=(n, d))
    y = rng.integers(0, k, size=n)
    return X, y


def test_softmax_lipschitz_constant():
    assert softmax_lipschitz_constant(max_l1=836) == 1674.0
    assert softmax_lipschitz_constant(X_domain=[[1.0, -2.0], [0.5, 0.5]]) == 2 * (3 + 1)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        softmax_lipschitz_constant()


def test_thm_6_9_bound_holds_for_logistic_regression(rng):
    X, y = _lr_data(rng)
    lr = LogisticRegression(C=3.0)
    res = logistic_lipschitz_bound(lr, X, y, records=range(10))
    # brute-force the unbinned DTP over many queries inside the domain (||x||_1 <= max over X)
    full, loo = lr.loo_models(X, y, range(10))
    Q = rng.normal(size=(2000, 3))
    Q *= (np.abs(X).sum(axis=1).max() / np.abs(Q).sum(axis=1, keepdims=True)) * rng.random((2000, 1))
    Q = np.vstack([Q, X])
    for r in range(10):
        eps = abs_log_ratio(full.predict_proba(Q), loo[r].predict_proba(Q)).max()
        assert eps <= res.values[r] + 1e-12
        assert eps > 0
    assert res.global_bound == pytest.approx(max(res.values))
    per, glob = lipschitz_dtp_bound(np.zeros(3), np.array([[0.1, -0.3, 0.0]]), 2.0)
    assert per[0] == pytest.approx(0.6) and glob == pytest.approx(0.6)
    with pytest.raises(UnsupportedError, match="LogisticRegression"):
        logistic_lipschitz_bound(NaiveBayes(), X, y)


def test_search_lower_than_exact_and_at_least_pdtp(rng):
    X = rng.integers(0, 3, size=(30, 3)).astype(float)
    y = rng.integers(0, 2, size=30)
    nb = NaiveBayes(n_values=[3, 3, 3])
    ex = dtp_exact(nb, X, y, records=range(8))
    est = dtp_search_estimate(nb, X, y, records=range(8), random_state=0, n_random=30, n_hill=5)
    v, e, p = np.asarray(est.values), np.asarray(ex.values), np.asarray(est.pdtp)
    assert np.all(v <= e + 1e-12)  # a search can only find attained values: a lower bound
    assert np.all(v >= p - 1e-12)
    np.testing.assert_allclose(p, ex.pdtp)
    # on a 27-point space, neighbours + flips + hill climbing find the exact maximum
    np.testing.assert_allclose(v, e)


def test_search_gradient_on_logistic(rng):
    X, y = _lr_data(rng, n=30, d=4, k=2)
    lr = LogisticRegression(C=10.0)
    full, loo = lr.loo_models(X, y, [0])
    out = dtp_search(full.predict_proba, loo[0].predict_proba, X[0], X_reference=X,
                     strategies=("self", "gradient"), bin_width=None, random_state=0)
    # the objective grows toward the box edges for a linear model: gradient ascent beats x(t)
    assert out["by_strategy"]["gradient"] > out["pdtp"]
    Q = out["best_x"][None]
    assert abs_log_ratio(full.predict_proba(Q), loo[0].predict_proba(Q)).max() == pytest.approx(out["value"])
    est = dtp_search_estimate(lr, X, y, records=[0, 1], bin_width=None, random_state=0, n_random=20)
    assert np.all(np.asarray(est.ratio) >= 1.0)


def test_search_retrain_path(rng):
    X = rng.normal(size=(12, 1))
    y = np.array([0, 1] * 6)
    est = dtp_search_estimate(NoisyMeanLearner(), X, y, records=[0, 3], random_state=1, bin_width=None)
    assert len(est.values) == 2 and np.all(np.asarray(est.values) >= np.asarray(est.pdtp))


def test_noise_floors(rng):
    X = rng.normal(size=(20, 1))
    y = rng.integers(0, 2, size=20)
    s = seed_noise_floor(NoisyMeanLearner(noise=0.5), X, y, n_models=30, random_state=0, bin_width=None)
    # ln p1 = -log(1+exp(-(b + x + z))): spread comes from z ~ N(0, 0.5^2) only
    assert 0.05 < np.median(s.std_log_p) < 0.6
    d = seed_noise_floor(NaiveBayes(categorical="none"), X, y, n_models=3, random_state=0)
    assert np.all(np.asarray(d.std_log_p) < 1e-12)  # deterministic learner: no seed noise
    sm = sampling_noise_floor(NaiveBayes(categorical="none"), X, y, n_train=10, X_query=X[:3], y_query=y[:3],
                              n_models=10, random_state=0, bin_width=None)
    assert np.all(np.asarray(sm.std_log_p) > 0) and np.asarray(sm.p_true).shape == (10, 3)
    np.testing.assert_allclose(normalised_pdtp([0.5, 0.0, 1.0], [0.25, 0.0, 0.0]), [2.0, 0.0, np.inf])


def test_verdict():
    v = dtp1_verdict([0.2, 1.5, 0.9, 3.0], kind="PDTP")
    assert not v.publish and v.records_above == [3, 1] and v.max_value == 3.0
    assert "Do not publish" in v.sentence and "2 of 4" in v.sentence
    ok = dtp1_verdict([0.2, 0.3], kind="PDTP")
    assert ok.publish and "indirect queries" in ok.sentence
    ok2 = dtp1_verdict([0.2, 0.3], kind="DTP (exact)")
    assert "can be published" in ok2.sentence
    few = dtp1_verdict(np.r_[np.zeros(200), 2.0], kind="DTP (exact)")
    assert "remove them" in few.sentence
    with pytest.raises(InvalidParameterError, match="kind"):
        dtp1_verdict([1.0], kind="nope")
    with pytest.raises(InvalidInputError, match="records"):
        dtp1_verdict([1.0, 2.0], records=[1])


def test_correlation_matches_scipy_and_paper_pvalue():
    # spec §5.4: r = 0.7653 with n = 100 gives p = 1.85e-20
    from scipy import stats

    r = 0.7653
    t = r * np.sqrt(98 / (1 - r * r))
    assert 2 * stats.t.sf(t, 98) == pytest.approx(1.85e-20, rel=0.02)
    rng = np.random.default_rng(0)
    p = rng.random(100) * 3
    a = 0.5 + 0.1 * p + rng.normal(0, 0.05, 100)
    c = pdtp_attack_correlation(p, a)
    ref = stats.pearsonr(p, a)
    assert c.r == pytest.approx(ref.statistic) and c.p_value == pytest.approx(ref.pvalue)
    assert c.n_above1 == int(np.sum(p > 1))
    assert c.frac_above1_acc_gt_08 == pytest.approx(np.mean(a[p > 1] > 0.8))
    M = np.vstack([p + rng.normal(0, 1, 100) for _ in range(10)])
    n, rs = correlation_vs_measurements(M, a)
    assert n.tolist() == list(range(1, 11))
    assert rs[0] == pytest.approx(stats.pearsonr(M[0], a).statistic)
    assert rs[-1] == pytest.approx(stats.pearsonr(M.mean(axis=0), a).statistic)


def test_seed_noise_floor_at_individuals_outside_the_training_set(rng):
    X = rng.normal(size=(20, 1))
    y = rng.integers(0, 2, size=20)
    learner = NoisyMeanLearner(noise=0.5)
    # far on the negative side ln p1 = b + x - ln(1 + e^(b + x)) ~ b + x: its spread over seeds is the noise's, 0.5
    far = seed_noise_floor(learner, X, y, X_query=np.array([[-40.0], [40.0]]), y_query=np.array([1, 1]),
                           n_models=200, random_state=0, bin_width=None)
    assert abs(far.std_log_p[0] - 0.5) < 0.07 and far.std_log_p[1] < 1e-12  # ln p1 ~ 0 far on the positive side
    assert np.asarray(far.p_true).shape == (200, 2)
    # querying training rows through X_query gives what queries= gives
    a = seed_noise_floor(learner, X, y, queries=[2, 5], n_models=5, random_state=1, bin_width=None)
    b = seed_noise_floor(learner, X, y, X_query=X[[2, 5]], y_query=y[[2, 5]], n_models=5, random_state=1,
                         bin_width=None)
    np.testing.assert_allclose(a.std_log_p, b.std_log_p)
    with pytest.raises(InvalidParameterError, match="X_query and y_query"):
        seed_noise_floor(learner, X, y, X_query=X[:2])
    with pytest.raises(InvalidParameterError, match="not both"):
        seed_noise_floor(learner, X, y, queries=[0], X_query=X[:2], y_query=y[:2])
    with pytest.raises(InvalidInputError, match="features"):
        seed_noise_floor(learner, X, y, X_query=np.zeros((2, 3)), y_query=[0, 1])

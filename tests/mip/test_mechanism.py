"""calibrate (against closed-form fakes), Algorithm 1, the logistic-regression trainer."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.mip import (
    LogisticRegressionTrainer,
    LowerEndpointAndGuess,
    NoBracketIntervalFoundError,
    calibrate,
    estimate_sigma,
    mip_constant,
    mip_noise_addition,
    random_half,
)


@settings(max_examples=80, deadline=None)
@given(st.floats(1e-3, 0.49), st.floats(0.01, 100.0))
def test_calibrate_decreasing_fake_never_misses(target, k):
    # fake privacy function eta(b) = k / b (a noise scale): root b = k / target
    f = lambda b: k / b  # noqa: E731
    b = calibrate(f, target, bracket=LowerEndpointAndGuess(1e-9, 1.0), increasing=False)
    assert f(b) <= target
    assert b == pytest.approx(k / target, rel=1e-8)


@settings(max_examples=80, deadline=None)
@given(st.floats(1e-3, 10.0))
def test_calibrate_increasing_fake_never_misses(target):
    f = lambda x: math.expm1(x)  # noqa: E731  (eps-like, grows with x)
    x = calibrate(f, target, bracket=(0.0, 10.0), increasing=True)
    assert f(x) <= target
    assert x == pytest.approx(math.log1p(target), rel=1e-8)


def test_calibrate_discrete():
    f = lambda t: 10.0 / t  # noqa: E731
    assert calibrate(f, 3.0, bracket=(1, 100), increasing=False, discrete=True) == 4
    assert calibrate(lambda t: t * 0.5, 3.2, bracket=(0, 100), increasing=True, discrete=True) == 6


def test_calibrate_no_bracket():
    with pytest.raises(NoBracketIntervalFoundError, match="explicit bracket"):
        calibrate(lambda x: 1.0, 0.5, bracket=(0.0, 1.0), increasing=False)
    with pytest.raises(NoBracketIntervalFoundError):
        calibrate(lambda x: 1.0 / (1 + x), -1.0, bracket=LowerEndpointAndGuess(0.0, 1.0), increasing=False,
                  max_doublings=5)
    with pytest.raises(InvalidParameterError, match="lo < hi"):
        calibrate(lambda x: x, 0.5, bracket=(1.0, 0.0), increasing=True)


def test_random_half():
    h = random_half(11, 0)
    assert h.size == 5 and np.unique(h).size == 5 and h.max() < 11
    np.testing.assert_array_equal(random_half(11, 0), h)


def _mean(X, y, idx, rs):
    return X[idx].mean(axis=0)


def test_estimate_sigma_by_hand():
    X = np.arange(8.0)[:, None] * np.array([[1.0, 0.0]])  # second coordinate constant
    sig, th = estimate_sigma(_mean, X, M=2, B=50, random_state=0)
    assert th.shape == (50, 2)
    np.testing.assert_allclose(sig[0], np.sqrt(np.mean((th[:, 0] - th[:, 0].mean()) ** 2)))
    assert sig[1] == 0.0
    sig_u, _ = estimate_sigma(_mean, X, M=2, B=50, unbiased=True, random_state=0)
    assert sig_u[0] == pytest.approx(sig[0] * np.sqrt(50 / 49))
    sig4, th4 = estimate_sigma(_mean, X, M=4, B=50, random_state=0)
    np.testing.assert_allclose(sig4[0], np.mean(np.abs(th4[:, 0] - th4[:, 0].mean()) ** 4) ** 0.25)


def test_estimate_sigma_matches_finite_population_theory():
    # mean of a size-m subsample of a pool of N: Var = s^2/m (1 - m/N) with s^2 the pool variance (ddof=1)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 1))
    sig, _ = estimate_sigma(_mean, X, M=2, B=4000, random_state=2)
    s2 = X[:, 0].var(ddof=1)
    assert sig[0] ** 2 == pytest.approx(s2 / 200 * (1 - 200 / 400), rel=0.08)


def test_algorithm1_release_and_zero_sigma():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=200), np.ones(200)])
    with pytest.warns(UserWarning, match="sigma = 0"):
        rel = mip_noise_addition(_mean, X, eta=0.2, M=2, B=32, random_state=5)
    assert rel.d == 2 and rel.d_eff == 1
    assert rel.theta_hat[1] == 1.0  # constant coordinate: no noise, exact
    np.testing.assert_allclose(np.array(rel.theta) + rel.noise, rel.theta_hat)
    assert len(rel.train_idx) == 100
    np.testing.assert_allclose(rel.theta, X[rel.train_idx].mean(axis=0))
    assert rel.c == pytest.approx(mip_constant(0.2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel2 = mip_noise_addition(_mean, X, eta=0.2, M=2, B=32, random_state=5)
    assert rel2.theta_hat == rel.theta_hat  # seeded
    assert type(rel).from_json(rel.to_json()) == rel


def test_algorithm1_sigma_split_and_given_sigma():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 2))
    a = mip_noise_addition(_mean, X, eta=0.1, B=200, sigma_split="half_of_train", random_state=1)
    b = mip_noise_addition(_mean, X, eta=0.1, B=200, sigma_split="half_of_full", random_state=1)
    # halves of D_train (n/4 points from n/2) vs halves of D: variance ratio about 2 (spec 4.2)
    ratio = (np.array(a.sigma) / np.array(b.sigma)) ** 2
    assert np.all((ratio > 1.5) & (ratio < 2.6))
    c = mip_noise_addition(_mean, X, eta=0.1, sigma=[0.5, 0.5], random_state=1)
    assert c.sigma == [0.5, 0.5] and not c.sigma_estimated and c.B == 0
    d = mip_noise_addition(_mean, X, eta=0.1, sigma=[0.5, 0.5], safety_factor=2.0, random_state=1)
    assert d.sigma == [1.0, 1.0]
    g = mip_noise_addition(_mean, X, eta=0.1, sigma=[0.5, 0.5], radial="gamma", constant="tv", random_state=1)
    assert g.c == pytest.approx(5.0)


def test_algorithm1_bad_input():
    X = np.ones((10, 2))
    with pytest.raises(InvalidParameterError, match="eta"):
        mip_noise_addition(_mean, X, eta=0.7)
    with pytest.raises(InvalidParameterError, match="sigma_split"):
        mip_noise_addition(_mean, X, eta=0.1, sigma_split="thirds")
    with pytest.raises(InvalidInputError, match="sigma has 3"):
        mip_noise_addition(_mean, X, eta=0.1, sigma=[1.0, 1.0, 1.0])
    with pytest.raises(InvalidInputError, match="at least 4"):
        mip_noise_addition(_mean, X[:3], eta=0.1)
    with pytest.raises(InvalidInputError, match="non-finite"):
        mip_noise_addition(lambda X, y, i, r: np.array([np.nan]), X, eta=0.1, B=4)


def test_logistic_trainer_batched_equals_single_and_sklearn():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 + rng.normal(size=300) > 0).astype(int)
    tr = LogisticRegressionTrainer(alpha=1e-2)
    subsets = [random_half(300, s) for s in range(5)]
    many = tr.many(X, y, subsets)
    for k, s in enumerate(subsets):
        one = tr(X, y, s)
        np.testing.assert_allclose(many[k], one, atol=1e-5)
        # sklearn's C multiplies the summed loss: C = 1 / (alpha * m)
        sk = LogisticRegression(C=1.0 / (1e-2 * len(s)), tol=1e-10, max_iter=10000).fit(X[s], y[s])
        np.testing.assert_allclose(one, np.r_[sk.coef_[0], sk.intercept_], atol=1e-4)
    p = tr.predict_proba(many[0], X)
    assert p.shape == (300, 2) and np.allclose(p.sum(1), 1)


def test_learner_train_many_adapter_trains_through_the_engine():
    from sklearn.linear_model import LogisticRegression as SkLR

    from leakaudit.learners import Learner
    from leakaudit.mip import learner_train_many

    class SkLearner(Learner):
        def __init__(self, *, C: float = 1.0):
            self.C = C

        def _fit(self, X, y, *, random_state, n_classes):
            return SkLR(C=self.C, tol=1e-10, max_iter=10000).fit(X, y)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    from leakaudit.engine import Engine

    engine = Engine(chunk_size=2, progress=False)
    tm = learner_train_many(SkLearner(C=1.0), lambda m: np.r_[m.coef_[0], m.intercept_], engine=engine)
    subsets = [random_half(200, s) for s in range(3)]
    out = tm(X, y, subsets, [0, 1, 2])
    assert out.shape == (3, 4)
    assert (engine.stats.models_trained, engine.stats.n_chunks) == (3, 2)
    for k, s in enumerate(subsets):
        ref = SkLR(C=1.0, tol=1e-10, max_iter=10000).fit(X[s], y[s])
        np.testing.assert_allclose(out[k], np.r_[ref.coef_[0], ref.intercept_], atol=1e-8)
    rel = mip_noise_addition(None, X, y, eta=0.2, B=8, train_many=tm, random_state=0)
    assert rel.d == 4 and rel.B == 8


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.01, 0.45), st.sampled_from([2, 4]))
def test_cor11_noise_meets_target_exactly_on_random_data(seed, eta, M):
    # hypothesis: on random 1-D data sets, the noise Theorem 7 / Cor 11 prescribes never misses eta
    from leakaudit.mip import enumerate_splits, exact_eta_laplace

    rng = np.random.default_rng(seed)
    n = 8
    x = rng.standard_cauchy(size=n)  # heavy tails: outliers dominate the membership signal
    vals = enumerate_splits(n) @ x / (n // 2)
    sigma = np.mean(np.abs(vals - vals.mean()) ** M) ** (1 / M)
    assert exact_eta_laplace(vals, mip_constant(eta, M) * sigma, n=n).eta <= eta
    sigma1 = np.mean(np.abs(vals - vals.mean()))
    assert exact_eta_laplace(vals, sigma1 / (2 * eta), n=n).eta <= eta  # ours


def test_sigma_from_train_halves_leaks_membership_and_full_halves_do_not():
    # Algorithm 1 end to end, sigma re-estimated per release. Record 0 holds the only 1 in column 1.
    # sigma from halves of D_train is 0 on column 1 exactly when record 0 is outside D_train, so the
    # release is noise-free there: "member iff theta_hat[1] != 0" is a perfect attack. With halves of
    # the full D, sigma depends on D only and the attack is a coin flip.
    rng = np.random.default_rng(0)
    n = 40
    X = np.column_stack([rng.normal(size=n), np.zeros(n)])
    X[0, 1] = 1.0
    results = {}
    for split in ("half_of_train", "half_of_full"):
        correct = 0
        games = 60
        for g in range(games):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rel = mip_noise_addition(_mean, X, eta=0.1, M=2, B=16, sigma_split=split, random_state=g)
            guess_in = rel.theta_hat[1] != 0.0
            correct += guess_in == (0 in rel.train_idx)
        results[split] = correct / games
    assert results["half_of_train"] == 1.0
    assert 0.3 < results["half_of_full"] < 0.7

"""Logistic regression: equality with scikit-learn, exact warm-started LOO, the influence approximation."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLR

from leakaudit.exceptions import ApproximationWarning, InvalidParameterError
from leakaudit.learners.logistic import LogisticRegression


def _data(rng, n=60, d=4, k=3):
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(k, d))
    y = np.array([rng.choice(k, p=np.exp(z) / np.exp(z).sum()) for z in X @ W.T])
    return X, y


@pytest.mark.parametrize("dense_max", [2000, 0])
def test_matches_sklearn_multinomial(rng, dense_max):
    X, y = _data(rng)
    ours = LogisticRegression(C=2.0, dense_max=dense_max).fit(X, y)
    sk = SkLR(C=2.0, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-6)
    assert abs(ours.intercept_.sum()) < 1e-12


def test_binary_matches_sklearn_with_doubled_C(rng):
    X, y = _data(rng, k=2)
    ours = LogisticRegression(C=1.5).fit(X, y)
    sk = SkLR(C=3.0, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("dense_max", [2000, 0])
def test_newton_loo_equals_fresh_fit(rng, dense_max):
    X, y = _data(rng, n=40)
    lr = LogisticRegression(C=5.0, dense_max=dense_max)
    recs = [0, 7, 19, 33]
    loo = lr.loo_proba(X, y, recs)
    loo_q = lr.loo_proba(X, y, recs, X_query=X[:5])
    for r, t in enumerate(recs):
        keep = np.arange(40) != t
        ref = lr.fit(X[keep], y[keep], n_classes=3)
        np.testing.assert_allclose(loo[r], ref.predict_proba(X[t:t + 1])[0], atol=1e-6)
        np.testing.assert_allclose(loo_q[r], ref.predict_proba(X[:5]), atol=1e-6)
    # warm start needs fewer iterations than a fresh fit
    full, models = lr.loo_models(X, y, recs)
    assert max(m.n_iter_ for m in models) < full.n_iter_


def test_influence_is_approximate_and_close(rng):
    X, y = _data(rng, n=200, d=3)
    lr = LogisticRegression(C=0.5)
    exact = lr.loo_proba(X, y, records=range(20))
    with pytest.warns(ApproximationWarning):
        approx = lr.loo_proba(X, y, records=range(20), method="influence")
    full = lr.fit(X, y).predict_proba(X[:20])
    err = np.abs(approx - exact).max()
    change = np.abs(exact - full).max()
    assert change > 1e-4  # there is something to approximate
    assert err < 0.1 * change  # first-order: error much smaller than the LOO change itself


def test_fit_many_and_errors(rng):
    X, y = _data(rng)
    lr = LogisticRegression(C=1.0)
    bank = lr.fit_many(X, y, [np.arange(30), np.arange(20, 60)], [0, 1])
    np.testing.assert_allclose(bank.predict_proba(X)[1], lr.fit(X[20:], y[20:], n_classes=3).predict_proba(X))
    with pytest.raises(InvalidParameterError, match="C must be"):
        LogisticRegression(C=-1).fit(X, y)
    with pytest.raises(InvalidParameterError, match="method"):
        lr.loo_proba(X, y, method="bogus")

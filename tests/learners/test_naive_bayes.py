"""Naive Bayes / Bayes inference: hand-computed values and exact leave-one-out == retraining."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.learners.naive_bayes import BayesInference, NaiveBayes, encode_for_naive_bayes


def _cat_data(rng, n=40, m=3, v=3, k=2):
    X = rng.integers(0, v, size=(n, m)).astype(float)
    y = rng.integers(0, k, size=n)
    return X, y


def test_nb_hand_computed():
    # one binary feature, Laplace alpha=1, prior smoothing on
    X = np.array([[0], [0], [1], [1], [1]], dtype=float)
    y = np.array([0, 0, 0, 1, 1])
    m = NaiveBayes(alpha=1.0, prior_smoothing=True).fit(X, y)
    # p(y=0) = (3+1)/(5+2), p(x=0|0) = (2+1)/(3+2); p(y=1)=(2+1)/7, p(x=0|1)=(0+1)/(2+2)
    s0, s1 = 4 / 7 * 3 / 5, 3 / 7 * 1 / 4
    np.testing.assert_allclose(m.predict_proba([[0]])[0], [s0 / (s0 + s1), s1 / (s0 + s1)])
    m2 = NaiveBayes(alpha=0.0, prior_smoothing=False).fit(X, y)
    # p(x=0|1) = 0 -> posterior (1, 0)
    np.testing.assert_allclose(m2.predict_proba([[0]])[0], [1.0, 0.0])


def test_nb_gaussian_hand_computed():
    X = np.array([[0.0], [2.0], [10.0], [14.0]])
    y = np.array([0, 0, 1, 1])
    m = NaiveBayes(categorical="none", prior_smoothing=False).fit(X, y)
    from scipy.stats import norm

    l0 = norm.pdf(1.0, 1.0, 1.0)  # mean 1, var 1 (ddof 0)
    l1 = norm.pdf(1.0, 12.0, 2.0)  # mean 12, var 4
    np.testing.assert_allclose(m.predict_proba([[1.0]])[0, 0], l0 / (l0 + l1))


@pytest.mark.parametrize("alpha,prior", [(1.0, True), (1.0, False), (0.0, False), (0.5, True)])
def test_nb_loo_equals_retraining_categorical(rng, alpha, prior):
    X, y = _cat_data(rng, n=30, m=3, v=3, k=3)
    nb = NaiveBayes(alpha=alpha, prior_smoothing=prior, n_values=[3, 3, 3])
    Xq = np.array(np.meshgrid(*[np.arange(3)] * 3)).reshape(3, -1).T.astype(float)
    loo = nb.loo_proba(X, y, n_classes=3)
    loo_q = nb.loo_proba(X, y, records=[0, 5, 7], X_query=Xq, n_classes=3)
    for t in range(len(X)):
        keep = np.arange(len(X)) != t
        ref = nb.fit(X[keep], y[keep], n_classes=3)
        np.testing.assert_allclose(loo[t], ref.predict_proba(X[t:t + 1])[0], rtol=1e-12, atol=1e-14)
    for r, t in enumerate([0, 5, 7]):
        keep = np.arange(len(X)) != t
        ref = nb.fit(X[keep], y[keep], n_classes=3).predict_proba(Xq)
        np.testing.assert_allclose(loo_q[r], ref, rtol=1e-12, atol=1e-14)


def test_nb_loo_equals_retraining_mixed(rng):
    n = 25
    Xc = rng.integers(0, 4, size=(n, 2)).astype(float)
    Xn = rng.normal(size=(n, 2)) * [1.0, 50.0] + [0.0, 1000.0]
    X = np.column_stack([Xc[:, 0], Xn[:, 0], Xc[:, 1], Xn[:, 1]])
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    y[2] = 1  # make sure each class has >1 record
    nb = NaiveBayes(categorical=[0, 2], n_values=[4, 4])
    loo = nb.loo_proba(X, y)
    Xq = X[:6] + 0.3
    Xq[:, [0, 2]] = X[:6][:, [0, 2]]
    loo_q = nb.loo_proba(X, y, records=[1, 3], X_query=Xq)
    for t in range(n):
        keep = np.arange(n) != t
        ref = nb.fit(X[keep], y[keep], n_classes=2)
        np.testing.assert_allclose(loo[t], ref.predict_proba(X[t:t + 1])[0], rtol=1e-9, atol=1e-12)
    for r, t in enumerate([1, 3]):
        keep = np.arange(n) != t
        np.testing.assert_allclose(loo_q[r], nb.fit(X[keep], y[keep], n_classes=2).predict_proba(Xq),
                                   rtol=1e-9, atol=1e-12)


def test_nb_loo_singleton_class():
    # class 1 has one record: leaving it out empties the class
    X = np.array([[0, 1.0], [1, 2.0], [1, 3.0], [0, 5.0]])
    y = np.array([0, 0, 0, 1])
    for nb in [NaiveBayes(categorical=[0], n_values=[2]), NaiveBayes(categorical=[0], n_values=[2], alpha=0.0,
                                                                      prior_smoothing=False)]:
        loo = nb.loo_proba(X, y)
        ref = nb.fit(X[:3], y[:3], n_classes=2).predict_proba(X[3:])
        np.testing.assert_allclose(loo[3], ref[0], atol=1e-12)
        assert np.all(np.isfinite(loo))


def test_nb_errors():
    with pytest.raises(InvalidInputError, match="categorical column 0"):
        NaiveBayes().fit([[0.5], [1.0]], [0, 1])
    with pytest.raises(InvalidParameterError, match="alpha"):
        NaiveBayes(alpha=-1).fit([[0], [1]], [0, 1])
    with pytest.raises(InvalidInputError, match="n_values"):
        NaiveBayes(n_values=[2]).fit([[0], [3]], [0, 1])
    with pytest.raises(InvalidInputError, match="X_query"):
        NaiveBayes().loo_proba([[0], [1]], [0, 1], X_query=[[0, 1]])


def test_nb_unseen_code_counts_zero():
    m = NaiveBayes(n_values=[2]).fit([[0], [1]], [0, 1])
    p = m.predict_proba([[5]])  # unseen code: count 0 in every class -> prior only
    np.testing.assert_allclose(p, [[0.5, 0.5]])


def test_bayes_inference_hand_and_loo(rng):
    X = np.array([[0, 0], [0, 0], [0, 0], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 0, 1, 1, 0])
    m = BayesInference().fit(X, y)
    np.testing.assert_allclose(m.predict_proba([[0, 0], [1, 0], [2, 2]]), [[2 / 3, 1 / 3], [0, 1], [0.5, 0.5]])
    for unseen, alpha in [("uniform", 0.0), ("prior", 0.0), ("uniform", 1.0)]:
        bi = BayesInference(unseen=unseen, alpha=alpha)
        Xr = rng.integers(0, 2, size=(30, 3)).astype(float)
        yr = rng.integers(0, 3, size=30)
        Xq = np.array(np.meshgrid(*[np.arange(3)] * 3)).reshape(3, -1).T.astype(float)
        loo = bi.loo_proba(Xr, yr, n_classes=3)
        loo_q = bi.loo_proba(Xr, yr, X_query=Xq, n_classes=3)
        for t in range(30):
            keep = np.arange(30) != t
            ref = bi.fit(Xr[keep], yr[keep], n_classes=3)
            np.testing.assert_allclose(loo[t], ref.predict_proba(Xr[t:t + 1])[0], atol=1e-14)
            np.testing.assert_allclose(loo_q[t], ref.predict_proba(Xq), atol=1e-14)


def test_fit_many_matches_fit(rng):
    X, y = _cat_data(rng)
    nb = NaiveBayes(n_values=[3, 3, 3])
    bank = nb.fit_many(X, y, [np.arange(10), np.arange(5, 40)], random_states=[1, 2])
    np.testing.assert_allclose(bank.predict_proba(X)[1], nb.fit(X[5:], y[5:], n_classes=2).predict_proba(X))


def test_encode_for_naive_bayes():
    import pandas as pd

    f = pd.DataFrame({"a": ["x", "y", None, "x"], "b": [1.0, 2.0, 3.0, 4.0]})
    X, cat, nv, cats = encode_for_naive_bayes(f)
    assert cat.tolist() == [0] and nv.tolist() == [3]
    assert cats["a"] == ["?", "x", "y"]
    np.testing.assert_array_equal(X[:, 0], [1, 2, 0, 1])
    np.testing.assert_array_equal(X[:, 1], [1, 2, 3, 4])


@pytest.mark.parametrize("X", [[[1e30]], [[1e30, 0.0]], [[2.0**24]]])
def test_nb_huge_codes_are_refused_with_a_clear_error(X):
    # found by the long fuzz run: 1e30 passed the integer check, wrapped to a negative int64 and crashed bincount
    with pytest.raises(InvalidInputError, match="codes must be at most"):
        NaiveBayes(categorical="all").fit_many(np.array(X), np.array([0]), [np.array([0])], [0], n_classes=2)


@pytest.mark.parametrize("learner", [NaiveBayes(n_values=[3, 3, 3]), BayesInference()])
def test_loo_proba_return_full_is_the_full_fit(rng, learner):
    X, y = _cat_data(rng, n=30, k=3)
    recs = [0, 3, 17]
    full_at, loo = learner.loo_proba(X, y, recs, n_classes=3, return_full=True)
    np.testing.assert_array_equal(loo, learner.loo_proba(X, y, recs, n_classes=3))
    np.testing.assert_array_equal(full_at, learner.fit(X, y, n_classes=3).predict_proba(X[recs]))
    Xq = X[:5] + 0.0
    full_q, _ = learner.loo_proba(X, y, recs, X_query=Xq, n_classes=3, return_full=True)
    np.testing.assert_array_equal(full_q, learner.fit(X, y, n_classes=3).predict_proba(Xq))

"""Logistic regression: equality with scikit-learn, exact warm-started LOO (batched and one at a time),
the influence approximation."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLR

from leakaudit.exceptions import ApproximationWarning, InvalidParameterError
from leakaudit.learners import logistic as lg
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
    # one at a time: the warm start needs fewer Newton iterations than a fresh fit
    full, models = lr.loo_models(X, y, recs, batched=False)
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


@pytest.mark.parametrize("k", [2, 4])
def test_hessian_blocks_equal_hessian_vector_products(rng, k):
    # the dense Hessian (k(k-1)/2 weighted products + zero-row-sum completion) against the independent hessp
    X, y = _data(rng, n=50, d=3, k=k)
    prob = lg._Problem(X, y, k, 2.5)
    u = rng.normal(size=k * 4)
    _, _, P = prob.value_grad(u)
    H = prob.hessian(P)
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    for _ in range(3):
        v = rng.normal(size=k * 4)
        np.testing.assert_allclose(H @ v, prob.hessp(P, v), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", [2, 3])
def test_first_batched_step_is_the_exact_loo_newton_step(rng, k):
    # one _loo_chord step = θ̂ - (H_{-t}(θ̂) + α e e^T)^{-1} ∇f_{-t}(θ̂), with H_{-t} formed directly on T \ {t}
    X, y = _data(rng, n=30, d=3, k=k)
    C, d, q = 3.0, 3, 4
    full = LogisticRegression(C=C, tol=1e-12).fit(X, y, n_classes=k)
    theta_hat = np.concatenate([full.coef_, full.intercept_[:, None]], axis=1)
    Xt, Y = lg._augment(X), np.eye(k)[y]
    P_hat = lg._softmax_inplace(Xt @ theta_hat.T)
    H = lg._hessian_blocks(Xt, P_hat, C).reshape(k * q, k * q)
    alpha = 7.0
    e = np.zeros((k, q))
    e[:, d] = 1 / np.sqrt(k)
    ee = np.outer(e.ravel(), e.ravel())
    recs = np.array([0, 11, 29])
    th, steps, _ = lg._loo_chord(Xt, Y, C, theta_hat, P_hat, np.linalg.inv(H + alpha * ee), recs,
                                 np.zeros(3), max_steps=1)
    for r, t in enumerate(recs):
        keep = np.arange(30) != t
        Hm = lg._hessian_blocks(Xt[keep], P_hat[keep], C).reshape(k * q, k * q) + alpha * ee
        prob = lg._Problem(X[keep], y[keep], k, C)
        _, g, _ = prob.value_grad(lg._theta_to_u(theta_hat))
        expect = theta_hat - np.linalg.solve(Hm, lg._u_to_theta(g, k, d).ravel()).reshape(k, q)
        if steps[r] == 1:  # accepted (the gradient halved): must be the Newton step
            np.testing.assert_allclose(th[r], expect, atol=1e-10)
    assert steps.sum() >= 2


@pytest.mark.parametrize("k, C", [(2, 1.0), (2, 1e3), (3, 5.0)])
def test_batched_loo_equals_one_at_a_time(rng, k, C):
    X, y = _data(rng, n=120, d=5, k=k)
    lr = LogisticRegression(C=C, tol=1e-10)
    recs = np.arange(0, 120, 7)
    u_b, U_b = lr.loo_params(X, y, recs)
    u_s, U_s = lr.loo_params(X, y, recs, batched=False)
    np.testing.assert_allclose(u_b, u_s)
    np.testing.assert_allclose(U_b, U_s, atol=1e-8)
    # the batched path itself did the work (no record handed to the one-at-a-time fallback)
    _, _, n_iter, n_fallback = lr._loo_theta(X, y, recs, "newton", k, True)
    assert n_fallback == 0 and n_iter.min() >= 1
    Q = X[:4]
    np.testing.assert_allclose(lr.loo_proba(X, y, recs, X_query=Q), lr.loo_proba(X, y, recs, X_query=Q, batched=False),
                               atol=1e-9)


def test_batched_loo_fallback_finishes_exactly(rng, monkeypatch):
    # a contraction demand no step can meet sends every record to the one-at-a-time Newton: same answers
    X, y = _data(rng, n=60, d=3, k=3)
    lr = LogisticRegression(C=2.0, tol=1e-10)
    recs = [1, 2, 40]
    ref = lr.loo_params(X, y, recs, batched=False)[1]
    monkeypatch.setattr(lg, "_CHORD_CONTRACTION", 0.0)
    _, _, n_iter, n_fallback = lr._loo_theta(X, y, np.array(recs), "newton", 3, True)
    assert n_fallback == 3
    np.testing.assert_allclose(lr.loo_params(X, y, recs)[1], ref, atol=1e-8)


def test_dense_off_uses_one_at_a_time(rng):
    X, y = _data(rng, n=40, k=2)
    lr = LogisticRegression(C=1.0, dense_max=0)
    _, _, _, n_fallback = lr._loo_theta(X, y, np.array([3, 5]), "newton", 2, True)
    assert n_fallback == 2


def test_loo_proba_return_full_is_the_full_fit(rng):
    X, y = _data(rng, n=50)
    lr = LogisticRegression(C=3.0)
    recs = [1, 4, 30]
    full_at, loo = lr.loo_proba(X, y, recs, return_full=True)
    np.testing.assert_array_equal(loo, lr.loo_proba(X, y, recs))
    np.testing.assert_allclose(full_at, lr.fit(X, y).predict_proba(X[recs]), rtol=0, atol=1e-15)
    full_q, loo_q = lr.loo_proba(X, y, recs, X_query=X[:6], return_full=True)
    assert full_q.shape == (6, 3) and loo_q.shape == (3, 6, 3)
    np.testing.assert_allclose(full_q, lr.fit(X, y).predict_proba(X[:6]), rtol=0, atol=1e-15)


# -- solver="lbfgs": scikit-learn's L-BFGS on the same objective -------------------------------------------

@pytest.mark.parametrize("k", [2, 3])
def test_lbfgs_is_sklearns_fit_in_our_parametrisation(rng, k):
    # two classes: our C is scikit-learn's C / 2; three or more: the same C
    X, y = _data(rng, n=80, k=k)
    ours = LogisticRegression(C=0.5, solver="lbfgs", tol=1e-4, max_iter=1000).fit(X, y)
    sk = SkLR(C=1.0 if k == 2 else 0.5, max_iter=1000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)
    assert abs(ours.intercept_.sum()) < 1e-12 and ours.coef_.shape == (k, X.shape[1])
    # ... and the optimum of the Newton solver, up to L-BFGS's tolerance
    newton = LogisticRegression(C=0.5).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), newton.predict_proba(X), atol=1e-3)


def test_lbfgs_on_sparse_rows_and_a_bank(rng):
    import scipy.sparse as sp

    X = (rng.random((120, 30)) < 0.1).astype(float)
    y = (X[:, :5].sum(1) + rng.random(120) > 1).astype(int)
    subsets = [np.arange(0, 70), np.arange(40, 120), np.arange(120)]
    lr = LogisticRegression(C=0.5, solver="lbfgs", tol=1e-4, max_iter=1000)
    bank = lr.fit_many(sp.csr_matrix(X), y, subsets, [0, 1, 2])
    assert isinstance(bank, lg.LogisticRegressionBank) and bank.accepts_sparse
    dense = lr.fit_many(X, y, subsets, [0, 1, 2]).predict_proba(X)
    np.testing.assert_allclose(bank.predict_proba(sp.csr_matrix(X)), dense, atol=1e-12)
    for k, s in enumerate(subsets):
        np.testing.assert_allclose(bank.model(k).predict_proba(X), dense[k], atol=1e-12)
        ref = SkLR(C=1.0, max_iter=1000).fit(X[s], y[s])
        np.testing.assert_allclose(dense[k], ref.predict_proba(X), atol=1e-12)


def test_lbfgs_subset_missing_a_class_is_solved_by_newton(rng):
    # scikit-learn fits only the classes it sees; the missing class's optimum is at infinity, where
    # Newton stops by its gradient tolerance: the model predicts the class it saw
    X, y = _data(rng, n=60, k=2)
    lbfgs = LogisticRegression(C=0.5, solver="lbfgs").fit(X[y == 1], y[y == 1], n_classes=2)
    newton = LogisticRegression(C=0.5).fit(X[y == 1], y[y == 1], n_classes=2)
    np.testing.assert_array_equal(lbfgs.predict_proba(X), newton.predict_proba(X))
    assert (lbfgs.predict(X) == 1).all()


def test_lbfgs_reports_non_convergence_and_refuses_loo(rng):
    X, y = _data(rng, n=60, k=3)
    with pytest.warns(RuntimeWarning, match="did not converge in 2 L-BFGS iterations"):
        LogisticRegression(solver="lbfgs", max_iter=2, tol=1e-12).fit(X, y)
    with pytest.raises(InvalidParameterError, match="needs solver='newton'"):
        LogisticRegression(solver="lbfgs").loo_proba(X, y, [0])
    with pytest.raises(InvalidParameterError, match="solver must be one of"):
        LogisticRegression(solver="saga").fit(X, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_bank_rows_are_the_bits_of_each_model_alone(rng, sparse):
    import scipy.sparse as sp

    X = (rng.random((150, 20)) < 0.3) * rng.normal(size=(150, 20))
    y = np.arange(150) % 3
    Xq = sp.csr_matrix(X) if sparse else X
    subsets = [np.arange(100), np.arange(50, 150), np.arange(0, 150, 2)]
    for lr in (LogisticRegression(C=2.0), LogisticRegression(C=2.0, solver="lbfgs", tol=1e-4, max_iter=500)):
        bank = lr.fit_many(Xq, y, subsets, [0, 1, 2])
        P = bank.predict_proba(Xq)
        for k, s in enumerate(subsets):
            np.testing.assert_array_equal(P[k], lr.fit(Xq[s], y[s], random_state=k).predict_proba(Xq))
            np.testing.assert_array_equal(P[k], bank.model(k).predict_proba(Xq))

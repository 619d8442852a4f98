"""SimpleLogistic (Weka's LogitBoost with simple regressions): against Weka's procedure written out loop by loop, its
cross-validated number of rounds, separable data, determinism and parameter checks."""

import numpy as np
import pytest

from leakaudit.exceptions import LeakauditError
from leakaudit.learners import SimpleLogistic
from leakaudit.learners.simple_logistic import logitboost_cv_rounds, weka_stratified_folds


def _ref_path(Xtr, ytr, Xte, J, rounds):
    """Weka's LogisticBase.performIteration record by record and attribute by attribute: the test rows' class
    probabilities after 0, 1, ..., ``rounds`` rounds (fewer when no attribute is found)."""
    n, d = Xtr.shape
    F, Fte = np.zeros((n, J)), np.zeros((len(Xte), J))

    def soft(G):
        e = np.exp(G - G.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    out = [soft(Fte)]
    for _ in range(rounds):
        P = soft(F)
        fits = []
        for j in range(J):
            ys = (ytr == j).astype(float)
            p = P[:, j]
            z = np.where(ys == 1, np.minimum(1 / p, 3.0), np.maximum(-1 / (1 - p), -3.0))
            w = (ys - p) / z
            best = None
            for a in range(d):
                x = Xtr[:, a]
                xm, zm = np.sum(w * x) / w.sum(), np.sum(w * z) / w.sum()
                sxx = np.sum(w * (x - xm) ** 2)
                if sxx <= 1e-12 * np.sum(w * x * x):
                    continue
                s = np.sum(w * (x - xm) * (z - zm)) / sxx
                sse = np.sum(w * (z - zm - s * (x - xm)) ** 2)
                if best is None or sse < best[0]:
                    best = (sse, a, zm - s * xm, s)
            if best is None:
                return out
            fits.append(best[1:])
        for G, XX in ((F, Xtr), (Fte, Xte)):
            f = np.stack([b0 + b1 * XX[:, a] for a, b0, b1 in fits], 1)
            G += (J - 1) / J * (f - f.mean(1, keepdims=True))
        out.append(soft(Fte))
    return out


def _ref_cv_rounds(X, y, J, folds, max_iterations, heuristic_stop):
    """Weka's LogisticBase.performBoostingCV: folds one after another, one running error array."""
    k_folds = folds.max() + 1
    error = np.zeros(max_iterations + 1)
    completed = max_iterations
    for f in range(k_folds):
        tr, te = folds != f, folds == f
        path = _ref_path(X[tr], y[tr], X[te], J, completed)
        error[0] += np.mean(path[0].argmax(1) != y[te])
        no_min, last_min, it = 0, np.inf, 0
        for it in range(1, len(path)):
            error[it] += np.mean(path[it].argmax(1) != y[te])
            if no_min > heuristic_stop:
                break
            if error[it] < last_min:
                last_min, no_min = error[it], 0
            else:
                no_min += 1
        completed = min(completed, it)
    return int(np.argmin(error[: completed + 1])), error[: completed + 1]


def _noisy(seed, n=80, d=4, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(k, d))
    Z = X @ W.T + rng.gumbel(size=(n, k)) * 1.5
    return X, Z.argmax(1)


@pytest.mark.parametrize("k", [2, 3])
def test_rounds_match_weka_written_out(k):
    """The vectorised rounds give Weka's probabilities (two classes use f_1 = -f_0: the same numbers)."""
    X, y = _noisy(1, k=k)
    for rounds in (1, 4, 12):
        ref = _ref_path(X, y, X, k, rounds)[-1]
        ours = SimpleLogistic(n_rounds=rounds).fit(X, y, n_classes=k).predict_proba(X)
        np.testing.assert_allclose(ours, ref, atol=1e-10)


@pytest.mark.parametrize("k,seed", [(2, 2), (2, 3), (3, 4)])
def test_cross_validated_rounds_match_weka_written_out(k, seed):
    X, y = _noisy(seed, n=60, k=k)
    folds = weka_stratified_folds(y, 5)
    want, want_err = _ref_cv_rounds(X, y, k, folds, max_iterations=40, heuristic_stop=5)
    got, got_err = logitboost_cv_rounds(X, y, k, max_iterations=40, heuristic_stop=5)
    assert got == want
    np.testing.assert_allclose(got_err, want_err, atol=1e-12)
    model = SimpleLogistic(max_iterations=40, heuristic_stop=5).fit(X, y, n_classes=k)
    assert model.n_rounds_ == want


def test_number_of_rounds_follows_the_data():
    """Cross-validation stops early on pure noise and runs long on a clean linear signal."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    noise = SimpleLogistic(max_iterations=200, heuristic_stop=20).fit(X, rng.integers(0, 2, 200))
    signal = SimpleLogistic(max_iterations=200, heuristic_stop=20).fit(X, (X @ [1, 1, 1, 1, 1] > 0).astype(int))
    assert noise.n_rounds_ < 10 < signal.n_rounds_


def test_weka_folds_are_stratified_and_order_dependent():
    y = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1])
    f = weka_stratified_folds(y, 3)
    assert np.bincount(f).tolist() == [4, 4, 4]
    for fold in range(3):  # the first record's class (1: 7 records) is dealt first, so each fold has 2-3 of it
        assert 2 <= np.sum(y[f == fold] == 1) <= 3
    # Weka's grouping by swaps: class 1 first (the first record's), its records in their order, then the others
    # in the order the swaps leave them; dealt every 3rd and cut into blocks of 4
    assert f.tolist() == weka_stratified_folds(y.copy(), 3).tolist()
    assert not np.array_equal(weka_stratified_folds(y[::-1], 3)[::-1], f)


def test_separates_a_separable_set():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3))
    y = (X[:, 1] > 0.2).astype(int)
    model = SimpleLogistic().fit(X, y)
    assert np.all(model.predict_proba(X).argmax(1) == y)
    assert model.n_rounds_ > 0 and np.abs(model.coef_[0, 1]) > 10 * np.abs(model.coef_[0, [0, 2]]).max()


def test_deterministic_whatever_the_seed():
    X, y = _noisy(7, n=100)
    a = SimpleLogistic().fit(X, y, random_state=0).predict_proba(X)
    b = SimpleLogistic().fit(X, y, random_state=123).predict_proba(X)
    assert np.array_equal(a, b)
    assert not SimpleLogistic().capabilities.stochastic


@pytest.mark.parametrize("param,value", [("max_iterations", 0), ("n_folds", 1), ("heuristic_stop", -1),
                                         ("n_rounds", -2), ("max_iterations", 2.5)])
def test_bad_parameters_name_themselves(param, value):
    X, y = _noisy(0, n=20)
    with pytest.raises(LeakauditError, match=param):
        SimpleLogistic(**{param: value}).fit(X, y)

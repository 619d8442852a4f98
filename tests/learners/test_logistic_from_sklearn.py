"""A user's scikit-learn LogisticRegression is retrained by ours when the objectives agree (exact leave-one-out)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression as SkLR

from leakaudit.audit.inputs.target import _sklearn_learner
from leakaudit.exceptions import UnsupportedError
from leakaudit.learners import LogisticRegression, SklearnLearner


def _data(k, n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, k)) * 1.5
    y = (X @ W + rng.gumbel(size=(n, k))).argmax(1)
    assert len(np.unique(y)) == k
    return X, y


def _tight(est):
    return est.set_params(tol=1e-12, max_iter=100_000)


@pytest.mark.parametrize("k, C, solver", [(2, 1.0, "lbfgs"), (2, 0.05, "newton-cholesky"), (3, 3.0, "lbfgs"),
                                          (4, 0.3, "newton-cg")])
def test_leave_one_out_equals_refitting_scikit_learn(k, C, solver):
    """Our batched Newton leave-one-out against scikit-learn refitted without each record, both solved tightly:
    the outputs agree to the solvers' tolerance (measured: below 2e-7 over every record)."""
    X, y = _data(k)
    est = SkLR(C=C, solver=solver).fit(X, y)
    ours = LogisticRegression.from_sklearn(est)
    assert ours.C == (C / 2 if k == 2 else C)
    full, loo = ours.loo_proba(X, y, n_classes=k, X_query=X, return_full=True)
    np.testing.assert_allclose(full, _tight(SkLR(C=C, solver=solver)).fit(X, y).predict_proba(X), atol=1e-6)
    # the given model (scikit-learn's default tol 1e-4) is near the same optimum, within its own tolerance
    np.testing.assert_allclose(full, est.predict_proba(X), atol=1e-3)
    for t in range(0, len(y), 7):
        keep = np.delete(np.arange(len(y)), t)
        refit = _tight(SkLR(C=C, solver=solver)).fit(X[keep], y[keep]).predict_proba(X)
        np.testing.assert_allclose(loo[t], refit, atol=1e-6, err_msg=f"record {t}")


@pytest.mark.parametrize("params, word", [
    ({"l1_ratio": 0.5, "solver": "saga"}, "l1_ratio"),
    ({"C": np.inf}, "C=inf"),
    ({"solver": "liblinear"}, "liblinear"),
    ({"fit_intercept": False}, "fit_intercept"),
    ({"class_weight": "balanced"}, "class_weight"),
])
def test_other_objectives_keep_scikit_learn_and_say_why(params, word):
    X, y = _data(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, UserWarning, FutureWarning))
        est = SkLR(**params).fit(X, y)
    with pytest.raises(UnsupportedError, match=word):
        LogisticRegression.from_sklearn(est)
    learner, desc = _sklearn_learner(est)
    assert isinstance(learner, SklearnLearner) and word in desc


def test_the_audit_routes_a_plain_logistic_regression_to_the_newton_leave_one_out():
    X, y = _data(3)
    learner, desc = _sklearn_learner(SkLR(C=2.0).fit(X, y))
    assert isinstance(learner, LogisticRegression) and learner.C == 2.0
    assert "Newton" in desc and "lbfgs" in desc and hasattr(learner, "loo_proba")
    with pytest.raises(UnsupportedError, match="unfitted"):
        LogisticRegression.from_sklearn(SkLR())
    with pytest.raises(UnsupportedError, match="LogisticRegression; got"):
        LogisticRegression.from_sklearn(object())

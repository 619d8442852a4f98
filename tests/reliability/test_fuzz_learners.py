"""Fuzz the learners' fit / fit_many: a model with valid probabilities, or our error naming the argument."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ._fuzz import BUDGET_PARAMS, BUDGETS, run_fuzz, valid_or_clear_error
from ._strategies import any_array


def _learners():
    from sklearn.linear_model import LogisticRegression as SkLR
    from sklearn.tree import DecisionTreeClassifier

    from leakaudit.learners import LogisticRegression, NaiveBayes, SklearnLearner, TorchMLP

    return {
        "sklearn_lr": SklearnLearner(SkLR(max_iter=50)),
        "sklearn_tree": SklearnLearner(DecisionTreeClassifier(max_depth=3)),
        "naive_bayes_numeric": NaiveBayes(categorical="none"),
        "naive_bayes_codes": NaiveBayes(categorical="all"),
        "logistic": LogisticRegression(max_iter=20),
        "torch_mlp": TorchMLP(hidden=(3,), epochs=1, mode="fast", batch_size=4),
        "torch_mlp_faithful": TorchMLP(hidden=(2,), epochs=1, mode="faithful"),
    }


@st.composite
def fit_inputs(draw, *, huge: bool = True):
    """(X, y, subsets): mostly usable, often with one defect."""
    n = draw(st.integers(1, 12))
    d = draw(st.integers(1, 3))
    X = draw(hnp.arrays(np.float64, (n, d), elements=st.integers(0, 3).map(float)))
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 2)))
    subsets = [draw(hnp.arrays(np.int64, draw(st.integers(1, n)), elements=st.integers(0, n - 1)))
               for _ in range(draw(st.integers(1, 3)))]  # duplicated records included
    defect = draw(st.sampled_from(["none", "none", "none", "nan", "huge" if huge else "none", "one_class", "neg_label", "float_label",
                                   "shape", "empty", "subset_range", "subset_empty", "weird_X", "weird_y", "dup"]))
    if defect == "nan":
        X[draw(st.integers(0, n - 1)), 0] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    elif defect == "huge":
        X[draw(st.integers(0, n - 1)), 0] = draw(st.sampled_from([1e300, -1e300, 1e30]))
    elif defect == "one_class":
        y[:] = draw(st.integers(0, 2))
    elif defect == "neg_label":
        y[0] = -1
    elif defect == "float_label":
        y = y + 0.5
    elif defect == "shape":
        X = X[:, 0] if draw(st.booleans()) else np.vstack([X, X[:1]])
    elif defect == "empty":
        X, y = X[:0], y[:0]
    elif defect == "subset_range":
        subsets = [np.array([n + 3])]
    elif defect == "subset_empty":
        subsets = draw(st.sampled_from([[], [np.array([], dtype=np.int64)]]))
    elif defect == "weird_X":
        X = draw(any_array(max_dims=3))
    elif defect == "weird_y":
        y = draw(any_array(max_dims=2))
    elif defect == "dup":
        X = np.repeat(X[:1], n, axis=0)
    return X, y, subsets


def _check_probs(P, n_rows, what):
    P = np.asarray(P, dtype=float)
    assert P.shape[-2] == n_rows and P.shape[-1] >= 2, (what, P.shape)
    assert np.isfinite(P).all(), f"{what}: non-finite probabilities"
    assert P.min() >= 0 and np.allclose(P.sum(-1), 1, atol=1e-5), f"{what}: rows do not sum to 1"


NAMES = ("X", "y", "subsets", "random_states", "n_classes", "categorical", "n_values")


@pytest.mark.parametrize("learner_name", list(_learners()))
@BUDGET_PARAMS
def test_fit_and_fit_many(learner_name, budget):
    learner = _learners()[learner_name]

    def prop(case):
        X, y, subsets = case
        model = valid_or_clear_error(learner.fit, X, y, random_state=0, names=NAMES)
        if model is not None:
            _check_probs(model.predict_proba(np.asarray(X, float)), len(X), f"{learner_name}.fit")
        bank = valid_or_clear_error(learner.fit_many, X, y, subsets, random_states=1, names=NAMES)
        if bank is not None:
            P = bank.predict_proba(np.asarray(X, float))
            assert P.shape[0] == len(subsets)
            _check_probs(P, len(X), f"{learner_name}.fit_many")

    n = (6 if "torch" in learner_name else 10) if budget == "default" else max(20, BUDGETS["long"] // 4)
    huge = True
    run_fuzz(f"learners.{learner_name}", fit_inputs(huge=huge), prop, budget, max_examples=n)


X_HUGE = np.array([[0.0], [1.0], [1e300], [2.0]])
Y_HUGE = np.array([0, 1, 0, 1])


def test_naive_bayes_huge_finite_feature():
    from leakaudit.learners import NaiveBayes

    P = valid_or_clear_error(NaiveBayes(categorical="none").fit, X_HUGE, Y_HUGE, names=NAMES)
    if P is not None:
        _check_probs(P.predict_proba(X_HUGE), 4, "NaiveBayes")


def test_logistic_huge_finite_feature():
    from leakaudit.learners import LogisticRegression

    P = valid_or_clear_error(LogisticRegression().fit, X_HUGE, Y_HUGE, names=NAMES)
    if P is not None:
        _check_probs(P.predict_proba(X_HUGE), 4, "LogisticRegression")


def test_naive_bayes_huge_category_code():
    from leakaudit.learners import NaiveBayes

    valid_or_clear_error(NaiveBayes().fit, np.array([[1e300]]), np.array([0]), names=NAMES)

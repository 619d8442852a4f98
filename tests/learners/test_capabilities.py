"""Learners declare their capabilities (``Learner.capabilities``); consumers read them through ``capabilities()``.

``tests/test_common.py`` runs :func:`check_learner_capabilities` on every shipped learner (the closed-form
leave-one-out equals the refit, a learner that is not stochastic ignores its seed, state round-trips); these tests
pin what each learner declares, that stochastic learners do use their seed, the defaults a learner written outside
leakaudit gets, and that the check catches a false declaration.
"""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

from leakaudit.checks import check_learner_capabilities
from leakaudit.dtp import pdtp
from leakaudit.engine import supports_state
from leakaudit.learners import (
    BayesInference,
    Capabilities,
    Learner,
    ListModelBank,
    LogisticRegression,
    NaiveBayes,
    RandomForest,
    SklearnLearner,
    capabilities,
)

NEWTON = "batched warm-started Newton leave-one-out (exact to solver tolerance)"


@pytest.mark.parametrize("learner, declared", [
    (NaiveBayes(), dict(loo="closed-form NaiveBayes.loo_proba", stochastic=False)),
    (BayesInference(), dict(loo="closed-form BayesInference.loo_proba", stochastic=False)),
    (LogisticRegression(), dict(loo=NEWTON, loo_models=True, stochastic=False, state=True)),
    (LogisticRegression(solver="lbfgs"), dict(stochastic=False, state=True)),  # leave-one-out needs Newton
    (RandomForest(n_estimators=7), dict(votes=7, implements="scikit-learn's RandomForestClassifier algorithm, "
                                                            "same trees for the same seed")),
    (SklearnLearner(RandomForestClassifier(n_estimators=4)), dict(votes=4, fits_one_class=False)),
    (SklearnLearner(GaussianNB()), dict(stochastic=False, fits_one_class=False)),  # no random_state to seed
    (SklearnLearner(DecisionTreeClassifier()), dict(fits_one_class=False)),
], ids=lambda v: type(v).__name__ if isinstance(v, Learner) else "")
def test_each_learner_declares_its_capabilities(learner, declared):
    assert capabilities(learner) == Capabilities(**declared)


def test_torch_learners_declare_theirs():
    pytest.importorskip("torch")
    from leakaudit.learners import DPSGD, TorchMLP

    assert capabilities(TorchMLP()) == Capabilities(state=True)
    assert capabilities(DPSGD(learner=TorchMLP())) == Capabilities()


def _xy(n=40, seed=0):
    """Binary features whose frequencies depend on the class (naive Bayes and Bayes inference accept them)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return (rng.random((n, 5)) < 0.3 + 0.4 * y[:, None]).astype(float), y


def _numeric(n=40, seed=0):
    """Distinct numeric rows (a fully grown tree's leaves are then pure)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return rng.normal(size=(n, 4)) + y[:, None], y


@pytest.mark.parametrize("learner", [
    RandomForest(n_estimators=5),
    SklearnLearner(DecisionTreeClassifier(splitter="random", max_features=2)),
], ids=lambda v: type(v).__name__)
def test_stochastic_learners_train_other_models_with_other_seeds(learner):
    X, y = _numeric()
    Xq = _numeric(seed=1)[0]  # new points: at its own rows a fully grown tree gives the labels whatever the seed
    assert capabilities(learner).stochastic
    a = learner.fit(X, y, random_state=1).predict_proba(Xq)
    b = learner.fit(X, y, random_state=2).predict_proba(Xq)
    assert not np.array_equal(a, b)


def test_torch_mlp_is_stochastic():
    pytest.importorskip("torch")
    from leakaudit.learners import TorchMLP

    test_stochastic_learners_train_other_models_with_other_seeds(TorchMLP(hidden=(4,), epochs=2))


def test_a_fully_grown_forest_outputs_votes():
    X, y = _numeric()
    rf = RandomForest(n_estimators=6)
    T = capabilities(rf).votes * rf.fit(X, y, random_state=0).predict_proba(X[:10])
    np.testing.assert_allclose(T, np.round(T), atol=1e-9)


class _Counts(Learner):
    """A learner written outside leakaudit: class frequencies, no declarations."""

    def _fit(self, X, y, *, random_state, n_classes):
        return _Prior(np.bincount(y, minlength=n_classes) / len(y))

    def _fit_many(self, X, y, subsets, seeds, *, n_classes):
        return ListModelBank([self._fit(X[s], y[s], random_state=0, n_classes=n_classes) for s in subsets], n_classes)


class _Prior:
    def __init__(self, p):
        self.p = p

    def predict_proba(self, X):
        return np.tile(self.p, (len(X), 1))


def test_a_learner_without_declarations_gets_the_defaults_and_is_retrained():
    X, y = _xy(20)
    assert capabilities(_Counts()) == Capabilities()
    assert capabilities(object()) == Capabilities()  # not a Learner at all
    caps = Capabilities()
    assert caps.loo is None and not caps.loo_models and caps.stochastic and not caps.state and caps.votes is None
    assert not supports_state(_Counts())
    res = pdtp(_Counts(), X, y, records=[0, 1], bin_width=None, n_repeats=2)
    assert res.method == "retraining (fit_many)"
    check_learner_capabilities(_Counts())  # nothing declared: nothing to contradict


class _Deterministic(_Counts):
    capabilities = Capabilities(stochastic=False)


class _SeededCounts(_Deterministic):
    """Declares stochastic=False but mixes its seed into the model."""

    def _fit(self, X, y, *, random_state, n_classes):
        p = np.bincount(y, minlength=n_classes) + np.random.default_rng(random_state).uniform(size=n_classes)
        return _Prior(p / p.sum())


class _WrongLoo(_Deterministic):
    """Declares a closed-form leave-one-out that returns the full model's outputs."""

    capabilities = Capabilities(loo="wrong", stochastic=False)

    def loo_proba(self, X, y, records, *, X_query=None, n_classes=None, return_full=False):
        p = self.fit(X, y, n_classes=n_classes).predict_proba(X[records])
        return (p, p) if return_full else p


def test_the_declaration_is_read_and_checked():
    X, y = _xy(20)
    check_learner_capabilities(_Deterministic())
    assert pdtp(_WrongLoo(), X, y, records=[0, 1], bin_width=None).method == "wrong"  # the closed form is used
    with pytest.raises(AssertionError, match="declares stochastic=False"):
        check_learner_capabilities(_SeededCounts())
    with pytest.raises(AssertionError, match="differs from refitting"):
        check_learner_capabilities(_WrongLoo())


# -- every learner checks its parameters in the one hook, validate_params ------------------------------------
@pytest.mark.parametrize("learner, match", [
    (RandomForest(criterion="mse"), "criterion"),
    (RandomForest(max_features=1.5), "max_features"),
    (LogisticRegression(C=0.0), "C"),
    (LogisticRegression(blas_threads=0), "blas_threads"),
    (NaiveBayes(alpha=-1.0), "alpha"),
    (NaiveBayes(categorical="some"), "categorical"),
    (BayesInference(unseen="zero"), "unseen"),
], ids=lambda v: type(v).__name__ if isinstance(v, Learner) else v)
def test_bad_parameters_are_refused_by_validate_params_before_any_data(learner, match):
    from leakaudit.engine import Engine
    from leakaudit.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=match):
        learner.validate_params()
    X, y = _xy(20)
    with pytest.raises(InvalidParameterError, match=match):  # the engine asks before it trains anything
        Engine(progress=False).predict_many(learner, X, y, [np.arange(20)], [0], X)
    if capabilities(learner).loo is not None:  # and so does the closed-form leave-one-out
        with pytest.raises(InvalidParameterError, match=match):
            learner.loo_proba(X, y, [0])


def test_a_subclass_with_parameters_of_its_own_keeps_every_parameter():
    # each __init__ keeps its own parameters (keep_params reads the calling __init__'s, not the subclass's)
    class Forest(RandomForest):
        def __init__(self, *, n_estimators=100, extra=1):
            super().__init__(n_estimators=n_estimators)
            self.extra = extra

    m = Forest(n_estimators=4, extra=3)
    assert (m.n_estimators, m.extra, m.max_depth, m.bootstrap) == (4, 3, None, True)
    assert m.get_params() == {"extra": 3, "n_estimators": 4}

"""The scikit-learn adapter: seeds, class expansion, parallel fit_many, documented errors."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from leakaudit.exceptions import InvalidInputError, InvalidParameterError, LeakauditError, UnsupportedError
from leakaudit.learners import ListModelBank, SklearnLearner, SklearnModel


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield


def data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 4)) + y[:, None]
    return X, y


X, Y = data()


def test_probabilities_expanded_to_all_classes():
    # Subset holds classes 0 and 2 only; column 1 must be zero, columns 0 and 2 the estimator's own.
    rows = np.flatnonzero(Y != 1)
    model = SklearnLearner(LogisticRegression()).fit(X[rows], Y[rows], n_classes=4)
    p = model.predict_proba(X[:5])
    own = model.estimator_.predict_proba(X[:5])
    assert p.shape == (5, 4)
    np.testing.assert_array_equal(p[:, [0, 2]], own)
    np.testing.assert_array_equal(p[:, [1, 3]], 0.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert model.classes_.tolist() == [0, 2]
    np.testing.assert_array_equal(model.predict(X[:5]), p.argmax(axis=1))


def test_n_classes_defaults_to_max_label_plus_one():
    assert SklearnLearner(GaussianNB()).fit(X, Y).predict_proba(X[:2]).shape == (2, 3)


def test_seed_goes_into_random_state_of_the_clone_only():
    est = DecisionTreeClassifier(splitter="random")
    learner = SklearnLearner(est)
    m = learner.fit(X, Y, random_state=17)
    assert m.estimator_.random_state == 17 and est.random_state is None
    assert not hasattr(est, "tree_")  # the user's estimator is never fitted
    # Same seed, same model; different seeds, different trees.
    again = learner.fit(X, Y, random_state=17)
    np.testing.assert_array_equal(m.predict_proba(X), again.predict_proba(X))
    other = learner.fit(X, Y, random_state=18)
    assert not np.array_equal(m.estimator_.tree_.threshold, other.estimator_.tree_.threshold)


def test_seed_into_nested_random_states():
    learner = SklearnLearner(make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(5,), max_iter=20)))
    with pytest.warns(Warning):  # ConvergenceWarning after 20 iterations
        m = learner.fit(X, Y, random_state=5)
    assert m.estimator_.steps[-1][1].random_state == 5


def test_none_seed_keeps_the_estimators_own():
    m = SklearnLearner(DecisionTreeClassifier(random_state=3)).fit(X, Y)
    assert m.estimator_.random_state == 3


def test_generator_seed_is_reproducible():
    learner = SklearnLearner(DecisionTreeClassifier(splitter="random"))
    a = learner.fit(X, Y, random_state=np.random.default_rng(4)).predict_proba(X)
    b = learner.fit(X, Y, random_state=np.random.default_rng(4)).predict_proba(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("estimator", [LogisticRegression(C=4.0), DecisionTreeClassifier(splitter="random"),
                                       RandomForestClassifier(n_estimators=3)], ids=["logreg", "tree", "forest"])
def test_fit_many_equals_fit_one_at_a_time(estimator):
    rng = np.random.default_rng(1)
    subsets = [rng.choice(len(X), 50, replace=False) for _ in range(4)]
    seeds = [3, 1, 4, 1]
    learner = SklearnLearner(estimator)
    bank = learner.fit_many(X, Y, subsets, seeds)
    assert isinstance(bank, ListModelBank) and len(bank) == 4
    want = np.stack([learner.fit(X[s], Y[s], random_state=r, n_classes=3).predict_proba(X) for s, r in
                     zip(subsets, seeds)])
    np.testing.assert_array_equal(bank.predict_proba(X), want)
    assert isinstance(bank.model(2), SklearnModel)


def test_fit_many_in_worker_processes_equals_sequential():
    rng = np.random.default_rng(2)
    subsets = [rng.choice(len(X), 60, replace=False) for _ in range(4)]
    est = DecisionTreeClassifier(splitter="random", max_features=2)
    par = SklearnLearner(est, n_jobs=2).fit_many(X, Y, subsets, 9).predict_proba(X)
    seq = SklearnLearner(est).fit_many(X, Y, subsets, 9).predict_proba(X)
    np.testing.assert_array_equal(par, seq)


def test_regressor():
    rng = np.random.default_rng(3)
    Xr = rng.normal(size=(40, 2))
    yr = 2 * Xr[:, 0] - Xr[:, 1] + 0.5
    learner = SklearnLearner(LinearRegression())
    assert learner.task == "regression"
    bank = learner.fit_many(Xr, yr, [np.arange(20), np.arange(20, 40)], [0, 1])
    out = bank.predict(Xr[:3])
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, np.tile(yr[:3], (2, 1)), atol=1e-10)
    with pytest.raises(UnsupportedError, match="regressor"):
        bank.model(0).predict_proba(Xr[:3])
    with pytest.raises(UnsupportedError, match="fit_predict_many returns class probabilities"):
        learner.fit_predict_many(Xr, yr, [np.arange(20)], [0], Xr)


def test_fit_predict_many_is_fit_many_then_predict_proba():
    """The Learner default: the bank's outputs on X_query; X_query is validated at the boundary."""
    X, y = data()
    learner = SklearnLearner(LogisticRegression())
    subsets = [np.arange(60), np.arange(30, 90)]
    got = learner.fit_predict_many(X, y, subsets, [4, 5], X[:7])
    np.testing.assert_array_equal(got, learner.fit_many(X, y, subsets, [4, 5]).predict_proba(X[:7]))
    with pytest.raises(InvalidInputError, match="X_query has 2 features; X has 4"):
        learner.fit_predict_many(X, y, subsets, [4, 5], X[:, :2])
    with pytest.raises(InvalidInputError, match="X_query"):
        learner.fit_predict_many(X, y, subsets, [4, 5], np.full((2, 4), np.nan))


def test_task_follows_the_estimator():
    assert SklearnLearner(LogisticRegression()).task == "classification"
    assert SklearnLearner(LinearRegression()).task == "regression"


def test_clone_roundtrip():
    learner = SklearnLearner(LogisticRegression(C=7.0), n_jobs=2)
    c = clone(learner)
    assert c.get_params()["estimator__C"] == 7.0 and c.n_jobs == 2 and c.estimator is not learner.estimator
    assert repr(c) == repr(learner)


# -- errors and documented behaviour ------------------------------------------------
@pytest.mark.parametrize(
    "learner, error, match",
    [
        (SklearnLearner(), InvalidParameterError, "estimator is required"),
        (SklearnLearner(LogisticRegression), InvalidParameterError, r"not the class LogisticRegression"),
        (SklearnLearner("tree"), InvalidParameterError, "must be a scikit-learn estimator"),
        (SklearnLearner(SVC()), UnsupportedError, r"SVC has no predict_proba \(pass probability=True\)"),
        (SklearnLearner(LogisticRegression(), n_jobs=0), InvalidParameterError, "n_jobs"),
    ],
)
def test_bad_estimator(learner, error, match):
    with pytest.raises(error, match=match):
        learner.fit(X, Y)
    with pytest.raises(error, match=match):
        learner.fit_many(X, Y, [np.arange(10)], [0])


def test_bad_input_is_our_error():
    learner = SklearnLearner(LogisticRegression())
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match=r"X contains NaN"):
        learner.fit(Xn, Y)
    with pytest.raises(InvalidInputError, match="subsets is empty"):
        learner.fit_many(X, Y, [], [])
    with pytest.raises(InvalidInputError, match=r"subsets\[1\] holds index 90"):
        learner.fit_many(X, Y, [np.arange(10), np.array([1, 90])], [0, 1])
    with pytest.raises(InvalidInputError, match=r"subsets\[0\] is empty"):
        learner.fit_many(X, Y, [np.array([], dtype=int)], [0])
    model = learner.fit(X, Y)
    with pytest.raises(InvalidInputError, match="X has 3 features but the model was fitted on 4"):
        model.predict_proba(X[:, :3])


def test_single_class_subset():
    one = np.flatnonzero(Y == 2)[:15]
    # Trees and naive Bayes fit one class: probability 1 for it, 0 elsewhere.
    for est in (DecisionTreeClassifier(), GaussianNB()):
        p = SklearnLearner(est).fit_many(X, Y, [one], [0]).predict_proba(X[:4])
        np.testing.assert_array_equal(p[0], np.tile([0.0, 0.0, 1.0], (4, 1)))
    # Logistic regression refuses: our error names the subset and the class.
    with pytest.raises(InvalidInputError, match=r"LogisticRegression cannot be fitted on a single class "
                                                r"\(subsets\[1\]\) \(all labels are 2\)"):
        SklearnLearner(LogisticRegression()).fit_many(X, Y, [np.arange(30), one], [0, 1])
    # MLPClassifier fits but returns two columns for one class: undefined, so our error.
    with pytest.raises(InvalidInputError, match=r"returns 2 columns after fitting 1 class"), \
            pytest.warns(Warning):
        SklearnLearner(MLPClassifier(max_iter=5)).fit(X[one], Y[one], random_state=0)


def test_errors_are_leakaudit_errors():
    with pytest.raises(LeakauditError):
        SklearnLearner(LogisticRegression()).fit(X[:5], np.zeros(5, dtype=int))

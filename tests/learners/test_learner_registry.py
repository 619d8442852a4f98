"""leakaudit.learners.registry: the learner names --model takes, each a factory with its default parameters."""

import subprocess
import sys

import pytest

from leakaudit.exceptions import InvalidParameterError
from leakaudit.learners import Learner, LogisticRegression, RandomForest, SklearnLearner
from leakaudit.learners.registry import get_learner, learner_names, make_learner, register_learner


def test_names():
    assert learner_names() == ("mlp", "logreg", "simplelogistic", "lmt", "tree", "forest", "gradient-boosting", "knn",
                               "dp-mlp", "xgboost", "lightgbm", "catboost", "nb", "nb-unsmoothed", "bayes-inference",
                               "cnn", "torch-module")
    assert learner_names(inputs="encoded") == ("mlp", "logreg", "simplelogistic", "lmt", "tree", "forest",
                                               "gradient-boosting", "knn", "dp-mlp", "xgboost", "lightgbm", "catboost")
    assert learner_names(inputs="codes") == ("nb", "nb-unsmoothed", "bayes-inference")
    assert learner_names(inputs="images") == ("cnn",)
    with pytest.raises(InvalidParameterError,
                       match="inputs must be one of 'encoded', 'codes', 'images', 'module'; got 'text'"):
        learner_names(inputs="text")
    with pytest.raises(InvalidParameterError, match="inputs must be one of"):
        register_learner("svm", LogisticRegression, inputs="pixels")


def test_every_learner_class_is_registered():
    """Every Learner the package exports is behind a name (DPSGD wraps one: "dp-mlp")."""
    import leakaudit.learners as L

    classes = {obj for name in L.__all__ if isinstance(obj := getattr(L, name, None), type)
               and issubclass(obj, Learner) and obj is not Learner}
    registered = set()
    for name in learner_names():
        entry = get_learner(name)
        params = {"module": "torch.nn:Linear"} if entry.inputs == "module" else {}
        lrn = entry.make(**params)
        registered.add(type(lrn))
        registered.add(type(getattr(lrn, "learner", lrn)))
    assert classes - registered == set()


@pytest.mark.parametrize("name", ["nb", "nb-unsmoothed", "bayes-inference"])
def test_code_learners_train_on_category_codes(name):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 4))
    y = (X[:, 0] == 1).astype(np.int64)
    kw = {} if name == "bayes-inference" else {"categorical": np.arange(4), "n_values": np.full(4, 3)}
    proba = make_learner(name, **kw).fit(X, y, random_state=0, n_classes=2).predict_proba(X)
    assert proba.shape == (60, 2) and np.allclose(proba.sum(1), 1.0)
    if name == "nb-unsmoothed":
        assert get_learner(name).defaults == {"alpha": 0.0, "prior_smoothing": False}


@pytest.mark.parametrize("name", ["logreg", "tree", "forest", "knn"])
def test_every_entry_makes_a_fresh_learner_with_its_defaults(name):
    a, b = make_learner(name), make_learner(name)
    assert isinstance(a, Learner) and a is not b
    params = a.get_params(deep=True)
    for key, value in get_learner(name).defaults.items():
        assert params.get(key, params.get(f"estimator__{key}")) == value, (name, key)


def test_defaults_and_overrides():
    lr = make_learner("logreg")
    assert isinstance(lr, LogisticRegression) and lr.C == 1e3
    assert make_learner("logreg", C=1.0).C == 1.0
    forest = make_learner("forest", n_estimators=7)
    assert isinstance(forest, RandomForest) and forest.n_estimators == 7
    with pytest.raises(TypeError):
        get_learner("logreg").defaults["C"] = 1.0  # read-only: a caller cannot change the table


def test_mlp_defaults():
    pytest.importorskip("torch")
    mlp = make_learner("mlp")
    assert (tuple(mlp.hidden), mlp.activation, mlp.mode, mlp.epochs) == ((64,), "tanh", "fast", 30)


def test_unknown_and_taken_names():
    with pytest.raises(InvalidParameterError, match=r"unknown learner 'svm'; choose from mlp, logreg"):
        make_learner("svm")
    with pytest.raises(InvalidParameterError, match="'mlp' is already registered"):
        register_learner("mlp", LogisticRegression)


def test_reading_the_names_imports_neither_torch_nor_the_estimators():
    code = ("import sys; from leakaudit.learners.registry import learner_names; learner_names(); "
            "print(sorted(m for m in ('torch', 'sklearn.tree', 'sklearn.ensemble', 'sklearn.neighbors') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_dp_mlp_entry():
    pytest.importorskip("torch")
    from leakaudit.learners import DPSGD, TorchMLP

    dp = make_learner("dp-mlp", noise_multiplier=2.0)
    assert isinstance(dp, DPSGD) and isinstance(dp.learner, TorchMLP) and dp.noise_multiplier == 2.0
    assert tuple(dp.learner.hidden) == (64,) and dp.sampling_rate == 0.01


def test_forest_entry_grows_scikit_learns_forests():
    """"forest" is leakaudit's RandomForest: the models scikit-learn's RandomForestClassifier grows with the same
    parameters and seeds, the same probabilities."""
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(200, 6)), 1)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=200) > 0).astype(np.int64)
    subsets = [rng.choice(200, 120, replace=False) for _ in range(3)]
    ours = make_learner("forest", n_estimators=9).fit_many(X, y, subsets, [1, 2, 3], n_classes=2).predict_proba(X)
    ref = SklearnLearner(RandomForestClassifier(n_estimators=9)).fit_many(X, y, subsets, [1, 2, 3], n_classes=2)
    np.testing.assert_array_equal(ours, ref.predict_proba(X))

"""A learner declares whether its trained models are one parameter vector (what MIP noise is added to)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLR
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from leakaudit.exceptions import UnsupportedError
from leakaudit.learners import LogisticRegression, NaiveBayes, RandomForest, SklearnLearner, TorchMLP


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("make", [lambda X, y: TorchMLP(hidden=(8,), epochs=3),
                                  lambda X, y: LogisticRegression(C=1.0),
                                  lambda X, y: SklearnLearner(SkLR())])
def test_extract_and_rebuild_round_trip(make):
    """extract -> rebuild gives a model that predicts as the trained one; a changed vector changes it."""
    X, y = _data()
    learner = make(X, y)
    fitted = SkLR().fit(X, y) if isinstance(learner, SklearnLearner) else None
    extract, rebuild = learner.parameter_codec(X, fitted=fitted)
    model = learner.fit(X, y, random_state=0, n_classes=2)
    v = extract(model)
    assert v.ndim == 1 and v.size > X.shape[1]
    np.testing.assert_allclose(rebuild(v).predict_proba(X), model.predict_proba(X), rtol=1e-5, atol=1e-6)
    assert not np.allclose(rebuild(v + 1.0).predict_proba(X), model.predict_proba(X))


def test_learners_whose_models_are_not_a_vector_say_why():
    X, y = _data()
    with pytest.raises(UnsupportedError, match="forest's parameters are its trees"):
        RandomForest(n_estimators=3).parameter_codec(X)
    with pytest.raises(UnsupportedError, match="Pipeline"):
        SklearnLearner(make_pipeline(StandardScaler(), SkLR())).parameter_codec(
            X, fitted=make_pipeline(StandardScaler(), SkLR()).fit(X, y))
    with pytest.raises(UnsupportedError, match="read and set"):  # the default of the protocol
        NaiveBayes().parameter_codec(X)
    with pytest.raises(UnsupportedError, match="needs the fitted"):
        SklearnLearner(SkLR()).parameter_codec(X)

"""PDTP's approximate leave-one-out (method="approximate"): gradient boosting's leaf refit, labelled approximate."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from leakaudit.dtp import pdtp
from leakaudit.exceptions import InvalidParameterError
from leakaudit.learners import SklearnLearner, capabilities
from leakaudit.learners._boosting_loo import gradient_boosting_loo, leaf_refit_unsupported


def _data(n=60, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int) if classes == 2 else rng.integers(0, classes, n)
    return X, y


@pytest.mark.parametrize("classes", [2, 3])
def test_replay_without_removal_is_the_full_model(classes):
    # the replay of scikit-learn's leaf updates with nothing left out gives the trained model's outputs
    X, y = _data(classes=classes)
    est = GradientBoostingClassifier(n_estimators=15, max_depth=2, random_state=0).fit(X, y)
    out = gradient_boosting_loo(est, X, y, np.array([-1]))
    np.testing.assert_allclose(out[0], est.predict_proba(X[:1])[0], atol=1e-10)


def test_leave_one_out_moves_the_removed_records_output_towards_the_others():
    # a record with a unique feature value and the other label: the full model fits it, its leave-one-out does not
    X, y = _data(n=80)
    X[0], y[0] = [6.0, 6.0, 6.0], 0  # far out on the side where every other record is labelled 1
    est = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    loo = gradient_boosting_loo(est, X, y, np.array([0]))
    assert est.predict_proba(X[:1])[0, 0] > 0.5 > loo[0, 0]


def test_approximate_is_labelled_and_decides_as_exact_on_a_leaking_record():
    X, y = _data(n=40)
    X[0], y[0] = [6.0, 6.0, 6.0], 0
    learner = SklearnLearner(make_pipeline(StandardScaler(), GradientBoostingClassifier(n_estimators=20,
                                                                                          max_depth=2)))
    assert "approximate" in capabilities(learner).loo_refit
    exact = pdtp(learner, X, y, records=[0, 1, 2], seed_policy="paired", method="retrain", random_state=0)
    approx = pdtp(learner, X, y, records=[0, 1, 2], seed_policy="paired", method="approximate", random_state=0)
    assert approx.method.startswith("approximate") and "approximate" not in exact.method
    # the DTP-1 decision for the planted record is the same: above the threshold either way (1.30 and 1.27)
    assert exact.values[0] > 1 and approx.values[0] > 1
    assert approx.values[0] == pytest.approx(exact.values[0], abs=0.1)
    np.testing.assert_allclose(exact.p_full, approx.p_full)  # the same full model (the paired seed)


def test_approximate_falls_back_to_retraining_and_needs_paired_seeds():
    X, y = _data(n=20)
    forest = SklearnLearner(RandomForestClassifier(n_estimators=3))
    assert capabilities(forest).loo_refit is None
    assert "approximate" not in pdtp(forest, X, y, records=[0], seed_policy="paired", method="approximate",
                                     random_state=0).method
    boosted = SklearnLearner(GradientBoostingClassifier(n_estimators=3))
    with pytest.raises(InvalidParameterError, match="seed_policy='paired'"):
        pdtp(boosted, X, y, records=[0], method="approximate", random_state=0)
    assert "subsample" in leaf_refit_unsupported(GradientBoostingClassifier(subsample=0.5))

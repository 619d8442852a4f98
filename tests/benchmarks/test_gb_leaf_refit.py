"""benchmarks/_gb_leaf_refit.py, the leaf-refit leave-one-out experiment that gb_leaf_refit_accuracy.py measures
against exact retraining: its replay is scikit-learn's training once the splits are fixed."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier

pytestmark = pytest.mark.slow  # an experiment outside the package: run with the benchmarks (make test-slow)


def _data(n=60, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int) if classes == 2 else rng.integers(0, classes, n)
    return X, y


@pytest.mark.parametrize("classes", [2, 3])
def test_replay_without_removal_is_the_full_model(load_benchmark, classes):
    # the replay of scikit-learn's leaf updates with nothing left out gives the trained model's outputs
    g = load_benchmark("_gb_leaf_refit")
    X, y = _data(classes=classes)
    est = GradientBoostingClassifier(n_estimators=15, max_depth=2, random_state=0).fit(X, y)
    out = g.gradient_boosting_loo(est, X, y, np.array([-1]))
    np.testing.assert_allclose(out[0], est.predict_proba(X[:1])[0], atol=1e-10)


def test_leave_one_out_moves_the_removed_records_output_towards_the_others(load_benchmark):
    # a record with a unique feature value and the other label: the full model fits it, its leave-one-out does not
    g = load_benchmark("_gb_leaf_refit")
    X, y = _data(n=80)
    X[0], y[0] = [6.0, 6.0, 6.0], 0  # far out on the side where every other record is labelled 1
    est = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    loo = g.gradient_boosting_loo(est, X, y, np.array([0]))
    assert est.predict_proba(X[:1])[0, 0] > 0.5 > loo[0, 0]
    assert "subsample" in g.leaf_refit_unsupported(GradientBoostingClassifier(subsample=0.5))

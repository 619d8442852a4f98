"""The DTP-1 test of a learner whose seed does not matter reuses stage 1's models (dtp.significance.seed_free_deltas):
the same result as retraining them, and no model trained for the records stage 1 measured."""

import numpy as np
import pytest
from _dtp_helpers import outlier_data
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from leakaudit.dtp import dtp1_test, pdtp, removal_effect, seed_free_deltas
from leakaudit.dtp.significance import DTP1Deltas
from leakaudit.engine import Engine
from leakaudit.learners import SklearnLearner, capabilities


def _same(a, b):
    for key in ("records", "stage2_mean", "sd", "lower_bound", "p_value", "p_adjusted", "significant", "repeats",
                "looks", "n_repeats", "loo_method", "method", "untested"):
        assert np.array_equal(np.asarray(getattr(a, key)), np.asarray(getattr(b, key))), key


@pytest.mark.parametrize("est", [KNeighborsClassifier(3), DecisionTreeClassifier(max_depth=3)])
def test_stage2_from_stage1_equals_retraining(est):
    X, y = outlier_data(60)
    learner = SklearnLearner(est)
    if capabilities(learner).stochastic:  # a seeded tree: nothing reused, the test retrains as before
        stage1 = pdtp(learner, X, y, seed_policy="paired", random_state=1, keep_outputs=True)
        assert seed_free_deltas(learner, stage1, 7).deltas == {}
        return
    stage1 = pdtp(learner, X, y, seed_policy="paired", random_state=1, keep_outputs=True)
    above = np.asarray(stage1.records)[np.asarray(stage1.values) > 0.5]
    assert above.size
    vals = np.asarray(stage1.values)[above]
    fresh = dtp1_test(learner, X, y, records=above, threshold=0.5, stage1_values=vals, random_state=7,
                      engine=Engine(), known_deltas=DTP1Deltas())
    engine = Engine()
    reused = dtp1_test(learner, X, y, records=above, threshold=0.5, stage1_values=vals, random_state=7,
                       engine=engine, known_deltas=seed_free_deltas(learner, stage1, 7))
    _same(fresh, reused)
    assert engine.totals.models_trained == 0


def test_unchanged_without_outputs_or_with_a_closed_form():
    from leakaudit.learners import LogisticRegression

    X, y = outlier_data(40)
    knn = SklearnLearner(KNeighborsClassifier(3))
    no_outputs = pdtp(knn, X, y, seed_policy="paired", random_state=1, keep_outputs=False)
    assert seed_free_deltas(knn, no_outputs, 7).deltas == {}
    lr = LogisticRegression()
    closed = pdtp(lr, X, y, seed_policy="paired", random_state=1, keep_outputs=True)
    if not closed.method.startswith("retraining"):
        assert seed_free_deltas(lr, closed, 7).deltas == {}


def test_removal_effect_unchanged_by_the_reuse(monkeypatch):
    """removal_effect's test after the removal reuses its PDTP's models: the same effect as retraining them."""
    import leakaudit.dtp.removal as removal

    X, y = outlier_data(60)
    learner = SklearnLearner(KNeighborsClassifier(3))
    rng = np.random.default_rng(0)
    X_eval = rng.normal(size=(30, 2))
    y_eval = (X_eval[:, 0] > 0).astype(int)
    kw = dict(X_eval=X_eval, y_eval=y_eval, threshold=0.5, n_seeds=2, random_state=3)
    engine = Engine()
    reused = removal_effect(learner, X, y, [0], engine=engine, **kw)
    monkeypatch.setattr(removal, "seed_free_deltas", lambda *a, into=None, **k: into)
    engine_fresh = Engine()
    fresh = removal_effect(learner, X, y, [0], engine=engine_fresh, **kw)
    assert reused.model_dump(exclude={"engine_stats"}) == fresh.model_dump(exclude={"engine_stats"})
    assert fresh.records_above_after  # the test ran on candidates, so the reuse saved their models
    assert engine.totals.models_trained < engine_fresh.totals.models_trained

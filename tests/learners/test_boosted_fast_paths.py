"""The boosted learners' fast paths train what the libraries' own entry points train (issue 67's speed-up).

XGBoostLearner runs xgboost.train's loop without its callbacks, LightGBMLearner keeps the training booster instead
of rebuilding it from its text, and the DTP-1 test measures a learner whose seed does not matter once for all its
repeats: each is compared here, bit for bit, with the path it replaces.
"""

import json

import numpy as np
import pytest

from leakaudit.learners import capabilities


def _data(n=240, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.8, size=n)) > 0).astype(np.int64)
    return X, y


def _fitted(learner_cls, params, seed):
    """Data, the learner, its model of the data, and the library parameters that model was trained with."""
    X, y = _data()
    learner = learner_cls(n_rounds=25, params=params)
    return X, y, learner, learner.fit(X, y, random_state=seed), learner._training(y, seed, None)[1]


@pytest.mark.parametrize("params", [{"max_depth": 4}, {"max_depth": 3, "subsample": 0.7, "colsample_bynode": 0.8}])
def test_xgboost_fit_equals_xgboost_train(params):
    xgb = pytest.importorskip("xgboost")
    from leakaudit.learners import XGBoostLearner

    X, y, _, model, train_params = _fitted(XGBoostLearner, params, 7)
    ref = xgb.train(train_params, xgb.DMatrix(X, label=y.astype(float), nthread=1), num_boost_round=25)
    assert json.loads(bytes(model.booster_.save_raw("json"))) == json.loads(bytes(ref.save_raw("json")))
    d = xgb.DMatrix(X, nthread=1)
    assert np.array_equal(model.booster_.predict(d), ref.predict(d))


@pytest.mark.parametrize("params", [{"num_leaves": 31, "min_data_in_leaf": 2},
                                    {"num_leaves": 8, "bagging_fraction": 0.7, "bagging_freq": 1}])
def test_lightgbm_training_booster_equals_its_text_round_trip(params):
    lgb = pytest.importorskip("lightgbm")
    from leakaudit.learners import LightGBMLearner, LightGBMModel

    X, y, learner, model, train_params = _fitted(LightGBMLearner, params, 3)
    ref = lgb.train(train_params, lgb.Dataset(X, label=y.astype(float), params={"verbosity": -1}), num_boost_round=25)
    # the model's text (what it saves: every split, threshold and leaf value at full precision) and its leaf counts;
    # only dump_model()'s internal-node statistics differ, rounded to 6 digits by the round trip the fast path skips
    assert model.booster_.model_to_string() == ref.model_to_string()
    assert all(np.array_equal(a, b) for a, b in zip(model.tree_leaf_records(), LightGBMModel(ref, 2, 8).tree_leaf_records()))
    Xq = _data(50, seed=1)[0]
    assert np.array_equal(model.predict_proba(Xq)[:, 1], ref.predict(Xq, num_threads=1))
    assert np.array_equal(model.predict_proba(X), learner.fit(X, y, random_state=99).predict_proba(X)) == (
        not capabilities(learner).stochastic)


def test_dtp1_test_measures_a_seed_free_learner_once_for_every_repeat():
    pytest.importorskip("lightgbm")
    from leakaudit.dtp import dtp1_test
    from leakaudit.learners import LightGBMLearner

    fits = []

    class Counted(LightGBMLearner):
        def _fit(self, X, y, *, random_state, n_classes):
            fits.append(int(random_state))
            return super()._fit(X, y, random_state=random_state, n_classes=n_classes)

    class DeclaredStochastic(Counted):  # the same training, every repeat retrained as for a seeded learner
        @property
        def capabilities(self):
            import dataclasses

            return dataclasses.replace(super().capabilities, stochastic=True)

    X, y = _data(120)
    kw = dict(params={"num_leaves": 16, "min_data_in_leaf": 1, "lambda_l2": 0.0}, n_rounds=20)
    out = {}
    for cls in (Counted, DeclaredStochastic):
        fits.clear()
        res = dtp1_test(cls(**kw), X, y, records=[0, 5, 17], n_repeats=4, random_state=11)
        out[cls.__name__] = (res, len(fits), len(set(fits)))
    (fast, n_fast, _), (slow, n_slow, seeds_slow) = out["Counted"], out["DeclaredStochastic"]
    assert not capabilities(Counted(**kw)).stochastic and seeds_slow == 4  # the slow path did use 4 seeds
    assert (n_fast, n_slow) == (4, 16)  # full model + 3 leave-one-out models, once vs every repeat
    for field in ("stage2_mean", "sd", "lower_bound", "p_value", "p_adjusted", "significant"):
        assert getattr(fast, field) == getattr(slow, field), field
    # and it says what it did: one exact measurement, not 4 repeats tested against each other
    assert (fast.n_repeats, slow.n_repeats) == (1, 4)
    assert fast.method.startswith("exact: ") and slow.method.startswith("one-sided t-tests (df = 3)")

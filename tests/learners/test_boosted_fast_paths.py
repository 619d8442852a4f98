"""The boosted learners' fast paths train what the libraries' own entry points train (issue 67's speed-up).

XGBoostLearner runs xgboost.train's loop without its callbacks (and, after the first round, without Booster.update's
per-round feature checks), LightGBMLearner keeps the training booster instead of rebuilding it from its text, and the
DTP-1 test measures a learner whose seed does not matter once for all its repeats: each is compared here, bit for bit,
with the path it replaces (binary and multi-class, with and without sampling, every model of a fit_many).
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


def _multi(n=240, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.digitize(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n), [-0.5, 0.5]).astype(np.int64)


_XGB_SAMPLED = {"max_depth": 3, "subsample": 0.7, "colsample_bytree": 0.9, "colsample_bynode": 0.8}


@pytest.mark.parametrize("objective", [None, "multi:softmax"])
@pytest.mark.parametrize("params", [{"max_depth": 4}, _XGB_SAMPLED])
def test_xgboost_multiclass_and_every_model_of_fit_many_equal_xgboost_train(params, objective):
    xgb = pytest.importorskip("xgboost")
    from leakaudit.learners import XGBoostLearner

    X, y = _multi()
    learner = XGBoostLearner(n_rounds=12, params=params, objective=objective)
    subsets, seeds = [np.arange(0, 200), np.arange(40, 240), np.arange(240)[::2]], [5, 6, 7]
    bank = learner.fit_many(X, y, subsets, random_states=seeds)
    for k, (s, seed) in enumerate(zip(subsets, seeds)):
        ref = xgb.train(learner._training(y, seed, 3)[1], xgb.DMatrix(X[s], label=y[s].astype(float), nthread=1),
                        num_boost_round=12)
        assert bytes(bank.model(k).booster_.save_raw("json")) == bytes(ref.save_raw("json"))
        d = xgb.DMatrix(X, nthread=1)
        assert np.array_equal(bank.model(k).booster_.predict(d, output_margin=True), ref.predict(d, output_margin=True))


@pytest.mark.parametrize("n_rounds", [1, 2])
def test_xgboost_fewest_rounds_equal_xgboost_train(n_rounds):
    xgb = pytest.importorskip("xgboost")
    from leakaudit.learners import XGBoostLearner

    X, y = _data()
    learner = XGBoostLearner(n_rounds=n_rounds, params=_XGB_SAMPLED)
    train_params = learner._training(y, 4, None)[1]
    ref = xgb.train(train_params, xgb.DMatrix(X, label=y.astype(float), nthread=1), num_boost_round=n_rounds)
    assert bytes(learner.fit(X, y, random_state=4).booster_.save_raw("json")) == bytes(ref.save_raw("json"))


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


#: a recipe as a model file gives it: dozens of parameters, LightGBM's defaults among them, and constraint sequences
_LGB_RECIPE = {"boosting": "gbdt", "data_sample_strategy": "bagging", "learning_rate": 0.1, "num_leaves": 15,
               "max_depth": -1, "min_data_in_leaf": 5, "min_sum_hessian_in_leaf": 0.001, "bagging_fraction": 0.8,
               "pos_bagging_fraction": 1.0, "neg_bagging_fraction": 1.0, "bagging_freq": 1, "feature_fraction": 0.9,
               "feature_fraction_bynode": 1.0, "extra_trees": False, "lambda_l1": 0.0, "lambda_l2": 0.5,
               "min_gain_to_split": 0.0, "max_delta_step": 0.0, "path_smooth": 0.0, "max_bin": 255,
               "min_data_in_bin": 3, "boost_from_average": True, "use_missing": True, "zero_as_missing": False,
               "monotone_constraints": (1, 0, 0, 0, 0, 0, -1, 0), "monotone_constraints_method": "basic",
               "interaction_constraints": [[0, 1, 2], [3, 4, 5, 6, 7]], "bin_construct_sample_cnt": 200000,
               "feature_pre_filter": True, "enable_bundle": True}


@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("params", [{"num_leaves": 8, "min_data_in_leaf": 3}, _LGB_RECIPE])
def test_lightgbm_multiclass_recipe_and_every_model_of_fit_many_equal_lightgbm_train(params, multi):
    lgb = pytest.importorskip("lightgbm")
    from leakaudit.learners import LightGBMLearner

    X, y = _multi() if multi else _data()
    learner = LightGBMLearner(n_rounds=12, params=dict(params))
    subsets, seeds = [np.arange(0, 200), np.arange(40, 240)], [5, 6]
    bank = learner.fit_many(X, y, subsets, random_states=seeds)
    for k, (s, seed) in enumerate(zip(subsets, seeds)):
        train_params = learner._training(y, seed, 3 if multi else 2)[1]
        ref = lgb.train(train_params, lgb.Dataset(X[s], label=y[s].astype(float), params={"verbosity": -1}),
                        num_boost_round=12, keep_training_booster=True)
        model = bank.model(k).booster_
        assert model.model_to_string() == ref.model_to_string()
        assert model.params == ref.params
        assert np.array_equal(bank.model(k).predict_proba(X), learner.fit(X[s], y[s], random_state=seed,
                                                                          n_classes=3 if multi else 2).predict_proba(X))
    assert learner.params == params  # the learner's own parameters untouched


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

"""GradientBoosting (the compiled boosting kernel) against scikit-learn's GradientBoostingClassifier.

Where no candidate splits tie, every stage cuts the training rows as scikit-learn's does, so the outputs on them agree
to rounding (the cases below). Where candidate splits tie exactly (two columns cutting the rows alike, rows with equal
residuals, nodes whose residuals are all equal) the two may break the tie differently, which moves the outputs; the
tests bound that gap by scikit-learn's own gap between two seeds (on one-hot data), or by 0.02 on average (the
Pipeline, where scikit-learn breaks most ties the same way whatever the seed: benchmarks/README.md measures it).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from leakaudit.exceptions import InvalidInputError, UnsupportedError
from leakaudit.learners import GradientBoosting
from leakaudit.learners.gradient_boosting import KERNEL, FrameGradientBoosting, tree_seeds

pytestmark = pytest.mark.skipif(KERNEL.load() is None, reason="the compiled boosting kernel was not built")


def _continuous(n=300, d=6, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _trees(sk):
    return [(list(t.tree_.feature), list(t.tree_.threshold)) for t in sk.estimators_.ravel()]


def _our_trees(m):
    out = []
    for i, n in enumerate(m.trees_["n_nodes"]):
        f = m.trees_["feat"][i][:n]
        out.append((list(np.where(f >= 0, f, -2)), list(np.where(f >= 0, m.trees_["thr"][i][:n], -2.0))))
    return out


@pytest.mark.parametrize("classes,params", [
    (2, {"max_depth": 4, "min_samples_leaf": 3, "learning_rate": 0.3}),
    (2, {"max_features": "sqrt", "n_estimators": 40}),
    (2, {"min_samples_split": 0.05, "min_weight_fraction_leaf": 0.02, "n_estimators": 30}),
    (2, {"max_depth": None, "n_estimators": 5}),
    (3, {"max_features": "sqrt", "n_estimators": 40}),
    (3, {"min_samples_split": 0.05, "min_weight_fraction_leaf": 0.02, "n_estimators": 30}),
])
def test_same_training_outputs_as_scikit_learn(classes, params):
    """Every stage's partition of the training rows is scikit-learn's (the splits, the leaf rules, the random
    candidate features, the Newton steps, the multinomial start), so their outputs agree to rounding. These cases
    have no ties between different cuts of the training rows; ties between two splits that cut them alike (one row
    cut off by either of two columns) move only other rows' outputs."""
    X, y = _continuous(classes=classes)
    for seed in range(3):
        sk = GradientBoostingClassifier(random_state=seed, **params).fit(X, y)
        ours = GradientBoosting(**params).fit(X, y, random_state=seed)
        assert len(_our_trees(ours)) == len(_trees(sk))
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-12)


def test_same_training_outputs_as_scikit_learn_on_one_hot_columns():
    X, y = _adult_like()
    for seed in range(5):
        sk = GradientBoostingClassifier(random_state=seed).fit(X, y)
        ours = GradientBoosting().fit(X, y, random_state=seed)
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-12)


def test_first_trees_are_scikit_learns_split_for_split():
    X, y = _continuous()
    sk = GradientBoostingClassifier(random_state=0, n_estimators=8).fit(X, y)
    assert _our_trees(GradientBoosting(n_estimators=8).fit(X, y, random_state=0)) == _trees(sk)


def test_tree_seeds_are_the_draws_scikit_learn_hands_its_trees():
    rs = np.random.RandomState(7)
    assert tree_seeds(7, 5).tolist() == [rs.randint(0, 2**31 - 1) for _ in range(5)]


def _adult_like(n=600, seed=0):
    """One-hot columns (ties between candidate splits happen) beside two numeric ones."""
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, 6, size=(n, 3))
    onehot = np.concatenate([np.eye(6)[cat[:, j]] for j in range(3)], axis=1)
    num = np.column_stack([rng.integers(17, 90, n), rng.normal(size=n)])
    logit = 0.8 * (cat[:, 0] == 2) - 0.6 * (cat[:, 1] >= 4) + 0.03 * (num[:, 0] - 40) + 0.5 * num[:, 1]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return np.column_stack([num, onehot]), y


def test_where_splits_tie_the_models_differ_from_scikit_learn_no_more_than_its_own_seeds_do():
    X, y = _adult_like()
    tr = np.arange(400)
    ours_vs_sk, sk_vs_sk = [], []
    for seed in range(8):
        a = GradientBoostingClassifier(random_state=seed).fit(X[tr], y[tr]).predict_proba(X)[:, 1]
        b = GradientBoostingClassifier(random_state=seed + 100).fit(X[tr], y[tr]).predict_proba(X)[:, 1]
        c = GradientBoosting().fit(X[tr], y[tr], random_state=seed).predict_proba(X)[:, 1]
        ours_vs_sk.append(np.abs(a - c).mean())
        sk_vs_sk.append(np.abs(a - b).mean())
    assert np.mean(ours_vs_sk) <= np.mean(sk_vs_sk)


def test_fit_predict_many_gives_fit_many_outputs_and_threads_change_nothing():
    X, y = _adult_like(n=300)
    subsets = [np.arange(0, 250), np.arange(50, 300), np.delete(np.arange(300), 7)]
    bank = GradientBoosting(n_estimators=20, n_threads=1).fit_many(X, y, subsets, [0, 1, 2])
    P = np.stack([m.predict_proba(X) for m in bank.models()])
    Q = GradientBoosting(n_estimators=20, n_threads=2).fit_predict_many(X, y, subsets, [0, 1, 2], X)
    np.testing.assert_array_equal(P, Q)


def test_a_subset_missing_a_class_gets_zero_there_and_one_class_is_refused():
    X, y = _continuous(classes=3)
    keep = np.flatnonzero(y != 1)
    m = GradientBoosting(n_estimators=10).fit(X[keep], y[keep], random_state=0, n_classes=3)
    sk = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X[keep], y[keep])
    P = m.predict_proba(X)
    assert P.shape == (300, 3) and np.all(P[:, 1] == 0)
    np.testing.assert_allclose(P[keep][:, [0, 2]], sk.predict_proba(X[keep]), rtol=0, atol=1e-12)
    with pytest.raises(InvalidInputError, match="only class 2"):
        GradientBoosting().fit(X[y == 2], y[y == 2], random_state=0, n_classes=3)


@pytest.mark.parametrize("setting", [{"subsample": 0.5}, {"loss": "exponential"}, {"max_leaf_nodes": 8},
                                     {"n_iter_no_change": 5}, {"ccp_alpha": 0.01}])
def test_from_sklearn_refuses_what_it_does_not_implement(setting):
    with pytest.raises(UnsupportedError, match=next(iter(setting))):
        GradientBoosting.from_sklearn(GradientBoostingClassifier(**setting))
    est = GradientBoostingClassifier(n_estimators=7, max_depth=2, learning_rate=0.2)
    assert GradientBoosting.from_sklearn(est).get_params()["n_estimators"] == 7


def _frame(n=500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(17, 90, n).astype(float), "hours": rng.normal(40, 10, n),
                       "job": rng.choice(list("abcdefg"), n, p=[.3, .2, .2, .1, .1, .07, .03]),
                       "city": rng.choice(list("xyz"), n)})
    logit = 0.04 * (df["age"] - 40) + 0.8 * (df["job"] == "c") - 0.5 * (df["city"] == "z")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int).to_numpy()
    return df, y


def _pipeline():
    return make_pipeline(ColumnTransformer([("num", StandardScaler(), ["age", "hours"]),
                                            ("cat", OneHotEncoder(handle_unknown="ignore"), ["job", "city"])]),
                         GradientBoostingClassifier(n_estimators=30))


def test_pipeline_retrained_like_scikit_learn_refits_it():
    df, y = _frame()
    L = FrameGradientBoosting(estimator=_pipeline(), frame=df)
    ids = np.arange(len(df), dtype=float).reshape(-1, 1)
    rare = np.flatnonzero(df["job"] == "g")
    subsets = [np.setdiff1d(np.arange(400), rare), np.arange(100, 500)]  # the first lacks category "g"
    bank = L.fit_many(ids, y, subsets, [0, 1])
    ours_vs_sk, sk_vs_sk = [], []
    for k, s in enumerate(subsets):
        sk = clone(_pipeline()).set_params(gradientboostingclassifier__random_state=k).fit(df.iloc[s], y[s])
        sk2 = clone(_pipeline()).set_params(gradientboostingclassifier__random_state=k + 100).fit(df.iloc[s], y[s])
        # the model draws its features in scikit-learn's order over the columns the refitted encoder has
        assert L._columns(*L._prepared()[1:3], s).size == sk[-1].n_features_in_
        a, b = sk.predict_proba(df)[:, 1], sk2.predict_proba(df)[:, 1]
        c = bank.model(k).predict_proba(ids)[:, 1]
        ours_vs_sk.append(np.abs(a - c).mean())
        sk_vs_sk.append(np.abs(a - b).mean())
    assert np.mean(ours_vs_sk) <= 0.02 and np.mean(sk_vs_sk) <= 0.02


def test_pipeline_support_names_what_it_does_not_retrain():
    assert FrameGradientBoosting.supported(_pipeline()) is None
    imputing = make_pipeline(SimpleImputer(), GradientBoostingClassifier())
    assert "SimpleImputer" in FrameGradientBoosting.supported(imputing)
    dropping = make_pipeline(OneHotEncoder(drop="first"), GradientBoostingClassifier())
    assert "OneHotEncoder" in FrameGradientBoosting.supported(dropping)
    subsampled = make_pipeline(StandardScaler(), GradientBoostingClassifier(subsample=0.8))
    assert "subsample" in FrameGradientBoosting.supported(subsampled)


def test_a_bare_model_on_the_tables_numeric_columns_is_retrained_from_them():
    df, y = _frame()
    num = df[["age", "hours"]]
    L = FrameGradientBoosting(estimator=GradientBoostingClassifier(n_estimators=20), frame=num)
    ids = np.arange(len(df), dtype=float).reshape(-1, 1)
    got = L.fit(ids[:400], y[:400], random_state=3).predict_proba(ids[:400])
    want = GradientBoostingClassifier(n_estimators=20, random_state=3).fit(num.iloc[:400], y[:400])
    np.testing.assert_allclose(got, want.predict_proba(num.iloc[:400]), rtol=0, atol=1e-12)


def test_the_audit_retrains_gradient_boosting_with_the_kernel_and_other_settings_with_scikit_learn():
    from leakaudit.audit.inputs.target import FrameEstimatorLearner, _frame_learner, _sklearn_learner
    from leakaudit.learners.sklearn import SklearnLearner

    df, _ = _frame()
    learner, note = _frame_learner(_pipeline(), df)
    assert isinstance(learner, FrameGradientBoosting) and "fitted once on every record" in note
    learner, note = _frame_learner(make_pipeline(SimpleImputer(), GradientBoostingClassifier()), df)
    assert isinstance(learner, FrameEstimatorLearner) and note == ""
    learner, note = _sklearn_learner(GradientBoostingClassifier(max_depth=2))
    assert isinstance(learner, GradientBoosting) and learner.max_depth == 2 and "compiled gradient boosting" in note
    learner, note = _sklearn_learner(GradientBoostingClassifier(subsample=0.5))
    assert isinstance(learner, SklearnLearner) and "subsample" in note


def test_pipeline_with_passthrough_steps_and_a_bad_frame():
    df, y = _frame()
    pipe = make_pipeline("passthrough", ColumnTransformer([("num", "passthrough", ["age", "hours"]),
                                                           ("cat", OneHotEncoder(handle_unknown="ignore"), ["job"])]),
                         GradientBoostingClassifier(n_estimators=10))
    assert FrameGradientBoosting.supported(pipe) is None
    ids = np.arange(len(df), dtype=float).reshape(-1, 1)
    got = FrameGradientBoosting(estimator=pipe, frame=df).fit(ids, y, random_state=0).predict_proba(ids)
    # the kernel on the preprocessing's own output (every category present, so every column kept)
    Z = clone(pipe[:-1]).fit_transform(df)
    want = GradientBoosting(n_estimators=10).fit(Z, y, random_state=0).predict_proba(Z)
    np.testing.assert_array_equal(got, want)
    bad = df.assign(age=df["age"].astype(str) + "y")  # the scaler-free column is text now
    with pytest.raises(InvalidInputError, match="retraining Pipeline failed"):
        FrameGradientBoosting(estimator=pipe, frame=bad).fit(ids, y, random_state=0)

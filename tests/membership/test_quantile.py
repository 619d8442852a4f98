"""Quantile-regression membership inference (Bertran et al. 2023) on cases whose truth is known."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from leakaudit.exceptions import (
    InvalidInputError,
    InvalidParameterError,
    NotEstimableWarning,
)
from leakaudit.membership import (
    AttackInputs,
    QuantileRegressionAttack,
    make_attack,
    run_attacks,
)
from leakaudit.membership.lira import logit_scaled_confidence
from leakaudit.membership.quantile import conformal_threshold, hinge_statistic
from leakaudit.metrics import clopper_pearson, evaluate_membership


def _world(seed, n=600, d=6, C=3):
    """Blobs whose label noise depends on the features, so the confidence of a non-member depends on x."""
    rng = np.random.default_rng(seed)
    centers = 2.0 * rng.normal(size=(C, d))
    y = rng.integers(0, C, n)
    scale = 0.5 + 2.0 * (rng.random(n) < 0.5)  # half the records are easy, half hard
    X = centers[y] + scale[:, None] * rng.normal(size=(n, d))
    return X, y


def _null_case(seed, n_eval=400, n_pop=400):
    """A model trained on other records: members and non-members are exchangeable (membership leaves no trace)."""
    X_tr, y_tr = _world(seed + 1000, n=600)
    X, y = _world(seed, n=2 * n_eval + n_pop)
    model = LogisticRegression(max_iter=500).fit(X_tr, y_tr)
    probs = model.predict_proba(X)
    is_member = np.r_[np.ones(n_eval, int), np.zeros(n_eval, int), np.zeros(n_pop, int)]
    evaluated = np.r_[np.ones(2 * n_eval, bool), np.zeros(n_pop, bool)]
    return X, y, probs, is_member, evaluated


def test_hinge_statistic_is_the_logit_margin():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.5, 0.5, 0.0]])
    y = np.array([0, 0, 2])
    np.testing.assert_allclose(hinge_statistic(p, y), [np.log(0.7 / 0.2), np.log(0.1 / 0.6), np.log(1e-45 / 0.5)])
    p2 = np.array([[0.8, 0.2], [0.3, 0.7]])
    np.testing.assert_allclose(hinge_statistic(p2, [0, 0]), logit_scaled_confidence(p2, np.array([0, 0])))


def test_conformal_threshold_rank():
    s = np.arange(1.0, 100.0)  # m = 99
    assert conformal_threshold(s, 0.01) == 99.0  # ceil(100 * 0.99) = 99th smallest
    assert conformal_threshold(s, 0.1) == 90.0
    assert conformal_threshold(s[:50], 0.01) == np.inf  # too few for alpha = 1 %


@pytest.mark.parametrize("method", ["gaussian", "pinball"])
def test_null_model_auc_interval_covers_half(method):
    X, y, probs, m, ev = _null_case(0)
    public = m == 0  # the attacker knows every non-member (scored out of fold) and the population
    res = QuantileRegressionAttack(method=method, alpha=0.05).score(probs, y, public, X=X)
    mm = evaluate_membership(m[ev], res.scores_array[ev], fprs=(0.05,), n_boot=200)
    lo, hi = mm.auc_ci
    assert lo <= 0.5 <= hi, (method, mm.auc, mm.auc_ci)


@pytest.mark.parametrize("method", [pytest.param("gaussian", marks=pytest.mark.slow), "pinball"])
def test_fpr_is_calibrated_over_seeds(method):
    """On a null model both halves of the evaluated records are non-members of the target: the public half (scored
    out of fold) and the other half (the "members", never public) are called members at rate alpha, each pooled
    count over 5 seeds in the 99% binomial interval. The regressor can memorise (leaves of one record): fitted on
    the records it scores, it would shrink the public records' scores and the rates of the halves would part."""
    alpha = 0.05
    calls = {"public": [0, 0], "not public": [0, 0]}
    for seed in range(5):
        X, y, probs, m, ev = _null_case(seed, n_eval=300, n_pop=300)
        public = m == 0
        att = QuantileRegressionAttack(method=method, alpha=alpha, min_samples_leaf=1, max_leaf_nodes=63, max_iter=30,
                                       learning_rate=0.3, random_state=seed)
        d = att.score(probs, y, public, X=X).decisions_array
        for key, rows in (("public", ev & (m == 0)), ("not public", ev & (m == 1))):
            calls[key][0] += int(d[rows].sum())
            calls[key][1] += int(rows.sum())
    for key, (k, n) in calls.items():
        lo, hi = clopper_pearson(k, n, confidence=0.99)
        assert lo <= alpha <= hi, (method, key, k / n, lo, hi)


def test_leaky_model_is_found():
    """A fully grown forest memorises its members: the attack's AUC is far above one half, and above the loss
    attack's, which cannot tell a hard non-member from an easy one."""
    X, y = _world(7, n=1800)
    flip = np.random.default_rng(8).random(len(y)) < 0.15  # label noise the forest memorises
    y = np.where(flip, (y + 1) % 3, y)
    mem, non, pop = np.arange(600), np.arange(600, 1200), np.arange(1200, 1800)
    model = RandomForestClassifier(n_estimators=50, random_state=0).fit(X[mem], y[mem])
    probs = model.predict_proba(X)
    is_member = np.r_[np.ones(600, int), np.zeros(600, int)]
    inputs = AttackInputs(probs=probs[np.r_[mem, non]], y=y[np.r_[mem, non]], X=X[np.r_[mem, non]],
                          population_probs=probs[pop], population_y=y[pop], extra={"population_X": X[pop]})
    # votes: the statistic is the empirical logit of the 50 trees' votes (finite when every tree agrees)
    att = QuantileRegressionAttack(votes=50)
    summaries, _scores, skipped = run_attacks(inputs, is_member, [att, "loss"], n_boot=200)
    assert not skipped
    q = summaries["quantile"].metrics
    assert q.auc_ci[0] > 0.8, q
    assert q.auc > summaries["loss"].metrics.auc + 0.05
    assert summaries["quantile"].info["features"] == "features and label"
    assert summaries["quantile"].info["n_population"] == 600


def test_run_matches_score_on_the_joined_records():
    X, y, probs, m, ev = _null_case(3, n_eval=100, n_pop=100)
    att = QuantileRegressionAttack(alpha=0.1)
    pop = ~ev
    inputs = AttackInputs(probs=probs[ev], y=y[ev], X=X[ev], population_probs=probs[pop], population_y=y[pop],
                          extra={"population_X": X[pop], "public": m[ev] == 0})
    a = att.run(inputs)
    b = att.score(probs, y, m == 0, X=X)
    np.testing.assert_array_equal(a.scores_array, b.scores_array[ev])
    np.testing.assert_array_equal(a.decisions_array, b.decisions_array[ev])
    # a mask alone: the population (without features) is left out, the audited records' features are used
    c = att.run(AttackInputs(probs=probs[ev], y=y[ev], X=X[ev], population_probs=probs[pop], population_y=y[pop],
                             extra={"public": m[ev] == 0}))
    assert c.info["features"] == "features and label" and c.info["n_public"] == int((m[ev] == 0).sum())
    # population without features and no mask: the label alone
    d = att.run(AttackInputs(probs=probs[ev], y=y[ev], X=X[ev], population_probs=probs[pop], population_y=y[pop]))
    assert d.info["features"] == "label only"


def test_duplicate_records_share_a_fold_and_a_score():
    X, y, probs, m, _ev = _null_case(4, n_eval=150, n_pop=150)
    X2, y2, p2 = np.vstack([X, X[:20]]), np.r_[y, y[:20]], np.vstack([probs, probs[:20]])
    public = np.r_[m == 0, np.zeros(20, bool)]
    s = QuantileRegressionAttack(alpha=0.1).score(p2, y2, public, X=X2).scores_array
    np.testing.assert_array_equal(s[:20], s[-20:])


def test_seeded():
    X, y, probs, m, _ = _null_case(5, n_eval=100, n_pop=100)
    a = QuantileRegressionAttack(random_state=3).score(probs, y, m == 0, X=X).scores_array
    b = QuantileRegressionAttack(random_state=3).score(probs, y, m == 0, X=X).scores_array
    c = QuantileRegressionAttack(random_state=4).score(probs, y, m == 0, X=X).scores_array
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_too_few_public_records_for_alpha_warns():
    X, y, probs, m, _ = _null_case(6, n_eval=60, n_pop=0)
    with pytest.warns(NotEstimableWarning, match="alpha=0.001"):
        res = QuantileRegressionAttack(alpha=0.001).score(probs, y, m == 0, X=X)
    assert res.decisions_array.sum() == 0 and all(t is None for t in res.info["thresholds"])


def test_registry_and_missing_inputs():
    att = make_attack("quantile", alpha=0.05)
    assert isinstance(att, QuantileRegressionAttack) and att.alpha == 0.05
    X, y, probs, m, _ = _null_case(0, n_eval=50, n_pop=0)
    bare = AttackInputs(probs=probs, y=y, X=X)
    assert att.missing(bare) == ["population_probs", "population_y"]
    with pytest.raises(InvalidInputError, match="public non-members"):
        att.run(bare)
    summaries, _, skipped = run_attacks(bare, m, ["quantile"], n_boot=50)
    assert "quantile" in skipped and not summaries


@pytest.mark.parametrize("kwargs,match", [
    ({"alpha": 1.5}, "alpha"), ({"alpha": 0}, "alpha"), ({"method": "median"}, "method"),
    ({"statistic": "loss"}, "statistic"), ({"n_folds": 1}, "n_folds"), ({"max_iter": 0}, "max_iter"),
    ({"n_threads": 0}, "n_threads"), ({"random_state": "x"}, "random_state"), ({"clip": 0.7}, "clip"),
    ({"votes": 0}, "votes"), ({"clip": 0.01, "votes": 10}, "clip or votes"),
])
def test_bad_parameters_name_the_argument(kwargs, match):
    X, y, probs, m, _ = _null_case(0, n_eval=50, n_pop=0)
    with pytest.raises(InvalidParameterError, match=match):
        QuantileRegressionAttack(**kwargs).score(probs, y, m == 0, X=X)


def test_bad_inputs_name_the_argument():
    X, y, probs, m, _ = _null_case(0, n_eval=50, n_pop=0)
    att = QuantileRegressionAttack()
    with pytest.raises(InvalidInputError, match="public has 99 entries"):
        att.score(probs, y, (m == 0)[:-1], X=X)
    with pytest.raises(InvalidInputError, match="public must be a boolean"):
        att.score(probs, y, np.where(m == 0, 2, 0), X=X)
    with pytest.raises(InvalidInputError, match="public marks 4 records"):
        att.score(probs, y, np.r_[np.ones(4, bool), np.zeros(96, bool)], X=X)
    with pytest.raises(InvalidInputError, match="X"):
        att.score(probs, y, m == 0, X=X[:-1])
    bad = probs.copy()
    bad[3] *= 0.5
    with pytest.raises(InvalidInputError, match="probs"):
        att.score(bad, y, m == 0, X=X)
    with pytest.raises(InvalidInputError, match="X"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        att.score(probs, y, m == 0, X=Xn)


def test_no_warning_with_enough_public_records():
    X, y, probs, m, _ = _null_case(1, n_eval=200, n_pop=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotEstimableWarning)
        res = QuantileRegressionAttack(alpha=0.05).score(probs, y, m == 0, X=X)
    assert all(t is not None for t in res.info["thresholds"])

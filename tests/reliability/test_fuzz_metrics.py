"""Fuzz the metrics: every call returns a valid result or raises our error naming the argument."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from leakaudit import metrics as M

from ._fuzz import BUDGET_PARAMS, run_fuzz, valid_or_clear_error
from ._strategies import any_array, membership_inputs, nasty_floats

NAMES = ("is_member", "scores", "decisions", "fpr", "n_boot", "confidence", "threshold")
odd_scalars = st.one_of(nasty_floats, st.integers(-5, 5), st.booleans(), st.none(), st.just("0.1"),
                        st.just([0.1]), st.floats(0, 1))


def _pairwise_auc(m, s):
    pos, neg = s[m == 1], s[m == 0]
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


@BUDGET_PARAMS
def test_auc_roc_advantage(budget):
    def prop(case):
        m, s = case
        a = valid_or_clear_error(M.auc, m, s, names=NAMES)
        roc = valid_or_clear_error(M.roc_curve, m, s, names=NAMES)
        adv = valid_or_clear_error(M.membership_advantage, m, s, names=NAMES)
        assert (a is None) == (roc is None) == (adv is None)
        if a is not None:
            mm, ss = np.asarray(m, int), np.asarray(s, float)
            assert abs(a - _pairwise_auc(mm, ss)) < 1e-9  # reference: the pairwise definition
            fpr, tpr, _ = roc
            assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
            assert 0 <= fpr.min() and fpr.max() <= 1 and 0 <= tpr.min() and tpr.max() <= 1
            assert 0.0 <= adv <= 1.0

    run_fuzz("metrics.auc_roc_advantage", membership_inputs(), prop, budget)


@BUDGET_PARAMS
def test_tpr_at_fpr_and_intervals(budget):
    def prop(case):
        (m, s), fpr, n_boot, conf = case
        t = valid_or_clear_error(M.tpr_at_fpr, m, s, fpr, names=NAMES)
        if t is not None:
            assert np.isnan(t) or 0.0 <= t <= 1.0
        ci = valid_or_clear_error(M.bootstrap_tpr_at_fpr_ci, m, s, fpr, n_boot=n_boot, confidence=conf,
                                  random_state=0, names=NAMES)
        if ci is not None:
            lo, hi = ci
            assert (np.isnan(lo) and np.isnan(hi)) or 0.0 <= lo <= hi <= 1.0
        ci = valid_or_clear_error(M.bootstrap_auc_ci, m, s, n_boot=n_boot, confidence=conf, random_state=0,
                                  names=NAMES)
        if ci is not None:
            assert 0.0 <= ci[0] <= ci[1] <= 1.0

    strat = st.tuples(membership_inputs(max_n=25), odd_scalars, st.one_of(st.integers(-2, 30), odd_scalars),
                      st.one_of(st.floats(0.5, 0.99), odd_scalars))
    run_fuzz("metrics.tpr_at_fpr_and_intervals", strat, prop, budget)


@BUDGET_PARAMS
def test_advantage_at_threshold_and_decisions(budget):
    def prop(case):
        (m, s), thr, d = case
        adv = valid_or_clear_error(M.advantage_at_threshold, m, s, thr, names=NAMES)
        if adv is not None:
            assert -1.0 <= adv <= 1.0
        dm = valid_or_clear_error(M.decision_metrics, m, d[: len(np.atleast_1d(m))] if np.ndim(d) else d,
                                  names=NAMES)
        if dm is not None:
            for k, v in dm.items():
                assert np.isnan(v) or (-1.0 <= v <= 1.0), (k, v)

    strat = st.tuples(membership_inputs(max_n=20), odd_scalars,
                      st.one_of(any_array(max_dims=1, dtype="int64"), any_array(max_dims=2)))
    run_fuzz("metrics.advantage_and_decisions", strat, prop, budget)


@BUDGET_PARAMS
def test_clopper_pearson(budget):
    def prop(case):
        k, n, conf = case
        ci = valid_or_clear_error(M.clopper_pearson, k, n, confidence=conf, names=("k", "n", "confidence"))
        if ci is not None:
            lo, hi = ci
            assert 0.0 <= lo <= k / n <= hi <= 1.0

    ints = st.integers(-3, 10_000)
    strat = st.tuples(st.one_of(ints, odd_scalars), st.one_of(ints, odd_scalars),
                      st.one_of(st.floats(0.5, 0.999), odd_scalars))
    run_fuzz("metrics.clopper_pearson", strat, prop, budget)


@BUDGET_PARAMS
def test_evaluate_membership_and_pearson(budget):
    def prop(case):
        (m, s), x, y = case
        r = valid_or_clear_error(M.evaluate_membership, m, s, n_boot=20, random_state=1, names=NAMES)
        if r is not None:
            assert 0 <= r.auc_ci[0] <= r.auc_ci[1] <= 1 and 0 <= r.auc <= 1
            r.to_json()  # serialisable, NaN included
        p = valid_or_clear_error(M.pearson, x, y, names=("x", "y", "pearson"))
        if p is not None:
            assert np.isnan(p[0]) or -1.0 - 1e-12 <= p[0] <= 1.0 + 1e-12

    strat = st.tuples(membership_inputs(max_n=20), any_array(max_dims=2), any_array(max_dims=2))
    run_fuzz("metrics.evaluate_and_pearson", strat, prop, budget)

"""Fuzz the attacks' plain-array entry points: valid scores, or our error naming the argument."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ._fuzz import BUDGET_PARAMS, run_fuzz, valid_or_clear_error
from ._strategies import any_array, probability_matrix

NAMES = ("probs", "y", "ref_probs", "ref_in", "reference.probs", "reference.in_mask", "pop_probs", "pop_y",
         "population_reference.probs", "population_reference.in_mask", "p_full", "p_loo", "bin_width",
         "candidate_probs", "prior", "eps", "eta", "delta", "mu", "threshold", "shapes", "record")


@st.composite
def target_case(draw, *, max_n=10, max_c=4):
    n = draw(st.integers(0, max_n))
    c = draw(st.integers(1, max_c))
    p = draw(probability_matrix(n=n, c=c))
    y = draw(st.one_of(hnp.arrays(np.int64, n, elements=st.integers(0, max(c - 1, 0))),
                       hnp.arrays(np.int64, n, elements=st.integers(-1, c)), any_array(max_dims=2)))
    k = draw(st.integers(1, 6))
    ref = np.stack([draw(probability_matrix(n=n, c=c, hostile=False)) for _ in range(k)]) if n else np.zeros((k, 0, c))
    if draw(st.booleans()) and n:
        ref = ref.copy()
        ref[0, 0, 0] = draw(st.sampled_from([np.nan, -0.1, 2.0, np.inf]))
    mask = draw(hnp.arrays(bool, (k, n)))
    if draw(st.booleans()):
        mask = draw(st.one_of(any_array(max_dims=2), hnp.arrays(bool, (k + 1, n))))
    return p, y, ref, mask


def _scores_ok(res, n):
    s = res.scores_array
    assert s.shape == (n,)
    assert not np.isnan(s).any(), "NaN scores"
    assert set(np.unique(res.decisions_array)) <= {0, 1}


@BUDGET_PARAMS
def test_loss_and_lira(budget):
    from leakaudit.membership import LiRA, LossThresholdAttack

    def prop(case):
        p, y, ref, mask = case
        r = valid_or_clear_error(LossThresholdAttack().score, p, y, names=NAMES)
        if r is not None:
            _scores_ok(r, len(p))
            assert np.all(r.scores_array <= 0)  # scores are -loss
        for att in (LiRA(), LiRA(online=False), LiRA(fix_variance=True, statistic="median")):
            r = valid_or_clear_error(att.score, p, y, ref, mask, names=NAMES)
            if r is not None:
                _scores_ok(r, len(p))

    run_fuzz("attacks.loss_lira", target_case(), prop, budget)


@BUDGET_PARAMS
def test_rmia(budget):
    from leakaudit.membership import RMIA

    def prop(case):
        (p, y, ref, mask), (zp, zy, zref, zmask), gamma = case
        for att in (RMIA(gamma=gamma), RMIA(online=False, gamma=gamma)):
            r = valid_or_clear_error(att.score, p, y, ref, mask, zp, zy, zref, zmask, names=NAMES + ("gamma",))
            if r is not None:
                _scores_ok(r, len(p))
                assert r.scores_array.min() >= 0 and r.scores_array.max() <= 1

    strat = st.tuples(target_case(), target_case(), st.one_of(st.floats(0.5, 4), st.just(0.0), st.just(np.nan)))
    run_fuzz("attacks.rmia", strat, prop, budget)


@BUDGET_PARAMS
def test_pdtp_and_label_likelihood(budget):
    from leakaudit.attribute.classifier import label_likelihood_scores
    from leakaudit.dtp.pdtp import pdtp_from_probabilities

    def prop(case):
        pf, pl, bw, cand, y, prior = case
        v = valid_or_clear_error(pdtp_from_probabilities, pf, pl, bin_width=bw, names=NAMES)
        if v is not None:
            assert v.shape == (np.asarray(pf).shape[0],) and np.all(v >= 0) and not np.isnan(v).any()
        s = valid_or_clear_error(label_likelihood_scores, cand, y, prior, names=NAMES)
        if s is not None:
            assert s.shape == (cand.shape[1], cand.shape[0]) and not np.isnan(s).any() and np.all(s <= 1e-9)

    pm = probability_matrix(n=4, c=3)
    strat = st.tuples(pm, st.one_of(pm, probability_matrix()), st.one_of(st.none(), st.sampled_from([0.01, 0.1, 0.5, 0.0, -1.0, 0.7])),
                      st.one_of(st.builds(lambda a, b: np.stack([a, b]), probability_matrix(n=3, c=2),
                                          probability_matrix(n=3, c=2)), any_array()),
                      st.one_of(hnp.arrays(np.int64, 3, elements=st.integers(-1, 2)), any_array(max_dims=1)),
                      st.one_of(st.none(), st.just([0.5, 0.5]), st.just([0.2, 0.9]), st.just([1.0, 0.0]),
                                st.just([np.nan, 1.0]), any_array(max_dims=1)))
    run_fuzz("attacks.pdtp_label_likelihood", strat, prop, budget)


@BUDGET_PARAMS
def test_mip_conversions(budget):
    from leakaudit.mip import conversions as C

    vals = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 50), st.none(), st.just("1"),
                     st.booleans(), st.floats(0, 0.5))

    def prop(case):
        a, b = case
        eta = valid_or_clear_error(C.eta_from_eps, a, names=NAMES)
        if eta is not None:
            assert 0 <= eta <= 0.5
            if eta < 0.5 - 1e-12 and a != np.inf:
                assert abs(C.eps_from_eta(eta) - a) <= 1e-6 * max(1.0, a)  # inverse of Theorem 4
        e = valid_or_clear_error(C.eps_from_eta, a, names=NAMES)
        if e is not None:
            assert e >= 0
        for f, args in ((C.eta_from_eps_delta, (a, b)), (C.eta_from_gdp_mu, (a,)), (C.gdp_mu_from_eta, (a,))):
            r = valid_or_clear_error(f, *args, names=NAMES)
            if r is not None:
                assert r >= 0
                assert np.isfinite(r)

    run_fuzz("attacks.mip_conversions", st.tuples(vals, vals), prop, budget)


def test_gdp_mu_from_eta_near_half_is_finite():
    from leakaudit.mip.conversions import gdp_mu_from_eta

    assert np.isfinite(gdp_mu_from_eta(0.49999999999999994))

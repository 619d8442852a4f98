"""Empirical epsilon lower bound: validity on null scores and on a known DP mechanism, the closed form on
perfectly separated scores, and what a bound that peeks at its own evaluation records would do."""

import numpy as np
import pytest
from scipy import stats

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.metrics import EpsilonBound, empirical_epsilon
from leakaudit.metrics._epsilon import _eps_both, joint_beta_epsilon_lb


def _labels(n1, n0):
    return np.r_[np.ones(n1, int), np.zeros(n0, int)]


def _max_se(p, n_sims):
    return p + 3 * np.sqrt(p * (1 - p) / n_sims)


def _closed_form(n, confidence, delta):
    """Perfect separation, n per class: ceil(n / 2) per class evaluated, all members above the threshold and no
    non-member, so TPR_lower = q and FPR_upper = 1 - q with q = alpha^(1 / ceil(n / 2)), alpha = (1 - confidence)
    / 2; both inequalities give ln((q - delta) / (1 - q)); 0 when that is negative."""
    q = ((1 - confidence) / 2) ** (1 / int(np.ceil(n / 2)))
    return max(0.0, float(np.log((q - delta) / (1 - q)))) if q > delta else 0.0


# ----------------------------------------------------------------------------------------------- validity


def test_null_scores_give_a_positive_bound_at_most_at_the_error_rate():
    """Members and non-members from one distribution: epsilon is 0, so a bound above 0 is an error. (Measured:
    0 of 400; the two one-sided bounds, each at (1 - confidence) / 2, are conservative together. Choosing the
    threshold on the evaluation records themselves gave 2.2%, 3.0% and 4.5% at 50, 100 and 200 per class:
    still under 5% here, but growing with n; the split keeps it out at any size.)"""
    n_sims, conf = 400, 0.95
    rng = np.random.default_rng(11)
    m = _labels(100, 100)
    positive = sum(empirical_epsilon(m, rng.normal(size=200), confidence=conf, joint_beta=False,
                                     random_state=i).epsilon_lb > 0
                   for i in range(n_sims))
    assert positive / n_sims <= _max_se(1 - conf, n_sims), positive


def test_the_null_check_catches_point_estimates():
    """The check above can fail: epsilon from the evaluation half's TPR and FPR themselves (no confidence bounds)
    is positive on about half of the null data sets."""
    n_sims = 400
    rng = np.random.default_rng(11)
    m = _labels(100, 100)
    positive = 0
    for i in range(n_sims):
        r = empirical_epsilon(m, rng.normal(size=200), joint_beta=False, random_state=i)
        ea, ed = _eps_both(np.array(r.tpr), np.array(r.fpr), 0.0)
        positive += max(float(ea), float(ed)) > 0
    assert positive / n_sims > _max_se(0.05, n_sims), positive


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_randomized_response_bound_stays_below_the_true_epsilon(eps):
    """Randomized response on the membership bit is eps-DP: a member releases 1 with probability e^eps / (1 +
    e^eps), a non-member with 1 / (1 + e^eps). The score is the released bit."""
    n_sims, n = 300, 1000
    p = np.exp(eps) / (1 + np.exp(eps))
    m = _labels(n, n)
    rng = np.random.default_rng(int(eps * 10))
    lbs = []
    for i in range(n_sims):
        bit = np.where(m == 1, rng.random(2 * n) < p, rng.random(2 * n) < 1 - p).astype(float)
        lbs.append(empirical_epsilon(m, bit, joint_beta=False, random_state=i).epsilon_lb)
    lbs = np.array(lbs)
    assert np.mean(lbs > eps) <= _max_se(0.05, n_sims), np.mean(lbs > eps)
    # and the bound is not trivially 0: with 500 + 500 evaluation records it sits below the truth, not far
    # (measured: exceeded in 0.3% and 0.7% of runs; medians 0.32 and 0.80)
    assert np.median(lbs) > 0.5 * eps, np.median(lbs)


def test_randomized_response_with_delta():
    """(eps, delta) randomized response: with probability delta the bit is the membership itself. The bound at
    that delta stays below eps; the bound at delta 0 may not (the mechanism is not (eps, 0)-DP)."""
    eps, delta, n, n_sims = 1.0, 0.1, 2000, 100
    p = np.exp(eps) / (1 + np.exp(eps))
    m = _labels(n, n)
    rng = np.random.default_rng(5)
    over = 0
    for i in range(n_sims):
        rr = np.where(m == 1, rng.random(2 * n) < p, rng.random(2 * n) < 1 - p)
        bit = np.where(rng.random(2 * n) < delta, m == 1, rr).astype(float)
        over += empirical_epsilon(m, bit, delta=delta, joint_beta=False, random_state=i).epsilon_lb > eps
    assert over / n_sims <= _max_se(0.05, n_sims)


# ----------------------------------------------------------------------------------------------- values


@pytest.mark.parametrize("n,confidence,delta", [(10, 0.95, 0.0), (11, 0.95, 0.0), (50, 0.9, 0.0),
                                                (200, 0.95, 1e-3), (200, 0.99, 0.2)])
def test_perfect_separation_gives_the_closed_form(n, confidence, delta):
    m = _labels(n, n)
    r = empirical_epsilon(m, m * 3.0 - 1.0, delta=delta, confidence=confidence, random_state=n)
    assert r.measurable and r.reason == ""
    assert r.epsilon_lb == pytest.approx(_closed_form(n, confidence, delta), rel=1e-12)
    # 5 per class evaluated cannot show anything at 95% (q = 0.025^(1/5) = 0.48 < 1/2); 6 can
    assert (r.epsilon_lb == 0.0) == (n == 10)
    assert (r.tpr, r.fpr) == (1.0, 0.0) and r.threshold == 0.5
    q = ((1 - confidence) / 2) ** (1 / r.n_eval_members)
    assert r.tpr_lower == pytest.approx(q) and r.fpr_upper == pytest.approx(1 - q)
    assert (r.n_select, r.n_eval, r.n_eval_members) == (2 * (n // 2), 2 * (n - n // 2), n - n // 2)


def test_bound_grows_with_the_number_of_records():
    closed = [_closed_form(n, 0.95, 0.0) for n in (10, 40, 160, 640)]
    assert np.all(np.diff(closed) > 0)
    # a separable but imperfect attack (members N(4, 1), non-members N(0, 1)): the mean bound over seeds grows
    rng = np.random.default_rng(0)
    means = []
    for n in (20, 80, 320):
        m = _labels(n, n)
        means.append(np.mean([empirical_epsilon(m, rng.normal(size=2 * n) + 4 * m, joint_beta=False,
                                              random_state=i).epsilon_lb
                              for i in range(20)]))
    assert means[0] < means[1] < means[2], means


def test_the_other_inequality_is_used_when_it_is_the_stronger():
    # every member scores 1, half the non-members too: "score > 0.5" has TPR 1 and FPR 1/2, so
    # TNR <= e^eps FNR + delta (FNR = 0) says much more than TPR <= e^eps FPR
    n = 200
    m = _labels(n, n)
    s = np.r_[np.ones(n), np.tile([1.0, 0.0], n // 2)]
    r = empirical_epsilon(m, s, random_state=1)
    assert r.direction == "tnr/fnr" and r.threshold == 0.5
    alpha = 0.025
    k_fp = round(r.fpr * r.n_eval_nonmembers)
    tpr_lo = stats.beta.ppf(alpha, r.n_eval_members, 1)
    fpr_up = stats.beta.ppf(1 - alpha, k_fp + 1, r.n_eval_nonmembers - k_fp)
    assert r.tpr_lower == pytest.approx(tpr_lo) and r.fpr_upper == pytest.approx(fpr_up)
    assert r.epsilon_lb == pytest.approx(np.log((1 - fpr_up) / (1 - tpr_lo)))
    assert r.epsilon_lb > np.log(1 / 0.5)  # more than the first inequality could ever give here


def test_no_evidence_is_zero_and_too_few_records_is_not_measurable():
    m = _labels(30, 30)
    r = empirical_epsilon(m, np.zeros(60))  # every score tied: nothing to test
    assert r.measurable and r.epsilon_lb == 0.0
    r = empirical_epsilon(_labels(3, 30), np.arange(33.0))
    assert not r.measurable and np.isnan(r.epsilon_lb) and np.isnan(r.threshold) and r.direction == ""
    assert "at least 2 members and 2 non-members in each half" in r.reason
    assert empirical_epsilon(_labels(4, 4), np.r_[np.ones(4), np.zeros(4)]).measurable


def test_deterministic_for_a_seed_and_json_round_trip():
    rng = np.random.default_rng(2)
    m = _labels(150, 120)
    s = rng.normal(size=270) + 1.5 * m
    a = empirical_epsilon(m, s, random_state=7)
    assert a == empirical_epsilon(m, s, random_state=7)
    assert a == empirical_epsilon(m, s, random_state=np.random.default_rng(7))
    assert any(empirical_epsilon(m, s, random_state=k).threshold != a.threshold for k in range(8, 12))
    assert EpsilonBound.from_json(a.to_json()) == a
    assert a.delta == 0.0 and a.confidence == 0.95 and "Clopper-Pearson" in a.method


def test_bad_input_is_our_error():
    m, s = _labels(10, 10), np.arange(20.0)
    for kw, name in ((dict(delta=1.0), "delta"), (dict(delta=-0.1), "delta"), (dict(delta="0"), "delta"),
                     (dict(confidence=1.0), "confidence"), (dict(confidence=0.0), "confidence"),
                     (dict(random_state=-1), "random_state"), (dict(joint_beta="yes"), "joint_beta")):
        with pytest.raises(InvalidParameterError, match=name):
            empirical_epsilon(m, s, **kw)
    with pytest.raises(InvalidInputError, match="is_member"):
        empirical_epsilon(np.r_[m[:-1], 2], s)
    with pytest.raises(InvalidInputError, match="scores"):
        empirical_epsilon(m, np.r_[s[:-1], np.nan])
    with pytest.raises(InvalidInputError, match="inconsistent"):
        empirical_epsilon(m, s[:-1])
    with pytest.raises(InvalidInputError, match="non-members"):
        empirical_epsilon(np.ones(20, int), s)


# ------------------------------------------------------------------------------------- joint-beta bound


def _eps_min(fnr, fpr, delta):
    """The least epsilon whose (eps, delta)-DP region holds (FNR, FPR): the largest of the four inequalities'
    logarithms (a test and its reverse, each in both directions), 0 when all are negative."""
    with np.errstate(all="ignore"):
        terms = [np.zeros_like(fnr)]
        for num, den in ((1 - delta - fnr, fpr), (1 - delta - fpr, fnr), (fnr - delta, 1 - fpr), (fpr - delta, 1 - fnr)):
            terms.append(np.where(num > 0, np.log(np.maximum(num, 1e-300) / den), -np.inf))
    return np.max(terms, axis=0)


@pytest.mark.parametrize("tp, fn, fp, tn, delta", [(40, 10, 5, 45, 0.0), (10, 0, 0, 10, 0.0), (90, 10, 2, 98, 1e-5),
                                                   (3, 2, 1, 4, 0.0), (500, 500, 450, 550, 0.0)])
def test_joint_beta_is_the_posterior_quantile_of_epsilon(tp, fn, fp, tn, delta):
    """Against Monte Carlo on the model's own definition: sample (FNR, FPR) from the two Jeffreys posteriors and
    take the 5% quantile of the least epsilon each sample needs (the region's mass is integrated, not sampled, in
    the code)."""
    rng = np.random.default_rng(tp + fn + fp + tn)
    fnr, fpr = rng.beta(0.5 + fn, 0.5 + tp, 400_000), rng.beta(0.5 + fp, 0.5 + tn, 400_000)
    mc = np.quantile(_eps_min(fnr, fpr, delta), 0.05)
    assert joint_beta_epsilon_lb(tp, fn, fp, tn, delta=delta, confidence=0.95) == pytest.approx(mc, abs=0.01)


def test_joint_beta_is_tighter_than_clopper_pearson_on_the_same_test():
    """The same chosen test and evaluation half: on separable scores the credible bound is the larger (Zanella-
    Beguelin et al. 2023's point); the audit's decisions keep the Clopper-Pearson bound."""
    m = _labels(60, 60)
    s = m + np.random.default_rng(3).normal(scale=0.4, size=120)
    b = empirical_epsilon(m, s, random_state=0)
    assert b.epsilon_lb_joint_beta > b.epsilon_lb > 0
    assert b.epsilon_lb_joint_beta == joint_beta_epsilon_lb(
        round(b.tpr * b.n_eval_members), b.n_eval_members - round(b.tpr * b.n_eval_members),
        round(b.fpr * b.n_eval_nonmembers), b.n_eval_nonmembers - round(b.fpr * b.n_eval_nonmembers))
    assert np.isnan(empirical_epsilon(m, s, joint_beta=False, random_state=0).epsilon_lb_joint_beta)


def test_joint_beta_is_never_zero_on_counts_off_the_chance_line_and_small_there():
    """A continuous posterior puts no mass on FPR = 1 - FNR exactly, so even pure noise gets a positive credible
    bound: the reason it is shown beside the Clopper-Pearson bound and never decides a check. On 500 + 500 counts
    at chance it stays under 0.05."""
    assert 0 < joint_beta_epsilon_lb(250, 250, 250, 250) < 0.05
    assert joint_beta_epsilon_lb(250, 250, 250, 250) < joint_beta_epsilon_lb(25, 25, 25, 25)


def test_joint_beta_bad_counts_are_our_error():
    for kw, name in ((dict(tp=-1), "tp"), (dict(fn=1.5), "fn"), (dict(fp="3"), "fp"), (dict(tn=None), "tn")):
        args = dict(tp=5, fn=5, fp=5, tn=5) | kw
        with pytest.raises(InvalidParameterError, match=name):
            joint_beta_epsilon_lb(**args)
    with pytest.raises(InvalidParameterError, match="at least one member"):
        joint_beta_epsilon_lb(0, 0, 3, 3)
    with pytest.raises(InvalidParameterError, match="delta"):
        joint_beta_epsilon_lb(5, 5, 5, 5, delta=1.0)

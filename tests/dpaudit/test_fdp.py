"""The f-DP one-run analysis (Mahloujifar, Melis & Chaudhuri 2025) with the (epsilon, delta) curve: closed forms,
exact false-rejection rates on a worst-case (epsilon, delta)-DP mechanism, and the "best" union bound."""

import math

import numpy as np
import pytest
from scipy import special, stats

from leakaudit.dpaudit import (
    FdpAudit,
    fdp_audit,
    fdp_epsilon_lower_bound,
    fdp_rejects,
    gdp_epsilon_lower_bound,
    gdp_mu,
    guesses_from_scores,
    one_run_audit_scores,
    one_run_epsilon_lower_bound,
    privacy_profile_rejects,
    subsampled_gaussian_profile,
    tradeoff_eps_delta,
)
from leakaudit.dpaudit.one_run import _p_value
from leakaudit.exceptions import InvalidParameterError


@pytest.mark.parametrize("r", [1, 5, 20, 100, 1000])
def test_all_right_without_delta_is_the_binomial_closed_form(r):
    # with delta = 0 and every guess right the (eps, 0) curve allows at most p^r, p = e^eps / (1 + e^eps), so the
    # bound solves p^r = beta: eps = logit(beta^(1/r)), the same as Theorem 3.1 there
    beta = 0.05
    expected = max(0.0, float(special.logit(beta ** (1.0 / r))))  # one guess cannot reject even epsilon 0
    assert fdp_epsilon_lower_bound(r, r, r, delta=0.0, beta=beta) == pytest.approx(expected, abs=1e-5)


def test_tradeoff_curve_of_eps_delta():
    a = np.linspace(0, 1, 101)
    f = tradeoff_eps_delta(a, 1.0, 1e-3)
    assert f[0] == pytest.approx(1 - 1e-3) and f[-1] == 0.0 and np.all(np.diff(f) <= 0) and np.all(f >= 0)
    g = tradeoff_eps_delta(a, 2.0, 0.0)
    np.testing.assert_allclose(tradeoff_eps_delta(g, 2.0, 0.0), a, atol=1e-12)  # symmetric: its own inverse
    # every (eps, delta)-DP Gaussian mechanism lies above the curve: G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)
    for eps in (0.5, 2.0, 6.0):
        mu = gdp_mu(eps, 1e-5)
        gauss = stats.norm.cdf(stats.norm.ppf(1 - a[1:-1]) - mu)
        assert np.all(gauss >= tradeoff_eps_delta(a[1:-1], eps, 1e-5) - 1e-12)


@pytest.mark.parametrize("m,r,v,delta", [(1000, 100, 90, 1e-5), (1000, 1000, 800, 0.0), (140_000, 595, 595, 1e-5),
                                         (5000, 300, 260, 1e-3)])
def test_rejection_is_monotone_in_epsilon_and_in_correct_guesses(m, r, v, delta):
    # the search and the soundness argument need nested rejection regions: a rejected epsilon rejects every smaller
    # one, and more correct guesses reject whatever fewer reject
    eps = np.linspace(0, 8, 81)
    rej = [fdp_rejects(m, r, v, epsilon=e, delta=delta) for e in eps]
    assert rej == sorted(rej, reverse=True)
    e0 = fdp_epsilon_lower_bound(m, r, v, delta=delta)
    assert fdp_rejects(m, r, v, epsilon=e0, delta=delta) and not fdp_rejects(m, r, v, epsilon=e0 + 1e-4, delta=delta)
    by_v = [fdp_rejects(m, r, w, epsilon=0.5 * e0, delta=delta) for w in range(max(0, v - 60), r + 1)]
    assert by_v == sorted(by_v)


def test_closes_theorem_3_1s_delta_gap():
    # a DP-SGD step without noise at q = 0.01 shows about 595 included canaries of 140,000, all guessed right;
    # Theorem 3.1's delta term stops at 1.69 (benchmarks/README.md), the (eps, delta) curve does not
    m, r, beta = 140_000, 595, 0.025
    steinke = one_run_epsilon_lower_bound(m, r, r, delta=1e-5, beta=beta)
    fdp = fdp_epsilon_lower_bound(m, r, r, delta=1e-5, beta=beta)
    assert steinke < 1.8 and fdp > 5.0
    # and it stays below the Gaussian curve's bound, which assumes more
    assert fdp < gdp_epsilon_lower_bound(m, r, r, delta=1e-5, beta=beta)


def _worst_case_rejection_rate(m, k, epsilon, delta, beta, rejects):
    # An (epsilon, delta)-DP mechanism built to make k guesses right: randomized response on every canary, and with
    # probability P = m delta / k the truth of k canaries chosen at random (and named). For one canary,
    # P_in(E) - e^eps P_out(E) <= P(canary among the k) P = delta for every event E, so it is (eps, delta)-DP. The
    # auditor guesses those k (r = k): v = k with probability P, else Binomial(k, e^eps / (1 + e^eps)).
    p, P = float(special.expit(epsilon)), min(1.0, m * delta / k)
    v_min = next((v for v in range(k + 1) if rejects(m, k, v, epsilon, delta, beta)), k + 1)
    return P * (v_min <= k) + (1 - P) * float(stats.binom.sf(v_min - 1, k, p))


@pytest.mark.parametrize("m,k,epsilon,delta", [(140_000, 595, 4.0, 1e-5), (140_000, 595, 5.0, 1e-5),
                                               (1000, 100, 1.0, 1e-3), (1000, 1000, 1.0, 0.0),
                                               (1000, 50, 2.0, 1e-3), (10_000, 200, 3.0, 1e-4),
                                               (1000, 1000, 0.5, 1e-4)])
def test_false_rejection_rate_is_at_most_beta_on_a_worst_case_mechanism(m, k, epsilon, delta):
    # exact probabilities, no sampling: the claim "(eps, delta)-DP" is true and must be rejected with probability
    # at most beta; the rate is also not far below beta (0.02 to 0.04 here), so the analysis is nearly tight
    beta = 0.05

    def fdp(m, r, v, e, d, b):
        return fdp_rejects(m, r, v, epsilon=e, delta=d, beta=b)

    rate = _worst_case_rejection_rate(m, k, epsilon, delta, beta, fdp)
    assert 0.015 < rate <= beta
    # Theorem 3.1 is sound here too, and where the delta mass per guess (m delta / k) matters it rejects almost
    # never: the gap the f-DP analysis closes
    steinke = _worst_case_rejection_rate(m, k, epsilon, delta, beta,
                                         lambda m, r, v, e, d, b: _p_value(m, r, v, e, d) < b)
    assert steinke <= beta
    if m * delta / k > 1e-3:
        assert steinke < 1e-3 < rate


def test_best_is_the_larger_of_both_analyses_at_half_beta(rng):
    m = 2000
    S = rng.choice([-1, 1], size=m)
    scores = S * 2.0 + rng.normal(size=m)
    grid = [(100, 100), (300, 0)]
    best = one_run_audit_scores(S, scores, delta=1e-5, grid=grid, bound="best")
    assert best.bound == "best" and best.beta_per_candidate == pytest.approx(0.025)
    for (_, _, r, v, lb) in best.candidates:
        r, v = int(r), int(v)
        assert lb == max(one_run_epsilon_lower_bound(m, r, v, delta=1e-5, beta=0.0125),
                         fdp_epsilon_lower_bound(m, r, v, delta=1e-5, beta=0.0125))
    res = fdp_audit(S, guesses_from_scores(scores, 100, 100), delta=1e-5)
    assert isinstance(res, FdpAudit) and res.curve == "epsdelta" and res.r == 200 and res.epsilon_lower_bound > 0
    assert FdpAudit.from_json(res.to_json()) == res
    assert math.isclose(res.steinke_epsilon_lower_bound, one_run_epsilon_lower_bound(m, 200, res.v, delta=1e-5))


@pytest.mark.parametrize("call,word", [
    (lambda: fdp_epsilon_lower_bound(10, 5, 5, delta=1e-5, curve="rdp"), "curve"),
    (lambda: fdp_epsilon_lower_bound(10, 5, 5, delta=0.0, curve="gdp"), "delta"),
    (lambda: fdp_rejects(10, 5, 5, epsilon=-1.0, delta=1e-5), "epsilon"),
    (lambda: fdp_rejects(10, 5, 6, epsilon=1.0, delta=1e-5), "v"),
    (lambda: tradeoff_eps_delta([0.5], 1.0, 1.5), "delta"),
])
def test_bad_input_is_one_clear_error(call, word):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert str(info.value).startswith(word) and "\n" not in str(info.value)


def test_privacy_profile_of_one_gaussian_step_is_the_gaussian_mechanisms():
    # q = 1, one step: the profile is the analytic Gaussian one, delta(eps) = Phi(-eps/mu + mu/2) - e^eps
    # Phi(-eps/mu - mu/2) (Balle & Wang 2018), up to the pessimistic discretisation (never below it)
    mu = 1.3
    eps, deltas = subsampled_gaussian_profile(1 / mu, 1.0, 1, epsilons=np.linspace(0, 6, 25))
    exact = stats.norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    assert np.all(deltas >= exact - 1e-12) and np.allclose(deltas, exact, atol=2e-3)
    # its curve lies below the Gaussian curve G_mu, so it rejects only where G_mu does
    full_eps, full_deltas = subsampled_gaussian_profile(1 / mu, 1.0, 1)
    for r, v in [(40, 30), (40, 34), (200, 150), (200, 170), (1000, 700)]:
        if privacy_profile_rejects(2000, r, v, epsilons=full_eps, deltas=full_deltas, beta=0.2):
            assert fdp_rejects(2000, r, v, epsilon=float(full_eps[np.argmax(full_deltas <= 1e-5)]), delta=1e-5,
                               beta=0.2, curve="gdp")


def test_recipe_profile_is_tighter_than_its_epsilon_delta():
    # DP-SGD at q = 0.01, 200 steps, noise 0.622 is (4, 1e-5)-DP; its whole profile rejects 590 right guesses of 595
    # among 140,000 canaries, the single (4, 1e-5) does not
    eps, deltas = subsampled_gaussian_profile(0.622, 0.01, 200)
    assert privacy_profile_rejects(140_000, 595, 590, epsilons=eps, deltas=deltas, beta=0.025)
    assert not fdp_rejects(140_000, 595, 590, epsilon=4.0, delta=1e-5, beta=0.025)
    assert not privacy_profile_rejects(140_000, 595, 500, epsilons=eps, deltas=deltas, beta=0.025)
    with pytest.raises(InvalidParameterError, match="^epsilons and deltas"):
        privacy_profile_rejects(10, 5, 5, epsilons=[1.0, 2.0], deltas=[1e-5])


def test_recipe_profile_is_a_probability_where_the_accountant_rounds_below_zero():
    """q = 0.01, 500 steps, sigma 1: dp_accounting gives about -1.7e-15 at large epsilon; the profile stays in
    [0, 1] so that privacy_profile_rejects accepts it."""
    from leakaudit.dpaudit import privacy_profile_rejects, subsampled_gaussian_profile

    eps, deltas = subsampled_gaussian_profile(1.0, 0.01, 500)
    assert deltas.min() >= 0.0 and deltas.max() <= 1.0
    assert privacy_profile_rejects(1000, 10, 10, epsilons=eps, deltas=deltas) in (True, False)

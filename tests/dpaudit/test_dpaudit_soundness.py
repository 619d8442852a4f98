"""Soundness and power of the one-run bounds on mechanisms whose epsilon is known.

Soundness: on an (epsilon, delta)-DP mechanism the lower bound exceeds epsilon with probability at most beta, so
over 20 seeded runs it never does (at beta = 0.05 on the Gaussian mechanism, where the bound is loose; at beta =
0.001 on randomized response, where it is tight and beta is its actual false-rejection rate). Power: on a
mechanism whose noise is too small for the claim, the bound exceeds the claimed epsilon in at least 95% of runs.
"""

import dp_accounting
import numpy as np
import pytest

from leakaudit._random import spawn_seeds
from leakaudit.dpaudit import (
    BOUNDS,
    ClaimCheck,
    check_claim,
    count_correct,
    fdp_audit,
    gdp_epsilon_lower_bound,
    gdp_rejects,
    guesses_from_scores,
    one_run_audit,
    one_run_audit_scores,
)
from leakaudit.dpaudit.one_run import one_run_p_value
from leakaudit.exceptions import InvalidParameterError

M, DELTA, BETA, RUNS = 1000, 1e-5, 0.05, 20


def _truth(rng, m=M):
    return rng.choice(np.array([-1, 1]), size=m)


def _randomized_response(S, epsilon, rng):
    # each canary's bit is reported truthfully with probability e^eps / (1 + e^eps): eps-DP per canary
    flip = rng.random(S.shape[0]) >= 1.0 / (1.0 + np.exp(-epsilon))
    return np.where(flip, -S, S)


def _gaussian_sum_scores(S, epsilon, rng, noise_scale=1.0):
    # release sum_{i included} e_i + N(0, sigma^2 I): sensitivity 1 under add/remove, sigma from the analytic
    # Gaussian mechanism for (epsilon, DELTA); the white-box score of canary i is coordinate i
    sigma = dp_accounting.get_sigma_gaussian(epsilon, DELTA) * noise_scale
    return (S > 0).astype(float) + sigma * rng.normal(size=S.shape[0])


@pytest.mark.parametrize("epsilon", [1.0, 4.0, 8.0])
def test_sound_on_randomized_response(epsilon):
    # randomized response is Theorem 3.1's worst case: the bound exceeds the truth in close to a beta fraction of
    # runs (test_false_rejection_rate_is_at_most_beta_and_tight), so "never in 40 audits" is asked at beta = 0.001
    beta = 0.001
    bounds, fdp = [], []
    for seed in spawn_seeds(100 + int(epsilon), RUNS):
        rng = np.random.default_rng(seed)
        S = _truth(rng)
        y = _randomized_response(S, epsilon, rng)
        keep = rng.random(M) < 0.3  # guess on a random 30%, abstain elsewhere
        for T in (y, np.where(keep, y, 0)):
            bounds.append(one_run_audit(S, T, delta=0.0, beta=beta).epsilon_lower_bound)
            fdp.append(fdp_audit(S, T, delta=0.0, beta=beta).epsilon_lower_bound)
    assert max(bounds) <= epsilon and max(fdp) <= epsilon
    # and the audit is not vacuous (1,000 canaries cap Theorem 3.1's bound near 5, whatever the truth)
    assert min(bounds) > 0.3 * min(epsilon, 4.0)


@pytest.mark.parametrize("epsilon", [1.0, pytest.param(4.0, marks=pytest.mark.slow),
                                     pytest.param(8.0, marks=pytest.mark.slow)])  # about 12 s each
def test_sound_on_gaussian_mechanism(epsilon):
    got = {b: [] for b in BOUNDS}
    for seed in spawn_seeds(200 + int(epsilon), RUNS):
        rng = np.random.default_rng(seed)
        S = _truth(rng)
        scores = _gaussian_sum_scores(S, epsilon, rng)
        for b in BOUNDS:
            got[b].append(one_run_audit_scores(S, scores, delta=DELTA, beta=BETA, bound=b).epsilon_lower_bound)
    assert all(max(v) <= epsilon for v in got.values())
    # all say something; the Gaussian-DP analysis says more
    assert np.mean(got["gdp"]) > np.mean(got["steinke2023"]) > 0 and np.mean(got["best"]) > 0


def test_false_rejection_rate_is_at_most_beta_and_tight():
    # randomized response is exactly the worst case of Theorem 3.1 with delta = 0: the claim "eps-DP" (true) is
    # rejected in at most a beta fraction of runs, and not far below it
    epsilon, beta, runs, m = 1.0, 0.2, 400, 200
    rejected = 0
    for seed in spawn_seeds(7, runs):
        rng = np.random.default_rng(seed)
        S = _truth(rng, m)
        y = _randomized_response(S, epsilon, rng)
        rejected += one_run_p_value(m, m, int(np.sum(y == S)), epsilon, 0.0) < beta
    rate = rejected / runs
    assert 0.1 < rate <= beta + 3 * np.sqrt(beta * (1 - beta) / runs)


def test_gdp_bound_assumes_gaussian_privacy():
    # randomized response at eps = 1 is (1, 0)-DP but far from the Gaussian curve with the same (eps, delta):
    # the Gaussian-DP analysis rejects it above its true epsilon, Theorem 3.1 does not
    rng = np.random.default_rng(3)
    S = _truth(rng)
    y = _randomized_response(S, 1.0, rng)
    v = int(np.sum(y == S))
    assert gdp_epsilon_lower_bound(M, M, v, delta=DELTA) > 1.0
    assert one_run_audit(S, y, delta=DELTA).epsilon_lower_bound <= 1.0


@pytest.mark.parametrize("epsilon", [1.0, 4.0, 8.0])
@pytest.mark.parametrize("bound", ["steinke2023", "best", "gdp"])
def test_power_noise_ten_times_too_small(epsilon, bound):
    m, grid = M, None
    if bound != "gdp" and epsilon == 8.0:
        # Theorem 3.1 needs about e^8 correct guesses to pass 8: 30,000 canaries and one pair fixed in advance
        # (k = 45% of m on each side; about half the canaries are in, so these guesses can all be right)
        m = 30_000
        grid = [(int(0.45 * m), int(0.45 * m))]
    caught = 0
    for seed in spawn_seeds(300 + int(epsilon), RUNS):
        rng = np.random.default_rng(seed)
        S = _truth(rng, m)
        scores = _gaussian_sum_scores(S, epsilon, rng, noise_scale=0.1)
        res = one_run_audit_scores(S, scores, delta=DELTA, beta=BETA, bound=bound, grid=grid)
        caught += res.epsilon_lower_bound > epsilon
    assert caught >= 0.95 * RUNS


@pytest.mark.parametrize("bound", ["steinke2023", "best", "gdp"])
def test_power_noise_left_out(bound):
    # with no noise every guess is right; at a claimed epsilon of 4 both bounds see the violation
    caught = 0
    for seed in spawn_seeds(400, RUNS):
        rng = np.random.default_rng(seed)
        S = _truth(rng)
        scores = _gaussian_sum_scores(S, 4.0, rng, noise_scale=0.0)
        caught += one_run_audit_scores(S, scores, delta=DELTA, beta=BETA, bound=bound).epsilon_lower_bound > 4.0
    assert caught >= 0.95 * RUNS


@pytest.mark.slow
def test_soundness_and_power_table_100_runs():
    # the table in docs/dpaudit.md: 100 runs per cell, m = 1,000, delta = 1e-5, beta = 0.05, default grid
    runs, rows = 100, []
    for epsilon in (1.0, 4.0, 8.0):
        for scale, label in ((1.0, "correct noise"), (0.1, "noise / 10"), (0.0, "no noise")):
            for bound in ("steinke2023", "best", "gdp"):
                eps_hat = []
                for seed in spawn_seeds(500 + int(epsilon), runs):
                    rng = np.random.default_rng(seed)
                    S = _truth(rng)
                    scores = _gaussian_sum_scores(S, epsilon, rng, noise_scale=scale)
                    eps_hat.append(one_run_audit_scores(S, scores, delta=DELTA, beta=BETA,
                                                        bound=bound).epsilon_lower_bound)
                eps_hat = np.array(eps_hat)
                rows.append((epsilon, label, bound, float(np.mean(eps_hat > epsilon)), float(np.median(eps_hat)),
                             float(eps_hat.max())))
    for eps, label, bound, above, median, top in rows:
        print(f"eps={eps:.0f} {label:<13} {bound:<11} above claim {above:.2f}  median bound {median:.2f}  max {top:.2f}")
    for epsilon, label, bound, above, _, _ in rows:
        if label == "correct noise":
            assert above == 0.0
        elif epsilon < 8 or bound == "gdp":
            assert above >= 0.95


def test_check_claim_verdicts():
    rng = np.random.default_rng(11)
    S = _truth(rng)
    honest = check_claim(S, _gaussian_sum_scores(S, 1.0, rng), claimed_epsilon=1.0, delta=DELTA)
    assert not honest.violated and honest.verdict == "consistent with the claim"
    assert honest.confidence == pytest.approx(0.95) and honest.epsilon_lower_bound <= 1.0
    buggy = check_claim(S, _gaussian_sum_scores(S, 1.0, rng, noise_scale=0.1), claimed_epsilon=1.0, delta=DELTA)
    assert buggy.violated and buggy.verdict.startswith("the claim is violated")
    assert buggy.epsilon_lower_bound == buggy.search.epsilon_lower_bound > 1.0
    assert ClaimCheck.from_json(buggy.to_json()) == buggy
    with pytest.raises(InvalidParameterError, match="^claimed_epsilon"):
        check_claim(S, S.astype(float), claimed_epsilon=-1.0, delta=DELTA)


def test_gdp_false_rejection_rate_on_the_gaussian_mechanism():
    # the Gaussian mechanism is exactly mu-GDP: the Gaussian-DP analysis rejects its true epsilon in at most a beta
    # fraction of runs, and more often than Theorem 3.1 does (it is the tighter of the two)
    epsilon, beta, runs, k = 1.0, 0.2, 300, 20
    gdp = steinke = 0
    for seed in spawn_seeds(9, runs):
        rng = np.random.default_rng(seed)
        S = _truth(rng)
        r, v = count_correct(S, guesses_from_scores(_gaussian_sum_scores(S, epsilon, rng), k, k))
        gdp += gdp_rejects(M, r, v, epsilon=epsilon, delta=DELTA, beta=beta)
        steinke += one_run_p_value(M, r, v, epsilon, DELTA) < beta
    assert steinke < gdp <= beta * runs

"""The per-step noise check: each step's noise bounded above from coordinates no gradient reaches, then accounted.

Oracles: chi-square draws of a correct mechanism's mean squares (false alarms at most beta), the threshold-test
bound against dp_accounting's optimistic PLD for one step, and planted bugs of DPSGD's trainer.
"""

import math

import numpy as np
import pytest

pytest.importorskip("dp_accounting")

from leakaudit.dpaudit import noise_check
from leakaudit.dpaudit.noise_check import _one_step_epsilon, _optimistic_epsilon
from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.learners.dp_sgd import dpsgd_accounted_epsilon


def _claim(sigma, q, T):
    return dpsgd_accounted_epsilon(noise_multiplier=sigma, sampling="poisson", sampling_rate=q, steps=T, epochs=1,
                                   delta=1e-5)


def test_correct_noise_raises_a_false_alarm_at_most_beta_of_the_time():
    """Mean squares of n Gaussian draws of the claimed std, 400 simulated runs: alarms at most beta (0.05), with
    binomial slack; every run's epsilon, where computed, at most the accounted one."""
    rng = np.random.default_rng(0)
    sigma, C, q, T, n = 0.8, 1.5, 0.1, 30, 500
    claim = _claim(sigma, q, T)
    alarms, eps = 0, []
    for _ in range(400):
        ms = (sigma * C) ** 2 * rng.chisquare(n, size=T) / n
        r = noise_check(ms, n, noise_multiplier=sigma, max_grad_norm=C, sampling_rate=q, claimed_epsilon=claim,
                        delta=1e-5, epsilon=False)
        alarms += r.violated
        if r.epsilon_lower_bound is not None:
            eps.append(r.epsilon_lower_bound)
    assert alarms <= 30  # beta = 0.05 of 400 is 20; the union bound over steps makes it far fewer
    assert all(e <= claim for e in eps)


def test_a_step_without_noise_or_with_too_little_is_caught():
    rng = np.random.default_rng(1)
    sigma, q, T, n = 0.5, 0.01, 200, 70_000
    claim = _claim(sigma, q, T)
    ms = sigma ** 2 * rng.chisquare(n, size=T) / n
    ok = noise_check(ms, n, noise_multiplier=sigma, max_grad_norm=1.0, sampling_rate=q, claimed_epsilon=claim,
                     delta=1e-5)
    assert not ok.violated and ok.epsilon_lower_bound <= claim and 0.97 < ok.median_noise_ratio < 1.03
    silent = ms.copy()
    silent[77] = 0.0
    bad = noise_check(silent, n, noise_multiplier=sigma, max_grad_norm=1.0, sampling_rate=q, claimed_epsilon=claim,
                      delta=1e-5)
    assert bad.violated and bad.epsilon_lower_bound == math.inf and bad.worst_step == 77
    assert "step 77" in bad.verdict
    low = ms / 400.0  # the noise divided by the batch (20) in every step
    r = noise_check(low, n, noise_multiplier=sigma, max_grad_norm=1.0, sampling_rate=q, claimed_epsilon=claim,
                    delta=1e-5)
    assert r.violated and r.min_noise_ratio < 0.06 and r.epsilon_lower_bound > 100


def test_one_step_threshold_bound_matches_the_optimistic_pld():
    for z, q in ((0.3, 0.01), (0.5, 0.1), (1.0, 1.0)):
        a, b = _one_step_epsilon(z, q, 1e-5), _optimistic_epsilon([z], q, 1e-5)
        assert abs(a - b) < 0.01 * b
    assert _one_step_epsilon(0.0, 0.01, 1e-5) == math.inf
    assert _one_step_epsilon(1e-3, 1.0, 1e-5) > 1e5  # no PLD needed for a tiny noise multiplier


def test_bad_input():
    with pytest.raises(InvalidInputError, match="mean_square"):
        noise_check([1.0, -1.0], 10, noise_multiplier=1.0, max_grad_norm=1.0, sampling_rate=0.1, claimed_epsilon=1,
                    delta=1e-5)
    with pytest.raises(InvalidParameterError, match="sampling_rate"):
        noise_check([1.0], 10, noise_multiplier=1.0, max_grad_norm=1.0, sampling_rate=0.0, claimed_epsilon=1,
                    delta=1e-5)


def test_the_audit_reports_the_noise_check_apart():
    """audit_dpsgd: a step without noise fails the noise check (its own verdict) whatever the one-run bound says."""
    pytest.importorskip("torch")
    from leakaudit.dpaudit import audit_dpsgd
    from leakaudit.learners import DPSGD, TorchMLP

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(int)
    dp = DPSGD(learner=TorchMLP(hidden=(16,)), noise_multiplier=1.0, sampling_rate=0.05, epochs=1, lr=0.5)
    claim = dp.accounted_epsilon(400) * 1.0001
    ok = audit_dpsgd(dp, X, y, claimed_epsilon=claim, delta=1e-5, m=2000, random_state=3)
    assert ok.noise_check_violated is False and ok.noise_check_epsilon_lower_bound <= claim
    bad = audit_dpsgd(dp.set_params(bug="skip_noise_step"), X, y, claimed_epsilon=claim, delta=1e-5, m=2000,
                      random_state=3)
    assert bad.noise_check_violated is True and bad.noise_check_min_ratio == 0.0
    assert "below what the accounting assumes" in bad.noise_check_verdict

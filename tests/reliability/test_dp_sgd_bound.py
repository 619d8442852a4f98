"""DP-SGD at eps = 1: the measured membership advantage respects the DP bound.

An eps-DP algorithm's membership advantage (true-positive minus false-positive
rate of any test between neighbouring data sets) is at most
``(e^eps - 1) / (e^eps + 1) = tanh(eps / 2)``; with delta, at most
``(e^eps - 1 + 2 delta) / (e^eps + 1)`` (the bound behind Izzo et al.'s Theorem 4).

We train full-batch DP-SGD logistic regression (leakaudit.mip.dp_baselines) on
two replace-one neighbours: D0 = base + an ordinary record, D1 = base + an
outlier canary with a flipped label, with the noise multiplier calibrated so the
run is (1, 1e-5)-DP (exact mu-GDP accounting). The attack is the loss
threshold on the canary; the threshold is chosen on half of the runs and the
advantage measured on the other half, with a Newcombe/Clopper-Pearson interval.
The same experiment without noise must exceed the bound (the test has power).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from leakaudit.attribute.experiment import difference_interval
from leakaudit.mip.dp_baselines import dpsgd_logistic_regression, full_batch_gdp_mu, gdp_epsilon

EPS, DELTA, STEPS, CLIP = 1.0, 1e-5, 5, 1.0


def noise_for_eps(eps: float) -> float:
    """Smallest noise multiplier (bisection) whose full-batch run is (eps, DELTA)-DP under replace-one."""
    lo, hi = 0.1, 100.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if gdp_epsilon(full_batch_gdp_mu(mid, STEPS, neighboring="replace"), DELTA) > eps:
            lo = mid
        else:
            hi = mid
    return hi


def dp_bound(eps: float, delta: float) -> float:
    return (math.exp(eps) - 1 + 2 * delta) / (math.exp(eps) + 1)


def canary_losses(noise: float, n_runs: int, seed: int):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(29, 2))
    yb = (base[:, 0] + base[:, 1] > 0).astype(float)
    x0, y0 = np.array([0.2, 0.1]), 1.0
    x1, y1 = np.array([3.0, 3.0]), 0.0  # an outlier with the "wrong" label
    D = {0: (np.vstack([base, x0]), np.r_[yb, y0]), 1: (np.vstack([base, x1]), np.r_[yb, y1])}
    losses = {0: [], 1: []}
    for b in (0, 1):
        X, y = D[b]
        for r in range(n_runs):
            th = dpsgd_logistic_regression(X, y, clip=CLIP, noise_multiplier=noise, sampling_rate=1.0, steps=STEPS,
                                           lr=1.0, alpha=0.0, random_state=seed * 1_000_003 + 2 * r + b)
            z = x1 @ th[:2] + th[2]
            losses[b].append(-(y1 * special.log_expit(z) + (1 - y1) * special.log_expit(-z)))
    return np.asarray(losses[0]), np.asarray(losses[1])


def measured_advantage(noise: float, n_runs: int, seed: int):
    """Advantage of "canary in iff its loss < t", t fitted on the first half of runs, measured on the second."""
    l0, l1 = canary_losses(noise, n_runs, seed)
    h = n_runs // 2
    cand = np.unique(np.r_[l0[:h], l1[:h]])
    t = cand[np.argmax([(l1[:h] < c).mean() - (l0[:h] < c).mean() for c in cand])]
    k1, k0 = int((l1[h:] < t).sum()), int((l0[h:] < t).sum())
    n = n_runs - h
    lo, hi = difference_interval(k1, n, k0, n, confidence=0.95)
    return k1 / n - k0 / n, lo, hi


def _check(n_runs, seed):
    noise = noise_for_eps(EPS)
    mu = full_batch_gdp_mu(noise, STEPS, neighboring="replace")
    assert gdp_epsilon(mu, DELTA) <= EPS + 1e-9
    bound = dp_bound(EPS, DELTA)
    assert abs(bound - math.tanh(EPS / 2)) < 1e-4
    adv, lo, hi = measured_advantage(noise, n_runs, seed)
    print(f"eps={EPS}: noise multiplier {noise:.3f}, measured advantage {adv:.3f} [{lo:.3f}, {hi:.3f}], "
          f"bound tanh(eps/2)={bound:.4f}, exact GDP TV {2 * special.ndtr(mu / 2) - 1:.4f}")
    assert adv <= bound + (hi - adv), "the measured advantage exceeds the DP bound beyond its interval"
    # power: with almost no noise the same attack beats the eps = 1 bound with confidence
    adv0, lo0, _ = measured_advantage(1e-3, n_runs, seed)
    print(f"no noise: measured advantage {adv0:.3f} (lower {lo0:.3f})")
    assert lo0 > bound


def test_dp_sgd_eps1_within_bound():
    _check(n_runs=200, seed=0)


@pytest.mark.slow
def test_dp_sgd_eps1_within_bound_long():
    _check(n_runs=2000, seed=1)

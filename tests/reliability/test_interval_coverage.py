"""Reported intervals cover a known truth at their nominal rate (simulation).

Each simulation draws data whose true quantity is known in closed form:

* Clopper-Pearson: k ~ Binomial(n, p); truth p. Exact intervals are conservative: coverage >= 95%.
* Bootstrap AUC: member scores ~ N(d, 1), non-members ~ N(0, 1); truth AUC = Phi(d / sqrt 2).
* Bootstrap TPR at FPR f: the same scores; truth TPR = 1 - Phi(Phi^-1(1 - f) - d).
* Attribute advantage (Newcombe hybrid with Clopper-Pearson): correct ~ Bernoulli(p1) on members and
  Bernoulli(p0) on non-members; truth p1 - p0.

The coverage must not fall below nominal by more than three Monte Carlo standard errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from leakaudit.attribute.experiment import attribute_advantage
from leakaudit.metrics import bootstrap_auc_ci, bootstrap_tpr_at_fpr_ci, clopper_pearson

NOMINAL = 0.95


def _lower_limit(n_sims: int) -> float:
    return NOMINAL - 3 * np.sqrt(NOMINAL * (1 - NOMINAL) / n_sims)


def coverage_clopper_pearson(n_sims, rng, n=40, p=0.1):
    hits = 0
    for _ in range(n_sims):
        lo, hi = clopper_pearson(int(rng.binomial(n, p)), n, confidence=NOMINAL)
        hits += lo <= p <= hi
    return hits / n_sims


def coverage_auc(n_sims, rng, d=0.8, n1=100, n0=100, n_boot=300):
    truth = stats.norm.cdf(d / np.sqrt(2))
    m = np.r_[np.ones(n1, int), np.zeros(n0, int)]
    hits = 0
    for i in range(n_sims):
        s = np.r_[rng.normal(d, 1, n1), rng.normal(0, 1, n0)]
        lo, hi = bootstrap_auc_ci(m, s, n_boot=n_boot, confidence=NOMINAL, random_state=i)
        hits += lo <= truth <= hi
    return hits / n_sims


def coverage_tpr_at_fpr(n_sims, rng, d=1.5, fpr=0.1, n1=300, n0=300, n_boot=200):
    truth = 1 - stats.norm.cdf(stats.norm.ppf(1 - fpr) - d)
    m = np.r_[np.ones(n1, int), np.zeros(n0, int)]
    hits = 0
    for i in range(n_sims):
        s = np.r_[rng.normal(d, 1, n1), rng.normal(0, 1, n0)]
        lo, hi = bootstrap_tpr_at_fpr_ci(m, s, fpr, n_boot=n_boot, confidence=NOMINAL, random_state=i)
        hits += lo <= truth <= hi
    return hits / n_sims


def coverage_attribute_advantage(n_sims, rng, p1=0.7, p0=0.6, n1=150, n0=150):
    hits = 0
    for _ in range(n_sims):
        r = attribute_advantage(rng.random(n1) < p1, rng.random(n0) < p0, confidence=NOMINAL)
        hits += r.ci_low <= p1 - p0 <= r.ci_high
    return hits / n_sims


CASES = {
    "clopper_pearson": coverage_clopper_pearson,
    "bootstrap_auc": coverage_auc,
    "bootstrap_tpr_at_fpr": coverage_tpr_at_fpr,
    "attribute_advantage": coverage_attribute_advantage,
}


@pytest.mark.parametrize("name", list(CASES))
def test_coverage_default(name):
    n_sims = {"bootstrap_tpr_at_fpr": 60, "bootstrap_auc": 100}.get(name, 400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cov = CASES[name](n_sims, np.random.default_rng(2024))
    print(f"{name}: coverage {cov:.3f} over {n_sims} simulations (nominal {NOMINAL})")
    assert cov >= _lower_limit(n_sims), (name, cov)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_coverage_long(name):
    n_sims = {"bootstrap_tpr_at_fpr": 500, "bootstrap_auc": 1000}.get(name, 4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cov = CASES[name](n_sims, np.random.default_rng(7))
    print(f"{name}: coverage {cov:.3f} over {n_sims} simulations (nominal {NOMINAL})")
    assert cov >= _lower_limit(n_sims), (name, cov)

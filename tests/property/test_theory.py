"""Theorem 9 window, Claim 12 and the spec's table (chase-property.md Sec. 2.5)."""

import math

import numpy as np
import pytest

from leakaudit.exceptions import InvalidParameterError
from leakaudit.property import theory as th

# The spec's table, copied by hand (Sec. 2.5): setting -> windows at p = .01, .03, .05, .10, .20 and the max p.
SPEC_TABLE = {
    "census-random": (["(0.067,0.202]", "(0.206,0.619]", "(0.351,1.000]", "(0.741,1.000]", "empty"], 0.130),
    "census-gender": (["(0.017,0.025]", "(0.052,0.077]", "(0.088,0.132]", "(0.185,0.278]", "(0.417,0.625]"], 0.375),
    "census-race": (["(0.040,0.101]", "(0.124,0.309]", "(0.211,0.526]", "(0.444,1.000]", "empty"], 0.200),
    "enron-random": (["(0.014,0.034]", "(0.044,0.103]", "(0.075,0.175]", "(0.159,0.370]", "(0.357,0.833]"], 0.412),
    "enron-negative": (["(0.101,0.202]", "(0.309,0.619]", "(0.526,1.000]", "empty", "empty"], 0.091),
}


def test_spec_table_of_windows():
    rows = th.window_table()
    assert [r["setting"] for r in rows] == list(SPEC_TABLE)
    for r in rows:
        windows, pmax = SPEC_TABLE[r["setting"]]
        assert list(r["windows"].values()) == windows, r["setting"]
        assert round(r["max_poison_rate"], 3) == pmax


def test_subpopulation_rule_of_algorithm_1():
    assert th.attacked_subpopulation(0.05, 0.15) == ("f", 0.05, 0.15)
    sub, lo, hi = th.attacked_subpopulation(0.4, 0.6)  # t0 + t1 = 1 is not < 1
    assert sub == "1-f" and lo == pytest.approx(0.4) and hi == pytest.approx(0.6)
    assert th.attacked_subpopulation(0.3, 0.7, "f") == ("f", 0.3, 0.7)


def test_paper_worked_example():
    w = th.theorem9_window(0.1, 0.3, 0.7)
    assert w.lo == pytest.approx(0.1 / (0.7 * 0.9)) and w.hi == pytest.approx(0.1 / (0.3 * 0.9))
    assert w.describe() == "(0.159,0.370]"
    assert w.contains(np.array([0.158, 0.2, 0.370, 0.371])).tolist() == [False, True, True, False]


def test_window_edges_and_tau():
    pmax = th.max_poison_rate(0.05, 0.15)
    assert pmax == pytest.approx(0.15 / 1.15)
    assert th.theorem9_window(pmax + 1e-9, 0.05, 0.15).empty
    assert not th.theorem9_window(pmax - 1e-3, 0.05, 0.15).empty
    tmax = th.max_tau(0.1, 0.3, 0.7)
    assert tmax == pytest.approx(0.1 * 0.4 / (4 * 0.21))
    lo, hi = th.certainty_window(0.1, 0.3, 0.7, tmax)
    assert lo == pytest.approx(hi)  # the window closes exactly at max tau
    assert th.theorem9_window(0.1, 0.3, 0.7, tau=tmax * 1.01).empty
    assert th.theorem9_window(0.0, 0.3, 0.7).empty


def test_claim12_and_corollary13():
    rng = np.random.default_rng(0)
    eta = rng.uniform(size=1000)
    p, t, tau = 0.1, 0.3, 0.05
    post = th.claim12_poisoned_posterior(eta, p, t)
    # Claim 12 by direct Bayes: mass of poison at x is p*P+(x), clean mass (1-p)*t*P+(x).
    assert np.allclose(post, (p * 1 + (1 - p) * t * eta) / (p + (1 - p) * t))
    crt = th.signed_certainty(eta)
    lhs = post >= 0.5 + tau * t / (p + t * (1 - p))
    rhs = crt <= (p - 2 * tau * t) / (t * (1 - p))  # Corollary 13
    assert np.array_equal(lhs, rhs)


def test_hoeffding_counts():
    assert [th.hoeffding_query_count(d) for d in (0.1, 0.05, 0.01)] == [19, 24, 37]
    assert th.hoeffding_query_count(0.1) == math.ceil(8 * math.log(10))


def test_bad_inputs():
    with pytest.raises(InvalidParameterError, match="t0 must be smaller"):
        th.theorem9_window(0.1, 0.6, 0.4)
    with pytest.raises(InvalidParameterError, match="p must be in"):
        th.theorem9_window(1.2, 0.1, 0.2)
    with pytest.raises(InvalidParameterError, match="subpopulation"):
        th.attacked_subpopulation(0.1, 0.2, "g")


def test_label_rate_oracle_against_simulation():
    # Census gender at n = 1,000: men poisoned with label 1 (P(y=1 | man) = 0.102) against women (0.025)
    rng = np.random.default_rng(0)
    for rate, p in ((0.102, 0.03), (0.025, 0.03), (0.102, 0.10)):
        m = round(p * 1000)
        k_lo, k_hi = round(0.4 * (1000 - m)), round(0.6 * (1000 - m))
        r_lo = (rng.binomial(k_lo, rate, 200_000) + m) / (k_lo + m)
        r_hi = (rng.binomial(k_hi, rate, 200_000) + m) / (k_hi + m)
        pred = th.label_rate_oracle_accuracy(n=1000, p=p, s_lo=0.4, s_hi=0.6, label_rate=rate)
        # the simulated accuracy of the same threshold test (normal approximation: within 0.02)
        mu_lo, mu_hi, sd_lo, sd_hi = r_lo.mean(), r_hi.mean(), r_lo.std(), r_hi.std()
        c = mu_hi + (mu_lo - mu_hi) * sd_hi / (sd_lo + sd_hi)
        sim = 0.5 * ((r_lo > c).mean() + (r_hi <= c).mean())
        assert abs(pred - sim) < 0.02, (rate, p, pred, sim)
    # more poison, a rarer label in the attacked group, and a larger n all make the data more telling
    f = th.label_rate_oracle_accuracy
    assert f(n=1000, p=0.10, s_lo=0.4, s_hi=0.6, label_rate=0.102) > f(n=1000, p=0.03, s_lo=0.4, s_hi=0.6,
                                                                        label_rate=0.102)
    assert f(n=1000, p=0.03, s_lo=0.4, s_hi=0.6, label_rate=0.025) > f(n=1000, p=0.03, s_lo=0.4, s_hi=0.6,
                                                                        label_rate=0.102)
    assert f(n=1000, p=0.0, s_lo=0.4, s_hi=0.6, label_rate=0.102) == pytest.approx(0.5)
    with pytest.raises(InvalidParameterError, match="s_lo"):
        f(n=1000, p=0.03, s_lo=0.6, s_hi=0.4, label_rate=0.1)

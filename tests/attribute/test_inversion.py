"""Adversary 4, Theorem 5 and the general interval procedure (Yeom et al. §4)."""

import numpy as np
import pytest
from scipy import special

from leakaudit.attribute import (
    counterfactual_inputs,
    counterfactual_residuals,
    eps_eq,
    inversion_accuracy,
    inversion_advantage,
    inversion_attack,
    inversion_correct_intervals,
    inversion_scores,
    theorem5_advantage,
    theorem5_optimal_tau,
)
from leakaudit.exceptions import InvalidInputError, InvalidParameterError

# spec §4, table under "Figure (final Fig. 1)": tau/sigma_S -> advantage for r = 5, 2, 1.2
FIG1 = [
    (0, 0, 0, 0),
    (1, 0.1516, 0.0928, 0.0299),
    (2, 0.2621, 0.1499, 0.0437),
    (3, 0.3153, 0.1598, 0.0388),
    (4, 0.3218, 0.1359, 0.0250),
    (5, 0.3023, 0.0994, 0.0124),
    (6, 0.2729, 0.0655, 0.0049),
    (8, 0.2118, 0.0227, 0.0004),
    (10, 0.1587, 0.0062, 0.0000),
    (15, 0.0668, 0.0001, 0),
    (20, 0.0228, 0, 0),
]


@pytest.mark.parametrize("tau,a5,a2,a12", FIG1)
def test_theorem5_matches_spec_table_to_4_decimals(tau, a5, a2, a12):
    for r, want in ((5, a5), (2, a2), (1.2, a12)):
        assert round(theorem5_advantage(tau, 1.0, r), 4) == pytest.approx(want, abs=1e-12)


def test_theorem5_hand_value_and_scale_invariance():
    # 1/2 (erf(1/(2 sqrt2)) - erf(1/(10 sqrt2)))
    want = 0.5 * (special.erf(1 / (2 * np.sqrt(2))) - special.erf(1 / (10 * np.sqrt(2))))
    assert theorem5_advantage(1.0, 1.0, 5.0) == pytest.approx(want, rel=1e-14)
    assert theorem5_advantage(3.0, 3.0, 15.0) == pytest.approx(want, rel=1e-14)
    assert theorem5_advantage(2.0, 1.0, 1.0) == 0.0


def test_theorem5_optimum_is_twice_eps_eq_and_half_theorem3():
    # spec §4 [derived]: r=1.2 -> 2.185, 0.0440; r=2 -> 2.719, 0.1613; r=5 -> 3.662, 0.3236
    for r, tau_star, best in ((1.2, 2.185, 0.0440), (2, 2.719, 0.1613), (5, 3.662, 0.3236)):
        t, a = theorem5_optimal_tau(1.0, r)
        assert round(t, 3) == tau_star and round(a, 4) == best
        grid = np.linspace(0, 20, 20001)
        assert theorem5_advantage(grid, 1.0, r).max() <= a + 1e-12
        # Theorem 3 advantage at the same ratio
        e = eps_eq(1.0, r)
        thm3 = special.erf(e / np.sqrt(2)) - special.erf(e / (np.sqrt(2) * r))
        assert a == pytest.approx(thm3 / 2, rel=1e-12)


def test_theorem5_rejects_bad_parameters():
    with pytest.raises(InvalidParameterError, match="tau"):
        theorem5_advantage(-1, 1, 2)
    with pytest.raises(InvalidParameterError, match="sigma_s"):
        theorem5_advantage(1, 0, 2)


def test_general_procedure_reduces_to_theorem5():
    for tau in (0.0, 0.5, 2.0, 7.0):
        for r in (1.2, 2.0, 5.0):
            assert inversion_advantage([0.5, 0.5], [tau, 0.0], 1.0, r) == pytest.approx(
                theorem5_advantage(tau, 1.0, r), abs=1e-14
            )
    iv = inversion_correct_intervals([0.5, 0.5], [3.0, 0.0], 1.0)
    assert iv[0, 0] == pytest.approx(-1.5) and iv[0, 1] == np.inf
    assert iv[1, 0] == -np.inf and iv[1, 1] == pytest.approx(1.5)


def test_intervals_agree_with_the_argmax_on_a_grid():
    prior = np.array([0.2, 0.5, 0.3])
    w = np.array([1.0, 0.0, -1.5])
    sigma = 0.8
    iv = inversion_correct_intervals(prior, w, sigma)
    eps = np.linspace(-6, 6, 4001)
    for j in range(3):
        res = eps[:, None] + (w[j] - w)[None, :]  # eps(t_i) = eps + w_j - w_i
        guess = inversion_attack(res, prior, sigma=sigma)
        inside = (eps >= iv[j, 0]) & (eps <= iv[j, 1]) if not np.isnan(iv[j, 0]) else np.zeros_like(eps, bool)
        # away from the boundary points themselves the two must agree
        near = np.min(np.abs(eps[:, None] - iv[j][None, :]), axis=1) < 1e-2 if not np.isnan(iv[j, 0]) else False
        assert np.array_equal((guess == j)[~near], inside[~near])


def test_ties_use_the_lowest_index_like_argmax():
    # identical outputs for both values: only the prior decides; equal priors -> index 0
    iv = inversion_correct_intervals([0.5, 0.5], [1.0, 1.0], 1.0)
    assert np.isinf(iv[0]).all() and np.isnan(iv[1]).all()
    assert inversion_accuracy([0.5, 0.5], [1.0, 1.0], 1.0, 2.0).tolist() == [1.0, 0.0]
    iv = inversion_correct_intervals([0.3, 0.7], [1.0, 1.0], 1.0)
    assert np.isnan(iv[0]).all() and np.isinf(iv[1]).all()


def test_general_advantage_matches_monte_carlo_of_adversary4():
    rng = np.random.default_rng(0)
    prior = np.array([0.6, 0.3, 0.1])
    w = np.array([0.0, 1.2, 2.5])
    s_s, s_d, n = 0.7, 2.0, 200_000
    accs = []
    for sigma_true in (s_s, s_d):
        t = rng.choice(3, size=n, p=prior)
        eps = rng.normal(0, sigma_true, n)
        y = w[t] + eps  # c(v) = 0
        res = y[:, None] - w[None, :]
        accs.append(np.mean(inversion_attack(res, prior, sigma=s_s) == t))
    mc = accs[0] - accs[1]
    assert mc == pytest.approx(inversion_advantage(prior, w, s_s, s_d), abs=4 * np.sqrt(0.5 / n))


def test_inversion_scores_hand_computed():
    res = np.array([[0.0, 1.0]])
    s = inversion_scores(res, [0.25, 0.75], sigma=1.0)
    c = -0.5 * np.log(2 * np.pi)
    assert s[0, 0] == pytest.approx(np.log(0.25) + c)
    assert s[0, 1] == pytest.approx(np.log(0.75) + c - 0.5)
    # with a non-uniform prior sigma matters: wide sigma lets the prior win
    assert inversion_attack(res, [0.25, 0.75], sigma=0.5).tolist() == [0]
    assert inversion_attack(res, [0.25, 0.75], sigma=2.0).tolist() == [1]
    # custom log-density (Laplace) is accepted
    assert inversion_attack(res, [0.5, 0.5], log_density=lambda e: -np.abs(e)).tolist() == [0]


def test_counterfactual_inputs_one_hot_and_code():
    X = np.array([[5.0, 1.0, 0.0, 0.0], [6.0, 0.0, 0.0, 1.0]])
    c = counterfactual_inputs(X, columns=[1, 2, 3])
    assert c.shape == (3, 2, 4)
    assert c[1, :, 1:].tolist() == [[0, 1, 0], [0, 1, 0]]
    assert (c[:, :, 0] == X[:, 0]).all()
    c2 = counterfactual_inputs(X, columns=0, values=[0.0, 9.0])
    assert c2[1, :, 0].tolist() == [9.0, 9.0] and (X[:, 0] == [5, 6]).all()  # X untouched
    res = counterfactual_residuals(lambda Z: Z[:, 0] * 2.0, X, [10.0, 10.0], columns=0, values=[0.0, 5.0])
    assert res.tolist() == [[10.0, 0.0], [10.0, 0.0]]


def test_bad_inputs_raise_named_errors():
    with pytest.raises(InvalidInputError, match="prior"):
        inversion_attack([[0.0, 1.0]], [0.5, 0.6], sigma=1.0)
    with pytest.raises(InvalidInputError, match="prior has 3 entries"):
        inversion_attack([[0.0, 1.0]], [0.3, 0.3, 0.4], sigma=1.0)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        inversion_attack([[0.0, 1.0]], [0.5, 0.5])
    with pytest.raises(InvalidParameterError, match="columns"):
        counterfactual_inputs(np.zeros((2, 3)), columns=[1, 5])
    with pytest.raises(InvalidParameterError, match="values"):
        counterfactual_inputs(np.zeros((2, 3)), columns=1)
    with pytest.raises(InvalidInputError, match="NaN"):
        inversion_attack([[np.nan, 1.0]], [0.5, 0.5], sigma=1.0)


def test_interval_accuracy_equals_numerical_integration_for_random_configurations():
    from scipy import stats

    rng = np.random.default_rng(7)
    eps = np.linspace(-12, 12, 24001)
    de = eps[1] - eps[0]
    for _ in range(15):
        m = int(rng.integers(2, 6))
        prior = rng.dirichlet(np.ones(m))
        w = rng.normal(0, 2, m)
        s_adv, s_true = rng.uniform(0.3, 2), rng.uniform(0.3, 3)
        closed = inversion_accuracy(prior, w, s_adv, s_true)
        dens = stats.norm.pdf(eps, scale=s_true)
        for j in range(m):
            guess = inversion_attack(eps[:, None] + (w[j] - w)[None, :], prior, sigma=s_adv)
            numeric = np.sum(dens * (guess == j)) * de
            assert closed[j] == pytest.approx(numeric, abs=2e-3)


def test_mixture_log_density_is_a_density_and_reduces_to_the_gaussian():
    from scipy import stats

    from leakaudit.attribute import mixture_log_density

    eps = np.linspace(-40, 40, 80001)
    f = np.exp(mixture_log_density(0.5, 3.0)(eps))
    assert np.sum(f) * (eps[1] - eps[0]) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(mixture_log_density(1.3, 1.3)(eps[:5]), stats.norm.logpdf(eps[:5], scale=1.3))
    np.testing.assert_allclose(mixture_log_density(0.5, 3.0, weight_member=1.0)(eps[:5]),
                               stats.norm.logpdf(eps[:5], scale=0.5))

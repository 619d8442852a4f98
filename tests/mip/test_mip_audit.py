"""The exact eta checker and the simulated Bayes-optimal attacker (spec 7.1 unit tests)."""

import math

import numpy as np
import pytest
from scipy import integrate

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.mip import (
    MIPNoise,
    enumerate_splits,
    eta_from_eps,
    exact_eta_discrete,
    exact_eta_laplace,
    laplace_mixture_l1,
    mip_constant,
    mip_noise,
    simulate_bayes_attacker,
)
from leakaudit.mip.examples import (
    prop9_dataset,
    prop9_outputs,
    prop9_sensitivity,
    thm4_tight_distribution,
    thm5_subset_distribution,
)


def test_enumerate_splits():
    m = enumerate_splits(6)
    assert m.shape == (20, 6) and np.all(m.sum(1) == 3)
    assert len({tuple(r) for r in m}) == 20
    np.testing.assert_array_equal(np.flatnonzero(m[0]), [0, 1, 2])
    with pytest.raises(InvalidParameterError, match="too many"):
        enumerate_splits(60)


def test_laplace_l1_closed_form_against_quadrature():
    rng = np.random.default_rng(0)
    a = np.r_[rng.normal(size=7), 0.3, 0.3]  # with a duplicate atom
    w = rng.normal(size=(3, 9))
    b = 0.4
    exact = laplace_mixture_l1(a, w, b)
    for i in range(3):
        f = lambda t: abs(np.sum(w[i] * np.exp(-np.abs(t - a) / b)) / (2 * b))  # noqa: E731
        pts = np.sort(a)
        quad = integrate.quad(f, pts[0] - 40 * b, pts[-1] + 40 * b, points=pts, limit=500)[0]
        assert exact[i] == pytest.approx(quad, rel=1e-7)
    assert laplace_mixture_l1([0.0], [1.0], 1.0) == pytest.approx(1.0)


def test_two_point_algorithm_exact():
    # A = L * 1{x* not in D}: exact eta = (1 - e^{-L/(2b)})/2 (spec 7.2 fact 5)
    n, L, b = 6, 1.3, 0.7
    m = enumerate_splits(n)
    res = exact_eta_laplace(np.where(m[:, 0], 0.0, L), b, n=n, targets=[0])
    assert res.eta == pytest.approx((1 - math.exp(-L / (2 * b))) / 2, rel=1e-12)


def test_theorem4_tightness():
    for eps in (0.1, 1.0, 3.0):
        res = exact_eta_discrete(2, thm4_tight_distribution(eps), k=1)
        assert res.accuracy[0] == pytest.approx(1 / (1 + math.exp(-eps)), rel=1e-12)
        assert res.eta == pytest.approx(eta_from_eps(eps), rel=1e-12)


@pytest.mark.parametrize("p", [0.0, 0.05, 0.3, 1.0])
def test_theorem5_eta_is_p_over_2(p):
    assert exact_eta_discrete(6, thm5_subset_distribution(p)).eta == pytest.approx(p / 2, abs=1e-12)


def test_discrete_checker_rejects_bad_distribution():
    with pytest.raises(InvalidInputError, match="sums to"):
        exact_eta_discrete(4, lambda s: {0: 0.5})


@pytest.mark.parametrize("b,eta", [(0.001, 0.214), (0.01, 0.0465), (0.1, 0.0065), (1, 0.00117), (10, 0.00086)])
def test_prop9_exact_eta_spec_values(b, eta):
    n = 12
    res = exact_eta_laplace(prop9_outputs(n, enumerate_splits(n)), b, n=n)
    assert res.eta == pytest.approx(eta, rel=0.02)


def test_prop9_facts():
    n = 12
    vals = prop9_outputs(n, enumerate_splits(n))
    assert vals.max() == pytest.approx(math.sqrt(math.comb(12, 6)), rel=1e-9)
    assert np.sort(vals)[-2] <= 2.0 ** -(n // 2 - 2)
    assert np.all(np.sort(vals)[:-1] > 0)
    assert vals.var() == pytest.approx(0.998803, abs=1e-6)
    assert prop9_sensitivity(12) == pytest.approx(30.3964, abs=1e-4)
    # Delta is attained: D* with A0 replaced by 2^(n-2)
    x = prop9_dataset(n)
    dstar = list(x[: n // 2 - 1])
    assert 1 / (sum(dstar) + x[n - 2]) == pytest.approx(math.sqrt(924) - prop9_sensitivity(n), rel=1e-9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_laplace_mechanism_meets_theorem4(eps):
    n = 10
    vals = prop9_outputs(n, enumerate_splits(n))
    res = exact_eta_laplace(vals, prop9_sensitivity(n) / eps, n=n)
    assert res.eta <= eta_from_eps(eps)


@pytest.mark.parametrize("eta", [0.01, 0.1, 0.3])
def test_algorithm1_in_1d_meets_target(eta):
    # mean of a skewed sample and Prop 9; sigma = the exact moment over halves of D (Theorem 7's sigma)
    rng = np.random.default_rng(0)
    n = 12
    m = enumerate_splits(n)
    for vals in (m @ rng.exponential(size=n) ** 3 / (n // 2), prop9_outputs(n, m)):
        dev = vals - vals.mean()
        for M, const in ((2, "cor11"), (4, "cor11"), (2, "thm7")):
            sigma = np.mean(np.abs(dev) ** M) ** (1 / M)
            assert exact_eta_laplace(vals, mip_constant(eta, M, constant=const) * sigma, n=n).eta <= eta
        # our extension: b = sigma_1 / (2 eta), sigma_1 = E|theta - E theta|
        sigma1 = np.mean(np.abs(dev))
        ex = exact_eta_laplace(vals, mip_constant(eta, 1, constant="tv") * sigma1, n=n).eta
        assert ex <= eta


def test_simulated_attacker_agrees_with_exact_in_1d():
    # a mean with an outlier: the exact Bayes accuracy is known; the simulated attacker must not exceed it
    n = 12
    x = np.r_[np.zeros(n - 1), 6.0]
    m = enumerate_splits(n)
    vals = m @ x / (n // 2)
    b = 0.5
    exact = exact_eta_laplace(vals, b, n=n, targets=[n - 1])
    noise = MIPNoise((1.0,), 2.0, b, "laplace")  # d = 1: density exp(-|x|/b)
    att = simulate_bayes_attacker(
        lambda X, y, idx, rs: np.array([X[idx].mean()]), x, None, noise, targets=[n - 1],
        n_reference=400, n_games=3000, random_state=0,
    )
    lo, hi = att.accuracy_ci[0]
    assert lo - 0.5 <= exact.eta + 1e-12 <= hi - 0.5 + 0.01
    assert att.eta_hat[0] == pytest.approx(exact.eta, abs=0.03)
    assert att.advantage[0] == pytest.approx(2 * att.eta_hat[0], abs=0.05)


def test_simulated_attacker_multidim_noise_and_pass():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    X[0] = 8.0  # an outlier target
    f = lambda X, y, idx, rs: X[idx].mean(axis=0)  # noqa: E731
    sig = np.std([X[rng.permutation(40)[:20]].mean(0) for _ in range(500)], axis=0)
    noise = mip_noise(sig, 0.2, 2, radial="gamma", constant="tv")
    att = simulate_bayes_attacker(f, X, None, noise, targets=[0, 1], n_reference=200, n_games=600,
                                  eta_target=0.2, random_state=3)
    assert att.passes()
    assert all(e <= 0.2 for e in att.eta_hat)
    # without noise worth the name, the outlier is found every time
    loud = simulate_bayes_attacker(f, X, None, MIPNoise(tuple(sig), 2.0, 1e-3, "gamma"), targets=[0],
                                   n_reference=200, n_games=300, eta_target=0.05, random_state=3)
    assert loud.accuracy[0] > 0.95 and not loud.passes()


def test_simulated_attacker_bad_input():
    X = np.zeros((10, 1))
    with pytest.raises(InvalidInputError, match="targets"):
        simulate_bayes_attacker(lambda X, y, i, r: X[i].mean(0), X, None, MIPNoise((1.0,), 2.0, 1.0),
                                targets=[10])
    with pytest.raises(InvalidInputError, match="outputs 1 values"):
        simulate_bayes_attacker(lambda X, y, i, r: X[i].mean(0), X, None, MIPNoise((1.0, 1.0), 2.0, 1.0),
                                targets=[0], n_reference=20, n_games=5)


def test_gaussian_variant_two_point_and_attacker():
    from scipy import stats as st

    from leakaudit.mip import GaussianMIPNoise

    # 1-D two-point algorithm (outputs 0 / L): exact eta = Phi(L/(2 s sigma)) - 1/2 <= eta
    L = 1.0
    sig = 0.5  # std of the two-point output over halves is L/2
    for eta in (0.01, 0.1, 0.3):
        nz = mip_noise([sig], eta, 2, radial="gaussian", constant="tv")
        assert isinstance(nz, GaussianMIPNoise)
        exact = st.norm.cdf(L / (2 * nz.s * sig)) - 0.5
        assert exact <= eta
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 5))
    X[0] = 6.0
    f = lambda X, y, idx, rs: X[idx].mean(axis=0)  # noqa: E731
    sd = np.std([X[rng.permutation(40)[:20]].mean(0) for _ in range(500)], axis=0)
    nz = mip_noise(sd, 0.1, 2, radial="gaussian", constant="tv")
    att = simulate_bayes_attacker(f, X, None, nz, targets=[0], n_reference=200, n_games=600, eta_target=0.1,
                                  random_state=0)
    assert att.passes()
    with pytest.raises(InvalidParameterError, match="gaussian"):
        mip_noise(sd, 0.1, 2, radial="gaussian")

"""Theorem 4 conversions, Theorem 7 / Corollary 11 constants, Corollary 8 sampler."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from leakaudit.exceptions import InvalidParameterError
from leakaudit.mip import (
    MIPNoise,
    cor11_bracket,
    eps_from_eta,
    eta_from_eps,
    eta_from_eps_delta,
    eta_from_gdp_mu,
    gdp_mu_from_eta,
    mip_constant,
    mip_noise,
    sample_direction,
    sample_gennormal,
    thm7_eta_bound,
    weighted_norm,
)

# spec 2.5 reference values
ETA_OF_EPS = [(0.01, 0.0025), (0.1, 0.02498), (0.5, 0.12246), (1, 0.23106), (2, 0.38080), (3, 0.45257),
              (5, 0.49331), (10, 0.499955)]
EPS_OF_ETA = [(0.01, 0.04001), (0.05, 0.20067), (0.1, 0.40547), (0.2, 0.84730), (0.25, 1.09861), (0.3, 1.38629),
              (0.4, 2.19722), (0.49, 4.59512)]


@pytest.mark.parametrize("eps,eta", ETA_OF_EPS)
def test_eta_from_eps_spec_values(eps, eta):
    assert eta_from_eps(eps) == pytest.approx(eta, abs=6e-6)
    assert eta_from_eps(eps) == pytest.approx(1 / (1 + math.exp(-eps)) - 0.5, rel=1e-12)


@pytest.mark.parametrize("eta,eps", EPS_OF_ETA)
def test_eps_from_eta_spec_values(eta, eps):
    assert eps_from_eta(eta) == pytest.approx(eps, abs=6e-6)


@given(st.floats(0.0, 30.0))
def test_round_trip(eps):
    eta = eta_from_eps(eps)
    if eta < 0.5 - 1e-9:
        assert eps_from_eta(eta) == pytest.approx(eps, rel=1e-7, abs=1e-9)


def test_small_eps_rule_and_limits():
    assert eta_from_eps(1e-4) == pytest.approx(1e-4 / 4, rel=1e-6)
    assert eta_from_eps(math.inf) == 0.5
    with pytest.raises(InvalidParameterError, match="eta"):
        eps_from_eta(0.5)
    with pytest.raises(InvalidParameterError, match="eps"):
        eta_from_eps(-1)


def test_eps_delta_and_gdp():
    assert eta_from_eps_delta(1.0, 0.0) == pytest.approx(eta_from_eps(1.0))
    assert eta_from_eps_delta(1.0, 1e-3) == pytest.approx(eta_from_eps(1.0) + 1e-3 / (1 + math.e))
    # TV(N(0,1), N(mu,1)) = 2 Phi(mu/2) - 1
    assert eta_from_gdp_mu(1.0) == pytest.approx(stats.norm.cdf(0.5) - 0.5, rel=1e-12)
    assert gdp_mu_from_eta(0.01) == pytest.approx(0.0501, abs=1e-4)  # spec 6.2 example
    assert eta_from_gdp_mu(gdp_mu_from_eta(0.2)) == pytest.approx(0.2, rel=1e-10)


# spec 3: table of c
C_TABLE = [
    (0.01, 379456, 562500, 15288.7, 5241.3), (0.05, 15178.2, 22500, 1367.5, 613.0),
    (0.10, 3794.56, 5625, 483.47, 243.28), (0.20, 948.64, 1406.25, 170.93, 96.546),
    (0.25, 607.13, 900, 122.31, 71.700), (0.30, 421.62, 625, 93.044, 56.227),
    (0.40, 237.16, 351.56, 60.434, 38.314), (0.49, 158.04, 234.28, 44.574, 29.231),
    (0.50, 151.78, 225, 43.243, 28.454),
]


@pytest.mark.parametrize("eta,c2,c2_thm7,c4,c6", C_TABLE)
def test_constant_table(eta, c2, c2_thm7, c4, c6):
    assert mip_constant(eta, 2) == pytest.approx(c2, rel=5e-5)
    assert mip_constant(eta, 2, constant="thm7") == pytest.approx(c2_thm7, rel=5e-5)
    assert mip_constant(eta, 4) == pytest.approx(c4, rel=5e-5)
    assert mip_constant(eta, 6) == pytest.approx(c6, rel=5e-5)
    assert mip_constant(eta, 2, constant="tv") == pytest.approx(1 / (2 * eta))


def test_cor11_bracket_value():
    c = (2 * 6.16) ** 2
    assert cor11_bracket(c) == pytest.approx(6.15966, abs=1e-5)
    assert cor11_bracket(c) <= 6.1597
    # the general-M bound equals eq. (13) at M = 2
    assert thm7_eta_bound(c, 2) == pytest.approx(cor11_bracket(c) * c**-0.5, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.005, 0.5), st.sampled_from([2, 3, 4, 6, 8]))
def test_calibrated_constant_never_misses_target(eta, M):
    c = mip_constant(eta, M, constant="tight")
    assert thm7_eta_bound(c, M) <= eta  # calibrated on the safe side
    assert c <= mip_constant(eta, M) * (1 + 1e-12)  # and never worse than 6.16
    assert thm7_eta_bound(c * (1 - 1e-6), M) > eta * (1 - 1e-4)  # and close to the root


def test_cor11_constant_certifies_for_every_M():
    for M in (2, 3, 4, 6, 10):
        for eta in (0.01, 0.1, 0.3, 0.5):
            assert thm7_eta_bound(mip_constant(eta, M), M) <= eta


def test_tight_constant_gain_is_small():
    r = mip_constant(0.1, 2, constant="tight") / mip_constant(0.1, 2)
    assert 0.95 < r < 0.999


def test_gennormal_moments_match_scipy():
    rng = np.random.default_rng(0)
    for beta in (1.0, 2.0, 4.0):
        x = sample_gennormal(1.5, beta, 200_000, rng)
        # E|Y/alpha|^beta = 1/beta
        assert np.mean(np.abs(x / 1.5) ** beta) == pytest.approx(1 / beta, rel=0.02)
        assert np.var(x) == pytest.approx(stats.gennorm(beta, scale=1.5).var(), rel=0.02)
        assert stats.kstest(x[:5000], stats.gennorm(beta, scale=1.5).cdf).pvalue > 1e-3


def test_weighted_norm_by_hand():
    x = np.array([1.0, -2.0])
    sig = np.array([1.0, 2.0])
    assert weighted_norm(x, sig, 2) == pytest.approx(math.sqrt((1 + 1) / 2))
    assert weighted_norm(np.array([3.0, 0.0]), np.array([1.0, 1.0]), 4) == pytest.approx((81 / 2) ** 0.25)
    assert weighted_norm(np.zeros(3), np.ones(3), 2) == 0.0
    assert weighted_norm(np.array([1e200, 1e200]), np.ones(2), 6) == pytest.approx(1e200)


def test_direction_on_unit_sphere():
    sig = np.array([0.1, 1.0, 5.0])
    u = sample_direction(sig, 4, 1000, 0)
    np.testing.assert_allclose(weighted_norm(u, sig, 4), 1.0, rtol=1e-12)
    # coordinates scale with sigma
    assert np.abs(u[:, 2]).mean() / np.abs(u[:, 0]).mean() == pytest.approx(50, rel=0.15)


def test_radius_laws():
    sig = np.ones(4)
    g = MIPNoise(tuple(sig), 2.0, 3.0, "gamma").sample(20000, 1)
    r = weighted_norm(g, sig, 2)
    assert r.mean() == pytest.approx(4 * 3.0, rel=0.02)  # Gamma(d=4, c=3) mean 12
    lap = MIPNoise(tuple(sig), 2.0, 3.0, "laplace").sample(20000, 1)
    assert weighted_norm(lap, sig, 2).mean() == pytest.approx(3.0, rel=0.03)  # |Laplace(c)| mean c


def test_one_dimensional_noise_is_laplace_of_scale_c_sigma():
    nz = mip_noise([2.0], 0.1, 2)
    x = nz.sample(20000, 3)[:, 0]
    assert stats.kstest(x, stats.laplace(scale=nz.c * 2.0).cdf).pvalue > 1e-3


def test_zero_sigma_coordinates_get_no_noise():
    nz = mip_noise([1.0, 0.0, 2.0], 0.2, 2)
    assert nz.d_eff == 2
    x = nz.sample(100, 0)
    assert np.all(x[:, 1] == 0) and np.all(x[:, 0] != 0)
    assert np.isneginf(nz.log_density(np.array([0.1, 0.1, 0.1])))
    assert np.isfinite(nz.log_density(np.array([0.1, 0.0, 0.1])))


def test_log_density_forms():
    g = MIPNoise((1.0, 1.0), 2.0, 2.0, "gamma")
    lap = MIPNoise((1.0, 1.0), 2.0, 2.0, "laplace")
    x = np.array([[0.3, 0.4], [1.2, 1.6]])
    nrm = weighted_norm(x, np.ones(2), 2)
    np.testing.assert_allclose(g.log_density(x), -nrm / 2.0)
    np.testing.assert_allclose(lap.log_density(x), -nrm / 2.0 - np.log(nrm))


def test_bad_parameters():
    with pytest.raises(InvalidParameterError, match="eta"):
        mip_constant(0.0, 2)
    with pytest.raises(InvalidParameterError, match="M >= 2"):
        mip_constant(0.1, 1.5)
    with pytest.raises(InvalidParameterError, match="constant"):
        mip_constant(0.1, 2, constant="bogus")
    with pytest.raises(InvalidParameterError, match="radial='gamma'"):
        mip_noise([1.0, 1.0], 0.1, 2, constant="tv")
    with pytest.raises(InvalidParameterError, match="sigma"):
        mip_noise([1.0, -1.0], 0.1, 2)
    mip_noise([1.0], 0.1, 1, constant="tv")  # d = 1: Laplace radius = Gamma(1) radius

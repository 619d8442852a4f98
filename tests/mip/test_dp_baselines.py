"""Laplace mechanism, GDP / dp_accounting accounting, DP-SGD implementations."""

import math

import numpy as np
import pytest
from scipy import stats

from leakaudit.exceptions import InvalidParameterError, UnsupportedError
from leakaudit.mip.dp_baselines import (
    clip_rows,
    dpsgd_covariance,
    dpsgd_epsilon,
    dpsgd_eta,
    dpsgd_logistic_regression,
    dpsgd_noise_for_eta,
    full_batch_gdp_mu,
    gdp_delta,
    gdp_epsilon,
    laplace_mechanism,
    laplace_scale_for_eta,
    median_gradient_norm_covariance,
)


def test_laplace_scale_and_mechanism():
    assert laplace_scale_for_eta(95263.5, 0.01) == pytest.approx(2.381e6, rel=1e-3)  # spec Fig 1 table
    x = laplace_mechanism(np.zeros(20000), 2.0, 0.5, random_state=0)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 1e-3
    with pytest.raises(InvalidParameterError, match="eps"):
        laplace_mechanism(0.0, 1.0, 0.0)


def test_gdp_formulas():
    # delta(eps) of mu-GDP, and the inverse
    assert gdp_delta(2.0, 2.0) == pytest.approx(stats.norm.cdf(0) - math.e**2 * stats.norm.cdf(-2), rel=1e-12)
    e = gdp_epsilon(1.0, 1e-5)
    assert gdp_delta(e, 1.0) <= 1e-5
    assert gdp_delta(e * (1 - 1e-6), 1.0) > 1e-5 * (1 - 1e-3)
    assert full_batch_gdp_mu(10.0, 100) == pytest.approx(2.0)
    assert full_batch_gdp_mu(10.0, 100, neighboring="add_remove") == pytest.approx(1.0)


def test_full_batch_epsilon_matches_dp_accounting_pld():
    import dp_accounting as dpa
    from dp_accounting import pld

    acc = pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(10.0), 100))
    assert dpsgd_epsilon(10.0, 100, 1e-5) == pytest.approx(acc.get_epsilon(1e-5), rel=1e-3)


def test_subsampled_epsilon_known_value():
    # Abadi et al. style setting under add/remove with the RDP accountant: q = 0.01, sigma = 4, T = 1000
    e_rdp = dpsgd_epsilon(4.0, 1000, 1e-5, sampling_rate=0.01, neighboring="add_remove", accountant="rdp")
    e_pld = dpsgd_epsilon(4.0, 1000, 1e-5, sampling_rate=0.01, neighboring="add_remove")
    assert e_pld <= e_rdp  # PLD is tighter than RDP
    assert e_pld == pytest.approx(e_rdp, rel=0.35)
    # replace-one costs more than add/remove
    assert dpsgd_epsilon(4.0, 1000, 1e-5, sampling_rate=0.01) > e_pld
    with pytest.raises(UnsupportedError, match="REPLACE_ONE"):
        dpsgd_epsilon(4.0, 10, 1e-5, accountant="rdp")


def test_noise_for_eta_spec_examples_and_safe_side():
    # spec 6.2: eta = 0.01, T = 100 -> sigma_mult ~ 399 (GDP) and ~ 1414 (Theorem 4, delta 1e-5)
    nm = dpsgd_noise_for_eta(0.01, 100, mapping="gdp")
    assert nm == pytest.approx(399, rel=2e-3)
    assert dpsgd_eta(nm, 100, mapping="gdp") <= 0.01
    nm2 = dpsgd_noise_for_eta(0.01, 100, mapping="paper")
    assert nm2 == pytest.approx(1414, rel=2e-3)
    assert dpsgd_eta(nm2, 100, mapping="paper") <= 0.01
    nm3 = dpsgd_noise_for_eta(0.2, 100, mapping="delta")
    assert dpsgd_eta(nm3, 100, mapping="delta") <= 0.2
    assert dpsgd_eta(nm3 * 0.99, 100, mapping="delta") > 0.2
    with pytest.raises(UnsupportedError):
        dpsgd_eta(1.0, 10, sampling_rate=0.5, mapping="gdp")


def test_clip_rows():
    G = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(clip_rows(G, 1.0), [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])


def test_dpsgd_covariance_without_noise_or_clipping_converges_to_S():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    S = X.T @ X / 500
    A = dpsgd_covariance(X, clip=1e9, noise_multiplier=0.0, steps=100, lr=0.1, random_state=0)
    np.testing.assert_allclose(A, S, atol=1e-8)
    C = median_gradient_norm_covariance(X)
    assert C > 0
    A2 = dpsgd_covariance(X, clip=C, noise_multiplier=1.0, steps=100, random_state=0)
    assert np.linalg.norm(A2 - S) > 1e-3  # clipping bias + noise


def test_dpsgd_logistic_regression_learns():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    th = dpsgd_logistic_regression(X, y, noise_multiplier=1.0, sampling_rate=0.05, steps=300, random_state=0)
    acc = np.mean(((np.c_[X, np.ones(2000)] @ th) > 0) == y)
    assert acc > 0.9


def test_dpsgd_covariance_noise_on_mean_adds_m_times_the_noise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    kw = dict(clip=2.0, steps=30, lr=0.1)
    # without noise the two placements are the same computation
    a = dpsgd_covariance(X, noise_multiplier=0.0, noise_on="sum", random_state=1, **kw)
    b = dpsgd_covariance(X, noise_multiplier=0.0, noise_on="mean", random_state=1, **kw)
    assert np.array_equal(a, b)
    # with noise, the same draws move the result about m times as far from the noise-free one (not exactly: a
    # moved A changes which gradients the clip cuts)
    move = {on: np.linalg.norm(dpsgd_covariance(X, noise_multiplier=1.0, noise_on=on, random_state=2, **kw) - a)
            for on in ("sum", "mean")}
    assert 0.5 * len(X) < move["mean"] / move["sum"] < 2 * len(X)
    with pytest.raises(InvalidParameterError, match="noise_on"):
        dpsgd_covariance(X, noise_multiplier=1.0, noise_on="batch", **kw)

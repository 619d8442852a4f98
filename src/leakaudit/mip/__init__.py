"""Membership inference privacy (Izzo, Yoon, Arik & Zou, "Provable Membership Inference Privacy").

Modules: :mod:`.conversions` (Theorem 4 and its inverse), :mod:`.calibrate` (a
conservative inverse of a monotone privacy function), :mod:`.noise` (Theorem 7 and
Corollary 11 constants, Corollary 8's noise, radius laws), :mod:`.mechanism`
(Algorithm 1), :mod:`.audit` (exact eta by enumeration, simulated
Bayes-optimal attacker), :mod:`.dp_baselines` (Laplace mechanism, DP-SGD with
accounting), :mod:`.examples` (the paper's constructions), :mod:`.results`.
"""

from .audit import (
    bayes_attack_games,
    enumerate_splits,
    exact_eta_discrete,
    exact_eta_laplace,
    laplace_mixture_l1,
    simulate_bayes_attacker,
)
from .conversions import eps_from_eta, eta_from_eps, eta_from_eps_delta, eta_from_gdp_mu, gdp_mu_from_eta
from .calibrate import ExplicitBracketInterval, LowerEndpointAndGuess, NoBracketIntervalFoundError, calibrate
from .mechanism import (
    LogisticRegressionTrainer,
    estimate_sigma,
    learner_train_many,
    mip_noise_addition,
    random_half,
)
from .noise import (
    GaussianMIPNoise,
    MIPNoise,
    cor11_bracket,
    mip_constant,
    mip_noise,
    sample_direction,
    sample_gennormal,
    sample_radius,
    thm7_eta_bound,
    weighted_norm,
)
from .results import AttackAudit, ExactAudit, MIPRelease, NoiseCalibration

__all__ = [
    "eta_from_eps", "eps_from_eta", "eta_from_eps_delta", "eta_from_gdp_mu", "gdp_mu_from_eta",
    "mip_constant", "cor11_bracket", "thm7_eta_bound", "sample_gennormal", "weighted_norm",
    "sample_direction", "sample_radius", "MIPNoise", "GaussianMIPNoise", "mip_noise",
    "calibrate", "ExplicitBracketInterval", "LowerEndpointAndGuess", "NoBracketIntervalFoundError",
    "random_half", "estimate_sigma", "mip_noise_addition", "learner_train_many", "LogisticRegressionTrainer",
    "enumerate_splits", "exact_eta_discrete", "laplace_mixture_l1", "exact_eta_laplace",
    "simulate_bayes_attacker", "bayes_attack_games",
    "MIPRelease", "ExactAudit", "AttackAudit", "NoiseCalibration",
]

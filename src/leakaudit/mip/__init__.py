"""Membership inference privacy (Izzo, Yoon, Arik & Zou, "Provable Membership Inference Privacy").

Modules: :mod:`.conversions` (Theorem 4 and its inverse), :mod:`.calibrate` (a
conservative inverse of a monotone privacy function), :mod:`.noise` (Theorem 7 and
Corollary 11 constants, Corollary 8's noise, radius laws), :mod:`.mechanism`
(Algorithm 1), :mod:`.audit` (exact eta by enumeration, simulated
Bayes-optimal attacker), :mod:`.dp_baselines` (Laplace mechanism, DP-SGD with
accounting), :mod:`.examples` (the paper's constructions), :mod:`.results`.
"""

from . import audit, conversions, results
from .audit import *  # noqa: F403
from .conversions import *  # noqa: F403
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
from .results import *  # noqa: F403

__all__ = [
    *conversions.__all__,
    "mip_constant", "cor11_bracket", "thm7_eta_bound", "sample_gennormal", "weighted_norm",
    "sample_direction", "sample_radius", "MIPNoise", "GaussianMIPNoise", "mip_noise",
    "calibrate", "ExplicitBracketInterval", "LowerEndpointAndGuess", "NoBracketIntervalFoundError",
    "random_half", "estimate_sigma", "mip_noise_addition", "learner_train_many", "LogisticRegressionTrainer",
    *audit.__all__, *results.__all__,
]

"""The per-step noise check of a white-box DP-SGD audit: each step's noise measured, then accounted.

A different kind of evidence from the one-run lower bound (:mod:`leakaudit.dpaudit.one_run`), reported apart
from it and never mixed into it. The one-run bound asks how well canaries can be told in from out; this check
measures the mechanism's noise itself. It needs the white-box threat model of the recipe's own accounting
(every intermediate model released) and canaries on parameters of the auditor's own (``directions="extra"``):
the canaries left out of training are coordinates that no example's gradient reaches, so each step's noisy
gradient sum along them is the step's noise alone, ``n`` independent draws of ``N(0, s_t^2)`` when the step adds
Gaussian noise of standard deviation ``s_t`` (``noise_multiplier * C`` in a correct step).

From the step's mean square ``v_t`` of those ``n`` draws, ``n v_t / s_t^2`` is chi-square with ``n`` degrees of
freedom, so ``s_t <= sqrt(n v_t / chi2.ppf(b, n))`` with probability ``1 - b``; with ``b = beta / T`` (a union bound
over the T steps) every step's bound holds at once with probability at least ``1 - beta``. Each bound, divided
by the clip norm C, is an upper bound on the step's noise multiplier. The privacy loss distribution of the
Poisson-subsampled Gaussian is tight for the worst-case pair of neighbouring data sets (a canary whose clipped
gradient C lies along a coordinate no other gradient reaches, exactly what the canaries are), and its epsilon
falls as any step's noise multiplier grows; so the epsilon of T steps at the bounded multipliers, from the
optimistic PLD (``pessimistic_estimate=False``: it under-states epsilon, the safe side for a lower bound), is a
lower bound on the implementation's epsilon at confidence ``1 - beta``, if its clipping holds (a clip norm above
C only raises epsilon) and its noise is Gaussian. Above the claimed epsilon: "the claim is violated: a step's
noise is below what the accounting assumes".

Soundness with a correct implementation: every bound is at least the true multiplier with probability at least
``1 - beta``, and then the epsilon is at most the accounted one (the optimistic PLD is below the pessimistic
one the claim is checked against), so the check raises a false alarm with probability at most beta.

Bounds are rounded up onto a grid (:data:`GRID_STEP`, relative), and those at or above the claimed multiplier to
the largest of them, so that steps share their PLDs (rounding a noise multiplier up lowers epsilon: the bound
stays a lower bound). A step with no noise at all (``v_t = 0``) has no
finite epsilon at a delta below its sampling rate: with probability q the canary's gradient is published as is.

References
----------
Abadi et al., "Deep Learning with Differential Privacy", CCS 2016 (the subsampled Gaussian steps).
Koskela, Jälkö & Honkela, "Computing Tight Differential Privacy Guarantees Using FFT", AISTATS 2020, and
Doroshenko et al., "Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions", PETS 2022
(the PLD accounting, optimistic and pessimistic estimates).
Nasr et al., "Tight Auditing of Differentially Private Machine Learning", USENIX Security 2023 (Dirac canaries in
the white-box threat model).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .._extras import require
from .._results import Result
from .._validation import check_scalar
from ..exceptions import InvalidInputError

__all__ = ["NoiseCheck", "noise_check"]

#: relative grid the per-step noise-multiplier bounds are rounded up onto (steps with equal bounds share a PLD)
GRID_STEP = 0.02
#: the optimistic PLD's discretisation of the privacy loss (coarser than the accountant's 1e-4: faster, and an
#: optimistic estimate only loses tightness, never validity)
PLD_INTERVAL = 1e-3


class NoiseCheck(Result):
    """Each step's noise, bounded from above, and the epsilon those bounds give (:func:`noise_check`).

    ``epsilon_lower_bound`` holds at ``confidence`` under the premises in the module docstring (infinite: a
    step without noise; None: not computed, see :func:`noise_check`); ``violated`` when it exceeds
    ``claimed_epsilon``. ``min_noise_ratio``: the smallest step's bound divided by the claimed
    noise multiplier (below 1: a step provably noised less than the recipe says), at step ``worst_step``.
    """

    claimed_epsilon: float
    delta: float
    confidence: float
    noise_multiplier: float
    sampling_rate: float
    steps: int
    n_coordinates: int
    epsilon_lower_bound: float | None
    min_noise_ratio: float
    worst_step: int
    median_noise_ratio: float
    violated: bool
    verdict: str


def _grid_up(z: float) -> float:
    """``z`` rounded up onto the relative grid ``(1 + GRID_STEP)^k``."""
    if z <= 0:
        return 0.0
    k = math.ceil(math.log(z) / math.log1p(GRID_STEP) - 1e-9)
    return float((1.0 + GRID_STEP) ** k)


def _optimistic_epsilon(multipliers: list[float], sampling_rate: float, delta: float) -> float:
    """Epsilon at ``delta`` of the Poisson-subsampled Gaussian steps (one a multiplier, add/remove), from the
    optimistic PLD (a lower bound on the mechanism's epsilon)."""
    NeighboringRelation = require("dp_accounting", "the DP noise check").NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    if min(multipliers) <= 0:
        return math.inf if sampling_rate > delta else 0.0
    total = None
    for z, count in sorted(Counter(multipliers).items()):
        one = pld.from_gaussian_mechanism(standard_deviation=z, sensitivity=1.0, pessimistic_estimate=False,
                                          use_connect_dots=False, sampling_prob=float(sampling_rate),
                                          value_discretization_interval=PLD_INTERVAL,
                                          neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
        part = one.self_compose(count) if count > 1 else one
        total = part if total is None else total.compose(part)
    return float(total.get_epsilon_for_delta(float(delta)))


def _one_step_epsilon(z: float, sampling_rate: float, delta: float) -> float:
    """A lower bound on epsilon at ``delta`` of one Poisson-subsampled Gaussian step of noise multiplier ``z``
    (sensitivity 1, add/remove), from the threshold tests ``x > tau``: an (epsilon, delta)-DP mechanism has
    ``P_in(x > tau) <= e^epsilon P_out(x > tau) + delta`` with ``P_out = N(0, z^2)`` and ``P_in = (1 - q) N(0, z^2) + q
    N(1, z^2)``, so ``log(P_in - delta) - log P_out`` bounds epsilon below at every tau; the largest over a grid of
    thresholds (in log space: a tiny z gives an astronomically small ``P_out``). No PLD is needed, whose
    discretisation grows with 1 / z."""
    from scipy.special import log_ndtr

    if z <= 0:
        return math.inf if sampling_rate > delta else 0.0
    q = float(sampling_rate)
    tau = np.concatenate([np.linspace(-2.0, 4.0, 3001), 1.0 + z * np.linspace(-12.0, 12.0, 1201)])
    log_out = log_ndtr(-tau / z)
    p_in = (1 - q) * np.exp(log_out) + q * np.exp(log_ndtr((1.0 - tau) / z))
    ok = p_in > delta
    if not ok.any():
        return 0.0
    return float(max(0.0, np.max(np.log(p_in[ok] - delta) - log_out[ok])))


def noise_check(mean_square, n: int, *, noise_multiplier: float, max_grad_norm: float, sampling_rate: float,
                claimed_epsilon: float, delta: float, beta: float = 0.05, epsilon: bool = True) -> NoiseCheck:
    """Bound each step's noise from the canaries left out, and the epsilon of the steps at those bounds.

    Parameters
    ----------
    mean_square : array-like of shape (T,)
        Per step, the mean square of the noisy gradient sum (not divided by the batch size) along the ``n``
        coordinates that no gradient reaches (the left-out canaries' parameters):
        ``bank.info["canary_noise"]["mean_square"][k]`` of :meth:`DPSGD.fit_many_with_canaries`.
    n : int
        Those coordinates' number (``bank.info["canary_noise"]["n"][k]``).
    noise_multiplier, max_grad_norm, sampling_rate : float
        The recipe's claimed sigma, clip norm C and Poisson rate q.
    claimed_epsilon, delta : float
    beta : float, default=0.05
        One minus the confidence (split over the T steps).
    epsilon : bool, default=True
        Compute the epsilon of all the steps even when no step's bound is below the claimed multiplier (it is
        then at most the accounted epsilon, so the check cannot reject; False leaves it None and saves the PLD
        composition, about a second).

    Returns
    -------
    NoiseCheck
    """
    from scipy.stats import chi2

    v = np.asarray(mean_square, dtype=np.float64)
    if v.ndim != 1 or v.size == 0 or not np.isfinite(v).all() or (v < 0).any():
        raise InvalidInputError(f"mean_square must be a non-empty 1-d array of finite values >= 0; got shape {v.shape}")
    check_scalar(n, name="n", kind=(int, np.integer), min_val=1)
    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0, include_min=False)
    check_scalar(max_grad_norm, name="max_grad_norm", min_val=0.0, include_min=False)
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_scalar(beta, name="beta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    T = int(v.size)
    # s_t <= sqrt(n v_t / chi2.ppf(beta / T, n)), every step at once with probability >= 1 - beta
    upper = np.sqrt(int(n) * v / chi2.ppf(float(beta) / T, int(n))) / float(max_grad_norm)
    ratio = upper / float(noise_multiplier)
    worst = int(np.argmin(ratio))
    levels = [_grid_up(float(z)) for z in upper]
    # the steps at or above the claimed multiplier all at the largest of their bounds (rounding up again: fewer
    # PLDs to compose, the bound stays a lower bound)
    top = max((z for z in levels if z >= noise_multiplier), default=None)
    levels = [top if z >= noise_multiplier else z for z in levels]
    # the worst step alone first: leaving steps out only lowers epsilon, so it is a lower bound too, and enough
    # when it already exceeds the claim (a step without noise, noise far too small)
    eps = _one_step_epsilon(levels[worst], float(sampling_rate), float(delta))
    if eps <= float(claimed_epsilon):
        if ratio[worst] >= 1 and not epsilon:
            eps = None  # no step below the claimed multiplier: at most the accounted epsilon, not computed
        else:
            eps = _optimistic_epsilon(levels, float(sampling_rate), float(delta))
    violated = eps is not None and bool(eps > float(claimed_epsilon))
    if violated:
        verdict = ("the claim is violated: a step's noise is below what the accounting assumes (step "
                   f"{worst}: noise multiplier at most {upper[worst]:.3g} against {noise_multiplier:.3g})")
    else:
        verdict = "consistent with the claim"
    return NoiseCheck(claimed_epsilon=float(claimed_epsilon), delta=float(delta), confidence=1.0 - float(beta),
                      noise_multiplier=float(noise_multiplier), sampling_rate=float(sampling_rate), steps=T,
                      n_coordinates=int(n), epsilon_lower_bound=eps, min_noise_ratio=float(ratio[worst]),
                      worst_step=worst, median_noise_ratio=float(np.median(ratio)), violated=violated,
                      verdict=verdict)

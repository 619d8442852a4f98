"""One-run auditing of an f-DP hypothesis (Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in One
Run", ICML 2025, arXiv 2410.22235).

Same game as :mod:`.one_run` (``m`` canaries, ``r`` guesses, ``v`` correct), but the null hypothesis is that the
mechanism is f-DP for a trade-off function ``f`` (Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022,
arXiv 1905.02383): no test of "canary in" against "canary out" has type II error below ``f(alpha)`` at type I error
``alpha``. The paper bounds the probability of ``v`` correct guesses out of ``r`` under f-DP by a recursion on two
masses (:func:`_rejects`); rejecting the hypothesis at every epsilon up to the returned value gives the lower bound.

Two families of curves are indexed by epsilon at the claimed delta:

``"epsdelta"``
    ``f_{eps,delta}``, the trade-off curve of (eps, delta)-DP itself. Every (eps, delta)-DP mechanism is
    ``f_{eps,delta}``-DP, so this bound is as general as Theorem 3.1 of Steinke et al. and needs no assumption on
    the mechanism; it is much tighter than Theorem 3.1 when delta matters (many canaries, or few right guesses that
    must carry a large epsilon).
``"gdp"``
    The Gaussian curve ``G_mu`` with mu = 1 / sigma for the sigma that makes the Gaussian mechanism exactly
    (eps, delta)-DP (dp-accounting's analytic Gaussian calibration). Tighter still, and **sound only for
    mechanisms whose privacy is Gaussian** (the Gaussian mechanism, DP-SGD): randomized response at epsilon 1 is
    (1, 0)-DP but is rejected above 1 by it.

:func:`privacy_profile_rejects` tests one given curve, the lower envelope of a mechanism's privacy profile
``delta(eps)`` (for DP-SGD the PLD accountant's, :func:`subsampled_gaussian_profile`): the test of a DP-SGD recipe's
own accounted guarantee.

The paper's proofs, its numbered equations and the authors' code were not available here; the recursion follows
the two public implementations of it (jax_privacy's ``auditing`` module, ``_epsilon_one_run_fdp``; Meta's
PrivacyGuard, ``FDPAnalysisNode.audit_rh_with_cap``), which both take the curve through its inverse blow-up
function and both instantiate it only for Gaussian DP. The curves here enter through the same function.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from scipy import special

from .._extras import require
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidParameterError
from .one_run import (
    GuessesBound,
    _check_counts,
    _check_delta_beta,
    _check_truth,
    _epsilon_lower_bound,
    count_correct,
    largest_rejected,
)

__all__ = [
    "FDP_CURVES",
    "FdpAudit",
    "GdpAudit",
    "fdp_audit",
    "fdp_epsilon_lower_bound",
    "fdp_rejects",
    "gdp_audit",
    "gdp_epsilon_lower_bound",
    "gdp_mu",
    "gdp_rejects",
    "privacy_profile_rejects",
    "subsampled_gaussian_profile",
    "tradeoff_eps_delta",
]

#: the curve families searched by epsilon (see the module docstring)
FDP_CURVES = ("epsdelta", "gdp")


class FdpAudit(GuessesBound):
    """The f-DP epsilon lower bound from one set of guesses, with Steinke et al.'s Theorem 3.1 bound beside it."""

    bound: str = "fdp"
    curve: str
    steinke_epsilon_lower_bound: float


class GdpAudit(GuessesBound):
    """The Gaussian-DP epsilon lower bound from one set of guesses, with Steinke et al.'s bound beside it."""

    bound: str = "gdp"
    mu_lower_bound: float
    steinke_epsilon_lower_bound: float


def tradeoff_eps_delta(alpha, epsilon: float, delta: float):
    """The trade-off function of (epsilon, delta)-DP at type I error ``alpha`` (array-like, in [0, 1]).

    ``f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))`` (Dong, Roth & Su 2022,
    Section 2, Eq. 5 of arXiv 1905.02383 as riskcal's ``get_beta_from_adp`` cites it: (eps, delta)-DP is exactly
    ``f_{eps,delta}``-DP).
    """
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0)
    a = np.asarray(alpha, dtype=np.float64)
    e = math.exp(float(epsilon))
    return np.maximum(0.0, np.maximum(1.0 - delta - e * a, (1.0 - delta - a) / e))


# The inverse blow-up function of a symmetric trade-off curve f is x -> f(1 - x): if an event has probability x
# with the canary in, it has probability at least f(1 - x) with the canary out (and by symmetry the other way).
# For G_mu this is Phi(Phi^-1(x) - mu), the function both reference implementations pass to the recursion.

@functools.lru_cache(maxsize=4096)
def _inv_blow_up_eps_delta(epsilon: float, delta: float) -> Callable[[float], float]:
    e = math.exp(epsilon)

    def inv(x: float) -> float:  # f_{eps,delta}(1 - x)
        return max(0.0, 1.0 - delta - e * (1.0 - x), (x - delta) / e)
    return inv


@functools.lru_cache(maxsize=4096)
def _mu(epsilon: float, delta: float) -> float:
    dp_accounting = require("dp_accounting", "the Gaussian-DP curve")

    if delta == 0:
        return 0.0  # no Gaussian mechanism is (eps, 0)-DP for finite eps
    sigma = dp_accounting.get_sigma_gaussian(epsilon, delta)
    return float("inf") if sigma == 0 else 1.0 / sigma


def _inv_blow_up_gdp(mu: float) -> Callable[[float], float]:
    if math.isinf(mu):
        return lambda x: 0.0  # G_inf(1 - x) = 0 below x = 1: the canary is revealed
    return lambda x: float(special.ndtr(special.ndtri(min(x, 1.0)) - mu))  # G_mu(1 - x)


def _inv_blow_up(curve: str, epsilon: float, delta: float) -> Callable[[float], float]:
    if curve == "epsdelta":
        return _inv_blow_up_eps_delta(epsilon, delta)
    return _inv_blow_up_gdp(_mu(epsilon, delta))


def _rejects(m: int, r: int, v: int, inv_blow_up: Callable[[float], float], beta: float) -> bool:
    # The recursion of Mahloujifar et al. for guesses with abstention (PrivacyGuard's audit_rh_with_cap,
    # jax_privacy's _epsilon_one_run_fdp): start from the masses r_mass = beta v / m (correct) and
    # h_mass = beta (r - v) / m (wrong); walking i = v-1, ..., 0, the wrong mass must be at least the inverse
    # blow-up of the correct mass, and each increase of h_mass drags r_mass up by i / (r - i) times as much. The
    # hypothesis is rejected when the masses that f-DP forces exceed the guessing rate r / m.
    if r == 0 or v == 0:
        return False
    r_mass = beta * v / m
    h_mass = beta * (r - v) / m
    for i in range(v - 1, -1, -1):
        h_floor = inv_blow_up(min(r_mass, 1.0))
        if h_floor <= h_mass:
            break  # neither mass moves again
        r_mass = min(r_mass + i / (r - i) * (h_floor - h_mass), 1.0)
        h_mass = h_floor
    return r_mass + h_mass > r / m


def subsampled_gaussian_profile(noise_multiplier: float, sampling_rate: float, steps: int,
                                epsilons=None) -> tuple[np.ndarray, np.ndarray]:
    """The privacy profile ``delta(eps)`` of DP-SGD's mechanism: ``steps`` Poisson-subsampled Gaussian steps.

    From dp-accounting's privacy loss distribution (add/remove one row, both directions, pessimistic
    discretisation, so every ``delta`` is an upper bound). Its f-DP curve (:func:`privacy_profile_rejects`) is the
    recipe's own accounted guarantee.

    Parameters
    ----------
    noise_multiplier : float > 0
    sampling_rate : float in (0, 1]
    steps : int >= 1
    epsilons : array-like, optional
        Where to evaluate the profile; default 0 to 30 in steps of 0.05.

    Returns
    -------
    epsilons, deltas : ndarray of shape (n_eps,)
    """
    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0, include_min=False)
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(steps, name="steps", kind=(int, np.integer), min_val=1)
    eps = np.linspace(0.0, 30.0, 601) if epsilons is None else np.asarray(epsilons, dtype=np.float64).ravel()
    return eps, _profile(float(noise_multiplier), float(sampling_rate), int(steps), tuple(eps.tolist()))


@functools.lru_cache(maxsize=64)
def _profile(noise_multiplier: float, q: float, steps: int, eps: tuple) -> np.ndarray:
    pld = require("dp_accounting.pld.privacy_loss_distribution", "the privacy profile of DP-SGD")

    dist = pld.from_gaussian_mechanism(noise_multiplier, sampling_prob=q, value_discretization_interval=1e-3)
    deltas = np.asarray(dist.self_compose(steps).get_delta_for_epsilon(list(eps)), dtype=np.float64)
    # dp_accounting's sums can round a delta that is 0 to about -1e-15 at large epsilon (q = 0.01, 500 steps); a
    # delta is a probability, and raising it to 0 keeps it an upper bound
    deltas = np.clip(deltas, 0.0, 1.0)
    deltas.setflags(write=False)
    return deltas


def privacy_profile_rejects(m: int, r: int, v: int, *, epsilons, deltas, beta: float = 0.05) -> bool:
    """Whether ``v`` correct guesses out of ``r`` reject "(eps_j, delta_j)-DP for every j" at confidence ``1 - beta``.

    A mechanism with that privacy profile is f-DP for ``f = max_j f_{eps_j, delta_j}`` (Dong, Roth & Su 2022,
    Section 2: the curve of a privacy profile); this is the f-DP analysis of Mahloujifar et al. with that curve. For
    DP-SGD (:func:`subsampled_gaussian_profile`) it tests the recipe's accounted guarantee as a whole, which is
    tighter than any single (epsilon, delta) of it. Any finite set of pairs gives a valid (weaker) curve.
    """
    _check_counts(m, r, v)
    check_scalar(beta, name="beta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    e = np.asarray(epsilons, dtype=np.float64).ravel()
    d = np.asarray(deltas, dtype=np.float64).ravel()
    if e.size == 0 or e.shape != d.shape or np.any(e < 0) or np.any((d < 0) | (d > 1)) or not np.all(np.isfinite(e)):
        raise InvalidParameterError("epsilons and deltas must be equal-length, non-empty, with epsilons >= 0 finite "
                                    f"and deltas in [0, 1]; got shapes {e.shape} and {d.shape}")
    up, down, one_minus_d = np.exp(e), np.exp(-e), 1.0 - d

    def inv(x: float) -> float:  # max_j f_{eps_j,delta_j}(1 - x)
        return max(0.0, float(np.max(np.maximum(one_minus_d - up * (1.0 - x), down * (x - d)))))

    return _rejects(int(m), int(r), int(v), inv, float(beta))


def fdp_rejects(m: int, r: int, v: int, *, epsilon: float, delta: float, beta: float = 0.05,
                curve: str = "epsdelta") -> bool:
    """Whether ``v`` correct guesses out of ``r`` reject "the mechanism is f-DP" at confidence ``1 - beta``, for
    the curve ``f`` of (epsilon, delta) in the family ``curve`` (``"epsdelta"`` or ``"gdp"``)."""
    _check_counts(m, r, v)
    _check_delta_beta(delta, beta)
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    check_choice(curve, name="curve", choices=FDP_CURVES)
    if curve == "gdp" and delta == 0:
        raise InvalidParameterError("delta must be positive for the Gaussian-DP curve (no Gaussian mechanism is "
                                    "(epsilon, 0)-DP); got 0")
    return _rejects(int(m), int(r), int(v), _inv_blow_up(curve, float(epsilon), float(delta)), float(beta))


def _fdp_epsilon_lower_bound(m: int, r: int, v: int, delta: float, beta: float, curve: str = "epsdelta") -> float:
    # Both families weaken as epsilon grows (f_{eps,delta} and G_mu(eps) fall pointwise), so a rejected epsilon
    # rejects every smaller one and any rejected epsilon is a valid bound; the search finds the boundary.
    if curve == "gdp" and delta == 0:
        raise InvalidParameterError("delta must be positive for the Gaussian-DP bound (no Gaussian mechanism is "
                                    "(epsilon, 0)-DP); got 0")
    if r == 0 or v == 0:
        return 0.0
    return largest_rejected(lambda eps: _rejects(m, r, v, _inv_blow_up(curve, eps, delta), beta), tol=1e-6)


def fdp_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float, beta: float = 0.05,
                            curve: str = "epsdelta") -> float:
    """The largest epsilon whose f-DP hypothesis ``v`` correct guesses out of ``r`` reject at ``1 - beta``.

    Parameters
    ----------
    m, r, v : int
        Canaries, guesses and correct guesses (``v <= r <= m``).
    delta : float
        The claimed delta, in [0, 1) (in (0, 1) for ``curve="gdp"``).
    beta : float, default=0.05
        One minus the confidence, in (0, 1).
    curve : {"epsdelta", "gdp"}, default="epsdelta"
        ``"epsdelta"``: the (epsilon, delta)-DP curve, valid for every mechanism; ``"gdp"``: the Gaussian curve of
        the same (epsilon, delta), valid only for mechanisms whose privacy is Gaussian.

    Returns
    -------
    float
        The lower bound (0.0 when not even epsilon = 0 is rejected).
    """
    _check_counts(m, r, v)
    _check_delta_beta(delta, beta)
    check_choice(curve, name="curve", choices=FDP_CURVES)
    return _fdp_epsilon_lower_bound(int(m), int(r), int(v), float(delta), float(beta), curve)


def fdp_audit(S, T, *, delta: float, beta: float = 0.05, curve: str = "epsdelta") -> FdpAudit:
    """Both lower bounds, f-DP and Steinke et al.'s Theorem 3.1, on the same guesses ``T`` for truth ``S``."""
    _check_delta_beta(delta, beta)
    check_choice(curve, name="curve", choices=FDP_CURVES)
    s = _check_truth(S)
    r, v = count_correct(s, T)
    m = int(s.shape[0])
    return FdpAudit(curve=curve, m=m, r=r, v=v, delta=float(delta), beta=float(beta),
                    epsilon_lower_bound=_fdp_epsilon_lower_bound(m, r, v, float(delta), float(beta), curve),
                    steinke_epsilon_lower_bound=_epsilon_lower_bound(m, r, v, float(delta), float(beta)))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP (mu = sensitivity / sigma)."""
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_max=False)
    return _mu(float(epsilon), float(delta))


def gdp_rejects(m: int, r: int, v: int, *, epsilon: float, delta: float, beta: float = 0.05) -> bool:
    """Whether ``v`` correct guesses out of ``r`` reject "mu(epsilon, delta)-GDP" at confidence ``1 - beta``."""
    _check_counts(m, r, v)
    _check_delta_beta(delta, beta)
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    return _rejects(int(m), int(r), int(v), _inv_blow_up_gdp(_mu(float(epsilon), float(delta))), float(beta))


def gdp_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float, beta: float = 0.05) -> float:
    """The largest epsilon whose Gaussian-DP hypothesis ``v`` correct guesses out of ``r`` reject
    (:func:`fdp_epsilon_lower_bound` with ``curve="gdp"``; ``delta`` must be positive)."""
    return fdp_epsilon_lower_bound(m, r, v, delta=delta, beta=beta, curve="gdp")


def gdp_audit(S, T, *, delta: float, beta: float = 0.05) -> GdpAudit:
    """Both lower bounds, Gaussian-DP and Steinke et al.'s Theorem 3.1, on the same guesses ``T`` for truth ``S``."""
    _check_delta_beta(delta, beta)
    s = _check_truth(S)
    r, v = count_correct(s, T)
    m = int(s.shape[0])
    eps = _fdp_epsilon_lower_bound(m, r, v, float(delta), float(beta), "gdp")
    return GdpAudit(m=m, r=r, v=v, delta=float(delta), beta=float(beta), epsilon_lower_bound=eps,
                    mu_lower_bound=_mu(eps, float(delta)),
                    steinke_epsilon_lower_bound=_epsilon_lower_bound(m, r, v, float(delta), float(beta)))

"""One-run auditing with a Gaussian-DP hypothesis (Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential
Privacy in One Run", ICML 2025).

Same game as :mod:`.one_run` (``m`` canaries, ``r`` guesses, ``v`` correct), but the null hypothesis is that the
mechanism is mu-GDP: its trade-off curve is that of a Gaussian mechanism, with mu = 1 / sigma for the sigma that
makes the Gaussian mechanism exactly (epsilon, delta)-DP (the analytic Gaussian mechanism, via dp-accounting).
Rejecting that hypothesis for every epsilon up to the returned value gives the lower bound. This is tighter than
Theorem 3.1 of Steinke et al. for mechanisms whose privacy is Gaussian (the Gaussian mechanism, DP-SGD), and it is
only sound for those: a mechanism that is (epsilon, delta)-DP but not mu-GDP at that epsilon (randomized response,
say) can be rejected at its true epsilon.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

from .._results import Result
from .._validation import check_scalar
from ..exceptions import InvalidParameterError
from .one_run import (
    _check_counts,
    _check_delta_beta,
    _check_truth,
    _epsilon_lower_bound,
    count_correct,
    largest_rejected,
)

__all__ = ["GdpAudit", "gdp_audit", "gdp_epsilon_lower_bound", "gdp_mu", "gdp_rejects"]


class GdpAudit(Result):
    """The Gaussian-DP epsilon lower bound from one set of guesses, with Steinke et al.'s bound beside it."""

    bound: str = "gdp"
    m: int
    r: int
    v: int
    delta: float
    beta: float
    epsilon_lower_bound: float
    mu_lower_bound: float
    steinke_epsilon_lower_bound: float


@functools.lru_cache(maxsize=4096)
def _mu(epsilon: float, delta: float) -> float:
    import dp_accounting

    if delta == 0:
        return 0.0  # no Gaussian mechanism is (eps, 0)-DP for finite eps
    sigma = dp_accounting.get_sigma_gaussian(epsilon, delta)
    return float("inf") if sigma == 0 else 1.0 / sigma


def gdp_mu(epsilon: float, delta: float) -> float:
    """The mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP (mu = sensitivity / sigma)."""
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_max=False)
    return _mu(float(epsilon), float(delta))


def _rejects(m: int, r: int, v: int, mu: float, beta: float) -> bool:
    # The recursion of Mahloujifar et al. for guesses with abstention (their bound on the probability of v correct
    # guesses out of r under an f-DP mechanism, f the mu-GDP trade-off curve; jax_privacy's auditing module runs the
    # same recursion): start from the masses r_mass = beta v / m (correct) and h_mass = beta (r - v) / m (wrong);
    # walking i = v-1, ..., 0, the wrong mass must be at least the inverse blow-up of the correct mass,
    # Phi(Phi^-1(r_mass) - mu), and each increase of h_mass drags r_mass up by i / (r - i) times as much. The
    # hypothesis is rejected when the masses that f-DP forces exceed the guessing rate r / m.
    if r == 0:
        return False
    r_mass = beta * v / m
    h_mass = beta * (r - v) / m
    for i in range(v - 1, -1, -1):
        if np.isinf(mu):
            h_floor = 0.0
        else:
            h_floor = float(special.ndtr(special.ndtri(min(r_mass, 1.0)) - mu))
        if h_floor <= h_mass:
            break  # neither mass moves again
        r_mass = min(r_mass + i / (r - i) * (h_floor - h_mass), 1.0)
        h_mass = h_floor
    return r_mass + h_mass > r / m


def gdp_rejects(m: int, r: int, v: int, *, epsilon: float, delta: float, beta: float = 0.05) -> bool:
    """Whether ``v`` correct guesses out of ``r`` reject "mu(epsilon, delta)-GDP" at confidence ``1 - beta``."""
    _check_counts(m, r, v)
    _check_delta_beta(delta, beta)
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    return _rejects(int(m), int(r), int(v), _mu(float(epsilon), float(delta)), float(beta))


def _gdp_epsilon_lower_bound(m: int, r: int, v: int, delta: float, beta: float) -> float:
    # mu-GDP for a smaller mu implies it for a larger one, so a rejected epsilon rejects every smaller one and any
    # rejected epsilon is a valid bound; the search finds the boundary.
    if delta == 0:
        raise InvalidParameterError("delta must be positive for the Gaussian-DP bound (no Gaussian mechanism is "
                                    "(epsilon, 0)-DP); got 0")
    return largest_rejected(lambda eps: _rejects(m, r, v, _mu(eps, delta), beta), tol=1e-6)


def gdp_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float, beta: float = 0.05) -> float:
    """The largest epsilon whose Gaussian-DP hypothesis ``v`` correct guesses out of ``r`` reject.

    Parameters
    ----------
    m, r, v : int
        Canaries, guesses and correct guesses (``v <= r <= m``).
    delta : float
        The claimed delta, in (0, 1).
    beta : float, default=0.05
        One minus the confidence, in (0, 1).
    """
    _check_counts(m, r, v)
    _check_delta_beta(delta, beta)
    return _gdp_epsilon_lower_bound(int(m), int(r), int(v), float(delta), float(beta))


def gdp_audit(S, T, *, delta: float, beta: float = 0.05) -> GdpAudit:
    """Both lower bounds, Gaussian-DP and Steinke et al.'s Theorem 3.1, on the same guesses ``T`` for truth ``S``."""
    _check_delta_beta(delta, beta)
    s = _check_truth(S)
    r, v = count_correct(s, T)
    m = int(s.shape[0])
    eps = _gdp_epsilon_lower_bound(m, r, v, float(delta), float(beta))
    return GdpAudit(m=m, r=r, v=v, delta=float(delta), beta=float(beta), epsilon_lower_bound=eps,
                    mu_lower_bound=_mu(eps, float(delta)),
                    steinke_epsilon_lower_bound=_epsilon_lower_bound(m, r, v, float(delta), float(beta)))

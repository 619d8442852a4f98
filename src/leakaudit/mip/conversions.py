"""Conversions between eta-MIP and eps-DP (Izzo et al., Theorem 4 and its inverse).

Membership inference privacy (MIP, Izzo, Yoon, Arik & Zou, "Provable Membership
Inference Privacy", Definition 1) bounds the accuracy of every membership attacker
by ``1/2 + eta`` when the training set is a uniformly random half of the data set.
Theorem 4: an eps-DP algorithm is eta-MIP with ``eta = 1/(1 + e^-eps) - 1/2``, and
this is tight. The (eps, delta) and Gaussian-DP forms below are derived in the
spec (section 3, "Theorem 4 [derived]") from the total-variation form of Prop 2.
"""

from __future__ import annotations

import math
import numbers

from scipy import special, stats

from .._validation import check_scalar

__all__ = [
    "eta_from_eps",
    "eps_from_eta",
    "eta_from_eps_delta",
    "eta_from_gdp_mu",
    "gdp_mu_from_eta",
]


def eta_from_eps(eps: float) -> float:
    """MIP level implied by eps-DP (Theorem 4): ``eta = 1/(1 + e^-eps) - 1/2 = tanh(eps/2)/2``.

    Parameters
    ----------
    eps : float
        The DP budget, ``eps >= 0`` (``inf`` gives 1/2: no privacy).

    Returns
    -------
    eta : float in [0, 1/2]

    Examples
    --------
    >>> round(eta_from_eps(1.0), 5)
    0.23106
    """
    if isinstance(eps, numbers.Real) and eps == math.inf:  # (a number: an array has no one truth value)
        return 0.5
    check_scalar(eps, name="eps", min_val=0.0)
    # Theorem 4: eta = 1/(1+exp(-eps)) - 1/2, written as tanh(eps/2)/2 (no cancellation at small eps)
    return 0.5 * math.tanh(0.5 * float(eps))


def eps_from_eta(eta: float) -> float:
    """The inverse of Theorem 4: ``eps = log((1 + 2 eta)/(1 - 2 eta))`` for eta in [0, 1/2).

    This is the smallest eps whose Theorem-4 guarantee is eta-MIP; it is the eps
    a DP mechanism must meet to certify ``eta`` through Theorem 4.

    Examples
    --------
    >>> round(eps_from_eta(0.1), 5)
    0.40547
    """
    check_scalar(eta, name="eta", min_val=0.0, max_val=0.5, include_max=False)
    # inverse of eta = tanh(eps/2)/2  ->  eps = 2 artanh(2 eta) = log((1+2eta)/(1-2eta))
    return 2.0 * math.atanh(2.0 * float(eta))


def eta_from_eps_delta(eps: float, delta: float) -> float:
    """Tight MIP level of an (eps, delta)-DP algorithm (spec, Theorem 4 [derived]).

    ``eta = (e^eps - 1 + 2 delta) / (2 (e^eps + 1)) = 1/(1+e^-eps) - 1/2 + delta/(1+e^eps)``,
    from the Lemma 10 bijection, joint convexity of total variation and the
    (eps, delta) bound ``TV <= (e^eps - 1 + 2 delta)/(e^eps + 1)``. Capped at 1/2.
    """
    check_scalar(eps, name="eps", min_val=0.0)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0)
    eps = float(eps)
    return min(0.5, eta_from_eps(eps) + float(delta) * math.exp(-eps) / (1.0 + math.exp(-eps)))


def eta_from_gdp_mu(mu: float) -> float:
    """MIP level of a mu-GDP algorithm: ``eta = Phi(mu/2) - 1/2`` (spec, Theorem 4 [derived]).

    ``TV(N(0,1), N(mu,1)) = 2 Phi(mu/2) - 1`` and the Lemma 10 bijection give the bound.
    """
    check_scalar(mu, name="mu", min_val=0.0)
    # Phi(mu/2) - 1/2 = erf(mu / (2 sqrt 2)) / 2, computed without cancellation
    return 0.5 * float(special.erf(float(mu) / (2.0 * math.sqrt(2.0))))


def gdp_mu_from_eta(eta: float) -> float:
    """Largest mu whose mu-GDP guarantee is eta-MIP: ``mu = 2 Phi^-1(1/2 + eta)``."""
    check_scalar(eta, name="eta", min_val=0.0, max_val=0.5, include_max=False)
    return 2.0 * float(stats.norm.isf(0.5 - float(eta)))  # isf keeps precision as eta -> 1/2

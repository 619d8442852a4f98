"""DP baselines for the MIP comparisons: the Laplace mechanism and DP-SGD with accounting.

* Laplace mechanism (Dwork et al. 2006): add ``Laplace(Delta/eps)`` per coordinate for L1
  sensitivity ``Delta``; through Theorem 4 (Izzo et al.) it is eta-MIP with
  ``eps = log((1+2 eta)/(1-2 eta))``.
* DP-SGD (Abadi et al. 2016): per-example clipping to norm ``C``, Gaussian noise of
  standard deviation ``noise_multiplier * C`` on the clipped sum.

Accounting uses Google's ``dp_accounting`` (PLD accountant). MIP's adjacency is
replace-one (same-size data sets differing in one record), under which the clipped
sum has L2 sensitivity ``2C``. ``dp_accounting``'s PLD accountant with
``NeighboringRelation.REPLACE_ONE`` accounts for that; its RDP accountant silently
treats a ``GaussianDpEvent`` as sensitivity ``C`` under ``REPLACE_ONE`` (checked with
dp-accounting 0.6.0), so we refuse ``accountant="rdp"`` with replace-one.

Full-batch DP-SGD with T steps is exactly ``mu``-GDP with
``mu = sqrt(T) * sensitivity / (noise_multiplier * C)`` (Dong, Roth & Su 2022, Cor. 3.3),
and eta = Phi(mu/2) - 1/2 (spec 6.2, option 3).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._extras import require
from .._random import RandomStateLike, check_random_state
from .._validation import check_array, check_choice, check_scalar
from ..exceptions import InvalidInputError, UnsupportedError
from .conversions import eps_from_eta, eta_from_eps, eta_from_eps_delta, eta_from_gdp_mu
from .calibrate import ExplicitBracketInterval, LowerEndpointAndGuess, NoBracketIntervalFoundError, calibrate

__all__ = [
    "laplace_scale_for_eta",
    "laplace_mechanism",
    "gdp_delta",
    "gdp_epsilon",
    "full_batch_gdp_mu",
    "dpsgd_epsilon",
    "dpsgd_eta",
    "dpsgd_noise_for_eta",
    "clip_rows",
    "dpsgd_covariance",
    "median_gradient_norm_covariance",
    "dpsgd_logistic_regression",
    "ETA_MAPPINGS",
]

ETA_MAPPINGS = ("paper", "delta", "gdp")
NEIGHBORING = ("replace", "add_remove")


def laplace_scale_for_eta(sensitivity: float, eta: float) -> float:
    """Laplace scale ``b = Delta / eps(eta)`` making the Laplace mechanism eta-MIP via Theorem 4."""
    check_scalar(sensitivity, name="sensitivity", min_val=0.0)
    return float(sensitivity) / eps_from_eta(eta)


def laplace_mechanism(value, sensitivity: float, eps: float, random_state: RandomStateLike = None) -> np.ndarray:
    """``value + Laplace(sensitivity/eps)`` per coordinate; eps-DP for L1 sensitivity ``sensitivity``.

    Parameters
    ----------
    value : float or array-like of shape (d,)
    sensitivity : float >= 0
    eps : float > 0
    random_state : None, int or Generator

    Returns
    -------
    noisy : ndarray of the shape of ``value``
    """
    v = check_array(value, name="value", ndim=(0, 1))
    check_scalar(sensitivity, name="sensitivity", min_val=0.0)
    check_scalar(eps, name="eps", min_val=0.0, include_min=False)
    rng = check_random_state(random_state)
    return v + rng.laplace(0.0, float(sensitivity) / float(eps), size=v.shape)


def gdp_delta(eps: float, mu: float) -> float:
    """delta(eps) of mu-GDP: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (Dong et al., Cor. 2.13)."""
    check_scalar(mu, name="mu", min_val=0.0, include_min=False)
    e, m = float(eps), float(mu)
    # log-space second term: e^eps Phi(-eps/mu - mu/2)
    return float(special.ndtr(-e / m + m / 2) - math.exp(e + special.log_ndtr(-e / m - m / 2)))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest eps with ``gdp_delta(eps, mu) <= delta`` (calibrated on the safe side)."""
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    return calibrate(lambda e: gdp_delta(e, mu), float(delta), bracket=LowerEndpointAndGuess(0.0, 1.0),
                     increasing=False)


def full_batch_gdp_mu(noise_multiplier: float, steps: int, *, neighboring: str = "replace") -> float:
    """mu of T full-batch DP-SGD steps: ``sqrt(T) * s / noise_multiplier``, s = 2 (replace-one) or 1."""
    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0, include_min=False)
    check_scalar(steps, name="steps", kind=(int, np.integer), min_val=1)
    check_choice(neighboring, name="neighboring", choices=NEIGHBORING)
    s = 2.0 if neighboring == "replace" else 1.0
    return math.sqrt(int(steps)) * s / float(noise_multiplier)


def dpsgd_epsilon(
    noise_multiplier: float,
    steps: int,
    delta: float,
    *,
    sampling_rate: float = 1.0,
    neighboring: str = "replace",
    accountant: str = "pld",
) -> float:
    """eps of DP-SGD (Poisson sampling rate q, T steps) at ``delta``, from dp_accounting.

    Parameters
    ----------
    noise_multiplier : float > 0
    steps : int >= 1
    delta : float in (0, 1)
    sampling_rate : float in (0, 1], default=1 (full batch)
    neighboring : {"replace", "add_remove"}, default="replace"
        "replace" is MIP's adjacency (same-size data sets).
    accountant : {"pld", "rdp"}, default="pld"
        "rdp" only with ``neighboring="add_remove"`` (see module docstring).
    """
    dpa = require("dp_accounting", "DP-SGD's privacy accounting")
    from dp_accounting import pld, rdp

    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0, include_min=False)
    check_scalar(steps, name="steps", kind=(int, np.integer), min_val=1)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    check_choice(neighboring, name="neighboring", choices=NEIGHBORING)
    check_choice(accountant, name="accountant", choices=("pld", "rdp"))
    if sampling_rate == 1.0 and accountant == "pld":
        # full batch: T Gaussian steps are exactly mu-GDP, so eps(delta) is exact in closed form
        # (dp_accounting's PLD gives the same up to its pessimistic discretisation; tested)
        return gdp_epsilon(full_batch_gdp_mu(noise_multiplier, steps, neighboring=neighboring), delta)
    rel = dpa.NeighboringRelation.REPLACE_ONE if neighboring == "replace" else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
    gauss = dpa.GaussianDpEvent(float(noise_multiplier))
    inner = gauss if sampling_rate == 1.0 else dpa.PoissonSampledDpEvent(float(sampling_rate), gauss)
    event = dpa.SelfComposedDpEvent(inner, int(steps))
    if accountant == "rdp":
        if neighboring == "replace":
            raise UnsupportedError(
                "dp_accounting's RDP accountant ignores REPLACE_ONE for Gaussian events (it assumes sensitivity C); "
                "use accountant='pld' for replace-one adjacency"
            )
        acc = rdp.RdpAccountant(neighboring_relation=rel)
    else:
        # discretisation 1e-4 of the privacy loss: dp_accounting's default (pessimistic rounding)
        acc = pld.PLDAccountant(neighboring_relation=rel)
    acc.compose(event)
    return float(acc.get_epsilon(float(delta)))


def dpsgd_eta(
    noise_multiplier: float,
    steps: int,
    *,
    sampling_rate: float = 1.0,
    delta: float = 1e-5,
    mapping: str = "delta",
    neighboring: str = "replace",
) -> float:
    """The eta certified for DP-SGD, by one of the spec's three mappings (spec 6.2).

    ``"paper"``: Theorem 4 on eps, ignoring delta (the paper's Figure 2). ``"delta"``:
    the rigorous ``eta_from_eps_delta``. ``"gdp"``: exact ``Phi(mu/2) - 1/2`` (full batch only).
    """
    check_choice(mapping, name="mapping", choices=ETA_MAPPINGS)
    if mapping == "gdp":
        if sampling_rate != 1.0:
            raise UnsupportedError("mapping='gdp' is exact only for full-batch DP-SGD (sampling_rate=1)")
        return eta_from_gdp_mu(full_batch_gdp_mu(noise_multiplier, steps, neighboring=neighboring))
    eps = dpsgd_epsilon(noise_multiplier, steps, delta, sampling_rate=sampling_rate, neighboring=neighboring)
    return eta_from_eps(eps) if mapping == "paper" else eta_from_eps_delta(eps, delta)


def dpsgd_noise_for_eta(
    eta: float,
    steps: int,
    *,
    sampling_rate: float = 1.0,
    delta: float = 1e-5,
    mapping: str = "delta",
    neighboring: str = "replace",
) -> float:
    """Smallest noise multiplier whose DP-SGD guarantee is eta-MIP under ``mapping`` (calibrated safely).

    Example (spec 6.2): eta = 0.01, T = 100, full batch, ``mapping="gdp"`` gives about 399.
    """
    check_scalar(eta, name="eta", min_val=0.0, max_val=0.5, include_min=False, include_max=False)
    if mapping == "gdp" and sampling_rate == 1.0:
        from .conversions import gdp_mu_from_eta

        # closed form mu = 2 Phi^-1(1/2 + eta), then sigma = sqrt(T) s / mu (full_batch_gdp_mu's map); checked below
        nm = full_batch_gdp_mu(gdp_mu_from_eta(eta), steps, neighboring=neighboring)
        while dpsgd_eta(nm, steps, mapping="gdp", neighboring=neighboring) > eta:
            nm = math.nextafter(nm, math.inf)
        return nm

    def f(log_nm: float) -> float:
        return dpsgd_eta(math.exp(log_nm), steps, sampling_rate=sampling_rate, delta=delta, mapping=mapping,
                         neighboring=neighboring)

    # bracket from a guess of 2, moving towards cheap (large) noise first; small noise
    # multipliers make the PLD accountant slow and memory-hungry, so stop at 0.3
    lo, hi = math.log(2.0), math.log(2.0)
    if f(hi) > eta:
        while f(hi) > eta:
            lo, hi = hi, hi + math.log(2.0)
            if hi > math.log(1e6):
                raise NoBracketIntervalFoundError(f"no noise multiplier up to 1e6 reaches eta={eta}")
    else:
        while f(lo) <= eta:
            hi, lo = lo, lo - math.log(2.0)
            if lo < math.log(0.3):
                return math.exp(hi)
    return math.exp(calibrate(f, eta, bracket=ExplicitBracketInterval(lo, hi), increasing=False, rtol=1e-6,
                              xtol=1e-6))


def clip_rows(G: np.ndarray, clip: float) -> np.ndarray:
    """Scale each row of ``G`` (shape (m, p)) to L2 norm at most ``clip``."""
    norms = np.linalg.norm(G, axis=1)
    return G * np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]


def median_gradient_norm_covariance(X, *, steps: int = 100, lr: float = 0.1) -> float:
    """Median of unclipped per-example gradient norms over a non-private GD run (Section 5.2).

    Objective ``||A - (1/m) sum x x^T||_F^2``; per-example gradient ``2 (A - x x^T)``.
    Not private itself (the spec notes this leakage; the paper does the same).
    """
    X = check_array(X, name="X", ndim=2)
    d = X.shape[1]
    outer = (X[:, :, None] * X[:, None, :]).reshape(len(X), d * d)
    S = outer.mean(axis=0)
    A = np.zeros(d * d)
    norms = []
    for _ in range(int(steps)):
        norms.append(2.0 * np.linalg.norm(A - outer, axis=1))
        A = A - lr * 2.0 * (A - S)
    return float(np.median(np.concatenate(norms)))


def dpsgd_covariance(
    X,
    *,
    clip: float,
    noise_multiplier: float,
    steps: int = 100,
    lr: float = 0.1,
    noise_on: str = "sum",
    random_state: RandomStateLike = None,
) -> np.ndarray:
    """Full-batch DP-SGD on ``min_A ||A - (1/m) sum x x^T||_F^2`` (Section 5.2's DP baseline).

    Each step: per-example gradients ``2 (A - x x^T)`` clipped to ``clip``, summed, plus
    ``N(0, (noise_multiplier * clip)^2 I)``, divided by m; ``A <- A - lr * g``. Starts at 0.

    Parameters
    ----------
    noise_on : {"sum", "mean"}, default="sum"
        Where the noise is added: to the clipped sum before dividing by m (Abadi et al.; what the accounting
        assumes), or to the mean gradient after it ("mean": m times the noise the privacy needs, as an
        implementation that does not divide the noise by the batch size adds; for reproducing such a curve).

    Returns
    -------
    A : ndarray of shape (d, d)
    """
    X = check_array(X, name="X", ndim=2)
    check_scalar(clip, name="clip", min_val=0.0, include_min=False)
    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0)
    check_choice(noise_on, name="noise_on", choices=("sum", "mean"))
    rng = check_random_state(random_state)
    m, d = X.shape
    outer = (X[:, :, None] * X[:, None, :]).reshape(m, d * d)
    A = np.zeros(d * d)
    scale = 1.0 if noise_on == "sum" else float(m)
    for _ in range(int(steps)):
        g = clip_rows(2.0 * (A - outer), clip).sum(axis=0)
        g = g + rng.normal(0.0, noise_multiplier * clip * scale, size=d * d)
        A = A - lr * g / m
    return A.reshape(d, d)


def dpsgd_logistic_regression(
    X,
    y,
    *,
    clip: float = 1.0,
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    lr: float = 0.5,
    alpha: float = 1e-3,
    random_state: RandomStateLike = None,
) -> np.ndarray:
    """DP-SGD for L2-regularised logistic regression with Poisson sampling (Abadi et al. 2016).

    Each step samples every row with probability ``sampling_rate``, clips each
    per-example gradient of the log-loss (w.r.t. ``[w, b]``) to ``clip``, adds
    ``N(0, (noise_multiplier * clip)^2 I)`` to the sum, divides by the expected batch
    size ``q m``, adds the (data-independent) L2 term and steps. The privacy of the
    output is :func:`dpsgd_epsilon` with the same ``noise_multiplier``, ``steps`` and
    ``sampling_rate``.

    Returns
    -------
    theta : ndarray of shape (p + 1,) -- weights then intercept.
    """
    X = check_array(X, name="X", ndim=2)
    y = np.asarray(y, dtype=float)
    if y.shape != (X.shape[0],):
        raise InvalidInputError(f"y must have one entry per row of X ({X.shape[0]}); got shape {y.shape}")
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0)
    rng = check_random_state(random_state)
    m, p = X.shape
    Xb = np.column_stack([X, np.ones(m)])
    theta = np.zeros(p + 1)
    expected = sampling_rate * m
    for _ in range(int(steps)):
        idx = np.flatnonzero(rng.random(m) < sampling_rate)
        r = special.expit(Xb[idx] @ theta) - y[idx]
        g = clip_rows(r[:, None] * Xb[idx], clip).sum(axis=0)
        g = g + rng.normal(0.0, noise_multiplier * clip, size=p + 1)
        reg = np.r_[alpha * theta[:p], 0.0]
        theta = theta - lr * (g / expected + reg)
    return theta

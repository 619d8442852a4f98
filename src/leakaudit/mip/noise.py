"""Noise for membership inference privacy: constants, the Corollary 8 sampler, radius laws.

Izzo et al., "Provable Membership Inference Privacy":

* Theorem 7: adding noise with density ``∝ exp(-||x|| / (c sigma))`` to an output whose
  M-th central moment over random halves is at most ``sigma^M`` gives eta-MIP with
  ``c = (7.5/eta)^(1+2/M)``; Corollary 11 improves 7.5 to 6.16 for ``M >= 2``.
* Corollary 8: per-coordinate scales through the weighted norm
  ``||x||_{sigma,M} = (sum_i |x_i|^M / (d sigma_i^M))^(1/M)``; the direction is
  ``U = Y / ||Y||_{sigma,M}`` with ``Y_i ~ GenNormal(0, sigma_i, M)`` and the radius
  ``r ~ Laplace(c)``.

Erratum (spec 9.1): for ``d > 1`` the paper's Laplace radius gives the density
``∝ ||x||^(1-d) exp(-||x||/c)``, not Theorem 7's ``∝ exp(-||x||/c)``, which needs
``||X|| ~ Gamma(d, c)``. Both are offered: ``radial="laplace"`` (paper, default, for
reproduction) and ``radial="gamma"`` (the density Theorem 7 is stated for). In one
dimension they coincide.

Our extension (spec 7.2, proof in docs/mip.md): with the Gamma radius,
``eta <= E||theta - E theta|| / (2 c sigma)``, so ``c = 1/(2 eta)`` suffices
(``constant="tv"``). It is labelled as ours everywhere it appears.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_array, check_choice, check_scalar
from ..exceptions import InvalidParameterError
from .calibrate import calibrate

__all__ = [
    "THM7_CONSTANT",
    "COR11_CONSTANT",
    "CONSTANTS",
    "RADIALS",
    "mip_constant",
    "cor11_bracket",
    "thm7_eta_bound",
    "sample_gennormal",
    "weighted_norm",
    "sample_direction",
    "sample_radius",
    "MIPNoise",
    "GaussianMIPNoise",
    "mip_noise",
]

THM7_CONSTANT = 7.5  # Theorem 7
COR11_CONSTANT = 6.16  # Corollary 11 (M >= 2)
CONSTANTS = ("cor11", "thm7", "tight", "tv")
RADIALS = ("laplace", "gamma", "gaussian")


def cor11_bracket(c: float) -> float:
    """The bracket of Corollary 11's bound (13): ``(4 + e + 2 c^-1/2)/2 + e + 2 c^-3/2``.

    The accuracy bound is ``1/2 + cor11_bracket(c) * c^-1/2`` (M = 2, alpha = gamma = 1/2).
    At ``c = (2 * 6.16)^2 = 151.78`` it is 6.15966 <= 6.16.
    """
    check_scalar(c, name="c", min_val=0.0, include_min=False)
    c = float(c)
    # eq. (13) of Corollary 11
    return (4.0 + math.e + 2.0 * c**-0.5) / 2.0 + math.e + 2.0 * c**-1.5


def thm7_eta_bound(c: float, M: float) -> float:
    """The MIP level the proof of Theorem 7 / Corollary 11 certifies for constant ``c``.

    ``eta_bound(c, M) = (2 + 1.5 e) c^(-M/(M+2)) + c^(-2M/(M+2)) + 2 c^(-M)`` with
    ``alpha = 2/(M+2)``, ``gamma = M/(M+2)`` and the Corollary 11 refinement (spec,
    Corollary 11 [derived]). For M = 2 it equals ``cor11_bracket(c) * c^-1/2``.
    Decreasing in ``c``.
    """
    check_scalar(c, name="c", min_val=0.0, include_min=False)
    check_scalar(M, name="M", min_val=1.0)
    c, M = float(c), float(M)
    e = M / (M + 2.0)
    return (2.0 + 1.5 * math.e) * c**-e + c ** (-2.0 * e) + 2.0 * c**-M


def mip_constant(eta: float, M: float = 2, *, constant: str = "cor11") -> float:
    """The noise constant ``c`` for target ``eta`` (noise scale is ``c * sigma``).

    Parameters
    ----------
    eta : float in (0, 1/2]
        Target MIP level.
    M : float, default=2
        Moment order of the sigma bound.
    constant : {"cor11", "thm7", "tight", "tv"}, default="cor11"
        ``"cor11"``: ``(6.16/eta)^(1+2/M)`` (Corollary 11, needs ``M >= 2``; the paper's
        experiments). ``"thm7"``: ``(7.5/eta)^(1+2/M)`` (Theorem 7). ``"tight"``: the
        smallest ``c`` with :func:`thm7_eta_bound` ``<= eta`` (derived from the same proof;
        1-3 % smaller). ``"tv"``: ``1/(2 eta)`` -- **our extension** (spec 7.2, proof in
        docs/mip.md); valid for any ``M >= 1`` but only with ``radial="gamma"``
        (or d = 1).

    Returns
    -------
    c : float

    Examples
    --------
    >>> round(mip_constant(0.1, 2), 2)
    3794.56
    """
    check_scalar(eta, name="eta", min_val=0.0, max_val=0.5, include_min=False)
    check_scalar(M, name="M", min_val=1.0)
    check_choice(constant, name="constant", choices=CONSTANTS)
    eta, M = float(eta), float(M)
    if M < 2 and constant in ("cor11", "tight"):
        raise InvalidParameterError(f"constant={constant!r} needs M >= 2 (Corollary 11); got M={M}")
    return _finite_noise(lambda: _noise_constant(eta, M, constant), eta)


def _finite_noise(compute: Callable[[], float], eta: float) -> float:
    """``compute()``, a noise scale for target ``eta``, refused in one line when it overflows a float."""
    try:
        c = compute()
    except OverflowError:
        c = math.inf
    if not math.isfinite(c):
        raise InvalidParameterError(f"eta={eta:g} is too small: its noise scale overflows a float; ask for a larger "
                                    "eta")
    return c


def _noise_constant(eta: float, M: float, constant: str) -> float:
    if constant == "tv":
        return 1.0 / (2.0 * eta)  # ours: eta <= sigma_1 / (2 b)  (docs/mip.md, Proposition A)
    if constant == "thm7":
        return (THM7_CONSTANT / eta) ** (1.0 + 2.0 / M)  # Theorem 7
    hi = (COR11_CONSTANT / eta) ** (1.0 + 2.0 / M)  # Corollary 11
    if constant == "cor11":
        return hi
    # tight: smallest c with eta_bound(c) <= eta; eta_bound decreases in c, so search on log c
    res = calibrate(
        lambda logc: thm7_eta_bound(math.exp(logc), M),
        eta,
        bracket=(math.log(hi) - 1.0, math.log(hi)),
        increasing=False,
    )
    return math.exp(res)


def sample_gennormal(alpha, beta: float, size, random_state: RandomStateLike = None) -> np.ndarray:
    """Draw from ``GenNormal(0, alpha, beta)``, density ``∝ exp(-(|x|/alpha)^beta)``.

    Sampler: ``alpha * s * G^(1/beta)`` with ``G ~ Gamma(1/beta, 1)`` and a random sign
    ``s`` (spec 2.4). ``alpha`` broadcasts against ``size``. Same law as
    ``scipy.stats.gennorm(beta, scale=alpha)``.
    """
    check_scalar(beta, name="beta", min_val=0.0, include_min=False)
    rng = check_random_state(random_state)
    g = rng.gamma(1.0 / float(beta), 1.0, size=size)
    s = np.where(rng.random(size=size) < 0.5, -1.0, 1.0)
    return np.asarray(alpha, dtype=float) * s * g ** (1.0 / float(beta))


def weighted_norm(x, sigma, M: float) -> np.ndarray:
    """The norm of Corollary 8: ``||x||_{sigma,M} = (sum_i |x_i|^M / (d sigma_i^M))^(1/M)``.

    Parameters
    ----------
    x : array-like of shape (..., d)
    sigma : array-like of shape (d,), positive
    M : float >= 1

    Returns
    -------
    norm : ndarray of shape (...)
    """
    x = np.asarray(x, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    z = np.abs(x / sigma)
    # max * (mean (z/max)^M)^(1/M): no overflow for large M
    zmax = np.max(z, axis=-1)
    safe = np.where(zmax > 0, zmax, 1.0)
    return zmax * np.mean((z / safe[..., None]) ** M, axis=-1) ** (1.0 / M)


def sample_direction(sigma, M: float, size: int, random_state: RandomStateLike = None) -> np.ndarray:
    """Directions ``U = Y / ||Y||_{sigma,M}``, ``Y_i ~ GenNormal(0, sigma_i, M)`` (Corollary 8).

    ``Y`` has density ``∝ exp(-d ||y||_{sigma,M}^M)``, a function of the norm only, so
    ``U`` follows the cone measure on the unit sphere of the norm (spec 4.2 note).

    Returns
    -------
    U : ndarray of shape (size, d) with ``weighted_norm(U, sigma, M) == 1``.
    """
    sigma = np.asarray(sigma, dtype=float)
    y = sample_gennormal(sigma, M, (int(size), sigma.shape[0]), random_state)
    return y / weighted_norm(y, sigma, M)[:, None]


def sample_radius(c: float, d: int, radial: str, size: int, random_state: RandomStateLike = None) -> np.ndarray:
    """Radii: ``Laplace(c)`` (paper, Corollary 8 / Alg 1) or ``Gamma(d, c)`` (density of Thm 7).

    The Laplace radius is signed; since the direction law is symmetric this equals an
    ``Exponential(c)`` radius in law. Returns shape (size,).
    """
    check_choice(radial, name="radial", choices=RADIALS[:2])
    rng = check_random_state(random_state)
    if radial == "laplace":
        return rng.laplace(0.0, float(c), size=int(size))
    return rng.gamma(float(d), float(c), size=int(size))  # ||X|| ~ Gamma(d, c) <=> density ∝ exp(-||x||/c)


class _SigmaMask:
    """Which coordinates get noise: those with ``sigma_j > 0`` (shared by both noise classes)."""

    sigma: tuple

    @property
    def active(self) -> np.ndarray:
        """Boolean mask of coordinates that receive noise (``sigma_j > 0``)."""
        return np.asarray(self.sigma, dtype=float) > 0

    @property
    def d_eff(self) -> int:
        """Number of noised coordinates (the ``d`` of the norm and of the Gamma radius)."""
        return int(self.active.sum())

    def coordinate_scales(self) -> np.ndarray:
        """Noise scale per coordinate, ``c * sigma_j``, shape (d,) (for the Gaussian noise its standard deviation,
        ``s * sigma_j``)."""
        return self.c * np.asarray(self.sigma, dtype=float)

    def _off_mask(self, x: np.ndarray, logp: np.ndarray) -> np.ndarray:
        """``logp``, with ``-inf`` where a coordinate without noise (``sigma_j = 0``) is non-zero."""
        act = self.active
        return np.where(np.all(x[..., ~act] == 0, axis=-1), logp, -np.inf) if (~act).any() else logp


@dataclass(frozen=True)
class MIPNoise(_SigmaMask):
    """The noise of Corollary 8 / Algorithm 1, as a value object.

    The released output is ``theta + X`` with ``X = r U`` (see module docstring). Its
    density (on the coordinates with ``sigma_j > 0``; the others get no noise) is
    ``∝ exp(-||x||_{sigma,M} / c)`` for ``radial="gamma"`` and
    ``∝ ||x||_{sigma,M}^(1-d) exp(-||x||_{sigma,M} / c)`` for ``radial="laplace"``.

    Attributes
    ----------
    sigma : tuple of float, length d
        Per-coordinate moment scales (``sigma_j^M >= E|theta_j - E theta_j|^M``).
    M : float
    c : float
        Radius scale in units of the weighted norm.
    radial : {"laplace", "gamma"}
    """

    sigma: tuple
    M: float
    c: float
    radial: str = "laplace"

    def sample(self, size: int = 1, random_state: RandomStateLike = None) -> np.ndarray:
        """Draw ``size`` noise vectors, shape (size, d)."""
        rng = check_random_state(random_state)
        sig = np.asarray(self.sigma, dtype=float)
        out = np.zeros((int(size), sig.shape[0]))
        act = self.active
        if act.any():
            u = sample_direction(sig[act], self.M, size, rng)
            r = sample_radius(self.c, self.d_eff, self.radial, size, rng)
            out[:, act] = r[:, None] * u
        return out

    def log_density(self, x) -> np.ndarray:
        """Log density of the noise at ``x`` (shape (..., d)) up to an additive constant.

        ``-inf`` where a coordinate with ``sigma_j = 0`` is non-zero (no noise there).
        Used by the Bayes-optimal attacker, which only needs density ratios.
        """
        x = np.asarray(x, dtype=float)
        sig = np.asarray(self.sigma, dtype=float)
        act = self.active
        nrm = weighted_norm(x[..., act], sig[act], self.M) if act.any() else np.zeros(x.shape[:-1])
        logp = -nrm / self.c
        if self.radial == "laplace" and self.d_eff > 1:
            with np.errstate(divide="ignore"):
                logp = logp - (self.d_eff - 1) * np.log(nrm)
        return self._off_mask(x, logp)


@dataclass(frozen=True)
class GaussianMIPNoise(_SigmaMask):
    """Independent Gaussian noise ``N(0, (s sigma_j)^2)`` per coordinate -- **our extension** (spec 7.2).

    With ``sigma_j^2 >= Var(theta_j)`` over random halves, ``E||(theta - E theta)/sigma||_2 <= sqrt(d)``
    and the transport bound gives ``eta <= sqrt(d) / (s sqrt(2 pi))`` (docs/mip.md,
    Proposition B), so ``s = sqrt(d)/(eta sqrt(2 pi))``. Same interface as :class:`MIPNoise`
    (``c`` is ``s``; ``M`` is 2; ``radial`` is ``"gaussian"``).
    """

    sigma: tuple
    s: float
    M: float = 2.0
    radial: str = "gaussian"

    @property
    def c(self) -> float:
        return self.s

    def sample(self, size: int = 1, random_state: RandomStateLike = None) -> np.ndarray:
        """Draw ``size`` noise vectors, shape (size, d)."""
        rng = check_random_state(random_state)
        sig = np.asarray(self.sigma, dtype=float)
        return rng.normal(size=(int(size), sig.shape[0])) * (self.s * sig)

    def log_density(self, x) -> np.ndarray:
        """Log density at ``x`` (shape (..., d)) up to a constant; ``-inf`` off the noised coordinates."""
        x = np.asarray(x, dtype=float)
        sig = np.asarray(self.sigma, dtype=float)
        act = self.active
        logp = -0.5 * np.sum((x[..., act] / (self.s * sig[act])) ** 2, axis=-1)
        return self._off_mask(x, logp)


def _gaussian_noise(sig: np.ndarray, eta: float, M: float, constant: str) -> GaussianMIPNoise:
    """:func:`mip_noise`'s ``radial="gaussian"`` (our extension): ``eta <= sqrt(d) / (s sqrt(2 pi))``."""
    check_scalar(eta, name="eta", min_val=0.0, max_val=0.5, include_min=False)
    check_scalar(M, name="M", min_val=1.0)
    if constant != "tv" or float(M) != 2.0:
        raise InvalidParameterError("radial='gaussian' (our extension) needs constant='tv' and M=2")
    d_eff = max(1, int((sig > 0).sum()))
    s = _finite_noise(lambda: math.sqrt(d_eff) / (float(eta) * math.sqrt(2.0 * math.pi)), float(eta))
    return GaussianMIPNoise(sigma=tuple(float(v) for v in sig), s=s)


def mip_noise(
    sigma,
    eta: float,
    M: float = 2,
    *,
    radial: str = "laplace",
    constant: str = "cor11",
) -> MIPNoise | GaussianMIPNoise:
    """Calibrate Corollary 8's noise for target ``eta`` given per-coordinate scales ``sigma``.

    Parameters
    ----------
    sigma : array-like of shape (d,)
        Non-negative moment scales; zeros mark coordinates that do not vary and get no noise.
    eta : float in (0, 1/2]
    M : float, default=2
    radial : {"laplace", "gamma", "gaussian"}, default="laplace"
        ``"laplace"`` is the paper's radius (Corollary 8, Algorithm 1); ``"gamma"`` gives the
        density Theorem 7 is proved for (spec 9.1). ``"gaussian"`` (ours) returns
        :class:`GaussianMIPNoise` and needs ``constant="tv"`` and ``M=2`` (sigma = std).
    constant : {"cor11", "thm7", "tight", "tv"}, default="cor11"
        See :func:`mip_constant`. ``"tv"`` (ours) requires ``radial="gamma"`` when more than
        one coordinate is noised, because the Laplace-radius density has an infinite
        score norm at 0 and the transport bound fails (spec 7.2, note).

    Returns
    -------
    MIPNoise
    """
    sig = check_array(sigma, name="sigma", ndim=1)
    if (sig < 0).any():
        raise InvalidParameterError(f"sigma must be >= 0; sigma[{int(np.argmax(sig < 0))}] is negative")
    check_choice(radial, name="radial", choices=RADIALS)
    if radial == "gaussian":
        return _gaussian_noise(sig, eta, M, constant)
    c = mip_constant(eta, M, constant=constant)
    if constant == "tv" and radial == "laplace" and int((sig > 0).sum()) > 1:
        raise InvalidParameterError(
            "constant='tv' (our transport bound) holds only for the density ∝ exp(-||x||/c); "
            "with more than one noised coordinate pass radial='gamma'"
        )
    return MIPNoise(sigma=tuple(float(s) for s in sig), M=float(M), c=float(c), radial=radial)

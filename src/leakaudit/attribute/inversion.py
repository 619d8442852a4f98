"""Model inversion: Yeom et al.'s Adversary 4, Theorem 5 and the general interval procedure.

Yeom, Giacomelli, Fredrikson & Jha, "Privacy Risk in Machine Learning: Analyzing
the Connection to Overfitting" (IEEE CSF 2018, arXiv 1709.01604 v5), Section 4.1.
A data point is ``z = (v, t, y)`` with a sensitive attribute ``t`` taking ``m``
values ``t_1..t_m`` with prior ``p_i = Pr_{z~D}[t = t_i]``. The inversion
adversary (Adversary 4) queries the model once per candidate value,

    eps(t_i) = y - A_S(v, t_i),

and returns ``argmax_i p_i * f_A(eps(t_i))`` with ``f_A`` its guess of the error
density (a Gaussian with the published training error, ``N(0, sigma_S^2)``).

Closed forms (derived for a model whose output moves by a constant when ``t``
changes, i.e. ``A_S(v, t_i) = c(v) + w_i``, and Gaussian errors
``N(0, sigma_S^2)`` on members, ``N(0, sigma_D^2)`` on non-members):

* :func:`theorem5_advantage` -- binary ``t``, uniform prior, influence ``tau``
  (Theorem 5).
* :func:`inversion_correct_intervals` and :func:`inversion_advantage` -- any
  ``m`` and prior: the set of errors for which the guess is right is an interval
  ``[L_j, U_j]`` (spec §4 "General case", [derived]); the advantage follows
  from the Definition 5 decomposition (final Eq. 4).

Conventions: values are indexed ``0..m-1``; a guess of ``-1`` means "no
answer" (the paper's ⊥) and always counts as wrong. Ties in the argmax go to the
lowest index (numpy's ``argmax``), and the closed forms use the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import special, stats

from .._validation import check_matrix, check_scalar, check_vector, shown
from ..exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "theorem5_advantage",
    "theorem5_optimal_tau",
    "eps_eq",
    "check_prior",
    "gaussian_log_density",
    "mixture_log_density",
    "inversion_scores",
    "inversion_attack",
    "counterfactual_inputs",
    "counterfactual_residuals",
    "inversion_correct_intervals",
    "inversion_accuracy",
    "inversion_advantage",
]


# ----------------------------------------------------------------------------------------------
# Theorem 5 (binary t, uniform prior)
# ----------------------------------------------------------------------------------------------


def theorem5_advantage(tau, sigma_s, sigma_d):
    """Attribute advantage of Adversary 4 for binary, uniform ``t`` (Yeom et al., Theorem 5).

    ``Adv^A = 1/2 * (erf(tau / (2 sqrt(2) sigma_S)) - erf(tau / (2 sqrt(2) sigma_D)))``

    Parameters
    ----------
    tau : float or array-like
        Influence of ``t``: ``A_S(v, t_1) = A_S(v, t_2) + tau`` for every ``v``;
        must be ``>= 0``.
    sigma_s, sigma_d : float or array-like
        Standard deviations of the error on members (``b = 0``) and on fresh
        points from ``D`` (``b = 1``); both ``> 0``. Broadcast with ``tau``.

    Returns
    -------
    float or ndarray
        The advantage, in ``[-1/2, 1/2]`` (positive when ``sigma_S < sigma_D``).

    Examples
    --------
    >>> round(float(theorem5_advantage(1.0, 1.0, 5.0)), 4)
    0.1516
    """
    tau = np.asarray(tau, dtype=float)
    s_s = np.asarray(sigma_s, dtype=float)
    s_d = np.asarray(sigma_d, dtype=float)
    if np.any(~np.isfinite(tau)) or np.any(tau < 0):
        raise InvalidParameterError(f"tau must be finite and >= 0; got {tau}")
    for name, s in (("sigma_s", s_s), ("sigma_d", s_d)):
        if np.any(~np.isfinite(s)) or np.any(s <= 0):
            raise InvalidParameterError(f"{name} must be finite and > 0; got {s}")
    # Theorem 5: Pr[right | t, b] = 1/2 + 1/2 erf(tau / (2 sqrt2 sigma_b)); the difference over b, weighted by p = 1/2.
    out = 0.5 * (special.erf(tau / (2 * np.sqrt(2) * s_s)) - special.erf(tau / (2 * np.sqrt(2) * s_d)))
    return float(out) if out.ndim == 0 else out


def eps_eq(sigma_s: float, sigma_d: float) -> float:
    """Where the member and non-member Gaussian error densities cross (Yeom et al., final Eq. 3).

    ``eps_eq = sigma_S sigma_D sqrt(2 ln(sigma_D/sigma_S) / (sigma_D^2 - sigma_S^2))``; its
    limit ``sigma_S`` is returned when the two are equal.
    """
    check_scalar(sigma_s, name="sigma_s", min_val=0.0, include_min=False)
    check_scalar(sigma_d, name="sigma_d", min_val=0.0, include_min=False)
    if sigma_s == sigma_d:
        return float(sigma_s)
    r = sigma_d / sigma_s
    return float(sigma_d * np.sqrt(2 * np.log(r) / (r * r - 1)))


def theorem5_optimal_tau(sigma_s: float, sigma_d: float) -> tuple[float, float]:
    """The influence maximising Theorem 5's advantage and that maximum ([derived], spec §4).

    Setting the derivative of Theorem 5 in ``tau`` to zero gives ``tau* = 2 eps_eq``,
    and the maximum is half of Theorem 3's membership advantage at the same ratio.

    Returns
    -------
    tau_star : float
    max_advantage : float
    """
    t = 2.0 * eps_eq(sigma_s, sigma_d)
    return t, theorem5_advantage(t, sigma_s, sigma_d)


# ----------------------------------------------------------------------------------------------
# Adversary 4 (the general inversion adversary)
# ----------------------------------------------------------------------------------------------


def check_prior(prior, *, m: int | None = None, name: str = "prior") -> np.ndarray:
    """Check a prior over ``m`` attribute values: non-negative, sums to 1; return it as float."""
    p = check_vector(prior, name=name)
    if m is not None and p.shape[0] != m:
        raise InvalidInputError(f"{name} has {p.shape[0]} entries but there are {m} candidate values")
    if p.shape[0] < 2:
        raise InvalidInputError(f"{name} needs at least 2 values; got {p.shape[0]}")
    if p.min() < 0:
        raise InvalidInputError(f"{name} must be non-negative; entry {int(np.argmin(p))} is {p.min():.6g}")
    if abs(p.sum() - 1.0) > 1e-6:
        raise InvalidInputError(f"{name} must sum to 1; it sums to {p.sum():.6g} (divide by its sum)")
    return p


def gaussian_log_density(sigma: float) -> Callable[[np.ndarray], np.ndarray]:
    """``log f_A(eps)`` for ``f_A = N(0, sigma^2)``, the density Adversary 4 assumes (sigma = sigma_S)."""
    check_scalar(sigma, name="sigma", min_val=0.0, include_min=False)
    scale = float(sigma)  # (a Python int beyond int64 has no numpy log)

    def logf(eps: np.ndarray) -> np.ndarray:
        return stats.norm.logpdf(eps, scale=scale)

    return logf


def mixture_log_density(sigma_s: float, sigma_d: float, *, weight_member: float = 0.5):
    """``log f_A`` for the membership-aware density ``w N(0, sigma_S^2) + (1 - w) N(0, sigma_D^2)``.

    An extension of Adversary 4 (spec §11, "membership-aware attribute adversary"): the
    adversary does not know ``b``, so it can average the member and non-member error
    densities instead of assuming ``sigma_S``. With ``sigma_S == sigma_D`` it is the Gaussian.

    Parameters
    ----------
    sigma_s, sigma_d : float, > 0
    weight_member : float in [0, 1], default=0.5
        Prior probability that the record is a member (Experiment 2 draws b uniformly).
    """
    check_scalar(sigma_s, name="sigma_s", min_val=0.0, include_min=False)
    check_scalar(sigma_d, name="sigma_d", min_val=0.0, include_min=False)
    check_scalar(weight_member, name="weight_member", min_val=0.0, max_val=1.0)
    s, d, w = float(sigma_s), float(sigma_d), float(weight_member)  # (numpy has no log of a huge Python int)

    def logf(eps: np.ndarray) -> np.ndarray:
        a = stats.norm.logpdf(eps, scale=s)
        b = stats.norm.logpdf(eps, scale=d)
        with np.errstate(divide="ignore"):
            return np.logaddexp(np.log(w) + a, np.log1p(-w) + b)

    return logf


def inversion_scores(residuals, prior, *, sigma: float | None = None, log_density=None) -> np.ndarray:
    """Adversary 4's log-scores ``log p_i + log f_A(eps(t_i))`` (Yeom et al., Adversary 4, step 3).

    Parameters
    ----------
    residuals : array-like of shape (n_samples, m)
        ``eps(t_i) = y - A_S(v, t_i)``: the error of the model's output when the
        sensitive attribute is set to each candidate value.
    prior : array-like of shape (m,)
        ``p_i = Pr_{z~D}[t = t_i]``.
    sigma : float, optional
        Standard deviation of the Gaussian ``f_A`` (the paper uses the published
        training error sigma_S). Give this or ``log_density``.
    log_density : callable, optional
        Any ``log f_A``, mapping an array of errors to log-densities elementwise.

    Returns
    -------
    ndarray of shape (n_samples, m)
    """
    res = check_matrix(residuals, name="residuals")
    p = check_prior(prior, m=res.shape[1])
    if (sigma is None) == (log_density is None):
        raise InvalidParameterError("give exactly one of sigma (Gaussian f_A) or log_density")
    logf = gaussian_log_density(sigma) if log_density is None else log_density
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    return logp[None, :] + np.asarray(logf(res), dtype=float)


def inversion_attack(residuals, prior, *, sigma: float | None = None, log_density=None) -> np.ndarray:
    """Adversary 4: the index of ``argmax_i p_i f_A(eps(t_i))`` for each row.

    Parameters are those of :func:`inversion_scores`.

    Returns
    -------
    ndarray of shape (n_samples,), int
        The guessed value index (ties go to the lowest index).

    Examples
    --------
    >>> inversion_attack([[0.1, -2.0], [3.0, 0.2]], [0.5, 0.5], sigma=1.0)
    array([0, 1])
    """
    return np.argmax(inversion_scores(residuals, prior, sigma=sigma, log_density=log_density), axis=1)


def counterfactual_inputs(X, *, columns: int | Sequence[int], values=None) -> np.ndarray:
    """The model inputs with the sensitive attribute set to each candidate value.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Encoded inputs.
    columns : int or sequence of int
        One column (the attribute is stored as a code in it) or a block of columns
        (the attribute is one-hot encoded in them).
    values : array-like, optional
        For one column: the m codes to write (shape (m,)). For a block: the m
        encodings to write, shape (m, len(columns)); the default is the identity
        (candidate i sets column ``columns[i]`` to 1 and the others to 0).

    Returns
    -------
    ndarray of shape (m, n_samples, n_features)
    """
    X = check_matrix(X, name="X")
    d = X.shape[1]
    cols = np.atleast_1d(np.asarray(columns))
    if cols.dtype.kind not in "iu" or cols.size == 0 or cols.min() < 0 or cols.max() >= d:
        raise InvalidParameterError(f"columns must be column indices in [0, {d}); got {shown(columns)}")
    if np.unique(cols).size != cols.size:
        raise InvalidParameterError(f"columns holds duplicates: {shown(columns)}")
    if np.ndim(columns) == 0:
        if values is None:
            raise InvalidParameterError("values (the candidate codes) are required when columns is a single column")
        vals = check_vector(values, name="values").reshape(-1, 1)
    else:
        vals = np.eye(cols.size) if values is None else check_matrix(values, name="values")
        if vals.shape[1] != cols.size:
            raise InvalidInputError(f"values must have one column per entry of columns ({cols.size}); got {vals.shape}")
    if vals.shape[0] < 2:
        raise InvalidInputError(f"at least 2 candidate values are needed; got {vals.shape[0]}")
    out = np.repeat(X[None, :, :], vals.shape[0], axis=0)
    out[:, :, cols] = vals[:, None, :]
    return out


def counterfactual_residuals(predict: Callable[[np.ndarray], np.ndarray], X, y, *, columns, values=None) -> np.ndarray:
    """``eps(t_i) = y - A_S(v, t_i)`` for every row and candidate (Adversary 4, steps 1-2).

    Parameters
    ----------
    predict : callable
        The model's regression output, ``(n, d) -> (n,)``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    columns, values
        As in :func:`counterfactual_inputs`.

    Returns
    -------
    ndarray of shape (n_samples, m)
    """
    y = check_vector(y, name="y")
    cand = counterfactual_inputs(X, columns=columns, values=values)
    if cand.shape[1] != y.shape[0]:
        raise InvalidInputError(f"inconsistent numbers of samples: X={cand.shape[1]}, y={y.shape[0]}")
    m, n, d = cand.shape
    pred = np.asarray(predict(cand.reshape(m * n, d)), dtype=float).reshape(m, n)
    return (y[None, :] - pred).T


# ----------------------------------------------------------------------------------------------
# The general case: the interval of errors where Adversary 4 is right (spec §4, [derived])
# ----------------------------------------------------------------------------------------------


def _check_weights(weights, m: int | None = None) -> np.ndarray:
    w = check_vector(weights, name="weights")
    if m is not None and w.shape[0] != m:
        raise InvalidInputError(f"weights has {w.shape[0]} entries but prior has {m}")
    return w


def inversion_correct_intervals(prior, weights, sigma_adv: float) -> np.ndarray:
    """For each true value ``t_j``, the errors ``eps`` for which Adversary 4 guesses ``t_j``.

    The model is ``A_S(v, t_i) = c(v) + w_i`` and ``y = c(v) + w_j + eps``, so
    ``eps(t_i) = eps + Delta_ji`` with ``Delta_ji = w_j - w_i``. With a Gaussian
    ``f_A = N(0, sigma_adv^2)`` the guess is ``t_j`` iff for every ``i != j``

        2 eps Delta_ji + Delta_ji^2 >= 2 sigma_adv^2 ln(p_i / p_j),

    which is linear in ``eps``; the intersection over ``i`` is an interval
    ``[L_j, U_j]`` (possibly empty or unbounded). When ``Delta_ji = 0`` the
    condition does not depend on ``eps``: it holds iff ``p_j > p_i``, or
    ``p_j == p_i`` and ``j < i`` (numpy's argmax tie rule).

    Parameters
    ----------
    prior : array-like of shape (m,)
    weights : array-like of shape (m,)
        The model's output shift ``w_i`` for each value.
    sigma_adv : float
        Standard deviation of the adversary's Gaussian ``f_A`` (the paper: sigma_S).

    Returns
    -------
    ndarray of shape (m, 2)
        ``[L_j, U_j]`` per value; an empty interval is ``[nan, nan]``.
    """
    p = check_prior(prior)
    w = _check_weights(weights, p.shape[0])
    check_scalar(sigma_adv, name="sigma_adv", min_val=0.0, include_min=False)
    m = p.shape[0]
    out = np.empty((m, 2))
    for j in range(m):
        lo, hi, empty = -np.inf, np.inf, p[j] == 0
        for i in range(m):
            if i == j or empty:
                continue
            delta = w[j] - w[i]
            if p[i] == 0:
                continue  # a value of prior 0 is never guessed (log p_i = -inf)
            rhs = 2 * sigma_adv**2 * np.log(p[i] / p[j])
            if delta == 0:
                if not (p[j] > p[i] or (p[j] == p[i] and j < i)):
                    empty = True
                continue
            bound = (rhs - delta * delta) / (2 * delta)
            if delta > 0:
                lo = max(lo, bound)
            else:
                hi = min(hi, bound)
        out[j] = (np.nan, np.nan) if empty or lo >= hi else (lo, hi)
    return out


def inversion_accuracy(prior, weights, sigma_adv: float, sigma_true: float) -> np.ndarray:
    """``Pr[Adversary 4 is right | t = t_j]`` when the true error is ``N(0, sigma_true^2)``.

    ``Phi(U_j / sigma_true) - Phi(L_j / sigma_true)`` with the intervals of
    :func:`inversion_correct_intervals`.

    Returns
    -------
    ndarray of shape (m,)
    """
    check_scalar(sigma_true, name="sigma_true", min_val=0.0, include_min=False)
    iv = inversion_correct_intervals(prior, weights, sigma_adv)
    acc = stats.norm.cdf(iv[:, 1] / sigma_true) - stats.norm.cdf(iv[:, 0] / sigma_true)
    return np.where(np.isnan(iv[:, 0]), 0.0, acc)


def inversion_advantage(prior, weights, sigma_s: float, sigma_d: float, *, sigma_adv: float | None = None) -> float:
    """Attribute advantage of Adversary 4 in the linear-Gaussian model (Definition 5, final Eq. 4).

    ``Adv^A = sum_j p_j (Pr[right | t_j, b=0] - Pr[right | t_j, b=1])`` with the
    error ``N(0, sigma_S^2)`` for members and ``N(0, sigma_D^2)`` for non-members.

    Parameters
    ----------
    prior : array-like of shape (m,)
    weights : array-like of shape (m,)
        ``A_S(v, t_i) = c(v) + w_i``.
    sigma_s, sigma_d : float
    sigma_adv : float, optional
        The adversary's ``f_A`` standard deviation; default ``sigma_s`` (as in the paper).

    Returns
    -------
    float

    Notes
    -----
    With ``m = 2``, a uniform prior and ``weights = (tau, 0)`` this equals
    :func:`theorem5_advantage`.
    """
    p = check_prior(prior)
    check_scalar(sigma_d, name="sigma_d", min_val=0.0, include_min=False)
    s_adv = sigma_s if sigma_adv is None else sigma_adv
    a0 = inversion_accuracy(p, weights, s_adv, sigma_s)
    a1 = inversion_accuracy(p, weights, s_adv, sigma_d)
    return float(np.sum(p * (a0 - a1)))

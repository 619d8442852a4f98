"""One-run privacy auditing (Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023).

The auditor plants ``m`` canaries; canary ``i`` is included in the training set when ``S[i] = +1`` and left out when
``S[i] = -1``, each independently with probability 1/2. After one training run it guesses ``T[i]`` in {-1, 0, +1}
(0 abstains). With ``r`` guesses of which ``v`` are correct, the paper's Theorem 3.1 bounds the probability of ``v`` or
more correct guesses under any (epsilon, delta)-DP mechanism; when that probability is below ``beta`` the claim
"(epsilon, delta)-DP" is rejected at confidence ``1 - beta``. The largest rejected epsilon is an empirical *lower
bound* on the implementation's epsilon: above the claimed epsilon means the claim is violated; below it is
consistent with the claim, never a proof of privacy.

Notation follows the paper: ``m`` canaries, ``r`` guesses (non-zero entries of ``T``), ``v`` correct guesses,
``epsilon``, ``delta``, and ``beta`` the allowed probability of a false rejection (one minus the confidence).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from .._random import RandomStateLike, check_random_state
from .._results import Result
from .._validation import check_scalar, check_vector
from ..exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "OneRunAudit",
    "count_correct",
    "draw_inclusion",
    "guesses_from_scores",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
]

# Epsilons above this are not searched: e^-60 is below double precision next to 1, so every tail is flat there.
EPSILON_SEARCH_MAX = 60.0


class GuessesBound(Result):
    """What every analysis of one set of guesses reports: the analysis (``bound``), the counts ``m``, ``r``, ``v``,
    ``delta``, ``beta``, and the largest epsilon whose hypothesis the guesses reject at confidence ``1 - beta``
    (0.0 when none is rejected)."""

    bound: str
    m: int
    r: int
    v: int
    delta: float
    beta: float
    epsilon_lower_bound: float


class OneRunAudit(GuessesBound):
    """The epsilon lower bound from one set of guesses, of the (epsilon, ``delta``)-DP claim (Theorem 3.1);
    ``p_value_at_zero`` is the p-value of "(0, delta)-DP"."""

    bound: str = "steinke2023"
    p_value_at_zero: float


def _check_delta_beta(delta, beta):
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_max=False)
    check_scalar(beta, name="beta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)


def _check_counts(m, r, v):
    for name, val in (("m", m), ("r", r), ("v", v)):
        check_scalar(val, name=name, kind=numbers.Integral, min_val=0)
    if m < 1:
        raise InvalidParameterError(f"m (the number of canaries) must be at least 1; got {m}")
    if r > m:
        raise InvalidParameterError(f"r (the number of guesses) must be at most m={m}; got r={r}")
    if v > r:
        raise InvalidParameterError(f"v (the number of correct guesses) must be at most r={r}; got v={v}")


def _p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    # Theorem 3.1 of Steinke et al. (2023): with q = e^eps / (1 + e^eps) and
    # tail(x) = P[Binomial(r, q) >= x],  P[W >= v] <= tail(v) + 2 m delta max_{i=1..v} (tail(v - i) - tail(v)) / i.
    q = special.expit(epsilon)
    tail_v = stats.binom.sf(v - 1, r, q)
    if delta == 0 or v == 0:
        return float(min(tail_v, 1.0))
    i = np.arange(1, v + 1)
    # P[v - i <= Binomial(r, q) < v] for i = 1..v, as a difference of upper tails
    between = stats.binom.sf(v - i - 1, r, q) - tail_v
    alpha = float(np.max(between / i))
    return float(min(tail_v + 2.0 * m * delta * alpha, 1.0))


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """Upper bound on the probability of ``v`` or more correct guesses out of ``r`` under (epsilon, delta)-DP.

    Parameters
    ----------
    m : int
        Number of canaries, each included independently with probability 1/2.
    r : int
        Number of guesses (canaries the auditor did not abstain on), ``r <= m``.
    v : int
        Number of correct guesses, ``v <= r``.
    epsilon : float
        The epsilon of the null hypothesis, at least 0.
    delta : float
        The delta of the null hypothesis, in [0, 1).

    Returns
    -------
    float
        The bound of Theorem 3.1 (at most 1): the p-value of "the mechanism is (epsilon, delta)-DP".
    """
    _check_counts(m, r, v)
    check_scalar(epsilon, name="epsilon", min_val=0.0)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_max=False)
    return _p_value(int(m), int(r), int(v), float(epsilon), float(delta))


def largest_rejected(rejects: Callable[[float], bool], *, tol: float = 1e-9) -> float:
    """The largest epsilon in [0, EPSILON_SEARCH_MAX] that ``rejects`` (monotone: a rejected epsilon rejects every
    smaller one), found by doubling and then bisection; taken on the rejected side, like the authors' search.
    0 when even epsilon = 0 is not rejected."""
    if not rejects(0.0):
        return 0.0
    hi = 1.0
    while rejects(hi):
        if hi >= EPSILON_SEARCH_MAX:
            return EPSILON_SEARCH_MAX
        hi = min(2 * hi, EPSILON_SEARCH_MAX)
    lo = hi / 2 if hi > 1.0 else 0.0
    while hi - lo > tol:  # lo always rejected, hi never
        mid = (lo + hi) / 2
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return float(lo)


def _epsilon_lower_bound(m: int, r: int, v: int, delta: float, beta: float) -> float:
    # A rejected (eps, delta) claim rejects every smaller eps too ((eps', delta)-DP implies (eps, delta)-DP for
    # eps' < eps), so any eps with p-value below beta is a valid lower bound; the boundary is the largest one.
    if r == 0:
        return 0.0
    return largest_rejected(lambda eps: _p_value(m, r, v, eps, delta) < beta)


def one_run_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float, beta: float = 0.05) -> float:
    """The largest epsilon rejected at confidence ``1 - beta`` by ``v`` correct guesses out of ``r``.

    Parameters
    ----------
    m, r, v : int
        Canaries, guesses and correct guesses (``v <= r <= m``).
    delta : float
        The claimed delta, in [0, 1).
    beta : float, default=0.05
        Probability of a false rejection, in (0, 1); the bound holds with probability ``1 - beta``.

    Returns
    -------
    float
        The epsilon lower bound (0.0 when not even epsilon = 0 is rejected).
    """
    _check_counts(m, r, v)
    _check_delta_beta(delta, beta)
    return _epsilon_lower_bound(int(m), int(r), int(v), float(delta), float(beta))


def _check_codes(v: np.ndarray, name: str, allowed: tuple[float, ...], words: str) -> np.ndarray:
    """The vector ``v`` as int8, refused unless each value is one of ``allowed`` (``words``: what they mean)."""
    bad = ~np.isin(v, allowed)
    if bad.any():
        j = int(np.argmax(bad))
        raise InvalidInputError(f"{name} must hold only {words}; got {v[j]:g} at index {j}")
    return v.astype(np.int8)


def _check_truth(S) -> np.ndarray:
    s = check_vector(S, name="S", dtype=np.float64)
    return _check_codes(s, "S", (-1.0, 1.0), "-1 (canary left out) and +1 (canary included)")


def _check_guesses(T, m: int) -> np.ndarray:
    t = check_vector(T, name="T", dtype=np.float64)
    if t.shape[0] != m:
        raise InvalidInputError(f"T must have one guess per canary, the length of S ({m}); got length {t.shape[0]}")
    return _check_codes(t, "T", (-1.0, 0.0, 1.0), "-1, 0 (abstain) and +1")


def draw_inclusion(m: int, random_state: RandomStateLike = None) -> np.ndarray:
    """The truth ``S`` for ``m`` canaries: +1 (include) or -1 (leave out), each independently with probability 1/2.

    The bound is valid only when ``S`` is drawn this way, independently of the canaries and of the training run;
    a trainer takes ``S`` from here and includes canary ``i`` exactly when ``S[i] == 1``.
    """
    check_scalar(m, name="m", kind=numbers.Integral, min_val=1)
    rng = check_random_state(random_state)
    return np.where(rng.random(int(m)) < 0.5, 1, -1).astype(np.int8)


def count_correct(S, T) -> tuple[int, int]:
    """``(r, v)``: the number of guesses (non-zero ``T``) and of correct ones (``T == S``)."""
    s = _check_truth(S)
    t = _check_guesses(T, s.shape[0])
    return int(np.count_nonzero(t)), int(np.count_nonzero(t == s))


def guesses_from_scores(scores, k_plus: int, k_minus: int) -> np.ndarray:
    """Guesses from per-canary scores: +1 for the ``k_plus`` highest, -1 for the ``k_minus`` lowest, 0 elsewhere.

    Higher scores must mean "more likely included" (negate a loss). Ties are broken by position (stable sort),
    never by the truth.

    Returns
    -------
    numpy.ndarray of shape (m,), dtype int8
    """
    x = check_vector(scores, name="scores", dtype=np.float64)
    m = x.shape[0]
    check_scalar(k_plus, name="k_plus", kind=numbers.Integral, min_val=0)
    check_scalar(k_minus, name="k_minus", kind=numbers.Integral, min_val=0)
    if k_plus + k_minus > m:
        raise InvalidParameterError(
            f"k_plus + k_minus must be at most the number of canaries m={m}; got {k_plus} + {k_minus}")
    order = np.argsort(-x, kind="stable")
    t = np.zeros(m, dtype=np.int8)
    t[order[:k_plus]] = 1
    if k_minus:
        t[order[m - k_minus:]] = -1
    return t


def one_run_audit(S, T, *, delta: float, beta: float = 0.05) -> OneRunAudit:
    """The one-run epsilon lower bound from the truth ``S`` and the guesses ``T``.

    Parameters
    ----------
    S : array-like of shape (m,)
        +1 where the canary was included in training, -1 where it was left out (each with probability 1/2,
        drawn independently of everything else; the bound assumes it).
    T : array-like of shape (m,)
        The auditor's guesses: +1 "included", -1 "left out", 0 abstain. They must be chosen without looking at ``S``.
    delta : float
        The claimed delta, in [0, 1).
    beta : float, default=0.05
        One minus the confidence, in (0, 1).
    """
    _check_delta_beta(delta, beta)
    s = _check_truth(S)
    r, v = count_correct(s, T)
    m = int(s.shape[0])
    return OneRunAudit(m=m, r=r, v=v, delta=float(delta), beta=float(beta),
                       epsilon_lower_bound=_epsilon_lower_bound(m, r, v, float(delta), float(beta)),
                       p_value_at_zero=_p_value(m, r, v, 0.0, float(delta)))

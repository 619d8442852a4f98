"""The paper's constructions, used by the reproductions and as audit test cases.

* Proposition 9: a data set on which ``A(D) = 1/sum(D)`` has variance ``O(1)`` over
  random halves but sensitivity ``Omega(2^(n/3))``.
* Theorem 4's tightness example and Theorem 5's "publish a random subset" algorithm.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_scalar
from ..exceptions import InvalidParameterError

__all__ = [
    "prop9_dataset",
    "prop9_outputs",
    "prop9_sensitivity",
    "prop9_max_output",
    "thm4_tight_distribution",
    "thm5_subset_distribution",
    "prop9_dp_scale",
    "prop9_mip_scale",
    "prop9_crossover",
]


#: the largest n whose data set fits a float64: it holds 2^(n-2), and 2^1024 overflows
PROP9_MAX_N = 1024


def _check_even(n: int) -> int:
    # bounded before math.comb(n, n/2), which takes unbounded time for a large n
    check_scalar(n, name="n", kind=(int, np.integer), min_val=4, max_val=PROP9_MAX_N)
    if n % 2:
        raise InvalidParameterError(f"n must be even for the Proposition 9 construction; got {n}")
    return int(n)


def prop9_dataset(n: int) -> np.ndarray:
    """The data set of Proposition 9: ``{2^i : i = 0..n-2} ∪ {A0}``, shape (n,).

    ``p = 1/C(n, n/2)`` and ``A0 = sqrt(p) - (2^(n/2-1) - 1)`` (negative), so the half
    ``D* = {2^0, ..., 2^(n/2-2), A0}`` sums to ``sqrt(p)`` and ``A(D*) = sqrt(C(n, n/2))``.
    ``A0`` is the last element.
    """
    n = _check_even(n)
    p = 1.0 / math.comb(n, n // 2)
    a0 = math.sqrt(p) - (2.0 ** (n // 2 - 1) - 1.0)
    return np.array([2.0**i for i in range(n - 1)] + [a0])


def prop9_outputs(n: int, member: np.ndarray) -> np.ndarray:
    """``A(D) = 1 / sum(D)`` for each half given as a boolean row of ``member`` (shape (N, n)).

    The special half's sum is computed exactly (the float sum cancels catastrophically).
    """
    n = _check_even(n)
    x = prop9_dataset(n)
    member = np.asarray(member, dtype=bool)
    sums = member[:, :-1] @ x[:-1]
    # halves holding A0: sum = (sum of their powers of two) - (2^(n/2-1) - 1) + sqrt(p); the
    # integer part is exact in float for n <= 100
    has_a0 = member[:, -1]
    p = 1.0 / math.comb(n, n // 2)
    int_part = sums - (2.0 ** (n // 2 - 1) - 1.0)
    sums = np.where(has_a0, int_part + math.sqrt(p), sums)
    return 1.0 / sums


def prop9_max_output(n: int) -> float:
    """``A(D*) = p^(-1/2) = sqrt(C(n, n/2))``."""
    n = _check_even(n)
    return math.sqrt(math.comb(n, n // 2))


def prop9_sensitivity(n: int) -> float:
    """``Delta(n) = p^(-1/2) - 1/(2^(n/2-1) - 1 + 2^(n-2))`` (spec, Prop 9 [derived]).

    The maximising neighbour of ``D*`` replaces ``A0`` by ``2^(n-2)``.
    """
    n = _check_even(n)
    return prop9_max_output(n) - 1.0 / (2.0 ** (n // 2 - 1) - 1.0 + 2.0 ** (n - 2))


def thm4_tight_distribution(eps: float):
    """Theorem 4's tightness example on ``D = {0, 1}``, ``k = 1``.

    ``A(D_train)`` outputs ``D_train`` with probability ``1/(1+e^-eps)`` and the other
    record otherwise; it is eps-DP and the best attack has accuracy ``1/(1+e^-eps)``.
    Returns ``output_distribution(subset) -> {output: prob}`` for
    :func:`~leakaudit.mip.exact_eta_discrete` with ``n=2, k=1``.
    """
    check_scalar(eps, name="eps", min_val=0.0)
    p = 1.0 / (1.0 + math.exp(-float(eps)))

    def dist(subset):
        (x,) = subset
        return {x: p, 1 - x: 1.0 - p}

    return dist


def thm5_subset_distribution(p: float):
    """Theorem 5's algorithm: publish each training record independently with probability ``p``.

    Not DP for any eps; eta-MIP with ``eta = p/2`` exactly when ``k = n/2`` (spec,
    Theorem 5 [derived]). Returns ``output_distribution(subset) -> {frozenset: prob}``.
    """
    check_scalar(p, name="p", min_val=0.0, max_val=1.0)
    p = float(p)

    def dist(subset):
        k = len(subset)
        out = {}
        for mask in range(1 << k):
            s = frozenset(subset[i] for i in range(k) if mask >> i & 1)
            m = len(s)
            out[s] = p**m * (1.0 - p) ** (k - m)
        return out

    return dist


def prop9_dp_scale(n: int, eta) -> np.ndarray:
    """Figure 1's DP curve: Laplace scale ``Delta(n) / eps(eta)`` that makes DP certify eta (Thm 4)."""
    from .conversions import eps_from_eta

    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    return prop9_sensitivity(n) / np.array([eps_from_eta(float(e)) for e in eta])


def prop9_mip_scale(eta, M: float = 2, *, sigma: float = 1.0, constant: str = "cor11") -> np.ndarray:
    """Figure 1's MIP curve: Laplace scale ``c(eta, M) * sigma`` (sigma = 1 for Prop 9)."""
    from .noise import mip_constant

    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    return np.array([mip_constant(float(e), M, constant=constant) for e in eta]) * float(sigma)


def prop9_crossover(n: int, M: float = 2, *, constant: str = "cor11", lo: float = 1e-9, hi: float = 0.4999) -> float:
    """Smallest eta above which the MIP scale is below the DP scale (Figure 1), or NaN if never.

    Found by scanning a log grid of eta in [lo, hi] for the first sign change of
    ``log(mip) - log(dp)`` and refining with Brent's method.
    """
    from scipy import optimize

    def h(e: float) -> float:
        return math.log(prop9_mip_scale(e, M, constant=constant)[0]) - math.log(prop9_dp_scale(n, e)[0])

    grid = np.geomspace(lo, hi, 4000)
    vals = np.array([h(float(e)) for e in grid])
    below = np.flatnonzero(vals < 0)
    if below.size == 0:
        return float("nan")
    j = int(below[0])
    if j == 0:
        return float(lo)
    return float(optimize.brentq(h, grid[j - 1], grid[j], xtol=1e-14, rtol=1e-12))

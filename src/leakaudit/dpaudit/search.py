"""The search over guess counts, paid for with a union bound, and the check of a claimed (epsilon, delta).

The analyses (``bound``):

``"steinke2023"``
    Theorem 3.1 of Steinke, Nasr & Jagielski (:mod:`.one_run`).
``"fdp"``
    Mahloujifar, Melis & Chaudhuri's f-DP analysis with the (epsilon, delta)-DP trade-off curve (:mod:`.fdp`);
    valid for every mechanism, like Theorem 3.1.
``"best"``
    Both of the above on every guess count, each at half the confidence budget, and the larger bound kept. The
    union bound over the two tests (each false with probability at most ``beta / 2``) keeps the whole at
    ``1 - beta``: the bound is tighter than either alone wherever the two differ by more than the halving costs.
``"gdp"``
    The f-DP analysis with the Gaussian curve: tighter again, but sound only for mechanisms whose privacy is
    Gaussian.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._results import Result
from .._validation import check_choice, check_scalar, check_vector, shown
from ..exceptions import InvalidInputError, InvalidParameterError
from .fdp import _fdp_epsilon_lower_bound
from .one_run import (
    _check_delta_beta,
    _check_truth,
    _epsilon_lower_bound,
    guesses_from_scores,
)

__all__ = ["BOUNDS", "ClaimCheck", "OneRunSearch", "check_claim", "default_guess_grid", "one_run_audit_scores"]

#: the analyses a search can use (see the module docstring)
BOUNDS = ("steinke2023", "fdp", "best", "gdp")


def _lower_bound(bound: str, m: int, r: int, v: int, delta: float, beta: float) -> float:
    """The epsilon lower bound of analysis ``bound`` for one set of guesses, at confidence ``1 - beta``."""
    if bound == "steinke2023":
        return _epsilon_lower_bound(m, r, v, delta, beta)
    if bound == "fdp":
        return _fdp_epsilon_lower_bound(m, r, v, delta, beta, "epsdelta")
    if bound == "gdp":
        return _fdp_epsilon_lower_bound(m, r, v, delta, beta, "gdp")
    # "best": each analysis at beta / 2, so that "either one is wrong" has probability at most beta
    return max(_epsilon_lower_bound(m, r, v, delta, beta / 2),
               _fdp_epsilon_lower_bound(m, r, v, delta, beta / 2, "epsdelta"))


class OneRunSearch(Result):
    """The best lower bound over a grid of (k_plus, k_minus), each pair tested at ``beta / n_candidates``.

    The union bound over the ``n_candidates`` pairs makes ``epsilon_lower_bound`` hold at confidence ``1 - beta``
    as a whole. ``candidates`` lists every pair tried as ``[k_plus, k_minus, r, v, epsilon_lower_bound]``.
    """

    bound: str = "steinke2023"
    m: int
    delta: float
    beta: float
    n_candidates: int
    beta_per_candidate: float
    k_plus: int
    k_minus: int
    r: int
    v: int
    epsilon_lower_bound: float
    candidates: list[list[float]]


def default_guess_grid(m: int) -> list[tuple[int, int]]:
    """Symmetric guess counts ``k_plus = k_minus = k``: k in {1, 2, 5} x 10^j up to m/2, and 60% to 100% of m/2.

    Fixed before the scores are seen, as the union bound over the grid requires. About half the canaries are
    included, so a strong attack's best k is near (a little below) m/2: the fractions cover it.
    """
    half = m // 2
    ks = {c * 10 ** j for j in range(12) for c in (1, 2, 5) if c * 10 ** j <= half}
    ks |= {int(half * f) for f in (0.6, 0.7, 0.8, 0.9, 1.0)}
    ks = sorted(ks)
    return [(k, k) for k in ks if k > 0]


def _check_grid(grid, m: int) -> list[tuple[int, int]]:
    """``grid`` as a non-empty list of (k_plus, k_minus) pairs of counts, each adding up to at most ``m``."""
    want = f"grid must be a list of (k_plus, k_minus) pairs of integers >= 0 with k_plus + k_minus <= m={m}"
    try:
        pairs = None if isinstance(grid, (str, bytes, dict)) else [tuple(p) for p in grid]
    except TypeError:
        pairs = None
    if pairs is None:
        raise InvalidParameterError(f"{want}; got {shown(grid)}")
    if not pairs:
        raise InvalidParameterError("grid must hold at least one (k_plus, k_minus) pair; got an empty list")
    for pair in pairs:
        if not (len(pair) == 2 and all(isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 0
                                       for k in pair) and sum(pair) <= m):
            raise InvalidParameterError(f"{want}; got the pair {shown(pair)}")
    return [(int(a), int(b)) for a, b in pairs]


def one_run_audit_scores(S, scores, *, delta: float, beta: float = 0.05,
                         grid: list[tuple[int, int]] | None = None, bound: str = "steinke2023") -> OneRunSearch:
    """The best one-run lower bound over a grid of guess counts, with the search paid for by a union bound.

    Each ``(k_plus, k_minus)`` in ``grid`` turns ``scores`` into guesses (:func:`guesses_from_scores`) and is
    tested at ``beta / len(grid)``; the largest of the resulting bounds then holds at confidence ``1 - beta``
    (Bonferroni). A single pair costs nothing; a long grid costs confidence per pair.

    Parameters
    ----------
    S : array-like of shape (m,)
        The truth, +1 / -1 (see :func:`one_run_audit`).
    scores : array-like of shape (m,)
        Per-canary scores, higher meaning "more likely included".
    delta, beta : float
        As in :func:`one_run_audit`.
    grid : list of (int, int), optional
        The pairs to try, fixed before looking at the scores; :func:`default_guess_grid` when None.
    bound : {"steinke2023", "fdp", "best", "gdp"}, default="steinke2023"
        The analysis (module docstring): Theorem 3.1 of Steinke et al.; the f-DP analysis of Mahloujifar et al.
        with the (epsilon, delta) curve; the larger of the two, each at ``beta / 2``; or the f-DP analysis with
        the Gaussian curve, which assumes the mechanism's privacy is Gaussian.
    """
    _check_delta_beta(delta, beta)
    s = _check_truth(S)
    m = int(s.shape[0])
    x = check_vector(scores, name="scores", dtype=np.float64)
    if x.shape[0] != m:
        raise InvalidInputError(f"scores must have one value per canary, the length of S ({m}); got {x.shape[0]}")
    check_choice(bound, name="bound", choices=BOUNDS)
    pairs = default_guess_grid(m) if grid is None else _check_grid(grid, m)
    beta_each = float(beta) / len(pairs)
    rows = []
    for pair in pairs:
        t = guesses_from_scores(x, pair[0], pair[1])
        r, v = int(np.count_nonzero(t)), int(np.count_nonzero(t == s))
        rows.append([int(pair[0]), int(pair[1]), r, v, _lower_bound(bound, m, r, v, float(delta), beta_each)])
    best = max(rows, key=lambda row: row[4])
    return OneRunSearch(bound=bound, m=m, delta=float(delta), beta=float(beta), n_candidates=len(pairs),
                        beta_per_candidate=beta_each, k_plus=best[0], k_minus=best[1], r=best[2], v=best[3],
                        epsilon_lower_bound=best[4], candidates=rows)



VERDICT_CONSISTENT = "consistent with the claim"
VERDICT_VIOLATED = "the claim is violated: the implementation leaks more than it says"


class ClaimCheck(Result):
    """A claimed (epsilon, delta) set against the one-run lower bound at confidence ``1 - beta``.

    ``violated`` is True when ``epsilon_lower_bound > claimed_epsilon``; ``verdict`` says so in words. A
    consistent verdict is not a proof of privacy: it only means this attack found no evidence against the claim.
    """

    claimed_epsilon: float
    delta: float
    confidence: float
    epsilon_lower_bound: float
    violated: bool
    verdict: str
    search: OneRunSearch


def check_claim(S, scores, *, claimed_epsilon: float, delta: float, beta: float = 0.05,
                grid: list[tuple[int, int]] | None = None, bound: str = "steinke2023") -> ClaimCheck:
    """Check a claimed (epsilon, delta)-DP guarantee against one training run's canary scores.

    Parameters are those of :func:`one_run_audit_scores`, plus ``claimed_epsilon`` (at least 0). With
    ``bound="gdp"`` the claim tested is "mu-GDP with the mu of (claimed_epsilon, delta)", right for DP-SGD and the
    Gaussian mechanism only (see :mod:`leakaudit.dpaudit.fdp`); the other analyses test (claimed_epsilon, delta)-DP.
    """
    check_scalar(claimed_epsilon, name="claimed_epsilon", min_val=0.0)
    search = one_run_audit_scores(S, scores, delta=delta, beta=beta, grid=grid, bound=bound)
    violated = search.epsilon_lower_bound > float(claimed_epsilon)
    return ClaimCheck(claimed_epsilon=float(claimed_epsilon), delta=float(delta), confidence=1.0 - float(beta),
                      epsilon_lower_bound=search.epsilon_lower_bound, violated=violated,
                      verdict=VERDICT_VIOLATED if violated else VERDICT_CONSISTENT, search=search)

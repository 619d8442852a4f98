"""Theory of property inference from poisoning (Chase, Ghosh & Mahloujifar, arXiv 2101.11073v1).

Pure functions for Theorem 9's certainty window, Claim 12's poisoned posterior,
Corollary 13, the Hoeffding query budget of the distinguisher (proof of
Theorem 9), and the poisoning rate beyond which the window is empty.

Conventions (spec ``chase-property.md`` Sec. 2.2, general form of Remark 10):
the attacked sub-population is ``g = f`` when ``t0 + t1 < 1`` (Algorithm 1) and
``g = 1 - f`` otherwise; its two possible prevalences are ``s_lo < s_hi``
(``g = f``: ``t0, t1``; ``g = 1 - f``: ``1 - t1, 1 - t0``). Certainty is
taken with respect to the poison label ``l``: ``crt_l(x) = 1 - 2 Pr[Y = l | x]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._results import Result
from .._validation import check_scalar, check_vector
from ..exceptions import InvalidParameterError

__all__ = [
    "CertaintyWindow",
    "attacked_subpopulation",
    "certainty_window",
    "theorem9_window",
    "max_poison_rate",
    "max_tau",
    "claim12_poisoned_posterior",
    "signed_certainty",
    "hoeffding_query_count",
    "window_table",
    "label_rate_oracle_accuracy",
    "PAPER_SETTINGS",
]

#: The five settings of the paper's Table I: name -> (t0, t1).
PAPER_SETTINGS: dict[str, tuple[float, float]] = {
    "census-random": (0.05, 0.15),
    "census-gender": (0.4, 0.6),
    "census-race": (0.10, 0.25),
    "enron-random": (0.3, 0.7),
    "enron-negative": (0.05, 0.10),
}


class CertaintyWindow(Result):
    """Theorem 9's window ``(lo, hi]`` of clean certainty ``crt_l`` for the attacked sub-population.

    Attributes
    ----------
    p, t0, t1, tau : float
        The inputs.
    subpopulation : {"f", "1-f"}
        The sub-population the poison is drawn from (Algorithm 1's rule).
    s_lo, s_hi : float
        Its prevalence in the world where it is rarer / more common.
    lo, hi : float
        Window bounds from Theorem 9, clipped to [-1, 1] (certainty cannot leave it).
        ``hi`` is included, ``lo`` is not.
    empty : bool
        True when no certainty value lies in the window (then no point qualifies and
        the theorem gives no attack).
    max_poison_rate : float
        ``s_hi / (1 + s_hi)``: for ``p`` at or above it the window is empty (tau = 0).
    """

    p: float
    t0: float
    t1: float
    tau: float
    subpopulation: str
    s_lo: float
    s_hi: float
    lo: float
    hi: float
    empty: bool
    max_poison_rate: float

    def contains(self, crt: np.ndarray) -> np.ndarray:
        """Boolean mask ``lo < crt <= hi`` (all False when the window is empty)."""
        crt = np.asarray(crt, dtype=float)
        if self.empty:
            return np.zeros(crt.shape, dtype=bool)
        return (crt > self.lo) & (crt <= self.hi)

    def describe(self) -> str:
        """The window as the spec's table writes it: ``(0.067,0.202]`` or ``empty``."""
        return "empty" if self.empty else f"({self.lo:.3f},{self.hi:.3f}]"


def _check_t(t0: float, t1: float) -> tuple[float, float]:
    check_scalar(t0, name="t0", min_val=0.0, max_val=1.0)
    check_scalar(t1, name="t1", min_val=0.0, max_val=1.0)
    if not t0 < t1:
        raise InvalidParameterError(f"t0 must be smaller than t1; got t0={t0}, t1={t1}")
    return float(t0), float(t1)


def attacked_subpopulation(t0: float, t1: float, subpopulation: str = "auto") -> tuple[str, float, float]:
    """Which sub-population Algorithm 1 poisons, and its prevalences ``(s_lo, s_hi)``.

    Algorithm 1 lines 1-6: if ``t0 + t1 < 1`` the property is rare and the
    poison is drawn from ``D+`` (``g = f``); otherwise from ``D-`` (``g = 1 - f``).

    Parameters
    ----------
    t0, t1 : float
        The two candidate fractions of records with ``f = 1``, ``t0 < t1``.
    subpopulation : {"auto", "f", "1-f"}
        Force a sub-population (Remark 10's variants) instead of Algorithm 1's rule.

    Returns
    -------
    (subpopulation, s_lo, s_hi)
        ``s_lo`` is the prevalence of ``g`` in the world where it is rarer: the
        ``t0`` world when ``g = f``, the ``t1`` world when ``g = 1 - f``.
    """
    t0, t1 = _check_t(t0, t1)
    if subpopulation == "auto":
        subpopulation = "f" if (t0 + t1) < 1 else "1-f"
    if subpopulation == "f":
        return "f", t0, t1
    if subpopulation == "1-f":
        return "1-f", 1.0 - t1, 1.0 - t0
    raise InvalidParameterError(f"subpopulation must be 'auto', 'f' or '1-f'; got {subpopulation!r}")


def certainty_window(p: float, s_lo: float, s_hi: float, tau: float = 0.0) -> tuple[float, float]:
    """Unclipped Theorem 9 window ``((p + 2 tau s_hi) / (s_hi (1-p)), (p - 2 tau s_lo) / (s_lo (1-p))]``.

    Theorem 9 / Claim 14 with ``t0, t1`` replaced by the attacked sub-population's
    prevalences (spec Sec. 2.2). Returns ``(lo, hi)``; the window is empty if
    ``lo >= hi`` or ``lo >= 1``.
    """
    check_scalar(p, name="p", min_val=0.0, max_val=1.0, include_max=False)
    check_scalar(s_lo, name="s_lo", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(s_hi, name="s_hi", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(tau, name="tau", min_val=0.0, max_val=1.0)
    if not s_lo < s_hi:
        raise InvalidParameterError(f"s_lo must be smaller than s_hi; got {s_lo}, {s_hi}")
    lo = (p + 2 * tau * s_hi) / (s_hi * (1 - p))  # Theorem 9, left bound
    hi = (p - 2 * tau * s_lo) / (s_lo * (1 - p))  # Theorem 9, right bound
    return lo, hi


def max_poison_rate(t0: float, t1: float, subpopulation: str = "auto") -> float:
    """Poisoning rate at and beyond which Theorem 9's window is empty (tau -> 0).

    The lower bound ``p / (s_hi (1 - p))`` reaches 1 when ``p = s_hi / (1 + s_hi)``
    (spec Sec. 2.5, derived): more poison leaves no clean point whose certainty
    can be flipped, so the attack must fail.
    """
    _, _, s_hi = attacked_subpopulation(t0, t1, subpopulation)
    return s_hi / (1 + s_hi)


def max_tau(p: float, t0: float, t1: float, subpopulation: str = "auto") -> float:
    """Largest tau with a non-empty window: ``p (s_hi - s_lo) / (4 s_lo s_hi)`` (spec Sec. 2.5)."""
    check_scalar(p, name="p", min_val=0.0, max_val=1.0, include_max=False)
    _, s_lo, s_hi = attacked_subpopulation(t0, t1, subpopulation)
    return p * (s_hi - s_lo) / (4 * s_lo * s_hi)


def theorem9_window(
    p: float, t0: float, t1: float, tau: float = 0.0, *, subpopulation: str = "auto"
) -> CertaintyWindow:
    """Theorem 9's certainty window for poisoning rate ``p`` and fractions ``t0 < t1``.

    Parameters
    ----------
    p : float in [0, 1)
        Poisoning rate (fraction of the n training points that are poison).
    t0, t1 : float
        Candidate fractions of records with the property, ``t0 < t1``.
    tau : float in [0, 1], default 0
        Theorem 9's margin; ``tau -> 0`` gives the widest window.
    subpopulation : {"auto", "f", "1-f"}
        Sub-population poisoned ("auto": Algorithm 1's rule).

    Returns
    -------
    CertaintyWindow
        Bounds clipped to [-1, 1]; ``empty`` when no certainty qualifies.

    Examples
    --------
    >>> theorem9_window(0.1, 0.3, 0.7).describe()   # the paper's worked example
    '(0.159,0.370]'
    """
    t0, t1 = _check_t(t0, t1)
    sub, s_lo, s_hi = attacked_subpopulation(t0, t1, subpopulation)
    if s_lo <= 0:
        raise InvalidParameterError(
            f"the attacked sub-population has prevalence 0 in one world (t0={t0}, t1={t1}); the window is undefined"
        )
    lo, hi = certainty_window(p, s_lo, s_hi, tau)
    lo_c, hi_c = max(lo, -1.0), min(hi, 1.0)
    empty = bool(lo_c >= hi_c or lo >= 1.0)
    return CertaintyWindow(
        p=p, t0=t0, t1=t1, tau=tau, subpopulation=sub, s_lo=s_lo, s_hi=s_hi,
        lo=lo_c, hi=hi_c, empty=empty, max_poison_rate=s_hi / (1 + s_hi),
    )


def signed_certainty(prob_label: np.ndarray) -> np.ndarray:
    """Def. 7: ``crt(x) = 1 - 2 Pr[Y = l | X = x]`` for an array of ``Pr[Y = l | x]``."""
    eta = check_vector(prob_label, name="prob_label")
    if (eta < 0).any() or (eta > 1).any():
        raise InvalidParameterError("prob_label must hold probabilities in [0, 1]")
    return 1.0 - 2.0 * eta  # Definition 7


def claim12_poisoned_posterior(eta: np.ndarray, p: float, t: float) -> np.ndarray:
    """Claim 12: ``Pr[Y~ = 1 | X~ = x]`` after poisoning with ``(X+, 1)`` at rate ``p``.

    ``p / (p + t(1-p)) + t(1-p) / (p + t(1-p)) * eta`` for ``x`` with ``f(x) = 1``,
    where ``eta = Pr[Y = 1 | X = x]`` is the clean posterior and ``t`` the prevalence.
    """
    eta = np.asarray(eta, dtype=float)
    check_scalar(p, name="p", min_val=0.0, max_val=1.0)
    check_scalar(t, name="t", min_val=0.0, max_val=1.0)
    z = p + t * (1 - p)
    if z <= 0:
        raise InvalidParameterError("p and t are both 0: no point has the property")
    return p / z + t * (1 - p) / z * eta  # Claim 12


def hoeffding_query_count(delta: float, gamma: float = 0.25) -> int:
    """In-window queries of Theorem 9's distinguisher: ``ceil(-ln(delta) / (2 gamma^2))``.

    Proof of Theorem 9, step 1 (Chernoff-Hoeffding; gamma = 1/4 as in Theorem 9).
    """
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_scalar(gamma, name="gamma", min_val=0.0, max_val=0.5, include_min=False)
    return int(math.ceil(-math.log(delta) / (2 * gamma**2) - 1e-12))


def window_table(
    settings: dict[str, tuple[float, float]] | None = None,
    p_values: Sequence[float] = (0.01, 0.03, 0.05, 0.10, 0.20),
) -> list[dict]:
    """Theorem 9 windows (tau -> 0) for every setting and poisoning rate (spec Sec. 2.5 table).

    Returns
    -------
    list of dict
        One per setting: ``setting, t0, t1, subpopulation, s_lo, s_hi, windows``
        (``{p: "(lo,hi]" or "empty"}``) and ``max_poison_rate``.
    """
    settings = PAPER_SETTINGS if settings is None else settings
    rows = []
    for name, (t0, t1) in settings.items():
        ws = {float(p): theorem9_window(p, t0, t1) for p in p_values}
        first = next(iter(ws.values())) if ws else theorem9_window(0.0, t0, t1)
        rows.append(
            {
                "setting": name, "t0": t0, "t1": t1, "subpopulation": first.subpopulation,
                "s_lo": first.s_lo, "s_hi": first.s_hi,
                "windows": {p: w.describe() for p, w in ws.items()},
                "max_poison_rate": max_poison_rate(t0, t1),
            }
        )
    return rows


def label_rate_oracle_accuracy(
    *, n: int, p: float, s_lo: float, s_hi: float, label_rate: float,
) -> float:
    """Accuracy of a test that reads the poisoned training set's rate of the poison label in the attacked group.

    A diagnostic of how much of the t0 / t1 difference the poisoned *data* carry at finite ``n``
    (not in the paper). The attacked sub-population ``g`` holds ``round(s (n - m))`` clean
    records (``s`` is ``s_lo`` in one world, ``s_hi`` in the other; exact prevalence) and the
    ``m = round(p n)`` poison records, all labelled ``l``; each clean record of ``g`` has label
    ``l`` with probability ``label_rate``. The rate of label ``l`` in ``g``,
    ``R_s = (X_s + m) / (round(s (n - m)) + m)`` with ``X_s ~ Binomial(round(s (n - m)), label_rate)``,
    is higher in the ``s_lo`` world. Under the normal approximation to both binomials, a
    threshold test on ``R`` at the point equally many standard deviations from both means
    is right with probability ``Phi((mu_lo - mu_hi) / (sd_lo + sd_hi))``. A learner whose
    predictions on ``g`` follow ``R`` can do no better through ``R`` alone; the group's size,
    which also differs between the worlds, is a separate signal this does not count.

    Parameters
    ----------
    n : int
        Training-set size (clean + poison).
    p : float in [0, 1)
        Poisoning rate.
    s_lo, s_hi : float
        The two prevalences of the attacked sub-population, ``s_lo < s_hi``.
    label_rate : float in [0, 1]
        ``Pr[Y = l | g]`` on clean data.

    Returns
    -------
    float in [0.5, 1]

    Examples
    --------
    >>> round(label_rate_oracle_accuracy(n=1000, p=0.03, s_lo=0.4, s_hi=0.6, label_rate=0.102), 2)
    0.78
    """
    from scipy.stats import norm

    check_scalar(n, name="n", kind=(int, np.integer), min_val=1)
    check_scalar(p, name="p", min_val=0.0, max_val=1.0, include_max=False)
    check_scalar(label_rate, name="label_rate", min_val=0.0, max_val=1.0)
    check_scalar(s_lo, name="s_lo", min_val=0.0, max_val=1.0)
    check_scalar(s_hi, name="s_hi", min_val=0.0, max_val=1.0)
    if not s_lo < s_hi:
        raise InvalidParameterError(f"s_lo must be below s_hi; got s_lo={s_lo}, s_hi={s_hi}")
    m = int(round(p * n))
    clean = n - m

    def moments(s: float) -> tuple[float, float]:
        k = int(round(s * clean))
        tot = k + m
        if tot == 0:
            return float("nan"), 0.0
        return (k * label_rate + m) / tot, math.sqrt(k * label_rate * (1 - label_rate)) / tot

    mu_lo, sd_lo = moments(s_lo)
    mu_hi, sd_hi = moments(s_hi)
    if not (np.isfinite(mu_lo) and np.isfinite(mu_hi)):
        return 0.5
    if sd_lo + sd_hi == 0:
        return 1.0 if mu_lo != mu_hi else 0.5
    return float(norm.cdf(abs(mu_lo - mu_hi) / (sd_lo + sd_hi)))

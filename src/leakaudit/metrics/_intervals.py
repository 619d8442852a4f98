"""Confidence intervals: Clopper-Pearson for rates, stratified bootstrap for AUC and TPR at FPR."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import stats

from .._random import RandomStateLike, check_random_state
from .._validation import check_scalar
from ..exceptions import InvalidInputError, NotEstimableWarning
from ._membership import _tpr_at_fpr_sorted, check_membership_inputs

__all__ = ["clopper_pearson", "bootstrap_auc_ci", "bootstrap_tpr_at_fpr_ci", "pearson"]


def clopper_pearson(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for a binomial rate k/n.

    Uses :meth:`scipy.stats.binomtest`'s ``proportion_ci(method="exact")``.
    """
    for arg, v in (("k", k), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InvalidInputError(f"{arg} must be an integer count; got {v!r} ({type(v).__name__})")
    if n <= 0:
        raise InvalidInputError(f"n must be > 0 for a rate interval; got {n}")
    if not 0 <= k <= n:
        raise InvalidInputError(f"k must be in [0, n={n}]; got {k}")
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def _check_boot(n_boot, confidence) -> None:
    check_scalar(n_boot, name="n_boot", kind=numbers.Integral, min_val=1)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)


def _auc_rows(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC of each row pair (B, n1) x (B, n0) by the rank-sum formula (ties = 1/2)."""
    n1, n0 = pos.shape[1], neg.shape[1]
    allv = np.concatenate([pos, neg], axis=1)
    ranks = stats.rankdata(allv, axis=1)
    return (ranks[:, :n1].sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def _stratified_resample(m, s, n_boot, rng):
    pos, neg = s[m == 1], s[m == 0]
    ip = rng.integers(0, pos.size, size=(n_boot, pos.size))
    ineg = rng.integers(0, neg.size, size=(n_boot, neg.size))
    return pos[ip], neg[ineg]


def bootstrap_auc_ci(
    is_member, scores, *, n_boot: int = 1000, confidence: float = 0.95, random_state: RandomStateLike = 0
) -> tuple[float, float]:
    """Percentile interval for AUC from a bootstrap that resamples members and non-members separately."""
    m, s = check_membership_inputs(is_member, scores)
    _check_boot(n_boot, confidence)
    rng = check_random_state(random_state)
    a = 1 - confidence
    out = []
    for start in range(0, n_boot, 100):  # chunks keep memory flat
        pos, neg = _stratified_resample(m, s, min(100, n_boot - start), rng)
        out.append(_auc_rows(pos, neg))
    vals = np.concatenate(out)
    return float(np.quantile(vals, a / 2)), float(np.quantile(vals, 1 - a / 2))


def bootstrap_tpr_at_fpr_ci(
    is_member, scores, fpr: float, *, n_boot: int = 1000, confidence: float = 0.95, random_state: RandomStateLike = 0
) -> tuple[float, float]:
    """Percentile interval for TPR at a fixed FPR (stratified bootstrap); NaNs when not estimable."""
    m, s = check_membership_inputs(is_member, scores)
    check_scalar(fpr, name="fpr", min_val=0.0, max_val=1.0, include_min=False)
    _check_boot(n_boot, confidence)
    if (m == 0).sum() * fpr < 1:
        warnings.warn(f"TPR at {fpr:g} FPR is not estimable from {(m == 0).sum()} non-members",
                      NotEstimableWarning, stacklevel=2)
        return float("nan"), float("nan")
    rng = check_random_state(random_state)
    vals = np.empty(n_boot)
    for b in range(n_boot):
        pos, neg = _stratified_resample(m, s, 1, rng)
        vals[b] = _tpr_at_fpr_sorted(pos[0], np.sort(neg[0])[::-1], fpr)
    a = 1 - confidence
    return float(np.quantile(vals, a / 2)), float(np.quantile(vals, 1 - a / 2))


def pearson(x, y) -> tuple[float, float]:
    """Pearson correlation and its two-sided p-value (:func:`scipy.stats.pearsonr`)."""
    from .._validation import check_vector, check_consistent_length

    x = check_vector(x, name="x")
    y = check_vector(y, name="y")
    check_consistent_length(x=x, y=y)
    if x.size < 3:
        raise InvalidInputError(f"pearson needs at least 3 pairs; got {x.size}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        warnings.warn("correlation is undefined for a constant input", NotEstimableWarning, stacklevel=2)
        return float("nan"), float("nan")
    r = stats.pearsonr(x, y)
    return float(r.statistic), float(r.pvalue)

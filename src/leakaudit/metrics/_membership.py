"""Membership-inference metrics on plain arrays.

Convention (TF Privacy's): ``is_member`` is 1 for members (the positive class)
and 0 for non-members; ``scores`` are higher for "more likely a member";
``decisions`` are 1 for "member".
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn import metrics as skm

from .._validation import check_consistent_length, check_scalar, check_vector, shown
from ..exceptions import InvalidInputError, NotEstimableWarning

__all__ = [
    "check_is_member",
    "check_membership_inputs",
    "roc_curve",
    "auc",
    "tpr_at_fpr",
    "membership_advantage",
    "advantage_at_threshold",
    "decision_metrics",
]


def check_is_member(is_member) -> np.ndarray:
    """Membership labels: a 1-D array of 0 (non-member) and 1 (member), or booleans; returned as int64."""
    m = check_vector(is_member, name="is_member", dtype=None)
    if m.dtype == bool:
        m = m.astype(np.int64)
    if m.dtype.kind == "f" and not np.isfinite(m).all():
        raise InvalidInputError("is_member contains NaN or inf; it must be 0 (non-member) or 1 (member)")
    if m.dtype.kind not in "iuf" or not np.isin(m, (0, 1)).all():
        raise InvalidInputError("is_member must hold only 0 (non-member) and 1 (member)")
    return m.astype(np.int64)


def check_membership_inputs(is_member, scores, *, scores_name: str = "scores", need_both: bool = True):
    """Validate (is_member, scores): 1-D, same length, finite, 0/1 labels, both classes present."""
    m = check_is_member(is_member)
    s = check_vector(scores, name=scores_name)
    check_consistent_length(is_member=m, **{scores_name: s})
    if need_both and (m.sum() == 0 or m.sum() == m.size):
        which = "non-members" if m.sum() == m.size else "members"
        raise InvalidInputError(f"is_member holds no {which}; membership metrics need both members and non-members")
    return m, s


def roc_curve(is_member, scores):
    """ROC curve with members as the positive class.

    Returns
    -------
    fpr, tpr, thresholds : ndarray of shape (n_thresholds,)
        Decision "member" iff ``score >= thresholds[i]`` (scikit-learn's rule).
    """
    m, s = check_membership_inputs(is_member, scores)
    return skm.roc_curve(m, s, drop_intermediate=False)


def auc(is_member, scores) -> float:
    """Area under the ROC curve (ties count one half)."""
    m, s = check_membership_inputs(is_member, scores)
    return float(skm.roc_auc_score(m, s))


def _tpr_at_fpr_sorted(pos: np.ndarray, neg_desc: np.ndarray, fpr: float) -> float:
    k = int(np.floor(fpr * neg_desc.size + 1e-9))
    if k >= neg_desc.size:
        return 1.0
    t = neg_desc[k]  # at most k negatives are strictly above t
    return float(np.mean(pos > t))


def tpr_at_fpr(is_member, scores, fpr: float) -> float:
    """The highest TPR of a threshold rule ``score > t`` whose FPR is at most ``fpr``.

    NaN with :class:`NotEstimableWarning` when the non-members are too few to
    measure that FPR (``n_nonmembers * fpr < 1``).
    """
    check_scalar(fpr, name="fpr", min_val=0.0, max_val=1.0, include_min=False)
    m, s = check_membership_inputs(is_member, scores)
    neg = np.sort(s[m == 0])[::-1]
    if neg.size * fpr < 1:
        need = 1.0 / fpr  # inf for a subnormal fpr such as 5e-324
        need_s = str(int(np.ceil(need))) if need < 1e15 else f"{need:.3g}"
        warnings.warn(
            f"TPR at {fpr:g} FPR is not estimable from {neg.size} non-members (need at least {need_s})",
            NotEstimableWarning,
            stacklevel=2,
        )
        return float("nan")
    return _tpr_at_fpr_sorted(s[m == 1], neg, fpr)


def membership_advantage(is_member, scores) -> float:
    """Yeom et al. (2018), Definition 4: Adv = TPR - FPR, maximised over thresholds.

    TF Privacy's ``get_attacker_advantage`` also takes the maximum over thresholds;
    Yeom's definition is for one fixed adversary (see :func:`advantage_at_threshold`).
    """
    fpr, tpr, _ = roc_curve(is_member, scores)
    return float(np.max(tpr - fpr))


def advantage_at_threshold(is_member, scores, threshold: float) -> float:
    """Adv = Pr[A=1 | member] - Pr[A=1 | non-member] for the rule ``score >= threshold`` (Yeom Def. 4)."""
    m, s = check_membership_inputs(is_member, scores)
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or np.isnan(threshold):
        raise InvalidInputError(f"threshold must be a real number (inf allowed, not NaN); got {shown(threshold)}")
    dec = s >= threshold
    return float(dec[m == 1].mean() - dec[m == 0].mean())


def decision_metrics(is_member, decisions) -> dict[str, float]:
    """Accuracy, precision, recall, F1 and advantage of hard decisions, "member" positive.

    Precision is NaN with :class:`NotEstimableWarning` when no record is called a member.
    """
    m, d = check_membership_inputs(is_member, decisions, scores_name="decisions")
    if not np.isin(d, (0, 1)).all():
        raise InvalidInputError("decisions must hold only 0 (non-member) and 1 (member)")
    d = d.astype(bool)
    mem = m.astype(bool)
    tp = int(np.sum(d & mem))
    fp = int(np.sum(d & ~mem))
    fn = int(np.sum(~d & mem))
    if tp + fp == 0:
        warnings.warn("precision is undefined: no record was called a member", NotEstimableWarning, stacklevel=2)
        precision = float("nan")
    else:
        precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    f1 = float("nan") if np.isnan(precision) or precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {
        "accuracy": float(np.mean(d == mem)),
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
        "advantage": float(d[mem].mean() - d[~mem].mean()),
        "tpr": float(recall),
        "fpr": float(d[~mem].mean()),
    }

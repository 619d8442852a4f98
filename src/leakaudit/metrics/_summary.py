"""One call that summarises an attack's scores with honest intervals."""

from __future__ import annotations

import warnings

from .._random import RandomStateLike
from .._results import Result
from ..exceptions import NotEstimableWarning
from ._intervals import auc_ci_method_used, bootstrap_auc_ci, bootstrap_tpr_at_fpr_ci
from ._membership import auc, check_membership_inputs, membership_advantage, tpr_at_fpr

__all__ = ["MembershipMetrics", "evaluate_membership", "DEFAULT_FPRS", "tpr_entry"]

DEFAULT_FPRS = (0.01, 0.001, 0.0001)


class MembershipMetrics(Result):
    """AUC, advantage and TPR at fixed FPRs of one attack, each with its interval.

    ``tpr_at_fpr`` maps the FPR (as a string, e.g. ``"0.001"``) to
    ``{"tpr": value, "ci": [low, high]}``; NaN where not estimable. ``auc_ci_method`` is the method the AUC
    interval used: the one asked for, or ``"disjoint-pairs"`` below the size rule (:func:`auc_ci_method_used`).
    """

    n_members: int
    n_nonmembers: int
    auc: float
    auc_ci: tuple[float, float]
    auc_ci_method: str = "delong-logit"
    advantage: float
    tpr_at_fpr: dict[str, dict[str, float | list[float]]]
    confidence: float


def tpr_entry(tpr_at_fpr, fpr: float):
    """The entry ``{"tpr": ..., "ci": [...]}`` of ``tpr_at_fpr`` (keyed by the FPR as a string) for ``fpr``, or None
    when that FPR was not measured; keys are compared as numbers ("0.001" and "1e-03" are one FPR; a key that is
    not a number is passed over)."""
    for k, v in (tpr_at_fpr or {}).items():
        try:
            if abs(float(k) - float(fpr)) < 1e-12:
                return v
        except (TypeError, ValueError):
            continue
    return None


#: an interval of a rate (0 to 1) at least this wide spans "nearly the whole range"
WIDE_INTERVAL = 0.9


def wide_interval_reason(interval, *, n_members: int, n_nonmembers: int, fpr: float | None = None) -> str:
    """Why the interval of a rate, an AUC or (with ``fpr``) the TPR at ``fpr``, spans nearly its whole range of 0 to
    1 (at least :data:`WIDE_INTERVAL` of it): too few records for that statistic, with their count. '' for a
    narrower or missing interval.

    >>> wide_interval_reason([0.0, 1.0], n_members=1000, n_nonmembers=1000, fpr=0.001)
    'the whole range: too few records for the TPR at 0.1% FPR (1,000 non-members, about 1 of them above its \
threshold; 1,000 members)'
    """
    try:
        lo, hi = float(interval[0]), float(interval[1])
    except (TypeError, ValueError, IndexError):
        return ""
    if not hi - lo >= WIDE_INTERVAL:  # NaN included
        return ""
    whole = "the whole range" if hi - lo >= 0.999 else "nearly the whole range"
    if fpr is None:
        return f"{whole}: too few records for the AUC ({n_members:,} members, {n_nonmembers:,} non-members)"
    above = n_nonmembers * fpr
    count = f"{above:,.0f}" if above >= 10 else f"{above:.2g}"
    return (f"{whole}: too few records for the TPR at {fpr * 100:g}% FPR ({n_nonmembers:,} non-members, about {count} "
            f"of them above its threshold; {n_members:,} members)")


def evaluate_membership(
    is_member,
    scores,
    *,
    fprs=DEFAULT_FPRS,
    n_boot: int = 1000,
    confidence: float = 0.95,
    random_state: RandomStateLike = 0,
    auc_ci_method: str = "delong-logit",
) -> MembershipMetrics:
    """AUC with its interval, max advantage, and TPR at each FPR (stratified bootstrap CI).

    ``auc_ci_method`` is passed to :func:`bootstrap_auc_ci` as ``method`` (default DeLong's variance
    on the logit scale; ``n_boot`` and ``random_state`` then serve the TPR intervals only).
    """
    m, s = check_membership_inputs(is_member, scores)
    n1 = int(m.sum())
    tprs = {}
    for f in fprs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotEstimableWarning)
            t = tpr_at_fpr(m, s, f)
            lo, hi = bootstrap_tpr_at_fpr_ci(m, s, f, n_boot=n_boot, confidence=confidence, random_state=random_state)
        tprs[repr(float(f))] = {"tpr": t, "ci": [lo, hi]}
    return MembershipMetrics(
        n_members=n1,
        n_nonmembers=m.size - n1,
        auc=auc(m, s),
        auc_ci=bootstrap_auc_ci(m, s, n_boot=n_boot, confidence=confidence, random_state=random_state,
                                method=auc_ci_method),
        auc_ci_method=auc_ci_method_used(n1, m.size - n1, auc_ci_method),
        advantage=membership_advantage(m, s),
        tpr_at_fpr=tprs,
        confidence=confidence,
    )

"""One call that summarises an attack's scores with honest intervals."""

from __future__ import annotations

import warnings

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._results import Result
from ..exceptions import NotEstimableWarning
from ._epsilon import _counts_above, _split
from ._intervals import auc_ci_method_used, bootstrap_auc_ci, bootstrap_tpr_at_fpr_ci, difference_interval
from ._membership import auc, check_membership_inputs, membership_advantage, tpr_at_fpr

__all__ = ["MembershipMetrics", "evaluate_membership", "against_chance", "DEFAULT_FPRS", "tpr_entry",
           "wide_interval_reason", "WIDE_INTERVAL"]

DEFAULT_FPRS = (0.01, 0.001, 0.0001)


class MembershipMetrics(Result):
    """AUC, advantage and TPR at fixed FPRs of one attack, each with its interval.

    ``tpr_at_fpr`` maps the FPR (as a string, e.g. ``"0.001"``) to
    ``{"tpr": value, "ci": [low, high]}``; NaN where not estimable. ``auc_ci_method`` is the method the AUC
    interval used: the one asked for, or ``"disjoint-pairs"`` below the size rule (:func:`auc_ci_method_used`).
    ``advantage`` is the largest TPR - FPR over all thresholds on all records (optimistic, no interval);
    ``against_chance`` the attack's accuracy and advantage on held-out records, with intervals
    (:func:`against_chance`).
    """

    n_members: int
    n_nonmembers: int
    auc: float
    auc_ci: tuple[float, float]
    auc_ci_method: str = "delong-logit"
    advantage: float
    tpr_at_fpr: dict[str, dict[str, float | list[float]]]
    confidence: float
    against_chance: dict | None = None


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
        against_chance=against_chance(m, s, confidence=confidence, random_state=random_state),
    )


def against_chance(is_member, scores, *, confidence: float = 0.95, random_state: RandomStateLike = 0) -> dict:
    """The attack's advantage over random guessing (Yeom et al. 2018, Definition 4: TPR - FPR) and its balanced
    accuracy (1 + advantage) / 2 (random guessing: 0.5), each with its interval at ``confidence``, measured on a
    random half of the records (stratified by membership, as for the empirical epsilon) with the threshold ("member
    iff score > t") of the largest TPR - FPR on the other half. The advantage's interval is Newcombe's hybrid one
    (:func:`difference_interval`), mapped alike for the accuracy. Fewer than 2 members or 2 non-members: NaN, with
    ``reason``."""
    m, s = check_membership_inputs(is_member, scores)
    sel, ev = _split(m, check_random_state(random_state))
    n1, n0 = int(m[ev].sum()), int(ev.size - m[ev].sum())
    out = {"accuracy": float("nan"), "accuracy_ci": [float("nan")] * 2, "advantage": float("nan"),
           "advantage_ci": [float("nan")] * 2, "threshold": float("nan"), "n_eval_members": n1,
           "n_eval_nonmembers": n0, "confidence": confidence}
    if min(n1, n0, int(m[sel].sum()), int(sel.size - m[sel].sum())) < 1:
        return {**out, "reason": "needs at least 2 members and 2 non-members (one of each in each half)"}
    u = np.unique(s[sel])
    cand = u[:-1] / 2 + u[1:] / 2 if u.size > 1 else u
    pos, neg = np.sort(s[sel][m[sel] == 1]), np.sort(s[sel][m[sel] == 0])
    t = float(cand[int(np.argmax(_counts_above(pos, cand) / pos.size - _counts_above(neg, cand) / neg.size))])
    k1, k0 = int(np.sum(s[ev][m[ev] == 1] > t)), int(np.sum(s[ev][m[ev] == 0] > t))
    adv, (lo, hi) = k1 / n1 - k0 / n0, difference_interval(k1, n1, k0, n0, confidence=confidence)
    return {**out, "accuracy": (1 + adv) / 2, "accuracy_ci": [(1 + lo) / 2, (1 + hi) / 2], "advantage": adv,
            "advantage_ci": [lo, hi], "threshold": t}

"""Metrics on plain arrays: ROC, AUC, TPR at fixed FPR, advantage, intervals, power floors, empirical epsilon."""

from . import _membership
from ._epsilon import EpsilonBound, empirical_epsilon
from ._intervals import (
    AUC_CI_METHODS,
    auc_ci_can_exceed,
    auc_ci_method_used,
    bootstrap_auc_ci,
    bootstrap_tpr_at_fpr_ci,
    clopper_pearson,
    delong_auc_variance,
    delong_placements,
    difference_interval,
    min_nonmembers_for_tpr,
    min_records_for_auc,
    paired_mean_interval,
    pearson,
    tpr_ci_can_exceed,
)
from ._membership import *  # noqa: F403
from ._summary import (DEFAULT_FPRS, WIDE_INTERVAL, MembershipMetrics, against_chance, evaluate_membership, tpr_entry,
                       wide_interval_reason)

__all__ = [
    *_membership.__all__,
    "clopper_pearson",
    "paired_mean_interval",
    "difference_interval",
    "bootstrap_auc_ci",
    "delong_auc_variance",
    "delong_placements",
    "AUC_CI_METHODS",
    "auc_ci_method_used",
    "bootstrap_tpr_at_fpr_ci",
    "auc_ci_can_exceed",
    "min_records_for_auc",
    "tpr_ci_can_exceed",
    "min_nonmembers_for_tpr",
    "empirical_epsilon",
    "EpsilonBound",
    "pearson",
    "MembershipMetrics",
    "evaluate_membership",
    "against_chance",
    "DEFAULT_FPRS",
    "tpr_entry",
    "wide_interval_reason",
    "WIDE_INTERVAL",
]

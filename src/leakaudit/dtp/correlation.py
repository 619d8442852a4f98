"""PDTP versus per-target attack accuracy (Long et al. §5.4–5.5, Tables 1–2, Figs 1–5, Fig 3).

Over a fixed set of targets (100 in the paper), ``avgPDTP(t)`` is the mean of
the PDTP measurements of t (10 in the paper) and ``per_target_acc(t)`` the share
of correct membership guesses on t (200 attacks). The paper reports the Pearson
correlation with its two-sided p-value (n = number of targets; spec §5.4
confirms n = 100 from the p-values), and threshold statements:

- among targets with PDTP > 1, the share with accuracy > 0.8 (84.62% on NN-Purchase)
  and > 0.6 (all);
- among targets with PDTP < 0.5, the highest accuracy (<= 0.665).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_array, check_consistent_length
from ..metrics import pearson
from .results import CorrelationResult

__all__ = ["pdtp_attack_correlation", "correlation_vs_measurements"]


def pdtp_attack_correlation(avg_pdtp: Any, per_target_accuracy: Any) -> CorrelationResult:
    """Pearson r and p-value of avg PDTP against per-target attack accuracy, plus the paper's threshold shares.

    Parameters
    ----------
    avg_pdtp : array-like of shape (n_targets,)
    per_target_accuracy : array-like of shape (n_targets,)

    Returns
    -------
    CorrelationResult
    """
    p = check_array(avg_pdtp, name="avg_pdtp", ndim=1)
    a = check_array(per_target_accuracy, name="per_target_accuracy", ndim=1)
    check_consistent_length(avg_pdtp=p, per_target_accuracy=a)
    r, pv = pearson(p, a)
    hi = p > 1.0
    lo = p < 0.5
    nan = float("nan")
    return CorrelationResult(
        n=int(p.size), r=r, p_value=pv,
        frac_above1_acc_gt_08=float(np.mean(a[hi] > 0.8)) if hi.any() else nan,
        frac_above1_acc_gt_06=float(np.mean(a[hi] > 0.6)) if hi.any() else nan,
        max_acc_below_05=float(a[lo].max()) if lo.any() else nan,
        n_above1=int(hi.sum()), n_below05=int(lo.sum()),
    )


def correlation_vs_measurements(pdtp_measurements: Any, per_target_accuracy: Any) -> tuple[np.ndarray, np.ndarray]:
    """Fig 3: Pearson r of the mean of the first j PDTP measurements with accuracy, for j = 1..M.

    Parameters
    ----------
    pdtp_measurements : array-like of shape (n_measurements, n_targets)
    per_target_accuracy : array-like of shape (n_targets,)

    Returns
    -------
    counts : (n_measurements,) the j values; r : (n_measurements,) the correlations (NaN if undefined)
    """
    M = check_array(pdtp_measurements, name="pdtp_measurements", ndim=2)
    a = check_array(per_target_accuracy, name="per_target_accuracy", ndim=1)
    if M.shape[1] != a.size:
        from ..exceptions import InvalidInputError

        raise InvalidInputError(f"pdtp_measurements has {M.shape[1]} targets; per_target_accuracy has {a.size}")
    cum = np.cumsum(M, axis=0) / np.arange(1, M.shape[0] + 1)[:, None]
    import warnings

    rs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j in range(M.shape[0]):
            rs.append(pearson(cum[j], a)[0])
    return np.arange(1, M.shape[0] + 1), np.asarray(rs)

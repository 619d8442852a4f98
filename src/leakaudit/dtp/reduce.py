"""Reducing DTP by removing high-risk records (Long et al. §8, Fig 6; spec long-dtp.md §7).

Paper procedure (``strategy="sorted"``): compute the DTP of every training record,
sort by the *initial* value (fixed order), remove records in that order one at a
time, and after each removal recompute the DTP of all remaining records and
record the maximum. In the paper (naive Bayes on 1.6M ACS records) the maximum
falls from 3.09 to 0.65 after one removal, rebounds to ~3 after the second,
then follows a sawtooth.

Improvements (spec §7, ours):

- ``greedy``: re-rank by the current values after every removal;
- ``group``: remove the current top record together with the records that
  share its rarest (attribute value, class) cell (naive Bayes), or its
  identical (x, y) copies (other learners) — groups that "rely on each other
  to keep DTP down";
- ``stop_at_threshold``: stop at the first point where max DTP <= threshold.

Every step also reports the accuracy of the model retrained on the remaining
records (the utility cost). As in the paper's §8 reading (spec §7), "DTP" here
is PDTP at x(t); for training-stable learners (naive Bayes) Thm 6.2 makes it
effectively DTP.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from .._validation import check_choice, check_scalar
from ..learners import check_fit_inputs, learner_family
from .pdtp import pdtp_values
from .results import ReductionResult

__all__ = ["reduce_dtp", "STRATEGIES"]

STRATEGIES = ("sorted", "greedy", "group")


def _values(learner, X, y, idx, bin_width, n_classes):
    return pdtp_values(learner, X[idx], y[idx], bin_width=bin_width, n_classes=n_classes, random_state=0)


def _group(learner, X, y, idx, t_pos, max_group_size):
    """Positions (into idx) of the records removed together with idx[t_pos] (just t when the group is large)."""
    Xr, yr = X[idx], y[idx]
    t = t_pos
    same_class = yr == yr[t]
    cat = learner._columns(X)[0] if learner_family(learner) == "naive-bayes" else np.zeros(0, np.int64)
    if cat.size:
        counts = [np.sum(same_class & (Xr[:, c] == Xr[t, c])) for c in cat]
        c = cat[int(np.argmin(counts))]  # the rarest (value, class) cell of t
        g = np.flatnonzero(same_class & (Xr[:, c] == Xr[t, c]))
    else:
        g = np.flatnonzero(np.all(Xr == Xr[t], axis=1) & same_class)
    return g if g.size <= max_group_size else np.array([t])


def reduce_dtp(
    learner: Any,
    X: Any,
    y: Any,
    *,
    strategy: str = "sorted",
    threshold: float = 1.0,
    max_removals: int = 20,
    stop_at_threshold: bool = False,
    bin_width: float | None = 0.01,
    X_eval: Any = None,
    y_eval: Any = None,
    n_classes: int | None = None,
    max_group_size: int = 10,
) -> ReductionResult:
    """Remove high-risk records and track the maximum DTP (Fig 6) and the accuracy cost.

    Parameters
    ----------
    learner : Learner
        Best with a closed-form ``loo_proba`` (naive Bayes): each step recomputes
        the values of every remaining record.
    X, y : the training set
    strategy : {"sorted", "greedy", "group"}, default="sorted" (the paper's)
    threshold : float, default=1.0 (DTP-1)
    max_removals : int, default=20
        Removal steps (a group removal counts as one step).
    stop_at_threshold : bool, default=False
        Stop at the first step where the maximum is <= threshold.
    bin_width : float or None, default=0.01
    X_eval, y_eval : evaluation set for the accuracy (default: the original X, y)
    max_group_size : int, default=10
        ``group`` strategy: a group larger than this is not "rare"; only the
        top record is removed then.

    Returns
    -------
    ReductionResult
        ``max_values[s]`` is the max after ``s`` removal steps; ``removed`` lists
        original row indices in removal order.
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    check_choice(strategy, name="strategy", choices=STRATEGIES)
    check_scalar(threshold, name="threshold", min_val=0.0)
    check_scalar(max_removals, name="max_removals", kind=int, min_val=0, max_val=len(X) - 2)
    check_scalar(max_group_size, name="max_group_size", kind=int, min_val=1)
    if X_eval is None:
        X_eval, y_eval = X, y
    else:
        X_eval, y_eval, _ = check_fit_inputs(X_eval, y_eval, task="classification", n_classes=n_classes)
    if learner_family(learner) == "naive-bayes" and learner.n_values is None:
        # keep the Laplace denominators (number of attribute values) fixed while records are removed
        _, _, nv = learner._columns(X)
        learner = clone(learner).set_params(n_values=nv)
    idx = np.arange(len(X))
    vals = _values(learner, X, y, idx, bin_width, n_classes)
    order = idx[np.argsort(-vals, kind="stable")]  # the paper's fixed order by initial value
    maxes, argmaxes, accs, removed = [], [], [], []
    stopped = None

    def record_step(vals, idx):
        i = int(np.argmax(vals))
        maxes.append(float(vals[i]))
        argmaxes.append(int(idx[i]))
        model = learner.fit(X[idx], y[idx], random_state=0, n_classes=n_classes)
        accs.append(float(np.mean(model.predict_proba(X_eval).argmax(axis=1) == y_eval)))

    record_step(vals, idx)
    if maxes[-1] <= threshold:
        stopped = 0
    step = 0
    while step < max_removals and not (stop_at_threshold and stopped is not None):
        if strategy == "sorted":
            drop = [int(order[len(removed)])] if len(removed) < len(order) else []
        elif strategy == "greedy":
            drop = [int(idx[int(np.argmax(vals))])]
        else:
            pos = _group(learner, X, y, idx, int(np.argmax(vals)), max_group_size)
            drop = [int(i) for i in idx[pos]]
        if not drop or len(idx) - len(drop) < 2:
            break
        removed.extend(drop)
        idx = np.setdiff1d(idx, drop)
        vals = _values(learner, X, y, idx, bin_width, n_classes)
        record_step(vals, idx)
        step += 1
        if stopped is None and maxes[-1] <= threshold:
            stopped = step
    return ReductionResult(
        strategy=strategy, kind="PDTP at x(t) (DTP for training-stable learners)", threshold=threshold,
        removed=removed, max_values=maxes, argmax_records=argmaxes, accuracy=accs, stopped_at=stopped,
        n_records=len(X), note=f"learner {type(learner).__name__}; bin width {bin_width}",
    )

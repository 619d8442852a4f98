"""Approximate leave-one-out outputs of scikit-learn's gradient boosting: the full model's trees, leaf values refitted.

Removing a record from a boosted ensemble cannot be done exactly without retraining: every tree is grown on the
residuals the earlier trees leave, so one record moves every later split search. What can be replayed exactly is
the rest of the training algorithm once the trees' splits are fixed. :func:`gradient_boosting_loo` keeps the splits
of the model trained on T and replays scikit-learn's training on T\\{t} with them: the initial prediction is the
class prior of T\\{t}, and stage by stage each leaf's value is the Newton step scikit-learn's
``_update_terminal_regions`` computes (``sum(w (y - p)) / sum(w p (1 - p))``, times ``(K - 1) / K`` for K > 2
classes), with t's weight 0 and the residuals of the replayed earlier stages. A leaf that held t alone is empty
then; t follows the split's other branch, as a tree grown without t would not have made that split. Replayed
without removing anything it gives the full model's outputs (a test checks it to 1e-10).

It is an approximation of the leave-one-out model: a tree grown on T\\{t} may choose other splits. Measured against
exact retraining on Adult (benchmarks/README.md, "Issue 66: PDTP of gradient boosting"; gb_leaf_refit_accuracy.py),
it mostly *under*states the change: of the records exact retraining puts above the DTP-1 threshold it finds about
a sixth. So it is an experiment kept here beside its measurement, not part of the package: the audit and
``leakaudit.dtp.pdtp`` retrain exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["leaf_refit_unsupported", "gradient_boosting_loo", "leaf_refit_outputs", "split_pipeline"]

# leave-one-out models replayed together: a (block, n_samples) float64 array per quantity
_BLOCK = 256


def split_pipeline(estimator: Any) -> tuple[Any, Any]:
    """(preprocessing or None, final estimator) of a Pipeline, or (None, estimator)."""
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline):
        steps = [s for _, s in estimator.steps]
        pre = Pipeline(estimator.steps[:-1]) if len(steps) > 1 else None
        return pre, steps[-1]
    return None, estimator


def leaf_refit_unsupported(estimator: Any) -> str | None:
    """Why :func:`gradient_boosting_loo` cannot replay ``estimator`` (an unfitted GradientBoostingClassifier, or a
    Pipeline ending in one); None when it can."""
    from sklearn.ensemble import GradientBoostingClassifier

    _, est = split_pipeline(estimator)
    if not isinstance(est, GradientBoostingClassifier):
        return f"{type(est).__name__} is not a GradientBoostingClassifier"
    p = est.get_params(deep=False)
    if p["loss"] != "log_loss":
        return f"loss={p['loss']!r} (only 'log_loss' is replayed)"
    if p["subsample"] != 1.0:
        return f"subsample={p['subsample']} (a row sample per stage is not replayed)"
    if p["init"] is not None:
        return "init='zero'" if isinstance(p["init"], str) else "a custom init estimator"
    if p["n_iter_no_change"] is not None:
        return "early stopping (n_iter_no_change)"
    return None


def _leaf_table(tree, Z) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
    """Each training row's leaf as a compact index, the leaves' node ids, and for every leaf that holds one
    training row, the compact leaf that row reaches once that leaf is empty (the split's other branch)."""
    t = tree.tree_
    node = tree.apply(Z)
    leaves, compact = np.unique(node, return_inverse=True)
    alone = {}
    counts = np.bincount(compact, minlength=leaves.size)
    parent = np.full(t.node_count, -1)
    for p_, (left, right) in enumerate(zip(t.children_left, t.children_right)):
        if left >= 0:
            parent[left] = p_
            parent[right] = p_
    for j in np.flatnonzero(counts == 1):
        row = int(np.flatnonzero(compact == j)[0])
        leaf = int(leaves[j])
        p_ = parent[leaf]
        if p_ < 0:
            continue  # a one-node tree: nothing to re-route
        sib = t.children_right[p_] if t.children_left[p_] == leaf else t.children_left[p_]
        x = _row(Z, row)
        nd = int(sib)
        while t.children_left[nd] >= 0:
            nd = int(t.children_left[nd] if x[t.feature[nd]] <= t.threshold[nd] else t.children_right[nd])
        alone[row] = int(np.searchsorted(leaves, nd))
    return compact, leaves, alone


def _row(Z, i: int) -> np.ndarray:
    r = Z[i]
    if hasattr(r, "toarray"):
        r = r.toarray()
    return np.asarray(r, dtype=np.float32).ravel()


def gradient_boosting_loo(est: Any, Z: Any, y: np.ndarray, records: np.ndarray) -> np.ndarray:
    """Leave-one-out outputs of a fitted GradientBoostingClassifier at each record, by leaf refitting.

    Parameters
    ----------
    est : fitted GradientBoostingClassifier (:func:`leaf_refit_unsupported` is None for it)
    Z : array or sparse matrix of shape (n_samples, n_features)
        The rows ``est`` was fitted on, as it saw them.
    y : ndarray of shape (n_samples,)
        Their labels, as ``est`` was given them.
    records : ndarray of int
        Rows t left out, one model each. ``records`` may hold ``-1``: a model with nothing left out.

    Returns
    -------
    ndarray of shape (n_records, n_fitted_classes)
        ``p_{T\\{t}}(.|x(t))`` over ``est.classes_`` (for ``-1``: the full model's output at row 0).
    """
    y_enc = np.searchsorted(est.classes_, y)
    K = len(est.classes_)
    n = len(y_enc)
    Y = np.eye(K)[y_enc] if K > 2 else y_enc[:, None].astype(np.float64)  # (n, trees per stage)
    tables = [[_leaf_table(est.estimators_[i, k], Z) for k in range(est.estimators_.shape[1])]
              for i in range(est.n_estimators_)]
    out = np.empty((len(records), K))
    for s in range(0, len(records), _BLOCK):
        out[s:s + _BLOCK] = _replay(est, Y, y_enc, n, tables, np.asarray(records[s:s + _BLOCK], np.int64))
    return out


def _replay(est, Y, y_enc, n, tables, recs) -> np.ndarray:
    K = len(est.classes_)
    b = len(recs)
    W = np.ones((b, n))
    gone = recs >= 0
    W[np.flatnonzero(gone), recs[gone]] = 0.0
    # initial prediction: the class prior of T\{t} (scikit-learn's DummyClassifier, through the loss's link)
    counts = np.bincount(y_enc, minlength=K)[None, :] - np.where(gone[:, None], np.eye(K)[y_enc[np.maximum(recs, 0)]],
                                                                   0.0)
    eps = np.finfo(np.float64).eps
    prior = np.clip(counts / counts.sum(axis=1, keepdims=True), eps, 1 - eps)
    F0 = est._loss.link.link(prior[:, 1] if K == 2 else prior)
    F = np.repeat(np.asarray(F0).reshape(b, 1, -1), n, axis=1)  # (b, n, trees per stage)
    lr = est.learning_rate
    scale = (K - 1) / K if K > 2 else 1.0
    # the replayed rows t whose leaf held t alone in a tree, per tree, are re-routed for their own model only
    row_of = {int(t): j for j, t in enumerate(recs) if t >= 0}
    for stage in tables:
        if K == 2:
            P = 1.0 / (1.0 + np.exp(-F[:, :, 0:1]))
        else:
            P = np.exp(F - F.max(axis=2, keepdims=True))
            P /= P.sum(axis=2, keepdims=True)
        G = Y[None] - P  # negative gradient at the stage's start (scikit-learn computes it once per stage)
        H = P * (1.0 - P)
        for k, (leaf, leaves, alone) in enumerate(stage):
            M = np.zeros((n, leaves.size))
            M[np.arange(n), leaf] = 1.0
            num = (W * G[:, :, k]) @ M
            den = (W * H[:, :, k]) @ M
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.where(np.abs(den) < 1e-150, 0.0, scale * num / den)
            step = v[:, leaf]  # (b, n)
            for t, alt in alone.items():
                j = row_of.get(t)
                if j is not None:
                    step[j, t] = v[j, alt]
            F[:, :, k] += lr * step
    Ft = F[np.arange(b), np.maximum(recs, 0)]  # (b, trees per stage)
    if K == 2:
        p1 = 1.0 / (1.0 + np.exp(-Ft[:, 0]))
        return np.column_stack([1.0 - p1, p1])
    P = np.exp(Ft - Ft.max(axis=1, keepdims=True))
    return P / P.sum(axis=1, keepdims=True)


def leaf_refit_outputs(fitted: Any, inputs: Any, y: np.ndarray, records: np.ndarray, n_classes: int,
                       p_full: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p_full, p_loo)`` at ``records`` over classes ``0..n_classes-1`` for a fitted GradientBoostingClassifier or
    Pipeline ending in one (``fitted``), given the rows it was fitted on as it took them (``inputs``), its integer
    labels ``y`` and the full model's outputs at the records (``p_full``, already over ``n_classes``)."""
    pre, est = split_pipeline(fitted)
    Z = inputs if pre is None else pre.transform(inputs)
    loo = gradient_boosting_loo(est, Z, np.asarray(y), np.asarray(records, np.int64))
    out = np.zeros((len(records), n_classes))
    out[:, np.asarray(est.classes_, np.int64)] = loo
    return np.asarray(p_full, np.float64), out

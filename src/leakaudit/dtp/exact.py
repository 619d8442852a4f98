"""Exact DTP by enumerating a small feature space (Long et al. Def 4.2).

``DTP_{A,T}(t) = max_{x in X^m, y in Y} | ln p_{A(T)}(y|x) - ln p_{A(T\\{t})}(y|x) |``

Brute force over all of ``X^m`` is feasible only when the space is small, e.g.
the 4-attribute ACS / Adult proxy of §8 (spec §2.2, §7). Leave-one-out models come
from ``learner.loo_proba(..., X_query=grid)`` (closed form for naive Bayes and
Bayes inference) or from retraining through an engine. Records with identical
``(x, y)`` have identical ``T \\ {t}``, so they share one computation (valid for
deterministic learners).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._validation import check_indices, check_scalar
from ..engine import Engine, reports_engine_stats
from ..exceptions import InvalidParameterError
from ..learners import capabilities, check_fit_inputs, learner_family
from ..learners.naive_bayes import row_groups
from .pdtp import _check_bin_width, abs_log_ratio, apply_binning
from .results import DTPResult

__all__ = ["enumerate_feature_space", "dtp_exact", "dtp_on_queries"]


def enumerate_feature_space(values: Sequence[Any], *, max_size: int = 2_000_000) -> np.ndarray:
    """Every feature vector of a product space.

    Parameters
    ----------
    values : sequence of length m
        For each feature, an int ``v`` (codes ``0..v-1``) or a sequence of its values.
    max_size : int
        Refuse spaces larger than this (enumeration would be infeasible).

    Returns
    -------
    ndarray of shape (prod of sizes, m)

    Examples
    --------
    >>> enumerate_feature_space([2, [5, 7]]).tolist()
    [[0.0, 5.0], [0.0, 7.0], [1.0, 5.0], [1.0, 7.0]]
    """
    if len(values) == 0:
        raise InvalidParameterError("values is empty; give the values of at least one feature")
    axes = []
    for i, v in enumerate(values):
        if np.isscalar(v):
            check_scalar(int(v), name=f"values[{i}]", kind=int, min_val=1)
            axes.append(np.arange(int(v), dtype=np.float64))
        else:
            a = np.asarray(v, dtype=np.float64).reshape(-1)
            if a.size == 0:
                raise InvalidParameterError(f"values[{i}] is empty")
            axes.append(a)
    size = int(np.prod([a.size for a in axes], dtype=np.float64))
    if size > max_size:
        raise InvalidParameterError(
            f"the feature space has {size} vectors, more than max_size={max_size}; enumeration is infeasible "
            "(use the stability bounds or the search estimate instead)"
        )
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1)


def dtp_on_queries(p_full: np.ndarray, p_loo: np.ndarray, *, bin_width: float | None = 0.01
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Max over queries and classes of the binned |ln ratio| (Def 4.2 restricted to the queries).

    Parameters
    ----------
    p_full : ndarray of shape (n_query, n_classes)
        ``p_{A(T)}(.|x)`` at the queries.
    p_loo : ndarray of shape (n_records, n_query, n_classes)
        ``p_{A(T\\{t})}(.|x)`` for each record t.

    Returns
    -------
    value : (n_records,); argmax query index : (n_records,); argmax class : (n_records,)
    """
    eps = abs_log_ratio(apply_binning(p_full, bin_width)[None], apply_binning(p_loo, bin_width))  # (R, Q, C)
    flat = eps.reshape(eps.shape[0], -1)
    j = flat.argmax(axis=1)
    C = eps.shape[2]
    return flat[np.arange(len(j)), j], j // C, j % C


@reports_engine_stats
def dtp_exact(
    learner: Any,
    X: Any,
    y: Any,
    *,
    feature_values: Sequence[Any] | None = None,
    records: Any = None,
    bin_width: float | None = 0.01,
    n_classes: int | None = None,
    random_state: Any = 0,
    chunk_queries: int = 50_000,
    engine: Engine | None = None,
) -> DTPResult:
    """Exact DTP of each record by enumerating the feature space (Def 4.2).

    Parameters
    ----------
    learner : Learner
        Deterministic learner; best with ``loo_proba`` (naive Bayes, Bayes inference).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    feature_values : sequence of length n_features, optional
        Values of each feature (int v for codes 0..v-1, or a list). Default: the
        learner's ``n_values`` when all features are categorical codes, else the
        distinct values seen in X.
    records : array-like of int, optional
        Records t (default: all).
    bin_width : float or None, default=0.01
    random_state : seed for learners that use one (the same seed for every model).
    chunk_queries : int
        Queries evaluated per block.
    engine : leakaudit.engine.Engine, optional
        Retrains the leave-one-out models of a learner without ``loo_proba``; default
        :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    DTPResult with ``values`` (n_records,), the attaining (x, y) and ``engine_stats``.
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    records = np.arange(len(X)) if records is None else check_indices(records, name="records", n=len(X))
    _check_bin_width(bin_width)
    if feature_values is None:
        nb = learner_family(learner) == "naive-bayes" and isinstance(learner.categorical, str)
        if nb and learner.n_values is not None and learner.categorical == "all":
            feature_values = list(np.asarray(learner.n_values, dtype=int))
        else:
            feature_values = [np.unique(X[:, j]) for j in range(X.shape[1])]
    if len(feature_values) != X.shape[1]:
        raise InvalidParameterError(f"feature_values has {len(feature_values)} entries for {X.shape[1]} features")
    grid = enumerate_feature_space(feature_values)
    # group identical (x, y) records: identical T\{t}
    first, inv = row_groups(np.concatenate([X[records], y[records][:, None].astype(float)], axis=1))
    reps = records[first]
    full = learner.fit(X, y, random_state=random_state, n_classes=n_classes)
    best = np.full(len(reps), -1.0)
    best_q = np.zeros(len(reps), dtype=np.int64)
    best_c = np.zeros(len(reps), dtype=np.int64)
    has_loo = capabilities(learner).loo is not None
    banks = None
    if not has_loo:
        everything = np.arange(len(X))
        banks = engine.fit_bank(learner, X, y, [np.delete(everything, t) for t in reps], [random_state] * len(reps),
                                n_classes=n_classes)
    R = len(reps)
    rchunk = max(1, int(3_000_000 // max(1, min(chunk_queries, len(grid)) * n_classes)))
    for q0 in range(0, len(grid), chunk_queries):
        G = grid[q0:q0 + chunk_queries]
        pf = full.predict_proba(G)
        for r0 in range(0, R, rchunk):
            rr = np.arange(r0, min(R, r0 + rchunk))
            if has_loo:
                pl = learner.loo_proba(X, y, reps[rr], X_query=G, n_classes=n_classes)
            else:
                pl = np.stack([banks.model(int(i)).predict_proba(G) for i in rr])
            v, qi, ci = dtp_on_queries(pf, pl, bin_width=bin_width)
            better = v > best[rr]
            best[rr[better]] = v[better]
            best_q[rr[better]] = qi[better] + q0
            best_c[rr[better]] = ci[better]
    # PDTP with the same binning, for the ratio DTP / PDTP
    p_t = full.predict_proba(X[reps])
    if has_loo:
        p_l = learner.loo_proba(X, y, reps, n_classes=n_classes)
    else:
        p_l = np.stack([banks.model(i).predict_proba(X[reps[i]:reps[i] + 1])[0] for i in range(R)])
    pd_ = abs_log_ratio(apply_binning(p_t, bin_width), apply_binning(p_l, bin_width)).max(axis=1)
    return DTPResult(
        records=records, values=best[inv], pdtp=pd_[inv], argmax_x=grid[best_q[inv]], argmax_y=best_c[inv],
        n_queries=len(grid), bin_width=bin_width, kind="exact", learner=type(learner).__name__,
    )

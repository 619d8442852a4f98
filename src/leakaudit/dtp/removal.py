"""The measured effect of removing records from the training set: PDTP and DTP-1 after, and the accuracy cost.

Long et al. §8 reduce DTP by removing the riskiest records and re-measuring; their Fig 6 shows why the
re-measurement matters: once a record is gone, others can rise above the threshold (the sawtooth).
:func:`~leakaudit.dtp.reduce_dtp` follows the paper's procedure step by step with one measurement per step.
:func:`removal_effect` answers the owner's question after an audit, for one removal of the named records:
retrained without them, do any of the remaining records break DTP-1 (the same two-stage measurement as the
audit's: paired leave-one-out PDTP, then :func:`~leakaudit.dtp.dtp1_test` on the records above the threshold),
and what does the retrained model lose in accuracy on held-out records?

The accuracy cost is measured over ``n_seeds`` paired training seeds: model s on the full set and model s on the
reduced set share seed s. Per evaluation record i, ``d_i`` = (share of seeds whose full model classifies i
correctly) - (the same for the reduced models); the cost is the mean of ``d_i`` with a normal-approximation
interval over the evaluation records (paired, so the seeds' shared randomness cancels as far as it can).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._random import spawn_seeds
from .._validation import check_scalar
from ..engine import Engine, reports_engine_stats
from ..exceptions import InvalidParameterError
from ..learners import capabilities, check_fit_inputs
from ..metrics import paired_mean_interval
from .pdtp import pdtp
from .results import RemovalEffect
from .screening import screened_pdtp, unmeasured_bound
from .significance import DTP1Deltas, dtp1_test, seed_free_deltas

__all__ = ["removal_effect"]


def accuracy_cost(correct_full: np.ndarray, correct_reduced: np.ndarray, confidence: float) -> dict:
    """Accuracy of the full and reduced models (mean over seeds and records) and the paired cost, each with an
    interval over the evaluation records. ``correct_*``: bool arrays of shape (n_seeds, n_eval)."""
    a, b = correct_full.mean(axis=0), correct_reduced.mean(axis=0)
    zeros = np.zeros_like(a)
    _, before = paired_mean_interval(a, zeros, confidence=confidence)
    _, after = paired_mean_interval(b, zeros, confidence=confidence)
    cost, (lo, hi) = paired_mean_interval(a, b, confidence=confidence)
    return {
        "accuracy_before": float(a.mean()), "accuracy_before_interval": [max(0.0, before[0]), before[1]],
        "accuracy_after": float(b.mean()), "accuracy_after_interval": [after[0], min(1.0, after[1])],
        "accuracy_cost": cost, "accuracy_cost_interval": [max(-1.0, lo), min(1.0, hi)],
    }


@reports_engine_stats
def removal_effect(
    learner: Any,
    X: Any,
    y: Any,
    remove: Any,
    *,
    X_eval: Any,
    y_eval: Any,
    records: Any = None,
    threshold: float = 1.0,
    statistical: bool = True,
    n_repeats: int = 1,
    test_repeats: int = 16,
    test_max_repeats: int | None = None,
    test_max_records: int | None = 200,
    confidence: float = 0.95,
    n_seeds: int = 5,
    n_classes: int | None = None,
    random_state: Any = None,
    estimate: Any = None,
    screen_fraction: float = 0.05,
    screen_sample: int = 500,
    screen_max_fraction: float = 0.25,
    engine: Engine | None = None,
    groups: Any = None,
) -> RemovalEffect:
    """Remove ``remove`` from the training set (X, y), retrain, and measure PDTP, DTP-1 and accuracy again.

    Parameters
    ----------
    learner : Learner
        The training algorithm.
    X : array-like of shape (n_samples, n_features)
        The training set T.
    y : array-like of shape (n_samples,)
    remove : array-like of int
        Rows of T to remove (e.g. the records an audit found significant for DTP-1).
    X_eval, y_eval : array-like of shape (n_eval, n_features), (n_eval,)
        Held-out records for the accuracy (not in T).
    records : array-like of int, optional
        Rows of T whose PDTP is measured after the removal (default: every remaining row); rows in ``remove``
        are dropped from it.
    threshold : float > 0, default=1.0
        The DTP-1 threshold (natural log).
    statistical : bool, default=True
        Also run :func:`~leakaudit.dtp.dtp1_test` on the records above ``threshold`` (else only the single
        measurement is reported, Long et al.'s rule).
    n_repeats, test_repeats, test_max_repeats, test_max_records :
        As ``pdtp``'s ``n_repeats`` and ``dtp1_test``'s ``n_repeats``, ``max_repeats`` and ``max_records``.
    confidence : float in (0, 1), default=0.95
        Of the DTP-1 test and of the accuracy intervals.
    n_seeds : int >= 2, default=5
        Paired training seeds behind the accuracy cost.
    n_classes : int, optional
    random_state : int, Generator or None
        Seeds the PDTP measurement (paired leave-one-out models share the reduced model's seed), the test and the
        accuracy models, each from its own stream.
    estimate : array-like of shape (n_samples,), optional
        A ranking of T's rows (largest first; NaN for rows without one, ranked last), e.g. their PDTP before the
        removal. Given, the measurement after the removal is screened (:func:`~leakaudit.dtp.screened_pdtp`):
        the top ``screen_fraction`` of the remaining rows by ``estimate`` (doubling up to
        ``screen_max_fraction`` while its tail holds more records than the sample that the rule counts: significant
        ones with ``statistical``, else those above the threshold) and a
        uniform ``screen_sample`` of the others; ``records`` is then not used. Records that only become exposed
        once the others are gone may rank low: the sample bounds what the unmeasured rows may hold.
    engine : leakaudit.engine.Engine, optional
        Trains every model (its cache and backends); None: :func:`leakaudit.engine.default_engine`.
    groups : array-like of int of shape (n_samples,), optional
        A privacy unit per row of T: PDTP and the DTP-1 test after the removal leave out whole units
        (:func:`~leakaudit.dtp.pdtp`'s ``groups``); ``remove`` should then hold whole units.

    Returns
    -------
    RemovalEffect
        Record indices are rows of the original T.
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    X_eval, y_eval, _ = check_fit_inputs(X_eval, y_eval, task="classification", n_classes=n_classes)
    check_scalar(threshold, name="threshold", min_val=0.0, include_min=False)
    check_scalar(n_seeds, name="n_seeds", kind=int, min_val=2)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    n = len(X)
    remove = np.unique(np.asarray(remove, dtype=np.int64).ravel())
    if remove.size == 0 or remove.min() < 0 or remove.max() >= n:
        raise InvalidParameterError(f"remove must hold between 1 and {n - 2} distinct rows of X (0..{n - 1}); "
                         f"got {remove.size} rows" + ("" if remove.size == 0 else
                                                       f" from {remove.min()} to {remove.max()}"))
    if n - remove.size < 2:
        raise InvalidParameterError(f"remove leaves {n - remove.size} of {n} rows of X; at least 2 must remain")
    keep = np.setdiff1d(np.arange(n), remove)
    new_index = np.full(n, -1, dtype=np.int64)
    new_index[keep] = np.arange(keep.size)
    measured = keep if records is None else np.setdiff1d(np.unique(np.asarray(records, dtype=np.int64)), remove)
    s_pdtp, s_test, s_acc = spawn_seeds(random_state, 3)

    Xr, yr = X[keep], y[keep]
    gr = None if groups is None else np.asarray(groups, dtype=np.int64)[keep]
    screening = None
    known = DTP1Deltas()  # the test's repeats of members tested while the screen grew, reused by the test below

    def retest(recs, vals):  # the DTP-1 test after the removal
        return dtp1_test(learner, Xr, yr, records=recs, threshold=threshold, n_repeats=test_repeats,
                         max_repeats=test_max_repeats, confidence=confidence, max_records=test_max_records,
                         stage1_values=vals, n_classes=n_classes, random_state=s_test, engine=engine,
                         known_deltas=known, groups=gr)

    if estimate is None:
        seed_free = not capabilities(learner).stochastic  # the test below reuses its models (seed_free_deltas)
        res = pdtp(learner, Xr, yr, records=new_index[measured], n_classes=n_classes, seed_policy="paired",
                   n_repeats=n_repeats, random_state=s_pdtp, engine=engine, keep_outputs=seed_free, groups=gr)
        if seed_free and statistical:
            seed_free_deltas(learner, res, s_test, into=known)
        values = np.asarray(res.values, float)
    else:
        est = np.asarray(estimate, dtype=np.float64)
        if est.shape != (n,):
            raise InvalidParameterError(f"estimate must have one value per row of X ({n}); got shape {est.shape}")
        est = np.where(np.isnan(est), -np.inf, est)[keep]
        s_sample = spawn_seeds(s_pdtp, 1)[0]

        def significant(recs, vals):  # the members the statistical rule counts grow the top (screened_pdtp)
            t = retest(recs, vals)
            return np.isin(recs, [int(r) for r, p in zip(t.records, t.p_value) if p <= 1 - confidence])

        sc = screened_pdtp(learner, Xr, yr, est, threshold=threshold, fraction=screen_fraction,
                           n_sample=screen_sample, max_fraction=max(screen_max_fraction, screen_fraction),
                           n_classes=n_classes, n_repeats=n_repeats, random_state=s_pdtp, sample_state=s_sample,
                           significant=significant if statistical else None, engine=engine, groups=gr)
        measured, values = keep[sc.records], np.asarray(sc.values, float)
        sample_values = sc.value(sc.sample)
        k_above = int(np.sum(sample_values > threshold))
        screening = {"n_top": int(sc.n_top), "n_sample": int(sc.sample.size), "capped": bool(sc.capped),
                     "sample_above": k_above, "n_unmeasured": int(keep.size - measured.size),
                     "unmeasured_above": unmeasured_bound(k_above, int(sc.sample.size), int(keep.size - measured.size),
                                                          confidence=confidence)}
    above = measured[values > threshold]
    significant: list[int] | None = None
    untested: list[int] = []
    if statistical:
        significant = []
        if above.size:
            test = retest(new_index[above], values[values > threshold])
            significant = [int(keep[r]) for r, s in zip(test.records, test.significant) if s]
            untested = [int(keep[r]) for r in test.untested]

    seeds = [int(s) for s in spawn_seeds(s_acc, n_seeds)]
    subsets = [np.arange(n)] * n_seeds + [keep] * n_seeds
    probs = np.asarray(engine.predict_many(learner, X, y, subsets, seeds + seeds, X_eval, n_classes=n_classes))
    correct = probs.argmax(axis=2) == y_eval[None, :]
    i = int(np.argmax(values)) if values.size else None
    return RemovalEffect(
        removed=[int(r) for r in remove],
        n_records=int(n),
        threshold=float(threshold),
        records_measured=int(measured.size),
        screening=screening,
        max_after=float(values[i]) if i is not None else float("nan"),
        argmax_after=int(measured[i]) if i is not None else -1,
        records_above_after=[int(r) for r in above],
        records_significant_after=significant,
        records_untested_after=untested,
        confidence=float(confidence),
        n_seeds=int(n_seeds),
        n_eval=len(y_eval),
        **accuracy_cost(correct[:n_seeds], correct[n_seeds:], confidence),
    )

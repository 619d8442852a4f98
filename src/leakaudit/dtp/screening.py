"""PDTP at scale: rank the training records by a cheap estimate of their leave-one-out change, measure exactly
the top of the ranking and a random sample of the rest.

Exact PDTP retrains the model once per record, so its cost grows with the square of the training set. The
reference models an audit trains anyway (LiRA's complementary halves) already show how each record moves the
recipe's output: every record is IN for half of them and OUT for the other half, so the difference between the
two groups' mean binned log-probabilities at the record is an estimate of its expected leave-one-out change over
training sets (Feldman and Zhang's memorisation estimate, in PDTP's units):

    est(t) = max_y | mean_{k: t in S_k} ln bin(p_k(y|x_t)) - mean_{k: t not in S_k} ln bin(p_k(y|x_t)) |

The records whose change is significant under the statistical DTP-1 rule are the ones whose expected change is
large, so they sit at the top of this ranking (measured: benchmarks/pdtp_screening.py). Single PDTP values above
the threshold that come from training noise are spread over the whole ranking; the random sample measures how
often they occur among the records not measured exactly (:func:`unmeasured_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_scalar
from ..engine import Engine, EngineStats, reports_engine_stats
from ..exceptions import InvalidInputError
from .pdtp import apply_binning

__all__ = ["reference_loo_shift", "screen_plan", "screened_pdtp", "unmeasured_bound", "tail_exceeds_sample",
           "ScreenedPDTP"]


def reference_loo_shift(probs, in_mask, *, bin_width: float | None = 0.01) -> np.ndarray:
    """Each record's estimated leave-one-out change: IN-minus-OUT mean of ln bin(p) over reference models.

    Parameters
    ----------
    probs : array of shape (n_models, n_records, n_classes)
        Reference models' outputs at the records.
    in_mask : bool array of shape (n_models, n_records)
        Whether model k trained on record t; every record needs at least one IN and one OUT model.
    bin_width : float or None, default=0.01
        Long et al.'s output binning (as in :func:`~leakaudit.dtp.pdtp`).

    Returns
    -------
    ndarray of shape (n_records,)
        ``max_y |mean_IN ln bin p - mean_OUT ln bin p|`` (nats).
    """
    P = np.asarray(probs, dtype=np.float64)
    M = np.asarray(in_mask, dtype=bool)
    if P.ndim != 3 or M.shape != P.shape[:2]:
        raise InvalidInputError(f"probs must have shape (n_models, n_records, n_classes) and in_mask "
                                f"(n_models, n_records); got {P.shape} and {M.shape}")
    n_in = M.sum(0)
    n_out = M.shape[0] - n_in
    if (n_in == 0).any() or (n_out == 0).any():
        raise InvalidInputError("every record needs at least one reference model that trained on it and one that "
                                "did not")
    L = np.log(np.maximum(apply_binning(P, bin_width), 1e-300))
    w = M[:, :, None].astype(np.float64)
    mean_in = (L * w).sum(0) / n_in[:, None]
    mean_out = (L * (1.0 - w)).sum(0) / n_out[:, None]
    return np.abs(mean_in - mean_out).max(axis=1)


def screen_plan(estimate, *, n_top: int, n_sample: int, random_state=None) -> tuple[np.ndarray, np.ndarray,
                                                                                        np.ndarray]:
    """The records to measure exactly: the ``n_top`` largest estimates and a uniform sample of the rest.

    Returns
    -------
    order : ndarray of int, shape (n_records,)
        All records, largest estimate first (ties by record number).
    top : ndarray of int
        ``order[:n_top]``.
    sample : ndarray of int, sorted
        ``n_sample`` records drawn without replacement from ``order[n_top:]`` (fewer if fewer remain).
    """
    est = np.asarray(estimate, dtype=np.float64)
    check_scalar(n_top, name="n_top", kind=(int, np.integer), min_val=0)
    check_scalar(n_sample, name="n_sample", kind=(int, np.integer), min_val=0)
    order = np.lexsort((np.arange(est.size), -est))
    top = order[:n_top]
    rest = order[n_top:]
    rng = np.random.default_rng(random_state)
    sample = np.sort(rng.choice(rest, size=min(n_sample, rest.size), replace=False)) if rest.size else rest
    return order, top, sample


def tail_exceeds_sample(tail_above: int, tail_n: int, sample_above: int, sample_n: int, *,
                        alpha: float = 0.05) -> bool:
    """Whether the bottom of the measured top still holds more records above the threshold than the random sample
    of the unmeasured ones does (one-sided Fisher exact test at ``alpha``): the ranking has not yet reached the
    level of the rest, so the measured top should grow."""
    from scipy.stats import fisher_exact

    if tail_n == 0 or tail_above == 0:
        return False
    if sample_n == 0:
        return True
    table = [[tail_above, tail_n - tail_above], [sample_above, sample_n - sample_above]]
    return bool(fisher_exact(table, alternative="greater").pvalue <= alpha)


def unmeasured_bound(k: int, m: int, n_unmeasured: int, *, confidence: float = 0.95) -> dict:
    """What a uniform sample of ``m`` unmeasured records, ``k`` of them positive, says about all ``n_unmeasured``.

    Returns the share (Clopper-Pearson interval at ``confidence``) and the implied count's upper end.
    """
    from ..metrics import clopper_pearson

    if m == 0:
        return {"k": int(k), "m": 0, "share": None, "share_interval": None, "count_upper": None,
                "n_unmeasured": int(n_unmeasured)}
    lo, hi = clopper_pearson(int(k), int(m), confidence=confidence)
    return {"k": int(k), "m": int(m), "share": k / m, "share_interval": [float(lo), float(hi)],
            "count_upper": int(np.ceil(hi * n_unmeasured)), "n_unmeasured": int(n_unmeasured)}


@dataclass
class ScreenedPDTP:
    """Stage 1 of a screened PDTP measurement.

    Attributes
    ----------
    records, values : ndarray of shape (n_measured,)
        The records measured exactly (sorted) and their PDTP.
    order : ndarray of shape (n_records,)
        Every record, largest estimate first.
    n_top : int
        The measured top of ``order`` (after any extension).
    sample : ndarray of int
        The random sample's records outside the measured top: a uniform sample of ``order[n_top:]``.
    extensions : int
        How many times the top doubled.
    capped : bool
        The top stopped at ``max_fraction`` while its tail still held more records above the threshold than the
        sample (the ranking had not reached the level of the rest).
    engine_stats : EngineStats or None
        What the engine did to train the models.
    """

    records: np.ndarray
    values: np.ndarray
    order: np.ndarray
    n_top: int
    sample: np.ndarray
    extensions: int
    capped: bool = False
    engine_stats: EngineStats | None = None

    def value(self, records) -> np.ndarray:
        return self.values[np.searchsorted(self.records, np.asarray(records, dtype=np.int64))]


@reports_engine_stats
def screened_pdtp(learner, X, y, estimate, *, threshold: float = 1.0, fraction: float = 0.05, n_sample: int = 500,
                  max_fraction: float = 1.0, n_classes: int | None = None, n_repeats: int = 1, random_state=None,
                  sample_state=None, engine: Engine | None = None) -> ScreenedPDTP:
    """Paired PDTP of the top ``fraction`` of the records ranked by ``estimate`` and of a random sample of the rest.

    The top doubles while its bottom half holds significantly more records above ``threshold`` than the sample
    of the records outside it (:func:`tail_exceeds_sample`): the ranking has not yet reached the level of the
    rest; it stops at ``max_fraction`` of the records (``capped``). The sample's bound on the unmeasured records
    (:func:`unmeasured_bound`) holds either way: the sample is uniform over them. ``random_state`` seeds the
    models (as :func:`~leakaudit.dtp.pdtp`'s), ``sample_state`` the sample.

    Parameters
    ----------
    learner : Learner
    X : array of shape (n_records, n_features)
        The training set.
    y : array of shape (n_records,)
    estimate : array of shape (n_records,)
        Any ranking score, largest first (e.g. :func:`reference_loo_shift`).
    engine : leakaudit.engine.Engine, optional
        Retrains the models; default :func:`leakaudit.engine.default_engine`.
    """
    from .pdtp import pdtp

    X = np.asarray(X)
    n = X.shape[0]
    est = np.asarray(estimate, dtype=np.float64)
    if est.shape != (n,):
        raise InvalidInputError(f"estimate must have one value per record ({n}); got shape {est.shape}")
    check_scalar(fraction, name="fraction", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(max_fraction, name="max_fraction", min_val=fraction, max_val=1.0)
    block = min(n, max(int(np.ceil(fraction * n)), 1))
    cap = min(n, max(int(np.ceil(max_fraction * n)), block))
    capped = False
    order, _, sample = screen_plan(est, n_top=block, n_sample=n_sample, random_state=sample_state)
    measured: dict[int, float] = {}

    def measure(recs) -> None:
        recs = np.sort(np.asarray([r for r in recs if int(r) not in measured], dtype=np.int64))
        if recs.size:
            res = pdtp(learner, X, y, records=recs, n_classes=n_classes, seed_policy="paired", n_repeats=n_repeats,
                       random_state=random_state, engine=engine, keep_outputs=False)
            measured.update(zip(recs.tolist(), np.asarray(res.values, float).tolist()))

    def above(recs) -> int:
        return sum(measured[int(r)] > threshold for r in recs)

    measure(np.r_[order[:block], sample])
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    extensions = 0
    while block < n:
        outside = sample[rank[sample] >= block]
        tail = order[block // 2:block]
        if not tail_exceeds_sample(above(tail), tail.size, above(outside), outside.size):
            break
        if block >= cap:
            capped = True
            break
        block = min(cap, 2 * block)
        measure(order[:block])
        extensions += 1
    records = np.array(sorted(measured), dtype=np.int64)
    return ScreenedPDTP(records=records, values=np.array([measured[int(r)] for r in records]), order=order,
                        n_top=int(block), sample=sample[rank[sample] >= block], extensions=extensions,
                        capped=capped)

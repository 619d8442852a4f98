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
the threshold that come from training noise are spread over the whole ranking, more often near its top (records
whose outputs move most between training sets), so the measured top grows by the records the DTP-1 check counts
(significant ones, under the statistical rule), not by single exceedances. The random sample measures how often
they occur among the records not measured exactly (:func:`unmeasured_bound`), and :func:`sample_for_allowance`
gives the sample that bounds them within a stated allowance.

A bagged forest carries a sharper estimate of its own (:func:`forest_oob_shift`): every tree is a model trained
on a bootstrap sample of the very training set audited, and the trees whose sample left a record out predict it
as a forest retrained without it would. The gap between a forest's output at the record and its out-of-bag output
estimates the record's systematic leave-one-out change at this training set (the DTP-1 test's estimand), and a
t-interval over independent forests bounds it, so the measured top can be every record whose change may reach the
threshold (``cut`` in :func:`screened_pdtp`): a record whose change exceeds it is left unmeasured with probability
at most ``miss_rate``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_scalar
from ..engine import Engine, EngineStats, chunk_length, reports_engine_stats
from ..exceptions import InvalidInputError
from ..learners import Learner
from .pdtp import apply_binning

__all__ = [
    "OOBShift",
    "ScreenedPDTP",
    "forest_oob_shift",
    "oob_ensemble",
    "reference_loo_shift",
    "sample_for_allowance",
    "screen_plan",
    "screened_pdtp",
    "tail_exceeds_sample",
    "unmeasured_bound",
]


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
    # a float64 array is read as it is, in chunks of models: it may be a disk-backed array (engine/_store.py)
    P = probs if isinstance(probs, np.ndarray) and probs.dtype == np.float64 else np.asarray(probs, dtype=np.float64)
    M = np.asarray(in_mask, dtype=bool)
    if P.ndim != 3 or M.shape != P.shape[:2]:
        raise InvalidInputError(f"probs must have shape (n_models, n_records, n_classes) and in_mask "
                                f"(n_models, n_records); got {P.shape} and {M.shape}")
    n_in = M.sum(0)
    n_out = M.shape[0] - n_in
    if (n_in == 0).any() or (n_out == 0).any():
        raise InvalidInputError("every record needs at least one reference model that trained on it and one that "
                                "did not")
    sum_in, sum_out = np.zeros(P.shape[1:]), np.zeros(P.shape[1:])
    step = chunk_length(P.shape[0], 4 * P[0].nbytes)  # the chunk read, binned, its log and a product
    for s in range(0, P.shape[0], step):
        L = np.log(np.maximum(apply_binning(P[s:s + step], bin_width), 1e-300))
        w = M[s:s + step, :, None].astype(np.float64)
        for L_k, w_k in zip(L, w):  # model by model: the sums of one sum(axis=0), whatever the chunks
            sum_in += L_k * w_k
            sum_out += L_k * (1.0 - w_k)
    mean_in = sum_in / n_in[:, None]
    mean_out = sum_out / n_out[:, None]
    return np.abs(mean_in - mean_out).max(axis=1)


def oob_ensemble(learner):
    """An unfitted scikit-learn ensemble that trains what ``learner`` trains and keeps out-of-bag outputs, or None:
    the learner's own ``oob_estimator()`` (a :class:`~leakaudit.learners.RandomForest` with ``bootstrap=True``
    gives scikit-learn's ``RandomForestClassifier`` with its parameters; a
    :class:`~leakaudit.learners.SklearnLearner` whose estimator bootstraps and offers ``oob_score`` a clone of it)."""
    return learner.oob_estimator() if isinstance(learner, Learner) else None


@dataclass
class OOBShift:
    """Each record's systematic leave-one-out change estimated from out-of-bag outputs (:func:`forest_oob_shift`).

    Attributes
    ----------
    estimate : ndarray of shape (n_records,)
        ``max_c |mean_f d_fc|``, the mean over forests of the bin-aware ln ratio of the forest's output to its
        out-of-bag output (nats).
    upper : ndarray of shape (n_records,)
        ``max_c (|mean_f d_fc| + t_{1 - miss_rate, F - 1} se_c)``: a one-sided upper confidence bound on the
        change; inf where fewer than two forests left the record out of some tree.
    n_forests : int
    miss_rate : float
    """

    estimate: np.ndarray
    upper: np.ndarray
    n_forests: int
    miss_rate: float


def forest_oob_shift(learner, X, y, *, n_forests: int = 16, miss_rate: float = 0.05, bin_width: float | None = 0.01,
                     n_classes: int | None = None, random_state=None) -> OOBShift:
    """Each training record's systematic leave-one-out change, estimated from bagged forests' out-of-bag outputs.

    Forest f (of ``n_forests``, independent seeds, each trained on all of ``X``) gives the record's output
    ``p_f`` and its out-of-bag output ``q_f`` (the mean over the trees whose bootstrap sample left it out: what a
    forest trained without the record predicts there). With ``d_fc`` the bin-aware ln ratio of ``p_f`` to ``q_f`` at
    class c (:func:`~leakaudit.dtp.bin_aware_log_ratio`, the DTP-1 test's per-repeat quantity), the mean over
    forests estimates the test's estimand ``mu_c = E_seed[ln p_full / p_loo]`` at this training set, and the
    one-sided t bound at ``1 - miss_rate`` holds ``max_c |mu_c|`` below ``upper`` with probability at least
    ``1 - miss_rate`` (per record; normal approximation of the mean of independent forests).

    Parameters
    ----------
    learner : Learner
        One that :func:`oob_ensemble` supports (a bootstrapped forest or bagging ensemble).
    X : array of shape (n_records, n_features)
        The training set.
    y : array of shape (n_records,)
    n_forests : int >= 2, default=16
    miss_rate : float in (0, 1), default=0.05
    bin_width : float or None, default=0.01
    n_classes : int, optional
        Classes (labels 0..n_classes-1); default: ``max(y) + 1``.
    random_state : None, int or sequence of int
        Seeds the forests.

    Returns
    -------
    OOBShift
    """
    import warnings

    from scipy import stats

    from .significance import bin_aware_log_ratio

    check_scalar(n_forests, name="n_forests", kind=(int, np.integer), min_val=2)
    check_scalar(miss_rate, name="miss_rate", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    proto = oob_ensemble(learner)
    if proto is None:
        raise InvalidInputError(f"forest_oob_shift needs a bootstrapped forest or bagging ensemble; got "
                                f"{type(learner).__name__} (see oob_ensemble)")
    X = np.asarray(X)
    y = np.asarray(y).astype(np.int64)
    n = X.shape[0]
    if y.shape != (n,):
        raise InvalidInputError(f"y must have one label per row of X ({n}); got shape {y.shape}")
    C = int(n_classes) if n_classes is not None else int(y.max()) + 1
    seeds = np.random.default_rng(random_state).integers(0, 2**31 - 1, size=n_forests)
    D = np.full((n_forests, n, C), np.nan)
    for f, seed in enumerate(seeds):
        model = proto.set_params(random_state=int(seed))
        with warnings.catch_warnings():
            # records no tree left out get NaN out-of-bag outputs; they are handled below
            warnings.simplefilter("ignore", UserWarning)
            model.fit(X, y)
        cols = np.asarray(model.classes_, dtype=np.int64)
        p = np.zeros((n, C))
        q = np.zeros((n, C))
        p[:, cols] = model.predict_proba(X)
        q[:, cols] = model.oob_decision_function_
        ok = np.isfinite(q).all(axis=1)
        D[f, ok] = bin_aware_log_ratio(p[ok], q[ok], bin_width=bin_width)
    k = np.isfinite(D[:, :, 0]).sum(0)  # forests that left the record out of some tree
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: records no forest left out
        mean = np.abs(np.nanmean(D, axis=0))
        se = np.nanstd(D, axis=0, ddof=1) / np.sqrt(k)[:, None]
    t = stats.t.ppf(1.0 - miss_rate, np.maximum(k - 1, 1))[:, None]
    estimate = np.where(k > 0, mean.max(axis=1), np.inf)  # unknown: measure it
    upper = np.where(k >= 2, (mean + t * se).max(axis=1), np.inf)
    return OOBShift(estimate=estimate, upper=upper, n_forests=int(n_forests), miss_rate=float(miss_rate))


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
    """Whether the bottom of the measured top still holds more records that count (above the threshold, or
    significant) than the random sample of the unmeasured ones does (one-sided Fisher exact test at ``alpha``): the
    ranking has not yet reached the level of the rest, so the measured top should grow."""
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


def sample_for_allowance(n_unmeasured: int, allowance: int, *, confidence: float = 0.95) -> int | None:
    """The smallest uniform sample of ``n_unmeasured`` records that, holding no positive record, bounds the positive
    ones at ``allowance`` or fewer (the count :func:`unmeasured_bound` gives).

    With none of ``m`` sampled records positive, the upper end of the two-sided Clopper-Pearson interval at
    ``confidence`` is ``1 - ((1 - confidence) / 2) ** (1 / m)``, so ``m >= ln((1 - confidence) / 2) /
    ln(1 - allowance / n_unmeasured)``; about ``ln(2 / (1 - confidence)) / share`` records for an allowance of a
    ``share`` of them, whatever their number. Returns 0 when ``allowance >= n_unmeasured`` (nothing to bound) and
    None when ``allowance`` is 0 (no sample short of every record proves that none is positive).

    Examples
    --------
    >>> sample_for_allowance(31_861, 163, confidence=0.996)  # 0.5 % of the full Adult training set
    1212
    """
    check_scalar(n_unmeasured, name="n_unmeasured", kind=(int, np.integer), min_val=0)
    check_scalar(allowance, name="allowance", kind=(int, np.integer), min_val=0)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    if allowance >= n_unmeasured:
        return 0
    if allowance == 0:
        return None
    m = int(np.ceil(np.log((1.0 - confidence) / 2.0) / np.log1p(-allowance / n_unmeasured)))
    while m > 1 and unmeasured_bound(0, m - 1, n_unmeasured, confidence=confidence)["count_upper"] <= allowance:
        m -= 1  # the closed form rounded up too far
    while unmeasured_bound(0, m, n_unmeasured, confidence=confidence)["count_upper"] > allowance:
        m += 1  # or the interval's numerics need one more
    return m


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
        The top stopped at ``max_fraction`` while its tail still held more records than the sample (the ranking
        had not reached the level of the rest), or while more records reached ``cut``.
    counted : str
        What the doubling compared: ``"significant"`` records (with ``significant`` given) or records ``"above"``
        the threshold.
    last_look : dict or None
        The last doubling decision: ``n_top``, ``tail_hits`` of ``tail_n`` and ``sample_hits`` of ``sample_n``
        (records counted as ``counted`` says), and ``grow`` (None: no doubling rule ran, as with ``cut``).
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
    counted: str = "above"
    last_look: dict | None = None
    engine_stats: EngineStats | None = None

    def value(self, records) -> np.ndarray:
        return self.values[np.searchsorted(self.records, np.asarray(records, dtype=np.int64))]


@reports_engine_stats
def screened_pdtp(learner, X, y, estimate, *, threshold: float = 1.0, fraction: float = 0.05, n_sample: int = 500,
                  max_fraction: float = 1.0, cut: float | None = None, n_classes: int | None = None,
                  n_repeats: int = 1, random_state=None, sample_state=None, significant=None,
                  engine: Engine | None = None, groups=None) -> ScreenedPDTP:
    """Paired PDTP of the top of the records ranked by ``estimate`` and of a random sample of the rest.

    Without ``cut`` the top starts at ``fraction`` of the records and doubles while its bottom half holds
    significantly more records than the sample of the records outside it (:func:`tail_exceeds_sample`): the
    ranking has not yet reached the level of the rest. The records counted are those the DTP-1 check counts:
    with ``significant``, the records above ``threshold`` that it finds significant (the statistical rule); else
    every record above ``threshold`` (Long et al.'s raw rule). Most single exceedances are training noise, and the
    noise is larger at the top of any ranking of leave-one-out change, so a tail compared by raw exceedances with
    a large sample keeps doubling on noise alone. With ``cut`` (for an
    estimate that is an upper confidence bound on each record's change, :func:`forest_oob_shift`) the top is every
    record whose estimate is at least ``cut``. Either way it stops at ``max_fraction`` of the records (``capped``).
    The sample's bound on the unmeasured records (:func:`unmeasured_bound`) holds either way: the sample is
    uniform over them. ``random_state`` seeds the models (as :func:`~leakaudit.dtp.pdtp`'s), ``sample_state`` the
    sample.

    Parameters
    ----------
    learner : Learner
    X : array of shape (n_records, n_features)
        The training set.
    y : array of shape (n_records,)
    estimate : array of shape (n_records,)
        Any ranking score, largest first (e.g. :func:`reference_loo_shift`).
    cut : float, optional
        Measure every record whose estimate is at least this (up to ``max_fraction``) instead of doubling.
    significant : callable, optional
        ``significant(records, values) -> bool array``: which of the given records (each above ``threshold``, with
        its PDTP) are significant for DTP-1, e.g. :func:`~leakaudit.dtp.dtp1_test` at the check's level, reusing
        its deltas (:class:`~leakaudit.dtp.significance.DTP1Deltas`). Called only on the candidates of the tail
        and then of the sample, and only while the tail holds a candidate.
    engine : leakaudit.engine.Engine, optional
        Retrains the models; default :func:`leakaudit.engine.default_engine`.
    groups : array of int of shape (n_records,), optional
        A privacy unit per record: leave-out models leave out the whole unit (:func:`~leakaudit.dtp.pdtp`).
    """
    from .pdtp import pdtp

    X = np.asarray(X)
    n = X.shape[0]
    est = np.asarray(estimate, dtype=np.float64)
    if est.shape != (n,):
        raise InvalidInputError(f"estimate must have one value per record ({n}); got shape {est.shape}")
    check_scalar(fraction, name="fraction", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(max_fraction, name="max_fraction", min_val=fraction, max_val=1.0)
    if cut is None:
        block = min(n, max(int(np.ceil(fraction * n)), 1))
        cap = min(n, max(int(np.ceil(max_fraction * n)), block))
        capped = False
    else:
        wanted = int(np.sum(est >= cut))
        cap = min(n, int(np.ceil(max_fraction * n)))
        block, capped = min(wanted, cap), wanted > cap
    order, _, sample = screen_plan(est, n_top=block, n_sample=n_sample, random_state=sample_state)
    measured: dict[int, float] = {}

    def measure(recs) -> None:
        recs = np.sort(np.asarray([r for r in recs if int(r) not in measured], dtype=np.int64))
        if recs.size:
            res = pdtp(learner, X, y, records=recs, n_classes=n_classes, seed_policy="paired", n_repeats=n_repeats,
                       random_state=random_state, engine=engine, keep_outputs=False, groups=groups)
            measured.update(zip(recs.tolist(), np.asarray(res.values, float).tolist()))

    def hits(recs) -> int:
        """How many of ``recs`` (measured) the check counts: above the threshold, and significant if tested."""
        cand = np.asarray([r for r in recs if measured[int(r)] > threshold], dtype=np.int64)
        if significant is None or cand.size == 0:
            return int(cand.size)
        return int(np.sum(significant(cand, np.array([measured[int(r)] for r in cand]))))

    measure(np.r_[order[:block], sample])
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    extensions, look = 0, None
    while cut is None and block < n:
        outside = sample[rank[sample] >= block]
        tail = order[block // 2:block]
        look = {"n_top": int(block), "tail_hits": hits(tail), "tail_n": int(tail.size), "sample_hits": None,
                "sample_n": int(outside.size), "grow": False}
        if look["tail_hits"] == 0:  # nothing to find below a tail that holds nothing the check counts
            break
        look["sample_hits"] = hits(outside)
        look["grow"] = tail_exceeds_sample(look["tail_hits"], tail.size, look["sample_hits"], outside.size)
        if not look["grow"]:
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
                        capped=capped, counted="above" if significant is None else "significant", last_look=look)

"""DTP-1 as a statistical statement (ours; Long et al. §9–§10 and spec long-dtp.md §8 item 4).

Long et al.'s rule "a record with PDTP > 1: do not publish" applied to one paired PDTP measurement fails
null models: training randomness (Fig 7) moves outputs as much as a record does, and one bin at the bottom
of the 0.01 binning is already ln 3 > 1 (spec §2.5). :func:`dtp1_test` counts a record against the rule only
when its change is larger than seeds and binning can explain, at a stated confidence, corrected for testing
many records:

1. :func:`bin_aware_log_ratio`: the smallest signed ``ln p_a / p_b`` consistent with the two bins;
2. ``R`` fresh paired repeats (the seed logic of :func:`~leakaudit.dtp.pdtp`) of each candidate record,
   seeds independent of the stage-1 measurement that selected the candidates;
3. per record, one-sided t-tests of each class's mean against the threshold (Bonferroni over classes and
   directions), Holm over the records, and a simultaneous lower confidence bound;
4. sequential repeats (``max_repeats``): a record still undecided (mean above the threshold, not significant)
   gets more repeats, doubling up to the budget, while decided ones stop. With L planned looks each look's
   tests run at level alpha / L (Bonferroni over the looks: a record's p-value is the smallest of L times its
   p-value at each look it reached), so the family-wise level over records and looks stays alpha.

The family-wise error on exact nulls, Long et al.'s Adult MLP and a forest is measured in
tests/dtp/test_significance.py (truth from hundreds of paired repeats). Limitation: the t-test assumes a roughly
normal mean of R repeats. Binned deltas are lattice-valued and can be bimodal (forests: a record in or out of a
tree's leaf); with R = 8 all repeats then sometimes fall in the far mode with a tiny sd, and p-values far in the
tail are too small. Use more repeats (R >= 16) for such learners.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .._random import seed_to_int
from .._validation import check_array, check_indices, check_scalar
from ..engine import Engine, reports_engine_stats
from ..exceptions import InvalidInputError, InvalidParameterError
from ..learners import capabilities, check_fit_inputs
from ..membership.binning import bin_index
from .pdtp import _check_bin_width, _loo_repeats, check_groups
from .results import DTP1TestResult

__all__ = ["DTP1Deltas", "bin_aware_log_ratio", "dtp1_test", "holm_adjust", "seed_free_deltas"]

#: entropy word of the stage-2 seed stream ("DTP1"): never the seeds of pdtp(random_state=the same value)
_STREAM = 0x44545031


def bin_aware_log_ratio(p_a: Any, p_b: Any, *, bin_width: float | None = 0.01) -> np.ndarray:
    """Smallest signed ``ln(p_a / p_b)`` consistent with the bins of two binned outputs.

    With bin indices ``ka``, ``kb`` (bins ``[k w, (k+1) w)``, :func:`~leakaudit.membership.binning.bin_index`),
    the true outputs may be anywhere in their bins, so the change is
    ``sign(ka - kb) * max(0, ln(max(ka, kb) / (min(ka, kb) + 1)))``: 0 for the same or adjacent bins.

    Parameters
    ----------
    p_a, p_b : array-like of the same shape, probabilities in [0, 1]
    bin_width : float or None, default=0.01
        None: the plain ``ln p_a - ln p_b`` (0 where both are 0, +-inf where one is).

    Returns
    -------
    ndarray of float64, the shape of ``p_a``; ``|value| <= ln(1/w - 1)`` (ln 99 for w = 0.01).

    Examples
    --------
    >>> bin_aware_log_ratio([0.012, 0.0, 0.035], [0.004, 0.035, 0.0]).round(4).tolist()  # bins 1|0, 0|3, 3|0
    [0.0, -1.0986, 1.0986]
    """
    a = check_array(p_a, name="p_a", allow_empty=True)
    b = check_array(p_b, name="p_b", allow_empty=True)
    if a.shape != b.shape:
        raise InvalidInputError(f"p_a has shape {a.shape} but p_b has shape {b.shape}")
    if bin_width is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.log(a) - np.log(b)
        return np.where((a <= 0) & (b <= 0), 0.0, d)
    _check_bin_width(bin_width)
    ka = bin_index(a, bin_width=bin_width)
    kb = bin_index(b, bin_width=bin_width)
    lo1 = np.minimum(ka, kb) + 1.0
    # smallest ratio of points in bins [hi w, (hi+1) w) and [lo w, (lo+1) w): hi / (lo + 1), or 1 when they touch
    return np.sign(ka - kb) * np.log(np.maximum(np.maximum(ka, kb), lo1) / lo1)


def holm_adjust(p: Any, n_tests: int) -> np.ndarray:
    """Holm step-down adjusted p-values of ``p`` within a family of ``n_tests >= len(p)`` tests.

    Tests outside ``p`` count as p = 1 (they come last). Rejecting ``adjusted <= alpha`` controls the
    family-wise error at ``alpha`` (Holm 1979). Returns an array of the shape of ``p``.
    """
    p = np.asarray(p, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    steps = n_tests - np.arange(p.size)  # p_(i) is compared with alpha / (n_tests - i + 1), i = 1..
    adj = np.empty_like(p)
    adj[order] = np.minimum(1.0, np.maximum.accumulate(steps * p[order]))
    return adj


def _stage2_seeds(random_state: Any, n: int) -> list[int]:
    """``n`` repeat seeds from a stream of their own (independent of stage 1 even for the same random_state)."""
    children = np.random.SeedSequence([seed_to_int(random_state), _STREAM]).spawn(n)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


@dataclass
class DTP1Deltas:
    """The paired repeats' per-record deltas of earlier :func:`dtp1_test` calls, for later calls to reuse.

    A record's deltas depend on the learner, the training set, ``random_state``, the repeats and the bins, never on
    the other records tested with it (the paired models of a repeat are models of one fixed call, see
    :func:`~leakaudit.dtp.pdtp`), so a call on a set of candidates that reuses the deltas of records tested before
    gives exactly the result of one call on all of them. The screened PDTP stage tests the candidates of the
    ranked top's tail while it decides whether to grow the top (:func:`~leakaudit.dtp.screened_pdtp`), and the
    DTP-1 test of every candidate afterwards trains models only for the records not tested yet.

    Attributes
    ----------
    seed : int or None
        ``seed_to_int(random_state)`` of the calls that filled it (set by the first call).
    n_repeats : int or None
        The first look's repeats.
    deltas : dict of int to ndarray of shape (r, n_classes)
        Record (row of the training set) to its deltas of repeats 1..r (r > n_repeats: re-measured while undecided).
    loo_method : str
        How the leave-one-out outputs were obtained (``loo_method`` of the result).
    """

    seed: int | None = None
    n_repeats: int | None = None
    deltas: dict = field(default_factory=dict)
    loo_method: str = ""

    def _check(self, seed: int, n_repeats: int) -> None:
        if self.seed is None:
            self.seed, self.n_repeats = seed, n_repeats
        elif (self.seed, self.n_repeats) != (seed, n_repeats):
            raise InvalidParameterError(
                f"known_deltas holds deltas of random_state {self.seed} and {self.n_repeats} repeats; this call has "
                f"random_state {seed} and {n_repeats} repeats (pass a fresh DTP1Deltas)")


def seed_free_deltas(learner: Any, stage1: Any, random_state: Any, *, bin_width: float | None = 0.01,
                     into: DTP1Deltas | None = None) -> DTP1Deltas:
    """The DTP-1 test's deltas of a learner whose seed does not matter, taken from a paired
    :func:`~leakaudit.dtp.pdtp` of the same learner and training set kept with its outputs (``keep_outputs``).

    Such a learner (``Capabilities.stochastic`` False) trains the same full and leave-one-out models for every seed,
    so :func:`dtp1_test` measures it once (one repeat) and its models are those stage 1 trained: the delta of a
    record is ``bin_aware_log_ratio`` of stage 1's outputs at it. Given as ``known_deltas`` (with the same
    ``random_state`` and ``bin_width``), the test then trains no model for the records stage 1 measured, and its
    result is the one it would compute by retraining them. For a stochastic learner, a stage 1 without its outputs
    or one that did not retrain (a closed form), ``into`` (or a fresh :class:`DTP1Deltas`) is returned unchanged.
    """
    memo = DTP1Deltas() if into is None else into
    p_full, p_loo = np.asarray(stage1.p_full, dtype=np.float64), np.asarray(stage1.p_loo, dtype=np.float64)
    # a closed form is cheap and may solve a batch of records together (to a tolerance): the test computes its own
    if capabilities(learner).stochastic or p_full.size == 0 or not str(stage1.method).startswith("retraining"):
        return memo
    memo._check(seed_to_int(random_state), 1)
    d = bin_aware_log_ratio(np.clip(p_full, 0, 1), np.clip(p_loo, 0, 1), bin_width=bin_width)
    for i, t in enumerate(stage1.records):
        memo.deltas.setdefault(int(t), d[None, i])
    # the test's own words for how the leave-one-out outputs were obtained (pdtp's, less what pdtp adds to them)
    memo.loo_method = memo.loo_method or str(stage1.method).split("; ")[0]
    return memo


def _looks(n_repeats: int, max_repeats: int) -> list[int]:
    """The repeats at each look of the sequential test: ``n_repeats``, doubling up to ``max_repeats``."""
    looks = [n_repeats]
    while looks[-1] < max_repeats:
        looks.append(min(2 * looks[-1], max_repeats))
    return looks


def _record_tests(D: np.ndarray, threshold: float, alpha: float, n_tests: int,
                  looks: int = 1) -> dict[str, np.ndarray]:
    """Per-record statistics of the deltas ``D`` of shape (R, n_tested, C) at one of ``looks`` planned looks; see
    :func:`dtp1_test`, steps 3 and 4."""
    R, m, C = D.shape
    mean = D.mean(axis=0)
    absm = np.abs(mean)
    sd = D.std(axis=0, ddof=1) if R > 1 else np.zeros_like(mean)
    sd = np.where(sd <= 1e-12 * np.maximum(1.0, absm), 0.0, sd)  # identical repeats (rounding of the mean)
    se = sd / np.sqrt(R)
    # one-sided t-test of |mean_c| against the threshold, df = R - 1; se = 0: exact (p = 0 or 1)
    exact = np.where(absm > threshold, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_c = np.where(se > 0, stats.t.sf((absm - threshold) / se, R - 1), exact) if R > 1 else exact
    p_rec = np.minimum(1.0, 2 * C * looks * p_c.min(axis=1))  # Bonferroni over the 2C one-sided directions, looks
    # simultaneous lower bound: |mu_c| >= |mean_c| - t_{R-1, 1 - alpha / (2 C n_tests looks)} se_c for every c,
    # record and look
    q = stats.t.ppf(1.0 - alpha / (2 * C * n_tests * looks), R - 1) if R > 1 else 0.0
    lb = np.maximum(0.0, (absm - q * se).max(axis=1))
    dec = np.lexsort((-absm, p_c), axis=-1)[:, 0]  # the deciding class: smallest p, then largest |mean|
    adj = holm_adjust(p_rec, n_tests)
    return {"stage2_mean": absm.max(axis=1), "sd": sd[np.arange(m), dec], "decisive_class": dec,
            "lower_bound": lb, "p_value": p_rec, "p_adjusted": adj, "significant": adj <= alpha}


@reports_engine_stats
def dtp1_test(
    learner: Any,
    X: Any,
    y: Any,
    *,
    records: Any,
    threshold: float = 1.0,
    n_repeats: int = 8,
    max_repeats: int | None = None,
    confidence: float = 0.95,
    n_tests: int | None = None,
    bin_width: float | None = 0.01,
    n_classes: int | None = None,
    random_state: Any = None,
    engine: Engine | None = None,
    max_records: int | None = None,
    stage1_values: Any = None,
    batch_size: int = 256,
    known_deltas: DTP1Deltas | None = None,
    groups: Any = None,
) -> DTP1TestResult:
    """Which candidate records break DTP-1 beyond training randomness and binning, at ``confidence``.

    For repeats r = 1..R with fresh seeds s_r, the full model A_{s_r}(T) and every candidate's A_{s_r}(T\\{t})
    (same seed: the ``paired`` policy of :func:`~leakaudit.dtp.pdtp`, its row-order and engine paths) give
    ``delta_{r,c} = bin_aware_log_ratio(p_full_r[t, c], p_loo_r[t, c])``. The estimand is the record's
    systematic influence ``mu_c = E_seed[delta_c]`` and ``H0_t: max_c |mu_c| <= threshold``, tested by
    one-sided t-tests of each |mean_c| (df = R - 1, Bonferroni over the 2C directions), Holm over ``n_tests``
    records at ``alpha = 1 - confidence``; a record still undecided after R repeats (its mean above the threshold,
    not significant) gets more, up to ``max_repeats``, tested sequentially at the same family-wise level (module
    docstring, step 4). A learner whose seed does not matter (``Capabilities.stochastic``
    False: the closed forms, and retrained learners such as a nearest-neighbour rule or XGBoost without sampling)
    gives the same deltas for every seed: it is measured once and the statement is exact (p = 0 or 1).

    The stage-2 seeds come from a stream of their own, so the test stays valid for candidates chosen by a
    stage-1 :func:`~leakaudit.dtp.pdtp` run with the same ``random_state``.

    Parameters
    ----------
    learner : Learner
    X : array-like of shape (n_samples, n_features)
        The training set T.
    y : array-like of shape (n_samples,)
    records : array-like of int, shape (n_candidates,)
        Candidate rows of T (in an audit: those whose stage-1 PDTP exceeds ``threshold``); may be empty.
    threshold : float > 0, default=1.0
        The DTP-1 threshold (natural log).
    n_repeats : int, default=8
        Paired repeats R (>= 2, unless the learner's seed does not matter: then 1 is used).
    max_repeats : int >= n_repeats, optional
        Repeat budget of a record still undecided after ``n_repeats``: looks at R, 2R, 4R, ... repeats up to it,
        each at level ``(1 - confidence) / looks`` (None: ``n_repeats``, one look at the full level).
    confidence : float in (0, 1), default=0.95
    n_tests : int, optional
        Size of the multiplicity family, at least the number of records tested (default: that number; the
        tested records are fixed by the stage-1 measurement, independent of stage 2).
    bin_width : float or None, default=0.01
    n_classes : int, optional
    random_state : None, int or Generator
    engine : leakaudit.engine.Engine, optional
        Retrains the models (its backend and resumable on-disk cache); default
        :func:`leakaudit.engine.default_engine`.
    max_records : int, optional
        Test at most this many candidates: the largest ``stage1_values`` first (without them, the first
        ones given). The others are returned in ``untested``: not measured, never passed.
    stage1_values : array-like of shape (n_candidates,), optional
        The stage-1 values of ``records`` (ranking for ``max_records``; kept in the result).
    batch_size : int, default=256
        Leave-one-out models per engine call.
    known_deltas : DTP1Deltas, optional
        Deltas of records tested by earlier calls with the same learner, data, ``random_state``, ``n_repeats`` and
        ``bin_width`` (any ``max_repeats``: a record's repeats are measured once, as far as a call needs): reused
        instead of retrained, and the records tested now are added to it. The result is the one a single call would
        give.
    groups : array-like of int of shape (n_samples,), optional
        A group (privacy unit) per training record: each candidate's leave-out models leave out its whole group
        (:func:`~leakaudit.dtp.pdtp`'s ``groups``).

    Returns
    -------
    DTP1TestResult
        Per tested record: ``stage2_mean`` (max_c |mean_c|), ``sd``, ``lower_bound``, ``p_value``,
        ``p_adjusted``, ``significant``, ``repeats``; ``n_significant``; ``untested``; ``looks`` and
        ``look_level``: the sequential design; ``engine_stats``: what the engine did.
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    if len(X) < 2:
        raise InvalidInputError("X needs at least 2 training records for leave-one-out")
    groups = check_groups(groups, len(X))
    cand = check_indices(records, name="records", n=len(X), allow_empty=True, unique=True)
    check_scalar(threshold, name="threshold", min_val=0.0, include_min=False)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_scalar(n_repeats, name="n_repeats", kind=(int, np.integer), min_val=1)
    check_scalar(batch_size, name="batch_size", kind=(int, np.integer), min_val=1)
    _check_bin_width(bin_width)
    if bin_width is not None:
        bin_index(0.0, bin_width=bin_width)  # bins must divide 1
    deterministic = not capabilities(learner).stochastic
    if not deterministic and n_repeats < 2:
        raise InvalidParameterError(f"n_repeats must be >= 2 for {type(learner).__name__}, a stochastic learner "
                                    f"(the test estimates its seed noise from the repeats); got {n_repeats}")
    s1 = np.zeros(0)
    if stage1_values is not None:
        s1 = check_array(stage1_values, name="stage1_values", ndim=1, allow_empty=True, allow_nan=True)
        if s1.size != cand.size:
            raise InvalidInputError(f"stage1_values has {s1.size} entries for {cand.size} records")
    k = cand.size
    if max_records is not None:
        check_scalar(max_records, name="max_records", kind=(int, np.integer), min_val=0)
        k = min(k, int(max_records))
    rank = np.argsort(-np.nan_to_num(s1, nan=-np.inf), kind="stable") if s1.size else np.arange(cand.size)
    tested_mask = np.zeros(cand.size, bool)
    tested_mask[rank[:k]] = True  # the k highest stage-1 values; both lists keep the order given
    tested, untested = cand[tested_mask], cand[~tested_mask]
    if n_tests is None:
        n_tests = max(1, tested.size)
    check_scalar(n_tests, name="n_tests", kind=(int, np.integer), min_val=max(1, tested.size))
    R = 1 if deterministic else int(n_repeats)
    if max_repeats is not None:
        check_scalar(max_repeats, name="max_repeats", kind=(int, np.integer), min_val=n_repeats)
    looks = _looks(R, R if deterministic or max_repeats is None else int(max_repeats))
    alpha = 1.0 - float(confidence)

    memo = DTP1Deltas() if known_deltas is None else known_deltas
    if known_deltas is not None and not isinstance(random_state, (int, np.integer)):
        raise InvalidParameterError("random_state must be an int when known_deltas is given (the deltas reused "
                                    f"must come from the same seeds); got {type(random_state).__name__}")
    memo._check(seed_to_int(random_state), R)
    seeds = _stage2_seeds(memo.seed, looks[-1])  # the first R are those of a single look

    def measure(recs: np.ndarray, upto: int) -> None:
        """Into ``memo``: repeats up to ``upto`` of ``recs``, each record from the repeats it has."""
        have = np.array([len(memo.deltas.get(int(t), ())) for t in recs], dtype=np.int64)
        for h in np.unique(have[have < upto]):
            new, deltas = recs[have == h], []
            for p_full, p_loo, method in _loo_repeats(learner, X, y, new, n_classes=n_classes,
                                                      root_seeds=seeds[h:upto], seed_policy="paired",
                                                      batch_size=batch_size, engine=engine, groups=groups):
                memo.loo_method = method
                deltas.append(bin_aware_log_ratio(np.clip(p_full, 0, 1), np.clip(p_loo, 0, 1), bin_width=bin_width))
            D_new = np.stack(deltas)  # (upto - h, n_new, C)
            if not np.isfinite(D_new).all():
                raise InvalidInputError("a class has probability 0 in one model only (infinite log ratio) with "
                                        "bin_width=None; bin the outputs (bin_width=0.01) to test these records")
            memo.deltas.update((int(t), np.concatenate([memo.deltas.get(int(t), D_new[:0, i]), D_new[:, i]]))
                               for i, t in enumerate(new))

    res, reps, active = {}, np.zeros(tested.size, np.int64), np.ones(tested.size, bool)
    for Rk in looks:  # the records undecided so far (all at the first look) re-measured to Rk repeats
        measure(tested[active], Rk)
        D = np.stack([memo.deltas[int(t)][:Rk] for t in tested[active]], axis=1) if active.any() else np.zeros(
            (Rk, 0, n_classes))
        look = _record_tests(D, float(threshold), alpha, int(n_tests), len(looks))
        if res:  # a record's p-value: its smallest over the looks; its bound: the largest (both simultaneous)
            look["p_value"] = np.minimum(look["p_value"], res["p_value"][active])
            look["lower_bound"] = np.maximum(look["lower_bound"], res["lower_bound"][active])
            for key in ("stage2_mean", "sd", "decisive_class", "lower_bound", "p_value"):
                res[key][active] = look[key]
            res["p_adjusted"] = holm_adjust(res["p_value"], n_tests)
            res["significant"] = res["p_adjusted"] <= alpha
        else:
            res = look
        reps[active] = Rk
        active = ~res["significant"] & (res["stage2_mean"] > threshold)
        if not active.any():
            break
    loo_method = memo.loo_method if tested.size else ""
    C = n_classes
    if deterministic:
        method = (f"exact: leave-one-out outputs that do not depend on the seed (measured once), a record is "
                  f"significant when a class's bin-aware ln ratio exceeds {threshold:g} (p = 0 or 1; Holm over "
                  f"{n_tests} records at level {alpha:.4g})")
    else:
        method = (f"one-sided t-tests (df = {R - 1}) of each class's mean bin-aware ln ratio over {R} paired "
                  f"leave-one-out repeats against {threshold:g}, Bonferroni over the {2 * C} class directions, Holm "
                  f"over {n_tests} records at level {alpha:.4g}")
        if len(looks) > 1:
            method += (f"; a record still undecided (mean above {threshold:g}, not significant) re-measured to "
                       f"{', '.join(map(str, looks[1:]))} repeats (df one less), decided ones stopping: Bonferroni "
                       f"over the {len(looks)} looks, each at level {alpha / len(looks):.4g}")
    return DTP1TestResult(
        records=tested, stage1_values=s1[tested_mask] if s1.size else [], untested=untested, n_repeats=R,
        confidence=float(confidence), threshold=float(threshold), bin_width=bin_width, n_tests=int(n_tests),
        method=method, loo_method=loo_method, learner=type(learner).__name__, repeats=reps, looks=looks,
        look_level=alpha / len(looks), **res,
    )

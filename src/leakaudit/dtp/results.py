"""Result objects of the DTP package (frozen, JSON round-trip; see ``leakaudit._results``).

Every field holds plain numbers or lists so that the report can read them
without running anything. ``bin_width`` is None when outputs were not binned.
"""

from __future__ import annotations

from typing import Any, Optional

from .._results import Result
from ..engine import EngineStats

__all__ = [
    "PDTPResult",
    "DTPResult",
    "StabilityBoundResult",
    "LipschitzBoundResult",
    "SearchResult",
    "NoiseFloorResult",
    "Verdict",
    "ReductionResult",
    "CorrelationResult",
    "DTP1TestResult",
    "RemovalEffect",
]


class PDTPResult(Result):
    """Pointwise DTP of each record (Long et al. Def 4.4), natural-log units.

    Attributes
    ----------
    records : list of int, shape (n_records,)
        Row indices of the records t in the training set.
    values : list of float, shape (n_records,)
        PDTP averaged over ``n_repeats`` measurements.
    per_repeat : list of list of float, shape (n_repeats, n_records)
    p_full, p_loo : list of list of float, shape (n_records, n_classes)
        Outputs (unbinned) of A(T) and A(T\\{t}) at x(t), first repeat (empty when
        ``keep_outputs`` was off, by default above 5,000 records).
    method : str
        How leave-one-out models were obtained ("closed-form naive Bayes", "retraining", ...).
    engine_stats : EngineStats or None
        What the engine did to train the models (models trained, cache hits, seconds).
    """

    records: list[int]
    values: list[float]
    per_repeat: list[list[float]]
    p_full: list[list[float]]
    p_loo: list[list[float]]
    bin_width: Optional[float]
    seed_policy: str
    n_repeats: int
    method: str
    learner: str = ""
    engine_stats: EngineStats | None = None

    def max(self) -> float:
        return max(self.values) if self.values else float("nan")


class DTPResult(Result):
    """DTP of each record (Def 4.2): exact by enumeration, or a bound.

    Attributes
    ----------
    values : list of float, shape (n_records,)
    pdtp : list of float, shape (n_records,)
        PDTP of the same records with the same binning (DTP >= PDTP).
    argmax_x : list of list of float, shape (n_records, n_features)
        A query x attaining DTP(t).
    argmax_y : list of int
    n_queries : int
        Size of the enumerated feature space.
    kind : str
        "exact" (enumeration over the whole feature space).
    engine_stats : EngineStats or None
        What the engine did to retrain leave-one-out models (none for closed forms).
    """

    records: list[int]
    values: list[float]
    pdtp: list[float]
    argmax_x: list[list[float]]
    argmax_y: list[int]
    n_queries: int
    bin_width: Optional[float]
    kind: str = "exact"
    learner: str = ""
    engine_stats: EngineStats | None = None


class StabilityBoundResult(Result):
    """Upper bounds on DTP from training stability (Thm 6.2) or the normalised naive-Bayes bound.

    Attributes
    ----------
    values : list of float, shape (n_records,)  upper bounds on DTP(t)
    pdtp : list of float  the PDTP used (unbinned unless stated)
    ln_delta : list of float  ln δ (or per-record ln δ_t) entering the bound
    source : str  which result gives δ ("Prop 6.5", "normalised NB (spec §6)", ...)
    """

    records: list[int]
    values: list[float]
    pdtp: list[float]
    ln_delta: list[float]
    source: str
    note: str = ""


class LipschitzBoundResult(Result):
    """Thm 6.9: DTP(t) <= L · |u_T - u_{T\\t}|_inf (per record) and the global L · max_t.

    Attributes
    ----------
    lipschitz_constant : float  L
    param_change : list of float  |u_T - u_{T\\t}|_inf per record
    values : list of float  per-record bounds L·|Δu_t|_inf
    global_bound : float  L · max_t |Δu_t|_inf (the theorem's statement)
    """

    records: list[int]
    lipschitz_constant: float
    param_change: list[float]
    values: list[float]
    global_bound: float
    note: str = ""


class SearchResult(Result):
    """A search-based LOWER estimate of DTP(t) (not a bound from above).

    Attributes
    ----------
    values : list of float  best |ln p_T(y|x) - ln p_{T\\t}(y|x)| found per record (binned as stated)
    pdtp : list of float  the value at x(t)
    ratio : list of float  values / pdtp (inf when pdtp is 0 and the search found more)
    by_strategy : dict  strategy name -> list of per-record best values
    n_evaluations : list of int  queries evaluated per record
    engine_stats : EngineStats or None  what the engine did to retrain leave-one-out models
    """

    records: list[int]
    values: list[float]
    pdtp: list[float]
    ratio: list[float]
    by_strategy: dict[str, list[float]]
    best_x: list[list[float]]
    n_evaluations: list[int]
    bin_width: Optional[float]
    kind: str = "estimate (lower)"
    engine_stats: EngineStats | None = None


class NoiseFloorResult(Result):
    """Spread of ln p(y|x) over retrainings (Figs 7, 8 of Long et al.).

    Attributes
    ----------
    source : "seed" (same data, other seeds; Fig 7) or "sampling" (other training samples; Fig 8)
    std_log_p : list of float, shape (n_queries,)  std of ln p(y_q|x_q) across the models (true label)
    max_std_log_p : list of float  max over classes of the std of ln p(y|x_q)
    p_true : list of list of float, shape (n_models, n_queries)  p(y_q|x_q) of every model (unbinned)
    engine_stats : EngineStats or None  what the engine did to train the models
    """

    source: str
    n_models: int
    std_log_p: list[float]
    max_std_log_p: list[float]
    p_true: list[list[float]]
    bin_width: Optional[float]
    engine_stats: EngineStats | None = None


class Verdict(Result):
    """The DTP-1 verdict for one model (Long et al. §5, §10).

    Attributes
    ----------
    kind : str  what the values are ("PDTP", "DTP (exact)", "DTP upper bound", "DTP estimate")
    max_value : float
    records_above : list of int  records with value > threshold
    publish : bool  False when max_value > threshold
    sentence : str  advice a data owner can act on
    """

    kind: str
    threshold: float
    max_value: float
    argmax_record: int
    n_records: int
    records_above: list[int]
    values_above: list[float]
    publish: bool
    sentence: str


class ReductionResult(Result):
    """Reducing DTP by removing high-risk records (Long et al. §8, Fig 6).

    Attributes
    ----------
    removed : list of int  original row indices, in order of removal
    max_values : list of float, shape (n_steps + 1,)  max DTP after 0, 1, ... removals
    argmax_records : list of int  record attaining the max at each step
    accuracy : list of float  accuracy of the retrained model at each step (on the evaluation set)
    stopped_at : int or None  first number of removals with max DTP <= threshold
    """

    strategy: str
    kind: str
    threshold: float
    removed: list[int]
    max_values: list[float]
    argmax_records: list[int]
    accuracy: list[float]
    stopped_at: Optional[int]
    n_records: int
    note: str = ""


class CorrelationResult(Result):
    """PDTP versus per-target attack accuracy (Long et al. Tables 1–2, Figs 1–5).

    Attributes
    ----------
    r, p_value : Pearson correlation and two-sided p-value (n = number of targets)
    frac_above1_acc_gt_08 : share of targets with PDTP > 1 whose accuracy exceeds 0.8 (NaN if none)
    max_acc_below_05 : highest accuracy among targets with PDTP < 0.5 (NaN if none)
    """

    n: int
    r: float
    p_value: float
    frac_above1_acc_gt_08: float
    frac_above1_acc_gt_06: float
    max_acc_below_05: float
    n_above1: int
    n_below05: int


class DTP1TestResult(Result):
    """DTP-1 as a test (ours): records whose leave-one-out change exceeds what seeds and binning explain.

    Per tested record t, over R paired repeats (fresh seed s_r for A(T) and A(T\\{t})), the bin-aware signed
    log ratio of class c (the smallest consistent with the two bins) has mean m_c and sd s_c. H0_t is
    max_c |E_seed[ratio_c]| <= threshold. Per-record arrays follow ``records``.

    Attributes
    ----------
    records : list of int, shape (n_tested,)
        Tested rows of the training set, in the order given.
    stage1_values : list of float, shape (n_tested,)
        The stage-1 values the caller passed (ranked for ``max_records``), empty when none were passed.
    stage2_mean : list of float, shape (n_tested,)
        max_c |m_c| (natural log).
    sd : list of float, shape (n_tested,)
        s_c of the class deciding the test (smallest p-value), ``decisive_class``.
    decisive_class : list of int, shape (n_tested,)
    lower_bound : list of float, shape (n_tested,)
        Lower confidence bound on max_c |E_seed[ratio_c]|, Bonferroni over classes, directions, ``n_tests`` and
        ``looks`` (simultaneous over all tested records and looks at ``confidence``: the largest over the looks a
        record reached), floored at 0.
    p_value : list of float, shape (n_tested,)
        Per-record p-value of H0_t (Bonferroni over the 2C one-sided directions and the ``looks``: the smallest
        over the looks a record reached), before multiplicity over records.
    p_adjusted : list of float, shape (n_tested,)
        Holm-adjusted p-value over ``n_tests`` tests; ``significant`` is ``p_adjusted <= 1 - confidence``.
    significant : list of bool, shape (n_tested,)
    untested : list of int
        Candidates not re-measured (beyond ``max_records``): not measured, never passed.
    n_repeats : int
        Repeats R of the first look (1 for deterministic leave-one-out: the statement is then exact).
    repeats : list of int, shape (n_tested,)
        Repeats behind each record's decision: R, or more for a record still undecided at R (``looks``).
    looks : list of int
        Repeats at each planned look of the sequential test (``[n_repeats]``: one look).
    look_level : float
        Each look's level, ``(1 - confidence) / len(looks)`` (Bonferroni over the looks): the family-wise level
        over records and looks stays ``1 - confidence``.
    n_tests : int
        Size of the multiplicity family (>= n_tested).
    method : str
        The test, in one sentence.
    loo_method : str
        How the leave-one-out models were obtained.
    engine_stats : EngineStats or None
        What the engine did to train the models.
    """

    records: list[int]
    stage1_values: list[float]
    stage2_mean: list[float]
    sd: list[float]
    decisive_class: list[int]
    lower_bound: list[float]
    p_value: list[float]
    p_adjusted: list[float]
    significant: list[bool]
    untested: list[int]
    n_repeats: int
    confidence: float
    threshold: float
    bin_width: Optional[float]
    n_tests: int
    method: str
    repeats: list[int] = []
    looks: list[int] = []
    look_level: Optional[float] = None
    loo_method: str = ""
    learner: str = ""
    engine_stats: EngineStats | None = None

    @property
    def n_significant(self) -> int:
        """Number of records significant after the Holm correction."""
        return int(sum(self.significant))


class RemovalEffect(Result):
    """What removing records changes (:func:`leakaudit.dtp.removal_effect`): PDTP and DTP-1 after, accuracy cost.

    Record indices are rows of the original training set.

    Attributes
    ----------
    removed : list of int
        The removed rows.
    records_measured : int
        Remaining rows whose PDTP was measured after the removal.
    screening : dict or None
        With an ``estimate``: the measured top (``n_top``), the random sample of the rest (``n_sample``) and how
        many of it exceed the threshold (``sample_above``), ``capped``, and the rows not measured
        (``n_unmeasured``), with what the sample says about them (``unmeasured_above``:
        :func:`~leakaudit.dtp.unmeasured_bound`); None when every row in ``records`` was measured.
    max_after, argmax_after : float, int
        The largest single PDTP after the removal and its row (NaN and -1 when none was measured).
    records_above_after : list of int
        Rows whose single PDTP exceeds ``threshold`` after the removal.
    records_significant_after : list of int or None
        Rows significant for DTP-1 after the removal (:func:`leakaudit.dtp.dtp1_test`); None when the test was
        not run (Long et al.'s single-measurement rule).
    records_untested_after : list of int
        Candidates the test did not re-measure (beyond its ``max_records``).
    accuracy_before, accuracy_after : float
        Accuracy on the evaluation records of models trained on the full and on the reduced set, averaged over
        ``n_seeds`` paired seeds; ``*_interval`` at ``confidence`` over the evaluation records.
    accuracy_cost : float
        ``accuracy_before - accuracy_after`` (paired per evaluation record), with ``accuracy_cost_interval``.
    engine_stats : EngineStats or None
        What the engine did (every model of the PDTP, the test and the accuracy).
    """

    removed: list[int]
    n_records: int
    threshold: float
    records_measured: int
    screening: dict[str, Any] | None
    max_after: float
    argmax_after: int
    records_above_after: list[int]
    records_significant_after: Optional[list[int]]
    records_untested_after: list[int]
    confidence: float
    n_seeds: int
    n_eval: int
    accuracy_before: float
    accuracy_before_interval: list[float]
    accuracy_after: float
    accuracy_after_interval: list[float]
    accuracy_cost: float
    accuracy_cost_interval: list[float]
    engine_stats: EngineStats | None = None

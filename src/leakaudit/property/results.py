"""Result types of property inference (frozen, JSON round-trip)."""

from __future__ import annotations

from .._results import Result
from ..engine import EngineStats

__all__ = ["PropertyAttackResult", "PropertyEstimateResult", "WhiteBoxResult"]


class PropertyAttackResult(Result):
    """Accuracy of distinguishing ``t0`` from ``t1`` over target models (spec Sec. 1.5, 4.5).

    Attributes
    ----------
    accuracy : float
        Fraction of targets whose world bit the attack guessed (``Pr[b' = b]``).
    accuracy_ci : (float, float)
        95% Clopper-Pearson interval of ``accuracy``.
    auc : float
        AUC of the attack model's scores for the t1 world against the t0 world.
    n_shadow : int
        Shadow models per world (k); ``n_shadow_total = 2 k``.
    n_queries : int
        Queries sent to each target (accepted candidates + poison points).
    target_accuracy, target_precision, target_recall : float
        Mean clean-test utility of the (poisoned) targets (spec Sec. 5.6).
    window : str
        Theorem 9's window (tau -> 0) for these settings, e.g. ``"(0.159,0.370]"``.
    engine_stats : EngineStats or None
        What the engine did to train the models of the call that made this result.
    """

    dataset: str
    property: str
    t0: float
    t1: float
    poison_rate: float
    n_train: int
    n_poison: int
    poison_label: int | None
    poison_variant: str
    alpha: float | None
    n_shadow: int
    n_shadow_total: int
    n_ensemble: int
    n_queries_requested: int
    n_queries: int
    n_candidates: int
    queries_exhausted: bool
    attack_C: float
    poison_accounting: str
    prevalence_sampling: str
    band: float
    n_targets: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    auc: float
    shadow_accuracy: float
    target_accuracy: float
    target_precision: float
    target_recall: float
    window: str
    seconds_fit: float
    seconds_targets: float
    engine_stats: EngineStats | None = None


class WhiteBoxResult(Result):
    """Ganju et al.'s white-box meta-classifiers (spec Sec. 3.5 baseline 2; :mod:`~leakaudit.property.whitebox`).

    ``meta_classifier`` is "deepsets" (per-layer set encoders) or "sorted" (neuron-sorted
    parameter vector into a small neural network). ``engine_stats``: what the engine did to train the
    shadow and target networks (shared by every meta-classifier of one call).
    """

    dataset: str
    property: str
    t0: float
    t1: float
    hidden: tuple[int, ...]
    n_shadow: int
    n_targets: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    auc: float
    seconds: float
    meta_classifier: str = "sorted"
    engine_stats: EngineStats | None = None


class PropertyEstimateResult(Result):
    """Estimates of ``t`` itself from label vectors (extension, spec Sec. 6).

    Attributes
    ----------
    t_grid : list of float
        Prevalences the shadow models were trained at.
    true_t, estimated_t : list of float
        Per target: its realised fraction and our estimate.
    mae : float
        Mean absolute error of the estimates.
    engine_stats : EngineStats or None
        What the engine did to train the models.
    """

    dataset: str
    property: str
    poison_rate: float
    t_grid: list[float]
    n_shadow_per_t: int
    true_t: list[float]
    estimated_t: list[float]
    mae: float
    seconds: float
    engine_stats: EngineStats | None = None

"""Result types of attribute inference (frozen, JSON round-trip, never pickled)."""

from __future__ import annotations

from .._results import Result

__all__ = ["AttributeAdvantage", "AlternativeAdvantage", "SplitSummary", "AttackSummary", "AttributeAudit", "ExpAResult"]


class AttributeAdvantage(Result):
    """Yeom et al.'s attribute advantage (Definition 5) on one sample of members and non-members.

    ``advantage = accuracy_members - accuracy_nonmembers``; the interval is
    Newcombe's hybrid interval for a difference of two independent proportions,
    built from the Clopper-Pearson interval of each accuracy (conservative).
    """

    accuracy_members: float
    accuracy_nonmembers: float
    n_members: int
    n_nonmembers: int
    advantage: float
    ci_low: float
    ci_high: float
    confidence: float
    interval: str = "newcombe-clopper-pearson"


class AlternativeAdvantage(Result):
    """Definition 6's alternative advantage: adversary on members minus the no-model simulator on non-members."""

    accuracy_members: float
    simulator_accuracy_nonmembers: float
    n_members: int
    n_nonmembers: int
    advantage: float
    ci_low: float
    ci_high: float
    confidence: float
    simulator: str = ""
    interval: str = "newcombe-clopper-pearson"


class SplitSummary(Result):
    """Mean of a quantity over independent splits, with a normal interval on the mean (std / sqrt(K))."""

    mean: float
    std: float
    n_splits: int
    ci_low: float
    ci_high: float
    confidence: float


class AttackSummary(Result):
    """One attribute adversary on one model: advantage (Def. 5), alternative advantage (Def. 6)."""

    name: str
    description: str
    attribute_advantage: AttributeAdvantage
    alternative_advantage: AlternativeAdvantage | None = None


class AttributeAudit(Result):
    """Attribute inference on one dataset, attribute and model (``leakaudit attribute`` writes this)."""

    dataset: str
    attribute: str
    model: str
    values: list[str]
    prior: list[float]
    n_members: int
    n_nonmembers: int
    train_accuracy: float | None = None
    test_accuracy: float | None = None
    baseline_accuracy_members: float
    baseline_accuracy_nonmembers: float
    baseline: str
    attacks: list[AttackSummary]
    notes: list[str] = []


class ExpAResult(Result):
    """The attribute experiment Exp^A (Yeom et al., Experiment 2) run by Monte Carlo.

    ``win_rate`` is ``Pr[Exp^A = 1]``; ``accuracy_b0`` / ``accuracy_b1`` are the
    conditional win rates given ``b``; ``advantage`` is their difference
    (Definition 5). ``mu_hat`` is the fraction of ``b = 1`` challenges that were
    equal to some training record (``mu(n, D)``, spec §2).
    """

    n_trials: int
    challenges_per_trial: int
    n_b0: int
    n_b1: int
    win_rate: float
    accuracy_b0: float
    accuracy_b1: float
    advantage: float
    ci_low: float
    ci_high: float
    confidence: float
    interval: str
    mu_hat: float
    simulator_accuracy_b1: float | None = None
    alternative_advantage: float | None = None

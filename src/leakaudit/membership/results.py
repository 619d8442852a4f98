"""Result objects of the membership protocols (JSON in and out, never pickle)."""

from __future__ import annotations

from typing import Any

from .._results import Result
from ..engine import EngineStats
from ..metrics import MembershipMetrics

__all__ = ["AttackSummary", "MembershipAudit", "LongProtocolResult", "YeomSplitResult", "MembershipExperimentResult"]


class AttackSummary(Result):
    """One attack's metrics on one audit.

    Attributes
    ----------
    attack : str
    metrics : MembershipMetrics
        AUC with its bootstrap interval, max advantage, TPR at fixed FPRs with intervals.
    decision_metrics : dict
        Accuracy, precision, recall, F1, advantage (TPR − FPR), TPR, FPR of the
        attack's own decisions.
    roc : dict
        ``{"fpr": [...], "tpr": [...]}``, at most ~200 points (log-spaced in FPR).
    info : dict
        Attack-specific extras.
    """

    attack: str
    metrics: MembershipMetrics
    decision_metrics: dict[str, float]
    roc: dict[str, list[float]]
    info: dict[str, Any] = {}


class MembershipAudit(Result):
    """Audit of one model: every applicable attack on the same members and non-members.

    Attributes
    ----------
    n_members, n_nonmembers : int
    attacks : dict name -> AttackSummary
    skipped : dict name -> reason
        Attacks that could not run here and why.
    is_member : list of int
        Truth of each audited record (members first, then non-members).
    record_ids : list of int
        Caller's identifiers of the audited records.
    scores : dict name -> list of float
        Per-record scores of each attack, aligned with ``record_ids``.
    settings : dict
        Reference models, population size, seeds.
    engine_stats : EngineStats or None
        What the engine did to train the reference models (models trained, cache hits, seconds).
    """

    n_members: int
    n_nonmembers: int
    attacks: dict[str, AttackSummary]
    skipped: dict[str, str] = {}
    is_member: list[int]
    record_ids: list[int]
    scores: dict[str, list[float]]
    settings: dict[str, Any] = {}
    engine_stats: EngineStats | None = None

    def table(self) -> list[dict[str, Any]]:
        """One row per attack: auc, auc_ci, advantage, TPR at each FPR."""
        rows = []
        for name, s in self.attacks.items():
            r = {"attack": name, "auc": s.metrics.auc, "auc_ci": list(s.metrics.auc_ci),
                 "advantage": s.metrics.advantage}
            for f, v in s.metrics.tpr_at_fpr.items():
                r[f"tpr@{f}"] = v["tpr"]
            rows.append(r)
        return rows


class LongProtocolResult(Result):
    """Long et al.'s evaluation protocol (§5.4; spec long-dtp.md §4.3).

    Attributes
    ----------
    targets : list of int
        Row indices of the fixed targets.
    attacks : dict name -> dict
        ``pooled``: accuracy/precision/recall/F1 over all attacks on all
        targets; ``averaged``: their means over iterations; ``per_target_accuracy``:
        one value per target; optional ``pdtp_correlation`` {r, p}.
    target_train_accuracy, target_test_accuracy : float
        Averaged over the 2·iterations target models.
    settings : dict
    engine_stats : EngineStats or None
        What the engine did to train the target and shadow models.
    """

    targets: list[int]
    attacks: dict[str, dict[str, Any]]
    target_train_accuracy: float
    target_test_accuracy: float
    max_per_target_accuracy: list[float]
    settings: dict[str, Any] = {}
    engine_stats: EngineStats | None = None


class YeomSplitResult(Result):
    """Yeom et al.'s split protocol (§6.1): mean over random 75/25 splits.

    Attributes
    ----------
    advantage : dict name -> float
        Mean of (member rate on train − member rate on test).
    advantage_sd : dict name -> float
        Standard deviation over splits.
    train_member_rate, test_member_rate : dict name -> float
    per_split : dict name -> list of float
    settings : dict
    """

    advantage: dict[str, float]
    advantage_sd: dict[str, float]
    train_member_rate: dict[str, float]
    test_member_rate: dict[str, float]
    per_split: dict[str, list[float]]
    train_score: float | None = None
    test_score: float | None = None
    settings: dict[str, Any] = {}


class MembershipExperimentResult(Result):
    """Monte-Carlo run of Yeom et al.'s membership experiment Exp^M (Experiment 1, Definition 4).

    Attributes
    ----------
    advantage : float
        2·Pr[Exp^M = 1] − 1.
    advantage_ci : (float, float)
        From the Clopper–Pearson interval of Pr[Exp^M = 1].
    tpr_minus_fpr : float
        Pr[A = member | b = 0] − Pr[A = member | b = 1] (Eq. 2), on the same draws.
    mu : float
        μ(n, D): probability that a challenge drawn from D is in S (exact for a
        uniform pool of N rows: 1 − (1 − 1/N)^n).
    mu_empirical : float
        Fraction of b = 1 challenges that landed in S.
    max_advantage : float
        1 − μ, the best any adversary can score.
    n_trials : int
    engine_stats : EngineStats or None
        What the engine did to train the models.
    """

    advantage: float
    advantage_ci: tuple[float, float]
    tpr_minus_fpr: float
    mu: float
    mu_empirical: float
    max_advantage: float
    n_trials: int
    settings: dict[str, Any] = {}
    engine_stats: EngineStats | None = None

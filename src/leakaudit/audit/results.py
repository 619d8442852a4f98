"""The schema of ``results.json`` (versioned; fields never change meaning, new ones are optional)."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field

from .._results import Result
from .checks import Check

__all__ = ["AuditResult", "Verdict", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


class Verdict(Result):
    """The outcome, every check it rests on, and the thresholds they were judged against.

    ``outcome``: "publish" (every check ran with enough data and none is exceeded), "do not publish" (a check
    that describes the given model is exceeded at the stated confidence) or "inconclusive" (none is exceeded, but
    some check could not be measured, or only checks describing the retraining recipe are exceeded).
    ``publish`` is ``outcome == "publish"``. ``reasons``, ``passed`` and ``not_measurable`` are the sentences of
    the exceeded, passed and unmeasurable checks. ``confidence`` is the family-wise confidence of the verdict:
    each of its ``n_checks`` checks is judged at ``check_confidence`` (Bonferroni). ``recipe``: does retraining
    reproduce the given model (the test, its p-value and a sentence)? ``exit_code``: the process status
    ``--exit-code`` gives (0 publish, 3 do not publish, 4 inconclusive).
    """

    publish: bool
    headline: str
    reasons: list[str]
    passed: list[str]
    thresholds: dict[str, Optional[float]]
    outcome: Literal["publish", "do not publish", "inconclusive"] = "publish"
    not_measurable: list[str] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    confidence: Optional[float] = None
    check_confidence: Optional[float] = None
    n_checks: int = 0
    recipe: Optional[dict[str, Any]] = None
    dtp_rule: str = "statistical"
    exit_code: int = 0


class AuditResult(Result):
    """Everything an audit measured (``to_dict()`` adds ``schema_version`` and ``type``).

    Sections
    --------
    config : the full :class:`~leakaudit.audit.config.AuditConfig` (enough to re-run)
    data : sizes, label, classes, sensitive columns, where the data came from
    target : what was audited (kind, accuracy on members and non-members)
    membership : per attack, ``MembershipMetrics`` fields (auc, auc_ci, advantage, tpr_at_fpr)
    dtp : PDTP summary, records above the threshold, noise floor
    attribute, property, mip : each capability's summary
    skipped : analyses that could not run, each with its reason
    verdict : :class:`Verdict`
    timings : seconds per stage; resources : peak memory, models trained or read from the cache per stage
    settings : the profile's settings (reference models, shadow-attack models, PDTP records, ...) and, for a
        torch module target, the recipe its retrained instances follow (optional; added in 0.x, schema 1)
    """

    leakaudit_version: str
    created: str
    command: str
    config: dict[str, Any]
    data: dict[str, Any]
    target: dict[str, Any]
    membership: dict[str, Any] = Field(default_factory=dict)
    dtp: dict[str, Any] | None = None
    attribute: dict[str, Any] = Field(default_factory=dict)
    property: dict[str, Any] = Field(default_factory=dict)
    mip: dict[str, Any] | None = None
    skipped: list[dict[str, str]] = Field(default_factory=list)
    verdict: Verdict
    timings: dict[str, float]
    resources: dict[str, Any]
    settings: dict[str, Any] = Field(default_factory=dict)

"""The schema of ``results.json`` (versioned; fields never change meaning, new ones are optional)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .._results import Result

__all__ = ["AuditResult", "Verdict", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


class Verdict(Result):
    """Publish or not, why, and the thresholds the reasons were judged against."""

    publish: bool
    headline: str
    reasons: list[str]
    passed: list[str]
    thresholds: dict[str, float]


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

"""What every analysis of the audit reads: the settings, the records, the audited model, seeds and the engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import AuditConfig
from .data import AuditData
from .target import Target

__all__ = ["AuditContext"]


@dataclass(frozen=True)
class AuditContext:
    """The inputs shared by the analyses (read-only).

    Attributes
    ----------
    cfg : AuditConfig
    data : AuditData
    target : Target
    seeds : dict of str -> int
        One child seed per analysis (see ``pipeline._SEED_SLOTS``).
    engine : leakaudit.engine.Engine
        Trains every retrained model (reference, leave-one-out, noise-floor), with its on-disk cache.
    check_confidence : float
        Confidence at which each check is judged: ``1 - (1 - cfg.confidence) / n_checks`` (Bonferroni), so that
        the verdict's checks hold together at ``cfg.confidence``.
    """

    cfg: AuditConfig
    data: AuditData
    target: Target
    seeds: dict
    engine: Any
    check_confidence: float

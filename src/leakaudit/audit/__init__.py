"""The audit: one call that tells a model owner whether to publish (layer 4)."""

from .config import AuditConfig, Thresholds, load_config, make_config
from .pipeline import run_audit
from .results import AuditResult, Verdict

__all__ = ["AuditConfig", "Thresholds", "load_config", "make_config", "run_audit", "AuditResult", "Verdict"]

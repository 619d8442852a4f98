"""The audit: one call that tells a model owner whether to publish (layer 4).

``leakaudit.audit(model, members, nonmembers, label=...)`` runs it in memory (:func:`leakaudit.audit.api.audit`;
this package is callable as that function); ``leakaudit audit`` is the command line over files.
"""

import sys as _sys
import types as _types

from .api import audit
from .config import AuditConfig, Thresholds, load_config, make_config
from .pipeline import audit_core, run_audit
from .results import AuditResult, Verdict

__all__ = ["audit", "AuditConfig", "Thresholds", "load_config", "make_config", "run_audit", "audit_core",
           "AuditResult", "Verdict"]


class _CallableAudit(_types.ModuleType):
    """``leakaudit.audit`` is both this package and the function :func:`leakaudit.audit.api.audit`: importing the
    package's modules sets ``leakaudit.audit`` to the package, so the package itself answers the call."""

    def __call__(self, *args, **kwargs) -> AuditResult:
        return audit(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableAudit

"""The audit: one call that tells a model owner whether to publish (layer 4).

``leakaudit.audit(model, members, nonmembers, label=...)`` runs it in memory (:func:`leakaudit.audit.api.audit`,
which ``leakaudit.audit`` is); ``leakaudit audit`` is the command line over files.
"""

import importlib as _importlib

__all__ = ["audit", "AuditConfig", "Thresholds", "load_config", "make_config", "run_audit", "audit_core",
           "AuditResult", "Verdict"]

#: each public name and its module, imported when first used: the command line builds its options from
#: ``audit.config`` (pydantic only) without importing the numerical libraries the analyses need
_HOME = {"audit": "api", "AuditConfig": "config", "Thresholds": "config", "load_config": "config",
         "make_config": "config", "run_audit": "pipeline", "audit_core": "pipeline", "AuditResult": "result.results",
         "Verdict": "result.results"}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(_importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_HOME))


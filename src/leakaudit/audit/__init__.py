"""The audit: one call that tells a model owner whether to publish (layer 4).

``leakaudit.audit(model, members, nonmembers, label=...)`` runs it in memory (:func:`leakaudit.audit.api.audit`;
this package is callable as that function); ``leakaudit audit`` is the command line over files.
"""

_PACKAGE_DOC = __doc__

import importlib as _importlib
import sys as _sys
import types as _types

__all__ = ["audit", "AuditConfig", "Thresholds", "load_config", "make_config", "run_audit", "audit_core",
           "AuditResult", "Verdict"]

#: each public name and its module, imported when first used: the command line builds its options from
#: ``audit.config`` (pydantic only) without importing the numerical libraries the analyses need
_HOME = {"audit": "api", "AuditConfig": "config", "Thresholds": "config", "load_config": "config",
         "make_config": "config", "run_audit": "pipeline", "audit_core": "pipeline", "AuditResult": "results",
         "Verdict": "results"}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(_importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_HOME))


class _CallableAudit(_types.ModuleType):
    """``leakaudit.audit`` is both this package and the function :func:`leakaudit.audit.api.audit`: importing the
    package's modules sets ``leakaudit.audit`` to the package, so the package itself answers the call."""

    def __call__(self, *args, **kwargs):
        from .api import audit

        return audit(*args, **kwargs)

    @property
    def __signature__(self):
        """The call's real signature (``inspect.signature(leakaudit.audit)``), not ``(*args, **kwargs)``."""
        import inspect

        from .api import audit

        return inspect.signature(audit)

    @property
    def __doc__(self):
        """The call's docstring first (``help(leakaudit.audit)`` in a notebook), then the package's."""
        from .api import audit

        return f"leakaudit.audit{self.__signature__}\n\n{audit.__doc__}\n\n{_PACKAGE_DOC}"


_sys.modules[__name__].__class__ = _CallableAudit

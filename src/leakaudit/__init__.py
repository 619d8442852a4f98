"""leakaudit: measure what a trained model leaks about its training data.

Layers (data flows down the list, imports only go up it):

0. ``_version``, ``exceptions`` and ``_text`` (the standard library only), ``_validation``, ``_random``, ``_results``,
   ``_resources``
1. ``data``, ``metrics``, ``learners``
2. ``engine``
3. ``membership``, ``dtp``, ``attribute``, ``property``, ``mip``, ``dpaudit``, ``lm`` (one package per paper idea;
   ``lm``: language models)
4. ``reproduce``, ``checks``, ``report``, ``audit``
5. ``cli``
"""

from . import audit as _audit_package
from ._version import __version__
from .exceptions import LeakauditError

# ``leakaudit.audit`` is the function (__getattr__), not the package, which importing it above bound here once:
# importing its modules later (``import leakaudit.audit.config``) binds them on the package only
del audit

__all__ = ["__version__", "LeakauditError", "audit", "estimate", "AuditResult", "register_attack", "register_analysis",
           "unlearning_check"]

def __getattr__(name: str):
    """The public names, imported when first used: ``import leakaudit`` (and ``leakaudit --version``) stays light."""
    if name == "audit":
        from .audit.api import audit

        # the function answers for the package's names too: ``import leakaudit.audit.config as config`` reads
        # ``config`` as an attribute of ``leakaudit.audit``
        audit.__dict__ = _audit_package.__dict__
        globals()["audit"] = audit
        return audit
    if name == "estimate":
        from .audit.api import estimate

        return estimate
    if name == "AuditResult":
        from .audit.result.results import AuditResult

        return AuditResult
    if name == "register_attack":
        from .membership._registry import register_attack

        return register_attack
    if name == "register_analysis":
        from .audit.plan import register_analysis

        return register_analysis
    if name == "unlearning_check":
        from .audit.unlearning import unlearning_check

        return unlearning_check
    raise AttributeError(f"module 'leakaudit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

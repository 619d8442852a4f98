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

#: where each public name is defined: imported when first used
_LAZY = {"audit": "audit.api", "estimate": "audit.api", "AuditResult": "audit.result.results",
         "register_attack": "membership._registry", "register_analysis": "audit.plan",
         "unlearning_check": "audit.unlearning"}

__all__ = ["__version__", "LeakauditError", *_LAZY]

def __getattr__(name: str):
    """The public names, imported when first used: ``import leakaudit`` (and ``leakaudit --version``) stays light."""
    if name not in _LAZY:
        raise AttributeError(f"module 'leakaudit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name == "audit":
        # the function answers for the package's names too: ``import leakaudit.audit.config as config`` reads
        # ``config`` as an attribute of ``leakaudit.audit``
        value.__dict__ = _audit_package.__dict__
        globals()["audit"] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""leakaudit: measure what a trained model leaks about its training data.

Layers (data flows down the list, imports only go up it):

0. ``exceptions``, ``_validation``, ``_random``, ``_results``, ``_resources``
1. ``data``, ``metrics``, ``learners``
2. ``engine``
3. ``membership``, ``dtp``, ``attribute``, ``property``, ``mip``, ``dpaudit``, ``lm`` (one package per paper idea;
   ``lm``: language models)
4. ``reproduce``, ``checks``, ``report``, ``audit``
5. ``cli``
"""

__version__ = "0.1.0"

from .exceptions import LeakauditError  # noqa: E402

__all__ = ["__version__", "LeakauditError", "audit", "AuditResult", "register_attack"]

#: the public names, imported when first used: ``import leakaudit`` (and ``leakaudit --version``) stays light
_LAZY = {"audit": ("leakaudit.audit", None), "AuditResult": ("leakaudit.audit.results", "AuditResult"),
         "register_attack": ("leakaudit.membership._registry", "register_attack")}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'leakaudit' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    mod = importlib.import_module(module)
    return mod if attr is None else getattr(mod, attr)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

"""Paper reproductions: ``leakaudit reproduce --list`` and ``leakaudit reproduce NAME``.

Each paper's module registers its reproductions on import.
"""

from importlib import import_module

from ._judge import STATUSES
from ._registry import PROFILES, Reproduction, Row, gather, get, names, register, row, run, run_all



def load_all() -> None:
    """Import every paper module of this package so that its reproductions are registered.

    Modules are named after their paper (``long_membership``, ``long_dtp``,
    ``yeom``, ``chase``, ``izzo``); every non-underscore module is imported.
    """
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            import_module(f"{__name__}.{info.name}")


__all__ = ["PROFILES", "STATUSES", "Reproduction", "Row", "gather", "get", "names", "register", "row", "run", "run_all",
           "load_all"]

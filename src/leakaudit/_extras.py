"""Optional dependencies: import what a feature needs, or say in one line which extra installs it.

``pip install leakaudit`` brings what an audit of a scikit-learn model needs. Torch models, XGBoost, LightGBM and CatBoost models,
language models, DP-SGD and DP accounting, Ray, MLflow, the text predicates and parquet files need extras (``[project.optional-dependencies]`` in
pyproject.toml; ``leakaudit doctor`` lists which are installed). :func:`require` imports a feature's package and,
where it is missing, raises :class:`~leakaudit.exceptions.UnsupportedError` naming the feature, the package and the
extra, which the command line prints as one line (exit status 2).

Examples
--------
>>> from leakaudit._extras import require
>>> require("json", "reading JSON").__name__  # a module of the standard library or the core install
'json'
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .exceptions import UnsupportedError

__all__ = ["EXTRAS", "extra_of", "installed", "require"]

#: the top-level module -> (the distribution that provides it, the leakaudit extra that installs it)
EXTRAS: dict[str, tuple[str, str]] = {
    "torch": ("torch", "torch"),
    "ray": ("ray", "ray"),
    "vaderSentiment": ("vaderSentiment", "text"),
    "transformers": ("transformers", "lm"),
    "tokenizers": ("tokenizers", "lm"),
    "safetensors": ("safetensors", "lm"),
    "peft": ("peft", "lm"),
    "rapidfuzz": ("rapidfuzz", "lm"),
    "opacus": ("opacus", "dp"),
    "dp_accounting": ("dp-accounting", "dp"),
    "pyarrow": ("pyarrow", "parquet"),
    "xgboost": ("xgboost", "xgboost"),
    "lightgbm": ("lightgbm", "lightgbm"),
    "catboost": ("catboost", "catboost"),
    "mlflow": ("mlflow", "mlflow"),
}


def extra_of(module: str) -> tuple[str, str]:
    """(distribution, extra) of an optional module (its top-level name); KeyError for a module of no extra."""
    return EXTRAS[module.split(".")[0]]


def installed(module: str) -> bool:
    """Whether ``module`` (its top-level package) can be imported, without importing it."""
    return importlib.util.find_spec(module.split(".")[0]) is not None


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` (dotted names allowed) for ``feature``, or raise UnsupportedError naming its extra.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"torch"`` or ``"dp_accounting.pld"``.
    feature : str
        What needs it, as the message's subject: ``"DP-SGD"``, ``"reading .parquet files"``.

    Returns
    -------
    module : ModuleType
        The imported module.

    Raises
    ------
    UnsupportedError
        ``"<feature> needs <package>, which is not installed: pip install 'leakaudit[<extra>]'"`` when the package
        is absent; "which does not import (<the import's error>)" when it, or a module it imports, fails.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        dist, extra = extra_of(module)
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == module.split(".")[0]
        state = "is not installed" if missing else f"does not import ({type(exc).__name__}: {exc})"
        raise UnsupportedError(f"{feature} needs {dist}, which {state}: pip install 'leakaudit[{extra}]'") from None

"""The training recipe a boosting library's model records, checked as untrusted input before any library trains it.

LightGBM writes its parameters into every text model (``parameters:``), XGBoost into its configuration
(``save_config()``, in a model file's ``training_config`` attribute), CatBoost into ``get_all_params()``; leakaudit
retrains that recipe. Each learner declares the parameters it carries, each with its type and the range its library
documents (:class:`Param`); :func:`check_recipe` converts every value and refuses, in one line naming the model and
the parameter, a name the library does not know, a value of another type, one outside its range, or a constraint on
a feature the model does not have. A value read from a file is never quoted in a message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ..exceptions import UnsafeFileError

__all__ = ["Param", "Int", "Real", "Choice", "FLAG", "MONOTONE", "MONOTONE_ALL", "INTERACTIONS", "check_recipe", "recipe_error"]

_INT = re.compile(r"[-+]?\d{1,19}")
_GROUPS = re.compile(r"[\[\]() 0-9,]{0,20000}")
_MAX_INT = 2**31 - 1
_F32_TINY, _F32_MAX = 1.1754944e-38, 3.4028234e38


@dataclass(frozen=True)
class Param:
    """One recipe parameter: ``kind`` int, float, flag, choice, monotone (one of -1, 0, 1 per feature) or
    interactions (groups of feature indices); numbers within [lo, hi] (lo excluded when ``open_lo``)."""

    kind: str
    lo: float = -math.inf
    hi: float = math.inf
    open_lo: bool = False
    choices: tuple[str, ...] = ()
    float32: bool = False  # held in a 32-bit float: 0 or a normal float32's magnitude
    every_feature: bool = False  # monotone: one constraint for each feature, not at most one

    def range(self) -> str:
        return f"{'(' if self.open_lo else '['}{self.lo:g}, {self.hi:g}]"


def Int(lo: int = 0, hi: int = _MAX_INT) -> Param:  # noqa: N802 - a constructor, read as a type
    return Param("int", lo, hi)


def Real(lo: float = 0.0, hi: float = math.inf, *, open_lo: bool = False, float32: bool = False) -> Param:  # noqa: N802
    return Param("float", lo, hi, open_lo, float32=float32)


def Choice(*words: str) -> Param:  # noqa: N802
    return Param("choice", choices=words)


FLAG = Param("flag")
MONOTONE = Param("monotone")  # constraints for at most every feature (XGBoost)
MONOTONE_ALL = Param("monotone", every_feature=True)  # one for every feature (LightGBM)
INTERACTIONS = Param("interactions")


def recipe_error(where: str, name: str, what: str) -> UnsafeFileError:
    """The one-line refusal of a recipe parameter."""
    return UnsafeFileError(f"{where}: its training parameter {name} {what}; refusing to retrain it")


def _number(v: Any, p: Param, where: str, name: str) -> int | float:
    if isinstance(v, str):
        s = v.strip()
        try:
            v = int(s) if _INT.fullmatch(s) else float(s)
        except ValueError:
            raise recipe_error(where, name, "is not a number") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise recipe_error(where, name, "is not a finite number")
    if p.kind == "int":
        if isinstance(v, float) and not v.is_integer():
            raise recipe_error(where, name, "is not an integer")
        v = int(v)
    if not p.lo <= v <= p.hi or (p.open_lo and v == p.lo):
        raise recipe_error(where, name, f"is {v:g}, outside {p.range()}")
    if p.float32 and v and not _F32_TINY <= abs(v) <= _F32_MAX:
        raise recipe_error(where, name, f"is {v:g}, not 0 or a 32-bit float's magnitude, which the library keeps")
    return v


def _indices(v: Any, where: str, name: str) -> list[list[int]]:
    """``[[0, 1], [2]]``, ``"[0,1],[2]"`` (LightGBM) or ``"(1,0,-1)"`` as lists of integers (one list when flat)."""
    if isinstance(v, (list, tuple)):
        v = str(list(v))
    if not isinstance(v, str) or not _GROUPS.fullmatch(v.replace("-", "")):
        raise recipe_error(where, name, "is not a list of feature indices")
    groups = re.findall(r"[\[(]([^\[\]()]*)[\])]", v) or ([v] if v.strip() else [])
    try:
        return [[int(t) for t in g.split(",") if t.strip()] for g in groups]
    except ValueError:
        raise recipe_error(where, name, "is not a list of feature indices") from None


def _value(v: Any, p: Param, where: str, name: str, n_features: int) -> Any:
    if p.kind in ("int", "float"):
        return _number(v, p, where, name)
    if p.kind == "flag":
        word = str(v).strip().lower()
        if isinstance(v, bool) or word in ("0", "1", "true", "false"):
            return v if isinstance(v, bool) else word in ("1", "true")
        raise recipe_error(where, name, "is not true or false")
    if p.kind == "choice":
        if v not in p.choices:
            raise recipe_error(where, name, f"is not one of {', '.join(p.choices)} (what leakaudit retrains)")
        return v
    groups = _indices(v, where, name)
    flat = [i for g in groups for i in g]
    if p.kind == "monotone":
        if len(groups) > 1 or any(i not in (-1, 0, 1) for i in flat) or len(flat) > n_features or (
                p.every_feature and len(flat) not in (0, n_features)):
            raise recipe_error(where, name, f"is not one of -1, 0, 1 for each of {'' if p.every_feature else 'at most '}"
                                            f"{n_features} features")
        return tuple(flat)
    if len(groups) > n_features or any(not 0 <= i < n_features for i in flat):
        raise recipe_error(where, name, f"names a feature outside the model's {n_features}")
    return [g for g in groups if g]


def check_recipe(params: Mapping[str, Any], spec: Mapping[str, Param], *, where: str, n_features: int,
                 known: Collection[str] | None = None) -> dict[str, Any]:
    """The parameters of ``params`` that ``spec`` declares, each converted and checked (empty values skipped);
    ``known``: every name the library itself documents (None: not checked), a name outside it and ``spec`` refused.

    Raises UnsafeFileError, one line naming ``where`` and the parameter."""
    out = {}
    for k, (name, v) in enumerate(params.items(), 1):
        if name in spec:
            if v is not None and v != "":
                out[name] = _value(v, spec[name], where, name, n_features)
        elif known is not None and name not in known:
            raise UnsafeFileError(f"{where}: its training parameter number {k} is not one its library documents; "
                                  "refusing to retrain it")
    return out

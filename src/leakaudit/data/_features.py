"""Named, typed features and the rules that infer their kinds from a table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .._validation import check_choice, shown
from ..exceptions import InvalidInputError, InvalidParameterError

__all__ = ["Feature", "FEATURE_KINDS", "MISSING_LABEL", "infer_feature", "infer_features"]

FEATURE_KINDS = ("numeric", "categorical", "binary", "text")
MISSING_LABEL = "<missing>"


@dataclass(frozen=True)
class Feature:
    """One raw feature of a :class:`~leakaudit.data.Dataset`.

    Parameters
    ----------
    name : str
        Column name in ``Dataset.frame``.
    kind : {"numeric", "categorical", "binary", "text"}
        numeric: real values, z-scored by the encoder. categorical: one-hot encoded.
        binary: two values, encoded as one 0/1 column (``categories[1]`` is 1).
        text: free text, not tabular-encodable (see :func:`~leakaudit.data.bag_of_words`).
    categories : tuple, optional
        categorical: the values, in one-hot column order. binary: ``(negative, positive)``.
        None for numeric and text.
    missing : bool, default False
        categorical only: the column has missing values, encoded as an extra category
        (the last column of the group).
    """

    name: str
    kind: str
    categories: tuple | None = None
    missing: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidParameterError(f"Feature name must be a non-empty string; got {self.name!r}")
        check_choice(self.kind, name=f"kind of feature {self.name!r}", choices=FEATURE_KINDS)
        if self.kind in ("numeric", "text"):
            if self.categories is not None:
                raise InvalidParameterError(f"{self.kind} feature {self.name!r} takes no categories")
            if self.missing:
                raise InvalidParameterError(f"missing=True is only for categorical features ({self.name!r})")
            return
        cats = tuple(self.categories) if self.categories is not None else None
        object.__setattr__(self, "categories", cats)
        if cats is None:
            raise InvalidParameterError(f"{self.kind} feature {self.name!r} needs its categories")
        if len(set(cats)) != len(cats):
            raise InvalidParameterError(f"categories of feature {self.name!r} repeat a value: {shown(cats, 200)}")
        if self.kind == "binary":
            if len(cats) != 2:
                raise InvalidParameterError(
                    f"binary feature {self.name!r} needs exactly 2 categories (negative, positive); got "
                    f"{shown(cats, 200)}"
                )
            if self.missing:
                raise InvalidParameterError(
                    f"binary feature {self.name!r} cannot have missing values; declare it categorical"
                )
        elif len(cats) == 0 and not self.missing:
            raise InvalidParameterError(f"categorical feature {self.name!r} has no categories")

    @property
    def width(self) -> int | None:
        """Number of encoded columns (None for text)."""
        if self.kind == "text":
            return None
        if self.kind == "categorical":
            return len(self.categories) + int(self.missing)
        return 1


def _sorted_values(values: np.ndarray) -> tuple:
    vals = list(values)
    try:
        vals.sort()
    except TypeError:  # mixed types: order by their text
        vals.sort(key=str)
    return tuple(v.item() if isinstance(v, np.generic) else v for v in vals)


def infer_feature(series: pd.Series, name: str | None = None, kind: str | None = None) -> Feature:
    """Infer one feature's kind and categories from a column.

    Rules: a bool column, or a numeric column whose values are all 0 or 1 with none
    missing, is ``binary``; any other numeric column is ``numeric``; everything else
    (strings, pandas categoricals, mixed objects) is ``categorical``, with missing
    values as their own category. ``kind`` forces the kind (categories are still read
    from the data); ``"text"`` must be asked for.
    """
    name = str(series.name if name is None else name)
    isna = series.isna()
    has_missing = bool(isna.any())
    is_numeric = pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)
    raw_uniq = series.dropna().unique()  # fast, vectorised, also on arrow-backed strings
    uniq = np.asarray(raw_uniq, dtype=object)
    if kind is None:
        if pd.api.types.is_bool_dtype(series.dtype):
            kind = "binary" if not has_missing else "categorical"
        elif is_numeric:
            if not has_missing and len(uniq) and bool(np.isin(np.asarray(raw_uniq, dtype=np.float64), (0, 1)).all()):
                kind = "binary"
            else:
                kind = "numeric"
        else:
            kind = "categorical"
    check_choice(kind, name=f"kind of column {name!r}", choices=FEATURE_KINDS)
    if kind in ("numeric", "text"):
        if kind == "numeric" and not is_numeric:
            raise InvalidInputError(f"column {name!r} was declared numeric but holds non-numeric values")
        return Feature(name, kind)
    if kind == "binary":
        if has_missing:
            raise InvalidInputError(f"column {name!r} was declared binary but has missing values")
        cats = _sorted_values(uniq)
        if pd.api.types.is_bool_dtype(series.dtype):
            cats = (False, True)
        elif is_numeric and set(cats) <= {0, 1}:
            cats = (0, 1)
        if len(cats) != 2:
            raise InvalidInputError(f"column {name!r} was declared binary but holds {len(cats)} distinct values")
        return Feature(name, "binary", cats)
    return Feature(name, "categorical", _sorted_values(uniq), missing=has_missing)


def infer_features(frame: pd.DataFrame, kinds: Mapping[str, str] | None = None) -> tuple[Feature, ...]:
    """Infer a :class:`Feature` for every column of ``frame`` (see :func:`infer_feature`)."""
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    kinds = dict(kinds or {})
    unknown = [k for k in kinds if k not in set(map(str, frame.columns))]
    if unknown:
        raise InvalidInputError(f"kinds names unknown column(s) {unknown}; columns are {list(map(str, frame.columns))}")
    plain = _plainly_numeric(frame, kinds)
    return tuple(Feature(str(c), "numeric") if c in plain else infer_feature(frame[c], str(c), kinds.get(str(c)))
                 for c in frame.columns)


def _plainly_numeric(frame: pd.DataFrame, kinds: Mapping[str, str]) -> set:
    """The columns :func:`infer_feature` would call ``numeric`` on sight, found in one pass over the table rather
    than column by column (a table may have 10,000 columns): a numpy integer or float column, its kind not forced,
    holding a value other than 0 and 1 (or a missing one). The others are inferred one by one."""
    cols = [c for c, t in frame.dtypes.items() if isinstance(t, np.dtype) and t.kind in "iuf" and str(c) not in kinds]
    if not cols or len(frame) == 0:
        return set()
    values = frame[cols].to_numpy(dtype=np.float64)
    binary = ((values == 0) | (values == 1)).all(axis=0)  # NaN is neither: such a column is numeric too
    return {c for c, b in zip(cols, binary) if not b}


def _as_str_tuple(x: Any, *, name: str) -> tuple[str, ...]:
    if x is None:
        return ()
    if isinstance(x, str):
        return (x,)
    try:
        return tuple(str(v) for v in x)
    except TypeError:
        raise InvalidParameterError(f"{name} must be a column name or a sequence of them; got {x!r}") from None

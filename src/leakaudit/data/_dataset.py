"""The :class:`Dataset` type, the constructor for users' own tables, and :func:`read_table`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .._extras import require
from .._validation import check_choice, check_indices, check_linked_file, clip, shown
from ..exceptions import DataFileError, InvalidInputError, InvalidParameterError
from ._encoder import TabularEncoder
from ._features import Feature, _as_str_tuple, infer_feature, infer_features

__all__ = ["Dataset", "from_frame", "read_table", "table_extension", "TASKS"]

TASKS = ("classification", "regression")


@dataclass(frozen=True, eq=False)
class Dataset:
    """A table of raw (unencoded) features with labels and metadata.

    Parameters
    ----------
    name : str
    frame : pandas.DataFrame of shape (n_rows, n_features)
        Raw feature values, one column per entry of ``features`` in the same order, index 0..n-1.
        Missing values are NaN/None.
    y : ndarray of shape (n_rows,)
        int64 class indices 0..k-1 (classification) or float64 targets (regression).
    features : tuple of Feature
    label_name : str
    class_names : tuple of str or None
        ``class_names[i]`` is the original label of class ``i``; None for regression.
    sensitive : tuple of str, default ()
        Feature names a data owner may want to protect (targets of attribute and property inference).
    task : {"classification", "regression"}
    extras : pandas.DataFrame or None
        Per-row side columns that are not features (Census ``instance_weight``, Adult
        ``split``, e-mail ids); sliced along with the rows.
    info : dict
        Free-form metadata: source, citation, licence, preprocessing notes.

    Notes
    -----
    The class is frozen (fields cannot be reassigned); methods return new datasets. The
    categories of every feature are fixed when the dataset is built from the whole table,
    so every subset encodes to the same columns.
    """

    name: str
    frame: pd.DataFrame
    y: np.ndarray
    features: tuple[Feature, ...]
    label_name: str
    class_names: tuple[str, ...] | None
    sensitive: tuple[str, ...] = ()
    task: str = "classification"
    extras: pd.DataFrame | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice(self.task, name="task", choices=TASKS)
        if not isinstance(self.frame, pd.DataFrame):
            raise InvalidInputError(f"frame must be a pandas DataFrame; got {type(self.frame).__name__}")
        feats = tuple(self.features)
        object.__setattr__(self, "features", feats)
        object.__setattr__(self, "sensitive", _as_str_tuple(self.sensitive, name="sensitive"))
        names = [f.name for f in feats]
        if len(set(names)) != len(names):
            raise InvalidInputError(f"feature names repeat: {names}")
        if [str(c) for c in self.frame.columns] != names:
            raise InvalidInputError(
                f"frame columns {list(map(str, self.frame.columns))} do not match the features {names} (same order)"
            )
        y = np.asarray(self.y)
        if y.ndim != 1 or len(y) != len(self.frame):
            raise InvalidInputError(f"y must have shape ({len(self.frame)},); got {y.shape}")
        if self.task == "classification":
            if y.dtype.kind not in "iu":
                raise InvalidInputError(f"classification labels y must be integers; got dtype {y.dtype}")
            if self.class_names is None:
                raise InvalidInputError("classification datasets need class_names")
            cn = tuple(str(c) for c in self.class_names)
            object.__setattr__(self, "class_names", cn)
            if len(y) and (y.min() < 0 or y.max() >= len(cn)):
                raise InvalidInputError(f"labels y must lie in 0..{len(cn) - 1} (one per class name)")
            y = y.astype(np.int64, copy=False)
        else:
            if self.class_names is not None:
                raise InvalidInputError("regression datasets take class_names=None")
            y = y.astype(np.float64, copy=False)
        object.__setattr__(self, "y", y)
        bad = [s for s in self.sensitive if s not in set(names)]
        if bad:
            raise InvalidInputError(f"sensitive names unknown column(s) {bad}; features are {names}")
        if self.extras is not None:
            if not isinstance(self.extras, pd.DataFrame) or len(self.extras) != len(self.frame):
                raise InvalidInputError("extras must be a DataFrame with one row per dataset row")
        object.__setattr__(self, "info", dict(self.info))

    # ------------------------------------------------------------------ basics
    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        k = ", ".join(f"{v} {n}" for n, v in Counter(f.kind for f in self.features).items())
        lab = f"{self.n_classes} classes" if self.task == "classification" else "regression"
        return f"Dataset({self.name!r}: {len(self)} rows, {len(self.features)} features ({k}), {lab})"

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)

    @property
    def n_classes(self) -> int | None:
        """Number of classes (None for regression)."""
        return None if self.class_names is None else len(self.class_names)

    def feature(self, name: str) -> Feature:
        """The :class:`Feature` called ``name``."""
        for f in self.features:
            if f.name == name:
                return f
        raise InvalidInputError(
            f"no feature {name!r} in dataset {self.name!r}; features are {list(self.feature_names)}"
        )

    # --------------------------------------------------------------- reshaping
    def subset(self, idx: Any) -> "Dataset":
        """The rows ``idx`` (int indices or a boolean mask), in that order, as a new Dataset.

        Parameters
        ----------
        idx : array-like of int of shape (m,), or bool of shape (n_rows,)
        """
        rows = check_indices(idx, name="idx", n=len(self), allow_empty=True)
        extras = None if self.extras is None else self.extras.iloc[rows].reset_index(drop=True)
        return replace(
            self, frame=self.frame.iloc[rows].reset_index(drop=True), y=self.y[rows], extras=extras
        )

    def select(self, columns: Sequence[str]) -> "Dataset":
        """Keep only the features ``columns`` (in that order); sensitive names not kept are dropped."""
        cols = _as_str_tuple(columns, name="columns")
        if not cols:
            raise InvalidInputError("columns is empty; keep at least one feature")
        feats = tuple(self.feature(c) for c in cols)
        if len(set(cols)) != len(cols):
            raise InvalidInputError(f"columns repeat a name: {list(cols)}")
        return replace(
            self,
            frame=self.frame[list(cols)],
            features=feats,
            sensitive=tuple(s for s in self.sensitive if s in cols),
        )

    def drop(self, columns: Sequence[str]) -> "Dataset":
        """Remove the features ``columns``."""
        cols = set(_as_str_tuple(columns, name="columns"))
        for c in cols:
            self.feature(c)
        return self.select([n for n in self.feature_names if n not in cols])

    def with_feature(self, name: str, values: Any, kind: str | None = None, *, sensitive: bool = False) -> "Dataset":
        """Append a feature column (e.g. Chase et al.'s random property bit).

        Parameters
        ----------
        name : str
            New column name (must not exist).
        values : array-like of shape (n_rows,)
        kind : str, optional
            Forced kind; inferred by :func:`infer_feature` when None.
        sensitive : bool
            Also add ``name`` to ``sensitive``.
        """
        if name in self.feature_names:
            raise InvalidInputError(f"feature {name!r} already exists in dataset {self.name!r}")
        s = pd.Series(np.asarray(values) if not isinstance(values, pd.Series) else values.to_numpy(), name=name)
        if len(s) != len(self):
            raise InvalidInputError(f"values must have one entry per row ({len(self)}); got {len(s)}")
        feat = infer_feature(s, name, kind)
        frame = self.frame.assign(**{name: s.to_numpy()})
        return replace(
            self,
            frame=frame,
            features=self.features + (feat,),
            sensitive=self.sensitive + ((name,) if sensitive else ()),
        )

    # ---------------------------------------------------------------- encoding
    def encoder(
        self, fit_idx: Any = None, *, scale_numeric: bool = True, handle_unknown: str = "error"
    ) -> TabularEncoder:
        """A :class:`TabularEncoder` fitted on rows ``fit_idx`` (all rows when None)."""
        if fit_idx is None:
            fit_frame = self.frame
        else:
            fit_frame = self.frame.iloc[check_indices(fit_idx, name="fit_idx", n=len(self))]
        return TabularEncoder(self.features, scale_numeric=scale_numeric, handle_unknown=handle_unknown).fit(fit_frame)

    def encode(self, fit_idx: Any = None, *, scale_numeric: bool = True) -> tuple[np.ndarray, TabularEncoder]:
        """Encode every row: z-scored numerics, 0/1 binaries, one-hot categoricals (missing as a category).

        Parameters
        ----------
        fit_idx : array-like of int, optional
            Rows whose statistics the numeric z-scores use (e.g. the candidate set D). All rows when None.
        scale_numeric : bool, default True

        Returns
        -------
        X : ndarray of shape (n_rows, encoder.n_features_out_), float64
            Column order: numeric, binary, then one-hot groups (see :class:`TabularEncoder`).
        encoder : TabularEncoder
            Fitted; ``encoder.groups[name]`` is each feature's column slice.
        """
        enc = self.encoder(fit_idx, scale_numeric=scale_numeric)
        return enc.transform(self.frame), enc

    def labels(self) -> pd.Series:
        """The labels with their original names (classification) or values (regression)."""
        if self.class_names is None:
            return pd.Series(self.y, name=self.label_name)
        return pd.Series(np.asarray(self.class_names, dtype=object)[self.y], name=self.label_name)

    def to_frame(self) -> pd.DataFrame:
        """Features plus the label column (original label names)."""
        return self.frame.assign(**{self.label_name: self.labels().to_numpy()})


def _encode_labels(s: pd.Series, task: str) -> tuple[np.ndarray, tuple[str, ...] | None]:
    if task == "regression":
        try:
            y = pd.to_numeric(s, errors="raise").to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidInputError(f"label {s.name!r} must be numeric for regression") from None
        if not np.isfinite(y).all():
            raise InvalidInputError(f"label {s.name!r} has missing or infinite values; drop those rows")
        return y, None
    if s.isna().any():
        raise InvalidInputError(f"label {s.name!r} has {int(s.isna().sum())} missing value(s); drop those rows")
    values = s.to_numpy()
    classes = list(pd.unique(values))
    try:
        classes.sort()
    except TypeError:
        classes.sort(key=str)
    if len(classes) < 2:
        raise InvalidInputError(
            f"label {s.name!r} holds a single class ({shown(classes[0])}); classification needs at least 2"
        )
    y = pd.Index(classes, dtype=object).get_indexer(values.astype(object)).astype(np.int64)
    return y, tuple(str(c.item() if isinstance(c, np.generic) else c) for c in classes)


def _infer_task(s: pd.Series) -> str:
    """float labels with any non-integer value mean regression; anything else is classification."""
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.dropna().to_numpy(dtype=np.float64)
        if len(v) and not np.all(v == np.round(v)):
            return "regression"
    return "classification"


def from_frame(
    df: pd.DataFrame,
    label: str,
    *,
    sensitive: Sequence[str] | str = (),
    task: str | None = None,
    name: str = "custom",
    kinds: Mapping[str, str] | None = None,
    drop: Sequence[str] | str = (),
    extras: Sequence[str] | str = (),
) -> Dataset:
    """Build a :class:`Dataset` from a user's table.

    Parameters
    ----------
    df : pandas.DataFrame
    label : str
        The label column.
    sensitive : str or sequence of str
        Feature columns to treat as sensitive.
    task : {"classification", "regression"}, optional
        Inferred when None: float labels with a non-integer value are regression, others classification.
    name : str
    kinds : dict of str to str, optional
        Forced kinds per column (``{"zip": "categorical"}``); others are inferred
        (bool or 0/1 -> binary, other numbers -> numeric, the rest -> categorical).
    drop : str or sequence of str
        Columns to ignore entirely.
    extras : str or sequence of str
        Columns kept as per-row side data (``Dataset.extras``), not features.

    Returns
    -------
    Dataset
        Classification labels are coded 0..k-1 in sorted order of the original values.
    """
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    df = df.copy()
    df.columns = [str(c) for c in df.columns]
    if df.columns.duplicated().any():
        raise InvalidInputError(f"df has repeated column names: {sorted(set(df.columns[df.columns.duplicated()]))}")
    if len(df) == 0:
        raise InvalidInputError("df is empty (0 rows)")
    if not isinstance(label, str):
        raise InvalidParameterError(f"label must be a column name; got {label!r}")
    if label not in df.columns:
        raise InvalidInputError(f"label column {label!r} is not in the table; columns are "
                                f"{clip(', '.join(map(str, df.columns)), 200)}")
    drop_t, extras_t, sens_t = (_as_str_tuple(drop, name="drop"), _as_str_tuple(extras, name="extras"),
                                _as_str_tuple(sensitive, name="sensitive"))
    problems = [f"{arg} names unknown column {c!r}" for arg, cols in (("drop", drop_t), ("extras", extras_t),
                ("sensitive", sens_t)) for c in cols if c not in df.columns]
    problems += [f"sensitive column {c!r} is also in drop or extras" for c in sens_t if c in drop_t + extras_t]
    if label in drop_t + extras_t + sens_t:
        problems.append(f"label column {label!r} cannot also be in drop, extras or sensitive")
    if problems:
        raise InvalidInputError("; ".join(problems), problems=problems)
    if task is None:
        task = _infer_task(df[label])
    check_choice(task, name="task", choices=TASKS)
    feat_cols = [c for c in df.columns if c != label and c not in drop_t and c not in extras_t]
    if not feat_cols:
        raise InvalidInputError("no feature columns left after removing the label, drop and extras")
    y, class_names = _encode_labels(df[label], task)
    frame = df[feat_cols].reset_index(drop=True)
    feats = infer_features(frame, kinds)
    return Dataset(
        name=name,
        frame=frame,
        y=y,
        features=feats,
        label_name=label,
        class_names=class_names,
        sensitive=sens_t,
        task=task,
        extras=df[list(extras_t)].reset_index(drop=True) if extras_t else None,
        info={"source": "user table"},
    )


def table_extension(path: str | Path) -> str:
    """The extension that tells a table file's format (``".csv"``, ``".tsv"``, ``".parquet"``, ...), lower-case, after
    a compression suffix (``.gz``, ``.xz``, ``.bz2``, ``.zip``, ``.zst``) is set aside; "" where there is none."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".xz", ".bz2", ".zip", ".zst"):
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def read_table(path: str | Path, **kwargs: Any) -> pd.DataFrame:
    """Read a CSV (optionally .gz/.xz/.bz2/.zip/.zst compressed), TSV or Parquet file.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``/``.tab``, ``.txt`` (CSV) or ``.parquet``/``.pq``, with an optional
        compression suffix for the text formats.
    **kwargs
        Passed to :func:`pandas.read_csv` or :func:`pandas.read_parquet`.

    Raises
    ------
    DataFileError
        Missing, unreadable or malformed file, or an unknown extension.
    InvalidInputError
        The file holds no rows or no columns, or is a link to a file others cannot read
        (:func:`~leakaudit._validation.check_linked_file`).
    """
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"table file {p} does not exist" + (" (it is a directory)" if p.is_dir() else ""))
    check_linked_file(p, what="table file")
    ext = table_extension(p)
    if ext in (".parquet", ".pq"):
        require("pyarrow", "reading .parquet files")
    try:
        if ext in (".parquet", ".pq"):
            df = pd.read_parquet(p, **kwargs)
        elif ext in (".csv", ".txt", ".tsv", ".tab"):
            if ext in (".tsv", ".tab"):
                kwargs.setdefault("sep", "\t")
            df = pd.read_csv(p, **kwargs)
        else:
            raise DataFileError(f"cannot tell the format of {p}: use a .csv, .tsv or .parquet file")
    except DataFileError:
        raise
    except pd.errors.EmptyDataError:
        raise InvalidInputError(f"table file {p} is empty") from None
    except Exception as exc:  # parser, arrow and codec errors all mean a malformed file
        detail = " ".join(str(exc).split())  # parser messages span lines; ours is one line
        raise DataFileError(f"could not read table file {p}: {type(exc).__name__}: {detail}") from None
    if df.shape[1] == 0 or len(df) == 0:
        raise InvalidInputError(f"table file {p} holds no data rows ({df.shape[0]} rows x {df.shape[1]} columns)")
    return df

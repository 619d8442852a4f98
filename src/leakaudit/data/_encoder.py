"""The papers' tabular preprocessing: z-scored numerics, 0/1 binaries, one-hot categoricals.

Column order of the encoded matrix (the batched trainer relies on it):

1. numeric features, z-scored, in feature order;
2. binary features as one 0/1 column each, in feature order (numeric and binary columns
   together are the "dense" block, ``X[:, :n_dense_]``);
3. one one-hot group per categorical feature, in feature order; inside a group the
   categories in the order of ``Feature.categories``, then one extra column for
   "missing" when the feature has missing values. Every row has exactly one 1 in each
   group, so a row of an encoded Adult table has ``n_dense_ + n_groups`` non-zeros.

The z-score statistics come from the rows passed to :meth:`TabularEncoder.fit` (Long et
al. 2020, Sec. 5: "normalised", z-score on the candidate set ``D`` per spec long-dtp.md
Sec. 4.1); the categories come from the :class:`Feature` declarations, which a
:class:`Dataset` computes once on the whole table, so every subset encodes to the same
width.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._validation import check_choice, shown
from ..exceptions import InvalidInputError, UnsupportedError
from ._features import MISSING_LABEL, Feature, infer_features

__all__ = ["TabularEncoder"]


def _check_frame_columns(frame: Any, features: Sequence[Feature], *, name: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(f"{name} must be a pandas DataFrame; got {type(frame).__name__}")
    cols = [str(c) for c in frame.columns]
    want = [f.name for f in features]
    have, known = set(cols), set(want)  # built once: a wide table's check stays linear in its columns
    missing = [c for c in want if c not in have]
    unknown = [c for c in cols if c not in known]
    problems = []
    if missing:
        problems.append(f"{name} lacks column(s) {missing}")
    if unknown:
        problems.append(f"{name} has unknown column(s) {unknown} (not among the encoder's features {want})")
    if problems:
        raise InvalidInputError("; ".join(problems), problems=problems)
    return frame


class TabularEncoder:
    """Encode a table of raw features as a float64 matrix (scikit-learn-style fit/transform).

    Parameters
    ----------
    features : sequence of Feature, optional
        Declared features (names, kinds, categories). None infers them from the frame
        given to :meth:`fit` (see :func:`infer_features`); then the categories are the
        ones seen in that frame.
    scale_numeric : bool, default True
        z-score numeric columns with the mean and population standard deviation (ddof=0)
        of the fit rows. A column constant on the fit rows gets scale 1. False passes
        numeric values through unchanged.
    handle_unknown : {"error", "ignore"}, default "error"
        What :meth:`transform` does with a category not declared in ``features``:
        raise, or encode an all-zero group.

    Attributes
    ----------
    features_ : tuple of Feature
    mean_, scale_ : ndarray of shape (n_numeric_,)
        z-score statistics of the numeric columns (0 and 1 when ``scale_numeric=False``).
    n_numeric_, n_binary_, n_dense_ : int
        Numbers of numeric, binary, and numeric + binary columns.
    n_features_out_ : int
    feature_names_out : tuple of str
        ``"age"`` for numeric/binary, ``"workclass=Private"`` and ``"workclass=<missing>"``
        for one-hot columns.
    groups : dict of str to slice
        Each raw feature's columns in the encoded matrix.
    onehot_groups : list of slice
        The one-hot groups in column order.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [20.0, 40.0], "sex": ["F", "M"]})
    >>> enc = TabularEncoder().fit(df)
    >>> enc.transform(df)
    array([[-1.,  1.,  0.],
           [ 1.,  0.,  1.]])
    >>> enc.feature_names_out
    ('age', 'sex=F', 'sex=M')
    """

    def __init__(
        self,
        features: Sequence[Feature] | None = None,
        *,
        scale_numeric: bool = True,
        handle_unknown: str = "error",
    ):
        self.features = features
        self.scale_numeric = scale_numeric
        self.handle_unknown = handle_unknown

    # ------------------------------------------------------------------ fit
    def fit(self, frame: pd.DataFrame, y: Any = None) -> "TabularEncoder":
        """Learn the column layout and the numeric statistics from ``frame``.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_rows, n_features)
            Raw features; the rows whose statistics are used (e.g. the candidate set D).
        y : ignored
        """
        check_choice(self.handle_unknown, name="handle_unknown", choices=("error", "ignore"))
        if isinstance(frame, pd.DataFrame) and len(frame) == 0:
            raise InvalidInputError("frame is empty; the encoder needs at least one row to fit")
        if self.features is None:
            if not isinstance(frame, pd.DataFrame):
                raise InvalidInputError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
            feats = infer_features(frame)
        else:
            feats = tuple(self.features)
            if not feats:
                raise InvalidInputError("features is empty; at least one feature is required")
            if not all(isinstance(f, Feature) for f in feats):
                raise InvalidInputError("features must be a sequence of leakaudit.data.Feature")
        _check_frame_columns(frame, feats, name="frame")
        text = [f.name for f in feats if f.kind == "text"]
        if text:
            raise UnsupportedError(
                f"text feature(s) {text} cannot be tabular-encoded; turn them into columns first "
                "(leakaudit.data.bag_of_words) or drop them"
            )
        numeric = [f for f in feats if f.kind == "numeric"]
        binary = [f for f in feats if f.kind == "binary"]
        categorical = [f for f in feats if f.kind == "categorical"]

        # statistics of the numeric columns on the fit rows (checked to be numbers even when not scaled)
        mean, scale = np.zeros(len(numeric)), np.ones(len(numeric))
        if numeric:
            block = self._numeric_block(frame, numeric, name="frame")
            if self.scale_numeric:
                mean = block.mean(axis=0)
                std = block.std(axis=0)  # ddof=0, as sklearn.preprocessing.StandardScaler
                scale = np.where(std > 0, std, 1.0)
        self.mean_, self.scale_ = mean, scale

        names: list[str] = [f.name for f in numeric] + [f.name for f in binary]
        groups: dict[str, slice] = {f.name: slice(i, i + 1) for i, f in enumerate(numeric + binary)}
        col = len(names)
        onehots = []
        for f in categorical:
            width = len(f.categories) + int(f.missing)
            names.extend(f"{f.name}={c}" for c in f.categories)
            if f.missing:
                names.append(f"{f.name}={MISSING_LABEL}")
            groups[f.name] = slice(col, col + width)
            onehots.append(slice(col, col + width))
            col += width
        self.features_ = feats
        self.numeric_features_ = tuple(numeric)
        self.binary_features_ = tuple(binary)
        self.categorical_features_ = tuple(categorical)
        self.n_numeric_ = len(numeric)
        self.n_binary_ = len(binary)
        self.n_dense_ = len(numeric) + len(binary)
        self.n_features_out_ = col
        self._names = tuple(names)
        self._groups = groups
        self._onehots = onehots
        return self

    # ------------------------------------------------------------ properties
    def _check_fitted(self) -> None:
        if not hasattr(self, "features_"):
            raise InvalidInputError("this TabularEncoder is not fitted yet; call fit(frame) first")

    @property
    def feature_names_out(self) -> tuple[str, ...]:
        """Names of the encoded columns, in column order."""
        self._check_fitted()
        return self._names

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """scikit-learn spelling of :attr:`feature_names_out` (an object array)."""
        return np.asarray(self.feature_names_out, dtype=object)

    @property
    def groups(self) -> dict[str, slice]:
        """Each raw feature's column slice (numeric and binary: width 1)."""
        self._check_fitted()
        return dict(self._groups)

    @property
    def onehot_groups(self) -> list[slice]:
        """Column slices of the one-hot groups, in column order."""
        self._check_fitted()
        return list(self._onehots)

    # ------------------------------------------------------------- transform
    @staticmethod
    def _numeric_block(frame: pd.DataFrame, numeric: Sequence[Feature], *, name: str) -> np.ndarray:
        names = [f.name for f in numeric]
        if names and all(isinstance(t, np.dtype) and t.kind in "iuf" for t in frame[names].dtypes):
            # numpy numbers throughout: converted in one pass (a table may have 10,000 columns), C-ordered as the
            # column-by-column stack below; a missing or infinite value is named by that loop
            block = np.ascontiguousarray(frame[names].to_numpy(dtype=np.float64))
            if np.isfinite(block).all():
                return block
        cols = []
        for f in numeric:
            s = frame[f.name]
            try:
                v = pd.to_numeric(s, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                bad = next((x for x in s if not _is_number(x)), None)
                raise InvalidInputError(
                    f"numeric column {f.name!r} of {name} holds a non-numeric value {shown(bad)}; "
                    "declare it categorical or clean it"
                ) from None
            if not np.isfinite(v).all():
                n_bad = int((~np.isfinite(v)).sum())
                raise InvalidInputError(
                    f"numeric column {f.name!r} of {name} has {n_bad} missing or infinite value(s); "
                    "impute them, drop those rows, or declare the column categorical"
                )
            cols.append(v)
        return np.column_stack(cols) if cols else np.zeros((len(frame), 0))

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Encode ``frame``.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_rows, n_features)
            Same columns as the fit frame (order does not matter).

        Returns
        -------
        X : ndarray of shape (n_rows, n_features_out_), float64
        """
        self._check_fitted()
        _check_frame_columns(frame, self.features_, name="frame")
        n = len(frame)
        X = np.zeros((n, self.n_features_out_), dtype=np.float64)
        if self.n_numeric_:
            block = self._numeric_block(frame, self.numeric_features_, name="frame")
            X[:, : self.n_numeric_] = (block - self.mean_) / self.scale_
        for j, f in enumerate(self.binary_features_):
            X[:, self.n_numeric_ + j] = _binary_column(frame[f.name], f)
        rows = np.arange(n)
        for f, sl in zip(self.categorical_features_, self._onehots):
            codes = _category_codes(frame[f.name], f, handle_unknown=self.handle_unknown)
            ok = codes >= 0
            X[rows[ok], sl.start + codes[ok]] = 1.0
        return X

    def inverse_transform(self, X: Any) -> pd.DataFrame:
        """The table whose encoding is nearest ``X``: numeric columns un-scaled, a binary column its second value
        where ``X >= 0.5``, a categorical column the category of its group's largest entry (the missing column:
        NaN). For rows that are not exact encodings (perturbed copies): :meth:`transform` of the result equals
        ``X`` for every row that is one, up to the rounding of the numeric scaling.

        Parameters
        ----------
        X : array of shape (n_rows, n_features_out_)

        Returns
        -------
        pandas.DataFrame of shape (n_rows, n_features), columns in :attr:`features_` order; numeric columns
        float64, the others object.
        """
        self._check_fitted()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_out_:
            raise InvalidInputError(f"X must have shape (n_rows, {self.n_features_out_}); got {X.shape}")
        cols: dict[str, Any] = {}
        for j, f in enumerate(self.numeric_features_):
            cols[f.name] = X[:, j] * self.scale_[j] + self.mean_[j]
        for j, f in enumerate(self.binary_features_):
            neg, pos = f.categories
            cols[f.name] = np.where(X[:, self.n_numeric_ + j] >= 0.5, pos, neg).astype(object)
        for f, sl in zip(self.categorical_features_, self._onehots):
            values = np.array(list(f.categories) + ([np.nan] if f.missing else []), dtype=object)
            cols[f.name] = values[X[:, sl].argmax(axis=1)]
        return pd.DataFrame({f.name: cols[f.name] for f in self.features_})

    def fit_transform(self, frame: pd.DataFrame, y: Any = None) -> np.ndarray:
        """:meth:`fit` then :meth:`transform` on the same frame."""
        return self.fit(frame).transform(frame)

    def __repr__(self) -> str:
        if hasattr(self, "features_"):
            return (
                f"TabularEncoder({self.n_numeric_} numeric, {self.n_binary_} binary, "
                f"{len(self._onehots)} one-hot groups -> {self.n_features_out_} columns)"
            )
        return f"TabularEncoder(features={'inferred' if self.features is None else len(self.features)}, unfitted)"


def _is_number(x: Any) -> bool:
    try:
        float(x)
        return True
    except (TypeError, ValueError):
        return False


def _binary_column(s: pd.Series, f: Feature) -> np.ndarray:
    if s.isna().any():
        raise InvalidInputError(
            f"binary column {f.name!r} has {int(s.isna().sum())} missing value(s); "
            "declare it categorical (missing becomes its own category) or impute it"
        )
    neg, pos = f.categories
    values = s.to_numpy()
    is_pos = values == pos
    is_neg = values == neg
    if not np.all(is_pos | is_neg):
        bad = values[~(is_pos | is_neg)][0]
        raise InvalidInputError(f"binary column {f.name!r} holds {shown(bad)}; expected only {shown(neg)} or "
                                f"{shown(pos)}")
    return is_pos.astype(np.float64)


def _category_codes(s: pd.Series, f: Feature, *, handle_unknown: str) -> np.ndarray:
    """Index of each value within the feature's group (categories, then missing); -1 for ignored unknowns."""
    cats = list(f.categories)
    isna = s.isna().to_numpy()
    codes = pd.Index(cats, dtype=object).get_indexer(s.to_numpy(dtype=object)).astype(np.int64)
    codes[isna] = -1
    unknown = (codes < 0) & ~isna
    if unknown.any():
        if handle_unknown == "error":
            bad = s[unknown].iloc[0]
            raise InvalidInputError(
                f"categorical column {f.name!r} holds {shown(bad)}, not among its {len(cats)} declared categories "
                f"({int(unknown.sum())} such rows); pass handle_unknown='ignore' to encode them as all zeros"
            )
    if isna.any():
        if f.missing:
            codes[isna] = len(cats)
        elif handle_unknown == "error":
            raise InvalidInputError(
                f"categorical column {f.name!r} has {int(isna.sum())} missing value(s) but the feature was "
                "declared without a missing category; build the features from data that includes them"
            )
    return codes

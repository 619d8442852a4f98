"""Stage 1 of the audit: the members, non-members and population records, encoded."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ..._random import check_random_state
from ...exceptions import InvalidInputError, InvalidParameterError
from ..config import AuditConfig

__all__ = ["AuditData", "prepare_data", "data_from_frames", "read_records"]


#: how a membership attack's per-record scores become a unit's score (user-level membership inference)
UNIT_COMBINE = "mean of the unit's rows' scores"


@dataclass
class AuditData:
    """The audited records. Arrays are encoded features (float) and integer labels.

    ``population`` records come from the same distribution but are neither
    members nor audited non-members; reference models are queried on them (InfoRMIA).
    """

    name: str
    description: str
    X_mem: np.ndarray
    y_mem: np.ndarray
    X_non: np.ndarray
    y_non: np.ndarray
    X_pop: np.ndarray
    y_pop: np.ndarray
    frame_mem: pd.DataFrame
    frame_non: pd.DataFrame
    frame_pop: pd.DataFrame
    label: str
    class_names: list[str]
    sensitive: list[str]
    encoder: object = None
    # each record's row in its source (0 = the first row after the header; the demo: its row in the bundled set)
    record_ids_mem: np.ndarray = field(default=None)
    record_ids_non: np.ndarray = field(default=None)
    # where the records came from when not from the command line's files: source name -> what it is
    sources: dict | None = None
    # the bundled demo: each audited record's file (members then non-members), its row counted in that file
    record_files: np.ndarray | None = None
    # tables given in memory with unique indexes: each record's index label, members then non-members (records are
    # then named ``members.loc[label]``); None otherwise (named by file and row)
    index_labels: tuple | None = None
    # the privacy unit (``unit``: its column, dropped from the features) and each member's and non-member's unit, as
    # read; None: every row is its own unit
    unit: str | None = None
    units_mem: np.ndarray | None = None
    units_non: np.ndarray | None = None

    @cached_property
    def unit_groups(self) -> np.ndarray | None:
        """Each audited record's unit as an integer code, members then non-members (the members' units take the
        codes below the non-members': no unit is on both sides); None without a unit. Computed once: every stage
        that meets a unit reads it."""
        if self.unit is None:
            return None
        return pd.factorize(pd.Series(np.r_[self.units_mem, self.units_non]), sort=False)[0].astype(np.int64)

    def risk_baselines(self) -> dict[str, tuple[float, str]]:
        """The members' baselines of the risks an epsilon bounds (:func:`leakaudit.dpaudit.risk.audit_baselines`):
        their sensitive columns as read, their units where a privacy unit is given."""
        from ...dpaudit.risk import audit_baselines

        sensitive = {c: self.frame_mem[c].to_numpy() for c in self.sensitive if c in self.frame_mem}
        n_units = None if self.unit is None else int(pd.Series(self.units_mem).nunique(dropna=False))
        return audit_baselines(self.X_mem, self.y_mem, sensitive=sensitive, n_units=n_units)

    def unit_summary(self) -> dict | None:
        """results.json's ``data.unit``: the column, the units and rows on each side, the largest unit."""
        if self.unit is None:
            return None
        g = self.unit_groups
        n1 = len(self.y_mem)
        sizes = np.bincount(g)
        return {"column": self.unit, "n_member_units": int(np.unique(g[:n1]).size),
                "n_nonmember_units": int(np.unique(g[n1:]).size), "n_member_rows": int(n1),
                "n_nonmember_rows": int(len(self.y_non)), "largest_unit": int(sizes.max()),
                "combine": UNIT_COMBINE}

    @property
    def n_classes(self) -> int:
        return len(self.class_names)

    @property
    def X_audit(self) -> np.ndarray:
        return np.vstack([self.X_mem, self.X_non])

    @property
    def y_audit(self) -> np.ndarray:
        return np.concatenate([self.y_mem, self.y_non])

    @property
    def is_member(self) -> np.ndarray:
        return np.r_[np.ones(len(self.y_mem), int), np.zeros(len(self.y_non), int)]

    def summary(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "n_members": int(len(self.y_mem)),
            "n_nonmembers": int(len(self.y_non)),
            "n_population": int(len(self.y_pop)),
            "n_features": int(self.X_mem.shape[1]),
            "label": self.label,
            "class_names": list(self.class_names),
            "sensitive": list(self.sensitive),
            **({"unit": self.unit_summary()} if self.unit is not None else {}),
        }


def _demo_data(cfg: AuditConfig) -> AuditData:
    from ...data import load_adult

    if cfg.unit is not None:
        raise InvalidParameterError(f"unit {cfg.unit!r} names a column of your own records (train and test, or "
                                    "data); the bundled demo's records have no unit column")
    if cfg.dataset != "adult":
        raise InvalidParameterError(f"the demo audit runs on the bundled 'adult' data; got dataset={cfg.dataset!r}")
    ds = load_adult(columns="long")  # Long et al.'s 13 attributes (fnlwgt dropped): 107 encoded inputs
    rng = check_random_state(cfg.seed)
    n_mem, n_non = cfg.n_members, cfg.n_nonmembers
    n_pop = min(max(n_mem, n_non), len(ds) - n_mem - n_non)
    if n_pop < 0:
        raise InvalidParameterError(f"n_members + n_nonmembers = {n_mem + n_non} exceeds the {len(ds)} Adult records")
    perm = rng.permutation(len(ds))
    i_mem, i_non, i_pop = perm[:n_mem], perm[n_mem:n_mem + n_non], perm[n_mem + n_non:n_mem + n_non + n_pop]
    cand = np.r_[i_mem, i_non]
    # Long et al. §4.2: z-scored numerics and one-hot categoricals, statistics from the candidate set D.
    X, enc = ds.encode(fit_idx=cand)
    frame, rows = ds.frame, ds.extras["row_in_file"].to_numpy()
    return AuditData(
        name="adult",
        description=(f"Bundled UCI Adult: {n_mem} members, {n_non} non-members, {n_pop} population records "
                     f"drawn with seed {cfg.seed}"),
        X_mem=X[i_mem], y_mem=ds.y[i_mem], X_non=X[i_non], y_non=ds.y[i_non], X_pop=X[i_pop], y_pop=ds.y[i_pop],
        frame_mem=frame.iloc[i_mem].reset_index(drop=True), frame_non=frame.iloc[i_non].reset_index(drop=True),
        frame_pop=frame.iloc[i_pop].reset_index(drop=True),
        label=ds.label_name, class_names=list(ds.class_names),
        sensitive=list(cfg.sensitive or ("sex", "race", "marital_status")),
        encoder=enc, record_ids_mem=rows[i_mem], record_ids_non=rows[i_non],
        record_files=np.where(ds.extras["split"].to_numpy()[cand] == "train", "adult.data.gz", "adult.test.gz"),
    )


def _where(path: Path | None, what: str) -> str:
    return f"{what} ({path})" if path is not None else what


def _short(v, n: int = 40) -> str:
    r = repr(v.item() if isinstance(v, np.generic) else v)
    return r if len(r) <= n else r[:n - 3] + "..."


def _rows(index: pd.Index, k: int = 3) -> str:
    """File rows (1 = the first row after the header) of the first few index entries."""
    rows = [int(i) + 1 for i in index[:k]]
    more = f" and {len(index) - k} more" if len(index) > k else ""
    return ("row " if len(rows) == 1 else "rows ") + ", ".join(map(str, rows)) + more


def row_lines(path: str | Path) -> np.ndarray | None:
    """The 1-based line on which each row of a text table starts (row 0, the first after the header, is on line 2
    unless blank lines or a quoted cell holding a line break come before it), counting physical lines as the CSV
    reader does: quoted line breaks inside a cell, blank lines skipped; None for a table without lines (Parquet) or
    one whose rows this count does not match."""
    import csv

    from pandas.io.common import get_handle

    from ...data import table_extension

    ext = table_extension(path)
    if ext in (".parquet", ".pq"):
        return None
    sep = "\t" if ext in (".tsv", ".tab") else ","
    starts, end = [], 0
    try:
        with get_handle(path, "r", compression="infer", encoding="utf-8") as h:  # newline="", as pandas reads
            reader = csv.reader(h.handle, delimiter=sep, quotechar='"', doublequote=True, strict=False)
            for fields in reader:
                if any(f != "" for f in fields) or len(fields) > 1:  # pandas skips the blank lines
                    starts.append(end + 1)
                end = reader.line_num
    except (OSError, ValueError, csv.Error):
        return None
    return np.asarray(starts[1:], dtype=np.int64)  # the first is the header's


def _raw_header(path: Path) -> list[str] | None:
    """The first line of a text table as written (pandas renames a repeated ``x`` to ``x.1``)."""
    from ...data import read_table, table_extension

    if table_extension(path) in (".parquet", ".pq"):
        return None
    head = read_table(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    return [str(c) for c in head.iloc[0].tolist()]


def _plain_dtypes(df: pd.DataFrame) -> pd.DataFrame:
    """pandas' nullable column types (``Int64``, ``Float64``, ``boolean``, ``string``: what a Parquet file written
    from them reads back as) as the types a CSV file reads as, with a missing value as NaN. Without this a text
    column missing ``pd.NA`` in one table and ``NaN`` in another became ``pd.NA`` throughout, a value a
    scikit-learn encoder fitted on the CSV's NaN does not know: the model scored other rows than its own."""
    if df.columns.has_duplicates:  # refused by read_records, naming them
        return df
    out = {}
    for c in df.columns:
        s = df[c]
        dt = s.dtype
        if isinstance(dt, pd.StringDtype) and dt.na_value is pd.NA:
            s = pd.Series(s.to_numpy(dtype=object, na_value=np.nan), index=s.index, name=c)
        elif isinstance(dt, pd.BooleanDtype):
            s = pd.Series(s.to_numpy(dtype=object, na_value=np.nan), index=s.index, name=c)
            if s.notna().all():
                s = s.astype(bool)
        elif isinstance(dt, (pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype, pd.UInt8Dtype, pd.UInt16Dtype,
                             pd.UInt32Dtype, pd.UInt64Dtype, pd.Float32Dtype, pd.Float64Dtype)):
            s = pd.Series(s.to_numpy(dtype=np.float64, na_value=np.nan), index=s.index, name=c)
            if pd.api.types.is_integer_dtype(dt) and s.notna().all():
                s = s.astype(dt.numpy_dtype)
        out[c] = s
    return pd.DataFrame(out, index=df.index) if out else df


def _nested_columns(df: pd.DataFrame) -> list[tuple[str, str, int]]:
    """Columns holding lists, arrays, dicts or sets (a Parquet list or struct column): (name, kind, first row)."""
    out = []
    for c in df.columns:
        s = df[c]
        if s.dtype != object:
            continue
        for i, v in enumerate(s.to_numpy()):
            if isinstance(v, (list, tuple, dict, set, np.ndarray)):
                out.append((str(c), "a struct (key-value pairs)" if isinstance(v, dict) else "a list", i))
                break
    return out


def read_records(path: str | Path, what: str = "table file") -> pd.DataFrame:
    """A table of records as every command reads one: CSV or Parquet, every column with its own name, every value
    one number or one text (a Parquet list or struct column is refused by name), pandas' nullable types as a
    CSV's. ``what`` names the file in messages ("train file", "--data")."""
    from ..._validation import check_regular_file
    from ...data import read_table

    path = Path(path)
    check_regular_file(path, what=what)
    df = read_table(path)  # a link to a protected file is refused there (check_linked_file)
    nested = _nested_columns(df)
    if nested:
        shown = "; ".join(f"column {c!r} holds {kind} (row {i + 1})" for c, kind, i in nested[:3])
        raise InvalidInputError(
            f"{_where(path, what)}: {shown}"
            f"{f' and {len(nested) - 3} more' if len(nested) > 3 else ''}; every value must be one number or one "
            "text: flatten or drop those columns")
    df = _plain_dtypes(df)
    header = _raw_header(path)
    names = header if header is not None and len(header) == df.shape[1] else [str(c) for c in df.columns]
    # each repeated name once, in the order of its first repeat; empty names become distinct "Unnamed: i"
    dups = list(dict.fromkeys(c for c, d in zip(names, pd.Index(names).duplicated()) if d and c != ""))
    if dups:
        raise InvalidInputError(
            f"{_where(path, what)} repeats column name(s) {', '.join(map(repr, dups))} in its header; "
            "every column needs its own name")
    return df


def _align_columns(parts: list[tuple[pd.DataFrame, str]]) -> list[pd.DataFrame]:
    """Every table with the members' columns (by name, any order), reordered to the members' order."""
    ref = list(parts[0][0].columns)
    out = [parts[0][0]]
    for df, where in parts[1:]:
        cols = list(df.columns)
        have, want = set(cols), set(ref)  # built once: a wide table's check stays linear in its columns
        missing = [c for c in ref if c not in have]
        extra = [c for c in cols if c not in want]
        if missing or extra:
            what = "; ".join(s for s in (
                f"lacks {', '.join(map(repr, missing))}" if missing else "",
                f"has extra {', '.join(map(repr, extra))}" if extra else "") if s)
            raise InvalidInputError(
                f"{where} does not have the same columns as the {parts[0][1]}: it {what}; "
                "every table needs the same columns, by name (their order does not matter)")
        out.append(df[ref])
    return out


def _kind(s: pd.Series) -> str:
    if not s.notna().any():
        return "empty"  # no values: no type to disagree with
    return "number" if pd.api.types.is_numeric_dtype(s.dtype) else "text"


def _plainly_numeric(frames: list[pd.DataFrame]) -> set:
    """The columns that :func:`_reconcile_types` leaves as they are, found by dtype in one pass per table rather
    than column by column (a table may have 10,000 columns): numeric and not bool, or without any value and not
    bool, in every table."""
    plain = None
    for f in frames:
        numeric = {c for c, t in f.dtypes.items()
                   if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)}
        # no value at all (a bool column of an empty table is converted beside numbers: not plain)
        empty = {c for c, v in zip(f.columns, f.notna().to_numpy().any(axis=0))
                 if not v and not pd.api.types.is_bool_dtype(f.dtypes[c])}
        ok = numeric | empty
        plain = ok if plain is None else plain & ok
    return plain or set()


def _reconcile_types(frames: list[pd.DataFrame], wheres: list[str], label: str) -> list[pd.DataFrame]:
    """One type per column across the tables: a column numeric in one table and text in another is
    parsed as numbers in all of them, or refused naming the values that are not numbers."""
    frames = [f.copy() for f in frames]
    plain = _plainly_numeric(frames)
    for c in frames[0].columns:
        if c in plain:  # numbers (or nothing) in every table, no bool: nothing to reconcile
            continue
        kinds = [_kind(f[c]) for f in frames]
        name = f"label column {c!r}" if c == label else f"column {c!r}"
        if "number" in kinds and "text" in kinds:
            numeric_in = " and ".join(w for w, k in zip(wheres, kinds) if k == "number")
            for i, (f, k) in enumerate(zip(frames, kinds)):
                if k != "text":
                    continue
                parsed = pd.to_numeric(f[c], errors="coerce")
                bad = f[c].notna() & parsed.isna()
                if bad.any():
                    vals = pd.unique(f[c][bad].to_numpy(dtype=object))
                    raise InvalidInputError(
                        f"{name} holds numbers in the {numeric_in} but text in the {wheres[i]}: "
                        f"{int(bad.sum())} value(s) are not numbers, e.g. {', '.join(_short(v) for v in vals[:3])} "
                        f"({_rows(f.index[bad.to_numpy()])}); make every value a number, missing ones empty")
                frames[i][c] = parsed
        kinds = [_kind(f[c]) for f in frames]
        if "number" in kinds:  # bool beside int: one numeric type
            bools = [pd.api.types.is_bool_dtype(f[c].dtype) for f in frames]
            if any(bools) and not all(b or k == "empty" for b, k in zip(bools, kinds)):
                for i, b in enumerate(bools):
                    if b:
                        frames[i][c] = frames[i][c].astype(np.int64)
    gaps = [set(f.columns[f.isna().to_numpy().any(axis=0)]) for f in frames]  # one pass per table, not per column
    for c in frames[0].columns:
        if c == label or not any(c in g for g in gaps):
            continue
        if not all(pd.api.types.is_numeric_dtype(f[c].dtype) for f in frames):
            continue
        for f, w in zip(frames, wheres):
            na = f[c].isna()
            if na.any():
                raise InvalidInputError(
                    f"numeric column {c!r} has {int(na.sum())} missing value(s) in the {w} "
                    f"({_rows(f.index[na.to_numpy()])}); fill them in or drop those rows")
    return frames


def _check_label(frames: list[pd.DataFrame], wheres: list[str], label: str) -> None:
    """A classification label with no missing value, whose classes all occur among both members and non-members."""
    for f, w in zip(frames, wheres):
        na = f[label].isna()
        if na.any():
            raise InvalidInputError(f"label column {label!r} of the {w} has {int(na.sum())} missing value(s) "
                                    f"({_rows(f.index[na.to_numpy()])}); drop those rows")
    joint = pd.concat([f[label] for f in frames[:2]], ignore_index=True)
    if pd.api.types.is_float_dtype(joint.dtype):
        v = joint.to_numpy(dtype=np.float64)
        if not np.all(v == np.round(v)):
            raise InvalidInputError(
                f"label column {label!r} holds {joint.nunique()} distinct numeric values, not all whole numbers; "
                "the audit needs a classification label (a few classes, e.g. 0/1 or text): bin it into classes")
    sets = [set(f[label].tolist()) for f in frames]
    for i, j in ((0, 1), (1, 0)):
        only = sets[i] - sets[j]
        if only:
            vals = sorted(only, key=str)
            f = frames[i]
            rows = f.index[f[label].isin(vals).to_numpy()]
            raise InvalidInputError(
                f"label column {label!r}: class(es) {', '.join(_short(v) for v in vals[:3])}"
                f"{' and more' if len(vals) > 3 else ''} occur only in the {wheres[i]} ({_rows(rows)}), "
                f"not in the {wheres[j]}; every class must occur among both members and non-members "
                "(a one-sided class changes what the attacks compare): fix the stray labels or drop those rows")
    if len(frames) > 2:
        only = sets[2] - (sets[0] | sets[1])
        if only:
            vals = sorted(only, key=str)
            rows = frames[2].index[frames[2][label].isin(vals).to_numpy()]
            raise InvalidInputError(
                f"label column {label!r}: class(es) {', '.join(_short(v) for v in vals[:3])} of the {wheres[2]} "
                f"({_rows(rows)}) occur neither among the members nor the non-members; fix or drop those rows")


def _check_sensitive(frames: list[pd.DataFrame], wheres: list[str], label: str, sensitive: list[str]) -> None:
    cols = list(frames[0].columns)
    for s in sensitive:
        if s == label:
            raise InvalidParameterError(f"sensitive column {s!r} is the label column; name feature columns only")
        if s not in cols:
            raise InvalidParameterError(
                f"sensitive column {s!r} is not a column of the {wheres[0]}; columns: {', '.join(cols)}")
        vals = pd.concat([f[s] for f in frames[:2]], ignore_index=True).dropna().unique()
        if len(vals) < 2:
            held = f"only the value {_short(vals[0])}" if len(vals) else "no values"
            raise InvalidInputError(
                f"sensitive column {s!r} holds {held} among the members and non-members; "
                "there is nothing to infer: drop it from `sensitive`")


def _check_encoded_size(enc, n_rows: int) -> None:
    """Refuse, before the table is encoded, an encoding (one float64 column per numeric or binary feature and per
    category of a categorical one) larger than the memory limit, naming the widest categorical columns."""
    from ...engine import check_memory, memory_limit

    width = enc.n_features_out_
    need = 8.0 * n_rows * width
    if need > memory_limit():  # the widest columns named only when refused
        wide = sorted(((sl.stop - sl.start, name) for name, sl in enc.groups.items() if sl.stop - sl.start > 1),
                      reverse=True)[:3]
        cols = ", ".join(f"{name!r}: {k:,} values" for k, name in wide)
        check_memory(need, f"the records encode to {n_rows:,} rows x {width:,} columns (one-hot {cols}):",
                     fix="drop an identifier column or bin a column of many values into fewer", error=InvalidInputError)


def _check_records(frames: list[pd.DataFrame], wheres: list[str], label: str) -> None:
    """The checks of the records as a whole, once their columns are aligned and typed: numbers the encoding can
    standardise (:func:`_check_magnitudes`), non-members that are not copies of members (:func:`_check_overlap`)."""
    _check_magnitudes(frames, wheres, label)
    _check_overlap(frames, wheres)
    _check_identifiers(frames[:2], label)


def _check_identifiers(frames: list[pd.DataFrame], label: str) -> None:
    """Warn, one line per column, of a feature column of the members and non-members that looks like an identifier
    (:class:`IdentifierColumnWarning`): text or categories whose values mostly (90% of the rows) recur in at most 5
    rows, 20 values or more (a person's id, once per row or repeated across a few), or whole numbers nearly unique
    per row (90% distinct) that number the rows (their range under 10 times their count: a weight or an amount
    spreads wider). As a feature it lets the model tell people apart; if it names whose rows they are, it is
    the privacy unit."""
    import warnings

    both = pd.concat(frames, ignore_index=True)
    for c in both.columns:
        col = both[c].dropna()
        if c == label or len(col) == 0 or pd.api.types.is_bool_dtype(col) or pd.api.types.is_float_dtype(col):
            continue
        counts = col.value_counts()
        if pd.api.types.is_numeric_dtype(col):  # numbered rows or people: nearly unique, and few gaps between them
            looks = len(counts) >= max(20, 0.9 * len(col)) and col.max() - col.min() < 10 * len(counts)
        else:
            looks = len(counts) >= 20 and counts[counts <= 5].sum() >= 0.9 * len(col)
        if looks:
            most = int(counts.max())
            warnings.warn(f"column {c!r} looks like an identifier ({len(counts):,} distinct values in {len(col):,} "
                          f"rows, at most {most} row{'s' if most > 1 else ''} each): as a feature it lets the model "
                          f"tell people apart; drop it, or give it as the privacy unit (--unit {c}; unit= in the "
                          "library) if it names whose rows they are", IdentifierColumnWarning, stacklevel=4)


class IdentifierColumnWarning(UserWarning):
    """A feature column looks like a person's or a record's identifier (see :func:`_check_identifiers`)."""


def _surely_standardisable(frames: list[pd.DataFrame]) -> set:
    """The numeric (not bool) columns whose mean and standard deviation over ``frames`` cannot overflow, found in
    one pass over each table's numbers: every value at most ``sqrt(max double / (4 n)) / 2`` in magnitude (``n``
    rows in all), so no sum, deviation or sum of squares comes near the largest double. :func:`_check_magnitudes`
    checks only the others, column by column."""
    n = sum(len(f) for f in frames)
    limit = np.sqrt(np.finfo(np.float64).max / (4 * max(n, 1))) / 2
    sure = None
    for f in frames:
        cols = [c for c, t in f.dtypes.items()
                if isinstance(t, np.dtype) and t.kind in "iuf"]
        if not cols:
            return set()
        with np.errstate(invalid="ignore"):
            fine = (np.abs(f[cols].to_numpy(dtype=np.float64)) <= limit).all(axis=0)  # NaN, inf: checked one by one
        ok = {c for c, k in zip(cols, fine) if k}
        sure = ok if sure is None else sure & ok
    return sure or set()


def _check_magnitudes(frames: list[pd.DataFrame], wheres: list[str], label: str) -> None:
    """Refuse a numeric feature column whose values are too large to standardise.

    The encoding z-scores each numeric column with the mean and standard deviation of the members and
    non-members (:class:`~leakaudit.data.TabularEncoder`). A value near the largest double (1e308) makes that
    mean or spread overflow to infinity, and the whole column would silently become zeros: the audit would
    measure a model on other inputs than its own. Named with its file, column and rows instead.
    """
    small = _surely_standardisable(frames[:2])
    for c in frames[0].columns:
        if c == label or c in small or not all(pd.api.types.is_numeric_dtype(f[c].dtype) for f in frames[:2]):
            continue
        block = np.concatenate([f[c].to_numpy(dtype=np.float64) for f in frames[:2]])
        with np.errstate(over="ignore", invalid="ignore"):
            fine = np.isfinite(block.mean()) and np.isfinite(block.std())
        if fine:
            continue
        # a value whose square, summed over the column, can overflow (the largest value when none alone can)
        limit = min(np.sqrt(np.finfo(np.float64).max / len(block)), np.abs(block).max())
        for f, w in zip(frames, wheres):
            big = np.abs(f[c].to_numpy(dtype=np.float64)) >= limit
            if big.any():
                raise InvalidInputError(
                    f"numeric column {c!r} of the {w} holds values too large to standardise, e.g. "
                    f"{_short(f[c].to_numpy()[big][0])} ({_rows(f.index[big])}): the column's mean or spread "
                    "overflows double precision; rescale the column (other units) or drop those rows")


def _check_overlap(frames: list[pd.DataFrame], wheres: list[str]) -> None:
    """Refuse non-members (or population records) that are all copies of members; warn on a partial overlap.

    A non-members file identical to the members file makes every attack compare a set with itself: the audit
    would find no leak whatever the model, a silently wrong answer. So the non-members are refused when every one
    of them is identical (all columns, the label included) to a member, and so is the population. Some identical
    records across the sets are not refused: real tables repeat records (Adult without its sampling weight does),
    and a record trained on that also appears among the non-members only makes the attacks look weaker. Those,
    and population records that repeat audited ones, are named in one warning (:class:`DuplicateRecordsWarning`)
    with their count and rows.
    """
    import warnings

    from .duplicates import row_keys

    hashes = row_keys(frames)  # "identical" as the duplicates section counts it
    for i in range(1, len(frames)):
        h = hashes[i]
        of_members = np.isin(h, hashes[0])
        if of_members.all():
            what = "non-members" if i == 1 else "population"
            raise InvalidInputError(
                f"every record of the {wheres[i]} ({len(h)} of {len(h)}) is identical to one of the members: the "
                f"{what} must be records the model was not trained on (is the same file given twice?)")
        dup = of_members | (np.isin(h, hashes[1]) if i > 1 else False)
        if dup.any():
            others = "members" if i == 1 else "members or non-members"
            warnings.warn(
                f"{int(dup.sum())} of the {len(h)} records of the {wheres[i]} are identical to one of the {others} "
                f"({_rows(frames[i].index[dup])}); they are used as given, which makes the attacks look weaker than "
                "they are", DuplicateRecordsWarning, stacklevel=3)


class DuplicateRecordsWarning(UserWarning):
    """Some non-member (or population) records are identical to audited records (see :func:`_check_overlap`)."""


def _user_data(cfg: AuditConfig) -> AuditData:
    """The user's files, read, then reconciled (:func:`_reconciled`). See docs/input.md."""
    if cfg.data is not None:
        df = read_records(cfg.data, "data")
        mc = cfg.membership_column
        if mc not in df.columns:
            raise InvalidParameterError(
                f"membership_column {mc!r} is not a column of {cfg.data}; columns: {', '.join(map(str, df.columns))}"
            )
        mcol = df[mc]
        mnum = mcol.astype(np.int64) if pd.api.types.is_bool_dtype(mcol.dtype) else pd.to_numeric(mcol, errors="coerce")
        bad = ~mnum.isin([0, 1])
        if bad.any():
            vals = pd.unique(mcol[bad].to_numpy(dtype=object))
            raise InvalidInputError(
                f"column {mc!r} of {cfg.data} must hold 0 or 1 (1 = member) in every row; "
                f"{int(bad.sum())} value(s) are not, e.g. {', '.join(_short(v) for v in vals[:3])} "
                f"({_rows(df.index[bad.to_numpy()])})")
        rows_mem, rows_non = np.flatnonzero((mnum == 1).to_numpy()), np.flatnonzero((mnum == 0).to_numpy())
        train, test = df.iloc[rows_mem].drop(columns=[mc]), df.iloc[rows_non].drop(columns=[mc])
        wheres = [f"members ({cfg.data}, {mc} = 1)", f"non-members ({cfg.data}, {mc} = 0)"]
    else:
        train, test = read_records(cfg.train, "train file"), read_records(cfg.test, "test file")
        rows_mem, rows_non = np.arange(len(train)), np.arange(len(test))
        wheres = [f"members ({cfg.train})", f"non-members ({cfg.test})"]
    pop = read_records(cfg.population, "population file") if cfg.population else None
    if cfg.population:
        wheres.append(f"population ({cfg.population})")
    return _reconciled(train, test, pop, label=cfg.label, sensitive=list(cfg.sensitive or []), wheres=wheres,
                       unit=cfg.unit, rows_mem=rows_mem, rows_non=rows_non, name=Path(cfg.train or cfg.data).stem,
                       description=f"{len(train)} members from {cfg.train or cfg.data}, {len(test)} non-members")


def _split_unit(unit: str, label: str, sensitive: list[str], frames: list[pd.DataFrame], wheres: list[str]):
    """The unit column taken out of the tables (``frames``: members, non-members and perhaps the population, whose
    unit column, if any, is dropped unread): ``(units_mem, units_non, frames without it)``. Refused, naming the
    column and the rows: a column missing from the members or non-members, a missing unit, a unit among both, the
    members all in one unit."""
    if not isinstance(unit, str) or not unit:
        raise InvalidParameterError(f"unit must be the name of a column; got {unit!r}")
    if unit == label or unit in sensitive:
        raise InvalidParameterError(f"unit column {unit!r} is the {'label' if unit == label else 'sensitive'} column; "
                                    "the unit names whose rows they are (a person or group id), never a feature")
    values = []
    for f, w in zip(frames[:2], wheres):
        if unit not in f.columns:
            raise InvalidParameterError(f"unit column {unit!r} is not a column of the {w}; columns: "
                                        f"{', '.join(map(str, f.columns))}")
        na = f[unit].isna()
        if na.any():
            raise InvalidInputError(f"unit column {unit!r} of the {w} has {int(na.sum())} missing value(s) "
                                    f"({_rows(f.index[na.to_numpy()])}); every row needs its unit")
        values.append(f[unit])
    if all(pd.api.types.is_numeric_dtype(v.dtype) and not pd.api.types.is_bool_dtype(v.dtype) for v in values):
        kind = np.float64 if any(pd.api.types.is_float_dtype(v.dtype) for v in values) else np.int64
        keys = [v.to_numpy(dtype=kind) for v in values]
    else:  # ids compared as text when either table reads them as text
        keys = [v.astype(str).to_numpy(dtype=object) for v in values]
    both = pd.unique(keys[0][np.isin(keys[0], keys[1])])
    if both.size:
        f0, f1 = frames[0], frames[1]
        raise InvalidInputError(
            f"unit column {unit!r}: {both.size} unit(s) occur among both the {wheres[0]} and the {wheres[1]}, e.g. "
            f"{', '.join(_short(v) for v in both[:3])} ({_rows(f0.index[np.isin(keys[0], both)])} of the members; "
            f"{_rows(f1.index[np.isin(keys[1], both)])} of the non-members): each unit's membership must be one "
            "thing, so split the records by unit (all of a unit's rows members, or all non-members)")
    if pd.unique(keys[0]).size < 2:  # leaving a unit out (PDTP, DTP-1, removal) would leave no member to train on
        raise InvalidInputError(f"`unit` {unit!r}: every member is in one unit ({_short(keys[0][0])}, all "
                                f"{len(keys[0])} rows of the {wheres[0]}); the unit names each row's person or group, "
                                "and the members need two or more")
    return keys[0], keys[1], [f.drop(columns=[unit]) if unit in f.columns else f for f in frames]


def _reconciled(train: pd.DataFrame, test: pd.DataFrame, pop: pd.DataFrame | None, *, label: str,
                sensitive: list[str], wheres: list[str], rows_mem: np.ndarray, rows_non: np.ndarray, name: str,
                description: str, sources: dict | None = None, index_labels: tuple | None = None,
                unit: str | None = None) -> AuditData:
    """The members, non-members and population reconciled once (same columns by name, one type per column, the
    same classes among members and non-members, usable sensitive columns) and encoded. ``wheres`` names each table
    in messages. ``unit``: the unit column, taken out first (:func:`_split_unit`)."""
    from ...data import from_frame

    if len(train) == 0 or len(test) == 0:
        raise InvalidInputError(f"need members and non-members; got {len(train)} members and {len(test)} non-members")
    tables, units_mem, units_non = [train, test] + ([pop] if pop is not None else []), None, None
    if unit is not None:
        units_mem, units_non, tables = _split_unit(unit, label, sensitive, tables, wheres)
    if label not in tables[0].columns:
        raise InvalidInputError(f"label column {label!r} is not a column of the {wheres[0]}; "
                                f"columns: {', '.join(map(str, tables[0].columns))}")
    frames = _reconcile_types(_align_columns(list(zip(tables, wheres))), wheres, label)
    _check_label(frames, wheres, label)
    _check_sensitive(frames, wheres, label, sensitive)
    _check_records(frames, wheres, label)
    train, test = frames[0], frames[1]
    pop = frames[2] if len(frames) > 2 else train.iloc[:0]
    full = pd.concat([train, test, pop], ignore_index=True)
    ds = from_frame(full, label=label, sensitive=sensitive, task="classification")
    n_tr, n_te = len(train), len(test)
    cand = np.arange(n_tr + n_te)
    enc = ds.encoder(cand)
    _check_encoded_size(enc, len(full))
    X = enc.transform(ds.frame)
    i_mem, i_non, i_pop = np.arange(n_tr), np.arange(n_tr, n_tr + n_te), np.arange(n_tr + n_te, len(full))
    fr = ds.frame
    return AuditData(
        name=name, description=description,
        X_mem=X[i_mem], y_mem=ds.y[i_mem], X_non=X[i_non], y_non=ds.y[i_non], X_pop=X[i_pop], y_pop=ds.y[i_pop],
        frame_mem=fr.iloc[i_mem].reset_index(drop=True), frame_non=fr.iloc[i_non].reset_index(drop=True),
        frame_pop=fr.iloc[i_pop].reset_index(drop=True),
        label=label, class_names=[str(c) for c in ds.class_names], sensitive=sensitive, encoder=enc,
        record_ids_mem=rows_mem, record_ids_non=rows_non, sources=sources, index_labels=index_labels,
        unit=unit, units_mem=units_mem, units_non=units_non,
    )


def _as_frame(value, name: str) -> pd.DataFrame:
    """A table argument as a DataFrame: a DataFrame as it is (its index ignored), a structured or record array by
    its field names; anything else is refused naming the argument."""
    if isinstance(value, pd.DataFrame):
        df = value.reset_index(drop=True)
    elif isinstance(value, np.ndarray) and value.dtype.names:
        df = pd.DataFrame.from_records(value)
    else:
        raise InvalidParameterError(
            f"{name} must be a pandas DataFrame (or a structured numpy array) with named columns, the label among "
            f"them; got {type(value).__name__}")
    if df.columns.has_duplicates:
        dups = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        raise InvalidInputError(f"{name} repeats column name(s) {', '.join(map(repr, dups))}; every column needs "
                                "its own name")
    return _plain_dtypes(df.rename(columns=str))


def data_from_frames(members, nonmembers, *, label: str, population=None, sensitive=None,
                     unit: str | None = None) -> AuditData:
    """The audit's records from tables in memory, reconciled and encoded exactly as the files of the command line.

    Parameters
    ----------
    members, nonmembers : pandas.DataFrame of shape (n_members, n_columns), (n_nonmembers, n_columns)
        The records the model was trained on, and records of the same distribution it never saw; the same columns
        by name (any order), ``label`` among them.
    label : str
        The column the model predicts.
    population : pandas.DataFrame, optional
        Other records of the same distribution, neither members nor non-members (reference models are queried on
        them; InfoRMIA needs them).
    sensitive : sequence of str, optional
        Feature columns for attribute and property inference.
    unit : str, optional
        The privacy unit's column (a person or group id; not a feature, dropped before encoding).

    Returns
    -------
    AuditData
        ``record_ids_*`` are the rows' positions in their tables (0 = the first row); ``index_labels`` the
        DataFrames' index labels where both indexes are unique (the audit then names a record ``members.loc[label]``;
        otherwise ``members, row N``, its position from 1).
    """
    if not isinstance(label, str) or not label:
        raise InvalidParameterError(f"label must be the name of the label column; got {label!r}")
    if sensitive is not None and (isinstance(sensitive, str) or not all(isinstance(c, str) for c in sensitive)):
        raise InvalidParameterError(f"sensitive must be a list of column names; got {sensitive!r}")
    labels = [list(t.index) if isinstance(t, pd.DataFrame) and t.index.is_unique else None
              for t in (members, nonmembers)]
    train, test = _as_frame(members, "members"), _as_frame(nonmembers, "nonmembers")
    pop = None if population is None else _as_frame(population, "population")
    wheres = ["members", "non-members"] + (["population"] if pop is not None else [])
    return _reconciled(train, test, pop, label=label, sensitive=list(sensitive or []), wheres=wheres, unit=unit,
                       rows_mem=np.arange(len(train)), rows_non=np.arange(len(test)), name="in-memory tables",
                       description=f"{len(train)} members and {len(test)} non-members given in memory",
                       sources={"members": "the members table given in memory",
                                "nonmembers": "the non-members table given in memory"},
                       index_labels=None if None in labels else tuple(labels[0] + labels[1]))


def prepare_data(cfg: AuditConfig) -> AuditData:
    """Load and encode the audit's records (the bundled demo, or the user's files)."""
    return _demo_data(cfg) if cfg.is_demo else _user_data(cfg)


def file_names(cfg: AuditConfig) -> tuple[str, str]:
    """How the members' and the non-members' files are named: by their names, or by their paths where the names
    are the same (two files of one name in different folders)."""
    tr, te = Path(cfg.train).name, Path(cfg.test).name
    return (str(cfg.train), str(cfg.test)) if tr == te else (tr, te)

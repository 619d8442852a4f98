"""UCI Adult (Census Income), Becker & Kohavi 1996: 48,842 rows (train 32,561 + test 16,281)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .._validation import check_choice, clip
from ..exceptions import DataFileError, InvalidInputError
from ._cache import cached_parse, read_csv_file
from ._dataset import Dataset, read_table
from ._features import infer_features
from ._files import bundled_dir, find_file

__all__ = [
    "load_adult", "load_acs_pums", "ADULT_COLUMNS", "LONG_ADULT_COLUMNS", "ACS_PROXY_COLUMNS", "ADULT_NUMERIC",
    "ADULT_CATEGORICAL",
]

#: The 14 attributes in UCI order (the label ``income`` is the 15th column of the files).
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
)
ADULT_NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
ADULT_CATEGORICAL = tuple(c for c in ADULT_COLUMNS if c not in ADULT_NUMERIC)

#: Long et al. (2020), Sec. 5: every attribute except ``fnlwgt`` (13 = 5 numeric + 8 categorical).
#: With ``?`` kept as a category the one-hot groups have widths 9/16/7/15/6/5/2/42
#: (workclass, education, marital_status, occupation, relationship, race, sex, native_country),
#: so the encoded width is 5 + 102 = 107, the NN input size of the paper.
LONG_ADULT_COLUMNS = tuple(c for c in ADULT_COLUMNS if c != "fnlwgt")

#: Long et al. Sec. 8 used ACS 2013 PUMS (AGEP, MAR, RAC1P, SEX); offline we substitute Adult
#: restricted to these four attributes, all 48,842 rows (long-dtp.md Sec. 7 "Substitute data").
ACS_PROXY_COLUMNS = ("age", "marital_status", "race", "sex")

_SENSITIVE = ("sex", "race", "marital_status", "age")
_FILES = ("adult/adult.data.gz", "adult/adult.test.gz")


def _read(paths: tuple) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    names = list(ADULT_COLUMNS) + ["income"]
    dtype = {c: "str" for c in ADULT_CATEGORICAL} | {"income": "str"}
    parts = [read_csv_file(path, names=names, skipinitialspace=True, na_values="?", skiprows=skip, dtype=dtype)
             for path, skip in zip(paths, (0, 1))]  # adult.test starts with "|1x3 Cross validator"
    n_train = len(parts[0])
    df = pd.concat(parts, ignore_index=True)
    income = df.pop("income").str.rstrip(".")  # adult.test labels end with "."
    bad = ~income.isin(["<=50K", ">50K"])
    if bad.any():
        raise DataFileError(f"unexpected Adult label {income[bad].iloc[0]!r}")
    y = (income == ">50K").to_numpy(np.int64)
    extras = pd.DataFrame({
        "split": np.where(np.arange(len(df)) < n_train, "train", "test"),
        "row_in_file": np.concatenate([np.arange(n_train), np.arange(len(df) - n_train)]),
    })
    return df, y, extras


def load_adult(
    source: str = "auto",
    *,
    columns: str | Sequence[str] = "all",
    drop_missing: bool = False,
) -> Dataset:
    """Load UCI Adult: predict whether income is >50K (class 1) from census attributes.

    Parameters
    ----------
    source : {"auto", "bundled", "shared"}, default "auto"
        "bundled": the copy shipped inside the package; "shared": the data folder
        (``$LEAKAUDIT_DATA`` or ``shared/data`` beside the checkout); "auto": bundled if
        present, else shared. Both copies are checked against their SHA-256 digests.
    columns : "all", "long", "acs_proxy" or sequence of str, default "all"
        "all": the 14 UCI attributes. "long": :data:`LONG_ADULT_COLUMNS`, Long et al.'s
        13 (``fnlwgt`` dropped), which encodes to 107 columns with missing kept.
        "acs_proxy": :data:`ACS_PROXY_COLUMNS` (age, marital_status, race, sex), the
        stand-in for the ACS PUMS data of Long et al. Sec. 8. A sequence selects those attributes.
    drop_missing : bool, default False
        Drop the 3,620 rows with a ``?`` (45,222 remain). By default ``?`` is kept as NaN,
        and the encoder gives it its own one-hot column (long-dtp.md Sec. 4.1 [ours]).

    Returns
    -------
    Dataset
        48,842 rows (train rows first, then test; ``extras["split"]`` says which),
        ``y`` 1 for ">50K" (the test file's trailing "." is stripped), class_names
        ("<=50K", ">50K"), sensitive ("sex", "race", "marital_status", "age") among the
        kept columns. Categories are computed on all rows (after ``drop_missing``).

    Raises
    ------
    DataFileError
        A file is missing or fails its checksum.

    References
    ----------
    Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository. CC BY 4.0.
    """
    check_choice(source, name="source", choices=("auto", "bundled", "shared"))
    if source == "auto":
        source = "bundled" if all((bundled_dir() / f.split("/")[1]).is_file() for f in _FILES) else "shared"
    bundled = source == "bundled"
    paths = tuple(find_file(f, bundled=bundled) for f in _FILES)
    frame, y, extras = cached_parse(("adult",), paths, lambda: _read(paths))
    frame, y, extras = frame.copy(deep=False), y.copy(), extras.copy(deep=False)
    if isinstance(columns, str):
        check_choice(columns, name="columns", choices=("all", "long", "acs_proxy"))
        cols = {"all": ADULT_COLUMNS, "long": LONG_ADULT_COLUMNS, "acs_proxy": ACS_PROXY_COLUMNS}[columns]
    else:
        cols = tuple(columns)
        unknown = [c for c in cols if c not in ADULT_COLUMNS]
        if unknown or not cols:
            raise InvalidInputError(
                f"columns names unknown Adult attribute(s) {unknown}; choose from {list(ADULT_COLUMNS)}"
                if unknown else "columns is empty"
            )
    if drop_missing:
        keep = ~frame.isna().any(axis=1).to_numpy()
        frame, y, extras = frame[keep], y[keep], extras[keep]
        frame, extras = frame.reset_index(drop=True), extras.reset_index(drop=True)
    frame = frame[list(cols)]
    kinds = {c: ("numeric" if c in ADULT_NUMERIC else "categorical") for c in cols}
    return Dataset(
        name="adult",
        frame=frame,
        y=y,
        features=infer_features(frame, kinds),
        label_name="income",
        class_names=("<=50K", ">50K"),
        sensitive=tuple(s for s in _SENSITIVE if s in cols),
        task="classification",
        extras=extras,
        info={
            "source": "UCI Adult (Becker & Kohavi 1996)",
            "licence": "CC BY 4.0",
            "files": [str(p) for p in paths],
            "columns": columns if isinstance(columns, str) else "custom",
            "drop_missing": drop_missing,
        },
    )


#: ACS PUMS person-file codes (2013 data dictionary) for the attributes Long et al. Sec. 8 use.
_PUMS_MAR = {1: "married", 2: "widowed", 3: "divorced", 4: "separated", 5: "never married"}
_PUMS_SEX = {1: "male", 2: "female"}
_PUMS_RAC1P = {1: "white", 2: "black", 3: "american indian", 4: "alaska native", 5: "american indian/alaska native",
               6: "asian", 7: "pacific islander", 8: "other", 9: "two or more"}


def load_acs_pums(path, *, label: str = "PINCP", threshold: float = 50_000.0, age: str = "numeric") -> Dataset:
    """Load a user-supplied ACS PUMS person file (CSV or Parquet) as Long et al. Sec. 8 used it.

    Parameters
    ----------
    path : str or Path
        Table with columns ``AGEP``, ``MAR``, ``RAC1P``, ``SEX`` and the label column
        (rows with a missing label are dropped).
    label : str, default "PINCP"
        Personal income; class 1 iff it exceeds ``threshold``. A column already holding
        0/1 is used as is.
    threshold : float, default 50,000
    age : {"numeric", "categorical"}
        How ``AGEP`` is modelled (the paper does not say; long-dtp.md Sec. 7).

    Returns
    -------
    Dataset
        Features AGEP and the decoded MAR, RAC1P, SEX (categorical); class_names
        ("<=threshold", ">threshold"); sensitive ("RAC1P", "SEX", "MAR").
    """
    check_choice(age, name="age", choices=("numeric", "categorical"))
    df = read_table(path)
    need = ["AGEP", "MAR", "RAC1P", "SEX", label]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InvalidInputError(f"{path} lacks PUMS column(s) {missing}; columns are "
                                f"{clip(', '.join(map(str, df.columns)), 200)}")
    df = df[need].dropna(subset=[label]).reset_index(drop=True)
    if len(df) == 0:
        raise InvalidInputError(f"{path} has no rows with a {label} value")
    lab = pd.to_numeric(df[label], errors="coerce")
    if lab.isna().any():
        raise InvalidInputError(f"label column {label!r} of {path} is not numeric")
    y = lab.to_numpy(np.int64) if set(lab.unique()) <= {0, 1} else (lab > threshold).to_numpy(np.int64)
    def decoded(col: str, codes: dict) -> pd.Series:  # each code as its words; an unknown code as it stands
        return df[col].map(codes).astype("str").where(df[col].isin(list(codes)), df[col].astype("str"))

    frame = pd.DataFrame({"AGEP": pd.to_numeric(df["AGEP"], errors="raise").to_numpy(np.float64),
                          "MAR": decoded("MAR", _PUMS_MAR), "RAC1P": decoded("RAC1P", _PUMS_RAC1P),
                          "SEX": decoded("SEX", _PUMS_SEX)})
    if age == "categorical":
        frame["AGEP"] = frame["AGEP"].astype(np.int64).astype("str")
    kinds = {"AGEP": age, "MAR": "categorical", "RAC1P": "categorical", "SEX": "categorical"}
    if np.unique(y).size < 2:
        raise InvalidInputError(f"every row of {path} falls in one income class; check label/threshold")
    t = f"{threshold:g}"
    return Dataset(
        name="acs-pums", frame=frame, y=y, features=infer_features(frame, kinds), label_name=label,
        class_names=(f"<={t}", f">{t}"), sensitive=("RAC1P", "SEX", "MAR"), task="classification",
        info={"source": f"user-supplied ACS PUMS file {path}", "threshold": threshold},
    )

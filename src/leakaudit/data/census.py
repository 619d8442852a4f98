"""UCI Census-Income (KDD), Lane & Kohavi 2000: 299,285 rows (train 199,523 + test 99,762).

Chase et al. (2021) call it the "US Census Income Dataset"; it is not Adult (chase-property.md Sec. 4.1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import DataFileError
from ._cache import cached_parse, read_csv_file
from ._dataset import Dataset
from ._features import infer_features
from ._files import find_file

__all__ = ["load_census_kdd", "CENSUS_NUMERIC"]

#: The continuous attributes (0-based file columns 0, 5, 16, 17, 18, 30, 39); the other 33
#: attributes, coded industry/occupation recodes and the year included, are categorical.
CENSUS_NUMERIC = (
    "age", "wage_per_hour", "capital_gains", "capital_losses", "dividends_from_stocks",
    "num_persons_worked_for_employer", "weeks_worked_in_year",
)
_FILES = ("census-kdd/census-income.data.xz", "census-kdd/census-income.test.xz")


def _read(cols_path, paths) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    names = cols_path.read_text().split()
    if len(names) != 42 or "instance_weight" not in names or names[-1] != "income":
        raise DataFileError(f"{cols_path} does not list the 42 Census-Income (KDD) columns")
    dtype = {c: (np.int64 if c in CENSUS_NUMERIC else "str") for c in names}
    dtype["instance_weight"] = np.float64
    parts = [read_csv_file(p, names=names, skipinitialspace=True, na_values="?", dtype=dtype) for p in paths]
    n_train = len(parts[0])
    df = pd.concat(parts, ignore_index=True)
    income = df.pop("income")
    bad = ~income.isin(["- 50000.", "50000+."])
    if bad.any():
        raise DataFileError(f"unexpected Census-Income label {income[bad].iloc[0]!r}")
    y = (income == "50000+.").to_numpy(np.int64)
    extras = pd.DataFrame({
        "instance_weight": df.pop("instance_weight").to_numpy(),
        "split": np.where(np.arange(len(df)) < n_train, "train", "test"),
    })
    kinds = {c: ("numeric" if c in CENSUS_NUMERIC else "categorical") for c in df.columns}
    return df, y, extras, infer_features(df, kinds)


def load_census_kdd() -> Dataset:
    """Load UCI Census-Income (KDD): predict income over $50,000 (class 1, "50000+.").

    Returns
    -------
    Dataset
        299,285 rows (train rows first; ``extras["split"]``), 40 attributes: 7 numeric
        (:data:`CENSUS_NUMERIC`) and 33 categorical, ``?`` kept as missing (encoded as its
        own category). ``instance_weight`` is a survey sampling weight and **not** a
        feature; it is in ``extras["instance_weight"]``. class_names ("- 50000.", "50000+.");
        labels are unbalanced (6.2% positive). Sensitive: ("sex", "race").

    Notes
    -----
    46,716 training and 20,936 test rows repeat the features of an earlier row (ignoring
    the weight), which matters for membership inference. The parsed result is cached
    in-process.

    References
    ----------
    Lane, T. & Kohavi, R. (2000). Census-Income (KDD). UCI Machine Learning Repository. CC BY 4.0.
    """
    cols_path = find_file("census-kdd/columns.txt")
    paths = tuple(find_file(f) for f in _FILES)
    frame, y, extras, feats = cached_parse(("census-kdd",), (cols_path, *paths), lambda: _read(cols_path, paths))
    return Dataset(
        name="census-kdd",
        frame=frame.copy(deep=False),
        y=y.copy(),
        features=feats,
        label_name="income",
        class_names=("- 50000.", "50000+."),
        sensitive=("sex", "race"),
        task="classification",
        extras=extras.copy(deep=False),
        info={
            "source": "UCI Census-Income (KDD), Lane & Kohavi 2000",
            "licence": "CC BY 4.0",
            "files": [str(p) for p in paths],
            "note": "instance_weight is in extras, not a feature",
        },
    )

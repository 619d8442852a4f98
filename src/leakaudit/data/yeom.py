"""The two regression data sets of Yeom et al. (CSF 2018): IWPC warfarin dosing and rat Eyedata."""

from __future__ import annotations

import numpy as np

from ._cache import cached_parse, read_csv_file
from ._dataset import Dataset
from ._features import infer_features
from ._files import find_file

__all__ = ["load_iwpc", "load_eyedata", "IWPC_COLUMNS"]

IWPC_COLUMNS = ("race", "age", "height", "weight", "amiodarone", "decr", "cyp2c9", "vkorc1")
_IWPC_KINDS = {
    "race": "categorical", "age": "numeric", "height": "numeric", "weight": "numeric",
    "amiodarone": "binary", "decr": "binary", "cyp2c9": "categorical", "vkorc1": "categorical",
}


def load_iwpc() -> Dataset:
    """Load the IWPC warfarin data as cleaned and scaled by Yeom et al. (4,819 patients).

    Features: ``race`` (white/asian/black), ``age``, ``height``, ``weight`` (already
    standardised), ``amiodarone`` and ``decr`` (0/1 medication flags), ``cyp2c9``
    (genotype code as a string: "11", "12", "13", "22", "23", "33") and ``vkorc1``
    (CC/CT/TT). Target: ``dose``, the standardised square root of the weekly dose.

    Returns
    -------
    Dataset
        Regression; sensitive ("cyp2c9", "vkorc1"), the attribute-inference targets.
        ``encode(scale_numeric=False)`` gives Yeom et al.'s 17 DictVectorizer columns (3
        numeric + 2 binary + race 3 + cyp2c9 6 + vkorc1 3) with the file's scaling.

    References
    ----------
    Yeom, Giacomelli, Fredrikson & Jha (2018), Sec. VI-A (yeom-overfitting.md Sec. 6.2);
    International Warfarin Pharmacogenetics Consortium (2009), NEJM 360:753-764.
    """
    path = find_file("yeom/iwpc-scaled.csv.gz")
    dtype = {"cyp2c9": "str", "vkorc1": "str", "race": "str"}
    df = cached_parse(("iwpc",), (path,), lambda: read_csv_file(path, dtype=dtype))
    frame = df[list(IWPC_COLUMNS)].copy(deep=False)
    return Dataset(
        name="iwpc",
        frame=frame,
        y=df["dose"].to_numpy(np.float64).copy(),
        features=infer_features(frame, _IWPC_KINDS),
        label_name="dose",
        class_names=None,
        sensitive=("cyp2c9", "vkorc1"),
        task="regression",
        info={
            "source": "IWPC 2009, cleaned by Yeom et al. 2018 (github samuel-yeom/ml-privacy-csf18, MIT)",
            "files": [str(path)],
            "note": "numeric columns and the target are already standardised; use encode(scale_numeric=False) "
            "for the paper's features",
        },
    )


def load_eyedata(*, standardize: bool = False) -> Dataset:
    """Load the rat eye gene-expression data (Scheetz et al. 2006) as shipped by Yeom et al.

    120 rats x 200 probe expressions (columns named by probe number); target ``y``, the
    expression of TRIM32.

    Parameters
    ----------
    standardize : bool, default False
        Scale all 201 columns, the target included, to mean 0 and population standard
        deviation 1 over the 120 rows, as Yeom et al.'s code does with
        ``sklearn.preprocessing.scale`` (yeom-overfitting.md Sec. 6.2 [code]).

    Returns
    -------
    Dataset
        Regression, 200 numeric features, no sensitive attribute.
    """
    path = find_file("yeom/eyedata.csv.gz")
    df = cached_parse(("eyedata",), (path,), lambda: read_csv_file(path))
    df = df.astype(np.float64)
    if standardize:
        df = (df - df.mean()) / df.std(ddof=0)
    frame = df.drop(columns="y")
    frame.columns = [str(c) for c in frame.columns]
    return Dataset(
        name="eyedata",
        frame=frame,
        y=df["y"].to_numpy(np.float64).copy(),
        features=infer_features(frame, {c: "numeric" for c in frame.columns}),
        label_name="y",
        class_names=None,
        sensitive=(),
        task="regression",
        info={
            "source": "Scheetz et al. 2006 (R package flare), via Yeom et al. 2018 (MIT)",
            "files": [str(path)],
            "standardize": standardize,
        },
    )

"""Purchase-style data: real baskets (Weka supermarket), the Kaggle loader, k-means class labels.

Shokri et al. (2017) and Long et al. (2020) built "Purchase" from the Kaggle "Acquire
Valued Shoppers" transactions: one binary feature per product category (600 in Shokri's
version, 836 in Long's), the class being the customer's k-means cluster (Long: k = 10,
k-means++ as implemented by Weka; long-dtp.md Sec. 4.1). That file cannot be shipped;
:func:`load_purchase_kaggle` reads a copy a user supplies, :func:`load_supermarket` gives
real (smaller) basket data, and :func:`~leakaudit.data.make_purchase_like` a synthetic
substitute. :func:`kmeans_labels` is the labelling step all three share.
"""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._random import seed_to_int
from .._validation import check_choice, check_matrix, check_scalar
from ..exceptions import DataFileError, InvalidInputError
from ._cache import cached_parse
from ._dataset import Dataset
from ._features import Feature
from ._files import find_file

__all__ = ["load_supermarket", "kmeans_labels", "supermarket_clusters", "load_purchase_kaggle"]


def kmeans_labels(X: Any, n_clusters: int, *, random_state: Any = None, n_init: int = 1) -> np.ndarray:
    """Class labels from k-means clusters, as Purchase-100 and Long et al.'s Purchase were built.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Feature vectors (binary purchase indicators).
    n_clusters : int
        Number of classes k (Shokri et al.: 2, 10, 20, 50, 100; Long et al.: 10).
    random_state : None, int or Generator
    n_init : int, default 1
        k-means++ restarts; the run with the lowest inertia wins (1 is scikit-learn's
        ``n_init="auto"`` for k-means++, and Weka's SimpleKMeans also runs once).

    Notes
    -----
    scikit-learn's ``KMeans(init="k-means++")`` (Lloyd), run single-threaded.

    Returns
    -------
    labels : ndarray of shape (n,), int64 in 0..k-1
        Cluster indices renumbered by decreasing cluster size (ties by first occurrence),
        so the labels do not depend on scikit-learn's internal cluster order.
    """
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    X = check_matrix(X, name="X")
    check_scalar(n_clusters, name="n_clusters", kind=(int, np.integer), min_val=2)
    check_scalar(n_init, name="n_init", kind=(int, np.integer), min_val=1)
    n_distinct = np.unique(X, axis=0).shape[0]
    if n_clusters > n_distinct:
        raise InvalidInputError(
            f"n_clusters={n_clusters} exceeds the {n_distinct} distinct rows of X; choose at most {n_distinct}"
        )
    km = KMeans(n_clusters=int(n_clusters), init="k-means++", n_init=int(n_init),
                random_state=seed_to_int(random_state))
    # one OpenMP thread: identical results on every machine, and faster than oversubscribed threads on a shared one
    with threadpool_limits(limits=1):
        raw = km.fit_predict(X)
    counts = np.bincount(raw, minlength=n_clusters)
    first = np.full(n_clusters, len(raw))
    np.minimum.at(first, raw, np.arange(len(raw)))
    order = np.lexsort((first, -counts))  # biggest cluster first
    remap = np.empty(n_clusters, dtype=np.int64)
    remap[order] = np.arange(n_clusters)
    return remap[raw]


# ------------------------------------------------------------------ supermarket
_ATTR = re.compile(r"^@attribute\s+('(?:[^'\\]|\\.)*'|\S+)\s+(.*)$", re.IGNORECASE)


def _read_arff(path) -> tuple[list[str], pd.DataFrame]:
    with gzip.open(path, "rt", encoding="latin-1") as fh:
        text = fh.read()
    names, data_at = [], None
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        s = line.strip()
        if s.lower().startswith("@attribute"):
            m = _ATTR.match(s)
            if not m:
                raise DataFileError(f"{path}: cannot parse attribute line {s[:60]!r}")
            names.append(m.group(1).strip("'"))
        elif s.lower().startswith("@data"):
            data_at = i + 1
            break
    if data_at is None:
        raise DataFileError(f"{path}: no @data section")
    pos = sum(len(x) for x in lines[:data_at])
    body = text[pos:]
    df = pd.read_csv(io.StringIO(body), names=names, header=None, na_values="?", keep_default_na=False,
                     dtype="str", comment="%", skipinitialspace=True)
    return names, df


def _parse_supermarket(path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    names, df = _read_arff(path)
    if names[-1] != "total":
        raise DataFileError(f"{path}: last attribute is {names[-1]!r}, expected 'total'")
    depts = df.drop(columns="total")
    vals = set(pd.unique(depts.to_numpy().ravel())) - {None} - {np.nan}
    vals = {v for v in vals if isinstance(v, str)}
    if not vals <= {"t"}:
        raise DataFileError(f"{path}: department values {sorted(vals)} are not only 't' or '?'")
    X = (depts == "t").to_numpy(np.int8)
    total = df["total"]
    if not total.isin(["low", "high"]).all():
        raise DataFileError(f"{path}: 'total' holds values other than low/high")
    return X, (total == "high").to_numpy(np.int64), tuple(names[:-1])


def _unique_names(names: tuple[str, ...]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        out.append(n if k == 0 else f"{n}_{k}")
        seen[n] = k + 1
    return out


def load_supermarket() -> Dataset:
    """Load Weka's supermarket baskets: 4,627 baskets x 216 binary departments.

    Returns
    -------
    Dataset
        Binary features (1 = the basket holds something from that department; ARFF ``?``
        means not bought), label ``total`` with class_names ("low", "high")
        (2,948 / 1,679; "low" means a total under 100). For Purchase-style class labels
        use :func:`supermarket_clusters`.
    """
    path = find_file("supermarket/supermarket.arff.gz")
    X, y, names = cached_parse(("supermarket",), (path,), lambda: _parse_supermarket(path))
    return basket_dataset(
        X.copy(), y.copy(), name="supermarket", columns=_unique_names(names), label_name="total",
        class_names=("low", "high"),
        info={"source": "Weka example data supermarket.arff (University of Waikato), GPL-2+", "files": [str(path)]},
    )


def supermarket_clusters(n_classes: int = 10, *, random_state: Any = 0, n_init: int = 1) -> Dataset:
    """Supermarket baskets labelled by k-means cluster, as Purchase was built (Long et al.: k = 10).

    Parameters
    ----------
    n_classes : int, default 10
    random_state : None, int or Generator, default 0
    n_init : int, default 1

    Returns
    -------
    Dataset
        Same 216 binary features as :func:`load_supermarket`; ``y`` the cluster (0 =
        largest), label_name "cluster"; the original ``total`` label is in ``extras``.
    """
    ds = load_supermarket()
    labels = kmeans_labels(ds.frame.to_numpy(np.float64), n_classes, random_state=random_state, n_init=n_init)
    return basket_dataset(
        ds.frame.to_numpy(), labels, name=f"supermarket-kmeans{n_classes}", columns=list(ds.feature_names),
        n_classes=n_classes, extras=pd.DataFrame({"total": np.asarray(ds.class_names, dtype=object)[ds.y]}),
        info={**ds.info, "labels": f"KMeans(n_clusters={n_classes}, init='k-means++', n_init={n_init}), "
              f"random_state={random_state!r}"})


# ------------------------------------------------------------------ Kaggle
def _sniff_format(path: Path) -> str:
    try:
        head = pd.read_csv(path, nrows=5, header=None)
    except Exception as exc:
        raise DataFileError(f"could not read {path}: {type(exc).__name__}: {exc}") from None
    first = [str(v).strip().lower() for v in head.iloc[0]]
    if "id" in first and "category" in first:
        return "transactions"
    if head.shape[1] >= 3 and all(pd.api.types.is_numeric_dtype(head[c]) for c in head.columns):
        return "shokri"
    raise DataFileError(
        f"{path} is neither a Kaggle transactions.csv (header with 'id' and 'category') nor a "
        "preprocessed Purchase file (label then 0/1 features, no header); pass format= explicitly"
    )


def load_purchase_kaggle(
    path: str | Path,
    *,
    format: str = "auto",
    n_classes: int = 100,
    n_features: int | None = 600,
    random_state: Any = 0,
    n_init: int = 1,
    chunksize: int = 5_000_000,
) -> Dataset:
    """Load Purchase from a user-supplied Kaggle "Acquire Valued Shoppers" file.

    Parameters
    ----------
    path : str or Path
        Either the Kaggle ``transactions.csv`` (optionally compressed; columns include
        ``id`` and ``category``), or the preprocessed Shokri et al. file (no header,
        comma-separated; first column the class 1..k, then 0/1 features).
    format : {"auto", "transactions", "shokri"}
    n_classes : int, default 100
        transactions only: k of the k-means labelling (Long et al. use 10).
    n_features : int or None, default 600
        transactions only: keep the ``n_features`` categories bought by most customers
        (Shokri: 600; Long: 836); None keeps all categories.
    random_state : seed of k-means. n_init : k-means++ restarts.
    chunksize : int
        Rows read at a time from ``transactions.csv`` (the full file is ~350M rows).

    Returns
    -------
    Dataset
        One row per customer, binary features ``cat_<category>`` (1 = bought in that
        category), ``y`` the k-means cluster (transactions) or the file's class minus its
        minimum (shokri). Customer ids are in ``extras["id"]``.
    """
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"Purchase file {p} does not exist (it is not redistributable: supply your own copy)")
    check_choice(format, name="format", choices=("auto", "transactions", "shokri"))
    fmt = _sniff_format(p) if format == "auto" else format
    if fmt == "shokri":
        try:
            raw = pd.read_csv(p, header=None)
        except Exception as exc:
            raise DataFileError(f"could not read {p}: {type(exc).__name__}: {exc}") from None
        labels = raw.iloc[:, 0].to_numpy()
        feats = raw.iloc[:, 1:].to_numpy()
        if not np.isin(feats, (0, 1)).all():
            raise DataFileError(f"{p}: feature columns hold values other than 0/1")
        classes = np.unique(labels)
        return basket_dataset(
            feats.astype(np.int8), np.searchsorted(classes, labels).astype(np.int64), name="purchase",
            columns=[f"f{j}" for j in range(feats.shape[1])], label_name="class",
            class_names=tuple(str(c) for c in classes), info={"source": f"preprocessed Purchase file {p}"},
        )
    pairs = []
    try:
        for chunk in pd.read_csv(p, usecols=["id", "category"], chunksize=chunksize):
            pairs.append(chunk.drop_duplicates())
    except ValueError as exc:
        raise DataFileError(f"{p}: expected columns 'id' and 'category' ({exc})") from None
    except Exception as exc:
        raise DataFileError(f"could not read {p}: {type(exc).__name__}: {exc}") from None
    if not pairs:
        raise InvalidInputError(f"{p} holds no transactions")
    pr = pd.concat(pairs, ignore_index=True).drop_duplicates()
    popularity = pr["category"].value_counts()
    keep = popularity.index if n_features is None else popularity.index[: int(n_features)]
    pr = pr[pr["category"].isin(keep)]
    cats = np.sort(np.asarray(keep))
    ids = np.sort(pr["id"].unique())
    X = np.zeros((len(ids), len(cats)), dtype=np.int8)
    X[np.searchsorted(ids, pr["id"].to_numpy()), np.searchsorted(cats, pr["category"].to_numpy())] = 1
    y = kmeans_labels(X.astype(np.float64), n_classes, random_state=random_state, n_init=n_init)
    return basket_dataset(
        X, y, name=f"purchase-{n_classes}", columns=[f"cat_{c}" for c in cats], n_classes=n_classes,
        extras=pd.DataFrame({"id": ids}),
        info={"source": f"Kaggle Acquire Valued Shoppers transactions {p}",
              "labels": f"KMeans({n_classes}, k-means++, n_init={n_init}), random_state={random_state!r}"},
    )


def basket_dataset(X: np.ndarray, y: np.ndarray, *, name: str, columns: list[str], info: dict,
                   n_classes: int | None = None, extras: pd.DataFrame | None = None, label_name: str = "cluster",
                   class_names: tuple[str, ...] | None = None) -> Dataset:
    """A Purchase-style Dataset: binary basket columns (1 = bought); the label ``label_name`` with ``class_names``
    (default: the ``n_classes`` k-means clusters ``cluster0..cluster{k-1}``)."""
    return Dataset(
        name=name,
        frame=pd.DataFrame(X, columns=columns),
        y=y,
        features=tuple(Feature(c, "binary", (0, 1)) for c in columns),
        label_name=label_name,
        class_names=class_names or tuple(f"cluster{k}" for k in range(n_classes)),
        task="classification",
        extras=extras,
        info=info,
    )


# make_purchase_like parameters calibrated to Long et al.'s Table 2 Purchase model accuracies by the seeded grid search
# of `leakaudit reproduce long-purchase-calibration` (no attack or PDTP number enters it; the accuracies it reaches, and
# those it cannot: docs/reproduction/long-purchase-calibration.md); use with n_records=10_000, n_features=836,
# n_classes=10.
LONG_PURCHASE_PARAMS: dict = {"mean_items": 167.2, "favourite_boost": 5.0, "n_shopper_types": 200, "zipf_exponent": 0.5}

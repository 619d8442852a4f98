"""Seeded synthetic substitutes for data sets that cannot be shipped.

* :func:`make_purchase_like`: Purchase-k (Shokri et al. 2017; Long et al. 2020) is built
  from Kaggle's "Acquire Valued Shoppers" transactions, which cannot be redistributed.
  We draw binary "bought in category j" vectors from a latent mixture of shopper types
  with Zipf-like category popularity, then label them with k-means as the original was
  (long-dtp.md Sec. 10). Numbers measured on it are *not* comparable to the papers'.
* :func:`make_texas_like`: Texas-100 (Shokri et al. 2017) comes from licence-restricted
  Texas hospital discharge records. We draw mixed categorical (demographics, admission)
  and binary (diagnosis and procedure codes) features from a latent main procedure,
  which is the label, as in Texas-100 ("predict the patient's main procedure" among the
  100 most frequent); ``label_by="kmeans"`` clusters instead.
* :func:`make_gaussian_regression`: a linear-Gaussian regression, optionally with a
  categorical sensitive attribute that shifts the target (yeom-overfitting.md Sec. 9).

Every generator takes ``random_state``; the same seed gives the same data.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._random import check_random_state, spawn_seeds, seed_to_int
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidParameterError
from ._dataset import Dataset
from ._features import Feature
from .purchase import basket_dataset, kmeans_labels

__all__ = ["make_purchase_like", "make_texas_like", "make_gaussian_regression"]


def _zipf_weights(n: int, exponent: float, rng: np.random.Generator) -> np.ndarray:
    """Popularity ``rank**-exponent`` in a random order, normalised to sum 1."""
    ranks = rng.permutation(n) + 1
    w = ranks.astype(np.float64) ** (-exponent)
    return w / w.sum()


def _type_profiles(base: np.ndarray, n_types: int, n_fav: int, boost: float, rng: np.random.Generator) -> np.ndarray:
    """Each type: the base popularity with ``n_fav`` favourite items (drawn by popularity) boosted."""
    d = base.shape[0]
    prof = np.tile(base, (n_types, 1))
    for t in range(n_types):
        fav = rng.choice(d, size=n_fav, replace=False, p=base)
        prof[t, fav] *= boost
    return prof / prof.sum(axis=1, keepdims=True)


def make_purchase_like(
    n_records: int = 10_000,
    n_features: int = 600,
    n_classes: int = 100,
    *,
    n_shopper_types: int = 200,
    mean_items: float | None = None,
    zipf_exponent: float = 1.0,
    favourite_boost: float = 2.0,
    n_init: int = 1,
    random_state: Any = None,
) -> Dataset:
    """Synthetic Purchase-k: binary purchase vectors labelled by k-means clusters.

    Generative model: category popularity ``pi_j ∝ rank_j^(-zipf_exponent)`` (ranks a
    random permutation); each of ``n_shopper_types`` types boosts ``n_features // 10``
    favourite categories (drawn by popularity) by ``favourite_boost`` and renormalises to
    ``w_t``; a shopper of type ``t`` (types drawn with Zipf-like frequencies) makes
    ``L ~ 1 + Poisson(mean_items - 1)`` purchases, category counts ``~ Poisson(L w_t)``,
    and ``x_j = 1`` iff the count is positive. Labels: ``KMeans(n_classes, k-means++)``
    on the binary vectors (Long et al. Sec. 5; Shokri et al. Sec. V-A).

    Parameters
    ----------
    n_records : int, default 10,000
    n_features : int, default 600
        Shokri et al.'s Purchase has 600; Long et al.'s 836.
    n_classes : int, default 100
        k; the papers use 2, 10, 20, 50 or 100 (Long et al.: 10).
    n_shopper_types : int, default 200
    mean_items : float, optional
        Mean number of purchases per shopper; default ``n_features / 5`` (120 for 600
        features; repeated purchases make the mean number of distinct categories lower,
        about 74 of 836 with the other defaults).
    zipf_exponent : float, default 1.0
    favourite_boost : float, default 2.0
    n_init : int, default 1
        k-means++ restarts (scikit-learn's default for k-means++).
    random_state : None, int or Generator

    Returns
    -------
    Dataset
        Binary features ``cat0``...; ``y`` the cluster (0 = largest); ``extras["shopper_type"]``
        the latent type. ``info`` records every parameter.

    Notes
    -----
    The defaults (chosen on a small grid over boost, purchases and types) make the task about as hard as Long
    et al.'s Purchase for their logistic regression (docs/reproduction.md, "LR-Purchase test accuracy"); stronger
    type structure makes it far easier than the real data. k-means can still produce a small cluster.
    """
    for name, v, lo in (("n_records", n_records, 2), ("n_features", n_features, 2), ("n_classes", n_classes, 2),
                        ("n_shopper_types", n_shopper_types, 1), ("n_init", n_init, 1)):
        check_scalar(v, name=name, kind=(int, np.integer), min_val=lo)
    if n_classes > n_records:
        raise InvalidParameterError(f"n_classes={n_classes} exceeds n_records={n_records}")
    check_scalar(zipf_exponent, name="zipf_exponent", min_val=0)
    check_scalar(favourite_boost, name="favourite_boost", min_val=1)
    mean_items = n_features / 5 if mean_items is None else mean_items
    check_scalar(mean_items, name="mean_items", min_val=1)
    gen_seed, km_seed = spawn_seeds(seed_to_int(random_state), 2)
    rng = np.random.default_rng(gen_seed)
    base = _zipf_weights(n_features, zipf_exponent, rng)
    prof = _type_profiles(base, n_shopper_types, max(1, n_features // 10), favourite_boost, rng)
    type_freq = _zipf_weights(n_shopper_types, 0.5, rng)
    types = rng.choice(n_shopper_types, size=n_records, p=type_freq)
    n_items = 1 + rng.poisson(mean_items - 1, size=n_records)
    counts = rng.poisson(n_items[:, None] * prof[types])
    X = (counts > 0).astype(np.int8)
    y = kmeans_labels(X.astype(np.float64), n_classes, random_state=km_seed, n_init=n_init)
    return basket_dataset(
        X, y, name=f"purchase-like-{n_classes}", columns=[f"cat{j}" for j in range(n_features)], n_classes=n_classes,
        extras=pd.DataFrame({"shopper_type": types}),
        info={
            "source": "synthetic substitute for Kaggle Acquire Valued Shoppers / Purchase-k (make_purchase_like)",
            "params": dict(n_records=n_records, n_features=n_features, n_classes=n_classes,
                           n_shopper_types=n_shopper_types, mean_items=mean_items, zipf_exponent=zipf_exponent,
                           favourite_boost=favourite_boost, n_init=n_init, random_state=repr(random_state)),
        },
    )


# name, categories, concentration of the per-procedure Dirichlet around the global mix
_TEXAS_CATEGORICAL = (
    ("sex", ("F", "M", "U"), 30.0),
    ("age_group", tuple(f"{10 * i:02d}-{10 * i + 9:02d}" for i in range(9)) + ("90+",), 5.0),
    ("race", ("white", "black", "asian", "native", "other"), 50.0),
    ("ethnicity", ("hispanic", "not hispanic"), 50.0),
    ("admission_type", ("emergency", "urgent", "elective", "newborn", "trauma"), 3.0),
    ("admission_source", ("referral", "clinic", "hmo", "transfer hospital", "transfer snf", "er", "court", "other"),
     5.0),
    ("length_of_stay", ("0-1", "2-3", "4-7", "8-14", "15-30", "31+"), 4.0),
    ("discharge_status", ("home", "snf", "transfer", "home health", "left ama", "died"), 8.0),
    ("payer", ("medicare", "medicaid", "commercial", "self pay", "other"), 10.0),
)


def make_texas_like(
    n_records: int = 10_000,
    n_classes: int = 100,
    *,
    n_diagnoses: int = 300,
    n_procedures: int = 200,
    codes_per_record: float = 6.0,
    label_by: str = "procedure",
    n_init: int = 1,
    random_state: Any = None,
) -> Dataset:
    """Synthetic Texas-100-like hospital discharges with mixed categorical and binary features.

    Generative model: a latent main procedure ``c`` (Zipf-like frequencies over
    ``n_classes``); nine categorical attributes (sex, age group, race, ethnicity,
    admission type and source, length of stay, discharge status, payer) drawn from
    procedure-specific distributions ``~ Dirichlet(concentration * global mix)``; binary
    diagnosis and secondary-procedure codes with Poisson counts of rate
    ``codes_per_record * w_c``, where ``w_c`` is a Zipf popularity with 5% of the codes
    boosted 30x for procedure ``c``.

    Parameters
    ----------
    n_records : int, default 10,000
    n_classes : int, default 100
    n_diagnoses, n_procedures : int, default 300 and 200
        Numbers of binary code columns (``dx*`` and ``px*``); Texas-100 has 6,170 binary
        features in all (after one-hot), use larger values to approach that width.
    codes_per_record : float, default 6.0
        Mean number of code draws per record for each of the two code families.
    label_by : {"procedure", "kmeans"}, default "procedure"
        "procedure": the latent main procedure, as Texas-100 is labelled (Shokri et al.
        2017, Sec. V-A). "kmeans": k-means clusters of the encoded features, as Purchase.
    n_init : int, default 1
        k-means++ restarts (``label_by="kmeans"`` only).
    random_state : None, int or Generator

    Returns
    -------
    Dataset
        9 categorical + ``n_diagnoses + n_procedures`` binary features, ``y`` in 0..k-1,
        sensitive ("sex", "race", "ethnicity", "age_group"), ``extras["main_procedure"]``.
    """
    for name, v, lo in (("n_records", n_records, 2), ("n_classes", n_classes, 2), ("n_diagnoses", n_diagnoses, 1),
                        ("n_procedures", n_procedures, 1), ("n_init", n_init, 1)):
        check_scalar(v, name=name, kind=(int, np.integer), min_val=lo)
    check_scalar(codes_per_record, name="codes_per_record", min_val=0, include_min=False)
    check_choice(label_by, name="label_by", choices=("procedure", "kmeans"))
    if n_classes > n_records:
        raise InvalidParameterError(f"n_classes={n_classes} exceeds n_records={n_records}")
    gen_seed, km_seed = spawn_seeds(seed_to_int(random_state), 2)
    rng = np.random.default_rng(gen_seed)
    cls_freq = _zipf_weights(n_classes, 0.7, rng)
    c = rng.choice(n_classes, size=n_records, p=cls_freq)
    columns: dict[str, np.ndarray] = {}
    feats = []
    for name, cats, conc in _TEXAS_CATEGORICAL:
        glob = rng.dirichlet(np.full(len(cats), 2.0))
        per = rng.dirichlet(conc * len(cats) * glob + 1e-3, size=n_classes)  # (k, m)
        u = rng.random(n_records)
        idx = (u[:, None] > np.cumsum(per[c], axis=1)).sum(axis=1)
        idx = np.minimum(idx, len(cats) - 1)
        columns[name] = np.asarray(cats, dtype=object)[idx]
        feats.append(Feature(name, "categorical", cats))
    for prefix, n_codes in (("dx", n_diagnoses), ("px", n_procedures)):
        base = _zipf_weights(n_codes, 1.0, rng)
        prof = _type_profiles(base, n_classes, max(1, n_codes // 20), 30.0, rng)
        X = (rng.poisson(codes_per_record * prof[c]) > 0).astype(np.int8)
        for j in range(n_codes):
            columns[f"{prefix}{j}"] = X[:, j]
            feats.append(Feature(f"{prefix}{j}", "binary", (0, 1)))
    frame = pd.DataFrame(columns)
    for name, _cats, _ in _TEXAS_CATEGORICAL:
        frame[name] = frame[name].astype("str")
    info = {
        "source": "synthetic substitute for Texas-100 hospital discharges (make_texas_like)",
        "params": dict(n_records=n_records, n_classes=n_classes, n_diagnoses=n_diagnoses, n_procedures=n_procedures,
                       codes_per_record=codes_per_record, label_by=label_by, n_init=n_init,
                       random_state=repr(random_state)),
    }
    ds = Dataset(
        name=f"texas-like-{n_classes}",
        frame=frame,
        y=c.astype(np.int64),
        features=tuple(feats),
        label_name="main_procedure",
        class_names=tuple(f"procedure{k}" for k in range(n_classes)),
        sensitive=("sex", "race", "ethnicity", "age_group"),
        task="classification",
        extras=pd.DataFrame({"main_procedure": c}),
        info=info,
    )
    if label_by == "kmeans":
        X, _ = ds.encode(scale_numeric=False)
        y = kmeans_labels(X, n_classes, random_state=km_seed, n_init=n_init)
        ds = replace(ds, y=y, label_name="cluster", class_names=tuple(f"cluster{k}" for k in range(n_classes)))
    return ds


def make_gaussian_regression(
    n: int = 1_000,
    d: int = 10,
    noise: float = 1.0,
    random_state: Any = None,
    *,
    n_sensitive_values: int = 0,
    sensitive_effect: float = 1.0,
) -> Dataset:
    """Linear-Gaussian regression: ``y = X w (+ a_s) + noise * e``.

    ``X ~ N(0, I_d)``, ``w ~ N(0, I_d / d)`` (so ``Var(Xw) ≈ 1``), ``e ~ N(0, 1)``. With
    ``n_sensitive_values = m > 0`` a categorical feature ``s`` uniform over
    ``s0..s{m-1}`` adds ``a_s ~ N(0, sensitive_effect^2)`` to the target: the setting of
    Yeom et al.'s attribute-inference theory (a one-hot sensitive attribute, Thm 5).

    Parameters
    ----------
    n, d : int
    noise : float, default 1.0
        Standard deviation of the residual.
    random_state : None, int or Generator
    n_sensitive_values : int, default 0
    sensitive_effect : float, default 1.0

    Returns
    -------
    Dataset
        Regression; numeric ``x0..x{d-1}`` (and categorical ``s``, sensitive). ``info``
        holds ``coef`` (w), ``sensitive_offsets`` (a) and ``noise``.
    """
    check_scalar(n, name="n", kind=(int, np.integer), min_val=1)
    check_scalar(d, name="d", kind=(int, np.integer), min_val=1)
    check_scalar(noise, name="noise", min_val=0)
    check_scalar(n_sensitive_values, name="n_sensitive_values", kind=(int, np.integer), min_val=0)
    check_scalar(sensitive_effect, name="sensitive_effect", min_val=0)
    if n_sensitive_values == 1:
        raise InvalidParameterError("n_sensitive_values must be 0 (none) or at least 2")
    rng = check_random_state(random_state)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d) / np.sqrt(d)
    y = X @ w
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    feats = [Feature(f"x{j}", "numeric") for j in range(d)]
    offsets = np.zeros(0)
    sensitive: tuple[str, ...] = ()
    if n_sensitive_values:
        cats = tuple(f"s{k}" for k in range(n_sensitive_values))
        offsets = rng.normal(0.0, sensitive_effect, size=n_sensitive_values)
        s = rng.integers(0, n_sensitive_values, size=n)
        y = y + offsets[s]
        frame["s"] = pd.Series(np.asarray(cats, dtype=object)[s], dtype="str")
        feats.append(Feature("s", "categorical", cats))
        sensitive = ("s",)
    y = y + noise * rng.standard_normal(n)
    return Dataset(
        name="gaussian-regression",
        frame=frame,
        y=y,
        features=tuple(feats),
        label_name="y",
        class_names=None,
        sensitive=sensitive,
        task="regression",
        info={"source": "synthetic (make_gaussian_regression)", "coef": w, "sensitive_offsets": offsets,
              "noise": noise},
    )

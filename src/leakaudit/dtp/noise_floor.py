"""The training-noise floor (Long et al. §9, Figs 7 and 8).

A record's influence hides inside two noise sources: random initialisation
(Fig 7: 100 networks on the same training set) and random sampling of the
other training records (Fig 8: 100 classifiers on 100 training sets from the
same population). The floor statistic (spec §5.6, ours) is the standard
deviation of ``ln p(y|x)`` across those retrainings; PDTP far above it is a
change an observer can tell apart from noise, PDTP inside it is not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._random import check_random_state, spawn_seeds
from .._validation import check_choice, check_indices, check_scalar
from ..engine import Engine, check_work, reports_engine_stats
from ..exceptions import InvalidInputError, InvalidParameterError
from ..learners import check_fit_inputs
from .pdtp import _check_bin_width, apply_binning
from .results import NoiseFloorResult

__all__ = ["seed_noise_floor", "sampling_noise_floor", "noise_floor_from_probabilities", "normalised_pdtp"]


def noise_floor_from_probabilities(P: Any, y_query: Any, *, bin_width: float | None = 0.01
                                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spread of ln p over models.

    Parameters
    ----------
    P : array-like of shape (n_models, n_query, n_classes)
    y_query : array-like of shape (n_query,)  true labels of the queries

    Returns
    -------
    std_true : (n_query,)  std over models of ln bin(p(y_q|x_q))
    max_std : (n_query,)  max over classes of the std of ln bin(p(y|x_q))
    p_true : (n_models, n_query)  unbinned p(y_q|x_q)
    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 3 or P.shape[0] < 2:
        raise InvalidInputError(f"P must have shape (n_models >= 2, n_query, n_classes); got {P.shape}")
    y_query = np.asarray(y_query, dtype=np.int64)
    _check_bin_width(bin_width)
    with np.errstate(divide="ignore"):
        L = np.log(apply_binning(P, bin_width))
    with np.errstate(invalid="ignore"):
        S = L.std(axis=0, ddof=1)  # (n_query, n_classes)
    q = np.arange(P.shape[1])
    return S[q, y_query], S.max(axis=1), P[:, q, y_query]


def _floor_result(source: str, P: Any, y_query: np.ndarray, n_models: int, bin_width: float | None
                  ) -> NoiseFloorResult:
    s, m, p = noise_floor_from_probabilities(P, y_query, bin_width=bin_width)
    return NoiseFloorResult(source=source, n_models=n_models, std_log_p=s, max_std_log_p=m, p_true=p,
                            bin_width=bin_width)


@reports_engine_stats
def seed_noise_floor(learner: Any, X: Any, y: Any, *, queries: Any = None, X_query: Any = None, y_query: Any = None,
                     n_models: int = 20, bin_width: float | None = 0.01, random_state: Any = None,
                     n_classes: int | None = None, engine: Engine | None = None) -> NoiseFloorResult:
    """Fig 7: models trained on the SAME training set with different seeds.

    Parameters
    ----------
    learner : Learner
    X, y : the training set
    queries : array-like of int, optional
        Rows of X to query, with their own labels (default: all rows, unless ``X_query`` is given).
    X_query, y_query : array-like of shape (n_query, n_features) and (n_query,), optional
        Individuals outside the training set to query, with their labels (Long et al. §9 query individuals of
        the population; a training record's own output also carries its influence on the model). Exclusive
        with ``queries``; both or neither.
    n_models : int, default=20  (the paper uses 100)
    bin_width : float or None
    engine : leakaudit.engine.Engine, optional
        Trains the models (its backend and resumable on-disk cache); default
        :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    NoiseFloorResult with source "seed" (a deterministic learner gives 0) and the engine's ``engine_stats``.
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    if (X_query is None) != (y_query is None):
        raise InvalidParameterError("X_query and y_query go together: pass both or neither")
    if X_query is not None:
        if queries is not None:
            raise InvalidParameterError("pass queries (rows of X) or X_query / y_query (other individuals), not both")
        Xq, yq, _ = check_fit_inputs(X_query, y_query, task="classification", n_classes=n_classes)
        if Xq.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {Xq.shape[1]} features but X has {X.shape[1]}")
    else:
        q = np.arange(len(X)) if queries is None else check_indices(queries, name="queries", n=len(X))
        Xq, yq = X[q], y[q]
    check_scalar(n_models, name="n_models", kind=int, min_val=2)
    check_work(float(n_models) * X.shape[0] * X.shape[1], f"a seed noise floor over {n_models:,} models (each "
               f"reading the {X.shape[0]:,} x {X.shape[1]:,} training rows)", fix="retrain fewer models (n_models)")
    seeds = spawn_seeds(random_state, n_models)
    everything = np.arange(len(X))
    P = engine.predict_many(learner, X, y, [everything] * n_models, seeds, Xq, n_classes=n_classes)
    return _floor_result("seed", P, yq, n_models, bin_width)


@reports_engine_stats
def sampling_noise_floor(learner: Any, X_pool: Any, y_pool: Any, *, n_train: int, X_query: Any, y_query: Any,
                         n_models: int = 20, exclude_query_rows: Any = None, seed_policy: str = "fixed",
                         bin_width: float | None = 0.01, random_state: Any = None,
                         n_classes: int | None = None, engine: Engine | None = None) -> NoiseFloorResult:
    """Fig 8: models trained on different uniform samples of size ``n_train`` from a population pool.

    Parameters
    ----------
    learner : Learner
    X_pool, y_pool : the population to sample training sets from
    n_train : int  training-set size (the paper's Fig 8 size is unstated; spec infers 10,000)
    X_query, y_query : where to measure ln p(y|x)
    n_models : int, default=20
    exclude_query_rows : array-like of int, optional
        Pool rows never sampled (e.g. the queries themselves), so that the
        spread reflects the *other* records only.
    seed_policy : {"fixed", "independent"}
        "fixed": every model uses the same training seed (sampling noise only);
        "independent": fresh seeds (sampling plus initialisation noise).
    engine : leakaudit.engine.Engine, optional
        Trains the models; default :func:`leakaudit.engine.default_engine`.
    """
    X_pool, y_pool, n_classes = check_fit_inputs(X_pool, y_pool, task="classification", n_classes=n_classes)
    Xq, yq, _ = check_fit_inputs(X_query, y_query, task="classification", n_classes=n_classes)
    check_choice(seed_policy, name="seed_policy", choices=("fixed", "independent"))
    check_scalar(n_models, name="n_models", kind=int, min_val=2)
    avail = np.arange(len(X_pool))
    if exclude_query_rows is not None:
        ex = check_indices(exclude_query_rows, name="exclude_query_rows", n=len(X_pool), allow_empty=True)
        avail = np.setdiff1d(avail, ex)
    check_scalar(n_train, name="n_train", kind=int, min_val=1, max_val=len(avail))
    check_work(float(n_models) * n_train * X_pool.shape[1], f"a sampling noise floor over {n_models:,} models "
               f"(each reading {n_train:,} x {X_pool.shape[1]:,} training rows)", fix="train fewer models (n_models)")
    rng = check_random_state(random_state)
    subsets = [np.sort(rng.choice(avail, size=n_train, replace=False)) for _ in range(n_models)]
    seeds = spawn_seeds(int(rng.integers(2**31 - 1)), n_models)
    if seed_policy == "fixed":
        seeds = [seeds[0]] * n_models
    P = engine.predict_many(learner, X_pool, y_pool, subsets, seeds, Xq, n_classes=n_classes)
    return _floor_result("sampling", P, yq, n_models, bin_width)


def normalised_pdtp(pdtp_values: Any, floor: Any) -> np.ndarray:
    """PDTP divided by the noise floor (spec §8 item 4, ours); inf where the floor is 0 and PDTP > 0."""
    p = np.asarray(pdtp_values, dtype=np.float64)
    f = np.asarray(floor, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = p / f
    return np.where((f == 0) & (p == 0), 0.0, r)

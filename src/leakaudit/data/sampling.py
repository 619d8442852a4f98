"""Index sampling for membership experiments: candidate sets, halves, shadow pools, with/without a record.

Every function works on row indices (``n`` rows numbered 0..n-1, or an explicit index
array), takes ``random_state`` and returns sorted int64 index arrays (sets of rows; a
trainer draws its own example order). Impossible sizes raise
:class:`~leakaudit.exceptions.InvalidParameterError` saying what is available.

Protocol of Long et al. (2020), Sec. 5 (long-dtp.md Sec. 4): draw the candidate set ``D``
(``|D| = 2,000``) with :func:`candidate_set`, a training set as a random half of ``D`` with
:func:`random_halves`, shadow data disjoint from the target's with :func:`shadow_pools`,
and ``T`` vs ``T \\ {t}`` with :func:`with_and_without`. LiRA-style in/out splits, where every
record is in exactly half of the models, come from :func:`in_out_splits` (Carlini et al. 2022).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._random import check_random_state
from .._validation import check_indices, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ._dataset import Dataset
from .images import ImageDataset

__all__ = [
    "as_indices",
    "candidate_set",
    "random_halves",
    "disjoint_pool",
    "shadow_pools",
    "with_and_without",
    "leave_one_out",
    "in_out_splits",
]


def as_indices(rows: Any, *, name: str = "rows") -> np.ndarray:
    """``rows`` as a sorted array of distinct int64 indices.

    ``rows`` may be an int ``n`` (meaning 0..n-1), a Dataset or ImageDataset (all its
    rows), or an array-like of distinct non-negative integer indices.
    """
    if isinstance(rows, numbers.Integral) and not isinstance(rows, bool):
        if rows < 0:
            raise InvalidParameterError(f"{name} must be >= 0; got {rows}")
        return np.arange(int(rows), dtype=np.int64)
    if isinstance(rows, (Dataset, ImageDataset)):
        return np.arange(len(rows), dtype=np.int64)
    arr = np.asarray(rows)
    if arr.ndim != 1:
        raise InvalidInputError(f"{name} must be a 1D array of row indices; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise InvalidInputError(f"{name} must hold integer row indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise InvalidInputError(f"{name} holds a negative index {arr.min()}")
    uniq = np.unique(arr)
    if uniq.size != arr.size:
        raise InvalidInputError(f"{name} holds duplicate indices")
    return uniq


def _check_size(size: Any, available: int, *, name: str, what: str) -> int:
    check_scalar(size, name=name, kind=numbers.Integral, min_val=0)
    if size > available:
        raise InvalidParameterError(f"{name}={size} exceeds the {available} {what}")
    return int(size)


def _choose(pool: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.choice(pool, size=size, replace=False)) if size else np.zeros(0, dtype=np.int64)


def candidate_set(rows: Any, size: int, random_state: Any = None) -> np.ndarray:
    """The candidate set ``D``: ``size`` distinct rows drawn uniformly from ``rows``.

    Parameters
    ----------
    rows : int, Dataset or array-like of int
        The population (an int ``n`` means rows 0..n-1).
    size : int
        ``|D|`` (Long et al.: 2,000).
    random_state : None, int or Generator

    Returns
    -------
    ndarray of shape (size,), int64, sorted
    """
    pool = as_indices(rows)
    size = _check_size(size, pool.size, name="size", what="rows available")
    return _choose(pool, size, check_random_state(random_state))


def random_halves(rows: Any, random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Split ``rows`` uniformly at random into two halves.

    Returns
    -------
    first, second : ndarray of int64, sorted
        ``len(first) = len(rows) // 2``; ``second`` holds the rest (one more when odd).
        Disjoint, and together exactly ``rows``.
    """
    pool = as_indices(rows)
    if pool.size < 2:
        raise InvalidParameterError(f"rows must hold at least 2 rows to halve; got {pool.size}")
    rng = check_random_state(random_state)
    perm = rng.permutation(pool)
    h = pool.size // 2
    return np.sort(perm[:h]), np.sort(perm[h:])


def disjoint_pool(rows: Any, exclude: Any, size: int | None = None, random_state: Any = None) -> np.ndarray:
    """Rows of ``rows`` not in ``exclude``; a random ``size`` of them if given (sorted)."""
    pool = as_indices(rows)
    ex = as_indices(exclude, name="exclude")
    rest = np.setdiff1d(pool, ex, assume_unique=True)
    if size is None:
        return rest
    what = f"rows outside exclude ({pool.size} - {pool.size - rest.size})"
    size = _check_size(size, rest.size, name="size", what=what)
    return _choose(rest, size, check_random_state(random_state))


def shadow_pools(
    rows: Any,
    exclude: Any,
    n_pools: int,
    pool_size: int,
    random_state: Any = None,
    *,
    disjoint: bool = False,
) -> list[np.ndarray]:
    """Data sets for shadow models, each disjoint from the target's data ``exclude``.

    Parameters
    ----------
    rows : int, Dataset or array-like of int
        Population the attacker can draw from.
    exclude : array-like of int
        The target's training (or candidate) rows; no pool contains any of them.
    n_pools : int
        Number of shadow data sets.
    pool_size : int
        Rows per shadow data set.
    random_state : None, int or Generator
    disjoint : bool, default False
        Also make the pools mutually disjoint (needs ``n_pools * pool_size`` spare rows).

    Returns
    -------
    list of n_pools ndarrays of shape (pool_size,), int64, sorted
    """
    check_scalar(n_pools, name="n_pools", kind=numbers.Integral, min_val=1)
    rest = disjoint_pool(rows, exclude)
    rng = check_random_state(random_state)
    if disjoint:
        _check_size(n_pools * pool_size, rest.size, name="n_pools * pool_size",
                    what="rows outside exclude (disjoint=True needs that many)")
        perm = rng.permutation(rest)
        return [np.sort(perm[k * pool_size:(k + 1) * pool_size]) for k in range(n_pools)]
    _check_size(pool_size, rest.size, name="pool_size", what="rows outside exclude")
    return [_choose(rest, pool_size, rng) for _ in range(n_pools)]


def with_and_without(
    rows: Any,
    record: int,
    size: int,
    random_state: Any = None,
    *,
    mode: str = "remove",
) -> tuple[np.ndarray, np.ndarray]:
    """A training set containing ``record`` and its counterpart without it.

    ``with_idx`` is ``record`` plus ``size - 1`` rows drawn from ``rows`` minus the record.
    mode "remove": ``without_idx = with_idx \\ {record}`` (``size - 1`` rows; the neighbouring
    data sets T and T \\ {t} of Long et al.'s DTP, Def. 4.2). mode "replace": the record is
    replaced by one more random row, so both have ``size`` rows.

    Returns
    -------
    with_idx, without_idx : ndarray of int64, sorted
    """
    if mode not in ("remove", "replace"):
        raise InvalidParameterError(f"mode must be 'remove' or 'replace'; got {mode!r}")
    pool = as_indices(rows)
    check_scalar(record, name="record", kind=numbers.Integral, min_val=0)
    check_scalar(size, name="size", kind=numbers.Integral, min_val=1)
    others = pool[pool != record]
    need = size - 1 + (mode == "replace")
    if need > others.size:
        raise InvalidParameterError(
            f"size={size} needs {need} rows besides the record (mode={mode!r}); only {others.size} are available"
        )
    rng = check_random_state(random_state)
    perm = rng.permutation(others)[:need]
    base = perm[: size - 1]
    with_idx = np.sort(np.concatenate([base, [record]]).astype(np.int64))
    without_idx = np.sort(base if mode == "remove" else perm).astype(np.int64)
    return with_idx, without_idx


def leave_one_out(rows: Any, records: Any = None) -> list[np.ndarray]:
    """``rows`` minus one record, for each record in ``records`` (default: every row).

    Returns
    -------
    list of ndarrays of shape (len(rows) - 1,), int64, sorted; entry k drops ``records[k]``
    """
    pool = as_indices(rows)
    recs = pool if records is None else check_indices(records, name="records", n=np.iinfo(np.int64).max)
    missing = np.setdiff1d(recs, pool)
    if missing.size:
        raise InvalidInputError(f"records holds {missing[0]}, which is not in rows")
    return [pool[pool != r] for r in recs]


def in_out_splits(
    rows: Any,
    n_models: int,
    random_state: Any = None,
    *,
    fraction: float = 0.5,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Training subsets for K models in which every record is in exactly ``round(fraction * K)`` models.

    As in Carlini et al. (2022) LiRA's ``keep = uniform(K, n).argsort(0) < fraction * K``.

    Returns
    -------
    subsets : list of K ndarrays of int64 (sorted indices into ``rows``' values)
    membership : ndarray of shape (K, len(rows)), bool
        ``membership[k, i]`` is True iff the i-th row of ``rows`` is in ``subsets[k]``.
    """
    pool = as_indices(rows)
    check_scalar(n_models, name="n_models", kind=numbers.Integral, min_val=1)
    check_scalar(fraction, name="fraction", min_val=0, max_val=1, include_min=False, include_max=False)
    n_in = int(round(fraction * n_models))
    if n_in < 1 or n_in >= n_models:
        raise InvalidParameterError(
            f"fraction={fraction} with n_models={n_models} puts each record in {n_in} models; "
            "need at least one model with and one without each record (use more models)"
        )
    rng = check_random_state(random_state)
    order = rng.random((n_models, pool.size)).argsort(axis=0)
    membership = order < n_in
    return [pool[membership[k]] for k in range(n_models)], membership

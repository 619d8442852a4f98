"""Boundary checks. Public entry points call these first; inner code trusts its inputs.

Every message names the argument, what was expected, what came, and where it
helps, how to fix it (scikit-learn's ``check_array`` style).
"""

from __future__ import annotations

import numbers
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from .exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "check_linked_file",
    "check_regular_file",
    "check_model_file",
    "check_array",
    "check_vector",
    "check_matrix",
    "check_probabilities",
    "check_labels",
    "check_consistent_length",
    "check_scalar",
    "check_indices",
    "check_integers",
    "check_sequence",
    "check_choice",
    "plain",
    "shown",
    "clip",
]


def plain(x: Any) -> Any:
    """``x`` as a message should show it: numpy scalars as Python numbers and strings (``1``, not
    ``np.int64(1)``), paths as text (not ``PosixPath('...')``), arrays, lists, tuples and sets element by element."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, PurePath):
        return str(x)
    if isinstance(x, np.ndarray):
        return [plain(v) for v in x.tolist()] if x.ndim else plain(x[()])
    if isinstance(x, (list, tuple, set, frozenset)):
        return type(x)(plain(v) for v in x) if type(x) in (list, tuple, set, frozenset) else [plain(v) for v in x]
    return x


def shown(x: Any, n: int = 80) -> str:
    """``repr`` of :func:`plain` ``(x)``, cut to at most ``n`` characters at a word boundary."""
    return clip(repr(plain(x)), n)


def clip(text: str, n: int = 300) -> str:
    """``text`` on one line, cut at a word boundary after at most ``n`` characters (marked with "...")."""
    text = " ".join(str(text).split())
    if len(text) <= n:
        return text
    head = text[:n - 3]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return cut.rstrip(",;:") + "..."


def check_array(
    x: Any,
    *,
    name: str,
    ndim: int | tuple[int, ...] | None = None,
    dtype: Any = np.float64,
    allow_nan: bool = False,
    allow_empty: bool = False,
) -> np.ndarray:
    """Convert ``x`` to a numpy array and check its dimensions and values.

    Parameters
    ----------
    x : array-like
    name : str
        The argument's name, used in every message.
    ndim : int or tuple of int, optional
        Allowed numbers of dimensions.
    dtype : numpy dtype or None
        Cast to this dtype (None keeps the array's own).
    allow_nan : bool
        Whether NaN and inf are allowed (only checked for float arrays).
    allow_empty : bool
        Whether zero rows are allowed.
    """
    if x is None:
        raise InvalidInputError(f"{name} is required; got None")
    if dtype is not None and np.dtype(dtype).kind != "c" and np.iscomplexobj(x):
        raise InvalidInputError(f"{name} holds complex numbers; pass a real-valued array")
    try:
        arr = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInputError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.dtype == object:
        raise InvalidInputError(f"{name} holds Python objects (dtype object); pass a numeric array")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}D" for d in allowed)
            hint = ""
            if 2 in allowed and arr.ndim == 1:
                hint = " (reshape with x.reshape(-1, 1) for a single feature, or x.reshape(1, -1) for a single row)"
            raise InvalidInputError(f"{name} must be a {want} array; got {arr.ndim}D with shape {arr.shape}{hint}")
    if not allow_empty and (arr.size == 0 or (arr.ndim >= 1 and arr.shape[0] == 0)):
        raise InvalidInputError(f"{name} is empty (shape {arr.shape}); at least one row is required")
    if not allow_nan and arr.dtype.kind in "fc" and arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = ("as its value" if arr.ndim == 0 else
                 f"at index {tuple(int(i) for i in bad)}" if arr.ndim > 1 else f"at index {int(bad[0])}")
        kind = "NaN" if np.isnan(arr[tuple(bad)]) else "inf"
        raise InvalidInputError(f"{name} contains {kind} ({where}); remove or impute non-finite values first")
    return arr


def check_vector(x: Any, *, name: str, **kw: Any) -> np.ndarray:
    """:func:`check_array` for a 1-D array."""
    return check_array(x, name=name, ndim=1, **kw)


def check_matrix(x: Any, *, name: str, **kw: Any) -> np.ndarray:
    """:func:`check_array` for a 2-D array."""
    return check_array(x, name=name, ndim=2, **kw)


def check_probabilities(p: Any, *, name: str, atol: float = 1e-3, allow_empty: bool = False,
                        counted_from: int = 0) -> np.ndarray:
    """Check a matrix of class probabilities, shape (n_samples, n_classes).

    Rows must be finite, non-negative and sum to 1 within ``atol``. Messages name rows and columns counted from
    ``counted_from`` (0 for an array's indices, 1 for a file's rows and columns, as docs/input.md counts them).
    """
    arr = check_matrix(p, name=name, allow_empty=allow_empty, allow_nan=bool(counted_from))
    if arr.shape[1] < 2 and arr.shape[0] > 0:
        raise InvalidInputError(
            f"{name} must have one column per class (at least 2); got shape {arr.shape}. "
            "For a binary model pass both columns [1 - p, p]"
        )
    k = counted_from
    if arr.size and not np.isfinite(arr).all():
        r, c = np.argwhere(~np.isfinite(arr))[0]
        kind = "NaN" if np.isnan(arr[r, c]) else "inf"
        raise InvalidInputError(f"{name} contains {kind} (row {r + k}, column {c + k}); remove or impute non-finite "
                                "values first")
    if arr.size and arr.min() < 0:
        r, c = np.argwhere(arr < 0)[0]
        raise InvalidInputError(f"{name} must be non-negative; row {r + k}, column {c + k} is {arr[r, c]:.6g}")
    if arr.size:
        sums = arr.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
        if bad.size:
            r = int(bad[0])
            raise InvalidInputError(
                f"rows of {name} must sum to 1; row {r + k} sums to {sums[r]:.6g} "
                f"({bad.size} of {arr.shape[0]} rows are off; pass logits or softmax them first)"
            )
    return arr


def check_labels(
    y: Any, *, name: str, n_classes: int | None = None, allow_empty: bool = False, min_classes: int = 1
) -> np.ndarray:
    """Check integer class labels in ``[0, n_classes)``; return them as int64."""
    arr = check_array(y, name=name, ndim=1, dtype=None, allow_empty=allow_empty)
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise InvalidInputError(f"{name} contains NaN or inf; labels must be integers")
        if not np.all(arr == np.round(arr)):
            raise InvalidInputError(f"{name} must hold integer class indices; got non-integer values")
    elif arr.dtype.kind not in "iub":
        raise InvalidInputError(f"{name} must hold integer class indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise InvalidInputError(f"{name} must be >= 0; found {arr.min()}")
    if n_classes is not None and arr.size and arr.max() >= n_classes:
        raise InvalidInputError(
            f"{name} holds label {arr.max()} but only {n_classes} classes are known (0..{n_classes - 1}); "
            "was it unseen at fit time?"
        )
    if min_classes > 1 and np.unique(arr).size < min_classes:
        raise InvalidInputError(
            f"{name} holds a single class ({arr[0] if arr.size else 'none'}); at least {min_classes} are required"
        )
    return arr


def check_consistent_length(**arrays: Any) -> int:
    """All arrays have the same first dimension; return it."""
    lengths = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={n}" for k, n in lengths.items())
        raise InvalidInputError(f"inconsistent numbers of samples: {desc}")
    return next(iter(lengths.values())) if lengths else 0


def check_scalar(
    x: Any,
    *,
    name: str,
    kind: type | tuple[type, ...] = numbers.Real,
    min_val: float | None = None,
    max_val: float | None = None,
    include_min: bool = True,
    include_max: bool = True,
) -> Any:
    """Check a scalar parameter's type and range; messages say the allowed range."""
    if isinstance(x, bool) or not isinstance(x, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        raise InvalidParameterError(
            f"{name} must be {' or '.join(k.__name__ for k in kinds)}; got {shown(x)} ({type(x).__name__})"
        )
    if isinstance(x, numbers.Real) and not _finite(x):
        raise InvalidParameterError(f"{name} must be finite; got {shown(x)}")
    lo_ok = min_val is None or (x >= min_val if include_min else x > min_val)
    hi_ok = max_val is None or (x <= max_val if include_max else x < max_val)
    if not (lo_ok and hi_ok):
        lo = "-inf" if min_val is None else f"{min_val}"
        hi = "inf" if max_val is None else f"{max_val}"
        rng = f"{'[' if include_min else '('}{lo}, {hi}{']' if include_max else ')'}"
        raise InvalidParameterError(f"{name} must be in {rng}; got {plain(x)}")
    return x


def _finite(x: numbers.Real) -> bool:
    """Whether a real number is finite and within a float's range (an int such as 10**400 is not)."""
    try:
        return bool(np.isfinite(float(x)))
    except OverflowError:
        return False


def check_integers(x: Any, *, name: str, ndim: int = 1, allow_empty: bool = False) -> np.ndarray:
    """Check an array of whole numbers (integers, or floats with whole values) that fit in int64; return it as
    int64."""
    arr = check_array(x, name=name, ndim=ndim, dtype=None, allow_empty=allow_empty)
    if arr.dtype.kind not in "iuf":
        raise InvalidInputError(f"{name} must hold integers; got dtype {arr.dtype}")
    if arr.size and arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
        raise InvalidInputError(f"{name} must hold integers; got non-integer values")
    top = 2.0**63  # int64 holds [-2**63, 2**63)
    if arr.size and arr.dtype.kind in "uf" and (arr.max() >= top or arr.min() < -top):
        raise InvalidInputError(f"{name} must hold integers within int64's range [-2**63, 2**63)")
    return arr.astype(np.int64)


def check_indices(idx: Any, *, name: str, n: int, allow_empty: bool = False, unique: bool = False) -> np.ndarray:
    """Check an array of row indices into a set of ``n`` rows: a contiguous int64 array (``idx`` itself when it
    is one)."""
    arr = check_array(idx, name=name, ndim=1, dtype=None, allow_empty=allow_empty)
    if arr.dtype == bool:
        if arr.shape[0] != n:
            raise InvalidInputError(f"{name} is a boolean mask of length {arr.shape[0]}; expected length {n}")
        arr = np.flatnonzero(arr)
        if not allow_empty and arr.size == 0:
            raise InvalidInputError(f"{name} selects no rows")
    if arr.size and arr.dtype.kind not in "iu":
        raise InvalidInputError(f"{name} must hold integer row indices; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)  # (no copy of contiguous int64 indices: an audit's K subsets)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = arr[(arr < 0) | (arr >= n)][0]
        raise InvalidInputError(f"{name} holds index {bad}, out of range for {n} rows")
    if unique and np.unique(arr).size != arr.size:
        raise InvalidInputError(f"{name} holds duplicate indices")
    return arr


def check_sequence(x: Any, *, name: str, kind: type, hint: str = "") -> list:
    """``x`` as a list of ``kind`` items (a sequence or any iterable of them, but not a single one); ``hint`` ends
    the message about an item of another type."""
    what = "string" if kind is str else kind.__name__
    if isinstance(x, kind):
        raise InvalidInputError(f"{name} must be a sequence of {what} items, not a single {what}")
    try:
        items = list(x)
    except TypeError:
        raise InvalidInputError(f"{name} must be a sequence of {what} items; got {type(x).__name__}") from None
    bad = next((i for i, v in enumerate(items) if not isinstance(v, kind)), None)
    if bad is not None:
        raise InvalidInputError(f"{name}[{bad}] is {type(items[bad]).__name__}, not a {what}{hint}")
    return items


def check_choice(x: Any, *, name: str, choices: tuple | list) -> Any:
    """Check that ``x`` is one of ``choices``."""
    try:  # an array (or anything whose == is not one truth value) is none of them
        ok = not isinstance(x, np.ndarray) and any(bool(x == c) for c in choices)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidParameterError(f"{name} must be one of {', '.join(map(shown, choices))}; got {shown(x)}")
    return x


def check_model_file(path: Any) -> Path:
    """A model file's path, refused in one line as a table's would be (:func:`check_regular_file`,
    :func:`check_linked_file`): missing, a folder or pipe, or a link to a file others cannot read."""
    check_regular_file(path, what="model file")
    check_linked_file(path, what="model file")
    return Path(path)


def check_linked_file(path: Any, *, what: str = "file") -> None:
    """Refuse a file reached through a symbolic link whose target is not readable by everyone.

    leakaudit's messages quote what it reads (a table's column names, a bad value), and they end up in terminals,
    CI logs and bug reports. A link named like a data file but pointing at a protected file (``/etc/shadow``, a
    private key), read with the rights of whoever runs the audit, would put that file's first line in such a
    message. A protected file named directly is the user's own choice and is read as usual.

    Raises
    ------
    InvalidInputError
        ``path`` is (or passes through) a link to a file that others cannot read; the message names the link
        and its target, never the target's contents.
    """
    import os
    import stat

    p = os.fspath(path)
    real = os.path.realpath(p)
    if real == os.path.abspath(p):
        return  # no link on the way
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return  # missing or unreadable: the reader says so
    if stat.S_ISREG(mode) and not mode & stat.S_IROTH:
        raise InvalidInputError(
            f"{what} {p} is a link to {real}, a file not readable by everyone; leakaudit does not read a protected "
            "file through a link (its contents could appear in messages): give the file itself")



def check_regular_file(path: Any, *, what: str = "file") -> None:
    """Refuse, naming ``what`` and the path, a ``path`` that is not a regular file: missing, a folder, or a named
    pipe, socket or device (read more than once, or never ending, none of which holds a table).

    Raises
    ------
    DataFileError
        ``path`` does not exist or cannot be looked at.
    InvalidInputError
        ``path`` exists but is not a regular file.
    """
    import os
    import stat

    from .exceptions import DataFileError

    try:
        mode = os.stat(os.fspath(path)).st_mode
    except FileNotFoundError:
        raise DataFileError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise DataFileError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    kind = next((words for test, words in kinds if test(mode)), None)
    if kind is not None:
        raise InvalidInputError(f"{what} {path} is {kind}, not a regular file: give the file itself")

"""Model outputs within a memory budget: an array in memory below the budget, a disk-backed one above it.

:meth:`Engine.predict_many` returns the outputs of K models on n records, a (K, n, C) array: 256 reference
models over 48,842 records and 100 classes would be 10 GB. :func:`output_array` allocates it in memory while it
fits the budget, and otherwise as a :class:`numpy.memmap` over an unnamed temporary file, which the operating
system removes when the array is freed (or the process ends, killed or not): nothing is left on disk. Code that
reads such an array works on chunks of the model axis (:func:`chunk_length`), so its working memory is a
fraction of the budget whatever K and n are.

The dtype is the models' own (float64 for every learner of the package) on both paths, so a result does not
depend on the path taken, and so not on the machine's memory, from which the default budget is derived.
Consumers sum over models row by row, in model order, which gives the same floating-point sums as one
``sum(axis=0)`` over the whole array: chunking changes memory, never a number.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import tempfile
from typing import Any

import numpy as np

from .._results import writing
from .._text import byte_size
from ..exceptions import InvalidParameterError
from ._work import using_budget

__all__ = ["chunk_length", "default_memory_budget", "is_disk_backed", "memory_budget", "output_array",
           "parse_memory_size", "using_memory_budget"]

#: Fraction of physical memory that model outputs may take before they go to disk.
DEFAULT_FRACTION = 0.25
#: The budget where physical memory cannot be read.
FALLBACK_BUDGET = 2 * 2**30
#: Share of the budget one chunk of a consumer's working arrays may take (the outputs themselves, within the
#: budget, and a few temporaries of a chunk's size at a time).
CHUNK_FRACTION = 8

_budget: contextvars.ContextVar[int | None] = contextvars.ContextVar("leakaudit_memory_budget", default=None)

_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "kib": 2**10, "m": 2**20, "mb": 2**20, "mib": 2**20,
          "g": 2**30, "gb": 2**30, "gib": 2**30, "t": 2**40, "tb": 2**40, "tib": 2**40}


def default_memory_budget() -> int:
    """A quarter of this machine's physical memory, in bytes (2 GiB where it cannot be read)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return FALLBACK_BUDGET
    return int(total * DEFAULT_FRACTION) if total > 0 else FALLBACK_BUDGET


def parse_memory_size(value: Any, *, name: str = "memory_budget") -> int:
    """Bytes from an int or a string such as ``"512MB"``, ``"2 GiB"``, ``"1.5g"`` (units are powers of 1,024).

    Raises
    ------
    InvalidParameterError
        Naming ``name``, for anything else or a size below one byte.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        size = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        if m is None or m.group(2).lower() not in _UNITS:
            raise InvalidParameterError(f"{name} must be a size such as 512MB, 2GB or a number of bytes; got "
                                        f"{value!r}")
        size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    else:
        raise InvalidParameterError(f"{name} must be a number of bytes or a size such as '2GB'; got "
                                    f"{type(value).__name__}")
    if size < 1:
        raise InvalidParameterError(f"{name} must be at least one byte; got {value!r}")
    return size


def memory_budget() -> int:
    """The budget in force: the innermost :func:`using_memory_budget`'s, else :func:`default_memory_budget`."""
    b = _budget.get()
    return default_memory_budget() if b is None else b


def memory_limit() -> int:
    """The most memory an array that cannot be kept on disk may take (a command's masks, seeds, per-repeat values,
    generated rows, parameters): the memory budget, or a quarter of physical memory where the budget is set lower
    to keep model outputs on disk (a one-byte budget moves outputs to disk; it does not refuse the work)."""
    return max(memory_budget(), default_memory_budget())


def check_memory(nbytes: float, what: str, *, fix: str, how: str = "", error: type[Exception] | None = None) -> None:
    """Refuse, before it is allocated, an array that cannot go to disk and would take more than :func:`memory_limit`:
    one line "``what`` about X``how``, over the memory budget of Y; ``fix``" (X and Y as
    :func:`~leakaudit._text.byte_size` writes them, "1.5 KiB" or "2.0 GiB"; ``what`` ends in its verb, "... would
    take", or a colon; ``how`` says how the estimate was made). ``error``: the exception class (default
    :class:`~leakaudit.exceptions.InvalidParameterError`)."""
    limit = memory_limit()
    if nbytes > limit:
        raise (error or InvalidParameterError)(
            f"{what} about {byte_size(nbytes)}{how}, over the memory budget of {byte_size(limit)}; {fix}")


def using_memory_budget(budget: Any) -> contextlib.AbstractContextManager[int]:
    """Set the memory budget (bytes, or a size such as ``"2GB"``; None keeps the one in force) inside a block.

    ``leakaudit audit`` runs its stages inside one, from ``--memory-budget``.
    """
    return using_budget(_budget, budget, parse_memory_size, memory_budget)


def output_array(shape: tuple[int, ...], dtype: Any = np.float64, *, budget: int | None = None,
                 directory: Any = None) -> np.ndarray:
    """An uninitialised array: in memory if it fits ``budget`` bytes, else disk-backed.

    Parameters
    ----------
    shape : tuple of int
    dtype : numpy dtype, default=float64
    budget : int, optional
        Bytes the array may take in memory; default :func:`memory_budget`.
    directory : path-like, optional
        Where the disk-backed file is made (an engine's cache folder); default the system's temporary folder.

    Returns
    -------
    ndarray, or numpy.memmap over an unnamed temporary file that is removed when the array is freed.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes <= (memory_budget() if budget is None else int(budget)) or nbytes == 0:
        return np.empty(shape, dtype=dtype)
    # TemporaryFile has no name on POSIX (O_TMPFILE or unlinked at once): the mapping keeps the data until the
    # array is freed, and the operating system reclaims it then, or when the process ends however it ends.
    where = tempfile.gettempdir() if directory is None else os.fspath(directory)
    with writing(where, f"a temporary file of {nbytes:,} bytes (model outputs past the memory budget) in"):
        fh = tempfile.TemporaryFile(dir=where)  # noqa: SIM115 (outlives this call)
        try:
            _reserve(fh.fileno(), nbytes)
        except BaseException:
            fh.close()
            raise
    arr = np.memmap(fh, dtype=dtype, mode="w+", shape=shape)
    arr._spill_file = fh  # closed with the array (needed where the file's handle must outlive this call)
    return arr


def _reserve(fd: int, nbytes: int) -> None:
    """Reserve the file's blocks now, so that a full disk is an OSError here and not a SIGBUS (a crash) when a
    page of the mapping is first written. Skipped where the platform or file system cannot reserve them."""
    import errno

    if not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, nbytes)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


def is_disk_backed(arr: Any) -> bool:
    """Whether ``arr`` (or the array it is a view of) is a disk-backed :class:`numpy.memmap`."""
    return isinstance(arr, np.memmap) and getattr(arr, "_mmap", None) is not None


def chunk_length(total: int, item_bytes: int, *, budget: int | None = None) -> int:
    """How many of ``total`` items (models) of ``item_bytes`` each one chunk holds: its share of the budget
    (``budget / CHUNK_FRACTION``), at least one item and at most ``total``."""
    share = (memory_budget() if budget is None else int(budget)) // CHUNK_FRACTION
    return int(max(1, min(max(1, total), share // max(1, int(item_bytes)))))

"""In-process cache of parsed data files (keyed by file identity, so a replaced file is re-read)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Hashable

import pandas as pd

from ..exceptions import DataFileError
from ._files import file_identity

__all__ = ["cached_parse", "clear_cache", "read_csv_file"]

_cache: dict[Hashable, Any] = {}
_lock = threading.Lock()


def cached_parse(key: Hashable, paths: tuple[Path, ...], parse: Callable[[], Any]) -> Any:
    """``parse()`` once per (key, identity of ``paths``) per process.

    Callers must treat the returned object as read-only (loaders hand out copies).
    """
    full = (key, tuple(file_identity(p) for p in paths))
    with _lock:
        if full in _cache:
            return _cache[full]
    value = parse()
    with _lock:
        _cache[full] = value
    return value


def read_csv_file(path, **kw) -> pd.DataFrame:
    """:func:`pandas.read_csv` of a data file; a parse error becomes a DataFileError naming it."""
    try:
        return pd.read_csv(path, **kw)
    except Exception as exc:  # a checksummed file never gets here
        raise DataFileError(f"could not parse {path}: {exc}") from None


def clear_cache() -> None:
    """Forget every parsed file (frees memory; the next load parses again)."""
    with _lock:
        _cache.clear()

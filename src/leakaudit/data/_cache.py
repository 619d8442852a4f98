"""In-process cache of parsed data files (keyed by file identity, so a replaced file is re-read)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Hashable

__all__ = ["cached_parse", "clear_cache"]

_cache: dict[Hashable, Any] = {}
_lock = threading.Lock()


def _identity(paths: tuple[Path, ...]) -> tuple:
    out = []
    for p in paths:
        st = p.stat()
        out.append((str(p.resolve()), st.st_size, st.st_mtime_ns))
    return tuple(out)


def cached_parse(key: Hashable, paths: tuple[Path, ...], parse: Callable[[], Any]) -> Any:
    """``parse()`` once per (key, identity of ``paths``) per process.

    Callers must treat the returned object as read-only (loaders hand out copies).
    """
    full = (key, _identity(paths))
    with _lock:
        if full in _cache:
            return _cache[full]
    value = parse()
    with _lock:
        _cache[full] = value
    return value


def clear_cache() -> None:
    """Forget every parsed file (frees memory; the next load parses again)."""
    with _lock:
        _cache.clear()

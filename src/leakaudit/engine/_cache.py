"""The on-disk chunk cache: one ``.npz`` per chunk, written atomically, checksummed.

Layout: ``<cache_dir>/v<CACHE_FORMAT>/<key[:2]>/<key>.npz``. Each entry holds
the payload arrays (names prefixed ``p__``), the entry's key (``__key__``) and
the SHA-256 of key and payload (``__checksum__``). Entries are written to a
temporary file in the same directory, flushed and fsynced, then moved into place
with :func:`os.replace`, so a reader (or a concurrent run) sees either no entry
or a complete one, and a killed run leaves at most a stray ``*.tmp`` file. A write that fails (a full disk, a
quota) removes its temporary file and raises one :class:`~leakaudit.exceptions.OutputWriteError` naming the entry.
An entry that fails to load or whose checksum does not match is deleted, a
:class:`CacheWarning` is emitted, and the chunk is recomputed.

Nothing is ever unpickled: entries are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Mapping

import numpy as np

from .._results import writing
from ..exceptions import InvalidParameterError, UnsupportedError
from ._fingerprint import CACHE_FORMAT

__all__ = ["ChunkCache", "CacheWarning", "payload_checksum"]

_PREFIX = "p__"


class CacheWarning(UserWarning):
    """A cache entry was corrupt or unreadable; it was deleted and will be recomputed."""


def payload_checksum(key: str, payload: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over the key and every payload array's name, dtype, shape and bytes."""
    h = hashlib.sha256(key.encode())
    for name in sorted(payload):
        a = np.ascontiguousarray(payload[name])
        h.update(f"|{name}|{a.dtype.str}|{a.shape}|".encode())
        if a.size:
            h.update(memoryview(a).cast("B"))
    return h.hexdigest()


class ChunkCache:
    """A directory of checksummed ``.npz`` chunk entries.

    Parameters
    ----------
    root : path-like
        The cache directory (created if missing). Several runs, in several
        processes, may share it.
    """

    def __init__(self, root: str | os.PathLike):
        try:
            self.root = Path(root).expanduser()
            self.dir = self.root / f"v{CACHE_FORMAT}"
            self.dir.mkdir(parents=True, exist_ok=True)
        except (OSError, TypeError) as exc:
            raise InvalidParameterError(f"cache_dir {root} cannot be used as a directory: {exc}") from None

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.npz"

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()

    def entries(self) -> list[Path]:
        """Paths of all complete entries."""
        return sorted(self.dir.glob("*/*.npz"))

    # -- reading ---------------------------------------------------------------
    def read(self, key: str) -> tuple[dict[str, np.ndarray] | None, bool]:
        """Load an entry.

        Returns
        -------
        payload : dict of arrays, or None when the entry is missing or corrupt
        corrupt : bool
            True when an entry existed but was unreadable or failed its
            checksum; it has been deleted and a :class:`CacheWarning` emitted.
        """
        path = self.path(key)
        if not path.is_file():
            return None, False
        try:
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                stored_key = str(z["__key__"][()])
                stored_sum = str(z["__checksum__"][()])
                payload = {n[len(_PREFIX):]: np.array(z[n]) for n in names if n.startswith(_PREFIX)}
            problem = None
            if stored_key != key:
                problem = f"it holds key {stored_key[:12]}..."
            elif payload_checksum(key, payload) != stored_sum:
                problem = "its checksum does not match its contents"
        except FileNotFoundError:
            return None, False  # removed by a concurrent run between the check and the read
        except Exception as exc:  # noqa: BLE001 - any failure to parse means a corrupt entry
            problem = f"it cannot be read ({type(exc).__name__}: {exc})"
        if problem is None:
            return payload, False
        warnings.warn(f"cache entry {path} is corrupt ({problem}); deleted, recomputing", CacheWarning,
                      stacklevel=3)
        self._remove(path)
        return None, True

    # -- writing ---------------------------------------------------------------
    def write(self, key: str, payload: Mapping[str, np.ndarray]) -> Path:
        """Write an entry atomically (temp file in the same dir, fsync, :func:`os.replace`)."""
        arrays: dict[str, np.ndarray] = {}
        for name, a in payload.items():
            a = np.asarray(a)
            if a.dtype.kind == "O":
                raise UnsupportedError(f"cache payload {name!r} holds Python objects; only numeric arrays are stored")
            arrays[_PREFIX + name] = a
        arrays["__key__"] = np.array(key)
        arrays["__checksum__"] = np.array(payload_checksum(key, {k[len(_PREFIX):]: v for k, v in arrays.items()
                                                                if k.startswith(_PREFIX)}))
        path = self.path(key)
        with writing(path, "cache entry"):  # a full disk: one line naming the entry, no partial entry left
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
            try:
                # the archive is built in memory, then written: Ctrl-C inside np.savez (which leaves its zip file
                # unclosed) must not meet a closed file object later, which replaced the KeyboardInterrupt with a
                # "seek of closed file" traceback
                with os.fdopen(fd, "wb") as f:
                    buf = io.BytesIO()
                    np.savez(buf, allow_pickle=False, **arrays)
                    f.write(buf.getbuffer())
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                self._remove(Path(tmp))
                raise
        _fsync_dir(path.parent)
        return path

    def remove_stale_temp(self, older_than: float = 24 * 3600.0) -> int:
        """Delete ``*.tmp`` files left by killed runs, older than ``older_than`` seconds."""
        now, n = time.time(), 0
        for p in self.dir.glob("*/.*.tmp"):
            try:
                if now - p.stat().st_mtime > older_than:
                    p.unlink()
                    n += 1
            except FileNotFoundError:
                pass
        return n

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _fsync_dir(d: Path) -> None:
    """Make the rename durable (best effort; not supported on every platform)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

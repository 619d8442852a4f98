"""Fingerprints for the engine's cache keys.

A chunk's key is the SHA-256 of a canonical JSON document naming everything
that determines its outputs: the learner (class and ``get_params(deep=False)``, the versions
of the packages defining it and, for leakaudit, a digest of its training code),
the training data (bytes of X and y), the number of classes, the query rows,
and, for each model of the chunk, its index subset and its seed.

A leakaudit learner's ``device`` enters as the kind of device it resolves to on this machine: "cuda" for any
CUDA device (which of several GPUs does not change the arithmetic), nothing for the CPU.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import math
import numbers
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["CACHE_FORMAT", "Unfingerprintable", "array_fingerprint", "learner_fingerprint", "chunk_key",
           "subsets_fingerprint"]

#: Bumped whenever the layout or meaning of cache entries changes (old entries then miss).
CACHE_FORMAT = 1


#: Parameters that change how fast models train, never which models come out; left out of keys.
IGNORED_PARAMS = frozenset({"n_jobs", "verbose"})


class Unfingerprintable(Exception):
    """A learner parameter whose value cannot be turned into a stable fingerprint."""


def _update(h, a: np.ndarray) -> None:
    a = np.ascontiguousarray(a)
    h.update(f"{a.dtype.str}|{a.shape}|".encode())
    h.update(memoryview(a).cast("B") if a.size else b"")


def array_fingerprint(a: Any) -> str:
    """SHA-256 of an array's dtype, shape and bytes (C order), as hex.

    A SciPy sparse matrix is fingerprinted as CSR in canonical form (sorted column indices, duplicates
    summed): its shape and the bytes of ``data``, ``indices`` and ``indptr`` (indices as int64). Two sparse
    matrices with the same entries therefore share a fingerprint whatever their format or index dtype, and
    never share one with a dense array.
    """
    h = hashlib.sha256()
    if sp.issparse(a):
        m = sp.csr_matrix(a)
        if not m.has_canonical_format:
            m = m.copy()  # the caller's matrix is left as it was
            m.sum_duplicates()
        h.update(f"csr|{m.shape}|".encode())
        _update(h, m.data)
        _update(h, m.indices.astype(np.int64, copy=False))
        _update(h, m.indptr.astype(np.int64, copy=False))
    else:
        _update(h, a)
    return h.hexdigest()


def _is_frame(value: Any) -> bool:
    mod = type(value).__module__ or ""
    return mod.startswith("pandas") and type(value).__name__ in ("DataFrame", "Series")


def frame_fingerprint(frame) -> str:
    """SHA-256 of a pandas DataFrame or Series: its values and index (``pd.util.hash_pandas_object``),
    column names and dtypes."""
    import pandas as pd

    h = hashlib.sha256()
    cols = list(frame.columns) if hasattr(frame, "columns") else [frame.name]
    dtypes = list(frame.dtypes) if hasattr(frame, "columns") else [frame.dtype]
    h.update(repr([(str(c), str(d)) for c, d in zip(cols, dtypes)]).encode())
    h.update(f"|{frame.shape}|".encode())
    rows = pd.util.hash_pandas_object(frame, index=True).to_numpy()
    h.update(memoryview(np.ascontiguousarray(rows)).cast("B") if rows.size else b"")
    return h.hexdigest()


def subsets_fingerprint(subsets: Sequence[np.ndarray]) -> str:
    """SHA-256 of a list of index arrays (each as int64 with its length)."""
    h = hashlib.sha256()
    for s in subsets:
        s = np.ascontiguousarray(s, dtype=np.int64)
        h.update(f"{s.size}:".encode())
        h.update(memoryview(s).cast("B") if s.size else b"")
    return h.hexdigest()


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def _canonical(value: Any, path: str) -> Any:
    """A JSON-able, order-stable description of a parameter value."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return {"__enum__": _qualname(type(value)), "name": value.name}
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        return {"__float__": repr(v)} if not math.isfinite(v) else v
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return {"__list__": [_canonical(v, f"{path}[{i}]") for i, v in enumerate(value.tolist())]}
        return {"__ndarray__": array_fingerprint(value)}
    if _is_frame(value):  # a table (e.g. the raw columns a skops Pipeline target reads): content, names, dtypes
        return {"__frame__": frame_fingerprint(value)}
    if isinstance(value, (list, tuple)):
        return {"__" + type(value).__name__ + "__": [_canonical(v, f"{path}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, Mapping):
        items = {}
        for k, v in value.items():
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                raise Unfingerprintable(f"{path} has a dict key of type {type(k).__name__}")
            items[str(k)] = _canonical(v, f"{path}[{k!r}]")
        return {"__dict__": dict(sorted(items.items()))}
    if isinstance(value, (np.random.Generator, np.random.RandomState, np.random.SeedSequence)):
        raise Unfingerprintable(f"{path} is a random generator whose state changes as it is used; pass an int seed")
    if hasattr(value, "get_params") and callable(value.get_params):
        try:
            params = value.get_params(deep=False)
        except TypeError:
            params = value.get_params()
        ours = _qualname(type(value)).startswith("leakaudit.")
        return {"__estimator__": _qualname(type(value)),
                "params": {k: (_device_doc(v) if ours and k == "device" else _canonical(v, f"{path}.{k}"))
                           for k, v in sorted(params.items())
                           if k not in IGNORED_PARAMS and not (ours and k == "device" and _device_doc(v) is None)}}
    if isinstance(value, type) or callable(value):
        name = _qualname(value)
        if "<lambda>" in name or "<locals>" in name:
            raise Unfingerprintable(f"{path} is a lambda or local function ({name}); use a module-level function")
        return {"__callable__": name}
    raise Unfingerprintable(f"{path} has a value of type {type(value).__name__} that cannot be fingerprinted")


def _device_doc(device: Any) -> str | None:
    """A leakaudit learner's ``device`` in a key: None (left out) for the CPU or for "the wrapped learner's" (None),
    "cuda" for a CUDA device; resolved on this machine ("auto")."""
    from ..learners import device_kind

    if device is None:
        return None
    kind = device_kind(device)
    return None if kind == "cpu" else kind


def _packages(doc: Any, out: set[str]) -> set[str]:
    """Top-level packages of every class or callable named in a canonical document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("__estimator__", "__callable__", "__enum__") and isinstance(v, str):
                out.add(v.split(".", 1)[0])
            else:
                _packages(v, out)
    elif isinstance(doc, list):
        for v in doc:
            _packages(v, out)
    return out


@functools.lru_cache(maxsize=1)
def training_code_digest() -> str:
    """SHA-256 (first 16 hex digits) of leakaudit's training code: every ``.py`` and ``.c`` file of
    ``leakaudit.learners`` and of ``leakaudit.audit.inputs.target`` (which wraps user estimators). The package's version
    alone does not change while it is developed, so without this a changed learner would reuse the outputs its
    older code cached."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent  # the leakaudit package
    learners = root / "learners"
    files = sorted([*learners.glob("*.py"), *learners.glob("*.c"), root / "audit" / "inputs" / "target.py"])
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def learner_fingerprint(learner: Any) -> dict:
    """Canonical description of a learner: its class, its hyperparameters, and the
    versions of the packages that define it (so upgrading leakaudit or
    scikit-learn does not reuse entries computed by older code); for leakaudit also
    :func:`training_code_digest` (a changed learner in a checkout does not either).

    Raises
    ------
    Unfingerprintable
        When a hyperparameter (or a nested one) has no stable description.
    """
    doc = _canonical(learner, "learner")
    versions = {}
    for pkg in sorted(_packages(doc, set())):
        mod = sys.modules.get(pkg)
        versions[pkg] = str(getattr(mod, "__version__", "unknown"))
    if "leakaudit" in versions:
        versions["leakaudit"] += f"+{training_code_digest()}"
    return {"learner": doc, "versions": versions}


def canonical_json(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=True)


def chunk_key(*, kind: str, learner_fp: dict, data_fp: str, query_fp: str | None, n_classes: int | None,
              subsets_fp: str, seeds: Sequence[int]) -> str:
    """SHA-256 (hex) naming one chunk's cache entry."""
    doc = {
        "format": CACHE_FORMAT,
        "kind": kind,
        "learner": learner_fp,
        "data": data_fp,
        "query": query_fp,
        "n_classes": n_classes,
        "subsets": subsets_fp,
        "seeds": [int(s) for s in seeds],
    }
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()

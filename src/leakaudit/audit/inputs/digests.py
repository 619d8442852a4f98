"""Digests of what an audit is given in memory: a table, an array, a list of texts, a model.

A file is identified by the SHA-256 of its bytes. An object in memory has no bytes of its own, so the evidence record
(:mod:`leakaudit.audit.result.evidence`) identifies it by the SHA-256 of a *canonical form*: bytes that depend on its
values alone (never on memory addresses, the time, or how pandas hashes), so that whoever holds the same table or model
recomputes the same digest with the function named here and compares it with the record's ``sha256``.

Tables (:func:`frame_digest`, form ``leakaudit-frame-1``): the SHA-256 of

1. a header line: the JSON text (ASCII, no spaces) of ``{"form": "leakaudit-frame-1", "shape": [n_rows,
   n_columns], "columns": [[NAME, STORAGE], ...]}`` and a newline, NAME being the column's name as a value token's
   text (below: ``"s:age"``), STORAGE how its values are written;
2. then every column's values, in column order, top to bottom:

   * a column of a numpy bool, integer, float, complex, datetime64 or timedelta64 dtype: STORAGE is numpy's
     little-endian type string (``"<f8"``, ``"<i8"``, ``"|b1"``, ``"<M8[ns]"``) and the values are their bytes in
     that type (every NaN written as numpy's ``nan``; ``-0.0`` stays apart from ``0.0``);
   * a column of any other dtype (object, pandas' string and str, category, the nullable Int64, Float64 and boolean,
     timezone-aware datetimes): STORAGE is ``"values"`` and each value is a token, its text's length in UTF-8 bytes
     (8 bytes, little-endian) then that text: ``-:`` for a missing value (None, NaN, ``pd.NA``, NaT), ``b:True`` or
     ``b:False``, ``i:`` and the decimal digits of an integer, ``f:`` and Python's ``repr`` of a float (the shortest
     text that reads back to the same float), ``s:`` and a string, ``y:`` and the hexadecimal of bytes, else ``o:``,
     the type's module and name, ``:`` and ``str(value)``.

   So the index (row labels) is not part of it (the audit reads the rows in order); a column of strings gives the
   same digest whether pandas holds it as object, string or str (pandas 3 reads text as str where pandas 2 read
   object); a categorical column is its values (not its codes or its list of categories); an int64 column and an
   Int64 column of the same numbers differ (bytes against tokens).

Arrays and lists of texts (:func:`array_digest`, form ``leakaudit-array-1``): the SHA-256 of the header line
``{"form": "leakaudit-array-1", "shape": [...], "storage": STORAGE}`` and the values of ``numpy.asarray(a)`` in C
order, written as a table's column is (bytes for numbers, tokens for strings and objects): a list of texts gives the
same digest as an array of them.

Models (:func:`model_digest`):

* a ``torch.nn.Module`` (form ``safetensors``): the SHA-256 of ``safetensors.torch.save`` of its ``state_dict``,
  weights only, each tensor detached, on the CPU and contiguous (tensors that share memory, tied weights, copied
  apart: safetensors refuses to write them shared); for a state dict without shared tensors it is the SHA-256 of the
  file ``safetensors.torch.save_file(model.state_dict(), path)`` writes. It needs safetensors (``pip install
  'leakaudit[lm]'``); a model whose weights take more than 2 GiB is not fingerprinted (its serialisation would take
  as much memory again);
* an XGBoost, LightGBM or CatBoost model (forms ``xgboost-json``, ``lightgbm-text``, ``catboost-json``): the SHA-256
  of the library's own serialisation (``Booster.save_raw("json")``, ``Booster.model_to_string()``, CatBoost's JSON
  with its keys sorted);
* any other model (a scikit-learn estimator or Pipeline, the demo's network; form ``skops-canonical-1``): its
  ``skops.io.dumps`` (never pickle). The zip that returns names each array after its memory address and stamps
  each member with the time, so its bytes differ at every call; the digest is of its contents made canonical: the
  SHA-256 of ``skops-canonical-1`` and a newline, then ``schema.json`` with every object id (``__id__``, and the
  array file named after it) renumbered 0, 1, ... in order of first appearance (depth first, keys in the file's
  order) and every set's members sorted, written as JSON with sorted keys, no spaces, ASCII, and a newline, then
  every other member of the zip in order of its new name: the name, the length of its bytes (8 bytes,
  little-endian) and the bytes. It depends on the skops and numpy versions (the evidence record's environment names
  them). skops records a function the model holds by its module and name, not its code; an attribute that holds a
  memory address (scikit-learn's CountVectorizer keeps ``_stop_words_id``, the ``id`` of its stop-word list) makes
  the digest differ from one process to the next, though never within one.

Why not the obvious alternatives: ``pd.util.hash_pandas_object`` is a 64-bit hash that is not stable across pandas
versions for every dtype; a CSV text loses a float's last bits unless formatted with care and writes a missing value
and an empty string alike; Arrow IPC embeds pandas' and pyarrow's metadata (their versions among it) and needs
pyarrow; pickle is never used. Bytes of fixed-width numbers and typed text tokens depend on the values alone.
"""

from __future__ import annotations

import hashlib
import io
import json
import numbers
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..._extras import require
from ..._validation import clip
from ...exceptions import InvalidParameterError, UnsupportedError

__all__ = ["frame_digest", "array_digest", "model_digest", "memory_entry", "FRAME_FORM", "ARRAY_FORM",
           "SKOPS_FORM", "SAFETENSORS_FORM"]

FRAME_FORM = "leakaudit-frame-1"
ARRAY_FORM = "leakaudit-array-1"
SKOPS_FORM = "skops-canonical-1"
SAFETENSORS_FORM = "safetensors"

#: a torch model whose weights take more bytes than this is not fingerprinted: safetensors serialises in memory
_MAX_TENSOR_BYTES = 2 ** 31

#: numpy dtype kinds written as bytes: bool, signed and unsigned integers, floats, complex, datetime64, timedelta64
_FIXED_KINDS = "biufcmM"


def _header(fields: dict) -> bytes:
    return json.dumps(fields, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def _value_text(v: Any) -> str:
    """A value's token text (``-:``, ``b:``, ``i:``, ``f:``, ``s:``, ``y:`` or ``o:``; the module docstring)."""
    if type(v) is str:  # the common case first
        return f"s:{v}"
    if v is None or v is pd.NA or v is pd.NaT:
        return "-:"
    if isinstance(v, (bool, np.bool_)):
        return f"b:{bool(v)}"
    if isinstance(v, numbers.Integral):
        return f"i:{int(v)}"
    if isinstance(v, numbers.Real):
        f = float(v)
        return "-:" if f != f else f"f:{f!r}"
    if isinstance(v, str):
        return f"s:{v}"
    if isinstance(v, bytes):
        return f"y:{v.hex()}"
    try:
        if pd.isna(v) is True:  # np.datetime64("NaT"), Decimal("NaN")
            return "-:"
    except (TypeError, ValueError):
        pass
    try:
        text = str(v)
    except Exception as exc:  # noqa: BLE001 - an object's own __str__ may raise anything
        raise UnsupportedError(f"a value of type {type(v).__name__} has no text ({type(exc).__name__})") from None
    return f"o:{type(v).__module__}.{type(v).__qualname__}:{text}"


def _tokens(values: Iterable) -> Iterable[bytes]:
    """The values' tokens, joined in blocks of at most 65,536 (one hash update a block)."""
    block = []
    for v in values:
        text = _value_text(v).encode("utf-8", "surrogatepass")
        block.append(len(text).to_bytes(8, "little"))
        block.append(text)
        if len(block) >= 131072:
            yield b"".join(block)
            block = []
    if block:
        yield b"".join(block)


def _storage(dtype: Any) -> np.dtype | None:
    """The little-endian numpy type a column or array of ``dtype`` is written in; None: written as tokens."""
    if isinstance(dtype, np.dtype) and dtype.kind in _FIXED_KINDS:
        return dtype.newbyteorder("<")
    return None


def _fixed_bytes(values: np.ndarray, storage: np.dtype) -> bytes:
    a = np.ascontiguousarray(values, dtype=storage)
    if storage.kind in "fc":
        nan = np.isnan(a)
        if nan.any():
            a = a.copy()
            a[nan] = np.nan
    return a.tobytes()


def _update_values(h, values: np.ndarray, storage: np.dtype | None) -> None:
    if storage is not None:
        h.update(_fixed_bytes(values, storage))
    else:
        for block in _tokens(values):
            h.update(block)


def frame_digest(frame: pd.DataFrame) -> str:
    """SHA-256 (hex) of a table's canonical form ``leakaudit-frame-1``: what the evidence record holds for a
    DataFrame given in memory (members, non-members, population).

    The form, exactly: the module docstring of :mod:`leakaudit.audit.inputs.digests`. In short: the shape, each column's
    name and storage, then each column's values (numbers as little-endian bytes, everything else as typed text
    tokens); the index is not part of it.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as given to :func:`leakaudit.audit`.

    Returns
    -------
    str
        64 hexadecimal digits; equal to the record's ``sha256`` when the table is the one audited.

    Examples
    --------
    >>> import pandas as pd
    >>> from leakaudit.audit.result.evidence import frame_digest
    >>> a = frame_digest(pd.DataFrame({"age": [30, 40], "income": ["<=50K", ">50K"]}))
    >>> a == frame_digest(pd.DataFrame({"age": [30, 41], "income": ["<=50K", ">50K"]}))
    False
    """
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if not isinstance(frame, pd.DataFrame):
        raise InvalidParameterError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    storages = [_storage(dtype) for dtype in frame.dtypes]
    h = hashlib.sha256(_header({"form": FRAME_FORM, "shape": list(frame.shape),
                                "columns": [[_value_text(name), s.str if s is not None else "values"]
                                            for name, s in zip(frame.columns, storages)]}))
    for (_, column), storage in zip(frame.items(), storages):  # items(): one pass, duplicate names kept apart
        _update_values(h, column.to_numpy() if storage is not None else column.to_numpy(dtype=object), storage)
    return h.hexdigest()


def array_digest(array: Any) -> str:
    """SHA-256 (hex) of an array's canonical form ``leakaudit-array-1``: what the evidence record holds for an array
    or a list given in memory (predictions, a language model's texts).

    ``numpy.asarray(array)``'s shape and storage, then its values in C order: numbers as little-endian bytes, strings
    and objects as typed text tokens (so a list of texts and an array of them give the same digest). The form,
    exactly: the module docstring of :mod:`leakaudit.audit.inputs.digests`.

    Parameters
    ----------
    array : array-like

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    try:
        a = np.asarray(array)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise UnsupportedError(f"numpy cannot read it as one array ({clip(str(exc), 120)})") from None
    storage = _storage(a.dtype)
    h = hashlib.sha256(_header({"form": ARRAY_FORM, "shape": list(a.shape),
                                "storage": storage.str if storage is not None else "values"}))
    _update_values(h, a.ravel(order="C") if storage is not None else a.astype(object).ravel(order="C"), storage)
    return h.hexdigest()


def model_digest(model: Any) -> str:
    """SHA-256 (hex) of a model's serialisation: a torch module's ``state_dict`` through safetensors (form
    ``safetensors``), any other model through ``skops.io.dumps`` made canonical (form ``skops-canonical-1``; the
    module docstring of :mod:`leakaudit.audit.inputs.digests` says how). Never pickle.

    Parameters
    ----------
    model : fitted scikit-learn estimator or Pipeline, torch.nn.Module, or another model object

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    UnsupportedError
        The model cannot be serialised (the message says why: skops refuses one of its objects, safetensors is not
        installed, its weights are too large to serialise in memory).
    """
    return _model_form_and_digest(model)[1]


def _model_form_and_digest(model: Any) -> tuple[str, str]:
    from ...learners import is_torch_module

    if is_torch_module(model):
        return SAFETENSORS_FORM, _torch_digest(model)
    booster = getattr(model, "booster_", model)  # leakaudit's XGBoost / LightGBM model, or the library's own objects
    root = type(booster).__module__.split(".")[0]
    if root == "xgboost":
        booster = booster.get_booster() if hasattr(booster, "get_booster") else booster
        return "xgboost-json", hashlib.sha256(bytes(booster.save_raw("json"))).hexdigest()
    if root == "lightgbm":
        return "lightgbm-text", hashlib.sha256(booster.model_to_string().encode("utf-8")).hexdigest()
    if root == "catboost":
        from ...learners.catboost import catboost_json

        blob = json.dumps(catboost_json(booster), sort_keys=True).encode("utf-8")
        return "catboost-json", hashlib.sha256(blob).hexdigest()
    return SKOPS_FORM, _skops_digest(model)


def _torch_digest(module: Any) -> str:
    """The SHA-256 of ``safetensors.torch.save`` of the module's state_dict (weights only)."""
    import torch

    st = require("safetensors.torch", "fingerprinting a torch model")
    state = module.state_dict()
    odd = next((k for k, v in state.items() if not isinstance(v, torch.Tensor)), None)
    if odd is not None:
        raise UnsupportedError(f"its state_dict holds {odd!r}, a {type(state[odd]).__name__}, not a tensor")
    size = sum(v.numel() * v.element_size() for v in state.values())
    if size > _MAX_TENSOR_BYTES:
        raise UnsupportedError(f"its weights take {size / 2 ** 30:.1f} GiB, and serialising them takes as much memory "
                               "again; save it to files and audit those (the record fingerprints every file)")
    tensors = {k: v.detach().to("cpu").contiguous() for k, v in state.items()}
    try:
        blob = st.save(tensors)
    except (RuntimeError, ValueError):  # tensors sharing memory (tied weights): written apart
        blob = st.save({k: v.clone() for k, v in tensors.items()})
    return hashlib.sha256(blob).hexdigest()


def _skops_digest(model: Any) -> str:
    """The SHA-256 of ``skops.io.dumps(model)``'s contents, made canonical (the module docstring)."""
    import skops.io as sio

    try:
        blob = sio.dumps(model)
    except Exception as exc:  # noqa: BLE001 - skops walks the model's own objects, whose code may raise anything
        raise UnsupportedError(f"skops cannot serialise it ({type(exc).__name__}: {clip(str(exc), 160)})") from None
    h = hashlib.sha256(SKOPS_FORM.encode("ascii") + b"\n")
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        ids: dict[int, int] = {}
        renamed: dict[str, str] = {}
        schema = _canonical_schema(json.loads(z.read("schema.json")), ids, renamed)
        h.update(json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n")
        members = sorted((renamed.get(n, n), n) for n in z.namelist() if n != "schema.json")
        for new, old in members:
            data = z.read(old)
            h.update(new.encode("utf-8") + b"\n" + len(data).to_bytes(8, "little"))
            h.update(data)
    return h.hexdigest()


def _id_free(node: Any) -> str:
    """A schema node as sorted JSON without its object ids: the order of a set's members."""
    def strip(n):
        if isinstance(n, dict):
            return {k: strip(v) for k, v in n.items() if k not in ("__id__", "file")}
        return [strip(v) for v in n] if isinstance(n, list) else n

    return json.dumps(strip(node), sort_keys=True)


def _canonical_schema(node: Any, ids: dict[int, int], renamed: dict[str, str]) -> Any:
    """skops' schema with object ids renumbered in order of first appearance (the array files renamed to match:
    ``renamed`` maps old names to new) and sets' members sorted."""
    if isinstance(node, list):
        return [_canonical_schema(v, ids, renamed) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("__loader__") == "SetNode" and isinstance(node.get("content"), list):
        node = {**node, "content": sorted(node["content"], key=_id_free)}
    out = {}
    for key, value in node.items():
        if key == "__id__" and isinstance(value, int):
            out[key] = ids.setdefault(value, len(ids))
        elif key == "file" and isinstance(value, str):
            stem, dot, suffix = value.partition(".")
            new = f"{ids.setdefault(int(stem), len(ids))}{dot}{suffix}" if stem.isdigit() else value
            renamed[value] = new
            out[key] = new
        else:
            out[key] = _canonical_schema(value, ids, renamed)
    return out


def _data_fields(obj: Any) -> dict:
    """Type, shape, dtypes, form and digest of a table, an array or a list given in memory."""
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        frame = obj.to_frame() if isinstance(obj, pd.Series) else obj
        return {"type": type(obj).__name__, "shape": list(frame.shape),
                "dtypes": [[str(c), str(t)] for c, t in zip(frame.columns, frame.dtypes)], "form": FRAME_FORM,
                "recompute": "leakaudit.audit.result.evidence.frame_digest", "sha256": frame_digest(frame)}
    sha = array_digest(obj)
    a = np.asarray(obj)
    return {"type": type(obj).__name__, "shape": list(a.shape), "dtype": str(a.dtype), "form": ARRAY_FORM,
            "recompute": "leakaudit.audit.result.evidence.array_digest", "sha256": sha}


def _model_fields(obj: Any) -> dict:
    form, sha = _model_form_and_digest(obj)
    return {"form": form, "recompute": "leakaudit.audit.result.evidence.model_digest", "sha256": sha}


def memory_entry(role: str, obj: Any) -> dict:
    """The evidence record's entry for an input given in memory.

    ``{"role", "source": "memory", "type", "form", "recompute", "sha256"}``, with ``shape`` and ``dtypes`` (a
    table: ``[[column, dtype], ...]`` as pandas names them) or ``dtype`` (an array or a list); ``type`` is a model's
    module and class. An input that cannot be fingerprinted has ``"sha256": None`` and a ``note`` saying why
    (``"not fingerprinted: ..."``). A DataFrame or Series is digested by :func:`frame_digest`, an array, list or
    tuple by :func:`array_digest`, anything else as a model by :func:`model_digest`; a transformers tokenizer is
    not fingerprinted (it has no canonical serialisation that leakaudit reads).
    """
    base = {"role": str(role), "source": "memory"}
    data = isinstance(obj, (pd.DataFrame, pd.Series, np.ndarray, list, tuple))
    if not data:
        base["type"] = f"{type(obj).__module__}.{type(obj).__qualname__}"
    if type(obj).__module__.split(".")[0] in ("transformers", "tokenizers") and not hasattr(obj, "state_dict"):
        return {**base, "sha256": None,
                "note": "not fingerprinted: a tokenizer object has no canonical serialisation that leakaudit reads "
                        "(save it with save_pretrained and audit the folder, whose files the record fingerprints)"}
    try:
        return {**base, **(_data_fields(obj) if data else _model_fields(obj))}
    except UnsupportedError as exc:
        return {**base, "type": base.get("type", type(obj).__name__), "sha256": None,
                "note": f"not fingerprinted: {exc}"}

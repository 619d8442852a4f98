"""Base for result objects: frozen, JSON round-trip, versioned, never pickled.

Results are pydantic models. Fields never change meaning; new fields are
optional. Numpy arrays and scalars are converted to lists and floats on the
way in, and NaN is kept in memory. Every JSON leakaudit writes is strict JSON
(RFC 8259, readable by JavaScript and any parser): a value that could not be
measured (NaN, +-inf) is written as ``null``; :meth:`Result.from_json` reads
``null`` back as NaN where the field is a float.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator

from ._text import escape_controls

__all__ = ["Result", "public_dir", "record_name", "record_names", "STATUSES", "STATUS_COLOURS", "to_jsonable", "to_strict_jsonable", "dumps_strict", "write_json_atomic",
           "write_text_atomic", "atomic_file", "writing", "write_problem", "check_output_file",
           "check_output_folder", "escape_controls", "spreadsheet_safe", "spreadsheet_exact"]


#: a check's status (:class:`leakaudit.audit.result.checks.Check`): shown above its threshold, shown below it, neither, or
#: not measurable; the same words on every surface
EXCEEDED, BELOW, UNDECIDED, NOT_MEASURABLE = "exceeded", "shown below", "undecided", "not measurable"
STATUSES = (EXCEEDED, BELOW, UNDECIDED, NOT_MEASURABLE)
#: each status's colour on every surface that colours it (the report, the notebook): red, green, amber, grey
STATUS_COLOURS = {EXCEEDED: "#c0392b", BELOW: "#2e7d32", UNDECIDED: "#a35f00", NOT_MEASURABLE: "#6b6b6b"}

def to_jsonable(obj: Any) -> Any:
    """Recursively turn numpy types into plain Python (lists, floats, ints)."""
    if isinstance(obj, np.ndarray):
        # numeric arrays: tolist() already gives plain Python numbers (fast path for large arrays)
        return obj.tolist() if obj.dtype.kind in "biuf" else to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, BaseModel):
        return to_jsonable(obj.model_dump())
    if isinstance(obj, Path):
        return str(obj)
    return obj


def to_strict_jsonable(obj: Any) -> Any:
    """:func:`to_jsonable`, with every non-finite float (NaN, +-inf: not measurable) turned into None."""
    return _nonfinite_to_none(to_jsonable(obj))


def _nonfinite_to_none(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _nonfinite_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nonfinite_to_none(v) for v in obj]
    return obj


def dumps_strict(data: Any, indent: int | None = 2) -> str:
    """Strict JSON text of ``data`` (numpy converted, NaN and +-inf written as null; never a bare ``NaN``)."""
    return json.dumps(to_strict_jsonable(data), indent=indent, allow_nan=False)


def _null_to_nan(value: Any, annotation: Any) -> Any:
    """Undo :func:`to_strict_jsonable` for one field: null where the annotation is a plain float becomes NaN."""
    if annotation is float:
        return float("nan") if value is None else value
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None:  # Optional[...] keeps null; a union with float (no None) wrote NaN as null
            return None if type(None) in args else (float("nan") if float in args else None)
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _null_to_nan(value, non_none[0])
        shaped = [a for a in non_none if isinstance(value, (list, dict)) and typing.get_origin(a) in (list, tuple, dict)]
        return _null_to_nan(value, shaped[0]) if shaped else value
    if value is None:
        return None
    if origin is list and args and isinstance(value, list):
        return [_null_to_nan(v, args[0]) for v in value]
    if origin is tuple and args and isinstance(value, list):
        elem = (lambda i: args[0]) if len(args) == 2 and args[1] is Ellipsis else (lambda i: args[min(i, len(args) - 1)])
        return [_null_to_nan(v, elem(i)) for i, v in enumerate(value)]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {k: _null_to_nan(v, args[1]) for k, v in value.items()}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
        fields = annotation.model_fields
        return {k: _null_to_nan(v, fields[k].annotation) if k in fields else v for k, v in value.items()}
    return value


def public_dir(obj: BaseModel) -> list[str]:
    """What ``dir(obj)`` lists for a result: its fields (and a section's further keys), the attributes and methods its
    own classes define, and the underscore names Python lists; not pydantic's machinery (``model_dump``,
    ``model_validate``, ... and the deprecated ``dict``, ``json``, ``copy``, ``parse_obj``, ...), which keeps working
    but is left out of tab completion."""
    cls = type(obj)
    names = set(cls.model_fields) | set(obj.__pydantic_extra__ or ())
    for klass in cls.__mro__:
        if klass not in (BaseModel, object):
            names.update(n for n in vars(klass) if not n.startswith(("_", "model_")))
    return sorted(names) + [n for n in object.__dir__(obj) if n.startswith("_")]


class Result(BaseModel):
    """Base class of every result: frozen fields, ``schema_version``, JSON I/O."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=False, extra="forbid", ser_json_inf_nan="constants")
    schema_version: ClassVar[int] = 1

    @field_validator("*", mode="before")
    @classmethod
    def _numpy_to_python(cls, v: Any) -> Any:
        return to_jsonable(v)

    def __dir__(self) -> list[str]:
        return public_dir(self)

    def to_dict(self) -> dict[str, Any]:
        d = self.model_dump(mode="python")
        d["schema_version"] = self.schema_version
        d["type"] = type(self).__name__
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON (NaN and +-inf written as null; :meth:`from_json` reads them back as NaN)."""
        return dumps_strict(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str):
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict):
        """The result :meth:`to_dict` (or strict JSON's null for NaN) wrote."""
        d = dict(data)
        d.pop("schema_version", None)
        d.pop("type", None)
        return cls(**_null_to_nan(d, cls))


def write_problem(exc: OSError) -> str:
    """What an OSError says about a write, in words (a full disk, a quota, a read-only file system, ...)."""
    import errno

    words = {errno.ENOSPC: "no space left on the device", errno.EROFS: "the file system is read-only",
             errno.EFBIG: "the file is larger than the file system allows"}
    if hasattr(errno, "EDQUOT"):
        words[errno.EDQUOT] = "the disk quota is exceeded"
    return words.get(exc.errno, exc.strerror or type(exc).__name__)


@contextlib.contextmanager
def writing(path: str | Path, what: str = "") -> Iterator[None]:
    """Turn an OSError raised while writing ``path`` into one :class:`~leakaudit.exceptions.OutputWriteError`
    naming the path and the cause (``what``: what the file is, e.g. ``"cache entry"``)."""
    from .exceptions import OutputWriteError

    try:
        yield
    except OSError as exc:
        raise OutputWriteError(f"could not write {what + ' ' if what else ''}{path}: {write_problem(exc)}; it was "
                               "left as it was (no partial file)") from None


@contextlib.contextmanager
def atomic_file(path: str | Path, mode: str = "w", *, what: str = "", **open_kwargs) -> Iterator[typing.IO]:
    """A file object whose contents replace ``path`` only when the block ends without an error.

    Written to a temporary file in the same folder, flushed and fsynced, then renamed over ``path``
    (:func:`os.replace`): a reader sees the old file or the whole new one, never part of it. On any error the
    temporary file is removed; an OSError (a full disk, a quota, a read-only file system) becomes one
    :class:`~leakaudit.exceptions.OutputWriteError` naming ``path``.
    """
    import tempfile

    path = Path(path)
    with writing(path, what):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; results are meant to be read
            with os.fdopen(fd, mode, **open_kwargs) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def write_text_atomic(path: str | Path, text: str, *, what: str = "") -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_file`)."""
    with atomic_file(path, "w", what=what, encoding="utf-8") as fh:
        fh.write(text)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write strict JSON to ``path`` atomically (temporary file in the same folder, then rename).

    NaN and +-inf (what could not be measured) are written as null, never as the bare tokens ``NaN`` /
    ``Infinity`` that JavaScript and most JSON parsers refuse. A full disk is one
    :class:`~leakaudit.exceptions.OutputWriteError` naming ``path``, with nothing partial left."""
    write_text_atomic(path, dumps_strict(data))


def _check_writable(p: Path, target: Path, option: str) -> None:
    """Refuse ``target`` unless ``p``, its nearest existing ancestor, is a folder this process can write in."""
    import tempfile

    from .exceptions import InvalidParameterError

    if not p.is_dir():
        raise InvalidParameterError(f"{option} {target} cannot be created: {p} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".leakaudit-write-check-", dir=p))
    except OSError as exc:
        raise InvalidParameterError(f"{option} {target} cannot be written ({exc.strerror or exc} in {p})") from None


def check_output_file(path: str | Path | None, *, option: str = "--out") -> Path | None:
    """Refuse, before any work, an output file that cannot be written (a folder, a path through a file, no rights)."""
    from .exceptions import InvalidParameterError

    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise InvalidParameterError(f"{option} {path} is a folder; give the JSON file to write, e.g. {path}/result.json")
    p = path.parent
    while not p.exists():
        p = p.parent
    _check_writable(p, path, option)
    return path


def check_output_folder(out: Path, *, option: str = "--out") -> Path:
    """Refuse, before any work, an output folder that is a file or cannot be created or written."""
    from .exceptions import InvalidParameterError

    try:
        if out.exists() and not out.is_dir():
            raise InvalidParameterError(f"{option} {out} exists and is not a folder; give a folder to write into")
        p = out
        while not p.exists():
            p = p.parent
    except OSError as exc:  # a name too long for the file system, a loop of links
        raise InvalidParameterError(f"{option} {out} cannot be a folder: {exc.strerror or exc}") from None
    _check_writable(p, out, option)
    return out


#: a spreadsheet reads a cell starting with one of these as a formula (OWASP's list for CSV injection)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _formula_like(text: str) -> bool:
    """A spreadsheet would run ``text`` as a formula (or it is one quote short of one, so that
    :func:`spreadsheet_exact` can tell a prefix it added from a quote the value had)."""
    if text.startswith("'"):
        return _formula_like(text[1:])
    return text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text)


def spreadsheet_safe(value: Any) -> Any:
    """A text cell as records.csv writes it: control characters escaped (:func:`escape_controls`), then, if it
    starts with ``= + - @``, a tab or a carriage return and is not a plain number, a ``'`` in front (OWASP's rule
    against formula injection; a value that already starts with quotes before such a character gets one more).
    Anything but text (numbers, missing values) is returned as it is."""
    if not isinstance(value, str):
        return value
    value = escape_controls(value)
    return "'" + value if _formula_like(value) else value


def spreadsheet_exact(value: Any) -> Any:
    """The inverse of :func:`spreadsheet_safe`'s quote: a cell read back from records.csv with the ``'`` it added
    removed (escaped control characters stay escaped)."""
    if isinstance(value, str) and value.startswith("'") and _formula_like(value[1:]):
        return value[1:]
    return value


def record_name(source: str, row: Any = None, *, index: Any = None, line: Any = None) -> str:
    """How every surface names one audited record: ``"train.csv, line 250"`` (its file and the line it starts on,
    where the file's lines were counted), ``"train.csv, row 248"`` (its file and row, 1 = the first row after the
    header) or, for a table given in memory with a unique index, ``"members.loc[1234]"`` (its DataFrame index
    label, as pandas selects it)."""
    if index is not None:
        label = index.item() if hasattr(index, "item") else index  # a numpy scalar as the Python value it holds
        return f"{source}.loc[{label!r}]"
    if line is not None:
        return f"{source}, line {int(line)}"
    return f"{source}, row {int(row)}"


def record_names(records: Any) -> list[str]:
    """Each row of records.csv's table (its ``source`` and ``line``, ``row`` or ``index``) named by
    :func:`record_name`: the names results.json's lists of records hold."""
    key = "index" if "index" in records else "line" if "line" in records else "row"
    return [record_name(s, **{key: v}) for s, v in zip(records["source"], records[key])]


"""Reading the audited texts: a JSONL, CSV or Parquet file with a text column."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DataFileError, InvalidInputError

__all__ = ["read_texts", "read_text_table", "read_arrays"]


def read_text_table(path: str | Path) -> pd.DataFrame:
    """A table from ``.jsonl`` / ``.ndjson`` (one JSON object per line), ``.csv`` / ``.tsv`` or ``.parquet``."""
    from .._validation import check_linked_file

    p = Path(path)
    check_linked_file(p, what="text file")  # read_table checks the CSV and Parquet ones again: a stat, no read
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".xz", ".bz2", ".zst"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in (".jsonl", ".ndjson"):
        if not p.is_file():
            raise DataFileError(f"text file {p} does not exist" + (" (it is a directory)" if p.is_dir() else ""))
        try:
            df = pd.read_json(p, lines=True, dtype=False)
        except ValueError as exc:
            raise DataFileError(f"could not read {p} as JSON lines: {' '.join(str(exc).split())[:200]}") from None
        if df.empty:
            raise InvalidInputError(f"text file {p} holds no rows")
        return df
    from ..data import read_table

    return read_table(p, keep_default_na=False) if suffixes and suffixes[-1] in (".csv", ".tsv", ".tab", ".txt") \
        else read_table(p)


def read_texts(path: str | Path, column: str, *, frame: pd.DataFrame | None = None,
               argument: str = "--text-column") -> list[str]:
    """The texts in ``column`` of the file (or of ``frame``, already read from it or given in memory; ``path`` then
    names it in messages), checked: strings, none empty. ``argument``: how messages name the column's setting.

    Raises
    ------
    InvalidInputError
        No such column (the message lists the columns), a missing value, a value that is not text, or an empty text
        (each named by its row, 1 = the first row).
    """
    df = read_text_table(path) if frame is None else frame
    if column not in df.columns:
        cols = ", ".join(map(str, list(df.columns)[:10])) + (" ..." if len(df.columns) > 10 else "")
        raise InvalidInputError(f"{argument} {column!r} is not a column of {path} (its columns: {cols})")
    out = []
    for i, v in enumerate(df[column].tolist()):
        if not isinstance(v, str):
            missing = v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT
            what = "missing" if missing else f"a {type(v).__name__}, not text"
            raise InvalidInputError(f"{path}, row {i + 1}: {column!r} is {what}; every row needs one text")
        if not v.strip():
            raise InvalidInputError(f"{path}, row {i + 1}: {column!r} is an empty text (nothing to score); remove "
                                    "the row")
        out.append(v)
    return out


def read_arrays(path: str | Path, column: str, frame: pd.DataFrame) -> list[np.ndarray]:
    """Per-row arrays of numbers in ``column`` of ``frame`` (read from ``path``): a list in JSONL or Parquet, a JSON
    list as text in CSV. Used for per-token log-probabilities computed elsewhere (the scores-only input)."""
    if column not in frame.columns:
        raise InvalidInputError(f"--logprobs-column {column!r} is not a column of {path}")
    out = []
    for i, v in enumerate(frame[column].tolist()):
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except ValueError:
                raise InvalidInputError(f"{path}, row {i + 1}: {column!r} is not a JSON list of numbers") from None
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidInputError(f"{path}, row {i + 1}: {column!r} is not a list of numbers") from None
        if a.ndim > 1:  # lists of lists: not one value per token, and never flattened into one
            raise InvalidInputError(f"{path}, row {i + 1}: {column!r} is a nested list (shape "
                                    f"{'x'.join(map(str, a.shape))}), not a flat list of numbers (one "
                                    "log-probability per token)")
        out.append(a.reshape(-1))  # a lone number: a text of one token
    return out

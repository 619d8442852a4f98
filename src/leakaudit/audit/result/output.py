"""An audit's files: results.json, records.csv, report.html and evidence.json, written together or not at all.

They are written in a temporary folder beside ``out`` and moved in only when complete, so a failed write leaves an
existing output folder as it was, and no folder it had to create.

Every file is safe to open in the program it is meant for: records.csv's text cells that a spreadsheet would run
as a formula carry a leading ``'`` (:func:`~leakaudit._results.spreadsheet_safe`; :func:`read_records_csv` reads
the exact values back), and control or bidirectional-formatting characters in records.csv and the report are
written out as ``\\uXXXX``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from ..._results import (check_output_folder, escape_controls, spreadsheet_exact, spreadsheet_safe,
                        write_json_atomic, write_text_atomic, writing)
from ..._validation import check_linked_file, shown
from ...exceptions import DataFileError, InvalidParameterError

__all__ = ["check_out_writable", "folder_argument", "read_records_csv", "save_result", "write_audit_files",
           "write_report"]


def check_out_writable(out: Path, *, name: str = "out") -> None:
    """Refuse an output folder that cannot be written, before any work is done (``name``: the argument or flag that
    gave it, for the message)."""
    check_output_folder(out, option=name)


def folder_argument(out, name: str) -> Path:
    """``out`` as the folder it names: a non-empty str or path-like, refused otherwise; ``..`` resolved as the file
    system would (so ``a/missing/../b`` is ``a/b``, and ``a/missing`` is never created)."""
    if isinstance(out, bytes) or not isinstance(out, (str, os.PathLike)):
        raise InvalidParameterError(f"{name} must be the path of a folder (str or pathlib.Path); got "
                                    f"{type(out).__name__}")
    text = os.fspath(out)
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise InvalidParameterError(f"{name} must name a folder; got {text!r}")
    return Path(os.path.realpath(text)) if ".." in Path(text).parts else Path(text)


def save_result(result, out, *, redact: bool = False) -> Path:
    """Write ``result`` (an :class:`~leakaudit.audit.result.results.AuditResult` holding its records, as
    :func:`leakaudit.audit` returns it) into the folder ``out`` as ``leakaudit audit --out`` writes it: results.json,
    records.csv, report.html and evidence.json, together or not at all (:meth:`AuditResult.save
    <leakaudit.audit.result.results.AuditResult.save>` calls this); ``redact``: records.csv and report.html without the
    records' own values (:func:`write_audit_files`). Returns the folder written."""
    folder = folder_argument(out, "out")
    if not (hasattr(result, "to_dict") and hasattr(result, "records")):
        raise InvalidParameterError(f"result must be an AuditResult, as leakaudit.audit returns it; got "
                                    f"{type(result).__name__}")
    if result.records is None:
        raise InvalidParameterError("this result holds no per-record table (it was read from results.json "
                                    "alone); save needs the result leakaudit.audit returned")
    if not isinstance(redact, bool):
        raise InvalidParameterError(f"redact must be True or False; got {shown(redact)}")
    check_out_writable(folder)
    write_audit_files(folder, result, result.records, evidence=result.evidence, redact=redact)
    return folder


#: records.csv's name for the records table's ``record`` column (0-based, unlike the 1-based ``row`` beside it)
RECORD_KEY = "record_0based"

#: what records.csv's columns that the report computes with hold (and each ``score_ATTACK``: a number)
_RECORDS_NUMBERS = {"is_member": "0 or 1", "record": "a whole number", "risk_rank": "a number", "pdtp": "a number"}


def read_records_csv(path) -> pd.DataFrame:
    """records.csv as the audit held it: the ``'`` written before a cell a spreadsheet would run as a formula
    removed, in the header and in every text cell (control characters stay written out as ``\\uXXXX``).

    Read as a table file is (:func:`leakaudit.data.read_table`: no link to a protected file, no empty file), and
    refused in one line naming the file, the column and its line where a column the report and the plots compute
    with is missing or does not hold what an audit writes: ``is_member`` 0 or 1 and ``record`` a whole number in
    every row, ``risk_rank``, ``pdtp`` and each ``score_ATTACK`` a number or empty."""
    from ...data import read_table

    df = read_table(path)
    df.columns = [{RECORD_KEY: "record"}.get(c, c) for c in map(spreadsheet_exact, df.columns)]
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c].dtype):
            df[c] = df[c].map(spreadsheet_exact, na_action="ignore")
    missing = next((c for c in ("record", "is_member") if c not in df), None)
    if missing is not None:
        raise DataFileError(f"{path} has no {missing.replace('record', RECORD_KEY)} column: it is not the records.csv "
                            "an audit writes")
    for c in df.columns:
        want = _RECORDS_NUMBERS.get(c, "a number" if c.startswith("score_") else None)
        if want is None:
            continue
        x = pd.to_numeric(df[c], errors="coerce")
        bad = {"is_member": ~x.isin([0, 1]), "record": x % 1 != 0}.get(c, x.isna() & df[c].notna())
        if bad.any():
            i = int(bad.to_numpy().argmax())
            cell = "an empty cell" if pd.isna(df[c].iloc[i]) else shown(df[c].iloc[i])
            raise DataFileError(f"{path}, line {i + 2}, column {c}: {cell} is not {want}")
    return df


def _spreadsheet_safe(records: pd.DataFrame) -> pd.DataFrame:
    """``records`` with every text cell and column name as :func:`~leakaudit._results.spreadsheet_safe` writes it
    (numbers and missing values as they are)."""
    out = records.copy()
    for c in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[c].dtype) or pd.api.types.is_datetime64_any_dtype(out[c].dtype)):
            out[c] = out[c].map(spreadsheet_safe, na_action="ignore")
    out.columns = [spreadsheet_safe(str(c)) for c in out.columns]
    return out


def _first_missing(folder: Path) -> Path | None:
    """The outermost of ``folder`` and its parents that does not exist yet (None: ``folder`` exists)."""
    missing = None
    for p in (folder, *folder.parents):
        if p.exists():
            return missing
        missing = p
    return missing


def write_audit_files(out: Path, result, records: pd.DataFrame, *, evidence: dict | None = None,
                      redact: bool = False) -> None:
    """results.json (``result``, an :class:`~leakaudit.audit.result.results.AuditResult`), records.csv (``records``, its
    ``record`` column named ``record_0based``), report.html (rendered from them as written) and, when given,
    evidence.json (``evidence``, with the others' digests and what of them is personal data:
    :func:`~leakaudit.audit.result.evidence.with_outputs`) into ``out``; ``redact``: records.csv and report.html without
    the records' own values (results.json's ``record_columns``, and ``label``), keeping their names, scores and
    the verdict, and results.json without the text of a language model's leaked windows and extracted spans (their
    offsets, lengths and numbers kept). A fault (a full disk) is one :class:`~leakaudit.exceptions.OutputWriteError` naming ``out``, with
    nothing written and no folder left that the write made. Written in a temporary folder beside ``out``, then
    moved in."""
    with writing(out, "the audit's output folder"):
        created, tmp = _first_missing(out), None
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
            values = [c for c in records.columns if c in (result.data.record_columns or [])]
            if redact:
                records = records.drop(columns=values + [c for c in ("label",) if c in records])
            results = result.to_dict()
            if redact:  # the members' own text, left out
                for name in ("leaked_windows", "extraction"):
                    if getattr(result, name, None) is not None:
                        results[name] = getattr(result, name).without_text().to_dict()
            write_json_atomic(tmp / "results.json", results)
            with writing(tmp / "records.csv", "records"):
                safe = _spreadsheet_safe(records.rename(columns={"record": RECORD_KEY}))
                safe.to_csv(tmp / "records.csv", index=False)
            write_report(tmp, type(result), columns=[str(c) for c in records.columns])
            if evidence is not None:
                from .evidence import with_outputs

                quoted = not redact and bool((result.extraction and result.extraction.spans) or (
                    result.leaked_windows and result.leaked_windows.texts))
                write_json_atomic(tmp / "evidence.json", with_outputs(evidence, tmp, redacted=redact, values=values,
                                                                      quoted=quoted))
            out.mkdir(parents=True, exist_ok=True)
            for f in tmp.iterdir():
                os.replace(f, out / f.name)
        except BaseException:
            if created is not None:  # the folders this write made, and only those
                shutil.rmtree(created, ignore_errors=True)
            raise
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)


def _read_json(path: Path):
    """The data of the JSON file ``path``, refused in one line naming it when it is missing, a link to a protected
    file, not UTF-8, or not JSON (nested deeper than the parser reads, an integer of more than 4,300 digits)."""
    if not path.is_file():
        raise DataFileError(f"{path} " + ("is a folder" if path.is_dir() else "does not exist")
                            + ": give the folder an audit wrote (results.json, records.csv)")
    check_linked_file(path, what="results file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: JSON's errors, a codec's, a number too long
        raise DataFileError(f"{path} cannot be read as JSON: {exc}") from None


def write_report(folder: Path, result_type, *, columns: list[str] | None = None) -> None:
    """``folder/report.html`` from the results.json and records.csv (if any) written there, read back as written
    (strict JSON, the CSV's types and exact text cells: :func:`read_records_csv`) into ``result_type`` by its
    ``read`` (the report names the settings its sentences name as the audit's command line or library call gave
    them). records.csv's header writes control characters out: its columns are named as the audit named them
    (``columns``; by default those of results.json's ``record_columns`` whose written-out name they carry)."""
    from ...report import render_report

    path = folder / "records.csv"
    records = read_records_csv(path) if os.path.lexists(path) else None
    result = result_type.read(_read_json(folder / "results.json"), where=str(folder / "results.json"),
                              records=records)
    if records is not None:
        named = {escape_controls(str(c)): str(c) for c in result.data.record_columns or []}
        records.columns = columns or [named.get(c, c) for c in records.columns]
    write_text_atomic(folder / "report.html", render_report(result, records), what="report")

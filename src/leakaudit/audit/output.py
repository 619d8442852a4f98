"""An audit's files: results.json, records.csv, report.html and evidence.json, written together or not at all.

They are written in a temporary folder beside ``out`` and moved in only when complete, so a failed write leaves an
existing output folder as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from .._results import check_output_folder, write_json_atomic, write_text_atomic

__all__ = ["check_out_writable", "write_audit_files"]


def check_out_writable(out: Path, *, name: str = "out") -> None:
    """Refuse an output folder that cannot be written, before any work is done (``name``: the argument or flag that
    gave it, for the message)."""
    check_output_folder(out, option=name)


def write_audit_files(out: Path, result, records: pd.DataFrame, *, evidence: dict | None = None) -> None:
    """results.json (``result``, an :class:`~leakaudit.audit.results.AuditResult`), records.csv (``records``),
    report.html (rendered from them as written) and, when given, evidence.json (``evidence``) into ``out``."""
    from functools import partial

    from .config import in_words

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write_json_atomic(tmp / "results.json", result.to_dict())
        records.to_csv(tmp / "records.csv", index=False)
        if evidence is not None:
            write_json_atomic(tmp / "evidence.json", evidence)
        # a command-line audit names its settings as flags, a library call as arguments
        _write_report(tmp, type(result), words=partial(in_words, flags=result.command.startswith("leakaudit ")))
        out.mkdir(parents=True, exist_ok=True)
        for f in tmp.iterdir():
            os.replace(f, out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _reworded(obj, words):
    """``obj`` (results.json's data) with ``words`` applied to every string but the recorded configuration's."""
    if isinstance(obj, str):
        return words(obj)
    if isinstance(obj, list):
        return [_reworded(v, words) for v in obj]
    if isinstance(obj, dict):
        return {k: v if k == "config" else _reworded(v, words) for k, v in obj.items()}
    return obj


def _write_report(folder: Path, result_type, *, words) -> None:
    """``folder/report.html`` from the results.json and records.csv written there, read back as written (strict
    JSON, the CSV's types) into ``result_type`` with its texts' settings named by ``words``
    (:func:`leakaudit.audit.config.in_words`)."""
    from ..report import render_report

    shown = result_type.from_dict(_reworded(json.loads((folder / "results.json").read_text()), words))
    write_text_atomic(folder / "report.html", render_report(shown, pd.read_csv(folder / "records.csv")),
                      what="report")

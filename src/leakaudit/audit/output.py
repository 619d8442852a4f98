"""An audit's files: results.json, records.csv, report.html and evidence.json, written together or not at all.

They are written in a temporary folder beside ``out`` and moved in only when complete, so a failed write leaves an
existing output folder as it was.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from .._results import check_output_folder, write_json_atomic

__all__ = ["check_out_writable", "write_audit_files"]


def check_out_writable(out: Path, *, name: str = "out") -> None:
    """Refuse an output folder that cannot be written, before any work is done (``name``: the argument or flag that
    gave it, for the message)."""
    check_output_folder(out, option=name)


def write_audit_files(out: Path, results: dict, records: pd.DataFrame, *, evidence: dict | None = None) -> None:
    """results.json (``results``), records.csv (``records``), report.html (rendered from them) and, when given,
    evidence.json (``evidence``) into ``out``."""
    from ..report import write_report

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write_json_atomic(tmp / "results.json", results)
        records.to_csv(tmp / "records.csv", index=False)
        if evidence is not None:
            write_json_atomic(tmp / "evidence.json", evidence)
        from functools import partial

        from .config import in_words

        # a command-line audit names its settings as flags, a library call as arguments
        cli = str(results.get("command", "")).startswith("leakaudit ")
        write_report(tmp, words=partial(in_words, flags=cli))
        out.mkdir(parents=True, exist_ok=True)
        for f in tmp.iterdir():
            os.replace(f, out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

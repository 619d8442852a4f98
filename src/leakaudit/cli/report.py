"""``leakaudit report DIR``: report.html made again from the results.json (and records.csv) an audit wrote there.

The report renders from the saved files alone: every name and description it shows is stored in results.json, so an
audit that ran a plug-in's attack or analysis re-renders in a process that does not have the plug-in.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ._echo import echo
from ._typer import Command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``leakaudit report`` to the command line."""

    @app.command(cls=Command)
    def report(folder: Path = typer.Argument(..., metavar="DIR", help="An audit's output folder (results.json, "
                                                                         "records.csv).")) -> None:
        """Render DIR/report.html again from DIR/results.json and DIR/records.csv, as the audit wrote it."""
        from .._interrupt import on_interrupt

        with on_interrupt("report", doing=f"rendering {folder / 'report.html'}"):
            out = rerender_report(folder)
        echo(f"wrote {out}")


def rerender_report(folder: Path) -> Path:
    """``folder/report.html`` rendered again from the results.json and records.csv an audit wrote in ``folder``;
    the settings its sentences name are written as the flags or the arguments the audit was given, as when it was
    first written. Returns the report's path."""
    import json

    from ..audit.output import _write_report, check_out_writable
    from ..audit.results import read_result
    from ..exceptions import DataFileError

    path = folder / "results.json"
    if not path.is_file():
        raise DataFileError(f"{path} does not exist: give the folder an audit wrote (results.json, records.csv)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(f"{path} is not JSON: {exc}") from None
    result = read_result(data, where=str(path))
    if not (folder / "records.csv").is_file():
        raise DataFileError(f"{folder / 'records.csv'} does not exist: the report shows the records an audit wrote "
                            "there beside results.json")
    check_out_writable(folder, name="DIR")
    _write_report(folder, type(result))
    return folder / "report.html"

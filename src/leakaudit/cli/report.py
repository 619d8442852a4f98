"""``leakaudit report DIR``: report.html made again from the results.json (and records.csv) an audit wrote there.

The report renders from the saved files alone: every name and description it shows is stored in results.json, so an
audit that ran a plug-in's attack or analysis re-renders in a process that does not have the plug-in. The folder is
read as untrusted input (:func:`leakaudit.audit.result.results.rerender_report`): a damaged file is refused in one line.
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
    def report(folder: Path = typer.Argument(..., metavar="DIR", help="An audit's output folder (results.json, and "
                                                                         "records.csv where there).")) -> None:
        """Render DIR/report.html again from DIR/results.json and DIR/records.csv, as the audit wrote it; without
        records.csv the report says its plots and riskiest records are missing."""
        from .._interrupt import on_interrupt
        from ..audit.result.results import rerender_report

        with on_interrupt("report", doing=f"rendering {folder / 'report.html'}"):
            out = rerender_report(folder)
        echo(f"wrote {out}")

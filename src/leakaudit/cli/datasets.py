"""``leakaudit datasets``: every dataset's files (found where, rows x columns, or why missing), then the names
``--dataset`` takes (:mod:`leakaudit.data.registry`)."""

from __future__ import annotations

import typer

from ._echo import echo
from ._typer import Command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``leakaudit datasets`` to the command line."""

    @app.command(cls=Command)
    def datasets() -> None:
        """List every dataset: where its files were found, rows x columns, or why it is missing."""
        from .. import data
        from .._interrupt import on_interrupt
        from ..data.registry import dataset_names, get_dataset

        with on_interrupt("datasets", doing="checking the dataset files"):
            for st in data.dataset_status():
                echo(st.line())
        echo("names for --dataset (leakaudit membership):")
        for name in dataset_names():
            echo(f"  {name}: {get_dataset(name).description}")

"""Every line the command line prints goes through :func:`echo` (or, for warnings, :func:`printable`).

A name the user chose (a column, a label, a file, a record) can hold control or bidirectional-formatting
characters: U+202E, the right-to-left override, shows ``evil\\u202etxt.exe`` as ``evilexe.txt``. The terminal gets
them written out as ``\\uXXXX``, as report.html and records.csv do (:func:`leakaudit._text.escape_controls`).
"""

from __future__ import annotations

import typer

from .._text import escape_controls

__all__ = ["echo", "printable"]


def printable(text: object) -> str:
    """``text`` as the terminal gets it: control and bidirectional-formatting characters as ``\\uXXXX``."""
    return escape_controls(str(text))


def echo(text: object = "", *, err: bool = False) -> None:
    """Print ``text`` and a newline on stdout (stderr with ``err``), escaped by :func:`printable`."""
    typer.echo(printable(text), err=err)

"""Every line the command line prints goes through :func:`echo` (or, for warnings, :func:`printable`); every figure
it writes through :func:`png_figure`.

A name the user chose (a column, a label, a file, a record) can hold control or bidirectional-formatting
characters: U+202E, the right-to-left override, shows ``evil\\u202etxt.exe`` as ``evilexe.txt``. The terminal gets
them written out as ``\\uXXXX``, as report.html and records.csv do (:func:`leakaudit._text.escape_controls`).
"""

from __future__ import annotations

import contextlib

import typer

from .._text import escape_controls

__all__ = ["echo", "png_figure", "printable"]


def printable(text: object) -> str:
    """``text`` as the terminal gets it: control and bidirectional-formatting characters as ``\\uXXXX``."""
    return escape_controls(str(text))


def echo(text: object = "", *, err: bool = False) -> None:
    """Print ``text`` and a newline on stdout (stderr with ``err``), escaped by :func:`printable`."""
    typer.echo(printable(text), err=err)


@contextlib.contextmanager
def png_figure(path, figsize: tuple[float, float]):
    """The axes of a new matplotlib figure (the Agg backend) to draw in; on leaving the block it is laid
    out and written to ``path`` as a 120-dpi PNG, whole or not at all (a full disk named in one line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .._results import atomic_file

    fig, ax = plt.subplots(figsize=figsize)
    yield ax
    fig.tight_layout()
    with atomic_file(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)

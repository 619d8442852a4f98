"""What a command writes: its output folder checked before any work, its files named if Ctrl-C stops it
(:func:`writing_into`), its figures written whole (:func:`png_figure`)."""

from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["png_figure", "writing_into"]


def writing_into(out: Path, command: str, names: list[str], *, cache: Path | None = None, doing: str = "starting"):
    """:func:`~leakaudit._interrupt.on_interrupt` for ``command`` writing the files ``names`` into the folder ``out``,
    refused first when ``out`` cannot be that folder (:func:`~leakaudit._results.check_output_folder`)."""
    from .._interrupt import on_interrupt
    from .._results import check_output_folder

    check_output_folder(out)
    return on_interrupt(command, outputs=[out / n for n in names], cache=cache, doing=doing)


@contextlib.contextmanager
def png_figure(path: Path, figsize: tuple[float, float]):
    """The axes of a new matplotlib figure (the Agg backend) to draw in; on leaving the block it is laid out and
    written to ``path`` as a 120-dpi PNG, whole or not at all (a full disk named in one line)."""
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

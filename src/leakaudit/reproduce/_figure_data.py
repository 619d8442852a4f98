"""Reading a figure-data row's points (``_registry.FIGURE_DATA``): bookkeeping, imported by the page (``_registry``)
and the figures (``_figures``), which may not import ``_seeds`` (it imports ``_registry``: a cycle).

``_seeds.parse_figure_data`` is the same reader, written there first; it stays until the reproductions that import
``_seeds`` are run again, because changing ``_seeds`` changes every stored run's code digest. It should then be
removed, and ``_seeds`` left to write the rows only.
"""

from __future__ import annotations

__all__ = ["parse_figure_data"]


def parse_figure_data(note: str) -> dict[int | None, list[tuple[float, float]]]:
    """The points of a figure-data row's note, by seed (None: a row of one run, without seeds)."""
    out: dict[int | None, list[tuple[float, float]]] = {}
    for part in note.split(" | "):
        seed = None
        if part.startswith("seed "):
            head, _, part = part.partition(": ")
            seed = int(head.split()[1])
        pts = out.setdefault(seed, [])
        for pair in part.split("; "):
            if pair.strip():
                a, b = pair.split(",")
                pts.append((float(a), float(b)))
    return out

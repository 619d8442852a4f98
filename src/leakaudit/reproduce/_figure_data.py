"""Reading a figure-data row's points (``_registry.FIGURE_DATA``), written by ``_seeds.figure_data_row``: imported by
the page (``_registry``) and the figures (``_figures``), which may not import ``_seeds`` (it imports ``_registry``: a
cycle).
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

"""Warnings on the command line: one line each, a warning repeated many times said once with its count, and none
beside an error's one line.

Python prints a warning as two lines (where, then the source line), each time its text or place differs: a table
of 10,000 columns whose every column triggers a warning printed 20,000 lines. Within :func:`summarised_warnings`
each warning is kept as ``leakaudit: warning: Category: text``; when the command ends they are printed, the
first :data:`SHOWN` of each kind (the text with its numbers and quoted names blanked out), then one line per kind
saying how many more there were. A command that ends with an error prints that error's line alone (bad input is
one line, whatever was warned on the way to it): the caller passes ``show=False`` to :meth:`Warned.flush`.
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings
from collections import Counter
from collections.abc import Iterator

from ._echo import printable

__all__ = ["SHOWN", "Warned", "summarised_warnings"]

#: How many warnings of one kind are printed; the rest are counted in one line.
SHOWN = 3

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def _kind(category: type, text: str) -> tuple[str, str]:
    return category.__name__, _NUMBER.sub("#", _QUOTED.sub("'…'", text))


class Warned:
    """The warnings a command raised, by kind: :meth:`lines` to print, :meth:`flush` to print them once."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.first: dict[tuple[str, str], list[str]] = {}

    def add(self, category: type, message) -> None:
        kind = _kind(category, str(message))
        self.counts[kind] += 1
        if self.counts[kind] <= SHOWN:
            self.first.setdefault(kind, []).append(
                f"leakaudit: warning: {category.__name__}: {' '.join(str(message).split())}")

    def lines(self) -> list[str]:
        out = []
        for kind, shown in self.first.items():
            out += shown
            n = self.counts[kind]
            if n > SHOWN:
                out.append(f"leakaudit: warning: {n - SHOWN:,} more {kind[0]} like the one above ({n:,} in all)")
        return out

    def flush(self, *, show: bool = True) -> None:
        """Print the lines on stderr (unless ``show`` is False) and forget them."""
        if show:
            for line in self.lines():
                print(printable(line), file=sys.stderr, flush=True)
        self.counts.clear()
        self.first.clear()


@contextlib.contextmanager
def summarised_warnings() -> Iterator[Warned]:
    """Within the block, warnings are kept in the yielded :class:`Warned` instead of printed."""
    kept = Warned()

    def keep(message, category, filename, lineno, file=None, line=None) -> None:
        kept.add(category, message)

    with warnings.catch_warnings():
        warnings.showwarning = keep
        yield kept

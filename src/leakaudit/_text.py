"""Text as leakaudit shows it to people: in a report, a table, a terminal.

Only the standard library here, so that the command line can print through it before (or without) loading the
numerical stack (``leakaudit --version`` loads none of it).
"""

from __future__ import annotations

import re

__all__ = ["escape_controls", "byte_size"]

#: characters that change how the text around them is shown: C0 and C1 controls (but tab, line feed and carriage
#: return, which CSV quotes and HTML shows as spaces), bidirectional marks, embeddings, overrides and isolates
#: (U+202E reverses what follows it: ``evil\u202etxt.exe`` shows as ``evilexe.txt``), line and paragraph separators
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """``text`` with every control or bidirectional-formatting character written out as ``\\uXXXX``, so that a
    name or value shows as it is in a report, a table or a terminal (never reversed or hidden)."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def byte_size(n: float) -> str:
    """A number of bytes in the largest unit (powers of 1,024, as sizes are given) it reaches, GiB at most: ``512 B``,
    ``1.5 KiB``, ``64.0 MiB``, ``2,048.0 GiB``, so that a small size never reads as 0."""
    units = ("B", "KiB", "MiB", "GiB")
    k = 0
    while k < len(units) - 1 and abs(n) >= 1024 ** (k + 1):
        k += 1
    return f"{n:,.0f} B" if k == 0 else f"{n / 1024**k:,.1f} {units[k]}"

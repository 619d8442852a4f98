"""A table of entries by name, for the registries of datasets (``data.registry``) and learners
(``learners.registry``): adding refuses a taken name unless forced, and an unknown name is refused listing the
known ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

from .exceptions import InvalidParameterError

__all__ = ["NameTable"]

E = TypeVar("E")


class NameTable(Generic[E]):
    """Entries by name, in the order they were added; ``kind`` names them in messages ("dataset", "learner")."""

    def __init__(self, kind: str, entries: Mapping[str, E] | None = None):
        self.kind = kind
        self._entries: dict[str, E] = {}
        for name, entry in (entries or {}).items():
            self.add(name, entry)

    def add(self, name: str, entry: E, *, force: bool = False) -> E:
        """Add ``entry`` as ``name``; a taken name is refused unless ``force=True`` (which replaces it)."""
        if not isinstance(name, str) or not name:
            raise InvalidParameterError(f"name must be a non-empty string; got {name!r}")
        if name in self._entries and not force:
            raise InvalidParameterError(f"{self.kind} {name!r} is already registered (pass force=True to replace it)")
        self._entries[name] = entry
        return entry

    def names(self) -> tuple[str, ...]:
        """Every name, in the order added."""
        return tuple(self._entries)

    def get(self, name: str) -> E:
        """The entry ``name``; an unknown name raises :class:`InvalidParameterError` listing the names."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise InvalidParameterError(f"unknown {self.kind} {name!r}; choose from "
                                        f"{', '.join(self._entries)}") from None

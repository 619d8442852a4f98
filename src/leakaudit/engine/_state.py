"""Saving model banks as plain arrays, and a bank made of chunks.

:class:`SupportsState` is an optional addition to the learner protocol
(:mod:`leakaudit.learners._base`): a learner that can turn a bank it trained
into a dict of numeric arrays, and back, declares it (``capabilities.state``).
The engine then stores the weights of each chunk as an ``.npz`` cache entry
(never a pickle) and :meth:`~leakaudit.engine.Engine.fit_bank` can hand back
banks of any size while holding one chunk in memory at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from ..learners import ModelBank, capabilities

__all__ = ["SupportsState", "ChunkedModelBank", "supports_state"]


@runtime_checkable
class SupportsState(Protocol):
    """A learner whose banks round-trip through plain numeric arrays.

    ``learner.from_state(learner.get_state(bank))`` must predict exactly as
    ``bank`` does. State arrays must be numeric (no object dtype); names are
    strings.
    """

    def get_state(self, bank: ModelBank) -> dict[str, np.ndarray]:  # pragma: no cover - protocol
        """The weights of every model of ``bank`` as named numeric arrays."""

    def from_state(self, state: Mapping[str, np.ndarray]) -> ModelBank:  # pragma: no cover - protocol
        """Rebuild a bank from :meth:`get_state`'s output."""


def supports_state(learner: object) -> bool:
    """Whether ``learner`` declares that it implements :class:`SupportsState` (``capabilities.state``)."""
    return capabilities(learner).state


class ChunkedModelBank(ModelBank):
    """A bank made of consecutive chunks, each a bank or a loader of one.

    Chunks given as loaders (callables returning a :class:`ModelBank`) are
    loaded on use, and only the most recently used one is kept, so a bank of
    10,000 models stored in the cache holds one chunk of weights in memory.

    Parameters
    ----------
    chunks : list of (n_models, ModelBank or callable returning one)
    n_classes : int or None
    """

    def __init__(self, chunks: list[tuple[int, ModelBank | Callable[[], ModelBank]]], n_classes: int | None):
        self._chunks = list(chunks)
        self._starts = np.concatenate([[0], np.cumsum(np.array([n for n, _ in self._chunks], dtype=np.int64))])
        self.n_models = int(self._starts[-1])
        self.n_classes = n_classes
        self._loaded: tuple[int, ModelBank] | None = None

    def chunk(self, j: int) -> ModelBank:
        """The j-th chunk as a bank (loaded from the cache if needed)."""
        n, c = self._chunks[j]
        if isinstance(c, ModelBank):
            return c
        if self._loaded is not None and self._loaded[0] == j:
            return self._loaded[1]
        bank = c()
        self._loaded = (j, bank)
        return bank

    @property
    def n_chunks(self) -> int:
        return len(self._chunks)

    #: a SciPy sparse X reaches each chunk as it is when that chunk's bank takes it, else densified (once)
    accepts_sparse = True

    def _gather(self, method: str, X: Any) -> np.ndarray:
        parts, dense = [], None
        for j in range(self.n_chunks):
            bank = self.chunk(j)
            Xj = X
            if sp.issparse(X) and not bank.accepts_sparse:
                dense = X.toarray() if dense is None else dense
                Xj = dense
            parts.append(getattr(bank, method)(Xj))
        return np.concatenate(parts, axis=0)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Probabilities of every model, shape (n_models, n_samples, n_classes)."""
        return self._gather("predict_proba", X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Regression outputs of every model, shape (n_models, n_samples)."""
        return self._gather("predict", X)

    def model(self, k: int):
        if not -self.n_models <= k < self.n_models:
            raise IndexError(f"model index {k} out of range for {self.n_models} models")
        k = k % self.n_models
        j = int(np.searchsorted(self._starts, k, side="right") - 1)
        return self.chunk(j).model(int(k - self._starts[j]))

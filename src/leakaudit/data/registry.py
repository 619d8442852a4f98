"""Datasets by name: the names ``--dataset`` takes, each with its loader and a one-line description.

One table for the command line (``leakaudit membership --dataset``, the list printed by
``leakaudit datasets``) and the audit's settings (``dataset`` in :class:`~leakaudit.audit.config.AuditConfig`).
A loader takes ``n_rows`` (how many rows the caller wants; generators make that many, file loaders
return the whole file and ignore it) and ``random_state``, and returns a :class:`~leakaudit.data.Dataset`;
the caller draws its rows from it.

Examples
--------
>>> from leakaudit.data.registry import dataset_names, get_dataset
>>> dataset_names()[:2]
('adult', 'purchase-like')
>>> get_dataset("adult").description
"UCI Adult, Long et al.'s 13 attributes"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._names import NameTable
from ._dataset import Dataset
from .adult import load_adult
from .census import load_census_kdd
from .purchase import supermarket_clusters
from .synthetic import make_purchase_like, make_texas_like

__all__ = ["NamedDataset", "dataset_names", "get_dataset", "load_dataset", "register_dataset"]


@dataclass(frozen=True)
class NamedDataset:
    """A dataset the command line and the audit's settings know by name.

    Attributes
    ----------
    name : str
        What ``--dataset`` takes.
    description : str
        One line: what the rows are and how they were prepared (recorded in results).
    loader : callable
        ``loader(n_rows=..., random_state=...) -> Dataset``.
    bytes_per_row : int or None
        For a generator: the memory one generated row takes at the peak of generating and encoding it, measured,
        so that a caller can refuse a size before generating it; None for a file (its size is the file's).
    """

    name: str
    description: str
    loader: Callable[..., Dataset]
    bytes_per_row: int | None = None

    def load(self, *, n_rows: int, random_state: Any = 0) -> Dataset:
        """The dataset: ``n_rows`` generated rows, or the whole file (the caller samples from it)."""
        return self.loader(n_rows=n_rows, random_state=random_state)


_REGISTRY: NameTable[NamedDataset] = NameTable("dataset")


def register_dataset(name: str, loader: Callable[..., Dataset], *, description: str, bytes_per_row: int | None = None,
                     force: bool = False) -> NamedDataset:
    """Add ``name`` to the registry; a taken name is refused unless ``force=True`` (which replaces it)."""
    return _REGISTRY.add(name, NamedDataset(name, description, loader, bytes_per_row), force=force)


def dataset_names() -> tuple[str, ...]:
    """Every registered name, in registration order."""
    return _REGISTRY.names()


def get_dataset(name: str) -> NamedDataset:
    """The registered dataset ``name``; an unknown name raises :class:`InvalidParameterError` listing the names."""
    return _REGISTRY.get(name)


def load_dataset(name: str, *, n_rows: int, random_state: Any = 0) -> Dataset:
    """``get_dataset(name).load(n_rows=n_rows, random_state=random_state)``."""
    return get_dataset(name).load(n_rows=n_rows, random_state=random_state)


def _adult(*, n_rows: int, random_state: Any) -> Dataset:
    return load_adult(columns="long")


def _purchase_like(*, n_rows: int, random_state: Any) -> Dataset:
    return make_purchase_like(n_records=n_rows, n_features=600, n_classes=10, random_state=random_state)


def _texas_like(*, n_rows: int, random_state: Any) -> Dataset:
    return make_texas_like(n_records=n_rows, random_state=random_state)


def _supermarket(*, n_rows: int, random_state: Any) -> Dataset:
    return supermarket_clusters(10, random_state=random_state)


def _census(*, n_rows: int, random_state: Any) -> Dataset:
    return load_census_kdd()


register_dataset("adult", _adult, description="UCI Adult, Long et al.'s 13 attributes")
# bytes a row: at least the measured peak RSS of generating and encoding a row (benchmarks/README.md)
register_dataset("purchase-like", _purchase_like, bytes_per_row=20_000,
                 description="synthetic Purchase-like (600 binary features, 10 k-means classes)")
register_dataset("texas-like", _texas_like, bytes_per_row=5_200, description="synthetic Texas-like")
register_dataset("supermarket", _supermarket,
                 description="supermarket baskets, 10 k-means clusters (Purchase built the same way)")
register_dataset("census", _census, description="Census-Income (KDD)")

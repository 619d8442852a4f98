"""``leakaudit datasets``: which datasets are available, where, and of what size.

The check is fast: it hashes each file (cached per process) and reads no table. Row and
column counts of tabular files are the documented counts of the checksummed file (a file
that passes its SHA-256 check is byte-identical to the one counted; the tests re-count
them by parsing); Fashion-MNIST counts are read from the IDX headers.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import DataFileError
from ._files import DATA_FILES, find_file

__all__ = ["DatasetStatus", "dataset_status"]


@dataclass(frozen=True)
class DatasetStatus:
    """Availability of one dataset.

    Attributes
    ----------
    name : str
    available : bool
    rows, columns : int or None
        Counts when available (columns include the label).
    path : str or None
        Folder the files were found in.
    problem : str or None
        Why it is unavailable (missing or corrupt file), or None.
    source : str
        Where the files come from.
    note : str
        Extra information (e.g. the synthetic substitute for a dataset we cannot ship).
    """

    name: str
    available: bool
    rows: int | None = None
    columns: int | None = None
    path: str | None = None
    problem: str | None = None
    source: str = ""
    note: str = ""

    def line(self) -> str:
        """One human-readable line, as printed by ``leakaudit datasets``."""
        if self.available:
            text = f"{self.name}: {self.rows:,} x {self.columns}, found at {self.path}"
        else:
            text = f"{self.name}: {self.problem}; from {self.source}"
        return text + (f" ({self.note})" if self.note else "")


# name, files, (rows, columns incl. label) of the verified files, note
_TABULAR = [
    ("adult (bundled)", ("adult/adult.data.gz", "adult/adult.test.gz"), (48_842, 15), "load_adult(); default copy",
     True),
    ("adult", ("adult/adult.data.gz", "adult/adult.test.gz", "adult/adult.names.gz"), (48_842, 15),
     "load_adult(source='shared')", False),
    ("census-kdd", ("census-kdd/census-income.data.xz", "census-kdd/census-income.test.xz", "census-kdd/columns.txt"),
     (299_285, 42), "load_census_kdd()", False),
    ("iwpc", ("yeom/iwpc-scaled.csv.gz",), (4_819, 9), "load_iwpc()", False),
    ("eyedata", ("yeom/eyedata.csv.gz",), (120, 201), "load_eyedata()", False),
    ("spamassassin", ("spamassassin/spamassassin.jsonl.xz",), (6_046, 7), "load_spamassassin()", False),
    ("supermarket", ("supermarket/supermarket.arff.gz",), (4_627, 217), "load_supermarket()", False),
]

_FASHION = [
    ("fashion-mnist (train)", "fashion-mnist/train-images-idx3-ubyte.gz", "fashion-mnist/train-labels-idx1-ubyte.gz",
     "load_fashion_mnist('train')"),
    ("fashion-mnist (test)", "fashion-mnist/t10k-images-idx3-ubyte.gz", "fashion-mnist/t10k-labels-idx1-ubyte.gz",
     "load_fashion_mnist('test')"),
]


def _check(files: tuple[str, ...], bundled: bool) -> tuple[list[Path] | None, str | None]:
    paths = []
    for rel in files:
        try:
            paths.append(find_file(rel, bundled=bundled))
        except DataFileError as exc:
            msg = str(exc)
            kind = "corrupt" if "corrupt" in msg else ("unreadable" if "cannot read" in msg else "missing")
            return None, f"{kind} ({rel})"
    return paths, None


def idx_shape(path: Path) -> tuple[int, ...]:
    """Dimensions from the header of a gzip-compressed IDX file (reads a few bytes)."""
    with gzip.open(path, "rb") as fh:
        head = fh.read(4)
        if len(head) < 4 or head[0] != 0 or head[1] != 0:
            raise DataFileError(f"{path} is not an IDX file (bad magic number)")
        nd = head[3]
        dims = fh.read(4 * nd)
    if len(dims) < 4 * nd:
        raise DataFileError(f"{path} has a truncated IDX header")
    return tuple(int.from_bytes(dims[4 * i: 4 * i + 4], "big") for i in range(nd))


def dataset_status() -> list[DatasetStatus]:
    """Status of every dataset leakaudit knows (real files, then documented substitutes).

    Returns
    -------
    list of DatasetStatus
        Use ``status.line()`` for display. Never raises for a missing or corrupt file.
    """
    out: list[DatasetStatus] = []
    for name, files, (rows, cols), note, bundled in _TABULAR:
        source = DATA_FILES[files[0]].source
        paths, problem = _check(files, bundled)
        if paths is None:
            out.append(DatasetStatus(name, False, problem=problem, source=source, note=note))
        else:
            out.append(DatasetStatus(name, True, rows, cols, str(paths[0].parent), source=source, note=note))
    for name, img, lab, note in _FASHION:
        source = DATA_FILES[img].source
        paths, problem = _check((img, lab), False)
        if paths is not None:
            shape, lshape = idx_shape(paths[0]), idx_shape(paths[1])
            if len(shape) != 3 or lshape != shape[:1]:
                problem = f"inconsistent IDX headers {shape} / {lshape}"
        if problem is not None:
            out.append(DatasetStatus(name, False, problem=problem, source=source, note=note))
            continue
        out.append(DatasetStatus(name, True, shape[0], shape[1] * shape[2], str(paths[0].parent), source=source,
                                 note=f"{note}; {shape[1]}x{shape[2]} images + label"))
    out.append(DatasetStatus(
        "purchase (Kaggle)", False, problem="missing (transactions.csv, not redistributable)",
        source="Kaggle 'Acquire Valued Shoppers'",
        note="substitute: make_purchase_like(); own copy: load_purchase_kaggle(path)",
    ))
    out.append(DatasetStatus(
        "texas-100", False, problem="missing (Texas hospital discharge data, licence-restricted)",
        source="Texas Department of State Health Services", note="substitute: make_texas_like()",
    ))
    return out

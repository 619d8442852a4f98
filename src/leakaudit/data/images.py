"""Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) and a small image-dataset type."""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from .._validation import check_choice, check_indices
from ..exceptions import DataFileError, InvalidInputError
from ._cache import cached_parse
from ._files import find_file

__all__ = ["ImageDataset", "load_fashion_mnist", "read_idx", "FASHION_MNIST_CLASSES"]

FASHION_MNIST_CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)


@dataclass(frozen=True, eq=False)
class ImageDataset:
    """Images and integer class labels.

    Parameters
    ----------
    name : str
    X : ndarray of shape (n, channels, height, width), float32 in [0, 1]
    y : ndarray of shape (n,), int64 in 0..k-1
    class_names : tuple of str
    info : dict
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    class_names: tuple[str, ...]
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.X.ndim != 4 or self.y.shape != (self.X.shape[0],):
            raise InvalidInputError(f"X must be (n, c, h, w) and y (n,); got {self.X.shape} and {self.y.shape}")
        if len(self.y) and (self.y.min() < 0 or self.y.max() >= len(self.class_names)):
            raise InvalidInputError(f"labels must lie in 0..{len(self.class_names) - 1}")

    task = "classification"

    def __len__(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_classes(self) -> int:
        return len(self.class_names)

    def subset(self, idx: Any) -> "ImageDataset":
        """The images ``idx`` (int indices or boolean mask), in that order."""
        rows = check_indices(idx, name="idx", n=len(self), allow_empty=True)
        return replace(self, X=self.X[rows], y=self.y[rows])

    def __repr__(self) -> str:
        return f"ImageDataset({self.name!r}: {len(self)} images of {self.X.shape[1:]}, {self.n_classes} classes)"


def read_idx(path) -> np.ndarray:
    """Read a gzip-compressed IDX file (the MNIST format) of unsigned bytes.

    Returns
    -------
    ndarray of uint8 with the shape given in the header
    """
    with gzip.open(path, "rb") as fh:
        b = fh.read()
    if len(b) < 4 or b[0] != 0 or b[1] != 0 or b[2] != 0x08:
        raise DataFileError(f"{path} is not an unsigned-byte IDX file (bad magic number)")
    nd = b[3]
    shape = tuple(int.from_bytes(b[4 + 4 * i: 8 + 4 * i], "big") for i in range(nd))
    offset = 4 + 4 * nd
    if len(b) - offset != int(np.prod(shape)):
        raise DataFileError(f"{path}: header says {shape} but the file holds {len(b) - offset} values")
    return np.frombuffer(b, np.uint8, offset=offset).reshape(shape)


def load_fashion_mnist(split: str = "train") -> ImageDataset:
    """Load Fashion-MNIST: 28x28 grey images of 10 clothing classes.

    Parameters
    ----------
    split : {"train", "test"}
        train: 60,000 images (6,000 per class); test: 10,000 (1,000 per class).

    Returns
    -------
    ImageDataset
        ``X`` float32 of shape (n, 1, 28, 28) with pixel values / 255 (Yeom et al.:
        "pixel values normalised to [0, 1]"), ``y`` int64, class_names
        :data:`FASHION_MNIST_CLASSES`. The decompressed files are parsed once per process.

    References
    ----------
    Xiao, H., Rasul, K. & Vollgraf, R. (2017). Fashion-MNIST. arXiv:1708.07747. MIT licence.
    """
    check_choice(split, name="split", choices=("train", "test"))
    stem = "train" if split == "train" else "t10k"
    img_path = find_file(f"fashion-mnist/{stem}-images-idx3-ubyte.gz")
    lab_path = find_file(f"fashion-mnist/{stem}-labels-idx1-ubyte.gz")

    def parse():
        images, labels = read_idx(img_path), read_idx(lab_path)
        if images.ndim != 3 or labels.shape != images.shape[:1]:
            raise DataFileError(f"Fashion-MNIST {split}: images {images.shape} and labels {labels.shape} disagree")
        X = (images.astype(np.float32) / np.float32(255.0))[:, None, :, :]
        return X, labels.astype(np.int64)

    X, y = cached_parse(("fashion-mnist", split), (img_path, lab_path), parse)
    X.flags.writeable = False  # shared by every caller in this process; copy before editing
    return ImageDataset(
        name=f"fashion-mnist-{split}",
        X=X,
        y=y.copy(),
        class_names=FASHION_MNIST_CLASSES,
        info={"source": "Fashion-MNIST (Zalando Research), MIT", "files": [str(img_path), str(lab_path)]},
    )

"""Output binning of Long et al. (§5.2; spec long-dtp.md §2.5).

Every model output the DTP/PDTP measurements and Long's attacks use is
quantised to the centre of a bin of width 0.01::

    bin(p) = (min(floor(p / 0.01), 99) + 0.5) * 0.01      # 0.005, 0.015, ..., 0.995

so ``p = 0`` maps to 0.005 and ``p = 1`` to 0.995. Binned rows no longer sum to
1; the paper uses them as they are (``renormalize=False``, the default).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_scalar
from ..exceptions import InvalidInputError

__all__ = ["bin_probabilities", "bin_index", "check_bin_width", "DEFAULT_BIN_WIDTH", "MAX_BINNED_LOG_RATIO"]

#: Long et al.'s bin width (§5.2).
DEFAULT_BIN_WIDTH = 0.01
#: ln(0.995 / 0.005) = ln 199, the largest |ln ratio| of two binned outputs (width 0.01).
MAX_BINNED_LOG_RATIO = float(np.log(199.0))

# floor(p / w) at a bin boundary must not fall one bin low because p / w is 0.29999...
_EPS = 1e-9


#: the finest binning: 1 / bin_width at most this many bins (beyond, a float cannot tell a width that divides 1)
MAX_BINS = 10**12


def check_bin_width(bin_width: float, *, max_val: float = 1.0) -> int:
    """Check a bin width (in (0, max_val], dividing 1 into at most :data:`MAX_BINS` bins); return the bin count."""
    check_scalar(bin_width, name="bin_width", min_val=0.0, max_val=max_val, include_min=False)
    width = float(bin_width)
    if width < 1.0 / MAX_BINS:
        raise InvalidInputError(f"bin_width must be at least 1e-12 (at most 10**12 bins); got {width:g}")
    n = int(round(1.0 / width))
    if abs(n * width - 1.0) > 1e-9:
        raise InvalidInputError(f"bin_width must divide 1 exactly (1/bin_width an integer); got {width}")
    return n


def bin_index(p, *, bin_width: float = DEFAULT_BIN_WIDTH) -> np.ndarray:
    """Index of the bin holding each probability.

    Parameters
    ----------
    p : array-like of any shape, values in [0, 1]
    bin_width : float, default=0.01
        Must divide 1 (1 / bin_width an integer).

    Returns
    -------
    ndarray of int64, same shape as ``p``
        ``min(floor(p / bin_width), n_bins - 1)``, in ``0 .. n_bins - 1``.
    """
    n_bins = check_bin_width(bin_width)
    arr = check_array(p, name="p", allow_empty=True)
    if arr.size and (arr.min() < -1e-12 or arr.max() > 1 + 1e-12):
        raise InvalidInputError(
            f"p must hold probabilities in [0, 1]; got values in [{arr.min():.6g}, {arr.max():.6g}]"
        )
    idx = np.floor(np.clip(arr, 0.0, 1.0) / bin_width + _EPS).astype(np.int64)
    return np.minimum(idx, n_bins - 1)


def bin_probabilities(p, *, bin_width: float = DEFAULT_BIN_WIDTH, renormalize: bool = False) -> np.ndarray:
    """Quantise probabilities to bin centres (Long et al. §5.2).

    ``bin(p) = (min(floor(p / w), 1/w - 1) + 0.5) * w``; with ``w = 0.01`` the
    values are 0.005, 0.015, ..., 0.995.

    Parameters
    ----------
    p : array-like of any shape, values in [0, 1]
        Typically model outputs of shape (n_samples, n_classes), or (K, n, C)
        for a bank of models.
    bin_width : float, default=0.01
        Width of the bins; must divide 1.
    renormalize : bool, default=False
        Divide each row (last axis) by its sum after binning. The paper does
        not; offered as an option (spec §2.5).

    Returns
    -------
    ndarray of float64, same shape as ``p``
        Every entry is ``>= bin_width / 2`` (before renormalisation), so ratios
        and KL divergences of binned outputs are finite.

    Examples
    --------
    >>> bin_probabilities([0.0, 0.0149, 0.015, 1.0]).round(3).tolist()
    [0.005, 0.005, 0.015, 0.995]
    """
    idx = bin_index(p, bin_width=bin_width)
    out = (idx + 0.5) * float(bin_width)
    if renormalize:
        if out.ndim == 0:
            raise InvalidInputError("renormalize=True needs p with a class axis (last axis)")
        out = out / out.sum(axis=-1, keepdims=True)
    return out

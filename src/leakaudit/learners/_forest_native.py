"""The compiled tree-growing kernel of the forest (``_forest_native.c``), built with the package.

``_forest_native.c`` is ``_forest_numba._grow_tree`` line for line in C (the same trees, node for node;
``tests/learners/test_forest.py`` compares them), which the numba kernels ``grow_trees`` and
``grow_and_query`` call tree by tree from their worker threads when it is available (and the C twin of
``_add_tree_bits``, which queries each tree as soon as it is grown): numba wraps every
array access in a negative-index check and, in a function this size, spills the loop variables around
every loop; C does neither (the time it takes: benchmarks/README.md).

``setup.py`` compiles it with ``-ffp-contract=off`` (a fused multiply-add would round the impurities differently
from numba's separate operations) in portable, AVX2 and AVX-512 variants; :data:`KERNEL` opens the one this CPU
runs (:mod:`._native`). When none was built, or ``LEAKAUDIT_NATIVE=0``, :func:`grow_function` returns None and the
numba kernel grows the trees; ``KERNEL.reason`` says why.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ._native import CompiledKernel

__all__ = ["KERNEL", "grow_function", "library", "next_task_function", "query_function"]

_P, _I = ctypes.c_void_p, ctypes.c_int64
#: leakaudit_grow_tree_*: codes, n, F, vals, voff, yv, rows_sub, m, seed, n_boot, bootstrap, max_features,
#: max_depth, mss, msl, crit, bslot, bptr, bidx, nbin, feat_o, thr_o, left_o, right_o, val_o, C, m_max, then the
#: scratch of _forest_numba._grow_work: i64, f64, mt, hst, hst_rows, hs, features, const_f, st, sts, cs, hw, hn, hp
_ARGTYPES = ([_P, _I, _I, _P, _P, _P, _P] + [_I] * 9 + [_P, _P, _P, _I] + [_P] * 5 + [_I, _I]
             + [_P] * 4 + [_I] + [_P] * 9)


def _configure(lib: ctypes.CDLL) -> None:
    for name in ("leakaudit_grow_tree_u16", "leakaudit_grow_tree_i32"):
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int64
        fn.argtypes = _ARGTYPES
    q = lib.leakaudit_query_tree_bits
    q.restype = ctypes.c_int64
    # P, W, pptr, qv, qvptr, feat, thr, left, right, value, C, out, nq, stk, stk_rows, stn
    q.argtypes = [_P, _I, _P, _P, _P, _P, _P, _P, _P, _P, _I, _P, _I, _P, _I, _P]
    nx = lib.leakaudit_next_task
    nx.restype = ctypes.c_int64
    nx.argtypes = [_P]


#: the compiled forest kernel (``KERNEL.load()``: the library this CPU runs, or None; ``KERNEL.reason``: why not)
KERNEL = CompiledKernel("forest", _configure)


def library() -> ctypes.CDLL | None:
    """The compiled kernel's library, opened on first call; None if there is none (``KERNEL.reason`` says why)."""
    loaded = KERNEL.load()
    return None if loaded is None else loaded.lib


def grow_function(codes_dtype):
    """The C function that grows one tree on rank codes of this dtype (uint16 or int32), or None."""
    lib = library()
    if lib is None:
        return None
    dt = np.dtype(codes_dtype)
    if dt == np.uint16:
        return lib.leakaudit_grow_tree_u16
    if dt == np.int32:
        return lib.leakaudit_grow_tree_i32
    return None


def query_function():
    """The C function that adds one tree's leaf fractions to the query rows moving down as bitsets, or None."""
    lib = library()
    return None if lib is None else lib.leakaudit_query_tree_bits


def next_task_function():
    """The C function that hands out tasks from a shared int64 counter (atomic fetch-and-add), or None."""
    lib = library()
    return None if lib is None else lib.leakaudit_next_task

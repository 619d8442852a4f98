"""The compiled forest kernel (``_forest_native.c``), built with the package: growing, packing and querying trees.

The C source grows scikit-learn's trees node for node (its header says how) and takes typed structs, mirrored
here by :mod:`ctypes` Structures (:class:`Forest`, :class:`Grown`, :class:`Query`, :class:`Bank`; their sizes
are checked against the library's when it is opened). Each exported call is one worker that takes its work
(trees, models, blocks of rows) from a counter shared with the other workers, so the functions below run
``n_workers`` of them on the learners' thread pool (:func:`._threads.for_each_model`; ctypes calls release the
GIL), and no result depends on the number of threads.

``setup.py`` compiles the source with ``-ffp-contract=off`` (a fused multiply-add would round the impurities
differently from scikit-learn) in portable, AVX2 and AVX-512 variants; :data:`KERNEL` opens the one this CPU
runs (:mod:`._native`). When none was built, or ``LEAKAUDIT_NATIVE=0``, :func:`library` returns None and
:class:`~leakaudit.learners.RandomForest` trains scikit-learn's forests instead; ``KERNEL.reason`` says why.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ._native import CompiledKernel
from ._native import ptr as _ptr
from ._threads import for_each_model

__all__ = ["KERNEL", "Bank", "Forest", "Grown", "Query", "grow", "grow_query", "library", "pack", "predict",
           "query_bitsets", "tree_seeds"]

_P, _I = ctypes.c_void_p, ctypes.c_int64


class Forest(ctypes.Structure):
    """leakaudit_forest: the rank codes, the models' rows and seeds, and the splitting rules of a call."""

    _fields_ = [("codes", _P), ("wide", _I), ("n", _I), ("F", _I), ("vals", _P), ("voff", _P), ("yv", _P),
                ("sub_rows", _P), ("sub_ptr", _P), ("n_models", _I), ("n_trees", _I), ("tree_seed", _P),
                ("n_boot", _P), ("mss", _P), ("msl", _P), ("bootstrap", _I), ("max_features", _I),
                ("max_depth", _I), ("crit", _I), ("maxnv", _I), ("bslot", _P), ("bptr", _P), ("bidx", _P),
                ("nbin", _I), ("C", _I), ("max_nodes", _I), ("m_max", _I), ("hst_rows", _I)]


class Grown(ctypes.Structure):
    """leakaudit_forest_grown: trees t0 .. t1 - 1 and the breadth-first build buffers they are written to."""

    _fields_ = [("t0", _I), ("t1", _I), ("feat", _P), ("thr", _P), ("left", _P), ("leaf", _P), ("value", _P),
                ("n_nodes", _P), ("depth", _P), ("counter", _P)]


class Query(ctypes.Structure):
    """leakaudit_forest_query: the query rows (and their bitsets) of a grow-and-query call, and its output."""

    _fields_ = [("Xq", _P), ("nq", _I), ("group", _I), ("out", _P), ("bits", _I), ("same", _I), ("P", _P), ("W", _I),
                ("pptr", _P), ("qvptr", _P), ("qv", _P), ("counter", _P)]


class Bank(ctypes.Structure):
    """leakaudit_forest_bank: a bank's flat node arrays, the rows they are queried on, and the output."""

    _fields_ = [("X", _P), ("n", _I), ("F", _I), ("n_models", _I), ("C", _I), ("block", _I), ("tree_ptr", _P),
                ("node_off", _P), ("leaf_off", _P), ("feat", _P), ("thr", _P), ("left", _P), ("leaf", _P),
                ("value", _P), ("out", _P), ("counter", _P)]


def _configure(lib: ctypes.CDLL) -> None:
    size = lib.leakaudit_forest_struct_size
    size.restype, size.argtypes = _I, [_I]
    for i, struct in enumerate((Forest, Grown, Query, Bank)):
        if size(i) != ctypes.sizeof(struct):  # pragma: no cover - the two sides were edited apart
            raise RuntimeError(f"{struct.__name__} has {ctypes.sizeof(struct)} bytes here, {size(i)} in the library")
    for name, args in (("leakaudit_forest_grow", [ctypes.POINTER(Forest), ctypes.POINTER(Grown)]),
                       ("leakaudit_forest_grow_query", [ctypes.POINTER(Forest), ctypes.POINTER(Query)]),
                       ("leakaudit_forest_predict", [ctypes.POINTER(Bank)]),
                       ("leakaudit_forest_pack", [ctypes.POINTER(Grown), _I, ctypes.POINTER(Bank)]),
                       ("leakaudit_forest_query_bitsets", [_P, _I, _I, _P, _P, _P, _I, _P, _P]),
                       ("leakaudit_forest_tree_seeds", [_P, _I, _I, _P])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = _I, args


#: the compiled forest kernel (``KERNEL.load()``: the library this CPU runs, or None; ``KERNEL.reason``: why not)
KERNEL = CompiledKernel("forest", _configure)

#: the compiled kernel's library, opened on first call; None if there is none (``KERNEL.reason`` says why)
library = KERNEL.library


def _need():
    lib = library()
    if lib is None:  # pragma: no cover - RandomForest checks library() first
        raise RuntimeError(f"no compiled forest kernel: {KERNEL.reason}")
    return lib


def _run(fn, args, n_workers: int, what: str) -> None:
    """``n_workers`` workers of the kernel call ``fn(*args)`` on the thread pool; MemoryError if one ran out."""
    failed = []

    def worker(_):
        if fn(*args) < 0:
            failed.append(True)

    for_each_model(worker, max(1, n_workers), max(1, n_workers))
    if failed:
        raise MemoryError(f"the forest kernel could not allocate its {what}")


def grow(forest: Forest, t0: int, t1: int, bufs, n_nodes: np.ndarray, depth: np.ndarray, n_workers: int) -> None:
    """Grow trees t0 .. t1 - 1 (tree t is tree ``t % n_trees`` of model ``t // n_trees``) into rows of ``bufs``.

    ``bufs``: (feat int32, thr float32, left int32, leaf int32) of shape (>= t1 - t0, max_nodes) and value float64
    (>= t1 - t0, (max_nodes + 1) // 2, C), C-contiguous; ``n_nodes``, ``depth`` int64 (>= t1 - t0,). Each tree is
    renumbered breadth-first (node j's children are ``left[j]`` and ``left[j] + 1``).
    """
    counter = np.zeros(1, np.int64)
    feat, thr, left, leaf, value = bufs
    grown = Grown(t0=int(t0), t1=int(t1), feat=_ptr(feat), thr=_ptr(thr), left=_ptr(left), leaf=_ptr(leaf),
                  value=_ptr(value), n_nodes=_ptr(n_nodes), depth=_ptr(depth), counter=_ptr(counter))
    lib = _need()
    _run(lib.leakaudit_forest_grow, (ctypes.byref(forest), ctypes.byref(grown)), min(n_workers, t1 - t0),
         "tree scratch")
    # the buffers' arrays stay referenced until here (the structs hold bare addresses)
    del feat, thr, left, leaf, value


def pack(bufs, n_nodes: np.ndarray, max_nodes: int, node_off: np.ndarray, leaf_off: np.ndarray, flat) -> None:
    """Copy buffer row t's tree (:func:`grow`'s) to ``node_off[t]`` / ``leaf_off[t]`` of the flat arrays ``flat``
    (feat, thr, left, leaf, value)."""
    feat, thr, left, leaf, value = bufs
    grown = Grown(t0=0, t1=int(n_nodes.size), feat=_ptr(feat), thr=_ptr(thr), left=_ptr(left), leaf=_ptr(leaf),
                  value=_ptr(value), n_nodes=_ptr(n_nodes))
    ff, ft, fl, flf, fv = flat
    bank = Bank(C=int(fv.shape[1]), node_off=_ptr(node_off), leaf_off=_ptr(leaf_off), feat=_ptr(ff), thr=_ptr(ft),
                left=_ptr(fl), leaf=_ptr(flf), value=_ptr(fv))
    _need().leakaudit_forest_pack(ctypes.byref(grown), int(max_nodes), ctypes.byref(bank))


def predict(X: np.ndarray, tree_ptr, node_off, leaf_off, feat, thr, left, leaf, value, out: np.ndarray,
            block: int, n_workers: int) -> None:
    """``out[k, i]`` = mean over model k's trees of the leaf fractions row i of ``X`` (float32 (n, F)) reaches.

    ``out`` (K, n, C) float64, zeros on entry; the trees of a model are added in order, then divided by their
    number (as ``RandomForestClassifier.predict_proba``); work items are (model, block of ``block`` rows).
    """
    counter = np.zeros(1, np.int64)
    K, n, C = out.shape
    bank = Bank(X=_ptr(X), n=int(n), F=int(X.shape[1]), n_models=int(K), C=int(C), block=int(block),
                tree_ptr=_ptr(tree_ptr), node_off=_ptr(node_off), leaf_off=_ptr(leaf_off), feat=_ptr(feat),
                thr=_ptr(thr), left=_ptr(left), leaf=_ptr(leaf), value=_ptr(value), out=_ptr(out),
                counter=_ptr(counter))
    items = K * (-(-n // block))
    _run(_need().leakaudit_forest_predict, (ctypes.byref(bank),), min(n_workers, items), "")


def query_bitsets(Xq: np.ndarray, qvptr: np.ndarray, order: np.ndarray | None = None):
    """The query rows ``Xq`` (n_q, F) float32 C-contiguous as bitsets for :func:`grow_query`: ``(P, pptr, qv)``.

    ``qv[qvptr[f]:qvptr[f + 1]]`` are feature f's distinct query values, ascending (``qvptr``: the cumulative
    numbers of distinct values). ``P[pptr[f] + j]`` (``W = ceil(n_q / 64)`` words; bit i of word i // 64 is row
    i) is the set of rows whose value of f is <= the j-th smallest (j = 1 .. u_f), ``P[pptr[f]]`` the empty set:
    the rows a split on f sends left, for any threshold, by a binary search among ``qv``. ``order``: the columns'
    stable argsort (n_q, F), when the caller has it.
    """
    nq, F = Xq.shape
    W = -(-nq // 64)
    if order is None:
        order = np.argsort(Xq, axis=0, kind="stable")
    order = np.ascontiguousarray(order.T, dtype=np.int64)
    pptr = np.empty(F + 1, np.int64)
    P = np.zeros((int(qvptr[F]) + F, W), np.uint64)
    qv = np.empty(int(qvptr[F]), np.float32)
    qvptr = np.ascontiguousarray(qvptr, dtype=np.int64)
    if _need().leakaudit_forest_query_bitsets(_ptr(Xq), nq, F, _ptr(order), _ptr(qvptr), _ptr(P), W, _ptr(pptr),
                                              _ptr(qv)) < 0:
        raise ValueError("query_bitsets: qvptr holds fewer distinct values than the query rows have")
    return P, pptr, qv


def tree_seeds(seeds: np.ndarray, n_trees: int) -> np.ndarray:
    """Row ``k * n_trees + j``: the j-th draw of ``RandomState(seeds[k]).randint(2**31 - 1)`` (int64 seeds in
    [0, 2**32 - 1]), drawn by the kernel's MT19937 (the stream it draws bootstraps from)."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    out = np.empty(seeds.size * int(n_trees), np.int64)
    _need().leakaudit_forest_tree_seeds(_ptr(seeds), seeds.size, int(n_trees), _ptr(out))
    return out


def grow_query(forest: Forest, Xq: np.ndarray, out: np.ndarray, group: int, sets, n_workers: int,
               same: bool = False) -> None:
    """Grow every model's trees and query them on ``Xq`` (float32 (n_q, F)) without keeping them.

    ``out[k]`` (zeros on entry; (K, n_q, C) float64) gets model k's mean leaf fractions: the numbers of
    :func:`predict` on the bank :func:`grow` would build. Each worker takes whole models, grows their trees
    ``group`` at a time and lets the group's trees partition the query rows, as bitsets when ``sets`` (``(bits,
    P, pptr, qv, qvptr)``) has ``bits`` True, else a block of rows at a time. ``same``: ``Xq`` is the training
    matrix itself (row i of both is one record) and the forest's rank codes are uint16: with bitsets, a split's rows
    sent left are then read off the codes (``code <= the split's code``, the grower's own test; ``sets`` may be
    empty), the same numbers.
    """
    bits, P, pptr, qv, qvptr = sets
    counter = np.zeros(1, np.int64)
    query = Query(Xq=_ptr(Xq), nq=int(Xq.shape[0]), group=int(group), out=_ptr(out), bits=int(bool(bits)),
                  same=int(bool(same)), P=_ptr(P), W=int(P.shape[1]), pptr=_ptr(pptr), qvptr=_ptr(qvptr), qv=_ptr(qv),
                  counter=_ptr(counter))
    _run(_need().leakaudit_forest_grow_query, (ctypes.byref(forest), ctypes.byref(query)),
         min(n_workers, int(out.shape[0])), "tree scratch or query stack")

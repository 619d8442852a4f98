"""The compiled MLP kernel (``_mlp_native.c``), built with the package.

``_mlp_native.c`` trains one-hidden-layer float32 MLPs: mini-batch Adam/SGD (:class:`~leakaudit.learners.TorchMLP`'s
fast mode: on sparse rows such as every Adult audit's one-hot data, or on dense rows, each step's first layer as two
register-blocked matrix products, :func:`train_block`'s ``x``) and per-example SGD (faithful mode), each row's hidden
units summed in vector registers, for the widths it has copies for (:func:`supports`). It also computes layers for
predictions with a fixed order of additions (:func:`first_layer`, :func:`dense_layer`, :func:`layer`) and draws
the models' epoch orders (:func:`permutations`: numpy's ``Generator.permutation``, the same numbers, one call per
model and block of epochs, without the GIL). On one-hot data each model's task first finds the one-hot groups of
its own rows and drops each group's most frequent column from them, adding it back through the bias and a table of
weight differences (:func:`onehot_prepare`). :class:`DpTrainer` runs DP-SGD's
steps (:class:`~leakaudit.learners.DPSGD`'s compiled path): per-example clipping by exact per-example gradient
norms (each layer's per-example gradient has rank one) and Gaussian noise drawn in the kernel (:func:`gauss`,
:func:`noise_state`).

``setup.py`` compiles the source with the package in portable, AVX2 and AVX-512 variants; :data:`KERNEL` opens
the one this CPU runs (:mod:`._native`) with :mod:`ctypes`, whose calls release the GIL: models run on the
learners' thread pool (:mod:`._threads`), one model per call, so results do not depend on the thread count. When
none was built, or ``LEAKAUDIT_NATIVE=0``, :func:`library` returns None and TorchMLP trains with torch (the
reference it is tested against); ``KERNEL.reason`` says why.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ._native import CompiledKernel
from ._native import ptr as _ptr
from ._threads import for_each_model

__all__ = [
    "KERNEL",
    "TANH_COEFS",
    "WIDTHS",
    "DpTrainer",
    "aligned_rows",
    "csr_rows",
    "dense_layer",
    "first_layer",
    "gauss",
    "layer",
    "library",
    "n_params_1h",
    "noise_state",
    "onehot_prepare",
    "pack_1h",
    "permutations",
    "supports",
    "supports_dense",
    "supports_dp",
    "supports_dp_canaries",
    "train_block",
    "train_faithful",
    "unpack_1h",
]

#: the hidden widths the kernel has copies for (FOR_EACH_NV in _mlp_native.c)
WIDTHS = (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128, 192, 256)
#: the most rows the training kernel takes through a step together (its ROW_GROUP), for the size of its scratch
ROW_GROUP_MAX = 4
#: the share of the rows a one-hot group's most frequent column must hold for the training kernel to drop it
#: (onehot_prepare): below it a group saves little, and the recovered gradient (the bias gradient minus the group's
#: other rows) loses more to cancellation
MIN_DOMINANT_SHARE = 0.25
#: whether TorchMLP's fast mode has the kernel find and drop one-hot groups (a switch for tests and benchmarks)
ONEHOT = True
#: whether TorchMLP's fast mode hands the kernel dense rows as they are (else as CSR rows listing every column: the
#: same numbers, a switch for tests and benchmarks)
DENSE = True


_P, _I, _F, _D = ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_double

# Rational minimax approximation of tanh on [-7.9053, 7.9053] (Eigen's
# ``generic_fast_tanh_float``): tanh(x) = x * P(x^2) / Q(x^2); measured error at most 4.4 ulp
# of float32 (near |x| = 5.7). The compiled kernels train float32 nets only, with this tanh (a plain ``tanh``
# call blocks vectorisation).
TANH_COEFS = np.array(
    [
        7.90531110763549805,  # clamp
        4.89352455891786e-03,  # alpha_1
        6.37261928875436e-04,  # alpha_3
        1.48572235717979e-05,  # alpha_5
        5.12229709037114e-08,  # alpha_7
        -8.60467152213735e-11,  # alpha_9
        2.00018790482477e-13,  # alpha_11
        -2.76076847742355e-16,  # alpha_13
        4.89352518554385e-03,  # beta_0
        2.26843463243900e-03,  # beta_2
        1.18534705686654e-04,  # beta_4
        1.19825839466702e-06,  # beta_6
        4e-4,  # below this |x|, tanh(x) = x
    ]
)


def n_params_1h(d: int, H: int, C: int) -> int:
    """Parameters of a d-H-C net: ``d H + H + C H + C``."""
    return d * H + H + C * H + C


def aligned_rows(K: int, P: int, dtype) -> np.ndarray:
    """C-contiguous zeros of shape (K, P') whose rows start on 64-byte boundaries.

    P' is P rounded up to 64 bytes (the padding is never read), so every model's parameters,
    and with them the weight rows of a hidden width that is a multiple of 16 (float32), are
    cache-line aligned. A view into a slightly larger buffer.
    """
    dtype = np.dtype(dtype)
    per_line = 64 // dtype.itemsize
    stride = -(-P // per_line) * per_line
    buf = np.zeros(K * stride + per_line, dtype=dtype)
    off = (-buf.ctypes.data % 64) // dtype.itemsize
    return buf[off : off + K * stride].reshape(K, stride)


def pack_1h(Ws: list[np.ndarray], bs: list[np.ndarray], dtype) -> np.ndarray:
    """Stacked weights (K, d, H), (K, H, C) and biases (K, H), (K, C) -> the kernel's rows (K, P'), see aligned_rows."""
    W1, W2 = Ws
    b1, b2 = bs
    K, d, H = W1.shape
    C = W2.shape[2]
    P = n_params_1h(d, H, C)
    out = aligned_rows(K, P, dtype)
    out[:, :P] = np.concatenate([W1.reshape(K, -1), b1, W2.transpose(0, 2, 1).reshape(K, -1), b2], axis=1)
    return out


def unpack_1h(params: np.ndarray, d: int, H: int, C: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Inverse of :func:`pack_1h` (rows (K, >= P)): ([W1 (K, d, H), W2 (K, H, C)], [b1 (K, H), b2 (K, C)]), copies."""
    K = params.shape[0]
    o1 = d * H
    o2 = o1 + H
    o3 = o2 + C * H
    W1 = params[:, :o1].reshape(K, d, H).copy()
    b1 = params[:, o1:o2].copy()
    W2 = np.ascontiguousarray(params[:, o2:o3].reshape(K, C, H).transpose(0, 2, 1))
    b2 = params[:, o3 : o3 + C].copy()
    return [W1, W2], [b1, b2]


def csr_rows(X: np.ndarray, sparse: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The inputs each row of X feeds to the first layer, as CSR (indptr, indices, values).

    Parameters
    ----------
    X : ndarray of shape (n, d), the kernel's dtype
    sparse : bool
        List only the non-zero entries of each row (exact: a zero input adds
        nothing forward and a zero gradient backward); else every entry.

    Returns
    -------
    indptr : ndarray (n + 1,) int64; indices : ndarray (nnz,) int64, ascending within a row;
    values : ndarray (nnz,), X's dtype.
    """
    n, d = X.shape
    if sparse:
        nz = X != 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.count_nonzero(nz, axis=1), out=indptr[1:])
        flat = np.flatnonzero(nz)  # row-major: ascending within a row
        indices = (flat % d).astype(np.int64, copy=False)
        values = np.ascontiguousarray(X).ravel()[flat]
    else:
        indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
        indices = np.tile(np.arange(d, dtype=np.int64), n)
        values = np.ascontiguousarray(X).ravel()
    return indptr, indices, values




class Rows(ctypes.Structure):
    """leakaudit_rows: the rows a call reads (CSR: rstart = indptr, rend = indptr + 1; or dense xd), labels, d, C."""

    _fields_ = [("rstart", _P), ("rend", _P), ("indices", _P), ("values", _P), ("xd", _P), ("y", _P), ("d", _I),
                ("C", _I)]


class TrainRule(ctypes.Structure):
    """leakaudit_train_rule: the mini-batch rule (hyper: lr, weight decay, beta1, beta2, eps, logistic output)."""

    _fields_ = [("H", _I), ("activation", _I), ("adam", _I), ("n_epochs", _I), ("batch_size", _I), ("hyper", _P),
                ("coefs", _P)]


class Model(ctypes.Structure):
    """leakaudit_model: one model of a mini-batch call (parameters, moments, rows, one-hot groups, scratch)."""

    _fields_ = [("p", _P), ("m1", _P), ("m2", _P), ("steps", _P), ("order", _P), ("rowmap", _P), ("member", _P),
                ("length", _I), ("G", _I), ("gptr", _P), ("gcols", _P), ("gdom", _P), ("grad", _P), ("g", _P),
                ("table", _P), ("zd", _P), ("rows", _P)]


class SgdRule(ctypes.Structure):
    """leakaudit_sgd_rule: per-example SGD's width, epochs, activation, learning rate and tanh coefficients."""

    _fields_ = [("H", _I), ("epochs", _I), ("activation", _I), ("lr", _D), ("coefs", _P)]


class SgdModel(ctypes.Structure):
    """leakaudit_sgd_model: one model of a per-example SGD call (W1, b1, W2^T, b2, its row order, scratch)."""

    _fields_ = [("w1", _P), ("b1", _P), ("w2", _P), ("b2", _P), ("order", _P), ("m", _I), ("lo", _P)]


class DpRule(ctypes.Structure):
    """leakaudit_dp_rule: DP-SGD's width, activation, step size, 1 / expected batch, clip norm, tanh coefficients."""

    _fields_ = [("H", _I), ("activation", _I), ("lr", _D), ("inv", _D), ("clip", _D), ("coefs", _P)]


class DpModel(ctypes.Structure):
    """leakaudit_dp_model: one model of a DP-SGD call (parameters, the call's steps, noise state, groups, scratch)."""

    _fields_ = [("p", _P), ("batch", _P), ("step_ptr", _P), ("n_steps", _I), ("rng", _P), ("nscale", _P),
                ("xsq", _P), ("norms", _P), ("G", _I), ("gptr", _P), ("gcols", _P), ("gdom", _P), ("grad", _P),
                ("g", _P), ("table", _P), ("zd", _P), ("E", _I), ("cbatch", _P), ("cstep_ptr", _P), ("cnorm", _D)]


class OnehotOut(ctypes.Structure):
    """leakaudit_onehot_out: leakaudit_onehot_prepare's scratch, groups and reduced rows."""

    _fields_ = [("work", _P), ("gptr", _P), ("gcols", _P), ("gdom", _P), ("rstart", _P), ("rend", _P),
                ("ridx", _P), ("rval", _P)]


def _configure(lib: ctypes.CDLL) -> None:
    fn = lib.leakaudit_train_1h_f32
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.POINTER(Rows), ctypes.POINTER(TrainRule), ctypes.POINTER(Model)]
    prep = lib.leakaudit_onehot_prepare
    prep.restype = ctypes.c_int64
    prep.argtypes = [ctypes.POINTER(Rows), ctypes.POINTER(Model), ctypes.POINTER(OnehotOut), ctypes.c_double]
    sgd = lib.leakaudit_sgd_1h_f32
    sgd.restype = ctypes.c_int64
    sgd.argtypes = [ctypes.POINTER(Rows), ctypes.POINTER(SgdRule), ctypes.POINTER(SgdModel)]
    if hasattr(lib, "leakaudit_dp_train_1h_f32"):  # a library built before the DP step still trains the rest
        dp = lib.leakaudit_dp_train_1h_f32
        dp.restype = ctypes.c_int64
        dp.argtypes = [ctypes.POINTER(Rows), ctypes.POINTER(DpRule), ctypes.POINTER(DpModel)]
        lib.leakaudit_gauss_f32.restype = None
        lib.leakaudit_gauss_f32.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    if hasattr(lib, "leakaudit_dp_abi"):
        lib.leakaudit_dp_abi.restype = ctypes.c_int64
        lib.leakaudit_dp_abi.argtypes = []
    fl = lib.leakaudit_first_layer_1h_f32
    fl.restype = ctypes.c_int64
    fl.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 5 + [ctypes.c_int64, ctypes.c_void_p]
    for name in ("leakaudit_layer_f32", "leakaudit_layer_f64"):
        getattr(lib, name).restype = ctypes.c_int64
        getattr(lib, name).argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64, ctypes.c_int64,
                                                                                  ctypes.c_void_p]
    dl = lib.leakaudit_dense_layer_f32
    dl.restype = ctypes.c_int64
    dl.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    for name in ("leakaudit_native_supports", "leakaudit_dense_supports"):
        getattr(lib, name).restype = ctypes.c_int64
        getattr(lib, name).argtypes = [ctypes.c_int64]
    lib.leakaudit_permutations.restype = None
    lib.leakaudit_permutations.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]


#: the compiled MLP kernel (``KERNEL.load()``: the library this CPU runs, or None; ``KERNEL.reason``: why not)
KERNEL = CompiledKernel("mlp", _configure)

#: the compiled kernel's library, opened on first call; None if there is none (``KERNEL.reason`` says why)
library = KERNEL.library


def _loaded() -> ctypes.CDLL:
    """The compiled kernel's library; RuntimeError where there is none (callers check :func:`supports` first)."""
    lib = library()
    if lib is None:  # pragma: no cover - callers check supports() first
        raise RuntimeError(f"native kernel unavailable: {KERNEL.reason}")
    return lib


def supports(H: int, dtype) -> bool:
    """Whether the native kernel trains this net: float32, H in its specialised widths (sparse or dense rows)."""
    if np.dtype(dtype) != np.float32:
        return False
    lib = library()
    return lib is not None and bool(lib.leakaudit_native_supports(int(H)))


def supports_dense(H: int, dtype) -> bool:
    """Whether :func:`dense_layer` has a copy for H float32 outputs: the training widths, or fewer than 8 (logits)."""
    if np.dtype(dtype) != np.float32:
        return False
    lib = library()
    return lib is not None and bool(lib.leakaudit_dense_supports(int(H)))


def permutations(rng: np.random.Generator, out: np.ndarray, n_epochs: int) -> bool:
    """Fill ``out`` (n_epochs * m,) int64 with ``n_epochs`` draws of ``rng.permutation(m)``, in C; False if unavailable.

    The same numbers, and the same generator state afterwards, as the numpy calls (numpy's Fisher-Yates
    shuffle of ``arange(m)`` and its bounded-integer draw, through the generator's own C interface), without a
    Python call per epoch or the GIL. ``out`` must be C-contiguous int64.
    """
    lib = library()
    if lib is None:
        return False
    m = out.size // max(1, int(n_epochs))
    if out.dtype != np.int64 or not out.flags.c_contiguous or m * n_epochs != out.size:  # pragma: no cover
        raise ValueError("out must be a C-contiguous int64 array of n_epochs * m entries")
    bg = rng.bit_generator
    with bg.lock:
        lib.leakaudit_permutations(bg.ctypes.bit_generator.value, out.ctypes.data, int(m), int(n_epochs))
    return True


def _onehot_scratch(d: int, n: int, row_nnz):
    """leakaudit_onehot_prepare's work, groups and reduced rows (ridx/rval grown to a model's rows by _onehot_find)."""
    from types import SimpleNamespace

    return SimpleNamespace(row_nnz=row_nnz, work=np.empty(3 * d, np.int64),
                           gptr=np.empty(d + 2, np.int64), gcols=np.empty(d, np.int64),
                           gdom=np.empty(d, np.int64), rstart=np.zeros(n, np.int64), rend=np.zeros(n, np.int64),
                           ridx=np.empty(0, np.int64), rval=np.empty(0, np.float32))


def _onehot_find(lib, rows: Rows, rowmap, member_ptr, m: int, s) -> int:
    """Run leakaudit_onehot_prepare on rowmap[:m] of the CSR ``rows`` into the scratch ``s``; the number of groups G."""
    cap = int(s.row_nnz[rowmap[:m]].sum())
    if s.ridx.size < cap:
        s.ridx, s.rval = np.empty(cap, np.int64), np.empty(cap, np.float32)
    model = Model(rowmap=_ptr(rowmap), member=member_ptr, length=m)
    out = OnehotOut(work=_ptr(s.work), gptr=_ptr(s.gptr), gcols=_ptr(s.gcols), gdom=_ptr(s.gdom),
                    rstart=_ptr(s.rstart), rend=_ptr(s.rend), ridx=_ptr(s.ridx), rval=_ptr(s.rval))
    return int(lib.leakaudit_onehot_prepare(ctypes.byref(rows), ctypes.byref(model), ctypes.byref(out),
                                            float(MIN_DOMINANT_SHARE)))


def _csr(indptr, indices, values, y, d: int, C: int) -> Rows:
    """The Rows of CSR rows (indptr, indices int64; values float32) with labels y (int64 or None)."""
    return Rows(rstart=_ptr(indptr), rend=_ptr(indptr) + 8, indices=_ptr(indices), values=_ptr(values),
                y=None if y is None else _ptr(y), d=int(d), C=int(C))


def _aligned_f32(n: int) -> np.ndarray:
    """At least ``n`` float32 zeros starting on a 64-byte boundary (a view into a slightly larger buffer)."""
    buf = np.zeros(n + 16, np.float32)
    return buf[(-buf.ctypes.data % 64) // 4 :]


def onehot_prepare(indptr, indices, values, rows, d: int, member=None):
    """One model's one-hot groups, as the training kernel finds them in its task (``leakaudit_onehot_prepare``).

    CSR rows (:func:`csr_rows`: indptr, indices int64, values float32) of n rows of d columns; ``rows``: the
    model's training rows (int64; with ``member`` (n,) uint8, only those of them it marks). A one-hot group is a run
    of adjacent columns whose listed values are all 1 and of which every training row holds exactly one, whose most
    frequent (dominant) column is in at least :data:`MIN_DOMINANT_SHARE` of the rows: the kernel drops the dominant
    column from the rows and adds it back through the bias and a table of weight differences, and recovers its
    weight gradient from the bias gradient. Found on the model's own rows, so a model does not depend on the models
    trained beside it.

    Returns (dom (G,), [the group's other columns some row holds, for each group], the columns of no group some
    row lists, (rstart, rend, ridx, rval): the rows without the dominant columns, row r at [rstart[r]:rend[r]]
    (rows not given: undefined)); G = 0: nothing found (None for the rest).
    """
    lib = _loaded()
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    s = _onehot_scratch(int(d), indptr.size - 1, np.diff(indptr))
    member = None if member is None else np.ascontiguousarray(member, dtype=np.uint8)
    mem = None if member is None else _ptr(member)
    G = _onehot_find(lib, _csr(indptr, indices, values, None, d, 0), rows, mem, rows.size, s)
    if G == 0:
        return np.empty(0, np.int64), [], None, None
    groups = [s.gcols[s.gptr[g]:s.gptr[g + 1]].tolist() for g in range(G)]
    return s.gdom[:G].copy(), groups, s.gcols[s.gptr[G]:s.gptr[G + 1]].tolist(), (s.rstart, s.rend, s.ridx, s.rval)


def train_block(params, mom1, mom2, steps, indptr, indices, values, y, order, start, rowmap, rm_start, length,
                member, use_member, n_epochs, batch_size, d, H, C, hyper, adam, activation, coefs,
                n_threads, rngs=None, onehot: bool = False, x=None) -> list:
    """Train every model (row of ``params``) for ``n_epochs`` of mini-batch Adam or SGD.

    Arrays are C-contiguous: params/mom1/mom2 (K, >= P) float32, steps (K,) int64, the CSR rows
    (indptr, indices int64; values float32), y int64, order/start/rowmap/rm_start/length int64,
    member (K, n) uint8 (read when ``use_member``). Models are spread over ``n_threads`` threads.

    With ``rngs`` (one Generator a model; ``order`` and ``start`` are then ignored) model k's row orders
    for these epochs are drawn by :func:`permutations` from ``rngs[k]`` in the task that trains it, into a
    buffer its thread reuses: the same orders as drawn beforehand, without a pass over all models first
    or a buffer of every model's epochs.

    With ``onehot``, each model's task first finds the one-hot groups of its own training rows
    (:func:`onehot_prepare`) and trains on its rows without their dominant columns, which the kernel adds back.
    Returns the number of groups each model used (K,).

    With ``x`` (n, d) float32 C-contiguous, the rows are x's, every column (the dense first layer: two
    register-blocked matrix products a step; the CSR arrays are then not read and ``onehot`` must be False): the
    same numbers as CSR rows listing every column of x (``csr_rows(x, sparse=False)``).
    """
    lib = _loaded()
    fn = lib.leakaudit_train_1h_f32
    K = params.shape[0]
    P = d * H + H + C * H + C
    hyper = np.ascontiguousarray(hyper, dtype=np.float64)
    coefs = np.ascontiguousarray(coefs, dtype=np.float32)
    local = threading.local()
    rule = TrainRule(H=int(H), activation=int(activation), adam=int(bool(adam)), n_epochs=int(n_epochs),
                     batch_size=int(batch_size), hyper=_ptr(hyper), coefs=_ptr(coefs))
    if x is not None:
        if onehot:  # pragma: no cover - the caller's contract
            raise ValueError("dense rows (x) have no one-hot groups")
        if x.dtype != np.float32 or not x.flags.c_contiguous or x.shape[1] != d:  # pragma: no cover
            raise ValueError("x must be a C-contiguous float32 array of d columns")
        n = x.shape[0]
        rows_all = Rows(xd=_ptr(x), y=_ptr(y), d=int(d), C=int(C))
    else:
        n = indptr.size - 1
        rows_all = _csr(indptr, indices, values, y, d, C)
    used = [0] * K

    def scratch():
        if not hasattr(local, "grad"):
            # grad (P floats, 64-byte aligned), g (the logits of the rows the kernel takes together: at most
            # ROW_GROUP_MAX C floats); rows (B) int64
            buf = _aligned_f32(P + ROW_GROUP_MAX * C)
            local.grad, local.g = buf[:P], buf[P : P + ROW_GROUP_MAX * C]
            local.rows = np.empty(max(1, batch_size), np.int64)
            local.order = np.empty(0, np.int64)
            local.table = _aligned_f32((d + 1) * H if onehot else 0)  # 64-byte aligned rows, as W1's
            local.oh = _onehot_scratch(d, n, np.diff(indptr)) if onehot else None
            # the dense rows' (B, H) pre-activations and gradients
            local.zd = _aligned_f32(max(1, batch_size) * H if x is not None else 0)
        return local

    def one(k):
        s = scratch()
        m = int(length[k])
        if rngs is None:
            order_k = order[int(start[k]) : int(start[k]) + m * n_epochs]
        else:
            if s.order.size < m * n_epochs:
                s.order = np.empty(m * n_epochs, np.int64)
            order_k = s.order[: m * n_epochs]
            permutations(rngs[k], order_k, n_epochs)
        rowmap_k = rowmap[int(rm_start[k]) :]
        mem = _ptr(member[k]) if use_member else None
        model = Model(p=_ptr(params[k]), m1=_ptr(mom1[k]), m2=_ptr(mom2[k]), steps=_ptr(steps[k : k + 1]),
                      order=_ptr(order_k), rowmap=_ptr(rowmap_k), member=mem, length=m, grad=_ptr(s.grad),
                      g=_ptr(s.g), table=_ptr(s.table), zd=_ptr(s.zd), rows=_ptr(s.rows))
        rows_k = rows_all
        if onehot:
            o = s.oh
            G = used[k] = _onehot_find(lib, rows_all, rowmap_k, mem, m, o)
            if G:  # the model's rows without the groups' dominant columns
                rows_k = Rows(rstart=_ptr(o.rstart), rend=_ptr(o.rend), indices=_ptr(o.ridx), values=_ptr(o.rval),
                              y=_ptr(y), d=int(d), C=int(C))
                model.G, model.gptr, model.gcols, model.gdom = G, _ptr(o.gptr), _ptr(o.gcols), _ptr(o.gdom)
        got = fn(ctypes.byref(rows_k), ctypes.byref(rule), ctypes.byref(model))
        if got < 0:  # pragma: no cover - supports() guards the width
            raise RuntimeError(f"native kernel has no copy for hidden width {H}")

    for_each_model(one, K, n_threads)
    return used


def train_faithful(W1, b1, W2T, b2, indptr, indices, values, y, order, order_ptr, epochs, lr, activation,
                   n_threads) -> None:
    """Per-example SGD of every model, in place (the paper's Torch7 ``nn.StochasticGradient``, one hidden layer).

    W1 (K, d, H), b1 (K, H), W2T (K, C, H), b2 (K, C) float32 C-contiguous; CSR rows of the non-zero
    inputs (indptr, indices int64, values float32), y int64; model k visits rows
    ``order[order_ptr[k]:order_ptr[k + 1]]`` in that order every epoch. One model per call, spread over
    ``n_threads`` threads (results do not depend on the count).
    """
    lib = _loaded()
    fn = lib.leakaudit_sgd_1h_f32
    K, d, H = W1.shape
    C = W2T.shape[1]
    coefs = np.ascontiguousarray(TANH_COEFS, dtype=np.float32)
    for a in (W1, b1, W2T, b2, values):
        if a.dtype != np.float32 or not a.flags.c_contiguous:  # pragma: no cover - the caller's contract
            raise ValueError("train_faithful needs C-contiguous float32 arrays")
    local = threading.local()
    rows = _csr(indptr, indices, values, y, d, C)
    rule = SgdRule(H=int(H), epochs=int(epochs), activation=int(activation), lr=float(lr), coefs=_ptr(coefs))

    def one(k):
        if not hasattr(local, "lo"):
            local.lo = np.empty(max(1, C), np.float32)
        o0, o1 = int(order_ptr[k]), int(order_ptr[k + 1])
        model = SgdModel(w1=_ptr(W1[k]), b1=_ptr(b1[k]), w2=_ptr(W2T[k]), b2=_ptr(b2[k]),
                         order=_ptr(order[o0:o1]) if o1 > o0 else _ptr(order), m=o1 - o0, lo=_ptr(local.lo))
        got = fn(ctypes.byref(rows), ctypes.byref(rule), ctypes.byref(model))
        if got < 0:  # pragma: no cover - supports() guards the width
            raise RuntimeError(f"native kernel has no copy for hidden width {H}")

    for_each_model(one, K, n_threads)


class DpTrainer:
    """One model's DP-SGD steps by the compiled kernel (``leakaudit_dp_train_1h_f32``), block after block.

    Built once per model (in the thread that trains it): its rows (CSR ``indptr, indices, values`` float32 with,
    when ``onehot``, the one-hot groups of its own ``rows`` dropped as :func:`train_block` does; or dense ``x``),
    labels ``y`` int64, ``xsq`` (n,) float32 each row's squared norm over all its inputs, the net's sizes, the rule
    (``lr``, ``inv`` = 1 / the expected batch size, ``clip``: the clip norm, ``inf`` for none; ``activation`` 0 tanh,
    1 relu). :meth:`steps` then runs blocks of steps on ``params`` (>= P + ``extra`` float32, :func:`pack_1h`'s
    layout, then the canaries' parameters) in place. ``groups``: the number of one-hot groups the model's rows have
    (0 without ``onehot``). ``extra``: gradient canaries (:func:`supports_dp_canaries`), each an example whose
    gradient is ``canary_norm`` on a parameter of its own after the net's, clipped, summed and noised by the step
    like a row (see ``dp_impl`` in ``_mlp_native.c``).
    """

    def __init__(self, *, indptr, indices, values, x, y, xsq, rows, d: int, H: int, C: int, lr: float, inv: float,
                 clip: float, activation: int, onehot: bool, extra: int = 0, canary_norm: float = 0.0):
        lib = _loaded()
        self.fn = lib.leakaudit_dp_train_1h_f32
        if extra and not supports_dp_canaries():  # pragma: no cover - callers check supports_dp_canaries()
            raise RuntimeError("the compiled DP step predates gradient canaries; rebuild the kernels")
        self.P = n_params_1h(d, H, C) + int(extra)
        self.coefs = np.ascontiguousarray(TANH_COEFS, dtype=np.float32)
        self.rule = DpRule(H=int(H), activation=int(activation), lr=float(lr), inv=float(inv), clip=float(clip),
                           coefs=_ptr(self.coefs))
        self.keep = [y, xsq]  # the arrays the kernel reads stay alive with the trainer
        # grad (P floats, 64-byte aligned) and g (ROW_GROUP_MAX rows' logits)
        buf = _aligned_f32(self.P + ROW_GROUP_MAX * C)
        self.grad, self.g = buf[: self.P], buf[self.P : self.P + ROW_GROUP_MAX * C]
        self.H, self.zd_rows, self.zd = int(H), 0, np.zeros(1, np.float32)  # dense rows' (B, H) scratch, grown
        self.table = _aligned_f32((d + 1) * H if onehot else 0)
        self.model = DpModel(xsq=_ptr(xsq), grad=_ptr(self.grad), g=_ptr(self.g), table=_ptr(self.table),
                             zd=_ptr(self.zd), E=int(extra), cnorm=float(canary_norm))
        self.dense = x is not None
        self.groups = 0
        if x is not None:
            if x.dtype != np.float32 or not x.flags.c_contiguous or x.shape[1] != d:  # pragma: no cover
                raise ValueError("x must be a C-contiguous float32 array of d columns")
            self.rows = Rows(xd=_ptr(x), y=_ptr(y), d=int(d), C=int(C))
            self.keep.append(x)
            return
        self.rows = _csr(indptr, indices, values, y, d, C)
        self.keep += [indptr, indices, values]
        if onehot:
            rows = np.ascontiguousarray(rows, dtype=np.int64)
            o = self.oh = _onehot_scratch(d, indptr.size - 1, np.diff(indptr))
            self.groups = G = _onehot_find(lib, self.rows, rows, None, rows.size, o)
            if G:  # the model's rows without the groups' dominant columns
                self.rows = Rows(rstart=_ptr(o.rstart), rend=_ptr(o.rend), indices=_ptr(o.ridx), values=_ptr(o.rval),
                                 y=_ptr(y), d=int(d), C=int(C))
                self.model.G, self.model.gptr, self.model.gcols, self.model.gdom = (
                    G, _ptr(o.gptr), _ptr(o.gcols), _ptr(o.gdom))

    def steps(self, params, batch, step_ptr, rng=None, nscale=None, norms=None, cbatch=None, cstep_ptr=None) -> None:
        """Take ``len(step_ptr) - 1`` steps on ``params``, in place.

        Step t's rows: ``batch[step_ptr[t]:step_ptr[t + 1]]`` (int64 row indices); the noise: P standard normal
        draws a step from the generator state ``rng`` (:func:`noise_state`, advanced in place; None: no noise),
        scaled by ``nscale[t]`` (float32 (steps,): the noise standard deviation of the sum divided by the expected
        batch size; 0: no draws that step); ``norms`` (``step_ptr[-1]``,) float32 receives each row's gradient
        norm before clipping, when given. With canaries (``extra``), step t's: ``cbatch[cstep_ptr[t]:cstep_ptr[t +
        1]]`` (int64, distinct indices in ``[0, extra)``).
        """
        n_steps = step_ptr.size - 1
        for a, dt in ((batch, np.int64), (step_ptr, np.int64), (params, np.float32)):
            if a.dtype != dt or not a.flags.c_contiguous:  # pragma: no cover - the caller's contract
                raise ValueError("dp steps need C-contiguous int64 batch/step_ptr and float32 params")
        m = self.model
        most = int(np.diff(step_ptr).max(initial=0))
        if self.dense and most > self.zd_rows:  # the largest batch so far (a Poisson batch's size varies)
            self.zd_rows = max(most, 2 * self.zd_rows)
            self.zd = _aligned_f32(self.zd_rows * self.H)  # 64-byte aligned rows, as train_block's
            m.zd = _ptr(self.zd)
        m.p, m.batch, m.step_ptr, m.n_steps = _ptr(params), _ptr(batch), _ptr(step_ptr), n_steps
        m.rng = None if rng is None else _ptr(rng)
        m.nscale = None if nscale is None else _ptr(nscale)
        m.norms = None if norms is None else _ptr(norms)
        if m.E:
            for a in (cbatch, cstep_ptr):
                if a is None or a.dtype != np.int64 or not a.flags.c_contiguous:  # pragma: no cover - the contract
                    raise ValueError("canaries need C-contiguous int64 cbatch and cstep_ptr")
            if cstep_ptr.size != n_steps + 1 or params.size < self.P:  # pragma: no cover - the caller's contract
                raise ValueError("cstep_ptr must have steps + 1 entries and params room for the canaries")
            m.cbatch, m.cstep_ptr = _ptr(cbatch), _ptr(cstep_ptr)
        if rng is not None and (rng.dtype != np.uint32 or rng.size != 32 or nscale is None or nscale.size < n_steps
                                or nscale.dtype != np.float32):  # pragma: no cover - the caller's contract
            raise ValueError("rng must be noise_state()'s (32,) uint32, nscale float32 (steps,)")
        got = self.fn(ctypes.byref(self.rows), ctypes.byref(self.rule), ctypes.byref(m))
        if got < 0:  # pragma: no cover - supports() guards the width
            raise RuntimeError(f"native kernel has no DP copy for hidden width {self.rule.H}")


def noise_state(entropy) -> np.ndarray:
    """The DP step's noise generator state (32,) uint32 (8 lanes of xoshiro128**, word w of lane l at
    ``8 w + l``), from ``numpy.random.SeedSequence(entropy)``; a lane that came out all zero (a state xoshiro
    never leaves) is set to 1."""
    st = np.random.SeedSequence(entropy).generate_state(32, np.uint32).reshape(4, 8)
    st[0, ~st.any(axis=0)] = 1
    return np.ascontiguousarray(st.ravel())


def gauss(state: np.ndarray, n: int) -> np.ndarray:
    """``n`` float32 standard normals from the DP step's generator (``leakaudit_gauss_f32``), ``state`` advanced.

    The draws the DP step adds as noise, 16 at a time (xoshiro128** lanes, Box-Muller; see ``_mlp_native.c``):
    ``gauss(s, 16 k)`` then ``gauss(s, m)`` gives what ``gauss(s, 16 k + m)`` gives.
    """
    lib = library()
    if lib is None or not hasattr(lib, "leakaudit_gauss_f32"):  # pragma: no cover - callers check supports_dp()
        raise RuntimeError(f"native kernel unavailable: {KERNEL.reason}")
    if state.dtype != np.uint32 or state.size != 32 or not state.flags.c_contiguous:  # pragma: no cover
        raise ValueError("state must be noise_state()'s (32,) uint32 array")
    out = np.empty(int(n), np.float32)
    lib.leakaudit_gauss_f32(_ptr(state), _ptr(out), int(n))
    return out


def supports_dp_canaries() -> bool:
    """Whether the compiled DP step takes gradient canaries (``leakaudit_dp_abi() >= 2``; a library built before
    them has no such function and would ignore the canary fields)."""
    lib = library()
    return lib is not None and hasattr(lib, "leakaudit_dp_abi") and int(lib.leakaudit_dp_abi()) >= 2


def supports_dp() -> bool:
    """Whether the compiled kernel has the DP-SGD step (``leakaudit_dp_train_1h_f32``; a library built from an
    older source has not, and DPSGD then trains with torch)."""
    lib = library()
    return lib is not None and hasattr(lib, "leakaudit_dp_train_1h_f32")


def first_layer(indptr, indices, values, W, b, out, n_threads=None) -> None:
    """``out[k, i] = b[k] + sum over row i's listed inputs c of values * W[k, c]``, model by model over threads.

    CSR rows of :func:`csr_rows`; W (K, d, H), b (K, H), out (K, n, H), float32, C-contiguous.
    Each row's inputs are added in their listed order, so a row's outputs do not
    depend on the rows queried with it or on the threads.
    """
    lib = _loaded()
    K, n, H = out.shape
    for a in (W, b, out, values):
        if a.dtype != np.float32 or not a.flags.c_contiguous:  # pragma: no cover - the caller's contract
            raise ValueError("first_layer needs C-contiguous float32 arrays")

    def one(k):
        if lib.leakaudit_first_layer_1h_f32(int(H), _ptr(W[k]), _ptr(b[k]), _ptr(indptr), _ptr(indices),
                                            _ptr(values), int(n), _ptr(out[k])) < 0:  # pragma: no cover
            raise RuntimeError(f"native kernel has no copy for hidden width {H}")

    for_each_model(one, K, n_threads)


def dense_layer(x, W, b, out, n_threads=None) -> None:
    """``out[k, i] = b[k] + sum over inputs c with x[., i, c] != 0 of x[., i, c] * W[k, c]``, c ascending.

    x (1 or K, n, d) (1: the same inputs for every net), W (K, d, H), b (K, H), out (K, n, H), float32,
    C-contiguous; model by model over threads. The sums of :func:`first_layer` on the CSR rows of x, so a
    row's outputs do not depend on the rows queried with it, on the threads, or on how x is stored.
    """
    lib = _loaded()
    K, n, H = out.shape
    d = W.shape[1]
    for a in (x, W, b, out):
        if a.dtype != np.float32 or not a.flags.c_contiguous:  # pragma: no cover - the caller's contract
            raise ValueError("dense_layer needs C-contiguous float32 arrays")

    def one(k):
        xk = x[0] if x.shape[0] == 1 else x[k]
        if lib.leakaudit_dense_layer_f32(int(H), _ptr(W[k]), _ptr(b[k]), _ptr(xk), int(n), int(d),
                                         _ptr(out[k])) < 0:  # pragma: no cover
            raise RuntimeError(f"native kernel has no copy for hidden width {H}")

    for_each_model(one, K, n_threads)


def layer(x, W, b, out, n_threads=None) -> None:
    """:func:`dense_layer` for any width and for float32 or float64: the same rule (``b`` + the non-zero inputs'
    products, in ascending order; a row's outputs independent of the other rows), plain loops.

    x (1 or K, n, d), W (K, d, H), b (K, H), out (K, n, H), all of one dtype (float32 or float64), C-contiguous.
    """
    lib = _loaded()
    K, n, H = out.shape
    d = W.shape[1]
    fn = lib.leakaudit_layer_f32 if out.dtype == np.float32 else lib.leakaudit_layer_f64
    for a in (x, W, b, out):
        if a.dtype != out.dtype or a.dtype not in (np.float32, np.float64) or not a.flags.c_contiguous:
            raise ValueError("layer needs C-contiguous arrays of one dtype, float32 or float64")  # pragma: no cover

    def one(k):
        xk = x[0] if x.shape[0] == 1 else x[k]
        fn(int(H), _ptr(W[k]), _ptr(b[k]), _ptr(xk), int(n), int(d), _ptr(out[k]))

    for_each_model(one, K, n_threads)

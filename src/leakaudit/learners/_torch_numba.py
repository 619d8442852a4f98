"""Compiled kernel for faithful (per-example SGD) training of many MLPs at once.

Approach 4a of ``notes/batched-training.md``: one compiled loop per model, the
models spread over threads with ``numba.prange``. Every model has its own row
order (any subset, any size), so no masking or shared order is needed; the
input layer reads and updates only the non-zero inputs of the current row
(exact: a zero input has a zero gradient, and ``w + (-lr) * 0 == w``).

Backprop is written by hand in the same order of operations as
``torch.optim.SGD`` after ``loss.backward()``: all gradients are taken at the
old weights, then ``p <- p - lr * (grad + weight_decay * p)``.

Parameter layout (one flat row of ``params`` per model): for layer l,
``W_l`` of shape (n_in, n_out) row-major at ``w_off[l]`` (one input's weights
are contiguous), then ``b_l`` of shape (n_out,) at ``b_off[l]``.
"""

from __future__ import annotations

import numpy as np

import os
import threading

try:  # numba is optional: without it the torch kernel in _torch_batched is used
    import numba
    from numba import njit, prange

    HAVE_NUMBA = True
    # numba's default "omp" layer (GNU OpenMP) kills any child forked after a parallel call
    # ("fork() called from a process already using GNU OpenMP"), which breaks process pools
    # (multiprocessing "fork"). The built-in workqueue layer is fork-safe and as fast for this
    # one-loop-over-models kernel; it is not thread-safe, hence KERNEL_LOCK. An explicit
    # NUMBA_THREADING_LAYER set by the user wins.
    if "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = "workqueue"
except ImportError:  # pragma: no cover - exercised only without numba
    HAVE_NUMBA = False

#: serialises kernel launches (the workqueue layer must not be entered from two threads at once)
KERNEL_LOCK = threading.Lock()

__all__ = ["HAVE_NUMBA", "KERNEL_LOCK", "sgd_train_many", "sgd_train_many_1h", "TANH_COEFS", "set_threads",
           "tanh_inplace"]

# Rational minimax approximation of tanh on [-7.9053, 7.9053] (Eigen's
# ``generic_fast_tanh_float``): tanh(x) = x * P(x^2) / Q(x^2); measured error at most 4.4 ulp
# of float32 (near |x| = 5.7; tests/learners/test_mlp_numba.py). Used for float32 only (a plain
# ``tanh`` call blocks vectorisation); float64 uses the exact ``np.tanh``.
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


def set_threads(n: int | None) -> int:
    """Set numba's thread count (None: all it was started with); return the old one."""
    old = numba.get_num_threads()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS if n is None else max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    return old


if HAVE_NUMBA:

    @njit(fastmath=True, error_model="numpy", cache=True, inline="always")
    def _fast_tanh(x, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12):
        xc = min(max(x, -c0), c0)  # branch-free clamps and select: the loops calling this vectorise fully
        x2 = xc * xc
        p = x2 * c7 + c6
        p = x2 * p + c5
        p = x2 * p + c4
        p = x2 * p + c3
        p = x2 * p + c2
        p = x2 * p + c1
        p = xc * p
        q = x2 * c11 + c10
        q = x2 * q + c9
        q = x2 * q + c8
        return x if abs(x) < c12 else p / q

    @njit(fastmath=True, error_model="numpy", cache=True, nogil=True)
    def tanh_inplace(z, coefs):
        """``z[i] = tanh(z[i])`` by the rational approximation above, for a flat float32 array z.

        The batched torch trainer's float32 tanh (``_torch_batched``): torch's own CPU tanh goes
        through MKL's vector math, which runs ~2.5 ns an element on AMD CPUs, 6x slower than
        ``sigmoid``; this loop vectorises (measured in benchmarks/README.md, session 6).
        """
        c0, c1, c2, c3, c4, c5, c6 = coefs[0], coefs[1], coefs[2], coefs[3], coefs[4], coefs[5], coefs[6]
        c7, c8, c9, c10, c11, c12 = coefs[7], coefs[8], coefs[9], coefs[10], coefs[11], coefs[12]
        for i in range(z.shape[0]):
            z[i] = _fast_tanh(z[i], c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12)

    @njit(parallel=True, fastmath=True, error_model="numpy", cache=True)
    def sgd_train_many(
        params,  # (K, P) float32/float64, updated in place
        indptr,  # (n+1,) int64: CSR rows of X (the entries each row trains on)
        indices,  # (nnz,) int64 column indices
        values,  # (nnz,) same dtype as params
        y,  # (n,) int64 labels
        order,  # (sum of subset sizes,) int64: each model's row order, concatenated
        order_ptr,  # (K+1,) int64: model k's order is order[order_ptr[k]:order_ptr[k+1]]
        sizes,  # (L+1,) int64: n_in, hidden..., n_classes
        w_off,  # (L,) int64
        b_off,  # (L,) int64
        epochs,
        hyper,  # (2,) params dtype: lr, weight_decay
        activation,  # 0 tanh, 1 relu
        exact_tanh,  # bool: np.tanh (float64) or the rational approximation (float32)
        coefs,  # TANH_COEFS in params dtype
    ):
        K = params.shape[0]
        L = sizes.shape[0] - 1
        lr = hyper[0]
        wd = hyper[1]
        one = hyper[0] * 0 + 1
        zero = hyper[0] * 0
        c0, c1, c2, c3, c4, c5, c6 = coefs[0], coefs[1], coefs[2], coefs[3], coefs[4], coefs[5], coefs[6]
        c7, c8, c9, c10, c11, c12 = coefs[7], coefs[8], coefs[9], coefs[10], coefs[11], coefs[12]
        # offsets of each layer's outputs in the per-model activation buffers
        u_off = np.zeros(L + 1, dtype=np.int64)
        maxw = sizes[0]
        for l in range(L):
            u_off[l + 1] = u_off[l] + sizes[l + 1]
            if sizes[l + 1] > maxw:
                maxw = sizes[l + 1]
        S = u_off[L]
        for k in prange(K):
            p = params[k]
            z = np.empty(S, dtype=params.dtype)
            a = np.empty(S, dtype=params.dtype)
            g = np.empty(maxw, dtype=params.dtype)
            gp = np.empty(maxw, dtype=params.dtype)
            start = order_ptr[k]
            stop = order_ptr[k + 1]
            for _ in range(epochs):
                for t in range(start, stop):
                    r = order[t]
                    # ---- forward ----
                    for l in range(L):
                        nin = sizes[l]
                        nout = sizes[l + 1]
                        wo = w_off[l]
                        bo = b_off[l]
                        uo = u_off[l]
                        for j in range(nout):
                            z[uo + j] = p[bo + j]
                        if l == 0:
                            for q in range(indptr[r], indptr[r + 1]):
                                v = values[q]
                                base = wo + indices[q] * nout
                                for j in range(nout):
                                    z[uo + j] += v * p[base + j]
                        else:
                            pi = u_off[l - 1]
                            for i in range(nin):
                                ai = a[pi + i]
                                base = wo + i * nout
                                for j in range(nout):
                                    z[uo + j] += ai * p[base + j]
                        if l < L - 1:
                            if activation == 0:
                                if exact_tanh:
                                    for j in range(nout):
                                        a[uo + j] = np.tanh(z[uo + j])
                                else:
                                    for j in range(nout):
                                        a[uo + j] = _fast_tanh(z[uo + j], c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12)
                            else:
                                for j in range(nout):
                                    zz = z[uo + j]
                                    a[uo + j] = zz if zz > zero else zero
                    # ---- NLL of log-softmax: d loss / d logits = softmax - onehot(y) ----
                    C = sizes[L]
                    uo = u_off[L - 1]
                    m = z[uo]
                    for j in range(1, C):
                        if z[uo + j] > m:
                            m = z[uo + j]
                    s = zero
                    for j in range(C):
                        s += np.exp(z[uo + j] - m)
                    lse = m + np.log(s)
                    for j in range(C):
                        g[j] = np.exp(z[uo + j] - lse)
                    g[y[r]] -= one
                    # ---- backward + SGD update, last layer first ----
                    for l in range(L - 1, -1, -1):
                        nin = sizes[l]
                        nout = sizes[l + 1]
                        wo = w_off[l]
                        bo = b_off[l]
                        if l > 0:
                            pi = u_off[l - 1]
                            for i in range(nin):
                                base = wo + i * nout
                                acc = zero
                                for j in range(nout):
                                    acc += p[base + j] * g[j]  # old weights
                                ai = a[pi + i]
                                if activation == 0:
                                    gp[i] = acc * (one - ai * ai)
                                else:
                                    gp[i] = acc if z[pi + i] > zero else zero
                                for j in range(nout):
                                    p[base + j] -= lr * (ai * g[j] + wd * p[base + j])
                        else:
                            for q in range(indptr[r], indptr[r + 1]):
                                v = values[q]
                                base = wo + indices[q] * nout
                                for j in range(nout):
                                    p[base + j] -= lr * (v * g[j] + wd * p[base + j])
                        for j in range(nout):
                            p[bo + j] -= lr * (g[j] + wd * p[bo + j])
                        if l > 0:
                            for i in range(nin):
                                g[i] = gp[i]

    @njit(parallel=True, fastmath=True, error_model="numpy", cache=True)
    def sgd_train_many_1h(
        W1,  # (K, d, H), updated in place
        b1,  # (K, H)
        W2T,  # (K, C, H): the output layer's weight, transposed so loops over H are contiguous
        b2,  # (K, C)
        indptr,  # (n+1,) int64: CSR rows of X (non-zero inputs only)
        indices,  # (nnz,) int64
        values,  # (nnz,) params dtype
        y,  # (n,) int64
        order,  # concatenated per-model row orders, int64
        order_ptr,  # (K+1,) int64
        epochs,
        hyper,  # (1,) params dtype: lr
        activation,  # 0 tanh, 1 relu
        exact_tanh,
        coefs,
    ):
        """Specialised kernel for one hidden layer and no weight decay (the paper's net).

        Same computation as :func:`sgd_train_many`; the loops are ordered so
        that every inner loop runs over the H hidden units contiguously.
        """
        K, d, H = W1.shape
        C = W2T.shape[1]
        lr = hyper[0]
        one = hyper[0] * 0 + 1
        zero = hyper[0] * 0
        c0, c1, c2, c3, c4, c5, c6 = coefs[0], coefs[1], coefs[2], coefs[3], coefs[4], coefs[5], coefs[6]
        c7, c8, c9, c10, c11, c12 = coefs[7], coefs[8], coefs[9], coefs[10], coefs[11], coefs[12]
        for k in prange(K):
            w1 = W1[k]
            bb1 = b1[k]
            w2 = W2T[k]
            bb2 = b2[k]
            z = np.empty(H, W1.dtype)
            a = np.empty(H, W1.dtype)
            gh = np.empty(H, W1.dtype)
            g = np.empty(C, W1.dtype)
            lo = np.empty(C, W1.dtype)
            for _ in range(epochs):
                for t in range(order_ptr[k], order_ptr[k + 1]):
                    r = order[t]
                    # forward: z = b1 + sum over non-zero inputs of x_c * W1[c]
                    for j in range(H):
                        z[j] = bb1[j]
                    for q in range(indptr[r], indptr[r + 1]):
                        v = values[q]
                        c = indices[q]
                        for j in range(H):
                            z[j] += v * w1[c, j]
                    if activation == 0:
                        if exact_tanh:
                            for j in range(H):
                                a[j] = np.tanh(z[j])
                        else:
                            for j in range(H):
                                a[j] = _fast_tanh(z[j], c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12)
                    else:
                        for j in range(H):
                            a[j] = z[j] if z[j] > zero else zero
                    for cc in range(C):
                        s = bb2[cc]
                        for j in range(H):
                            s += a[j] * w2[cc, j]
                        lo[cc] = s
                    # d NLL(log_softmax) / d logits = softmax - onehot(y)
                    mx = lo[0]
                    for cc in range(1, C):
                        if lo[cc] > mx:
                            mx = lo[cc]
                    se = zero
                    for cc in range(C):
                        se += np.exp(lo[cc] - mx)
                    lse = mx + np.log(se)
                    for cc in range(C):
                        g[cc] = np.exp(lo[cc] - lse)
                    g[y[r]] -= one
                    # backward at the old weights, then the SGD step
                    for j in range(H):
                        gh[j] = zero
                    for cc in range(C):
                        gc = g[cc]
                        for j in range(H):
                            gh[j] += w2[cc, j] * gc
                    if activation == 0:
                        for j in range(H):
                            gh[j] *= lr * (one - a[j] * a[j])
                    else:
                        for j in range(H):
                            gh[j] = lr * gh[j] if z[j] > zero else zero
                    for cc in range(C):
                        gc = lr * g[cc]
                        for j in range(H):
                            w2[cc, j] -= a[j] * gc
                        bb2[cc] -= gc
                    for q in range(indptr[r], indptr[r + 1]):
                        v = values[q]
                        c = indices[q]
                        for j in range(H):
                            w1[c, j] -= v * gh[j]
                    for j in range(H):
                        bb1[j] -= gh[j]

else:  # pragma: no cover

    def sgd_train_many(*args, **kwargs):
        raise RuntimeError("numba is not installed")

    sgd_train_many_1h = sgd_train_many
    tanh_inplace = None  # the torch trainer then uses torch's tanh

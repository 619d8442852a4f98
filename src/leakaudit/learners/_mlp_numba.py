"""Compiled mini-batch trainer (Adam or SGD) for many one-hidden-layer MLPs.

The fast mode of :class:`~leakaudit.learners.TorchMLP` (issues 4 and 10): one
compiled loop trains one model's whole run, its parameters, gradient and Adam
moments (about 110 KB for Adult's 104-64-2 net) staying in the core's L1/L2
cache; models are spread over threads with ``numba.prange`` (one model = one
thread's sequential work, so results do not depend on the thread count).

Each step computes, for the rows of one mini-batch of model k (the rows of its
own order, or the member rows of a shared batch),

* forward: ``z = b1 + x W1`` from the listed inputs of each row (the non-zero
  ones on sparse data; a CSR row list), ``a = act(z)``, logits ``a W2 + b2``;
* the mean NLL of the log-softmax over the batch rows; its gradient in the
  logits is ``(softmax - onehot(y)) / n_rows``;
* backward by hand, all gradients at the old weights;
* the update of every weight, in ``torch.optim`` semantics:
  SGD ``p <- p - lr (g + wd p)``; Adam (Kingma & Ba 2015, Algorithm 1, with
  PyTorch's L2 ``weight_decay`` added to the gradient and ``eps`` outside the
  square root)::

      g <- g + wd p
      m <- m + (1 - beta1) (g - m)                 (torch's lerp)
      v <- beta2 v + (1 - beta2) g^2
      p <- p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

  with ``t`` the model's own step count (a model with no row in a shared batch
  takes no step).

Parameter layout: model k's parameters are row k of one (K, P') array (P' >= P, rows 64-byte aligned),
``[W1 (d, H) row-major | b1 (H) | W2^T (C, H) | b2 (C)]``, the output layer
stored transposed so that every inner loop runs over the H hidden units
contiguously (AVX-512 vectorises them); Adam's moments use the same layout.
:func:`pack_1h` / :func:`unpack_1h` convert from/to the learners' (n_in, n_out)
weights.

Floating point: ``fastmath`` is restricted to flags that keep one compiled
loop's result a fixed function of its inputs (``reassoc`` for the vectorised
dot products, ``contract`` for FMAs, ``nnan``/``ninf``/``nsz``); no
approximate square roots or reciprocals (``afn``/``arcp``), so the Adam update
and float64 runs stay IEEE-exact per operation. float32 uses the rational
``tanh`` of :mod:`._torch_numba` (<= 4.4 ulp), float64 the exact ``np.tanh``.

Speed (measured on this project's 2-core VM, Adult 104-64-2 tanh net, Adam,
batch 200, 14 non-zero inputs per row; CPU time per model and step, which
the two cores divide): ~120 us sparse (torch fast path: ~180 us), ~530 us
dense (torch: ~220 us, hence TorchMLP's backend="auto" keeps torch on dense
inputs). The work is two passes over the listed inputs of every row (forward
sums and weight-gradient scatter-adds, each a read-modify-write of 64 floats
in L1), which numba cannot keep in registers for a run-time H; those passes
are ~60 % of a step, Adam's update of every weight ~10 %. ``_mlp_native.c`` is this kernel's C
twin (float32, sparse rows): it keeps a row's hidden sums in vector registers, which numba cannot,
and TorchMLP uses it where it was built with the package (see ``TorchMLP(native=...)``).
"""

from __future__ import annotations

import numpy as np

from ._torch_numba import HAVE_NUMBA, KERNEL_LOCK, TANH_COEFS, set_threads

__all__ = ["HAVE_NUMBA", "KERNEL_LOCK", "TANH_COEFS", "set_threads", "minibatch_train_many_1h", "pack_1h",
           "unpack_1h", "csr_rows", "n_params_1h", "aligned_rows", "stacked_layer"]

#: fastmath flags of the kernel (see the module docstring)
FASTMATH = {"nnan", "ninf", "nsz", "contract", "reassoc"}


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


if HAVE_NUMBA:
    from numba import njit, prange

    from ._torch_numba import _fast_tanh

    @njit(parallel=True, fastmath=FASTMATH, error_model="numpy", cache=True)
    def minibatch_train_many_1h(
        params,  # (K, >=P) float32/float64: [W1 (d,H) | b1 (H) | W2^T (C,H) | b2 (C)], updated in place
        mom1,  # (K, >=P) Adam first moments (unused for SGD), updated
        mom2,  # (K, >=P) Adam second moments (unused for SGD), updated
        steps,  # (K,) int64 Adam step count of each model, updated
        indptr,  # (n+1,) int64 CSR rows of X (see csr_rows)
        indices,  # (nnz,) int64
        values,  # (nnz,) params dtype
        dense,  # bool: every row lists all d inputs in column order (csr_rows(X, sparse=False))
        y,  # (n,) int64 labels in 0..C-1
        order,  # (m,) int64 row orders of this block of epochs, as positions in model k's row map
        start,  # (K,) int64: model k's epoch e is order[start[k] + e*length[k] : ... + length[k]]
        rowmap,  # (M,) int64: row rowmap[rm_start[k] + order[q]] of X is model k's q-th row
        rm_start,  # (K,) int64 (a shared order: rowmap = arange(n), rm_start = 0)
        length,  # (K,) int64 rows per epoch of model k's order
        member,  # (K, n) uint8, read only when use_member: rows outside model k's subset are skipped
        use_member,  # bool
        n_epochs,  # epochs in this block
        batch_size,
        d,
        H,
        C,
        hyper,  # (6,) float64: lr, weight_decay, beta1, beta2, eps, 1.0 for a logistic output (else 0.0)
        adam,  # bool: Adam, else plain SGD
        activation,  # 0 tanh, 1 relu
        exact_tanh,  # bool: np.tanh (float64) or the rational approximation (float32)
        coefs,  # TANH_COEFS in params dtype
    ):  # pragma: no cover - compiled
        K = params.shape[0]
        P = d * H + H + C * H + C  # n_params_1h; rows of params may be longer (see aligned_rows)
        B = batch_size
        o_b1 = d * H
        o_w2 = o_b1 + H
        o_b2 = o_w2 + C * H
        c0, c1, c2, c3, c4, c5, c6 = coefs[0], coefs[1], coefs[2], coefs[3], coefs[4], coefs[5], coefs[6]
        c7, c8, c9, c10, c11, c12 = coefs[7], coefs[8], coefs[9], coefs[10], coefs[11], coefs[12]
        lr64 = hyper[0]
        logistic = hyper[5] != 0.0  # one logistic unit: class 0's logit held at 0, no gradient
        beta1 = hyper[2]
        beta2 = hyper[3]
        for k in prange(K):
            p = params[k]
            m1 = mom1[k]
            m2 = mom2[k]
            # scratch buffers starting on a 64-byte boundary (vector loads and stores that do not split cache
            # lines; the weight-gradient loop alone measured 15 % faster)
            buf = np.zeros(P + 16, params.dtype)
            grad = buf[(-buf.ctypes.data % 64) // buf.itemsize :][:P]
            # 2-D views of the layers: a flat index computed from a (signed) input number would make
            # numba's negative-index wraparound per element and block vectorisation (measured 4x slower)
            w1 = p[:o_b1].reshape((d, H))
            b1 = p[o_b1:o_w2]
            w2 = p[o_w2:o_b2].reshape((C, H))
            b2 = p[o_b2:]
            gw1 = grad[:o_b1].reshape((d, H))
            gb1 = grad[o_b1:o_w2]
            gw2 = grad[o_w2:o_b2].reshape((C, H))
            gb2 = grad[o_b2:]
            bufA = np.empty(B * H + 16, params.dtype)
            offA = (-bufA.ctypes.data % 64) // bufA.itemsize
            A = bufA[offA : offA + B * H].reshape((B, H))  # hidden activations of the batch rows
            G = np.empty((B, C), params.dtype)  # d loss / d logits
            bufZ = np.empty(B * H + 16, params.dtype)
            offZ = (-bufZ.ctypes.data % 64) // bufZ.itemsize
            GZ = bufZ[offZ : offZ + B * H].reshape((B, H))  # d loss / d z of the batch rows
            e_c = np.empty(C, params.dtype)
            rows = np.empty(B, np.int64)
            sc = np.empty(11, params.dtype)  # scalars in the params dtype (8..10: per-step values)
            sc[0] = 0.0
            sc[1] = 1.0
            sc[2] = hyper[1]  # weight decay
            sc[3] = 1.0 - beta1
            sc[4] = beta2
            sc[5] = 1.0 - beta2
            sc[6] = hyper[4]  # eps
            sc[7] = lr64
            zero, one, wd, omb1, b2c, omb2, eps, lr = sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6], sc[7]
            ln = length[k]
            rm0 = rm_start[k]
            for e in range(n_epochs):
                base = start[k] + e * ln
                for s in range(0, ln, B):
                    stop = min(s + B, ln)
                    cnt = 0
                    for q in range(base + s, base + stop):
                        r = rowmap[rm0 + order[q]]
                        if use_member and member[k, r] == 0:
                            continue
                        rows[cnt] = r
                        cnt += 1
                    if cnt == 0:  # no row of this model in the batch: no step
                        continue
                    sc[8] = 1.0 / cnt
                    inv = sc[8]
                    # ---- forward, first layer: A[i] = b1 + sum over listed inputs of x_c * W1[c] ----
                    for i in range(cnt):
                        r = rows[i]
                        q = indptr[r]
                        hi = indptr[r + 1]
                        if q + 4 <= hi:  # the first pass also writes the bias (one pass fewer over A[i])
                            v0, v1, v2, v3 = values[q], values[q + 1], values[q + 2], values[q + 3]
                            i0, i1, i2, i3 = indices[q], indices[q + 1], indices[q + 2], indices[q + 3]
                            for j in range(H):
                                A[i, j] = b1[j] + ((v0 * w1[i0, j] + v1 * w1[i1, j])
                                                   + (v2 * w1[i2, j] + v3 * w1[i3, j]))
                            q += 4
                        else:
                            for j in range(H):
                                A[i, j] = b1[j]
                        while q + 4 <= hi:  # four inputs per pass: a quarter of the loads/stores of A[i]
                            v0, v1, v2, v3 = values[q], values[q + 1], values[q + 2], values[q + 3]
                            i0, i1, i2, i3 = indices[q], indices[q + 1], indices[q + 2], indices[q + 3]
                            for j in range(H):
                                A[i, j] += (v0 * w1[i0, j] + v1 * w1[i1, j]) + (v2 * w1[i2, j] + v3 * w1[i3, j])
                            q += 4
                        while q < hi:
                            v0 = values[q]
                            i0 = indices[q]
                            for j in range(H):
                                A[i, j] += v0 * w1[i0, j]
                            q += 1
                    # ---- activation in place, one flat loop over the batch (the backward pass needs only a) ----
                    Af = bufA[offA : offA + cnt * H]
                    if activation == 0:
                        if exact_tanh:
                            for t in range(cnt * H):
                                Af[t] = np.tanh(Af[t])
                        else:
                            for t in range(cnt * H):
                                Af[t] = _fast_tanh(Af[t], c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12)
                    else:
                        for t in range(cnt * H):
                            if Af[t] < zero:
                                Af[t] = zero
                    # ---- logits, and d(mean NLL of log-softmax)/d logits = (softmax - onehot(y)) / cnt ----
                    if C == 2:  # both logits in one pass over a
                        for i in range(cnt):
                            l0 = zero
                            l1 = zero
                            for j in range(H):
                                a = A[i, j]
                                l0 += a * w2[0, j]
                                l1 += a * w2[1, j]
                            l0 += b2[0]
                            l1 += b2[1]
                            # softmax of two: the larger logit's exp(0) = 1 needs no exp call
                            if l0 > l1:
                                e1 = np.exp(l1 - l0)
                                se = one + e1
                                G[i, 0] = one / se
                                G[i, 1] = e1 / se
                            else:
                                e0 = np.exp(l0 - l1)
                                se = e0 + one
                                G[i, 0] = e0 / se
                                G[i, 1] = one / se
                            G[i, y[rows[i]]] -= one
                            if logistic:
                                G[i, 0] = zero
                            G[i, 0] *= inv
                            G[i, 1] *= inv
                    else:
                        for i in range(cnt):
                            mx = zero
                            for cc in range(C):
                                acc = zero
                                for j in range(H):
                                    acc += A[i, j] * w2[cc, j]
                                acc += b2[cc]
                                G[i, cc] = acc
                                if cc == 0 or acc > mx:
                                    mx = acc
                            se = zero
                            for cc in range(C):
                                e_c[cc] = np.exp(G[i, cc] - mx)
                                se += e_c[cc]
                            for cc in range(C):
                                G[i, cc] = e_c[cc] / se
                            G[i, y[rows[i]]] -= one
                            for cc in range(C):
                                G[i, cc] *= inv
                    # ---- backward (old weights), accumulated into grad, row by row ----
                    for i in range(cnt):
                        r = rows[i]
                        gz = GZ[i]
                        # gz = d loss / d a, then d loss / d z; the output layer's gradients
                        if C == 2:
                            g0 = G[i, 0]
                            g1 = G[i, 1]
                            for j in range(H):
                                a = A[i, j]
                                gz[j] = g0 * w2[0, j] + g1 * w2[1, j]
                                gw2[0, j] += g0 * a
                                gw2[1, j] += g1 * a
                            gb2[0] += g0
                            gb2[1] += g1
                        else:
                            for j in range(H):
                                gz[j] = zero
                            for cc in range(C):
                                g = G[i, cc]
                                for j in range(H):
                                    gz[j] += g * w2[cc, j]
                                for j in range(H):
                                    gw2[cc, j] += g * A[i, j]  # d loss / d W2^T
                                gb2[cc] += g
                        if activation == 0:
                            for j in range(H):
                                gz[j] *= one - A[i, j] * A[i, j]  # tanh' = 1 - a^2
                                gb1[j] += gz[j]
                        else:
                            for j in range(H):
                                if A[i, j] <= zero:  # relu' = [a > 0]
                                    gz[j] = zero
                                gb1[j] += gz[j]
                        if not dense:  # first layer: the listed inputs of the row
                            for q in range(indptr[r], indptr[r + 1]):
                                v0 = values[q]
                                i0 = indices[q]
                                for j in range(H):
                                    gw1[i0, j] += v0 * gz[j]
                    if dense:  # every row lists all d inputs: gW1[c] += sum_i x_ic gz_i, four rows per pass
                        for c in range(d):
                            i = 0
                            while i + 4 <= cnt:
                                v0 = values[indptr[rows[i]] + c]
                                v1 = values[indptr[rows[i + 1]] + c]
                                v2 = values[indptr[rows[i + 2]] + c]
                                v3 = values[indptr[rows[i + 3]] + c]
                                for j in range(H):
                                    gw1[c, j] += (v0 * GZ[i, j] + v1 * GZ[i + 1, j]) + (v2 * GZ[i + 2, j]
                                                                                        + v3 * GZ[i + 3, j])
                                i += 4
                            while i < cnt:
                                v0 = values[indptr[rows[i]] + c]
                                for j in range(H):
                                    gw1[c, j] += v0 * GZ[i, j]
                                i += 1
                    # ---- update every parameter; the gradient buffer is reset on the way ----
                    if adam:
                        steps[k] += 1
                        t = steps[k]
                        sc[9] = lr64 / (1.0 - beta1**t)  # step size lr / bias_correction1
                        sc[10] = np.sqrt(1.0 - beta2**t)  # sqrt(bias_correction2)
                        step_size = sc[9]
                        bc2s = sc[10]
                        for q in range(P):  # the L2 term wd * p is exactly 0 when weight decay is off
                            g = grad[q] + wd * p[q]
                            grad[q] = zero
                            mq = m1[q] + omb1 * (g - m1[q])
                            vq = b2c * m2[q] + omb2 * g * g
                            m1[q] = mq
                            m2[q] = vq
                            p[q] -= step_size * mq / (np.sqrt(vq) / bc2s + eps)
                    else:
                        for q in range(P):
                            p[q] -= lr * (grad[q] + wd * p[q])
                            grad[q] = zero

    @njit(parallel=True, fastmath={"contract"}, cache=True)
    def stacked_layer(h, W, b, out, block):  # pragma: no cover - compiled
        """``out[k, i] = b[k] + sum over inputs c with h[., i, c] != 0 of h[., i, c] * W[k, c]``, c ascending.

        One dense layer of K nets: h (1 or K, n, d) (1: the same inputs for every net), W (K, d, H),
        b (K, H), out (K, n, H), one dtype. Each output is summed over its inputs in column order, whatever
        the other rows queried or the threads, so a row's outputs do not depend on the rows queried with it
        (BLAS picks its kernel and blocking by the matrices' sizes: on AVX-512 OpenBLAS, 1 float32 ulp apart).
        For 8 or more outputs zero inputs are skipped (one-hot rows: the sums of the C twin on CSR rows); below
        that (a net's logits) the rows go 16 at a time through vector lanes and every input is added.
        """
        K = W.shape[0]
        n = out.shape[1]
        H = W.shape[2]
        d = W.shape[1]
        shared = h.shape[0] == 1
        nb = (n + block - 1) // block
        for t in prange(K * nb):
            k = t // nb
            lo = (t % nb) * block
            hi = min(n, lo + block)
            wk = W[k]
            bk = b[k]
            hk = h[0] if shared else h[k]
            if H >= 8:  # a row at a time, vectors along its outputs
                for i in range(lo, hi):
                    o = out[k, i]
                    x = hk[i]
                    for j in range(H):
                        o[j] = bk[j]
                    for c in range(d):
                        v = x[c]
                        if v != 0:
                            wc = wk[c]
                            for j in range(H):
                                o[j] += v * wc[j]
            else:  # few outputs (logits): 16 rows at a time, vectors along the rows (zeros added, not skipped)
                xt = np.empty((d, 16), out.dtype)
                acc = np.empty(16, out.dtype)
                for i0 in range(lo, hi, 16):
                    r = min(16, hi - i0)
                    for q in range(r):
                        for c in range(d):
                            xt[c, q] = hk[i0 + q, c]
                    for q in range(r, 16):
                        for c in range(d):
                            xt[c, q] = 0
                    for j in range(H):
                        for q in range(16):
                            acc[q] = bk[j]
                        for c in range(d):
                            w = wk[c, j]
                            xc = xt[c]
                            for q in range(16):
                                acc[q] += xc[q] * w
                        for q in range(r):
                            out[k, i0 + q, j] = acc[q]

else:  # pragma: no cover

    def minibatch_train_many_1h(*args, **kwargs):
        raise RuntimeError("numba is not installed")

    def stacked_layer(*args, **kwargs):
        raise RuntimeError("numba is not installed")

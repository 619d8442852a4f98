"""Multinomial logistic regression with L2, and fast leave-one-out.

Objective (scikit-learn's convention for ``LogisticRegression(C=...)``)::

    f(W, b) = 0.5 * ||W||_F^2 + C * sum_i -ln softmax(W x_i + b)[y_i]

with unpenalised intercepts, solved by our own Newton method (dense Hessian
for up to ``dense_max`` parameters, else conjugate gradients on Hessian-vector
products) with an Armijo line search, to ``||grad f||_inf <= tol * max(1, ||grad f(0)||_inf)``.
For three or more classes this is exactly scikit-learn's multinomial
``LogisticRegression(C=C)`` (tested). For two classes we keep the softmax
form with one weight row per class; it equals scikit-learn's binary model with
``C_sklearn = 2 C`` (the optimum has ``w_1 = -w_0``).

Intercepts are defined up to a common shift; we centre them (sum zero), so the
parameter vector ``u = (W, b)`` is unique, as Thm 6.9 of Long et al. needs.

Solvers of that objective (``solver``):

- ``"newton"`` (default): the Newton method above, to the relative gradient
  tolerance ``tol``; the leave-one-out paths below start from its solution.
- ``"lbfgs"``: scikit-learn's ``LogisticRegression`` (L-BFGS, its ``tol`` and
  ``max_iter``) on the same objective (``C_sklearn = 2 C`` for two classes), for
  many cheap fits on wide or SciPy sparse data (Chase et al.'s shadow models on
  one-hot Census rows and TF-IDF e-mails). scikit-learn fits only the classes a
  subset holds; a subset missing one of the ``n_classes`` (whose optimum then
  lies at infinity) is fitted by the Newton method instead, which stops where
  the gradient meets ``tol``.

``X`` may be a SciPy sparse matrix: ``"lbfgs"`` trains on it as it is, ``"newton"``
densifies each model's rows. :class:`LogisticRegressionBank` holds K fitted
models and checks a query once for all of them.

Leave-one-out (spec long-dtp.md §2.4, §8 "Efficiency"):

- ``method="newton"`` (exact): each ``T \\ {t}`` problem is solved to the same
  gradient tolerance as a fresh fit, starting from the full-data solution ``u``.
  By default all requested records are solved together (:func:`_loo_chord`):
  with ``f_{-t} = f - C ℓ_t``, the first step is the exact Newton step of every
  LOO problem at ``u``, whose Hessian ``H_{-t}(u) = H(u) - C J_t^T A_t J_t`` is a
  rank-(k-1) downdate of the one full-data Hessian (Woodbury / Sherman-Morrison:
  one factorisation for all records); later steps reuse that matrix with the
  exact LOO gradient (simplified Newton / chord iterations), computed for a
  block of records with two matrix products over T. A record whose gradient
  does not shrink by half per step is finished by the one-at-a-time damped
  Newton (``batched=False``, the reference path; also used when the dense
  Hessian is off, ``n_params > dense_max``). Both stop at the same tolerance,
  so both equal a fresh fit (tested to 1e-6 in probabilities).
- ``method="influence"`` (approximate; emits ApproximationWarning):
  ``u_{-t} ≈ u + H^{-1} C ∇ℓ_t(u)`` (influence function / one Newton step with the
  full-data Hessian H).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_matrix, check_scalar
from ..exceptions import ApproximationWarning, InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import Capabilities, Learner, ModelBank, check_feature_matrix, keep_params

__all__ = ["LogisticRegression", "LogisticRegressionBank", "LogisticRegressionModel"]

_CHORD_CONTRACTION = 0.5  # a batched step must at least halve max|grad|, else the record goes one-at-a-time
_BLOCK_ELEMENTS = 2 ** 21  # records per block: n * k * block <= this (keeps the (n, block, k) temporaries ~16 MB)


def _logsumexp_rows(Z: np.ndarray) -> np.ndarray:
    """``ln sum_c exp(Z[..., c])`` over the last axis, stable, shape ``Z.shape[:-1]``."""
    m = Z.max(axis=-1)
    return m + np.log(np.exp(Z - m[..., None]).sum(axis=-1))


def _softmax_inplace(Z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, overwriting ``Z``; returns ``Z``."""
    Z -= Z.max(axis=-1, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=-1, keepdims=True)
    return Z


def _augment(X: np.ndarray) -> np.ndarray:
    """``X~ = [X, 1]``, shape (n, d + 1): the intercept as a constant feature."""
    return np.concatenate([X, np.ones((X.shape[0], 1))], axis=1)


def _hessian_blocks(Xt: np.ndarray, P: np.ndarray, C: float) -> np.ndarray:
    """Hessian of ``0.5 ||W||^2 + C sum_i ℓ_i`` in the class-major layout ``theta[a] = (w_a, b_a)``.

    ``H[a, :, c, :] = C X~^T diag(P_a (δ_ac - P_c)) X~ (+ I on the weights when a = c)``.
    The per-row matrix ``diag(p) - p p^T`` has rows summing to 0, so the blocks of the
    last class follow from the others: k(k-1)/2 products instead of k(k+1)/2 (one for k = 2).

    Parameters
    ----------
    Xt : ndarray of shape (n, q)  (q = d + 1, last column ones)
    P : ndarray of shape (n, k)   softmax probabilities
    C : float

    Returns
    -------
    ndarray of shape (k, q, k, q)
    """
    n, q = Xt.shape
    k = P.shape[1]
    H = np.empty((k, q, k, q))
    XtT = Xt.T
    for a in range(k - 1):
        for c in range(a, k - 1):
            w = P[:, a] * (float(a == c) - P[:, c])
            blk = (XtT * (C * w)) @ Xt
            H[a, :, c, :] = blk
            if c != a:
                H[c, :, a, :] = blk.T
    last = -H[: k - 1, :, : k - 1, :].sum(axis=2)  # (k-1, q, q): H[a, :, k-1, :]
    H[: k - 1, :, k - 1, :] = last
    H[k - 1, :, : k - 1, :] = last.transpose(2, 0, 1)
    H[k - 1, :, k - 1, :] = -last.sum(axis=0).T
    d = q - 1
    for a in range(k):
        H[a, np.arange(d), a, np.arange(d)] += 1.0
    return H


class LogisticRegressionModel:
    """A fitted multinomial logistic regression.

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_features)
    intercept_ : ndarray of shape (n_classes,)  (centred: sums to 0)
    n_iter_ : int  Newton iterations used (batched leave-one-out: Newton/chord steps)

    ``centre=False`` keeps ``intercept`` as given (already centred: centring twice may change its last bits).
    """

    def __init__(self, coef: np.ndarray, intercept: np.ndarray, n_iter: int = 0, *, centre: bool = True):
        self.coef_ = coef
        self.intercept_ = intercept - intercept.mean() if centre else intercept
        self.n_iter_ = n_iter
        self.n_classes = coef.shape[0]
        self.n_features_in_ = coef.shape[1]

    @property
    def params(self) -> np.ndarray:
        """Parameter vector u = (W, b), shape (n_classes * (n_features + 1),)."""
        return np.concatenate([self.coef_.ravel(), self.intercept_])

    def decision_function(self, X: Any) -> np.ndarray:
        """Logits ``W x + b``, shape (n_samples, n_classes); X dense or SciPy sparse."""
        X = _check_query(X, self.n_features_in_)
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log-softmax, shape (n_samples, n_classes)."""
        return _log_proba(_check_query(X, self.n_features_in_), self.coef_, self.intercept_)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Softmax probabilities, shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.decision_function(X).argmax(axis=1)


def _log_softmax_inplace(z: np.ndarray) -> np.ndarray:
    """``z - logsumexp(z)`` over the last axis, overwriting ``z``; returns ``z``.

    Loops over the classes (numpy's reductions over a short last axis are slow); a model and a bank
    both use it, so their probabilities are the same bits.
    """
    k = z.shape[-1]
    m = z[..., 0].copy()
    for c in range(1, k):
        np.maximum(m, z[..., c], out=m)
    z -= m[..., None]
    total = np.exp(z[..., 0])
    for c in range(1, k):
        total += np.exp(z[..., c])
    z -= np.log(total)[..., None]
    return z


def _log_proba(X, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    """Log-softmax of the logits ``X coef^T + intercept`` of checked rows X, shape (n_samples, n_classes)."""
    return _log_softmax_inplace(np.asarray(X @ coef.T) + intercept)


def _check_query(X: Any, n_features: int):
    """A query matrix (dense, or CSR if sparse) with ``n_features`` columns."""
    X = check_feature_matrix(X, name="X", allow_empty=True, accept_sparse=True)
    if X.shape[1] != n_features:
        raise InvalidInputError(f"X has {X.shape[1]} features; the model was fitted on {n_features}")
    return X


class LogisticRegressionBank(ModelBank):
    """K fitted logistic regressions with the same classes and features, queried together.

    The input is checked once for all K models, and each model's probabilities are the bits
    its :class:`LogisticRegressionModel` gives.

    Parameters
    ----------
    coef : ndarray of shape (K, n_classes, n_features)
    intercept : ndarray of shape (K, n_classes)
        Each model's centred intercepts (sum 0), as :class:`LogisticRegressionModel` holds them.
    n_iter : ndarray of shape (K,), optional
        Solver iterations per model.
    """

    accepts_sparse = True

    def __init__(self, coef: np.ndarray, intercept: np.ndarray, n_iter: Any = None):
        self.coef_ = np.ascontiguousarray(coef, dtype=np.float64)
        self.intercept_ = np.ascontiguousarray(intercept, dtype=np.float64)
        self.n_models, self.n_classes, self.n_features_in_ = self.coef_.shape
        self.n_iter_ = np.zeros(self.n_models, np.int64) if n_iter is None else np.asarray(n_iter, np.int64)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log-softmax of every model, shape (K, n_samples, n_classes); X dense or SciPy sparse."""
        X = _check_query(X, self.n_features_in_)
        K, k, d = self.coef_.shape
        if not sp.issparse(X):
            # a BLAS product may round differently for another number of columns: one product per model
            out = np.empty((K, X.shape[0], k))
            for j in range(K):
                out[j] = _log_proba(X, self.coef_[j], self.intercept_[j])
            return out
        # a CSR product accumulates every output column in the same order whatever their number: one product for
        # all K models, then the row-wise steps of _log_proba (the same bits as each model alone, tested)
        z = np.asarray(X @ self.coef_.reshape(K * k, d).T).reshape(X.shape[0], K, k) + self.intercept_
        return _log_softmax_inplace(z).transpose(1, 0, 2)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Softmax probabilities of every model, shape (K, n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def model(self, k: int) -> LogisticRegressionModel:
        if not -self.n_models <= k < self.n_models:
            raise InvalidInputError(f"k={k} is out of range for a bank of {self.n_models} models")
        return LogisticRegressionModel(self.coef_[k].copy(), self.intercept_[k].copy(), int(self.n_iter_[k]),
                                       centre=False)


class _Problem:
    """f, gradient, Hessian (or Hessian-vector products) of the objective on rows (X, Y).

    Parameter vector ``u = (W row-major, b)``, length ``k (d + 1)``.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, k: int, C: float):
        self.X, self.y, self.k, self.C = X, y, k, C
        self.n, self.d = X.shape
        self.Y = np.eye(k)[y]
        self._Xt = None

    def unpack(self, u):
        W = u[: self.k * self.d].reshape(self.k, self.d)
        return W, u[self.k * self.d:]

    def _logits(self, u):
        W, b = self.unpack(u)
        return W, self.X @ W.T + b

    def value_grad(self, u):
        W, Z = self._logits(u)
        lse = _logsumexp_rows(Z)
        f = 0.5 * np.sum(W * W) + self.C * np.sum(lse - Z[np.arange(self.n), self.y])
        P = np.exp(Z - lse[:, None])
        G = self.C * (P - self.Y)
        gW = G.T @ self.X + W
        gb = G.sum(axis=0)
        return f, np.concatenate([gW.ravel(), gb]), P

    def hessp(self, P, v):
        VW, vb = self.unpack(v)
        dZ = self.X @ VW.T + vb
        dP = P * (dZ - np.sum(P * dZ, axis=1, keepdims=True))
        hW = self.C * dP.T @ self.X + VW
        hb = self.C * dP.sum(axis=0)
        return np.concatenate([hW.ravel(), hb])

    @property
    def Xt(self):
        if self._Xt is None:
            self._Xt = _augment(self.X)
        return self._Xt

    def hessian(self, P):
        """Dense Hessian, shape (k(d+1), k(d+1)), parameters ordered (W row-major, b)."""
        k, d = self.k, self.d
        H = _hessian_blocks(self.Xt, P, self.C).reshape(k * (d + 1), k * (d + 1))
        order = _theta_order(k, d)
        return H[np.ix_(order, order)]


def _theta_order(k: int, d: int) -> np.ndarray:
    """Positions in the class-major layout ``(k, d + 1)`` of the entries of ``u = (W row-major, b)``."""
    q = d + 1
    return np.concatenate([(np.arange(k)[:, None] * q + np.arange(d)[None, :]).ravel(), np.arange(k) * q + d])


def _u_to_theta(U: np.ndarray, k: int, d: int) -> np.ndarray:
    """``(..., k(d+1))`` parameter vectors ``(W row-major, b)`` -> class-major ``(..., k, d + 1)``."""
    lead = U.shape[:-1]
    W = U[..., : k * d].reshape(*lead, k, d)
    return np.concatenate([W, U[..., k * d:, None]], axis=-1)


def _theta_to_u(T: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_u_to_theta`."""
    lead = T.shape[:-2]
    return np.concatenate([T[..., :-1].reshape(*lead, -1), T[..., -1]], axis=-1)


def _newton(prob: _Problem, u0: np.ndarray, *, tol_abs: float, max_iter: int, dense_max: int) -> tuple[np.ndarray, int]:
    from scipy.sparse.linalg import LinearOperator, cg

    u = u0.copy()
    nparam = u.size
    kd = prob.k * prob.d
    f, g, P = prob.value_grad(u)
    for it in range(max_iter + 1):
        if np.max(np.abs(g)) <= tol_abs:
            return u, it
        if it == max_iter:
            break
        if nparam <= dense_max:
            H = prob.hessian(P)
            # the common intercept shift is a null direction (unpenalised, prediction-invariant): tiny ridge
            H[np.arange(kd, nparam), np.arange(kd, nparam)] += 1e-10 * max(1.0, prob.C * prob.n)
            try:
                step = np.linalg.solve(H, -g)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(H, -g, rcond=None)[0]
        else:
            op = LinearOperator((nparam, nparam), matvec=lambda v, P=P: prob.hessp(P, v), dtype=np.float64)
            gn = np.linalg.norm(g)
            step, _ = cg(op, -g, rtol=min(0.1, np.sqrt(gn) / max(1.0, gn)) if gn > 0 else 0.1, maxiter=200)
        slope = float(g @ step)
        if slope >= 0:  # not a descent direction (CG trouble): fall back to the gradient
            step, slope = -g, -float(g @ g)
        t = 1.0
        gmax = np.max(np.abs(g))
        while True:  # Armijo backtracking; the accepted point's gradient is kept for the next iteration
            f_new, g_new, P_new = prob.value_grad(u + t * step)
            if f_new <= f + 1e-4 * t * slope or t <= 1e-12:
                break
            # near the optimum the decrease of f falls below its rounding error (~eps |f|); there
            # accept a step that shrinks the gradient (as scikit-learn's Newton solvers do)
            if abs(f_new - f) <= 16 * np.finfo(float).eps * abs(f) and np.max(np.abs(g_new)) < gmax:
                break
            t *= 0.5
        u = u + t * step
        f, g, P = f_new, g_new, P_new
    warnings.warn(
        f"logistic regression did not converge in {max_iter} Newton iterations (max |grad| {np.max(np.abs(g)):.3g} > "
        f"{tol_abs:.3g}); raise max_iter or lower C", RuntimeWarning, stacklevel=3,
    )
    return u, max_iter


def _loo_gradients(Xt: np.ndarray, Y: np.ndarray, C: float, theta: np.ndarray, rec: np.ndarray) -> np.ndarray:
    """Gradients of the leave-one-out objectives ``f_{-t} = f - C ℓ_t`` for a block of records.

    ``∇f_{-t}(θ_t) = [W_t, 0] + C (P_t - Y)^T X~ - C (p_t(x~_t) - y_t) x~_t^T`` with
    ``P_t = softmax(X~ θ_t^T)`` over all n rows: two matrix products for the whole block
    (logits laid out (n, k, R) so the softmax runs on whole (n, R) slices; k = 2 by the logistic sigmoid).

    Parameters
    ----------
    Xt : ndarray of shape (n, q)      augmented features X~
    Y : ndarray of shape (n, k)       one-hot labels
    C : float
    theta : ndarray of shape (R, k, q)  one parameter set per record (class-major)
    rec : ndarray of shape (R,)        the record left out of each

    Returns
    -------
    ndarray of shape (R, k, q)
    """
    from scipy.special import expit

    n, q = Xt.shape
    R, k, _ = theta.shape
    Z = (Xt @ theta.transpose(1, 0, 2).reshape(k * R, q).T).reshape(n, k, R)
    if k == 2:
        p1 = expit(Z[:, 1] - Z[:, 0])
        Z[:, 1] = p1
        np.subtract(1.0, p1, out=Z[:, 0])
    else:
        m = Z[:, 0].copy()
        for c in range(1, k):
            np.maximum(m, Z[:, c], out=m)
        Z -= m[:, None, :]
        np.exp(Z, out=Z)
        tot = Z[:, 0].copy()
        for c in range(1, k):
            tot += Z[:, c]
        Z /= tot[:, None, :]
    own = Z[rec, :, np.arange(R)] - Y[rec]  # (R, k): record t's own residual under θ_t
    Z -= Y[:, :, None]
    G = (Z.reshape(n, k * R).T @ Xt).reshape(k, R, q).transpose(1, 0, 2)
    G -= own[:, :, None] * Xt[rec][:, None, :]
    G *= C
    G[:, :, :-1] += theta[:, :, :-1]
    return G


def _loo_chord(Xt: np.ndarray, Y: np.ndarray, C: float, theta_hat: np.ndarray, P_hat: np.ndarray,
               Minv: np.ndarray, rec: np.ndarray, tol_r: np.ndarray, max_steps: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched leave-one-out Newton: exact first Newton step, then chord steps, for a block of records.

    For record t, ``M_t = H_{-t}(θ̂) + α e e^T`` where ``H_{-t}(θ̂) = H(θ̂) - J_t^T A_t J_t``,
    ``J_t = I_k ⊗ x~_t^T`` (parameters -> logits of x~_t), ``A_t = C (diag(p̂_t) - p̂_t p̂_t^T)``,
    and ``e`` is the common intercept shift (a null direction of every H, orthogonal to every
    gradient). With ``B = M^{-1}`` of the full data (``Minv``), the push-through identity gives

        ``M_t^{-1} g = B g + V_t T_t (J_t B g)``,  ``V_t = B J_t^T``,  ``T_t = (I - A_t J_t V_t)^{-1} A_t``

    (Sherman-Morrison for k = 2). Each step is ``θ_t <- θ_t - M_t^{-1} ∇f_{-t}(θ_t)``: the first is
    Newton's step at θ̂ exactly; later ones keep ``M_t`` fixed (simplified Newton), and converge
    linearly to the same optimum because the gradient is exact.

    Parameters
    ----------
    Xt : (n, q); Y : (n, k); C : float
    theta_hat : (k, q)  the full-data solution (centred intercepts)
    P_hat : (n, k)      its probabilities on the training rows
    Minv : (k q, k q)   ``(H(θ̂) + α e e^T)^{-1}``, class-major layout
    rec : (R,)          records to leave out
    tol_r : (R,)        each LOO problem's stopping tolerance on max |gradient|
    max_steps : int

    Returns
    -------
    theta : (R, k, q)   the LOO solutions (where ``converged``), else the best iterate reached
    steps : (R,) int    steps taken
    converged : (R,) bool  False: the gradient stopped halving; finish this record one-at-a-time
    """
    n, q = Xt.shape
    k = Y.shape[1]
    p = k * q
    R = len(rec)
    xr = Xt[rec]
    pr = P_hat[rec]
    A = C * (pr[:, :, None] * (np.eye(k)[None] - pr[:, None, :]))  # (R, k, k)
    V = (Minv.reshape(p * k, q) @ xr.T).reshape(p, k, R).transpose(2, 0, 1)  # B J_t^T: (R, p, k)
    K = np.einsum("rajc,rj->rac", V.reshape(R, k, q, k), xr)  # J_t B J_t^T: (R, k, k)
    T = np.linalg.solve(np.eye(k)[None] - A @ K, A)  # (R, k, k)

    theta = np.repeat(theta_hat[None], R, axis=0)
    # at θ̂ every LOO gradient is the full-data gradient minus the record's own term
    G_hat = C * (P_hat - Y)
    g_full = G_hat.T @ Xt
    g_full[:, :-1] += theta_hat[:, :-1]
    g = g_full[None] - G_hat[rec][:, :, None] * xr[:, None, :]
    gmax = np.abs(g).max(axis=(1, 2))
    steps = np.zeros(R, dtype=np.int64)
    converged = gmax <= tol_r
    act = np.flatnonzero(~converged & np.isfinite(gmax))
    for _ in range(max_steps):
        if act.size == 0:
            break
        s = g[act].reshape(len(act), p) @ Minv  # B g (B symmetric)
        jbg = np.einsum("raj,rj->ra", s.reshape(len(act), k, q), xr[act])
        s += (V[act] @ (T[act] @ jbg[:, :, None]))[:, :, 0]
        new = theta[act] - s.reshape(len(act), k, q)
        new[:, :, -1] -= new[:, :, -1].mean(axis=1, keepdims=True)  # stay centred (exact in theory)
        gn = _loo_gradients(Xt, Y, C, new, rec[act])
        gnmax = np.abs(gn).max(axis=(1, 2))
        ok = np.isfinite(gnmax) & (gnmax <= _CHORD_CONTRACTION * gmax[act])
        acc = act[ok]
        theta[acc], g[acc], gmax[acc] = new[ok], gn[ok], gnmax[ok]
        steps[acc] += 1  # records failing the contraction test leave the batch unconverged
        converged[acc] = gmax[acc] <= tol_r[acc]
        act = acc[~converged[acc]]
    return theta, steps, converged


class LogisticRegression(Learner):
    """Multinomial logistic regression with L2 penalty, own Newton solver, fast leave-one-out.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength (scikit-learn's convention):
        minimise ``0.5 ||W||^2 + C sum_i loss_i``. The spec's default for Long
        et al.'s LR is weak regularisation, e.g. ``C >= 1e3``. For two classes
        this is scikit-learn's binary ``LogisticRegression(C=2 * C)``.
    tol : float, default=1e-8
        ``solver="newton"``: stop when ``||grad||_inf <= tol * max(1, ||grad at 0||_inf)``.
        ``solver="lbfgs"``: scikit-learn's ``tol`` (its default is 1e-4).
    max_iter : int, default=100
        Newton iterations, or L-BFGS iterations.
    dense_max : int, default=2000
        Largest number of parameters for which Newton uses the dense Hessian
        (else conjugate gradients on Hessian-vector products).
    blas_threads : int or None, default=1
        BLAS and OpenMP threads while solving (via threadpoolctl); None leaves
        the setting alone. The matrices are small: on a busy machine extra
        threads mostly spin.
    solver : {"newton", "lbfgs"}, default="newton"
        Our Newton method, or scikit-learn's L-BFGS (see the module docstring).
        The leave-one-out methods need "newton".

    Notes
    -----
    ``X`` may be a SciPy sparse matrix. :meth:`fit_many` returns a
    :class:`LogisticRegressionBank`, whose ``predict_proba`` has shape
    (K, n_samples, n_classes).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> bank = LogisticRegression(C=10.0).fit_many(X, y, [[0, 1, 2, 3], [1, 2]], [0, 1])
    >>> bank.predict_proba(X).shape
    (2, 4, 2)
    """

    accepts_sparse = True

    def __init__(self, *, C: float = 1.0, tol: float = 1e-8, max_iter: int = 100, dense_max: int = 2000,
                 blas_threads: int | None = 1, solver: str = "newton"):
        keep_params(self, locals())

    @classmethod
    def from_sklearn(cls, estimator: Any) -> LogisticRegression:
        """The LogisticRegression whose objective is that of ``estimator``, a fitted scikit-learn
        ``LogisticRegression``: then reference and leave-one-out models are solved by the Newton method (and its
        batched leave-one-out), exactly to ``tol``, instead of refitting scikit-learn once per model.

        The objectives agree when scikit-learn minimises ``0.5 ||W||^2 + C_sk sum_i loss_i`` with an unpenalised
        intercept: an L2 penalty only (``penalty="l2"``, or ``l1_ratio=0`` where ``penalty`` is deprecated), a
        finite C, ``fit_intercept=True``, no ``class_weight``, a solver other than ``"liblinear"`` (which
        penalises the intercept and fits one-vs-rest), and the multinomial loss for three or more classes. Then
        ``C = C_sk`` for three or more classes and ``C = C_sk / 2`` for two (scikit-learn's binary model has one
        weight vector; ours the softmax pair). scikit-learn's ``tol`` and ``max_iter`` do not change the
        objective, only how near its optimum the given model is; ours solves to ``tol=1e-8``. Sample weights
        given to ``fit`` cannot be seen in a fitted estimator; they are assumed absent.

        Raises
        ------
        UnsupportedError
            Naming every setting that makes the objectives differ (the caller keeps scikit-learn's own fit).
        """
        from sklearn.linear_model import LogisticRegression as SkLogisticRegression

        if not isinstance(estimator, SkLogisticRegression):
            raise UnsupportedError(f"estimator must be a scikit-learn LogisticRegression; got "
                                   f"{type(estimator).__name__}")
        p = estimator.get_params(deep=False)
        classes = getattr(estimator, "classes_", None)
        problems = []
        penalty, l1_ratio = p.get("penalty", "l2"), p.get("l1_ratio")
        no_l1 = l1_ratio is None or l1_ratio == 0
        if not ((penalty == "l2" and no_l1) or (penalty in ("deprecated", "elasticnet") and l1_ratio == 0)):
            problems.append(f"penalty={penalty!r} with l1_ratio={l1_ratio!r} (only an L2 penalty is solved here)")
        C = p.get("C")
        if not (isinstance(C, (int, float, np.integer, np.floating)) and 0 < C < np.inf):
            problems.append(f"C={C!r} (a finite positive C is needed: without a penalty the optimum may not exist)")
        if p.get("solver") == "liblinear":
            problems.append("solver='liblinear' (it penalises the intercept and fits one-vs-rest)")
        if not p.get("fit_intercept", True):
            problems.append("fit_intercept=False (the model here always has an unpenalised intercept)")
        if p.get("class_weight") is not None:
            problems.append(f"class_weight={p['class_weight']!r} (the loss here weighs every record equally)")
        if classes is None:
            problems.append("an unfitted estimator (its classes decide how C maps)")
        elif len(classes) > 2 and p.get("multi_class") == "ovr":
            problems.append("multi_class='ovr' (one-vs-rest; the loss here is multinomial)")
        if problems:
            raise UnsupportedError("LogisticRegression does not solve the objective of this estimator: "
                                   + "; ".join(problems))
        return cls(C=float(C) / 2 if len(classes) == 2 else float(C))

    family = "softmax-linear"

    @property
    def capabilities(self) -> Capabilities:
        """Both solvers are deterministic; the leave-one-out methods start from the Newton solution."""
        newton = self.solver == "newton"
        return Capabilities(loo="batched warm-started Newton leave-one-out (exact to solver tolerance)" if newton
                            else None, loo_models=newton, stochastic=False, state=True)

    def _threads(self):
        import contextlib

        if self.blas_threads is None:
            return contextlib.nullcontext()
        return _blas_controller().limit(limits=self.blas_threads)

    def validate_params(self) -> None:
        if self.blas_threads is not None:
            check_scalar(self.blas_threads, name="blas_threads", kind=int, min_val=1)
        check_scalar(self.C, name="C", min_val=0.0, include_min=False)
        check_scalar(self.tol, name="tol", min_val=0.0, include_min=False)
        check_scalar(self.max_iter, name="max_iter", kind=int, min_val=1)
        check_scalar(self.dense_max, name="dense_max", kind=int, min_val=0)
        check_choice(self.solver, name="solver", choices=("newton", "lbfgs"))

    def _tol_abs(self, prob: _Problem) -> float:
        # gradient at u = 0 in closed form: P = 1/k, so grad = C (1/k - Y)^T [X, 1]
        G0 = prob.C * (1.0 / prob.k - prob.Y)
        g0max = max(float(np.max(np.abs(G0.T @ prob.X), initial=0.0)), float(np.max(np.abs(G0.sum(axis=0)))))
        return self.tol * max(1.0, g0max)

    def _fit(self, X, y, *, random_state=None, n_classes=None, u0=None, tol_abs=None):
        with self._threads():
            return self._solve(X, y, int(n_classes), u0=u0, tol_abs=tol_abs)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes) -> LogisticRegressionBank:
        with self._threads():  # both solvers are deterministic: the seeds are not needed
            models = [self._solve(X[s], y[s], int(n_classes)) for s in subsets]
        return LogisticRegressionBank(np.stack([m.coef_ for m in models]), np.stack([m.intercept_ for m in models]),
                                      [m.n_iter_ for m in models])

    # -- SupportsState: the engine caches a bank's weights as arrays ----------------------------------------------
    def parameter_codec(self, X: Any = None, fitted: Any = None) -> tuple:
        """scikit-learn's parameter vector, so that MIP noise covers what the given model holds. Two classes: its one
        weight row and intercept, ``w_1 - w_0`` and ``b_1 - b_0`` of the softmax pair (d + 1 numbers); more: every
        row and intercept (k (d + 1))."""
        seen: dict = {}

        def extract(m):
            k = seen.setdefault("k", m.coef_.shape[0])
            if k == 2:
                return np.r_[m.coef_[1] - m.coef_[0], m.intercept_[1] - m.intercept_[0]]
            return np.r_[m.coef_.ravel(), m.intercept_]

        def rebuild(v):
            v, k = np.asarray(v, dtype=float), seen["k"]
            if k == 2:
                w, b = v[:-1] / 2, v[-1] / 2
                return LogisticRegressionModel(np.stack([-w, w]), np.array([-b, b]))
            return LogisticRegressionModel(v[:-k].reshape(k, -1), v[-k:])

        return extract, rebuild

    def get_state(self, bank: LogisticRegressionBank) -> dict[str, np.ndarray]:
        """The bank's coefficients, intercepts and iteration counts as named arrays."""
        return {"coef": bank.coef_, "intercept": bank.intercept_, "n_iter": bank.n_iter_}

    def from_state(self, state: Mapping[str, np.ndarray]) -> LogisticRegressionBank:
        """The bank :meth:`get_state` described (the same probabilities, bit for bit)."""
        return LogisticRegressionBank(state["coef"], state["intercept"], state["n_iter"])

    def _solve(self, X, y, k: int, *, u0=None, tol_abs=None) -> LogisticRegressionModel:
        """One model on validated rows (X dense, or CSR for "lbfgs"), inside the thread limit."""
        if self.solver == "lbfgs" and u0 is None and np.unique(y).size == k:
            return self._lbfgs(X, y, k)
        if sp.issparse(X):
            X = X.toarray()
        prob = _Problem(X, y, k, float(self.C))
        if tol_abs is None:
            tol_abs = self._tol_abs(prob)
        start = np.zeros(prob.k * (prob.d + 1)) if u0 is None else u0
        u, it = _newton(prob, start, tol_abs=tol_abs, max_iter=self.max_iter, dense_max=self.dense_max)
        W, b = prob.unpack(u)
        return LogisticRegressionModel(W.copy(), b.copy(), it)

    def _lbfgs(self, X, y, k: int) -> LogisticRegressionModel:
        """scikit-learn's L-BFGS fit of every class of ``0..k-1`` (all present in y), in our parametrisation."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression as SkLogisticRegression

        est = SkLogisticRegression(C=2.0 * self.C if k == 2 else float(self.C), tol=self.tol, max_iter=self.max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # reported below, in the Newton path's words
            est.fit(X, y)
        n_iter = int(np.max(est.n_iter_))
        if n_iter >= self.max_iter:
            warnings.warn(f"logistic regression did not converge in {self.max_iter} L-BFGS iterations (tol "
                          f"{self.tol:g}); raise max_iter or lower C", RuntimeWarning, stacklevel=4)
        if k == 2:  # the binary model's one weight vector w is the softmax pair (-w / 2, w / 2)
            w, b = est.coef_[0] / 2, float(est.intercept_[0]) / 2
            return LogisticRegressionModel(np.stack([-w, w]), np.array([-b, b]), n_iter)
        return LogisticRegressionModel(est.coef_.copy(), est.intercept_.copy(), n_iter)

    # -- leave-one-out ------------------------------------------------------
    def _loo_newton_one_at_a_time(self, X, y, records, u, n_classes):
        """Reference path: a warm-started damped Newton fit on ``T \\ {t}`` per record."""
        everything = np.arange(len(X))
        out = []
        for t in records:
            keep = np.delete(everything, t)
            out.append(self._fit(X[keep], y[keep], n_classes=n_classes, u0=u))
        return out

    def _loo_newton_batched(self, X, y, records, full, n_classes):
        """All records' LOO solutions by :func:`_loo_chord`, unfinished ones one-at-a-time.

        Returns
        -------
        theta : ndarray of shape (R, k, d + 1)  class-major LOO parameters (centred intercepts)
        n_iter : ndarray of shape (R,)            steps per record (chord steps + any Newton iterations)
        n_fallback : int                          records finished one-at-a-time
        """
        k, (n, d) = n_classes, X.shape
        q, p = d + 1, n_classes * (d + 1)
        C = float(self.C)
        Xt = _augment(X)
        Y = np.eye(k)[y]
        theta_hat = np.concatenate([full.coef_, full.intercept_[:, None]], axis=1)  # centred
        P_hat = _softmax_inplace(Xt @ theta_hat.T)
        H = _hessian_blocks(Xt, P_hat, C).reshape(p, p)
        e = np.zeros((k, q))
        e[:, d] = 1.0 / np.sqrt(k)
        e = e.ravel()
        H += np.mean(np.diag(H)) * np.outer(e, e)  # the common intercept shift: H e = 0 -> α e e^T
        from scipy.linalg import LinAlgError, cho_factor, cho_solve

        try:
            Minv = cho_solve(cho_factor(H), np.eye(p))
        except LinAlgError:
            out = self._loo_newton_one_at_a_time(X, y, records, full.params, n_classes)
            return _u_to_theta(np.stack([m.params for m in out]), k, d), np.array([m.n_iter_ for m in out]), len(out)
        Minv = 0.5 * (Minv + Minv.T)
        G0 = C * (1.0 / k - Y)  # gradient at 0 of f_{-t}: C (1/k - Y)^T X~ minus row t's term
        g0_full = G0.T @ Xt  # (k, q)
        R = len(records)
        theta = np.empty((R, k, q))
        n_iter = np.zeros(R, dtype=np.int64)
        n_fallback = 0
        block = max(1, _BLOCK_ELEMENTS // (n * k))
        for s in range(0, R, block):
            rec = records[s:s + block]
            g0 = np.abs(g0_full[None] - G0[rec][:, :, None] * Xt[rec][:, None, :]).max(axis=(1, 2))
            tol_r = self.tol * np.maximum(1.0, g0)
            try:
                th, st, conv = _loo_chord(Xt, Y, C, theta_hat, P_hat, Minv, rec, tol_r, self.max_iter)
            except np.linalg.LinAlgError:  # a singular downdated Hessian: this block one-at-a-time
                th, st, conv = np.repeat(theta_hat[None], len(rec), axis=0), np.zeros(len(rec), np.int64), \
                    np.zeros(len(rec), bool)
            for j in np.flatnonzero(~conv):  # finish with the damped Newton of a fresh fit, from the best iterate
                keep = np.delete(np.arange(n), rec[j])
                m = self._fit(X[keep], y[keep], n_classes=k, u0=_theta_to_u(th[j]), tol_abs=float(tol_r[j]))
                th[j] = np.concatenate([m.coef_, m.intercept_[:, None]], axis=1)
                st[j] += m.n_iter_
                n_fallback += 1
            theta[s:s + len(rec)] = th
            n_iter[s:s + len(rec)] = st
        return theta, n_iter, n_fallback

    def _loo_theta(self, X, y, records, method, n_classes, batched):
        """(full model, class-major LOO parameters (R, k, d + 1), n_iter (R,), n_fallback)."""
        full = self._fit(X, y, n_classes=n_classes)
        k, d = n_classes, X.shape[1]
        R = len(records)
        if R == 0:
            return full, np.empty((0, k, d + 1)), np.zeros(0, dtype=np.int64), 0
        if method == "newton":
            if batched and k * (d + 1) <= self.dense_max:
                with self._threads():
                    return (full, *self._loo_newton_batched(X, y, records, full, n_classes))
            out = self._loo_newton_one_at_a_time(X, y, records, full.params, n_classes)
            return full, _u_to_theta(np.stack([m.params for m in out]), k, d), np.array([m.n_iter_ for m in out]), R
        warnings.warn(
            "influence-function leave-one-out is a first-order approximation of retraining; its error grows with the "
            "record's influence (use method='newton' for exact values)", ApproximationWarning, stacklevel=3,
        )
        with self._threads():
            deltas = self._influence_deltas(X, y, records, full.params, k, d)
        U = full.params[None] + deltas
        theta = _u_to_theta(U, k, d)
        theta[:, :, d] -= theta[:, :, d].mean(axis=1, keepdims=True)
        return full, theta, np.zeros(R, dtype=np.int64), 0

    def _loo_inputs(self, X, y, records, method, n_classes):
        if self.solver != "newton":
            raise InvalidParameterError(f"leave-one-out starts from the Newton solution and needs solver='newton'; "
                                        f"got solver={self.solver!r}")
        X, y, records, n_classes = self._check_loo_inputs(X, y, records, n_classes)
        check_choice(method, name="method", choices=("newton", "influence"))
        return X, y, records, n_classes

    def loo_models(self, X: Any, y: Any, records: Any = None, *, method: str = "newton",
                   n_classes: int | None = None, batched: bool = True
                   ) -> tuple[LogisticRegressionModel, list[LogisticRegressionModel]]:
        """The full model and one leave-one-out model per record.

        Parameters
        ----------
        X, y : the training set T
        records : array-like of int, optional (default: all rows)
        method : {"newton", "influence"}
            "newton": warm-started Newton on T\\{t} to the same tolerance as a
            fresh fit (exact up to solver tolerance). "influence": one linear
            step ``u + H^{-1} C ∇ℓ_t(u)`` (approximate, ApproximationWarning).
        batched : bool, default=True
            "newton" only: solve all records together (exact first Newton step by a
            low-rank downdate of the full Hessian, then chord steps; see the module
            docstring). False: one damped Newton fit per record (the reference path).

        Returns
        -------
        full : LogisticRegressionModel
        loo : list of LogisticRegressionModel, one per record
        """
        X, y, records, n_classes = self._loo_inputs(X, y, records, method, n_classes)
        full, theta, n_iter, _ = self._loo_theta(X, y, records, method, n_classes, batched)
        return full, [LogisticRegressionModel(th[:, :-1].copy(), th[:, -1].copy(), int(it))
                      for th, it in zip(theta, n_iter)]

    def _influence_deltas(self, X, y, records, u, k, d):
        """H^{-1} C ∇ℓ_t(u) for each record, shape (n_records, n_params)."""
        prob = _Problem(X, y, k, float(self.C))
        _, _, P = prob.value_grad(u)
        nparam = u.size
        G = prob.C * (P[records] - prob.Y[records])  # (R, k): gradient of C*loss_t w.r.t. logits
        grads = np.concatenate([(G[:, :, None] * X[records][:, None, :]).reshape(len(records), k * d), G], axis=1)
        if nparam <= self.dense_max:
            H = prob.hessian(P)
            H[np.arange(k * d, nparam), np.arange(k * d, nparam)] += 1e-10 * max(1.0, prob.C * prob.n)
            deltas = np.linalg.solve(H, grads.T).T
        else:
            from scipy.sparse.linalg import LinearOperator, cg

            op = LinearOperator((nparam, nparam), matvec=lambda v: prob.hessp(P, v), dtype=np.float64)
            deltas = np.stack([cg(op, g, rtol=1e-10, maxiter=1000)[0] for g in grads])
        return deltas  # removing t: u_{-t} ≈ u + H^{-1} C ∇ℓ_t(u)

    def loo_params(self, X: Any, y: Any, records: Any = None, *, method: str = "newton",
                   n_classes: int | None = None, batched: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Parameters u_T, shape (n_params,), and u_{T\\t} for each record, shape (n_records, n_params).

        Intercepts centred; parameters ordered (W row-major, b). See :meth:`loo_models`.
        """
        X, y, records, n_classes = self._loo_inputs(X, y, records, method, n_classes)
        full, theta, _, _ = self._loo_theta(X, y, records, method, n_classes, batched)
        return full.params, _theta_to_u(theta)

    def loo_proba(self, X: Any, y: Any, records: Any = None, *, X_query: Any = None, n_classes: int | None = None,
                  method: str = "newton", batched: bool = True, return_full: bool = False):
        """Leave-one-out probabilities (batched warm-started Newton, or the influence approximation).

        Returns
        -------
        ndarray of shape (n_records, n_classes) at each record's own x(t), or
        (n_records, n_query, n_classes) at ``X_query``. With ``return_full=True``, the pair
        (full model's outputs at the records (n_records, n_classes) or at ``X_query`` (n_query, n_classes),
        leave-one-out outputs): the full model is fitted once for both.
        """
        X, y, records, n_classes = self._loo_inputs(X, y, records, method, n_classes)
        Xq = None if X_query is None else check_matrix(X_query, name="X_query")
        if Xq is not None and Xq.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {Xq.shape[1]} features; X has {X.shape[1]}")
        full, theta, _, _ = self._loo_theta(X, y, records, method, n_classes, batched)
        R, k, q = theta.shape
        if Xq is None:
            Z = np.einsum("rkj,rj->rk", theta[:, :, :-1], X[records]) + theta[:, :, -1]
            loo = _softmax_inplace(Z)
        else:
            Z = (Xq @ theta[:, :, :-1].reshape(R * k, q - 1).T).reshape(len(Xq), R, k) + theta[None, :, :, -1]
            loo = _softmax_inplace(Z).transpose(1, 0, 2).copy()
        if return_full:
            return full.predict_proba(X[records] if Xq is None else Xq), loo
        return loo


_CONTROLLER = None


def _blas_controller():
    """One threadpoolctl controller for the process (building one inspects every loaded library)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER

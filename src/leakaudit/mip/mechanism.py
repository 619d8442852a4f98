"""Algorithm 1 of Izzo et al. ("MIP via noise addition").

* :func:`estimate_sigma` -- step 2-3 of Algorithm 1: per-coordinate M-th moment scales
  from ``B`` runs of the training algorithm on random halves.
* :func:`mip_noise_addition` -- Algorithm 1: train on a random half of the data and add
  Corollary 8's noise.
* :class:`LogisticRegressionTrainer` -- a vector-output training algorithm (weights and
  intercept of L2-regularised logistic regression) with a batched path for many halves.

A training algorithm is any callable ``train(X, y, idx, random_state) -> ndarray (d,)``;
optionally ``train_many(X, y, subsets, random_states) -> ndarray (K, d)`` runs many at
once (:func:`learner_train_many` builds one from a :class:`~leakaudit.learners.Learner`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import special

from .._random import RandomStateLike, check_random_state, seed_to_int, spawn_seeds
from .._validation import check_array, check_choice, check_scalar
from ..engine import Engine, resolve_engine
from ..exceptions import InvalidInputError, InvalidParameterError
from .noise import CONSTANTS, RADIALS, mip_noise
from .results import MIPRelease

__all__ = [
    "random_half",
    "estimate_sigma",
    "mip_noise_addition",
    "learner_train_many",
    "LogisticRegressionTrainer",
    "SIGMA_SPLITS",
]

SIGMA_SPLITS = ("half_of_train", "half_of_full")


# --------------------------------------------------------------------------- Algorithm 1
def random_half(n: int, random_state: RandomStateLike = None) -> np.ndarray:
    """A uniformly random subset of ``floor(n/2)`` of ``range(n)``, sorted (Definition 1)."""
    rng = check_random_state(random_state)
    return np.sort(rng.permutation(int(n))[: int(n) // 2])


def _run_many(train, train_many, X, y, subsets, seeds) -> np.ndarray:
    if train_many is not None:
        out = np.asarray(train_many(X, y, subsets, seeds), dtype=float)
    else:
        out = np.stack([np.asarray(train(X, y, s, r), dtype=float).ravel() for s, r in zip(subsets, seeds)])
    if out.ndim != 2 or out.shape[0] != len(subsets):
        raise InvalidInputError(f"the training algorithm must return one vector per subset; got shape {out.shape}")
    if not np.isfinite(out).all():
        raise InvalidInputError("the training algorithm returned non-finite parameters")
    return out


def estimate_sigma(
    train: Callable | None,
    X,
    y=None,
    *,
    pool=None,
    M: float = 2,
    B: int = 128,
    unbiased: bool = False,
    train_many: Callable | None = None,
    random_state: RandomStateLike = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Steps 2-3 of Algorithm 1: ``sigma_j = ((1/B) sum_i |theta_j^(i) - mean_j|^M)^(1/M)``.

    Each ``theta^(i)`` is the training algorithm's output on a uniformly random half of
    ``pool`` (row indices into ``X``; default all rows). Algorithm 1 uses halves of
    ``D_train``; Section 5.2 uses halves of the full data (see ``sigma_split`` of
    :func:`mip_noise_addition`). The paper's formula lacks the absolute value (erratum 10).

    Parameters
    ----------
    train : callable ``(X, y, idx, random_state) -> ndarray (d,)`` or None if ``train_many``
    X : array-like of shape (n, ...)
    y : array-like of shape (n,), optional
    pool : array-like of int, optional
    M : float >= 1
    B : int >= 2
    unbiased : bool, default=False
        Use ``1/(B-1)`` instead of ``1/B`` (the unbiased variance for M = 2).
    train_many : callable ``(X, y, subsets, random_states) -> ndarray (K, d)``, optional
    random_state : None, int or Generator

    Returns
    -------
    sigma : ndarray of shape (d,)
    thetas : ndarray of shape (B, d)
    """
    check_scalar(M, name="M", min_val=1.0)
    check_scalar(B, name="B", kind=(int, np.integer), min_val=2)
    if train is None and train_many is None:
        raise InvalidParameterError("pass train or train_many")
    n = len(X)
    pool = np.arange(n) if pool is None else np.asarray(pool, dtype=np.int64)
    rng = check_random_state(random_state)
    subsets = [pool[random_half(pool.size, rng)] for _ in range(int(B))]
    seeds = spawn_seeds(rng, int(B))
    thetas = _run_many(train, train_many, X, y, subsets, seeds)
    dev = np.abs(thetas - thetas.mean(axis=0)) ** float(M)
    denom = int(B) - 1 if unbiased else int(B)
    sigma = (dev.sum(axis=0) / denom) ** (1.0 / float(M))
    return sigma, thetas


def mip_noise_addition(
    train: Callable | None,
    X,
    y=None,
    *,
    eta: float,
    M: float = 2,
    B: int = 128,
    sigma=None,
    sigma_split: str = "half_of_train",
    radial: str = "laplace",
    constant: str = "cor11",
    unbiased: bool = False,
    safety_factor: float = 1.0,
    train_many: Callable | None = None,
    random_state: RandomStateLike = None,
) -> MIPRelease:
    """Algorithm 1 (Izzo et al.): release ``A(D_train) + X`` with Corollary 8's noise.

    1. ``D_train`` = a uniformly random half of the rows.
    2-3. ``sigma_j`` from ``B`` runs on random halves (:func:`estimate_sigma`), unless
       ``sigma`` is given as an a-priori bound.
    4. ``X = r U`` (:class:`~leakaudit.mip.noise.MIPNoise`), ``c`` from ``eta``, ``M``,
       ``constant``.
    5. Return ``A(D_train) + X``.

    Coordinates with ``sigma_j = 0`` do not vary over halves and leak nothing; they get
    no noise and are dropped from the norm (``d_eff``).

    Parameters
    ----------
    train : callable ``(X, y, idx, random_state) -> ndarray (d,)``
        The base algorithm (any real-vector output: weights, a covariance, a mean).
    X : array-like of shape (n, ...)
        The private data set D (rows are records).
    y : array-like of shape (n,), optional
    eta : float in (0, 1/2]
    M : float, default=2
    B : int, default=128 (the paper's experiments)
    sigma : array-like of shape (d,), optional
        A-priori moment bounds; skips estimation.
    sigma_split : {"half_of_train", "half_of_full"}, default="half_of_train"
        Halves of ``D_train`` (Algorithm 1; over-estimates sigma by about sqrt 2 for
        means, so it is conservative) or halves of the full data (Section 5.2).
    radial : {"laplace", "gamma"}, default="laplace"
    constant : {"cor11", "thm7", "tight", "tv"}, default="cor11"
        ``"tv"`` is our extension (docs/mip.md) and needs ``radial="gamma"`` for d > 1.
    unbiased : bool, default=False
    safety_factor : float >= 1, default=1
        Multiplies the estimated sigma (the theorem assumes a true upper bound).
    train_many : callable, optional
        Batched path ``(X, y, subsets, random_states) -> (K, d)``.
    random_state : None, int or Generator

    Returns
    -------
    MIPRelease
        ``theta_hat`` is the only field meant for publication.
    """
    check_scalar(eta, name="eta", min_val=0.0, max_val=0.5, include_min=False)
    check_choice(sigma_split, name="sigma_split", choices=SIGMA_SPLITS)
    check_choice(radial, name="radial", choices=RADIALS)
    check_choice(constant, name="constant", choices=CONSTANTS)
    check_scalar(safety_factor, name="safety_factor", min_val=1.0)
    n = len(X)
    if n < 4:
        raise InvalidInputError(f"X must hold at least 4 rows to split into halves; got {n}")
    if y is not None and len(y) != n:
        raise InvalidInputError(f"inconsistent numbers of samples: X={n}, y={len(y)}")
    seed = seed_to_int(random_state)
    rng = np.random.default_rng(seed)
    train_idx = random_half(n, rng)
    theta = _run_many(train, train_many, X, y, [train_idx], spawn_seeds(rng, 1))[0]
    if sigma is None:
        pool = train_idx if sigma_split == "half_of_train" else np.arange(n)
        sig, _ = estimate_sigma(
            train, X, y, pool=pool, M=M, B=B, unbiased=unbiased, train_many=train_many, random_state=rng
        )
        estimated = True
    else:
        sig = check_array(sigma, name="sigma", ndim=1)
        if sig.shape[0] != theta.shape[0]:
            raise InvalidInputError(f"sigma has {sig.shape[0]} entries but the algorithm outputs {theta.shape[0]}")
        estimated = False
    sig = sig * float(safety_factor)
    if (sig == 0).any():
        msg = f"{int((sig == 0).sum())} coordinate(s) have sigma = 0 (constant over halves); they get no noise"
        if estimated and sigma_split == "half_of_train":
            # sigma from halves of D_train depends on D_train: a coordinate that is constant on D_train
            # but not on D (e.g. a category held only by records outside D_train) is released without
            # noise and reveals that those records are not members (docs/mip.md, "sigma leak")
            msg += ("; with sigma_split='half_of_train' this can reveal membership (a coordinate constant on "
                    "D_train but not on D); sigma_split='half_of_full' depends on D only and does not leak")
        warnings.warn(msg, stacklevel=2)
    noise = mip_noise(sig, eta, M, radial=radial, constant=constant)
    x = noise.sample(1, rng)[0]
    return MIPRelease(
        theta_hat=theta + x,
        theta=theta,
        noise=x,
        sigma=sig,
        sigma_estimated=estimated,
        sigma_split=sigma_split if estimated else "given",
        B=int(B) if estimated else 0,
        eta=float(eta),
        M=float(M),
        c=noise.c,
        radial=radial,
        constant=constant,
        d=int(theta.shape[0]),
        d_eff=noise.d_eff,
        train_idx=train_idx,
        random_state=seed,
    )


def learner_train_many(learner, extract: Callable[[object], np.ndarray], *, n_classes: int | None = None,
                       engine: Engine | None = None) -> Callable:
    """A ``train_many`` from a :class:`~leakaudit.learners.Learner` and ``extract(model) -> vector``.

    The models are trained by ``engine`` (default :func:`leakaudit.engine.default_engine`: one ``fit_many``
    call, the learner's batched path if it has one).
    """
    engine = resolve_engine(engine)

    def train_many(X, y, subsets, random_states):
        bank = engine.fit_bank(learner, X, y, subsets, list(random_states), n_classes=n_classes)
        return np.stack([np.asarray(extract(bank.model(k)), dtype=float).ravel() for k in range(len(subsets))])

    return train_many


class LogisticRegressionTrainer:
    """L2-regularised binary logistic regression whose output is ``[w, b]`` (d = p + 1).

    Minimises ``mean_i log(1 + exp(-s_i (x_i.w + b))) + (alpha/2) ||w||^2`` (``s = 2y - 1``,
    intercept unpenalised) by damped Newton's method (backtracking line search), to a
    gradient of at most ``tol`` in every coordinate. Deterministic (the random state is
    ignored), so the moment scales of Algorithm 1 measure only the dependence on the half.

    ``__call__(X, y, idx, random_state)`` trains one model; :meth:`many` trains K models
    (the ``train_many`` path), sharing the intercept-augmented design matrix.

    Parameters
    ----------
    alpha : float, default=1e-3
        L2 strength (per-example average loss scale).
    tol : float, default=1e-9
        Convergence tolerance on the gradient's infinity norm.
    max_iter : int, default=100
        Newton iterations per model.
    """

    def __init__(self, *, alpha: float = 1e-3, tol: float = 1e-9, max_iter: int = 100):
        check_scalar(alpha, name="alpha", min_val=0.0, include_min=False)
        self.alpha = float(alpha)
        self.tol = float(tol)
        self.max_iter = int(max_iter)

    def __repr__(self) -> str:
        return f"LogisticRegressionTrainer(alpha={self.alpha}, tol={self.tol}, max_iter={self.max_iter})"

    def __call__(self, X, y, idx, random_state=None) -> np.ndarray:
        return self.many(X, y, [idx], [0])[0]

    def _check(self, X, y):
        X = check_array(X, name="X", ndim=2)
        y = np.asarray(y)
        if y.shape != (X.shape[0],) or not np.isin(y, (0, 1)).all():
            raise InvalidInputError("y must be a vector of 0/1 labels with one entry per row of X")
        return np.column_stack([X, np.ones(X.shape[0])]), y.astype(float)

    def _fit_one(self, Xb: np.ndarray, y: np.ndarray, init: np.ndarray | None = None) -> np.ndarray:
        m, q = Xb.shape
        reg = np.full(q, self.alpha)
        reg[-1] = 0.0  # intercept unpenalised
        sgn = 2.0 * y - 1.0

        def loss(th):
            return np.mean(np.logaddexp(0.0, -sgn * (Xb @ th))) + 0.5 * np.sum(reg * th * th)

        th = np.zeros(q) if init is None else init.copy()
        f = loss(th)
        for _ in range(self.max_iter):
            pr = special.expit(Xb @ th)
            g = Xb.T @ (pr - y) / m + reg * th
            if np.max(np.abs(g)) <= self.tol:
                break
            H = (Xb.T * (pr * (1.0 - pr))) @ Xb / m + np.diag(reg) + 1e-12 * np.eye(q)
            step = np.linalg.solve(H, g)
            t = 1.0
            while True:  # backtracking (Armijo) on the convex objective
                new = th - t * step
                f_new = loss(new)
                if f_new <= f - 1e-4 * t * (g @ step) or t < 1e-10:
                    break
                t *= 0.5
            th, f = new, f_new
        return th

    def many(self, X, y, subsets: Sequence, random_states=None) -> np.ndarray:
        """Train one model per subset; returns ndarray of shape (K, p + 1)."""
        Xb, yf = self._check(X, y)
        out = np.empty((len(subsets), Xb.shape[1]))
        init = None
        for k, s in enumerate(subsets):
            s = np.asarray(s, dtype=np.int64)
            if s.size == 0:
                raise InvalidInputError("every subset must hold at least one row")
            # warm start from the previous model: the optimum is unique, only the speed changes
            out[k] = init = self._fit_one(Xb[s], yf[s], init)
        return out

    def predict_proba(self, theta, X) -> np.ndarray:
        """Class probabilities of parameters ``theta`` (shape (p + 1,)) on ``X``; shape (n, 2)."""
        theta = np.asarray(theta, dtype=float)
        p1 = special.expit(np.asarray(X, dtype=float) @ theta[:-1] + theta[-1])
        return np.column_stack([1.0 - p1, p1])

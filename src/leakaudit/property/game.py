"""The property-inference game with poisoning, PIWP (Chase et al., Section IV; spec Sec. 1.5).

1. The challenger picks ``b`` uniformly and samples a clean set of ``(1 - p) n``
   records from ``D_{t_b}`` (a fraction ``t_b`` has the property).
2. The adversary sends ``p n`` poison points, chosen without seeing the clean set.
3. The challenger trains ``M`` on clean + poison.
4. The adversary queries ``M`` for labels only and outputs ``b'``; it wins iff ``b' = b``.

Data are plain arrays (:class:`PropertyData`): model inputs ``X`` (dense or
SciPy sparse), binary labels ``y`` and property bits ``f``. ``D+`` is the set of
rows with ``f = 1``, ``D-`` the rest.

Settings where the paper is ambiguous (spec Sec. 3.4), both configurable:

- ``poison_accounting``: "replace" (default; the game: ``n - round(p n)`` clean
  + ``round(p n)`` poison = n) or "add" (Algorithm 3: n clean + ``round(p n)`` poison).
- ``prevalence_sampling``: "exact" (default; ``round(t m)`` records with the
  property) or "binomial" (each record's bit ~ Bernoulli(t), Algorithm 3 line 1).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar
from ..engine import Engine, check_work, resolve_engine
from ..exceptions import ApproximationWarning, InvalidInputError, InvalidParameterError
from ..learners import LogisticRegression, TorchMLP
from ..learners import check_feature_matrix

__all__ = [
    "PropertyData",
    "Poison",
    "split_pools",
    "n_poison",
    "n_clean",
    "sample_world",
    "sample_mixture",
    "train_and_query",
    "play_game",
    "GameOutcome",
    "logistic_learner",
    "mlp_learner",
]

def logistic_learner() -> LogisticRegression:
    """The paper's learner (spec Sec. 4.4): L2 logistic regression as scikit-learn fits it by default.

    scikit-learn's ``LogisticRegression`` (lbfgs, C = 1, tol 1e-4) with up to 1,000 iterations,
    on SciPy sparse rows as they are; ``C = 0.5`` in :class:`~leakaudit.learners.LogisticRegression`'s
    two-class convention is scikit-learn's ``C = 1``. The default learner of the attack.
    """
    return LogisticRegression(C=0.5, solver="lbfgs", tol=1e-4, max_iter=1000)


def mlp_learner(hidden: tuple[int, ...] = (32, 16, 8), *, epochs: int = 50, lr: float = 1e-3,
                batch_size: int = 64) -> TorchMLP:
    """The paper's fully connected networks (spec Sec. 4.4 [Choice]): ReLU, Adam, minibatches of 64, cross-entropy.

    Fig. 1's Census MLP is ``hidden=(32, 16, 8)``; Table II sweeps the depth. The bank's
    ``weights_`` (K, fan_in, fan_out) give Ganju et al.'s white-box baseline its features.
    """
    return TorchMLP(hidden=tuple(hidden), activation="relu", mode="fast", optimizer="adam", epochs=epochs, lr=lr,
                    batch_size=batch_size)


POISON_ACCOUNTING = ("replace", "add")
PREVALENCE_SAMPLING = ("exact", "binomial")


@dataclass(frozen=True)
class PropertyData:
    """Records for property inference.

    Attributes
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_records, n_features)
        Model inputs (encoded).
    y : ndarray of int, shape (n_records,)
        Binary labels 0/1.
    f : ndarray of bool, shape (n_records,)
        The property of each record.
    name : str
    """

    X: Any
    y: np.ndarray
    f: np.ndarray
    name: str = "data"

    def __post_init__(self):
        X = check_feature_matrix(self.X, name="X", accept_sparse=True)
        y = np.asarray(self.y)
        f = np.asarray(self.f)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise InvalidInputError(f"y must have shape ({X.shape[0]},); got {y.shape}")
        if f.shape != y.shape:
            raise InvalidInputError(f"f must have shape ({X.shape[0]},); got {f.shape}")
        if not np.isin(y, (0, 1)).all():
            raise InvalidInputError("y must hold binary labels 0/1 (the paper's setting)")
        if f.dtype != bool:
            if not np.isin(f, (0, 1)).all():
                raise InvalidInputError("f must hold 0/1 or booleans")
            f = f.astype(bool)
        if f.all() or not f.any():
            raise InvalidInputError("f must hold both values: D+ and D- must be non-empty")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y.astype(np.int64))
        object.__setattr__(self, "f", f)

    def __len__(self) -> int:
        return self.X.shape[0]

    def rows(self, idx: np.ndarray):
        """Model inputs of rows ``idx``."""
        return self.X[np.asarray(idx)]


@dataclass(frozen=True)
class Poison:
    """The adversary's poison: records' inputs with one forced label (Algorithm 1).

    Attributes
    ----------
    X : ndarray or sparse matrix of shape (m, n_features)
    label : int
        The label ``l`` given to every poison point.
    indices : ndarray of shape (m,)
        Rows of the adversary's data the inputs were taken from.
    subpopulation : {"f", "1-f"}
        ``D+`` ("f") or ``D-`` ("1-f").
    alpha : float
        Label mean of the sampled records (Algorithm 1 line 7; NaN if m = 0).
    variant : str
        "X+1", "X+0", "X-1" or "X-0".
    """

    X: Any
    label: int
    indices: np.ndarray
    subpopulation: str
    alpha: float
    variant: str

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    @property
    def y(self) -> np.ndarray:
        return np.full(len(self), self.label, dtype=np.int64)


def check_rate(p: float, name: str = "poison_rate") -> float:
    check_scalar(p, name=name, min_val=0.0, max_val=1.0, include_max=False)
    return float(p)


def n_poison(n: int, p: float) -> int:
    """Number of poison points, ``round(p n)`` (spec Alg. 1 line 2 [Choice])."""
    return int(round(check_rate(p) * n))


def n_clean(n: int, p: float, accounting: str = "replace") -> int:
    """Number of clean points: ``n - round(p n)`` ("replace", the game) or ``n`` ("add", Alg. 3)."""
    check_choice(accounting, name="poison_accounting", choices=POISON_ACCOUNTING)
    return n - n_poison(n, p) if accounting == "replace" else n


def split_pools(n_records: int, *, adversary_fraction: float = 1 / 3, random_state: RandomStateLike = None):
    """Split rows into the adversary's pool (~1/3) and the victim's pool (spec Sec. 4.5).

    Returns
    -------
    (adversary_idx, victim_idx) : two disjoint sorted index arrays
    """
    check_scalar(adversary_fraction, name="adversary_fraction", min_val=0.0, max_val=1.0,
                 include_min=False, include_max=False)
    rng = check_random_state(random_state)
    perm = rng.permutation(int(n_records))
    k = int(round(adversary_fraction * n_records))
    return np.sort(perm[:k]), np.sort(perm[k:])


def _draw(pool: np.ndarray, k: int, rng: np.random.Generator, what: str) -> np.ndarray:
    """``k`` rows of ``pool``, without replacement when the pool is large enough."""
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if pool.size == 0:
        raise InvalidInputError(f"cannot draw {k} records from an empty {what}")
    if k <= pool.size:
        return rng.choice(pool, size=k, replace=False)
    warnings.warn(
        f"{what} has {pool.size} records but {k} are needed; drawing with replacement",
        ApproximationWarning, stacklevel=3,
    )
    return rng.choice(pool, size=k, replace=True)


def sample_world(
    pos: np.ndarray, neg: np.ndarray, size: int, t: float, *, sampling: str = "exact",
    random_state: RandomStateLike = None,
) -> np.ndarray:
    """Indices of a dataset of ``size`` records from ``D_t = t D+ + (1 - t) D-``.

    Parameters
    ----------
    pos, neg : ndarray of int
        Rows with / without the property (the ``D+`` and ``D-`` pools).
    size : int
    t : float in [0, 1]
    sampling : {"exact", "binomial"}
        "exact": ``round(t size)`` rows from ``pos``; "binomial": that count ~ Binomial(size, t).
        Rows are drawn without replacement within one dataset (with replacement, and an
        ``ApproximationWarning``, only if a pool is too small).

    Returns
    -------
    ndarray of int, shape (size,)
    """
    check_scalar(t, name="t", min_val=0.0, max_val=1.0)
    check_choice(sampling, name="prevalence_sampling", choices=PREVALENCE_SAMPLING)
    rng = check_random_state(random_state)
    k = int(round(t * size)) if sampling == "exact" else int(rng.binomial(size, t))
    idx = np.concatenate([_draw(pos, k, rng, "D+ pool"), _draw(neg, size - k, rng, "D- pool")])
    return rng.permutation(idx)


def sample_mixture(pos: np.ndarray, neg: np.ndarray, size: int, *, random_state: RandomStateLike = None):
    """A dataset half from ``D+`` and half from ``D-`` (Algorithm 2 line 1)."""
    rng = check_random_state(random_state)
    k = size // 2
    return rng.permutation(np.concatenate([_draw(pos, k, rng, "D+ pool"), _draw(neg, size - k, rng, "D- pool")]))


def sample_worlds(data: PropertyData, pool: np.ndarray, size: int, ts, *, sampling: str = "exact",
                  rng: np.random.Generator) -> tuple[list[np.ndarray], list[int]]:
    """A training set of ``size`` rows of ``pool`` from ``D_t`` for each ``t`` of ``ts`` (:func:`sample_world`),
    then a model seed for each: ``(sets, seeds)``."""
    pool = np.asarray(pool)
    pos, neg = pool[data.f[pool]], pool[~data.f[pool]]
    sets = [sample_world(pos, neg, size, t, sampling=sampling, random_state=rng) for t in ts]
    return sets, [int(s) for s in rng.integers(0, 2**31 - 1, size=len(sets))]


def _stack(X, Xp):
    if Xp is None or Xp.shape[0] == 0:
        return X
    if sp.issparse(X):
        return sp.vstack([X, sp.csr_matrix(Xp)], format="csr")
    return np.vstack([X, np.asarray(Xp)])


def train_and_query(
    learner: Any, data: PropertyData, clean_sets: list[np.ndarray], poison: Poison | None, X_query: Any,
    *, seeds: list[int], batch_size: int = 100, engine: Engine | None = None,
) -> np.ndarray:
    """Train one model per clean set (plus the poison) and return its labels on ``X_query``.

    This is label-only access: only ``argmax`` predictions leave this function. The models are trained by
    ``engine`` (:meth:`~leakaudit.engine.Engine.predict_many`, one call per batch), on the sparse rows as
    they are.

    Parameters
    ----------
    learner : leakaudit Learner
    data : PropertyData
    clean_sets : list of K index arrays into ``data``
    poison : Poison or None
        Added to every training set.
    X_query : matrix of shape (m, n_features)
    seeds : list of K ints
    batch_size : int
        Models per engine call (bounds memory; with the default engine, one ``fit_many`` call each).
    engine : leakaudit.engine.Engine, optional
        Trains the models; default :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    ndarray of int8, shape (K, m)
    """
    engine = resolve_engine(engine)
    n = len(data)
    Xa = _stack(data.X, None if poison is None else poison.X)
    ya = data.y if poison is None or len(poison) == 0 else np.concatenate([data.y, poison.y])
    extra = np.arange(n, Xa.shape[0])
    out = np.empty((len(clean_sets), X_query.shape[0]), dtype=np.int8)
    for start in range(0, len(clean_sets), batch_size):
        chunk = clean_sets[start : start + batch_size]
        subsets = [np.concatenate([np.asarray(s, dtype=np.int64), extra]) for s in chunk]
        probs = engine.predict_many(learner, Xa, ya, subsets, list(seeds[start : start + len(chunk)]), X_query,
                                    n_classes=2)
        out[start : start + len(chunk)] = probs.argmax(axis=-1)
    return out


@dataclass(frozen=True)
class GameOutcome:
    """Target models of the game: their world bits, label vectors on the queries and utility.

    Attributes
    ----------
    b : ndarray of int, shape (T,)
        The challenger's bits (0: t0, 1: t1).
    labels : ndarray of int8, shape (T, m)
        Each target's labels on the adversary's queries (all the adversary sees).
    realised_t : ndarray of shape (T,)
        Fraction of clean training records with the property.
    utility : dict of ndarray (T,)
        Clean-test accuracy, precision and recall of each target (spec Sec. 5.6).
    """

    b: np.ndarray
    labels: np.ndarray
    realised_t: np.ndarray
    utility: dict


def play_game(
    learner: Any, data: PropertyData, victim_idx: np.ndarray, *, t0: float, t1: float, n_train: int,
    poison: Poison | None, X_query: Any, n_targets: int = 100,
    poison_accounting: str = "replace", prevalence_sampling: str = "exact", test_idx: np.ndarray | None = None,
    batch_size: int = 100, random_state: RandomStateLike = None, engine: Engine | None = None,
) -> GameOutcome:
    """Run the challenger's side of PIWP for ``n_targets`` targets (half t0, half t1).

    Each target is trained on a fresh clean set from ``victim_idx`` plus the same
    poison; the adversary gets its labels on ``X_query``.

    Parameters
    ----------
    poison_accounting : {"replace", "add"}
        "replace": ``n_train - len(poison)`` clean records; "add": ``n_train``.
    test_idx : ndarray, optional
        Clean held-out rows for utility (default: up to 2,000 victim rows).
    engine : leakaudit.engine.Engine, optional
        Trains the targets; default :func:`leakaudit.engine.default_engine`.
    """
    rng = check_random_state(random_state)
    check_scalar(n_targets, name="n_targets", kind=(int, np.integer), min_val=2)
    check_work(float(n_targets) * n_train * data.X.shape[1], f"{n_targets:,} target models (each reading "
               f"{n_train:,} x {data.X.shape[1]:,} training rows)", fix="train fewer targets (n_targets)")
    victim_idx = np.asarray(victim_idx)
    m_poison = 0 if poison is None else len(poison)
    check_choice(poison_accounting, name="poison_accounting", choices=POISON_ACCOUNTING)
    size = n_train - m_poison if poison_accounting == "replace" else n_train
    if size <= 0:
        raise InvalidParameterError(f"no clean records left: n_train={n_train}, poison={m_poison}")
    pos, neg = victim_idx[data.f[victim_idx]], victim_idx[~data.f[victim_idx]]
    b = rng.permutation(np.arange(n_targets) % 2)
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=n_targets)]
    sets = [sample_world(pos, neg, size, t1 if bi else t0, sampling=prevalence_sampling, random_state=rng) for bi in b]
    realised = np.array([data.f[s].mean() for s in sets])
    if test_idx is None:
        test_idx = rng.choice(victim_idx, size=min(2000, victim_idx.size), replace=False)
    m = X_query.shape[0]
    Xq = _stack(X_query, data.X[test_idx])
    labels = train_and_query(learner, data, sets, poison, Xq, seeds=seeds, batch_size=batch_size, engine=engine)
    pred_test, yt = labels[:, m:].astype(int), data.y[test_idx]
    tp = (pred_test * yt).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        utility = {
            "accuracy": (pred_test == yt).mean(1),
            "precision": np.where(pred_test.sum(1) > 0, tp / pred_test.sum(1), np.nan),
            "recall": tp / max(int(yt.sum()), 1),
        }
    return GameOutcome(b=b, labels=labels[:, :m], realised_t=realised, utility=utility)

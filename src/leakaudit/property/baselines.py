"""Baselines of Chase et al. (spec Sec. 3.5).

1. :func:`no_poison_attack`: the same black-box pipeline with ``p = 0``
   (Table III rows 1-3).
2. :func:`whitebox_attack` (WBAttack): Ganju et al. (CCS'18)'s white-box
   meta-classifier. Shadow MLPs are trained without poison in both worlds; each
   hidden layer's neurons are sorted by the L2 norm of their incoming weights and
   bias (outgoing weights permuted consistently), which removes the permutation
   symmetry; the flattened parameters feed a logistic-regression meta-classifier.
3. :func:`theory_averaging_guess`: Theorem 9's distinguisher with estimated
   certainty: average the target's labels on queries of the attacked
   sub-population whose estimated ``crt_l`` lies in the theoretical window.
"""

from __future__ import annotations

import time

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_scalar
from ..exceptions import InvalidInputError, NotEstimableWarning
from ..metrics import auc as _auc
from ..metrics import clopper_pearson
from .attack import PoisoningPropertyAttack
from .game import PropertyData, mlp_learner, sample_world, split_pools
from .results import WhiteBoxResult

__all__ = ["no_poison_attack", "sort_neurons", "whitebox_features", "whitebox_attack", "theory_window_queries",
           "theory_averaging_guess"]


def no_poison_attack(**params) -> PoisoningPropertyAttack:
    """The black-box attack without poisoning: :class:`PoisoningPropertyAttack` with ``poison_rate=0``."""
    params = dict(params)
    params["poison_rate"] = 0.0
    return PoisoningPropertyAttack(**params)


def sort_neurons(weights: list[np.ndarray], biases: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Canonical neuron order of one MLP (Ganju et al.'s sorting; spec Sec. 3.5).

    Parameters
    ----------
    weights : list of arrays (fan_in, fan_out), one per layer
    biases : list of arrays (fan_out,)

    Returns
    -------
    (weights, biases) with each hidden layer's neurons in decreasing order of
    ``||[W_in[:, j]; b_j]||_2``, outgoing rows permuted to match. The function
    the network computes is unchanged.
    """
    W = [w.copy() for w in weights]
    b = [v.copy() for v in biases]
    for layer in range(len(W) - 1):
        norms = np.sqrt((W[layer] ** 2).sum(axis=0) + b[layer] ** 2)
        order = np.argsort(-norms, kind="stable")
        W[layer], b[layer] = W[layer][:, order], b[layer][order]
        W[layer + 1] = W[layer + 1][order, :]
    return W, b


def whitebox_features(bank) -> np.ndarray:
    """Flattened sorted parameters of every model of a :class:`~leakaudit.learners.TorchMLP` bank, shape
    (K, n_params) (``bank.weights_[l]`` has shape (K, fan_in, fan_out), ``bank.biases_[l]`` (K, fan_out))."""
    rows = []
    for k in range(len(bank)):
        W, b = sort_neurons([w[k] for w in bank.weights_], [v[k] for v in bank.biases_])
        rows.append(np.concatenate([np.concatenate([w.ravel(), v.ravel()]) for w, v in zip(W, b)]))
    return np.vstack(rows)


def whitebox_attack(
    data: PropertyData, *, t0: float, t1: float, n_train: int = 1000, hidden: tuple[int, ...] = (32, 16, 8),
    epochs: int = 30, lr: float = 1e-3, n_shadow: int = 500, n_targets: int = 100, meta_C: float = 1.0,
    adversary_idx: np.ndarray | None = None, victim_idx: np.ndarray | None = None, dataset: str = "data",
    property_name: str = "f", random_state: RandomStateLike = None,
) -> WhiteBoxResult:
    """WBAttack: train ``n_shadow`` MLPs per world, sort neurons, fit a meta-classifier, test on targets.

    Parameters
    ----------
    data : PropertyData
    t0, t1 : float
    n_train : int
        Training-set size of shadows and targets (no poison).
    hidden : tuple of int
        MLP hidden layers (white-box access to all weights).
    epochs, lr : int, float
        MLP training (Adam, batch 64).
    n_shadow : int
        Shadow models per world.
    n_targets : int
        Target models (half per world), trained on the victim pool.
    meta_C : float
        Inverse L2 strength of the logistic meta-classifier (features standardised).

    Returns
    -------
    WhiteBoxResult
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    check_scalar(n_shadow, name="n_shadow", kind=(int, np.integer), min_val=2)
    check_scalar(n_targets, name="n_targets", kind=(int, np.integer), min_val=2)
    rng = check_random_state(random_state)
    t_start = time.perf_counter()
    if adversary_idx is None or victim_idx is None:
        adversary_idx, victim_idx = split_pools(len(data), random_state=rng)
    learner = mlp_learner(tuple(hidden), epochs=epochs, lr=lr)

    def features(pool, bits):
        pos, neg = pool[data.f[pool]], pool[~data.f[pool]]
        sets = [sample_world(pos, neg, n_train, t1 if bi else t0, random_state=rng) for bi in bits]
        seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=len(sets))]
        out = []
        for s in range(0, len(sets), 100):
            out.append(whitebox_features(learner.fit_many(data.X, data.y, sets[s : s + 100], seeds[s : s + 100])))
        return np.vstack(out)

    b_shadow = np.repeat([0, 1], n_shadow)
    F = features(np.asarray(adversary_idx), b_shadow)
    with threadpool_limits(1):
        meta = make_pipeline(StandardScaler(), LogisticRegression(C=meta_C, max_iter=2000)).fit(F, b_shadow)
    b_target = rng.permutation(np.arange(n_targets) % 2)
    scores = meta.predict_proba(features(np.asarray(victim_idx), b_target))[:, 1]
    correct = int(((scores > 0.5).astype(int) == b_target).sum())
    return WhiteBoxResult(
        dataset=dataset, property=property_name, t0=t0, t1=t1, hidden=tuple(hidden), n_shadow=n_shadow,
        n_targets=n_targets, accuracy=correct / n_targets, accuracy_ci=clopper_pearson(correct, n_targets),
        auc=_auc(b_target, scores), seconds=time.perf_counter() - t_start,
    )


def theory_window_queries(
    attack: PoisoningPropertyAttack, data: PropertyData, pool_idx: np.ndarray, *, n_ensemble: int = 100,
    n_queries: int = 200, random_state: RandomStateLike = None,
):
    """Queries for Theorem 9's distinguisher: points of the attacked sub-population ``g`` whose
    ensemble-estimated ``crt_l`` lies in the theoretical window (tau -> 0).

    ``crt_l = crt^`` for poison label 1 and ``-crt^`` for label 0, with ``crt^``
    Algorithm 2's ensemble estimate. Candidates are drawn from ``g`` only.

    Returns
    -------
    QuerySet (without poison points)
    """
    from .queries import select_queries
    from .theory import theorem9_window

    if len(attack.poison_) == 0:
        raise InvalidInputError("the averaging distinguisher needs poison (poison_rate > 0)")
    label, sub = attack.poison_.label, attack.poison_.subpopulation
    w = theorem9_window(attack.poison_rate, attack.t0, attack.t1, subpopulation=sub)
    in_g = data.f if sub == "f" else ~data.f

    def accept(rows, crt):
        return in_g[rows] & w.contains(crt if label == 1 else -crt)

    return select_queries(
        attack._learner(), data, pool_idx, n_train=attack.n_train, n_ensemble=n_ensemble, n_queries=n_queries,
        mixture=1.0 if sub == "f" else 0.0, accept=accept, batch_size=attack.batch_size, random_state=random_state,
    )


def theory_averaging_guess(attack: PoisoningPropertyAttack, labels: np.ndarray) -> np.ndarray:
    """Theorem 9's averaging distinguisher on the labels of :func:`theory_window_queries`.

    Averages each target's agreement ``rho`` with the poison label over the
    window queries and guesses the world where ``g`` is rarer iff ``rho > 1/2``
    (proof of Theorem 9; Claim 14).

    Parameters
    ----------
    attack : fitted PoisoningPropertyAttack with ``poison_rate > 0``
    labels : ndarray of shape (n_targets, m)
        Targets' labels on the window queries.

    Returns
    -------
    ndarray of shape (n_targets,)
        Score of the t1 world; NaN, with a ``NotEstimableWarning``, when there are no queries.
    """
    import warnings

    R = np.atleast_2d(np.asarray(labels, dtype=float))
    if len(attack.poison_) == 0:
        raise InvalidInputError("the averaging distinguisher needs poison (poison_rate > 0)")
    if R.shape[1] == 0:
        warnings.warn("no query has estimated certainty in Theorem 9's window", NotEstimableWarning, stacklevel=2)
        return np.full(R.shape[0], np.nan)
    rho = (R == attack.poison_.label).mean(axis=1)  # average agreement with the poison label
    # rho > 1/2 means the s_lo world: t0 if g = f, t1 if g = 1 - f.
    return 1.0 - rho if attack.poison_.subpopulation == "f" else rho

"""Baselines of Chase et al. (spec Sec. 3.5).

1. :func:`no_poison_attack`: the same black-box pipeline with ``p = 0``
   (Table III rows 1-3).
2. WBAttack, Ganju et al. (CCS'18)'s white-box meta-classifiers: in
   :mod:`~leakaudit.property.whitebox`.
3. :func:`theory_averaging_guess`: Theorem 9's distinguisher with estimated
   certainty: average the target's labels on queries of the attacked
   sub-population whose estimated ``crt_l`` lies in the theoretical window.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._random import RandomStateLike
from ..exceptions import InvalidInputError, NotEstimableWarning
from .attack import PoisoningPropertyAttack
from .game import PropertyData
from .queries import select_queries
from .theory import theorem9_window

__all__ = ["no_poison_attack", "theory_window_queries", "theory_averaging_guess"]


def no_poison_attack(**params) -> PoisoningPropertyAttack:
    """The black-box attack without poisoning: :class:`PoisoningPropertyAttack` with ``poison_rate=0``."""
    params = dict(params)
    params["poison_rate"] = 0.0
    return PoisoningPropertyAttack(**params)


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
    R = np.atleast_2d(np.asarray(labels, dtype=float))
    if len(attack.poison_) == 0:
        raise InvalidInputError("the averaging distinguisher needs poison (poison_rate > 0)")
    if R.shape[1] == 0:
        warnings.warn("no query has estimated certainty in Theorem 9's window", NotEstimableWarning, stacklevel=2)
        return np.full(R.shape[0], np.nan)
    rho = (R == attack.poison_.label).mean(axis=1)  # average agreement with the poison label
    # rho > 1/2 means the s_lo world: t0 if g = f, t1 if g = 1 - f.
    return 1.0 - rho if attack.poison_.subpopulation == "f" else rho

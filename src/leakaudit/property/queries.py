"""Algorithm 2 of Chase et al.: choosing the black-box queries (spec Sec. 3.3).

Train ``r`` clean models, each on a dataset half from ``D+`` and half from
``D-``; stream candidates from ``1/2 D- + 1/2 D+`` (without replacement) and keep
those whose estimated certainty ``crt^(x) = 1 - 2 * (fraction of the ensemble
voting 1)`` lies in ``[-band, band]`` until ``q`` are kept; then add the poison
points' inputs.

``out_of_bag=True`` (not in the paper) estimates ``crt^(x)`` only from the ensemble models that did not train on
``x``: on a pool small beside n a candidate trains about half the ensemble, and ``crt^`` then measures memorisation
rather than the uncertainty a target (which never trains on the queries) has about the point.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_scalar
from ..engine import Engine, check_work, resolve_engine
from ..exceptions import InvalidInputError
from .game import Poison, PropertyData, _stack, sample_mixture

__all__ = ["QuerySet", "select_queries", "estimated_certainty", "out_of_bag_certainty", "candidate_stream"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QuerySet:
    """The adversary's queries ``T_q``.

    Attributes
    ----------
    X : matrix of shape (q' + m_poison, n_features)
        Query inputs: the accepted candidates, then the poison points.
    indices : ndarray of shape (q',)
        Rows of the data the accepted candidates are.
    crt : ndarray of shape (q',)
        Their estimated certainty (Alg. 2 line 6).
    n_poison : int
        Poison points appended (the last rows of ``X``).
    n_candidates : int
        Candidates examined.
    exhausted : bool
        True when the pool ran out before ``q`` candidates were accepted.
    """

    X: Any
    indices: np.ndarray
    crt: np.ndarray
    n_poison: int
    n_candidates: int
    exhausted: bool

    def __len__(self) -> int:
        return int(self.X.shape[0])


def estimated_certainty(votes: np.ndarray) -> np.ndarray:
    """``crt^(x) = 1 - 2 * mean_i M_i(x)`` from labels of shape (r, n) (Alg. 2 line 6, Def. 7)."""
    votes = np.asarray(votes)
    return 1.0 - 2.0 * votes.mean(axis=0)


def out_of_bag_certainty(votes: np.ndarray, in_train: np.ndarray, *, min_models: int = 1) -> np.ndarray:
    """``crt^(x)`` (Alg. 2 line 6, Def. 7) over only the models that did not train on ``x``.

    Parameters
    ----------
    votes : ndarray of shape (r, c)
        Labels (0/1) of the r ensemble models on c candidates.
    in_train : ndarray of bool, shape (r, c)
        ``in_train[i, j]``: candidate j is a training row of model i.
    min_models : int, default=1
        Candidates left out of fewer models get NaN (never inside a band).

    Returns
    -------
    ndarray of shape (c,)
        ``1 - 2 * mean_{i: not in_train[i, j]} votes[i, j]``, NaN where too few models.
    """
    votes = np.asarray(votes, dtype=np.float64)
    out = ~np.asarray(in_train, dtype=bool)
    if votes.shape != out.shape:
        raise InvalidInputError(f"votes {votes.shape} and in_train {out.shape} must have the same shape")
    k = out.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        crt = 1.0 - 2.0 * (votes * out).sum(axis=0) / k
    return np.where(k >= min_models, crt, np.nan)


def candidate_stream(pos: np.ndarray, neg: np.ndarray, *, mixture: float = 0.5, random_state: RandomStateLike = None):
    """Order in which candidates are drawn from ``mixture D+ + (1 - mixture) D-`` without replacement.

    Each draw picks ``D+`` with probability ``mixture``; the stream stops when the
    chosen pool is empty (spec [Choice]: stop and log the count).
    """
    rng = check_random_state(random_state)
    pp, nn = rng.permutation(pos), rng.permutation(neg)
    coins = rng.random(pos.size + neg.size) < mixture
    n_pos_used = np.cumsum(coins)
    n_neg_used = np.cumsum(~coins)
    ok = (n_pos_used <= pp.size) & (n_neg_used <= nn.size)
    stop = int(np.argmin(ok)) if not ok.all() else ok.size
    coins = coins[:stop]
    out = np.empty(stop, dtype=np.int64)
    out[coins] = pp[: int(coins.sum())]
    out[~coins] = nn[: int((~coins).sum())]
    return out


def select_queries(
    learner: Any,
    data: PropertyData,
    pool_idx: np.ndarray,
    *,
    n_train: int,
    n_ensemble: int = 1000,
    n_queries: int = 1000,
    band: float = 0.4,
    mixture: float = 0.5,
    poison: Poison | None = None,
    batch_size: int = 100,
    accept: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    candidate_idx: np.ndarray | None = None,
    out_of_bag: bool = False,
    min_out_of_bag: int = 5,
    random_state: RandomStateLike = None,
    engine: Engine | None = None,
) -> QuerySet:
    """Algorithm 2: the ``q`` uncertain candidates (plus the poison points).

    Parameters
    ----------
    learner : leakaudit Learner
    data : PropertyData
    pool_idx : ndarray of int
        The adversary's rows.
    n_train : int
        Size of each ensemble dataset ([Choice]: the victim's n).
    n_ensemble : int, default=1000
        ``r``, the number of clean ensemble models.
    n_queries : int, default=1000
        ``q`` (paper: 1,000 for Census, 500 for Enron).
    band : float, default=0.4
        Keep candidates with ``|crt^| <= band``.
    mixture : float, default=0.5
        Probability that a candidate comes from ``D+``.
    poison : Poison or None
        Appended to the queries (Alg. 2 line 7).
    batch_size : int
        Models trained per batch; candidates are scored ``4 q`` at a time.
    accept : callable ``(rows, crt) -> bool mask``, optional
        Replaces the band rule (used by the theory baseline to keep points in
        Theorem 9's window).
    candidate_idx : ndarray of int, optional
        Draw candidates from these rows instead of ``pool_idx`` (the paper's), e.g. rows no ensemble or shadow
        model trains on, so that certainty is measured on unseen points, as the target sees them.
    out_of_bag : bool, default=False
        Certainty only from the ensemble models that did not train on the candidate
        (:func:`out_of_bag_certainty`); False is the paper (all ``r`` models vote).
    min_out_of_bag : int, default=5
        With ``out_of_bag``, a candidate left out of fewer models is rejected.
    engine : leakaudit.engine.Engine, optional
        Trains the ensemble (:meth:`~leakaudit.engine.Engine.fit_bank`, one call per batch); default
        :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    QuerySet
    """
    check_scalar(n_ensemble, name="n_ensemble", kind=(int, np.integer), min_val=1)
    check_scalar(n_queries, name="n_queries", kind=(int, np.integer), min_val=1)
    check_scalar(band, name="band", min_val=0.0, max_val=1.0)
    check_scalar(mixture, name="mixture", min_val=0.0, max_val=1.0)
    check_scalar(min_out_of_bag, name="min_out_of_bag", kind=(int, np.integer), min_val=1)
    check_work(float(n_ensemble) * n_train * data.X.shape[1], f"a clean ensemble of {n_ensemble:,} models (each "
               f"reading {n_train:,} x {data.X.shape[1]:,} training rows)", fix="train fewer (n_ensemble)")
    rng = check_random_state(random_state)
    pool_idx = np.asarray(pool_idx)
    pos, neg = pool_idx[data.f[pool_idx]], pool_idx[~data.f[pool_idx]]
    sets = [sample_mixture(pos, neg, n_train, random_state=rng) for _ in range(n_ensemble)]
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=n_ensemble)]
    cand = pool_idx if candidate_idx is None else np.asarray(candidate_idx)
    stream = candidate_stream(cand[data.f[cand]], cand[~data.f[cand]], mixture=mixture, random_state=rng)
    # the r ensemble models, trained in batches (a learner densifies the rows it needs of a sparse X), are kept
    # and candidates scored in blocks until q are accepted
    engine = resolve_engine(engine)
    banks = [engine.fit_bank(learner, data.X, data.y, sets[s : s + batch_size], seeds[s : s + batch_size], n_classes=2)
             for s in range(0, len(sets), batch_size)]
    accepted, crts, seen = [], [], 0
    block = max(4 * n_queries, 1000)
    while len(accepted) < n_queries and seen < stream.size:
        cand = stream[seen : seen + block]
        seen += cand.size
        votes = np.concatenate([_labels(b, data.X[cand]) for b in banks], axis=0)
        if out_of_bag:
            crt = out_of_bag_certainty(votes, np.stack([np.isin(cand, s) for s in sets]),
                                       min_models=min_out_of_bag)
        else:
            crt = estimated_certainty(votes)
        ok = np.abs(crt) <= band if accept is None else np.asarray(accept(cand, crt), dtype=bool)
        keep = np.flatnonzero(ok)[: n_queries - len(accepted)]
        if keep.size and len(accepted) + keep.size >= n_queries:
            seen = seen - cand.size + int(keep[-1]) + 1
        accepted.extend(cand[keep].tolist())
        crts.extend(crt[keep].tolist())
    exhausted = len(accepted) < n_queries
    if exhausted:
        log.warning("Algorithm 2: pool exhausted after %d candidates; %d of %d queries accepted",
                    seen, len(accepted), n_queries)
    idx = np.asarray(accepted, dtype=np.int64)
    Xq = _stack(data.X[idx], None if poison is None else poison.X)
    return QuerySet(X=Xq, indices=idx, crt=np.asarray(crts), n_poison=0 if poison is None else len(poison),
                    n_candidates=int(seen), exhausted=bool(exhausted))


def _labels(bank, Xc) -> np.ndarray:
    # an engine bank takes sparse rows and densifies them for the chunks that need it
    return np.asarray(bank.predict_proba(Xc)).argmax(axis=-1)


"""Algorithm 3 of Chase et al.: shadow models per world and a linear attack model (spec Sec. 3.4).

:class:`PoisoningPropertyAttack` runs the whole adversary: Algorithm 1 (poison),
Algorithm 2 (queries), then Algorithm 3: ``k`` shadow models per world, each on a
fresh dataset from ``D_{t0}`` or ``D_{t1}`` plus the same poison, their label
vectors on the queries, and an L2-regularised logistic regression ``M_A`` on those
vectors. The target is then only queried for labels.

``M_A``'s regularisation: the paper's "l2 weight 2 sqrt(1/k)" read as
scikit-learn's ``C = sqrt(k) / 2`` (spec Sec. 3.4 [Choice]); ``attack_C`` overrides it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar
from ..engine import Engine, check_work, reports_engine_stats, resolve_engine
from ..exceptions import InvalidInputError, InvalidParameterError, LeakauditError
from ..metrics import auc as _auc
from ..metrics import clopper_pearson
from .game import (
    POISON_ACCOUNTING, PREVALENCE_SAMPLING, PropertyData, _stack, check_rate, logistic_learner, n_clean, play_game,
    sample_worlds, split_pools, train_and_query,
)
from .poison import VARIANTS, choose_poison
from .queries import select_queries
from .results import PropertyAttackResult
from .theory import attacked_subpopulation, theorem9_window

__all__ = ["PoisoningPropertyAttack", "evaluate_attack", "attack_model_C", "fit_attack_model", "label_vector_shift"]


def attack_model_C(k: int) -> float:
    """scikit-learn ``C`` of M_A for ``k`` shadow models per world: ``sqrt(k) / 2`` (Alg. 3 line 4)."""
    return float(np.sqrt(k) / 2.0)


def fit_attack_model(R: np.ndarray, b: np.ndarray, C: float):
    """Alg. 3 line 4: logistic regression from label vectors (2k, m) to world bits (2k,)."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return LogisticRegression(C=C, max_iter=2000).fit(np.asarray(R, dtype=np.float64), b)


def label_vector_shift(
    shadow_labels: Any, shadow_b: Any, target_labels: Any, target_b: Any, *, n_poison: int = 0,
) -> dict:
    """How far the shadows' label vectors sit from the targets', per world (a diagnostic, not in the paper).

    M_A is trained on shadow label vectors and applied to target ones: a systematic offset in one world is the
    signature of shadows not built like the targets (M_A then separates the shadows and not the targets).

    Parameters
    ----------
    shadow_labels : array of 0/1, shape (2k, m)
    shadow_b : array of 0/1, shape (2k,)
        World of each shadow model.
    target_labels : array of 0/1, shape (T, m)
    target_b : array of 0/1, shape (T,)
    n_poison : int, default=0
        The last ``n_poison`` queries are the poison points (Alg. 2 line 7).

    Returns
    -------
    dict
        For each world ``w`` in (0, 1) and each query group ``g`` in ("clean", "poison"):
        ``shadow_{g}_rate_w{w}`` and ``target_{g}_rate_w{w}``, the mean predicted label
        over those models and queries, and ``{g}_shift_w{w}`` = target minus shadow
        (NaN for an empty group).
    """
    S, T = np.asarray(shadow_labels, dtype=np.float64), np.asarray(target_labels, dtype=np.float64)
    sb, tb = np.asarray(shadow_b), np.asarray(target_b)
    if S.ndim != 2 or T.ndim != 2 or S.shape[1] != T.shape[1]:
        raise InvalidInputError(f"shadow_labels and target_labels must be 2-D with the same number of queries; "
                                f"got {S.shape} and {T.shape}")
    if sb.shape != (S.shape[0],) or tb.shape != (T.shape[0],):
        raise InvalidInputError("shadow_b and target_b must hold one world bit per model")
    m = S.shape[1]
    check_scalar(n_poison, name="n_poison", kind=(int, np.integer), min_val=0, max_val=m)
    groups = {"clean": slice(0, m - n_poison), "poison": slice(m - n_poison, m)}
    out = {}
    for w in (0, 1):
        for g, cols in groups.items():
            rs = S[sb == w][:, cols]
            rt = T[tb == w][:, cols]
            out[f"shadow_{g}_rate_w{w}"] = float(rs.mean()) if rs.size else float("nan")
            out[f"target_{g}_rate_w{w}"] = float(rt.mean()) if rt.size else float("nan")
            out[f"{g}_shift_w{w}"] = out[f"target_{g}_rate_w{w}"] - out[f"shadow_{g}_rate_w{w}"]
    return out


class PoisoningPropertyAttack(BaseEstimator):
    """The black-box, label-only property inference attack with poisoning (Algorithms 1-3).

    Parameters
    ----------
    t0, t1 : float
        The two candidate fractions of records with the property, ``t0 < t1``.
    poison_rate : float in [0, 1), default=0.1
        ``p``; 0 gives the no-poisoning baseline.
    n_train : int, default=1000
        Victim training-set size ``n``.
    learner : leakaudit Learner or None
        Training algorithm of the target (known to the adversary); default
        :func:`~leakaudit.property.game.logistic_learner` (scikit-learn's L2 logistic regression, C = 1).
    n_shadow : int, default=500
        ``k``: shadow models per world (2k in all).
    n_ensemble : int, default=1000
        ``r``: clean models of Algorithm 2.
    n_queries : int, default=1000
        ``q``: uncertain queries (the poison points are queried too).
    band : float, default=0.4
        Certainty band of Algorithm 2.
    mixture : float, default=0.5
        Fraction of Algorithm 2's candidates drawn from ``D+``.
    ensemble_train_size : int or None
        Size of each ensemble model's training set (half ``D+``, half ``D-``);
        None uses ``n_train`` (spec Sec. 3.3 [Choice]).
    query_pool_fraction : float in (0, 1) or None
        None (the paper): query candidates, ensemble and shadow sets all come from the adversary's pool. A
        fraction reserves that share of the pool for query candidates only, so no ensemble or shadow model trains
        on a query (on a small pool the shadows would memorise queries the targets never saw).
    exclude_poison_rows : bool, default=False
        Keep the records the poison was copied from out of the clean shadow and ensemble sets (not in the paper):
        no target trains on them with their true labels (benchmarks/README.md).
    exclude_query_rows : bool, default=False
        Keep the query records out of every clean shadow set (not in the paper, whose pool is large beside n).
        Targets never train on the queries; on a small pool a query trains a world-dependent share of the
        shadows, and M_A learns a membership pattern that does not transfer (docs/reproduction/chase-fig1.md).
    oob_certainty : bool, default=False
        Algorithm 2 estimates a candidate's certainty only from the ensemble models
        that did not train on it (:func:`~leakaudit.property.queries.out_of_bag_certainty`).
    variant : {"auto", "X+1", "X+0", "X-1", "X-0"}, default="auto"
    alpha_source : {"sample", "pool"}, default="sample"
    poison_accounting : {"replace", "add"}, default="replace"
    prevalence_sampling : {"exact", "binomial"}, default="exact"
    attack_C : float or None
        M_A's inverse regularisation; None gives ``sqrt(k) / 2``.
    batch_size : int, default=100
    random_state : None, int or Generator

    Attributes
    ----------
    poison_ : Poison
    queries_ : QuerySet
    shadow_pool_ : ndarray of int
        The adversary's rows the clean shadow sets were drawn from.
    shadow_sets_ : list of 2k ndarray of int
        Each shadow model's clean training rows (the poison is added to each).
    shadow_labels_ : ndarray of int8, shape (2k, m)
    shadow_b_ : ndarray of shape (2k,)
    attack_model_ : fitted scikit-learn LogisticRegression (M_A)
    attack_C_ : float
    shadow_accuracy_ : float
        M_A's accuracy on its own training label vectors.
    seconds_ : float
        Time to fit (Algorithms 1-3).
    """

    def __init__(
        self, *, t0: float, t1: float, poison_rate: float = 0.1, n_train: int = 1000, learner: Any = None,
        n_shadow: int = 500, n_ensemble: int = 1000, n_queries: int = 1000, band: float = 0.4,
        mixture: float = 0.5, ensemble_train_size: int | None = None, query_pool_fraction: float | None = None,
        exclude_poison_rows: bool = False, exclude_query_rows: bool = False, oob_certainty: bool = False,
        variant: str = "auto", alpha_source: str = "sample",
        poison_accounting: str = "replace", prevalence_sampling: str = "exact", attack_C: float | None = None,
        batch_size: int = 100, random_state: RandomStateLike = None,
    ):
        self.t0 = t0
        self.t1 = t1
        self.poison_rate = poison_rate
        self.n_train = n_train
        self.learner = learner
        self.n_shadow = n_shadow
        self.n_ensemble = n_ensemble
        self.n_queries = n_queries
        self.band = band
        self.mixture = mixture
        self.ensemble_train_size = ensemble_train_size
        self.query_pool_fraction = query_pool_fraction
        self.exclude_poison_rows = exclude_poison_rows
        self.exclude_query_rows = exclude_query_rows
        self.oob_certainty = oob_certainty
        self.variant = variant
        self.alpha_source = alpha_source
        self.poison_accounting = poison_accounting
        self.prevalence_sampling = prevalence_sampling
        self.attack_C = attack_C
        self.batch_size = batch_size
        self.random_state = random_state

    def _learner(self):
        return logistic_learner() if self.learner is None else self.learner

    def _check_params(self) -> None:
        attacked_subpopulation(self.t0, self.t1)
        check_rate(self.poison_rate)
        check_scalar(self.n_train, name="n_train", kind=(int, np.integer), min_val=2)
        check_scalar(self.n_shadow, name="n_shadow", kind=(int, np.integer), min_val=1)
        check_scalar(self.batch_size, name="batch_size", kind=(int, np.integer), min_val=1)
        check_choice(self.variant, name="variant", choices=VARIANTS)
        check_choice(self.poison_accounting, name="poison_accounting", choices=POISON_ACCOUNTING)
        check_choice(self.prevalence_sampling, name="prevalence_sampling", choices=PREVALENCE_SAMPLING)
        if self.attack_C is not None:
            check_scalar(self.attack_C, name="attack_C", min_val=0.0, include_min=False)
        if n_clean(self.n_train, self.poison_rate, self.poison_accounting) <= 0:
            raise InvalidParameterError(f"poison_rate={self.poison_rate} leaves no clean training records")

    def fit(self, data: PropertyData, pool_idx: np.ndarray | None = None, *, queries=None,
            engine: Engine | None = None) -> PoisoningPropertyAttack:
        """Run Algorithms 1-3 on the adversary's records.

        Parameters
        ----------
        data : PropertyData
        pool_idx : ndarray of int, optional
            The adversary's rows (default: all rows of ``data``).
        queries : QuerySet, optional
            Uncertain queries already chosen by Algorithm 2 without poison (its clean
            ensemble does not depend on ``p``, so sweeps over ``p`` reuse it); this
            attack's poison points are appended.
        engine : leakaudit.engine.Engine, optional
            Trains the ensemble and the shadow models; default :func:`leakaudit.engine.default_engine`.

        Returns
        -------
        self
        """
        if not isinstance(data, PropertyData):
            raise InvalidInputError(f"data must be a PropertyData; got {type(data).__name__}")
        self._check_params()
        check_work(2.0 * self.n_shadow * self.n_train * data.X.shape[1],
                   f"{2 * self.n_shadow:,} shadow models (n_shadow in each of two worlds, each reading "
                   f"{self.n_train:,} x {data.X.shape[1]:,} training rows)", fix="train fewer shadow models (n_shadow)")
        t_start = time.perf_counter()
        rng = check_random_state(self.random_state)
        engine = resolve_engine(engine)
        pool = np.arange(len(data)) if pool_idx is None else np.asarray(pool_idx)
        learner = self._learner()
        # Algorithm 1
        self.poison_ = choose_poison(
            data, pool, t0=self.t0, t1=self.t1, poison_rate=self.poison_rate, n_train=self.n_train,
            variant=self.variant, alpha_source=self.alpha_source, random_state=rng,
        )
        if self.exclude_poison_rows:
            # a shadow set holding the poison's original with its true label sees a weaker poison than the target
            pool = np.setdiff1d(pool, self.poison_.indices)
        # Algorithm 2
        cand = None
        if self.query_pool_fraction is not None:
            check_scalar(self.query_pool_fraction, name="query_pool_fraction", min_val=0.0, max_val=1.0,
                         include_min=False, include_max=False)
            perm = rng.permutation(pool)
            n_cand = int(round(self.query_pool_fraction * pool.size))
            cand, pool = np.sort(perm[:n_cand]), np.sort(perm[n_cand:])
        if queries is None:
            self.queries_ = select_queries(
                learner, data, pool, n_train=self.ensemble_train_size or self.n_train,
                n_ensemble=self.n_ensemble, n_queries=self.n_queries,
                band=self.band, mixture=self.mixture, poison=self.poison_, batch_size=self.batch_size,
                candidate_idx=cand, out_of_bag=bool(self.oob_certainty), random_state=rng, engine=engine,
            )
        else:
            if queries.n_poison:
                raise InvalidInputError("queries must be chosen without poison (n_poison == 0)")
            self.queries_ = replace(queries, X=_stack(queries.X, self.poison_.X), n_poison=len(self.poison_))
        if self.exclude_query_rows:
            # Targets never train on the queries: neither may the shadows (the mismatch on small pools).
            pool = np.setdiff1d(pool, self.queries_.indices)
        self.shadow_pool_ = pool
        # Algorithm 3, lines 1-3: k shadow datasets per world, trained with the poison, queried.
        size = n_clean(self.n_train, self.poison_rate, self.poison_accounting)
        k = int(self.n_shadow)
        b = np.repeat([0, 1], k)
        sets, seeds = sample_worlds(data, pool, size, [self.t1 if bi else self.t0 for bi in b],
                                    sampling=self.prevalence_sampling, rng=rng)
        self.shadow_labels_ = train_and_query(learner, data, sets, self.poison_, self.queries_.X, seeds=seeds,
                                              batch_size=self.batch_size, engine=engine)
        self.shadow_b_ = b
        self.shadow_sets_ = sets
        # Algorithm 3, line 4: the linear attack model M_A.
        self.attack_C_ = attack_model_C(k) if self.attack_C is None else float(self.attack_C)
        self.attack_model_ = fit_attack_model(self.shadow_labels_, b, self.attack_C_)
        self.shadow_accuracy_ = float((self.attack_model_.predict(self.shadow_labels_) == b).mean())
        self.seconds_ = time.perf_counter() - t_start
        return self

    def _check_labels(self, labels: Any) -> np.ndarray:
        if not hasattr(self, "attack_model_"):
            raise LeakauditError("the attack is not fitted; call fit(data) first")
        R = np.asarray(labels)
        if R.ndim == 1:
            R = R[None, :]
        m = self.queries_.X.shape[0]
        if R.ndim != 2 or R.shape[1] != m:
            raise InvalidInputError(f"labels must have shape (n_targets, {m}) (one label per query); got {R.shape}")
        if not np.isin(R, (0, 1)).all():
            raise InvalidInputError("labels must be the target's predicted labels, 0 or 1 (label-only access)")
        return R.astype(np.float64)

    @property
    def query_points(self):
        """Inputs the adversary sends to the target, shape (m, n_features)."""
        if not hasattr(self, "queries_"):
            raise LeakauditError("the attack is not fitted; call fit(data) first")
        return self.queries_.X

    def decision_function(self, labels: Any) -> np.ndarray:
        """M_A's probability of the t1 world for each target's label vector, shape (n_targets,)."""
        R = self._check_labels(labels)
        return self.attack_model_.predict_proba(R)[:, 1]

    def predict(self, labels: Any) -> np.ndarray:
        """Guessed world bits (0: t0, 1: t1), shape (n_targets,) (Alg. 3 line 5)."""
        return (self.decision_function(labels) > 0.5).astype(np.int64)

    def attack(self, oracle: Callable[[Any], Any]) -> int:
        """Query a target through ``oracle(X) -> labels`` (label-only) and return the guessed bit."""
        labels = np.asarray(oracle(self.query_points)).reshape(-1)
        return int(self.predict(labels)[0])


@reports_engine_stats
def evaluate_attack(
    attack: PoisoningPropertyAttack, data: PropertyData, *, adversary_idx: np.ndarray | None = None,
    victim_idx: np.ndarray | None = None, n_targets: int = 100, dataset: str = "data", property_name: str = "f",
    random_state: RandomStateLike = None, engine: Engine | None = None,
) -> PropertyAttackResult:
    """Fit ``attack`` on the adversary's pool and measure its accuracy on ``n_targets`` victim models.

    Parameters
    ----------
    attack : PoisoningPropertyAttack (unfitted or fitted)
    data : PropertyData
    adversary_idx, victim_idx : ndarray of int, optional
        Disjoint pools (default: a random 1/3 : 2/3 split, spec Sec. 4.5).
    n_targets : int, default=100
        Targets, half trained in each world.
    engine : leakaudit.engine.Engine, optional
        Trains the attack's models (when it is not fitted yet) and the targets; default
        :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    PropertyAttackResult
        With ``engine_stats``: what the engine did in this call (the attack's own models only when this call
        fitted it).
    """
    rng = check_random_state(random_state)
    if adversary_idx is None or victim_idx is None:
        if hasattr(attack, "attack_model_"):
            raise InvalidInputError("the attack is already fitted: pass the adversary_idx and victim_idx it used, "
                                    "so that target models never share the adversary's records")
        adversary_idx, victim_idx = split_pools(len(data), random_state=rng)
    if np.intersect1d(adversary_idx, victim_idx).size:
        raise InvalidInputError("adversary_idx and victim_idx overlap; the pools must be disjoint (spec Sec. 4.5)")
    if not hasattr(attack, "attack_model_"):
        attack.fit(data, adversary_idx, engine=engine)
    t = time.perf_counter()
    game = play_game(
        attack._learner(), data, victim_idx, t0=attack.t0, t1=attack.t1, n_train=attack.n_train,
        poison=attack.poison_, X_query=attack.query_points, n_targets=n_targets,
        poison_accounting=attack.poison_accounting, prevalence_sampling=attack.prevalence_sampling,
        batch_size=attack.batch_size, random_state=rng, engine=engine,
    )
    scores = attack.decision_function(game.labels)
    guess = (scores > 0.5).astype(int)
    correct = int((guess == game.b).sum())
    seconds_targets = time.perf_counter() - t
    w = theorem9_window(attack.poison_rate, attack.t0, attack.t1)
    q = attack.queries_
    return PropertyAttackResult(
        dataset=dataset, property=property_name, t0=attack.t0, t1=attack.t1, poison_rate=attack.poison_rate,
        n_train=attack.n_train, n_poison=len(attack.poison_),
        poison_label=attack.poison_.label if len(attack.poison_) else None, poison_variant=attack.poison_.variant,
        alpha=None if np.isnan(attack.poison_.alpha) else attack.poison_.alpha,
        n_shadow=attack.n_shadow, n_shadow_total=2 * attack.n_shadow, n_ensemble=attack.n_ensemble,
        n_queries_requested=attack.n_queries, n_queries=len(q), n_candidates=q.n_candidates,
        queries_exhausted=q.exhausted, attack_C=attack.attack_C_, poison_accounting=attack.poison_accounting,
        prevalence_sampling=attack.prevalence_sampling, band=attack.band, n_targets=n_targets,
        accuracy=correct / n_targets, accuracy_ci=clopper_pearson(correct, n_targets), auc=_auc(game.b, scores),
        shadow_accuracy=attack.shadow_accuracy_,
        target_accuracy=float(np.nanmean(game.utility["accuracy"])),
        target_precision=float(np.nanmean(game.utility["precision"])),
        target_recall=float(np.nanmean(game.utility["recall"])),
        window=w.describe(), seconds_fit=attack.seconds_, seconds_targets=seconds_targets,
    )

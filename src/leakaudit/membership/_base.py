"""The attack interface, the inputs attacks share, and their result.

Every attack scores records: ``scores`` of shape (n,), higher means "more
likely a member", and ``decisions`` of shape (n,), 1 for "member". Attacks work
on plain arrays of model outputs so they are framework-agnostic (TF Privacy's
design): the target model's probabilities on the audited records, and, for
attacks that calibrate against reference (shadow) models, the reference
models' probabilities on the same records with a mask saying which reference
model trained on which record. :func:`fit_reference_models` produces those
arrays from any :class:`~leakaudit.learners.Learner`.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from .._random import RandomStateLike, check_random_state, named_seed, spawn_seeds
from .._results import Result
from .._validation import (check_array, check_consistent_length, check_indices, check_labels, check_matrix,
                           check_probabilities, check_scalar)
from ..engine import Engine, check_memory, check_work, chunk_length, resolve_engine
from ..exceptions import InvalidInputError, InvalidParameterError, TrainingFailedError

__all__ = [
    "Attack",
    "AttackInputs",
    "AttackResult",
    "ReferenceSet",
    "fit_reference_models",
    "audit_reference_models",
    "paired_half_masks",
    "check_target_inputs",
    "check_probs",
    "check_reference_inputs",
    "true_class_probability",
    "cross_entropy_loss",
]

_TINY = 1e-12


class AttackResult(Result):
    """Per-record output of one attack.

    Attributes
    ----------
    attack : str
        Registry name of the attack.
    scores : list of float, length n
        Higher means more likely a member.
    decisions : list of int, length n
        1 = "member", 0 = "non-member".
    threshold : float or None
        The score threshold behind ``decisions`` (decision 1 iff score > threshold
        unless ``info["rule"]`` says otherwise), when there is one.
    info : dict
        Attack-specific extras (parameters used, fitted thresholds, ...).
    """

    attack: str
    scores: list[float]
    decisions: list[int]
    threshold: float | None = None
    info: dict[str, Any] = {}

    @property
    def scores_array(self) -> np.ndarray:
        return np.asarray(self.scores, dtype=float)

    @property
    def decisions_array(self) -> np.ndarray:
        return np.asarray(self.decisions, dtype=np.int64)


@dataclass
class ReferenceSet:
    """Outputs of K reference (shadow) models on n records, with who trained on what.

    Attributes
    ----------
    probs : ndarray of shape (K, n, C)
        ``probs[k, i]`` = class probabilities of reference model k on record i.
    in_mask : ndarray of bool, shape (K, n)
        ``in_mask[k, i]`` is True iff record i was in model k's training set.
    redrawn : tuple of dict
        The pairs whose training halves :func:`fit_reference_models` redrew because the learner's library failed to
        train on a half: per redraw ``{"pair", "attempt", "seed", "reason"}`` (``seed``: the redraw's seed).
    """

    probs: np.ndarray
    in_mask: np.ndarray
    redrawn: tuple = ()

    def __post_init__(self):
        self.probs, self.in_mask = check_reference_inputs(self.probs, self.in_mask)

    @property
    def n_models(self) -> int:
        return self.probs.shape[0]

    def subset(self, idx) -> "ReferenceSet":
        """The same models on records ``idx`` only (index array or mask: a copy; a slice: a view, no copy)."""
        return ReferenceSet(self.probs[:, idx], self.in_mask[:, idx], self.redrawn)

    def models(self, k) -> "ReferenceSet":
        """Reference models ``k`` only (an int, index array or slice); keeps the model axis."""
        if isinstance(k, (int, np.integer)):
            k = [int(k)]
        return ReferenceSet(self.probs[k], self.in_mask[k], self.redrawn)


@dataclass
class AttackInputs:
    """Everything any attack may use; each attack reads what it needs.

    Attributes
    ----------
    probs : ndarray (n, C)
        Target model's class probabilities on the audited records.
    y : ndarray (n,)
        True labels of the audited records.
    reference : ReferenceSet, optional
        Reference models' outputs on the audited records (LiRA, RMIA, distance,
        frequency, shadow).
    X : ndarray (n, d), optional
        Features of the audited records (the shadow attack's record features).
    population_probs : ndarray (Z, C), optional
        Target model on population points (RMIA's z).
    population_y : ndarray (Z,), optional
    population_reference : ReferenceSet, optional
        Reference models on population points (RMIA).
    train_loss : float, optional
        Published average training loss L_S (Yeom's threshold, Table I).
    model : object with ``predict_proba``, optional
        Query access to the target model (the colluding adversary queries new points).
    """

    probs: np.ndarray
    y: np.ndarray
    reference: ReferenceSet | None = None
    X: np.ndarray | None = None
    population_probs: np.ndarray | None = None
    population_y: np.ndarray | None = None
    population_reference: ReferenceSet | None = None
    train_loss: float | None = None
    model: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(np.asarray(self.probs).shape[0])

    def subset(self, idx) -> "AttackInputs":
        """Inputs restricted to audited records ``idx`` (population kept)."""
        idx = np.asarray(idx)
        return dataclasses.replace(self, probs=np.asarray(self.probs)[idx], y=np.asarray(self.y)[idx],
                                   reference=None if self.reference is None else self.reference.subset(idx),
                                   X=None if self.X is None else np.asarray(self.X)[idx], extra=dict(self.extra))


@dataclass(frozen=True)
class Unmet:
    """Why an attack cannot run on given inputs: the reason, what would let it run, and the inputs it lacks."""

    reason: str
    fix: str = ""
    missing: tuple[str, ...] = ()


class Attack(BaseEstimator, abc.ABC):
    """Base class of membership attacks (scikit-learn style: hyperparameters in ``__init__``).

    Subclasses implement :meth:`run`, taking :class:`AttackInputs`, and usually
    a plain-array ``score(...)`` method with explicit arguments.

    Class attributes
    ----------------
    name : str
        Registry name.
    needs : tuple of str
        Fields of :class:`AttackInputs` besides ``probs`` and ``y`` the attack requires.
    """

    name: ClassVar[str] = "attack"
    needs: ClassVar[tuple[str, ...]] = ()

    def missing(self, inputs: AttackInputs) -> list[str]:
        """Names of required inputs that ``inputs`` lacks (empty if the attack can run)."""
        return [f for f in self.needs if getattr(inputs, f) is None]

    def unmet(self, inputs: AttackInputs) -> Unmet | None:
        """Why the attack cannot run on ``inputs``, or None when it can: by default, the inputs it needs and
        ``inputs`` lacks (:meth:`missing`). An attack with further conditions (enough records) adds them."""
        missing = self.missing(inputs)
        return Unmet(f"needs {', '.join(missing)}", missing=tuple(missing)) if missing else None

    @abc.abstractmethod
    def run(self, inputs: AttackInputs) -> AttackResult:
        """Score every audited record."""

    def result(self, scores, decisions, *, threshold=None, **info) -> AttackResult:
        """What :meth:`run` returns: an :class:`AttackResult` of this attack with ``scores`` (array of shape
        (n,), higher: more likely a member), ``decisions`` (0/1 of shape (n,)), the decision ``threshold`` if the
        attack has one, and ``info`` (plain values, recorded with the attack's parameters). An attack written
        outside leakaudit calls it too."""
        scores = np.asarray(scores, dtype=float)
        return AttackResult(
            attack=self.name,
            scores=scores,
            decisions=np.asarray(decisions, dtype=np.int64),
            threshold=None if threshold is None else float(threshold),
            info={"params": {k: (v if isinstance(v, (int, float, str, bool, type(None), tuple, list)) else repr(v))
                             for k, v in self.get_params(deep=False).items()}, **info},
        )


# -- shared checks and signals --------------------------------------------------------------------


def check_target_inputs(probs, y, *, probs_name: str = "probs", y_name: str = "y", atol: float = 1e-3):
    """Validate target probabilities (n, C) (rows sum to 1) and labels (n,); return (probs float64, y int64).

    Binned outputs, which need not sum to 1, go through :func:`check_probs` (distance, frequency attacks).
    """
    p = check_probabilities(probs, name=probs_name, atol=atol)
    yy = check_labels(y, name=y_name, n_classes=p.shape[1])
    check_consistent_length(**{probs_name: p, y_name: yy})
    return p, yy


def check_probs(probs, *, name: str = "probs", atol: float = 1e-3) -> np.ndarray:
    """Validate a matrix of class probabilities (n, C), C >= 2, values in [0, 1]."""
    p = check_matrix(probs, name=name)
    if p.shape[1] < 2:
        raise InvalidInputError(f"{name} must have one column per class (at least 2); got shape {p.shape}")
    if p.min() < 0 or p.max() > 1 + atol:
        raise InvalidInputError(f"{name} must hold probabilities in [0, 1]; got [{p.min():.4g}, {p.max():.4g}]")
    return p


def check_reference_inputs(probs, in_mask, *, name: str = "reference", target: np.ndarray | None = None):
    """Validate reference outputs (K, n, C) and membership mask (K, n); with ``target``, the target's outputs
    (n, C) on the same records, whose shape the outputs must match.

    A float64 array is kept as given, not copied: the engine's outputs past the memory budget are a disk-backed
    array (``engine/_store.py``), checked here in chunks of models.
    """
    if isinstance(probs, np.ndarray) and probs.dtype == np.float64 and probs.ndim == 3 and probs.size:
        p = probs
        step = chunk_length(p.shape[0], p[0].nbytes)
        for s in range(0, p.shape[0], step):
            _check_probability_block(check_array(p[s:s + step], name=f"{name}.probs[{s}:{s + step}]", ndim=3),
                                     name)
    else:
        p = check_array(probs, name=f"{name}.probs", ndim=3)
        _check_probability_block(p, name)
    m = check_array(in_mask, name=f"{name}.in_mask", ndim=2, dtype=None)
    if m.dtype != bool:
        if not np.isin(m, (0, 1)).all():
            raise InvalidInputError(f"{name}.in_mask must be boolean (or 0/1)")
        m = m.astype(bool)
    if m.shape != p.shape[:2]:
        raise InvalidInputError(f"{name}.in_mask has shape {m.shape}; expected {p.shape[:2]} (models, records)")
    if target is not None and p.shape[1:] != target.shape:
        raise InvalidInputError(f"ref_probs has shape {p.shape}; expected (K, {target.shape[0]}, {target.shape[1]})")
    return p, m


def _check_probability_block(p: np.ndarray, name: str) -> None:
    if p.min() < 0 or p.max() > 1 + 1e-3:
        raise InvalidInputError(f"{name}.probs must hold probabilities in [0, 1]")


def true_class_probability(probs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``probs[..., i, y_i]``: the probability of the true label; works on (n, C) and (K, n, C)."""
    idx = np.broadcast_to(np.asarray(y).reshape(-1, 1), probs.shape[:-1] + (1,))
    return np.take_along_axis(probs, idx, axis=-1)[..., 0]


def cross_entropy_loss(probs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-record cross-entropy ``-ln p(y|x)`` (clipped at 1e-12), shape probs.shape[:-1]."""
    return -np.log(np.clip(true_class_probability(probs, y), _TINY, 1.0))


# -- reference models -----------------------------------------------------------------------------


def paired_half_masks(n: int, n_models: int, random_state: RandomStateLike = None) -> np.ndarray:
    """Membership masks of reference models trained in pairs on complementary halves.

    Model 2j trains on a random half of the n records and model 2j+1 on the
    other half, so every record is "in" for exactly one model of each pair
    (Privacy Meter's and Carlini et al.'s design; an odd ``n`` leaves the middle
    record in the first half).

    Returns
    -------
    ndarray of bool, shape (n_models, n)
    """
    check_scalar(n_models, name="n_models", kind=(int, np.integer), min_val=2)
    if n_models % 2:
        raise InvalidParameterError(f"n_models must be even (models come in complementary pairs); got {n_models}")
    rng = check_random_state(random_state)
    masks = np.zeros((n_models, n), dtype=bool)
    half = (n + 1) // 2
    for j in range(n_models // 2):
        perm = rng.permutation(n)
        masks[2 * j, perm[:half]] = True
        masks[2 * j + 1] = ~masks[2 * j]
    return masks


def fit_reference_models(
    learner,
    X,
    y,
    n_models: int,
    *,
    in_mask=None,
    n_classes: int | None = None,
    random_state: RandomStateLike = None,
    engine: Engine | None = None,
    query=None,
    redraw_pair=None,
) -> ReferenceSet:
    """Train reference models in complementary pairs on the pool (X, y) and query them on it.

    A reference model's training set is a random draw, so when the learner's library fails to train one
    (:class:`~leakaudit.exceptions.TrainingFailedError`), its pair (models 2j and 2j+1) is drawn again: new halves
    and seeds from a seed derived from ``random_state``, recorded in the result's ``redrawn``; at most
    :data:`MAX_REDRAWS` times a pair, then the library's error is raised.

    Parameters
    ----------
    learner : Learner
        The training algorithm (the adversary knows it, as in Shokri et al., LiRA, RMIA).
    X : array of shape (n, d)
        The pool the reference models train on (audited records and population).
    y : array of shape (n,)
    n_models : int
        Even number K of reference models (ignored when ``in_mask`` is given).
    in_mask : array (K, n) of bool, optional
        Training sets; default :func:`paired_half_masks`.
    n_classes : int, optional
    random_state : None, int or Generator
    engine : leakaudit.engine.Engine, optional
        Trains the models (its backend and resumable on-disk cache); default
        :func:`leakaudit.engine.default_engine`.
    query : array of int, optional
        Indices of the pool records to query the models on (default: all n). An attack that scores
        the audited records only (LiRA, Privacy Meter's reference attack) need not query the rest.
    redraw_pair : callable, optional
        ``redraw_pair(rng)`` -> bool array (2, n): a new complementary pair of training sets drawn with the
        Generator ``rng``, as ``in_mask`` was drawn. Default: :func:`paired_half_masks`' when ``in_mask`` is not
        given; with ``in_mask`` given and no ``redraw_pair``, a training failure is raised, not redrawn.

    Returns
    -------
    ReferenceSet with probs of shape (K, q, C) and in_mask (K, q): the q queried records
    (``q = n`` by default), in the order of ``query``.
    """
    X = check_matrix(X, name="X")
    y = check_labels(y, name="y")
    check_consistent_length(X=X, y=y)
    engine = resolve_engine(engine)
    rng = check_random_state(random_state)
    if in_mask is None:
        _check_reference_cost(n_models, len(X), X.shape[1])
        in_mask = paired_half_masks(len(X), n_models, rng)
        if redraw_pair is None:
            n_pool = len(X)

            def redraw_pair(g):
                return paired_half_masks(n_pool, 2, g)
    in_mask = np.asarray(in_mask, dtype=bool)
    if in_mask.ndim != 2 or in_mask.shape[1] != len(X):
        raise InvalidInputError(f"in_mask must have shape (K, {len(X)}); got {in_mask.shape}")
    root = int(rng.integers(0, 2**31 - 1))
    seeds = spawn_seeds(root, in_mask.shape[0])
    n_classes = n_classes or max(int(y.max()) + 1, 2)
    if query is not None:
        query = check_indices(query, n=len(X), name="query")
    X_query = X if query is None else X[query]
    redrawn = ()
    try:
        probs = engine.predict_many(learner, X, y, [np.flatnonzero(m) for m in in_mask], seeds, X_query, n_classes)
    except TrainingFailedError:
        if redraw_pair is None or in_mask.shape[0] % 2:
            raise
        probs, in_mask, redrawn = _fit_redrawing(engine, learner, X, y, in_mask, seeds, X_query, n_classes,
                                                 redraw_pair, named_seed(root, "reference redraw"))
    return ReferenceSet(probs, in_mask if query is None else in_mask[:, query], redrawn)


#: redraws of one reference pair's training halves, at most, when the learner's library fails to train on them:
#: enough that a library failing on about half the draws rarely ends an audit (the rates in docs/calibration.md)
MAX_REDRAWS = 10


def _fit_redrawing(engine, learner, X, y, in_mask, seeds, X_query, n_classes, redraw_pair, seed: int):
    """The reference models of ``in_mask`` trained pair by pair (models 2j, 2j+1); a pair the learner's library fails
    to train is drawn again by ``redraw_pair`` with new seeds, from the seed of ``(seed, j, attempt)``. Returns the
    outputs, the masks as trained and the redraws (:attr:`ReferenceSet.redrawn`)."""
    in_mask, seeds = in_mask.copy(), list(seeds)
    out, redrawn = [], []
    for j in range(0, in_mask.shape[0], 2):
        for attempt in range(MAX_REDRAWS + 1):
            try:
                out.append(np.asarray(engine.predict_many(learner, X, y, [np.flatnonzero(m) for m in in_mask[j:j + 2]],
                                                          seeds[j:j + 2], X_query, n_classes)))
                break
            except TrainingFailedError as exc:
                if attempt == MAX_REDRAWS:
                    where = (f"the same failure on all {MAX_REDRAWS + 1} draws of training records: the recipe "
                             "fails, not the draw"
                             if all(r["reason"] == str(exc) for r in redrawn if r["pair"] == j // 2) else
                             f"reference models {j} and {j + 1}, after {MAX_REDRAWS} redraws of their training halves")
                    raise TrainingFailedError(f"{exc} ({where})") from None
                s = int(np.random.SeedSequence([seed, j // 2, attempt]).generate_state(1, dtype=np.uint32)[0])
                in_mask[j:j + 2] = redraw_pair(np.random.default_rng(s))
                seeds[j:j + 2] = spawn_seeds(s, 2)
                redrawn.append({"pair": j // 2, "attempt": attempt + 1, "seed": s, "reason": str(exc)})
    return np.concatenate(out), in_mask, tuple(redrawn)


def _check_reference_cost(n_models: int, n_rows: int, n_features: int, *, work: bool = True) -> None:
    """Refuse, before any half is drawn, reference models whose membership masks (a byte per model and record) take
    more than the memory budget, or (``work``) whose training (each model reads its half of the rows) more than the
    work budget. Their outputs are the engine's to keep within the memory budget (on disk past it)."""
    check_memory(float(n_models) * n_rows, f"{n_models:,} reference models over {n_rows:,} records: their membership "
                 "masks alone would take", fix="train fewer reference models")
    if work:
        check_work(float(n_models) * (n_rows // 2) * n_features, f"{n_models:,} reference models (each reading "
                   f"{n_rows // 2:,} x {n_features:,} training rows)", fix="train fewer reference models")


def audit_reference_models(learner, X, y, n_models: int, *, X_population=None, y_population=None,
                           n_classes: int | None = None, random_state: RandomStateLike = None,
                           engine: Engine | None = None, groups=None) -> ReferenceSet:
    """Reference models as an audit trains them: in complementary pairs on halves of the audited records ``X``
    (each record "in" for exactly half of them, :func:`paired_half_masks`), the population records, when given,
    never trained on (RMIA's z samples, which must be outside every reference model). Queried on the audited
    records, then the population: ``probs`` of shape (K, n + n_pop, C).

    ``random_state`` (an int, as the audit passes) draws both the halves and the models' seeds. ``groups`` (an
    integer code per audited record, 0 to the number of groups - 1: a privacy unit): the halves are halves of the
    groups, so a record is "in" exactly when the rest of its group is. A pair the learner's library fails to train
    is drawn again alike (:func:`fit_reference_models`, ``redrawn``)."""
    # the audit's profile fixes how many (its work budget bounds each model a file declares, not their number)
    _check_reference_cost(n_models, len(y) + (0 if y_population is None else len(y_population)), np.shape(X)[1],
                          work=False)
    groups = None if groups is None else np.asarray(groups, dtype=np.int64)
    n, n_pop = len(y), 0 if X_population is None else len(X_population)

    def draw(k: int, rs) -> np.ndarray:  # k models' masks over the audited records, then the population (never in)
        masks = (paired_half_masks(n, k, rs) if groups is None
                 else paired_half_masks(int(groups.max()) + 1, k, rs)[:, groups])
        return np.hstack([masks, np.zeros((k, n_pop), bool)]) if n_pop else masks

    masks = draw(n_models, random_state)
    if n_pop:
        X = np.vstack([X, X_population])
        y = np.concatenate([y, y_population])
    return fit_reference_models(learner, X, y, n_models, in_mask=masks, n_classes=n_classes,
                                random_state=random_state, engine=engine, redraw_pair=lambda g: draw(2, g))

"""The learner protocol: a training algorithm that trains one model or many.

A *learner* is a training algorithm with its hyperparameters (set in
``__init__``, never changed by ``fit``). ``fit`` returns a fitted *model*;
``fit_many`` trains K models on K index subsets of one dataset and returns a
:class:`ModelBank`. Labels are integer class indices ``0..n_classes-1``; every
model of a bank reports probabilities for all ``n_classes`` classes even when
its subset misses one.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from sklearn.base import BaseEstimator

from .._random import RandomStateLike, spawn_seeds
from .._validation import check_indices, check_labels, check_matrix, check_vector, check_consistent_length
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError

__all__ = ["Model", "Learner", "ModelBank", "ListModelBank", "check_fit_inputs", "check_subsets"]


@runtime_checkable
class Model(Protocol):
    """A fitted model. Classifiers have ``predict_proba``; regressors ``predict``."""

    def predict_proba(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - protocol
        """Class probabilities, shape (n_samples, n_classes)."""


class ModelBank(abc.ABC):
    """K fitted models of one learner, queried together.

    ``predict_proba(X)`` returns shape (K, n_samples, n_classes); for regressors
    ``predict(X)`` returns shape (K, n_samples).
    """

    n_models: int
    n_classes: int | None

    def __len__(self) -> int:
        return self.n_models

    @abc.abstractmethod
    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Probabilities of every model, shape (n_models, n_samples, n_classes)."""

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Regression outputs of every model, shape (n_models, n_samples)."""
        raise NotImplementedError(f"{type(self).__name__} holds classifiers; use predict_proba")

    @abc.abstractmethod
    def model(self, k: int) -> Model:
        """The k-th model on its own."""

    def models(self) -> list[Model]:
        return [self.model(k) for k in range(self.n_models)]


class ListModelBank(ModelBank):
    """A bank of independently fitted models (the generic fallback)."""

    def __init__(self, models: Sequence[Any], n_classes: int | None):
        self._models = list(models)
        self.n_models = len(self._models)
        self.n_classes = n_classes

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        if self.n_models == 0:
            return np.zeros((0, len(X), self.n_classes or 0))
        return np.stack([m.predict_proba(X) for m in self._models])

    def predict(self, X: np.ndarray) -> np.ndarray:
        if self.n_models == 0:
            return np.zeros((0, len(X)))
        return np.stack([m.predict(X) for m in self._models])

    def model(self, k: int) -> Any:
        return self._models[k]


class Learner(BaseEstimator, abc.ABC):
    """Base class of training algorithms.

    Subclasses set hyperparameters as keyword-only ``__init__`` arguments and
    implement :meth:`_fit`; they may override :meth:`fit_many` with a batched
    path that must give the same models as fitting one at a time with the same
    seeds.

    Class attributes
    ----------------
    task : {"classification", "regression"}
    """

    task: str = "classification"

    # -- public API ---------------------------------------------------------
    def fit(self, X: Any, y: Any, *, random_state: RandomStateLike = None, n_classes: int | None = None) -> Any:
        """Train one model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Integer class indices for classifiers; real targets for regressors.
        random_state : None, int or Generator
        n_classes : int, optional
            Number of classes the model must output (default: ``max(y) + 1``).

        Returns
        -------
        model : object with ``predict_proba`` (classifiers) or ``predict`` (regressors)
        """
        X, y, n_classes = check_fit_inputs(X, y, task=self.task, n_classes=n_classes)
        return self._fit(X, y, random_state=random_state, n_classes=n_classes)

    def fit_many(
        self,
        X: Any,
        y: Any,
        subsets: Sequence[Any],
        random_states: Sequence[int] | RandomStateLike = None,
        *,
        n_classes: int | None = None,
    ) -> ModelBank:
        """Train K models, model k on rows ``subsets[k]`` of (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        subsets : sequence of K index arrays (or boolean masks of length n_samples)
        random_states : sequence of K ints, or one seed from which K are spawned
        n_classes : int, optional
            Classes every model outputs (default: ``max(y) + 1`` over all of y).

        Returns
        -------
        ModelBank with ``n_models == K``.
        """
        X, y, n_classes = check_fit_inputs(X, y, task=self.task, n_classes=n_classes)
        subsets = check_subsets(subsets, n=len(X), y=y if self.task == "classification" else None)
        seeds = resolve_seeds(random_states, len(subsets))
        return self._fit_many(X, y, subsets, seeds, n_classes=n_classes)

    def fit_predict_many(
        self,
        X: Any,
        y: Any,
        subsets: Sequence[Any],
        random_states: Sequence[int] | RandomStateLike = None,
        X_query: Any = None,
        *,
        n_classes: int | None = None,
    ) -> np.ndarray:
        """Train K models as :meth:`fit_many` does and return their class probabilities on ``X_query``.

        The same numbers as ``fit_many(X, y, subsets, random_states).predict_proba(X_query)``; a learner
        that can query each model while it trains (``RandomForest``: every tree as soon as it is grown)
        does so and keeps no models, which saves their memory and a pass over them.

        Parameters
        ----------
        X, y, subsets, random_states, n_classes : as in :meth:`fit_many`
        X_query : array-like of shape (n_query, n_features)

        Returns
        -------
        ndarray of shape (K, n_query, n_classes)
        """
        if self.task != "classification":
            raise UnsupportedError(f"fit_predict_many returns class probabilities; {type(self).__name__} is a "
                                   f"{self.task} learner (use fit_many(...).predict)")
        X, y, n_classes = check_fit_inputs(X, y, task=self.task, n_classes=n_classes)
        subsets = check_subsets(subsets, n=len(X), y=y)
        seeds = resolve_seeds(random_states, len(subsets))
        Xq = check_matrix(X_query, name="X_query", allow_empty=True)
        if Xq.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {Xq.shape[1]} features; X has {X.shape[1]}")
        return self._fit_predict_many(X, y, subsets, seeds, Xq, n_classes=n_classes)

    # -- for subclasses -----------------------------------------------------
    @abc.abstractmethod
    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike, n_classes: int | None) -> Any:
        """Fit one model on validated inputs."""

    def _fit_many(
        self, X: np.ndarray, y: np.ndarray, subsets: list[np.ndarray], seeds: list[int], *, n_classes: int | None
    ) -> ModelBank:
        models = [self._fit(X[s], y[s], random_state=seed, n_classes=n_classes) for s, seed in zip(subsets, seeds)]
        return ListModelBank(models, n_classes)


    def _fit_predict_many(self, X: np.ndarray, y: np.ndarray, subsets: list[np.ndarray], seeds: list[int],
                          X_query: np.ndarray, *, n_classes: int | None) -> np.ndarray:
        return np.asarray(self._fit_many(X, y, subsets, seeds, n_classes=n_classes).predict_proba(X_query))


def resolve_seeds(random_states: Sequence[int] | RandomStateLike, k: int) -> list[int]:
    """K integer seeds: given as a sequence, or spawned from one seed."""
    if isinstance(random_states, (list, tuple, np.ndarray)):
        seeds = [int(s) for s in random_states]
        if len(seeds) != k:
            raise InvalidParameterError(f"random_states has {len(seeds)} seeds for {k} subsets")
        return seeds
    return spawn_seeds(random_states, k, name="random_states")


#: Largest feature magnitude training accepts: squares and products of larger values overflow float64.
_MAX_ABS_FEATURE = 1e100


def check_fit_inputs(X: Any, y: Any, *, task: str, n_classes: int | None = None):
    """Validate training inputs; return (X float64 2D, y, n_classes or None)."""
    X = check_matrix(X, name="X")
    big = float(np.abs(X).max()) if X.size else 0.0
    if big > _MAX_ABS_FEATURE:
        raise InvalidInputError(
            f"X holds a value of magnitude {big:.3g}; values above {_MAX_ABS_FEATURE:.0e} overflow training "
            "arithmetic (squares, exponentials): rescale or standardise the features"
        )
    if task == "classification":
        y = check_labels(y, name="y")
        check_consistent_length(X=X, y=y)
        inferred = int(y.max()) + 1
        if n_classes is None:
            n_classes = max(inferred, 2)
        elif inferred > n_classes:
            raise InvalidInputError(f"y holds label {inferred - 1} but n_classes={n_classes}")
    else:
        y = check_vector(y, name="y")
        check_consistent_length(X=X, y=y)
        n_classes = None
    return X, y, n_classes


def check_subsets(subsets: Sequence[Any], *, n: int, y: np.ndarray | None = None) -> list[np.ndarray]:
    """Validate K index subsets of ``n`` rows: non-empty, in range.

    A classification subset holding a single class is allowed (the model then
    predicts from what it saw); a learner that cannot fit one raises our error.
    """
    if subsets is None or len(subsets) == 0:
        raise InvalidInputError("subsets is empty; give at least one index subset")
    out = []
    for k, s in enumerate(subsets):
        out.append(check_indices(s, name=f"subsets[{k}]", n=n))
    return out

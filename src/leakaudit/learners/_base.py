"""The learner protocol: a training algorithm that trains one model or many.

A *learner* is a training algorithm with its hyperparameters (set in
``__init__``, never changed by ``fit``). ``fit`` returns a fitted *model*;
``fit_many`` trains K models on K index subsets of one dataset and returns a
:class:`ModelBank`. Labels are integer class indices ``0..n_classes-1``; every
model of a bank reports probabilities for all ``n_classes`` classes even when
its subset misses one.

``X`` may be a SciPy sparse matrix (one-hot or bag-of-words data). A learner
that trains on it as it is sets ``accepts_sparse = True``; every other learner
gets a dense array, in ``fit_many`` of only the rows its subsets use (with the
subsets renumbered), so a large sparse pool is never densified whole.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .._random import RandomStateLike, seed_to_int, spawn_seeds
from .._validation import check_indices, check_labels, check_matrix, check_vector, check_consistent_length
from ..exceptions import InvalidInputError, InvalidParameterError, TrainingFailedError, UnsupportedError

__all__ = ["Capabilities", "Learner", "ListModelBank", "Model", "ModelBank", "capabilities", "check_feature_matrix",
           "check_fit_inputs", "check_many_inputs", "check_subsets", "learner_family", "resolve_seeds", "TreeShape",
           "BoostedModel", "BankLearner", "ProbaModel", "keep_params"]


@runtime_checkable
class Model(Protocol):
    """A fitted model. Classifiers have ``predict_proba``; regressors ``predict``."""

    def predict_proba(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - protocol
        """Class probabilities, shape (n_samples, n_classes)."""


class ProbaModel:
    """A fitted classifier whose ``predict`` is the most probable class of its ``predict_proba``."""

    def predict(self, X: Any) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)


class ModelBank(abc.ABC):
    """K fitted models of one learner, queried together.

    ``predict_proba(X)`` returns shape (K, n_samples, n_classes); for regressors
    ``predict(X)`` returns shape (K, n_samples).
    """

    n_models: int
    n_classes: int | None
    #: whether predict_proba / predict take a SciPy sparse X as it is
    accepts_sparse: bool = False

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


@dataclass(frozen=True)
class Capabilities:
    """What a learner does beyond training, as it declares it (:attr:`Learner.capabilities`).

    The audit, DTP and the engine read these through :func:`capabilities`, never from the learner's type or
    private attributes. The defaults promise nothing: a learner that declares nothing is retrained model by
    model, its seed is assumed to matter, and its banks are not cached.

    Attributes
    ----------
    loo : str or None
        Exact leave-one-out without retraining: the learner has ``loo_proba(X, y, records, *, X_query=None,
        n_classes=None, return_full=False)`` (``return_full``: also the full model's outputs, from the same fit);
        the value names the method in results. None: leave-one-out models are retrained.
    loo_models : bool
        The learner has ``loo_models(X, y, records, *, n_classes=None)``: the full model and the leave-one-out
        models themselves.
    stochastic : bool
        The seed may change the trained model. False: the same data give the same model whatever the seed (a
        closed-form leave-one-out is then computed once for every repeat).
    state : bool
        The learner implements :class:`leakaudit.engine.SupportsState` (``get_state`` / ``from_state``): the
        engine caches its banks' weights as arrays.
    votes : int or None
        T when each model's class probabilities are the mean of T votes (a forest's trees: votes k/T when they
        are fully grown), else None.
    fits_one_class : bool
        A subset holding a single class trains a model (leakaudit's learners, told the number of classes);
        False for scikit-learn classifiers, which refuse it.
    implements : str or None
        The published algorithm its training reproduces, for reports.
    shared_order : {None, "block", "call"}
        How a model depends on the other models of its ``fit_many`` call (one row order drawn for the whole call):
        None, not at all; "block", through the call's seeds and size only (a model is reproduced by a call of as
        many models with the same seed); "call", through every model of the call (they are trained together).
    """

    loo: str | None = None
    loo_models: bool = False
    stochastic: bool = True
    state: bool = False
    votes: int | None = None
    fits_one_class: bool = True
    implements: str | None = None
    shared_order: str | None = None


def capabilities(learner: Any) -> Capabilities:
    """The capabilities ``learner`` declares; the defaults for an object that is not a :class:`Learner`."""
    return learner.capabilities if isinstance(learner, Learner) else Capabilities()


def learner_family(learner: Any) -> str | None:
    """The model family ``learner`` declares (:attr:`Learner.family`); None for an object that is not a
    :class:`Learner`."""
    return learner.family if isinstance(learner, Learner) else None


class Learner(BaseEstimator, abc.ABC):
    """Base class of training algorithms.

    Subclasses set hyperparameters as keyword-only ``__init__`` arguments and
    implement :meth:`_fit`; they may override :meth:`fit_many` with a batched
    path that must give the same models as fitting one at a time with the same
    seeds.

    Class attributes
    ----------------
    task : {"classification", "regression"}
    accepts_sparse : bool
        Whether ``_fit`` / ``_fit_many`` take a SciPy CSR matrix as ``X``
        (else they get a dense float64 array).
    family : str or None
        The model family whose closed forms leakaudit's bounds and audits use (read through
        :func:`learner_family`): "naive-bayes" (:class:`NaiveBayes`: Props 6.4/6.5, exact DTP, group removal),
        "bayes-inference" (Prop 6.3), "softmax-linear" (:class:`LogisticRegression`: the Lipschitz bound), "dp-sgd"
        (:class:`DPSGD`: the one-run DP audit); None for any other learner.

    Hooks and capabilities (the audit asks the learner, never its type)
    -------------------------------------------------------------------
    capabilities : Capabilities
        What the learner does beyond training (closed-form leave-one-out, whether the seed matters, cached
        state, vote counts, ...): a class attribute, or a property where it depends on the parameters.
    validate_params()
        Raises on a parameter the learner cannot train with; every path that trains (:meth:`fit`,
        :meth:`fit_many`, :meth:`fit_predict_many`, the engine, a closed-form leave-one-out) calls it first.
    oob_estimator()
        An unfitted scikit-learn ensemble that trains what this learner trains and keeps out-of-bag outputs, or
        None.
    parameter_codec(X, fitted=None)
        ``(extract, rebuild)`` between a trained model and one parameter vector of fixed length (what Izzo et al.'s
        MIP noise is added to), or UnsupportedError saying why its models are not such a vector.
    """

    task: str = "classification"
    accepts_sparse: bool = False
    family: ClassVar[str | None] = None
    capabilities: Capabilities = Capabilities()

    # -- public API ---------------------------------------------------------
    def fit(self, X: Any, y: Any, *, random_state: RandomStateLike = None, n_classes: int | None = None) -> Any:
        """Train one model.

        Parameters
        ----------
        X : array-like or SciPy sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Integer class indices for classifiers; real targets for regressors.
        random_state : None, int or Generator
        n_classes : int, optional
            Number of classes the model must output (default: ``max(y) + 1``).

        Returns
        -------
        model : object with ``predict_proba`` (classifiers) or ``predict`` (regressors)
        """
        self.validate_params()
        X, y, n_classes = check_fit_inputs(X, y, task=self.task, n_classes=n_classes,
                                           accept_sparse=self.accepts_sparse)
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
        X : array-like or SciPy sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        subsets : sequence of K index arrays (or boolean masks of length n_samples)
        random_states : sequence of K ints, or one seed from which K are spawned
        n_classes : int, optional
            Classes every model outputs (default: ``max(y) + 1`` over all of y).

        Returns
        -------
        ModelBank with ``n_models == K``.
        """
        self.validate_params()
        X, y, subsets, seeds, n_classes = check_many_inputs(X, y, subsets, random_states, task=self.task,
                                                            n_classes=n_classes, accept_sparse=self.accepts_sparse)
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
        self.validate_params()
        if self.task != "classification":
            raise UnsupportedError(f"fit_predict_many returns class probabilities; {type(self).__name__} is a "
                                   f"{self.task} learner (use fit_many(...).predict)")
        X, y, subsets, seeds, n_classes = check_many_inputs(X, y, subsets, random_states, task=self.task,
                                                            n_classes=n_classes, accept_sparse=self.accepts_sparse)
        Xq = check_feature_matrix(X_query, name="X_query", allow_empty=True, accept_sparse=self.accepts_sparse)
        if Xq.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {Xq.shape[1]} features; X has {X.shape[1]}")
        return self._fit_predict_many(X, y, subsets, seeds, Xq, n_classes=n_classes)

    def validate_params(self) -> None:
        """Raise :class:`~leakaudit.exceptions.LeakauditError` (naming the parameter) unless the learner can train;
        the default accepts everything."""

    def oob_estimator(self):
        """An unfitted scikit-learn ensemble that trains what this learner trains and keeps out-of-bag outputs
        (``oob_score=True``), or None when the learner has none."""
        return None

    def parameter_codec(self, X: Any, fitted: Any = None) -> tuple:
        """``(extract, rebuild)``: ``extract(model)`` gives a model this learner trained as one parameter vector of
        fixed length, ``rebuild(vector)`` a model that predicts from such a vector (Izzo et al.'s MIP noise is added
        to that vector: :mod:`leakaudit.mip`). ``X``: records of the shape the models take; ``fitted``: the given
        model the learner retrains, when there is one. Learners whose models are such a vector override this; the
        default raises :class:`~leakaudit.exceptions.UnsupportedError` saying why not."""
        raise UnsupportedError("needs a model whose parameters leakaudit can read and set")

    # -- for subclasses -----------------------------------------------------
    def _check_loo_inputs(self, X: Any, y: Any, records: Any, n_classes: int | None):
        """The opening of a closed-form leave-one-out: the parameter check (:meth:`validate_params`), then
        (X, y, records, n_classes) validated as :meth:`fit` validates them; ``records`` None means every row."""
        self.validate_params()
        X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
        records = np.arange(len(X)) if records is None else check_indices(records, name="records", n=len(X))
        return X, y, records, n_classes

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


class BankLearner(Learner):
    """A learner whose trainer is :meth:`_fit_many`: one model is the bank of one trained on every row."""

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike, n_classes: int | None) -> Any:
        return self._fit_many(X, y, [np.arange(len(X))], [seed_to_int(random_state)], n_classes=n_classes).model(0)


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


def check_feature_matrix(X: Any, *, name: str = "X", allow_empty: bool = False, accept_sparse: bool = False):
    """A finite 2-D float64 feature matrix: a dense array, or a CSR matrix where ``accept_sparse``.

    A SciPy sparse ``X`` is densified unless ``accept_sparse``.
    """
    if not sp.issparse(X):
        return check_matrix(X, name=name, allow_empty=allow_empty)
    if not accept_sparse:
        return check_matrix(X.toarray(), name=name, allow_empty=allow_empty)
    if X.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-dimensional; got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise InvalidInputError(f"{name} must hold numbers; got dtype {X.dtype}")
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.shape[0] == 0 and not allow_empty:
        raise InvalidInputError(f"{name} has no rows")
    if X.nnz and not np.isfinite(X.data).all():
        raise InvalidInputError(f"{name} contains NaN or inf")
    return X


def check_fit_inputs(X: Any, y: Any, *, task: str, n_classes: int | None = None, accept_sparse: bool = False):
    """Validate training inputs; return (X, y, n_classes or None).

    X comes back as a 2-D float64 array, or as a CSR matrix if it is sparse and ``accept_sparse``.
    """
    X = check_feature_matrix(X, name="X", accept_sparse=accept_sparse)
    values = X.data if sp.issparse(X) else X
    big = float(np.abs(values).max()) if values.size else 0.0
    if big > _MAX_ABS_FEATURE:
        raise InvalidInputError(
            f"X holds a value of magnitude {big:.3g}; values above {_MAX_ABS_FEATURE:.0e} overflow training "
            "arithmetic (squares, exponentials): rescale or standardise the features"
        )
    if task == "classification":
        y = check_labels(y, name="y")
        check_consistent_length(X=range(X.shape[0]), y=y)
        inferred = int(y.max()) + 1
        if n_classes is None:
            n_classes = max(inferred, 2)
        elif inferred > n_classes:
            raise InvalidInputError(f"y holds label {inferred - 1} but n_classes={n_classes}")
    else:
        y = check_vector(y, name="y")
        check_consistent_length(X=range(X.shape[0]), y=y)
        n_classes = None
    return X, y, n_classes


def check_subsets(subsets: Sequence[Any], *, n: int) -> list[np.ndarray]:
    """Validate K index subsets of ``n`` rows: non-empty, in range.

    A classification subset holding a single class is allowed (the model then
    predicts from what it saw); a learner that cannot fit one raises our error.
    """
    if subsets is None or len(subsets) == 0:
        raise InvalidInputError("subsets is empty; give at least one index subset")
    return [check_indices(s, name=f"subsets[{k}]", n=n) for k, s in enumerate(subsets)]


def check_many_inputs(X: Any, y: Any, subsets: Sequence[Any], random_states: Sequence[int] | RandomStateLike, *,
                      task: str, n_classes: int | None = None, accept_sparse: bool = False):
    """The opening of every ``fit_many``: validate the data, the K subsets and the K seeds.

    A sparse ``X`` that the learner does not take as it is (``accept_sparse=False``) is
    reduced to the rows the subsets use, densified, and the subsets renumbered into it
    (model k trains on the same rows in the same order).

    Returns
    -------
    X : ndarray of shape (n_rows, n_features) or CSR matrix
    y : ndarray of shape (n_rows,)
    subsets : list of K int64 index arrays into X
    seeds : list of K ints
    n_classes : int or None
    """
    compact = sp.issparse(X) and not accept_sparse
    # a sparse X is validated as it is (densifying rows no subset uses could take far more memory)
    X, y, n_classes = check_fit_inputs(X, y, task=task, n_classes=n_classes, accept_sparse=accept_sparse or compact)
    subsets = check_subsets(subsets, n=X.shape[0])
    seeds = resolve_seeds(random_states, len(subsets))
    if compact:
        used = np.unique(np.concatenate(subsets))
        X, y = X[used].toarray(), y[used]
        subsets = [np.searchsorted(used, s) for s in subsets]
    return X, y, subsets, seeds, n_classes


@dataclass(frozen=True)
class TreeShape:
    """The trees one fit of a boosting recipe grows: ``trees`` in all, each of at most ``levels`` levels and
    ``leaves`` leaves, its split search over ``bins`` candidate thresholds a feature; ``row_passes`` further passes
    over the rows a round (CatBoost's leaf estimation)."""

    trees: int
    levels: int
    leaves: int
    bins: int
    row_passes: int = 0


class BoostedModel(ProbaModel):
    """One model a boosting library trained, with class probabilities over ``n_classes`` classes: a subclass gives
    ``_proba(X)`` for a non-empty float64 ``X`` of the model's width.

    Attributes
    ----------
    booster_ : the library's model
    n_classes_ : int
    n_features_in_ : int
    rounds_ : int or None
        Boosting rounds used for prediction (None: every round, or the library's best iteration).
    """

    def __init__(self, booster, n_classes: int, n_features: int, rounds: int | None = None):
        self.booster_ = booster
        self.n_classes_ = int(n_classes)
        self.n_features_in_ = int(n_features)
        self.rounds_ = rounds

    def _proba(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - each library's
        raise NotImplementedError

    def predict_proba(self, X: Any) -> np.ndarray:
        X = check_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features but the model was trained on {self.n_features_in_}")
        if X.shape[0] == 0:
            return np.zeros((0, self.n_classes_))
        return self._proba(np.asarray(X, dtype=np.float64))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.n_classes_} classes)"


class BoostedLearner(Learner):
    """A gradient-boosting library's learner (:class:`~leakaudit.learners.xgb.XGBoostLearner`,
    :class:`~leakaudit.learners.lgbm.LightGBMLearner`): the parameters both take, and their checks. A subclass sets
    ``library`` (its name in messages) and ``objectives`` (those it trains)."""

    library: ClassVar[str]
    objectives: ClassVar[tuple[str, ...]]

    def __init__(self, *, objective: str | None = None, n_rounds: int = 100, params: dict | None = None,
                 n_jobs: int = 1):
        keep_params(self, locals())

    def validate_params(self) -> None:
        """``objective`` (None: the library's binary or multi-class one by the number of classes), ``n_rounds``,
        ``params`` and ``n_jobs``, each refused by name when it cannot train."""
        if self.objective is not None and self.objective not in self.objectives:
            raise UnsupportedError(f"{self.library} objective {self.objective!r}: leakaudit audits classifiers "
                                   f"trained with {', '.join(self.objectives)}")
        for name in ("n_rounds", "n_jobs"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InvalidParameterError(f"{name} must be an int >= 1; got {v!r}")
        if self.params is not None and not isinstance(self.params, dict):
            raise InvalidParameterError(f"params must be a dict of {self.library} parameters; got "
                                        f"{type(self.params).__name__}")

    def tree_shape(self, n_rows: int, n_classes: int) -> TreeShape:  # pragma: no cover - each library's
        """The trees one fit of this recipe grows on ``n_rows`` records of ``n_classes`` classes."""
        raise NotImplementedError

    def _train(self, X: np.ndarray, y: np.ndarray, params: dict, n_classes: int) -> BoostedModel:  # pragma: no cover
        """One model trained by the library with ``params`` (:meth:`_train_params`'s)."""
        raise NotImplementedError

    def _library_error(self) -> type[Exception]:  # pragma: no cover - each library's
        raise NotImplementedError

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike,
             n_classes: int | None) -> BoostedModel:
        n_classes, params = self._training(y, random_state, n_classes)
        try:
            return self._train(np.asarray(X, dtype=np.float64), np.asarray(y), params, n_classes)
        except self._library_error() as exc:
            raise TrainingFailedError(f"{self.library} failed to train: {str(exc).splitlines()[0][:300]}") from None

    def _training(self, y: np.ndarray, random_state: RandomStateLike, n_classes: int | None) -> tuple[int, dict]:
        """The number of classes one fit trains (at least 2) and the library's parameters for it, seeded by
        ``random_state`` (None: the library's own seed)."""
        n_classes = int(n_classes or max(int(y.max()) + 1, 2))
        return n_classes, self._train_params(None if random_state is None else seed_to_int(random_state), n_classes)


def refuse_removed(owner: str, removed: dict, *, native_off: str) -> None:
    """Refuse keyword arguments ``owner`` no longer takes: ``native=`` (replaced by ``backend=``; ``native=False``
    was ``backend=native_off``) is named with its replacement, anything else as unexpected."""
    if "native" in removed:
        value = removed["native"]
        instead = f"backend={native_off!r}" if value is False else "backend='auto' (the default)"
        raise InvalidParameterError(f"{owner}'s native= was removed: backend= chooses the trainer; for "
                                    f"native={value!r} use {instead}, or backend='compiled' to require the kernel")
    if removed:
        raise InvalidParameterError(f"{owner} got unexpected keyword argument(s) {sorted(removed)}")


def keep_params(obj: Any, values: dict[str, Any]) -> None:
    """Keep each named parameter of the ``__init__`` that calls this as ``obj``'s attribute of its name (scikit-learn's
    convention, which ``get_params`` and ``clone`` read): ``values`` is that ``__init__``'s ``locals()``."""
    code = sys._getframe(1).f_code  # the calling __init__'s own parameters (a subclass may have others)
    for name in code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]:
        setattr(obj, name, values[name])

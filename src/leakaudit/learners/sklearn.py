"""A :class:`~leakaudit.learners.Learner` around any scikit-learn classifier or regressor.

``SklearnLearner(estimator)`` clones ``estimator`` for every model it trains,
puts the model's seed into every ``random_state`` parameter the clone has, and
wraps the fitted clone so that ``predict_proba`` always returns one column per
class ``0..n_classes-1`` (scikit-learn returns one column per class *seen at fit
time*, ``classes_``).

Single-class subsets
--------------------
A classification subset holding only one class is passed to the estimator as is:

- estimators that fit one class (decision trees, naive Bayes, k-NN, random
  forests) predict that class with the probability they compute (1 for these),
  and every other column is 0;
- estimators that refuse one class (``LogisticRegression``, ``SVC``, gradient
  boosting) raise :class:`~leakaudit.exceptions.InvalidInputError` naming the
  subset and its class;
- estimators whose output does not have one column per fitted class
  (``MLPClassifier`` returns two columns after fitting one class) also raise
  :class:`~leakaudit.exceptions.InvalidInputError`, since which column means
  what is undefined.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor

from .._random import RandomStateLike, seed_to_int
from .._validation import check_matrix
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import Capabilities, Learner, ListModelBank, ModelBank, keep_params

__all__ = ["SklearnLearner", "SklearnModel", "PIPELINE_NOT_A_VECTOR"]


def seeded(estimator: Any) -> bool:
    """Whether a scikit-learn estimator's seed may change the model it trains: it has a ``random_state``, or one of
    its nested estimators (a Pipeline's steps) has; True for what is not an estimator instance."""
    try:
        return any(k == "random_state" or k.endswith("__random_state") for k in estimator.get_params())
    except (AttributeError, TypeError):  # not an estimator instance (validate_params says so): assume it is
        return True


class SklearnModel:
    """One fitted scikit-learn estimator, with outputs over all ``n_classes`` classes.

    Parameters
    ----------
    estimator : fitted scikit-learn estimator
    n_classes : int or None
        Number of classes the model outputs (None for regressors).

    Attributes
    ----------
    estimator_ : the fitted estimator
    classes_ : ndarray of shape (n_fitted_classes,) or None
        Classes the estimator saw at fit time (a subset of ``0..n_classes-1``).
    n_features_in_ : int
    """

    def __init__(self, estimator: Any, n_classes: int | None, n_features: int):
        self.estimator_ = estimator
        self.n_classes = n_classes
        self.n_features_in_ = int(n_features)
        self.classes_ = None if n_classes is None else np.asarray(estimator.classes_).astype(np.int64)

    def _check_X(self, X: Any) -> np.ndarray:
        X = check_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(
                f"X has {X.shape[1]} features but the model was fitted on {self.n_features_in_}"
            )
        return X

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes); classes unseen at fit time get 0."""
        if self.n_classes is None:
            raise UnsupportedError("this model is a regressor; use predict")
        X = self._check_X(X)
        out = np.zeros((X.shape[0], self.n_classes), dtype=np.float64)
        if X.shape[0] == 0:
            return out
        try:
            proba = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        except ValueError as exc:  # e.g. values too large for the estimator's float32
            raise InvalidInputError(f"{type(self.estimator_).__name__} rejected X: {exc}") from None
        out[:, self.classes_] = proba
        return out

    def predict(self, X: Any) -> np.ndarray:
        """Regression outputs (shape (n_samples,)), or the most probable class for classifiers."""
        if self.n_classes is not None:
            return self.predict_proba(X).argmax(axis=1)
        X = self._check_X(X)
        if X.shape[0] == 0:
            return np.zeros(0)
        try:
            pred = self.estimator_.predict(X)
        except ValueError as exc:
            raise InvalidInputError(f"{type(self.estimator_).__name__} rejected X: {exc}") from None
        return np.asarray(pred, dtype=np.float64).reshape(X.shape[0])

    def __repr__(self) -> str:
        return f"SklearnModel({self.estimator_!r})"


def _set_seed(estimator: Any, seed: int) -> None:
    """Put ``seed`` into every ``random_state`` parameter of ``estimator`` (nested ones too)."""
    keys = [k for k in estimator.get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
    if keys:
        estimator.set_params(**{k: seed for k in keys})


#: fitted parameter arrays of the scikit-learn estimators whose parameters are one fixed-length vector
_PARAMETER_ARRAYS = (("coef_", "intercept_"), ("coefs_", "intercepts_"))
#: why a Pipeline's parameters are not the vector MIP noise is added to
PIPELINE_NOT_A_VECTOR = ("the model is a Pipeline: its preprocessing steps are fitted on the members too, and Izzo et "
                         "al.'s mechanism covers one parameter vector (a bare linear model or MLPClassifier is covered)")


class SklearnLearner(Learner):
    """Train models with a scikit-learn estimator.

    Parameters
    ----------
    estimator : scikit-learn classifier or regressor (unfitted)
        Cloned for every model; never fitted itself. A classifier must provide
        ``predict_proba`` (for ``SVC`` pass ``probability=True``).
    n_jobs : int or None, default=None
        Worker processes (joblib, loky backend) that :meth:`fit_many` spreads
        its models over; None or 1 trains in this process, -1 uses every core.
        Each worker runs one BLAS thread.

    Notes
    -----
    Model k is trained with seed ``random_states[k]`` put into every
    ``random_state`` parameter of the clone (nested ones in pipelines too), so
    the bank does not depend on ``n_jobs`` or on the order of training.
    With ``random_state=None`` the estimator's own ``random_state`` is kept.
    See the module docstring for subsets holding a single class.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> bank = SklearnLearner(DecisionTreeClassifier()).fit_many(X, y, [[0, 1, 2, 3], [0, 1]], [1, 2])
    >>> bank.predict_proba(np.array([[3.0]]))[:, 0]
    array([[0., 1.],
           [1., 0.]])
    """

    def __init__(self, estimator: Any = None, *, n_jobs: int | None = None):
        keep_params(self, locals())

    # -- task, from the estimator ---------------------------------------------
    @property
    def task(self) -> str:  # type: ignore[override]
        est = self.estimator
        if is_regressor(est):
            return "regression"
        if is_classifier(est):
            return "classification"
        # Duck typing for estimators without sklearn tags.
        return "classification" if hasattr(est, "predict_proba") else "regression"

    def validate_params(self) -> None:
        est = self.estimator
        if est is None:
            raise InvalidParameterError("estimator is required; pass an unfitted scikit-learn estimator")
        if isinstance(est, type):
            raise InvalidParameterError(
                f"estimator must be an estimator instance, not the class {est.__name__}; pass {est.__name__}()"
            )
        if not (hasattr(est, "fit") and hasattr(est, "get_params")):
            raise InvalidParameterError(
                f"estimator must be a scikit-learn estimator with fit and get_params; got {type(est).__name__}"
            )
        if self.task == "classification" and not hasattr(est, "predict_proba"):
            hint = " (pass probability=True)" if "probability" in est.get_params(deep=False) else ""
            raise UnsupportedError(
                f"estimator {type(est).__name__} has no predict_proba{hint}; membership attacks need probabilities"
            )
        if self.task == "regression" and not hasattr(est, "predict"):
            raise UnsupportedError(f"estimator {type(est).__name__} has no predict")
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, (int, np.integer))
                                        or self.n_jobs == 0 or self.n_jobs < -1):
            raise InvalidParameterError(f"n_jobs must be None, -1 or a positive int; got {self.n_jobs!r}")

    # -- capabilities ------------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """Vote counts of a random or extra-trees forest; the seed matters where the estimator has a
        ``random_state`` (nested ones too); scikit-learn classifiers refuse a single class."""
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

        est = self.estimator
        forest = isinstance(est, (RandomForestClassifier, ExtraTreesClassifier))
        return Capabilities(votes=int(est.n_estimators) if forest else None, stochastic=seeded(est),
                            fits_one_class=False)

    def oob_estimator(self):
        est = self.estimator
        if not hasattr(est, "get_params"):
            return None
        params = est.get_params(deep=False)
        if params.get("bootstrap") is True and "oob_score" in params and hasattr(est, "predict_proba"):
            return clone(est).set_params(oob_score=True)
        return None

    def parameter_codec(self, X: Any = None, fitted: Any = None) -> tuple:
        """For an estimator whose fitted parameters are arrays of fixed shape (linear models: ``coef_``,
        ``intercept_``; ``MLPClassifier``: ``coefs_``, ``intercepts_``, found on ``fitted``, the given model, or
        else the estimator): those arrays as one vector; ``rebuild`` sets a vector into a copy of a trained model."""
        import copy

        from sklearn.pipeline import Pipeline

        ref = self.estimator if fitted is None else fitted
        if isinstance(ref, Pipeline):
            raise UnsupportedError(PIPELINE_NOT_A_VECTOR)
        names = next((a for a in _PARAMETER_ARRAYS if all(hasattr(ref, n) for n in a)), None)
        if names is None and fitted is None:
            raise UnsupportedError(f"needs the fitted {type(ref).__name__} (fitted=) to find its parameter arrays")
        if names is None:
            raise UnsupportedError(f"{type(ref).__name__}'s fitted parameters are not one vector of fixed length "
                                   "(linear models and MLPClassifier are covered)")
        seen: dict = {}

        def arrays(est) -> list[np.ndarray]:
            out = []
            for n in names:
                v = getattr(est, n)
                out.extend(v if isinstance(v, list) else [v])
            return [np.asarray(a, dtype=float) for a in out]

        def extract(m: SklearnModel):
            seen.setdefault("model", m)
            return np.concatenate([a.ravel() for a in arrays(m.estimator_)])

        def rebuild(v):
            m = copy.deepcopy(seen["model"])
            est, v, pos = m.estimator_, np.asarray(v, dtype=float), 0
            for n in names:
                old = getattr(est, n)
                parts = old if isinstance(old, list) else [old]
                new = []
                for a in parts:
                    a = np.asarray(a)
                    new.append(v[pos:pos + a.size].reshape(a.shape).astype(a.dtype))
                    pos += a.size
                setattr(est, n, new if isinstance(old, list) else new[0])
            return m

        return extract, rebuild

    # -- Learner protocol -------------------------------------------------------
    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike, n_classes: int | None,
             _where: str = "") -> SklearnModel:
        est = clone(self.estimator)
        if random_state is not None:
            _set_seed(est, seed_to_int(random_state))
        fitted_classes = np.unique(y) if self.task == "classification" else None
        try:
            est.fit(X, y)
        except ValueError as exc:
            if fitted_classes is not None and fitted_classes.size < 2:
                raise InvalidInputError(
                    f"{type(self.estimator).__name__} cannot be fitted on a single class{_where} "
                    f"(all labels are {fitted_classes[0] if fitted_classes.size else 'missing'}): {exc}. "
                    "Use larger or stratified subsets, or an estimator that fits one class (e.g. a decision tree)"
                ) from exc
            raise InvalidInputError(f"{type(self.estimator).__name__} rejected X or y{_where}: {exc}") from None
        model = SklearnModel(est, n_classes, X.shape[1])
        if n_classes is not None:
            self._check_outputs(model, X[:1], fitted_classes, _where)
        return model

    def _check_outputs(self, model: SklearnModel, X1: np.ndarray, fitted_classes: np.ndarray, where: str) -> None:
        est = model.estimator_
        classes = model.classes_
        if not np.array_equal(classes, fitted_classes):
            raise UnsupportedError(
                f"{type(est).__name__}.classes_ is {classes.tolist()} but the labels were {fitted_classes.tolist()}{where}; "
                "leakaudit needs integer labels kept as they are (no label transformation inside the estimator)"
            )
        width = np.asarray(est.predict_proba(X1)).shape[1]
        if width != classes.size:
            raise InvalidInputError(
                f"{type(est).__name__}.predict_proba returns {width} columns after fitting {classes.size} "
                f"class(es) {classes.tolist()}{where}; its output is undefined for this subset "
                "(a single class?). Use larger or stratified subsets"
            )

    def _fit_many(
        self, X: np.ndarray, y: np.ndarray, subsets: list[np.ndarray], seeds: list[int], *, n_classes: int | None
    ) -> ModelBank:
        n_jobs = self.n_jobs
        if n_jobs is None or n_jobs == 1 or len(subsets) == 1:
            models = [
                self._fit(X[s], y[s], random_state=seed, n_classes=n_classes, _where=f" (subsets[{k}])")
                for k, (s, seed) in enumerate(zip(subsets, seeds))
            ]
        else:
            from joblib import Parallel, delayed, parallel_config

            with parallel_config(backend="loky", inner_max_num_threads=1, initializer=_exit_with_parent,
                                 initargs=(os.getpid(),)):
                models = Parallel(n_jobs=n_jobs)(
                    delayed(_fit_one)(self, X, y, s, seed, n_classes, k)
                    for k, (s, seed) in enumerate(zip(subsets, seeds))
                )
        if self.task == "regression":
            return ListModelBank(models, None)
        return ListModelBank(models, n_classes)


_WATCHING_PARENT = False


def _exit_with_parent(parent: int | None = None, poll: float = 1.0) -> None:
    """In a worker process: exit as soon as the process that started it is gone.

    A run killed with SIGKILL cannot stop its workers; without this they would
    sit idle until joblib's idle timeout (300 s). ``parent`` is the starting
    process's pid, passed from it (``initargs=(os.getpid(),)``): a worker still
    importing when its parent was killed would otherwise take its new parent
    (init or a subreaper) for the one to watch, and never exit.
    """
    global _WATCHING_PARENT
    if _WATCHING_PARENT:
        return
    _WATCHING_PARENT = True
    import threading
    import time

    parent = os.getppid() if parent is None else int(parent)
    if os.getppid() != parent:  # killed while this worker was starting
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(poll)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="leakaudit-parent-watch", daemon=True).start()


def _fit_one(learner: SklearnLearner, X: np.ndarray, y: np.ndarray, s: np.ndarray, seed: int,
             n_classes: int | None, k: int) -> SklearnModel:
    """One model in a joblib worker (module level so that it pickles)."""
    return learner._fit(X[s], y[s], random_state=seed, n_classes=n_classes, _where=f" (subsets[{k}])")

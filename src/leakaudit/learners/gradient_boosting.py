"""Gradient boosting (scikit-learn's ``GradientBoostingClassifier``, log loss) trained by a compiled kernel.

:class:`GradientBoosting` trains what ``GradientBoostingClassifier(...).fit(X, y)`` trains (version 1.9): the
prior's logit as the initial prediction, then per stage one regression tree per class on the negative gradient,
grown by scikit-learn's best splitter with its random feature order, and one Newton step per leaf.
``_gb_native.c`` (built with the package; its header says where it differs) grows the trees from rank codes of the
features (:func:`.forest.feature_codes`), so a fit costs a small fraction of scikit-learn's. The trees are
scikit-learn's except where candidate splits tie in exact arithmetic (two columns cutting the training rows alike,
rows whose residuals are equal, a node whose residuals are all equal, which scikit-learn splits when its rounding
leaves an impurity above machine epsilon): scikit-learn's pick then depends on the order its sort left the rows in,
and the two may pick differently (tests/learners/test_gradient_boosting.py compares them on cases without and with
ties; benchmarks/README.md measures how far their probabilities then differ).

:class:`FrameGradientBoosting` retrains a ``GradientBoostingClassifier`` from the table's rows, on its numeric columns
or after tree-neutral preprocessing (per-column scalers, a default one-hot encoder, in a ColumnTransformer or not): the
preprocessing is fitted once on every record, since refitting it on a training set changes no tree (a scaler maps
each column by an increasing affine function, which keeps every partition and every threshold's midpoint; a
category a training set lacks is a column the refitted encoder leaves out, and here a column of zeros that no split
can use). The columns the refitted encoder would leave out are left out of each model's feature list, so the random
feature order is the one scikit-learn draws.

Without the compiled kernel (no C compiler at install time, ``LEAKAUDIT_NATIVE=0``) or with ``backend="sklearn"``,
the models are scikit-learn's own.
"""

from __future__ import annotations

import ctypes
import math
import numbers
from typing import Any

import numpy as np

from .._validation import check_choice
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import BankLearner, Capabilities, ListModelBank, ProbaModel, check_feature_matrix, keep_params
from ._native import CompiledKernel
from ._native import ptr as _ptr
from .forest import binary_rows, feature_codes, features_per_split, leaf_rows
from ._threads import for_each_model

__all__ = ["GradientBoosting", "GradientBoostingModel", "FrameGradientBoosting"]

_P, _I, _D = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
_MAX_INT = np.iinfo(np.int32).max
_EPS = np.finfo(np.float64).eps


class _Fit(ctypes.Structure):
    """leakaudit_gb (``_gb_native.c``): the coded pool, one model's rows and recipe, its query rows and trees."""

    _fields_ = [("codes", _P), ("n", _I), ("F", _I), ("fmap", _P), ("vals", _P), ("voff", _P), ("maxnv", _I),
                ("bslot", _P), ("bptr", _P), ("bidx", _P), ("nbin", _I),
                ("rows", _P), ("y", _P), ("m", _I), ("C", _I),
                ("K", _I), ("n_stages", _I), ("max_depth", _I), ("mss", _I), ("msl", _I), ("max_features", _I),
                ("min_weight_leaf", _D), ("learning_rate", _D), ("raw0", _P), ("seeds", _P),
                ("qrows", _P), ("nq", _I), ("qraw", _P),
                ("cap", _I), ("feat", _P), ("left", _P), ("right", _P), ("thr", _P), ("value", _P), ("n_nodes", _P)]


def _configure(lib: ctypes.CDLL) -> None:
    size = lib.leakaudit_gb_struct_size
    size.restype, size.argtypes = _I, []
    if size() != ctypes.sizeof(_Fit):  # pragma: no cover - the two sides were edited apart
        raise RuntimeError(f"leakaudit_gb has {ctypes.sizeof(_Fit)} bytes here, {size()} in the library")
    lib.leakaudit_gb_fit.restype, lib.leakaudit_gb_fit.argtypes = _I, [ctypes.POINTER(_Fit)]
    lib.leakaudit_gb_predict.restype = None
    lib.leakaudit_gb_predict.argtypes = [_P, _I, _I, _I, _I, _I, _P, _P, _P, _P, _P, _D, _P]


#: the compiled kernel (``KERNEL.load()``: the library this CPU runs, or None; ``KERNEL.reason``: why not)
KERNEL = CompiledKernel("gb", _configure)
_library = KERNEL.library


def tree_seeds(seed: int, n_trees: int) -> np.ndarray:
    """The splitter seeds scikit-learn's boosting hands its trees: RandomState(seed).randint(0, 2**31 - 1), one draw
    a tree in order (the trees share the estimator's RandomState; nothing else draws from it at subsample 1)."""
    return np.random.RandomState(seed).randint(0, _MAX_INT, size=n_trees).astype(np.uint32)


def initial_raw(counts: np.ndarray) -> np.ndarray:
    """The initial raw prediction from the training set's class counts (K,): DummyClassifier(strategy="prior")'s
    probabilities clipped to [eps, 1 - eps], then the logit of the second class (two classes) or the symmetric
    multinomial logit log(p / gmean(p))."""
    from scipy.special import logit
    from scipy.stats import gmean

    p = counts / counts.sum()
    if counts.size == 2:
        return np.array([logit(np.clip(p[1], _EPS, 1 - _EPS))])
    p = np.clip(p, _EPS, 1 - _EPS)
    return np.log(p / gmean(p))


def _probabilities(raw: np.ndarray) -> np.ndarray:
    """Class probabilities of raw predictions (n, K): expit of the one column, or the softmax."""
    from scipy.special import expit, softmax

    if raw.shape[1] == 1:
        p1 = expit(raw[:, 0])
        return np.column_stack([1 - p1, p1])
    return softmax(raw, axis=1)


class _Coded:
    """A pool of rows coded once for the kernel: rank codes (F, n) int32, distinct values, two-valued features."""

    def __init__(self, X: np.ndarray):
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        codes, self.vals, self.voff = feature_codes(X32)
        self.codes = np.ascontiguousarray(codes, dtype=np.int32)
        self.bslot, self.bptr, self.bidx = binary_rows(codes, self.voff)
        self.nbin = int((self.bslot >= 0).sum())
        self.n, self.F = X32.shape
        self.maxnv = int(np.diff(self.voff).max()) if self.F else 1


class GradientBoostingModel(ProbaModel):
    """One trained model: its trees (scikit-learn's node order), learning rate and initial prediction.

    Attributes
    ----------
    n_classes : int
        Columns of :meth:`predict_proba`.
    classes_ : ndarray of shape (n_fitted,)
        The classes the model was trained on (a subset of ``0..n_classes-1``); the others get probability 0.
    n_features_in_ : int
    """

    def __init__(self, trees: dict, raw0: np.ndarray, learning_rate: float, classes: np.ndarray, n_classes: int,
                 n_features: int):
        self.trees_ = trees
        self.raw0_ = raw0
        self.learning_rate = float(learning_rate)
        self.classes_ = classes
        self.n_classes = int(n_classes)
        self.n_features_in_ = int(n_features)

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw predictions, shape (n_samples, K) (K = 1 with two fitted classes)."""
        X = check_feature_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features but the model was fitted on {self.n_features_in_}")
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        t = self.trees_
        K = self.raw0_.size
        out = np.tile(self.raw0_, (len(X32), 1))
        lib = _library()
        if lib is None:  # pragma: no cover - a model is only made by the kernel
            raise UnsupportedError(f"the compiled boosting kernel is not available: {KERNEL.reason}")
        lib.leakaudit_gb_predict(_ptr(X32), len(X32), X32.shape[1], t["feat"].shape[0] // K, K, t["feat"].shape[1],
                                 _ptr(t["feat"]), _ptr(t["left"]), _ptr(t["right"]), _ptr(t["thr"]),
                                 _ptr(t["value"]), self.learning_rate, _ptr(out))
        return out

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes)."""
        p = _probabilities(self.decision_function(X))
        out = np.zeros((len(p), self.n_classes))
        out[:, self.classes_] = p
        return out

    def __repr__(self) -> str:
        return f"GradientBoostingModel(n_trees={self.trees_['feat'].shape[0]}, n_classes={self.n_classes})"


class GradientBoosting(BankLearner):
    """Gradient-boosted trees with log loss: scikit-learn's ``GradientBoostingClassifier``, compiled.

    Parameters (meanings and defaults of scikit-learn's ``GradientBoostingClassifier``)
    ----------
    n_estimators : int >= 1, default=100
        Boosting stages (one tree per stage with two classes, one per class otherwise).
    learning_rate : float >= 0, default=0.1
    max_depth : int >= 1 or None, default=3
    min_samples_split : int >= 2 or float in (0, 1], default=2
        A float is a fraction of the model's training rows (rounded up); raised to ``2 * min_samples_leaf``.
    min_samples_leaf : int >= 1 or float in (0, 1), default=1
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
    max_features : {"sqrt", "log2"}, int, float in (0, 1] or None, default=None
        Candidate features per split, as in scikit-learn.
    n_threads : int or None, default=None
        Threads for training many models (None: every processor this process may run on). Results do not
        depend on it.
    backend : {"auto", "compiled", "sklearn"}, default="auto"
        "compiled": the package's boosting kernel (refused where it was not built); "sklearn": scikit-learn's
        ``GradientBoostingClassifier`` itself; "auto": the kernel where it is available.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> m = GradientBoosting(n_estimators=5).fit(X, y, random_state=0)
    >>> m.predict(np.array([[0.2], [2.6]]))
    array([0, 1])
    """

    #: scikit-learn's settings this learner implements only at these values
    _SKLEARN_FIXED = {"loss": "log_loss", "init": None, "subsample": 1.0, "max_leaf_nodes": None,
                      "min_impurity_decrease": 0.0, "ccp_alpha": 0.0, "n_iter_no_change": None}
    _KEEP = ("n_estimators", "learning_rate", "max_depth", "min_samples_split", "min_samples_leaf",
             "min_weight_fraction_leaf", "max_features")

    def __init__(self, *, n_estimators: int = 100, learning_rate: float = 0.1, max_depth: int | None = 3,
                 min_samples_split: int | float = 2, min_samples_leaf: int | float = 1,
                 min_weight_fraction_leaf: float = 0.0, max_features: Any = None, n_threads: int | None = None,
                 backend: str = "auto"):
        keep_params(self, locals())

    @classmethod
    def from_sklearn(cls, estimator: Any, *, n_threads: int | None = None) -> "GradientBoosting":
        """The GradientBoosting that trains what ``estimator`` (a ``GradientBoostingClassifier``) trains.

        Raises :class:`~leakaudit.exceptions.UnsupportedError` naming any setting it does not implement (another
        loss, subsampling, an init estimator, early stopping, leaf-count limits, pruning); the caller can then
        keep scikit-learn. ``random_state`` is not copied: seeds come from ``fit``'s ``random_state``.
        """
        from sklearn.ensemble import GradientBoostingClassifier

        if not isinstance(estimator, GradientBoostingClassifier):
            raise UnsupportedError(f"estimator must be a GradientBoostingClassifier; got {type(estimator).__name__}")
        params = estimator.get_params(deep=False)
        odd = {k: params.get(k) for k, v in cls._SKLEARN_FIXED.items()
               if not (params.get(k) is v or params.get(k) == v)}
        if odd:
            raise UnsupportedError(f"GradientBoosting does not implement {odd} (it assumes {cls._SKLEARN_FIXED})")
        return cls(**{k: params[k] for k in cls._KEEP}, n_threads=n_threads)

    #: scikit-learn refuses a single class, and so does this learner; the seed orders the candidate features
    capabilities = Capabilities(fits_one_class=False,
                                implements="scikit-learn's GradientBoostingClassifier algorithm (log loss)")

    def parameter_codec(self, X: Any = None, fitted: Any = None) -> tuple:
        """Not a vector: boosted models are trees."""
        raise UnsupportedError("a boosted model's parameters are its trees, whose shape changes with every training "
                               "run, not one parameter vector of fixed length, which Izzo et al.'s mechanism adds its "
                               "noise to")

    def validate_params(self) -> None:
        def whole(name, low):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
                raise InvalidParameterError(f"{name} must be an integer >= {low}; got {v!r}")

        whole("n_estimators", 1)
        if self.max_depth is not None:
            whole("max_depth", 1)
        lr = self.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not (0 <= lr < math.inf):
            raise InvalidParameterError(f"learning_rate must be a finite number >= 0; got {lr!r}")
        for name, lo, hi in (("min_samples_split", 2, 1.0), ("min_samples_leaf", 1, 1.0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise InvalidParameterError(f"{name} must be an int or a float; got {v!r}")
            if isinstance(v, numbers.Integral) and v < lo:
                raise InvalidParameterError(f"{name} must be an int >= {lo} or a fraction in (0, 1]; got {v!r}")
            if not isinstance(v, numbers.Integral) and not (0 < v <= hi):
                raise InvalidParameterError(f"{name} must be an int >= {lo} or a fraction in (0, 1]; got {v!r}")
        w = self.min_weight_fraction_leaf
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (0 <= w <= 0.5):
            raise InvalidParameterError(f"min_weight_fraction_leaf must be in [0, 0.5]; got {w!r}")
        mf = self.max_features
        if not (mf is None or mf in ("sqrt", "log2") or (isinstance(mf, numbers.Integral) and not isinstance(mf, bool)
                and mf >= 1) or (isinstance(mf, numbers.Real) and not isinstance(mf, (bool, numbers.Integral))
                and 0 < mf <= 1)):
            raise InvalidParameterError(f"max_features must be None, 'sqrt', 'log2', an int >= 1 or a fraction in "
                                        f"(0, 1]; got {mf!r}")
        check_choice(self.backend, name="backend", choices=("auto", "compiled", "sklearn"))
        if self.backend == "compiled" and _library() is None:
            raise UnsupportedError(f"backend='compiled' needs the compiled boosting kernel: {KERNEL.reason}")

    # -- training ---------------------------------------------------------------------------------------------------
    def _sklearn(self):
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(**{k: getattr(self, k) for k in self._KEEP})

    def _compiled(self) -> bool:
        return self.backend != "sklearn" and _library() is not None

    def _fit_many(self, X, y, subsets, seeds, *, n_classes):
        if not self._compiled():
            from .sklearn import SklearnLearner

            return SklearnLearner(self._sklearn())._fit_many(X, y, subsets, seeds, n_classes=n_classes)
        coded = _Coded(X)
        models = self._train(coded, y, [np.asarray(s, np.int64) for s in subsets], seeds, n_classes, keep=True)[0]
        for m in models:
            m.n_features_in_ = X.shape[1]
        return ListModelBank(models, n_classes)

    def _fit_predict_many(self, X, y, subsets, seeds, X_query, *, n_classes):
        if not self._compiled():
            return super()._fit_predict_many(X, y, subsets, seeds, X_query, n_classes=n_classes)
        coded = _Coded(np.vstack([X, X_query]))
        q = np.arange(len(X), len(X) + len(X_query), dtype=np.int64)
        return self._train(coded, y, [np.asarray(s, np.int64) for s in subsets], seeds, n_classes, keep=False,
                           query=q)[1]

    def _resolved(self, m: int, F: int) -> tuple[int, int, float, int, int]:
        """scikit-learn's per-fit resolution of the leaf rules for m training rows and F features:
        (min_samples_split, min_samples_leaf, min_weight_leaf, max_features, max_depth)."""
        mss, msl = leaf_rows(self.min_samples_split, self.min_samples_leaf, m)
        mf = features_per_split(self.max_features, F)
        depth = 2**62 if self.max_depth is None else int(self.max_depth)
        return mss, msl, float(self.min_weight_fraction_leaf) * m, mf, depth

    def _train(self, coded: _Coded, y: np.ndarray, subsets: list[np.ndarray], seeds: list[int], n_classes: int, *,
               keep: bool, query: np.ndarray | None = None, features: list[np.ndarray] | None = None):
        """Train model k on pool rows ``subsets[k]`` (labels ``y[subsets[k]]``) with seed ``seeds[k]``, on the
        pool's columns ``features[k]`` (None: all); returns (models or None, query probabilities (K, nq, C) or
        None)."""
        lib = _library()
        y = np.asarray(y, dtype=np.int64)
        n_models = len(subsets)
        nq = 0 if query is None else len(query)
        probs = np.zeros((n_models, nq, n_classes)) if query is not None else None
        models: list = [None] * n_models
        T = int(self.n_estimators)
        lr = float(self.learning_rate)

        def one(k: int) -> None:
            rows = subsets[k]
            yk = y[rows]
            classes, yc = np.unique(yk, return_inverse=True)
            if classes.size < 2:
                raise InvalidInputError(
                    f"subset {k} holds only class {int(classes[0]) if classes.size else '(none)'}; gradient boosting "
                    "needs two classes to train, as scikit-learn's does (use larger or stratified subsets)")
            counts = np.bincount(yc, minlength=classes.size).astype(np.float64)
            raw0 = initial_raw(counts)
            Kt = raw0.size
            cols = None if features is None else np.ascontiguousarray(features[k], dtype=np.int64)
            F = coded.F if cols is None else cols.size
            mss, msl, mwl, mf, depth = self._resolved(rows.size, F)
            seeds_k = tree_seeds(int(seeds[k]), T * Kt)
            cap = min(2 ** min(depth + 1, 40) - 1, 2 * rows.size + 1) if keep else 0
            trees = None
            if keep:
                trees = {"feat": np.empty((T * Kt, cap), np.int32), "left": np.empty((T * Kt, cap), np.int32),
                         "right": np.empty((T * Kt, cap), np.int32), "thr": np.empty((T * Kt, cap)),
                         "value": np.empty((T * Kt, cap)), "n_nodes": np.empty(T * Kt, np.int64)}
            qrows = query if query is not None else np.zeros(0, np.int64)
            qraw = np.empty((nq, Kt))
            rows_c = np.ascontiguousarray(rows, dtype=np.int64)
            yc = np.ascontiguousarray(yc, dtype=np.int64)
            arg = _Fit(codes=_ptr(coded.codes), n=coded.n, F=F, fmap=None if cols is None else _ptr(cols),
                       vals=_ptr(coded.vals), voff=_ptr(coded.voff), maxnv=coded.maxnv, bslot=_ptr(coded.bslot),
                       bptr=_ptr(coded.bptr), bidx=_ptr(coded.bidx), nbin=coded.nbin, rows=_ptr(rows_c), y=_ptr(yc),
                       m=rows.size, C=classes.size, K=Kt, n_stages=T,
                       max_depth=depth, mss=mss, msl=msl, max_features=mf, min_weight_leaf=mwl, learning_rate=lr,
                       raw0=_ptr(raw0), seeds=_ptr(seeds_k), qrows=_ptr(qrows), nq=nq, qraw=_ptr(qraw), cap=cap,
                       feat=_ptr(trees["feat"]) if keep else None, left=_ptr(trees["left"]) if keep else None,
                       right=_ptr(trees["right"]) if keep else None, thr=_ptr(trees["thr"]) if keep else None,
                       value=_ptr(trees["value"]) if keep else None, n_nodes=_ptr(trees["n_nodes"]) if keep else None)
            if lib.leakaudit_gb_fit(ctypes.byref(arg)) != 0:
                raise MemoryError(f"the boosting kernel could not allocate its buffers for model {k}")
            if keep:  # the node arrays cut to the largest tree grown (cap holds a full tree of max_depth)
                width = int(trees["n_nodes"].max())
                trees = {key: v if key == "n_nodes" else np.ascontiguousarray(v[:, :width])
                         for key, v in trees.items()}
                models[k] = GradientBoostingModel(trees, raw0, lr, classes, n_classes, coded.F)
            if query is not None:
                probs[k][:, classes] = _probabilities(qraw)

        for_each_model(one, n_models, self.n_threads)
        return models, probs


class FrameGradientBoosting(BankLearner):
    """Retrains a ``GradientBoostingClassifier``, alone or after tree-neutral preprocessing, on a table's rows.

    Its ``X`` is a column of row numbers into ``frame`` (as the audit's frame learners take them). The
    preprocessing is fitted once on all of ``frame`` (the module docstring says why no tree changes), the encoded
    rows coded once, and every model trained by :class:`GradientBoosting` on its rows, with the one-hot columns of
    categories its rows lack left out, as a refitted encoder leaves them out.

    Parameters
    ----------
    estimator : a ``GradientBoostingClassifier`` on the table's numeric columns, or a Pipeline whose last step is one
        and whose other steps are tree-neutral (:func:`_not_tree_neutral`); unfitted is fine
    frame : pandas.DataFrame of the records' feature columns
    n_threads : int or None
    """

    def __init__(self, *, estimator=None, frame=None, n_threads: int | None = None):
        keep_params(self, locals())

    @classmethod
    def supported(cls, estimator) -> str | None:
        """None where this learner retrains ``estimator``, else why not (one line)."""
        from sklearn.ensemble import GradientBoostingClassifier
        from sklearn.pipeline import Pipeline

        steps = estimator.steps if isinstance(estimator, Pipeline) else [("model", estimator)]
        last = steps[-1][1]
        if not isinstance(last, GradientBoostingClassifier):
            return f"its last step is a {type(last).__name__}"
        try:
            GradientBoosting.from_sklearn(last)
        except UnsupportedError as e:
            return str(e)
        for name, step in steps[:-1]:
            why = _not_tree_neutral(step)
            if why is not None:
                return f"step {name!r}: {why}"
        if _library() is None:
            return f"the compiled boosting kernel is not available ({KERNEL.reason})"
        return None

    capabilities = GradientBoosting.capabilities

    def parameter_codec(self, X=None, fitted=None) -> tuple:
        """Not a vector: boosted models are trees (and a Pipeline's preprocessing is fitted on the members too)."""
        return GradientBoosting().parameter_codec(X, fitted)

    def _prepared(self):
        """(the coded pool, the one-hot columns, the learner), made once per (estimator, frame) pair."""
        cached = self.__dict__.get("_cache")
        if cached is None or cached[0] is not self.estimator or cached[1] is not self.frame:
            from sklearn.base import clone
            from sklearn.pipeline import Pipeline

            why = self.supported(self.estimator)
            if why is not None:
                raise UnsupportedError(f"FrameGradientBoosting cannot retrain this estimator: {why}")
            steps = self.estimator.steps if isinstance(self.estimator, Pipeline) else [("model", self.estimator)]
            if len(steps) > 1:
                pre = Pipeline([(n, s if s is None or isinstance(s, str) else clone(s)) for n, s in steps[:-1]])
                try:
                    Z = pre.fit_transform(self.frame)
                    Z = Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z, dtype=np.float64)
                except (ValueError, TypeError) as e:
                    raise InvalidInputError(f"retraining {type(self.estimator).__name__} failed: its preprocessing "
                                            f"refused the records ({e})") from None
                onehot = _onehot_columns(pre, Z.shape[1])
            else:  # the table's columns as they are, which scikit-learn would read as numbers too
                try:
                    Z = np.asarray(self.frame, dtype=np.float64)
                except (TypeError, ValueError) as e:
                    raise InvalidInputError(f"retraining {type(self.estimator).__name__} failed: the table's columns "
                                            f"are not all numbers ({e})") from None
                onehot = np.zeros(0, np.int64)
            if not np.isfinite(Z).all():
                raise InvalidInputError(f"retraining {type(self.estimator).__name__} failed: its input holds NaN or "
                                        "infinite values")
            gb = GradientBoosting.from_sklearn(steps[-1][1], n_threads=self.n_threads)
            cached = (self.estimator, self.frame, (_Coded(Z), Z, onehot, gb))
            self._cache = cached
        return cached[2]

    def _columns(self, Z: np.ndarray, onehot: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The encoded columns a refitted preprocessing has for these rows: every column but the one-hot columns of
        categories none of the rows holds."""
        keep = np.ones(Z.shape[1], bool)
        if onehot.size:
            keep[onehot] = (Z[np.ix_(rows, onehot)] != 0).any(axis=0)
        return np.flatnonzero(keep)

    def _many(self, X, y, subsets, seeds, n_classes, *, keep, query=None):
        """:meth:`GradientBoosting._train` of the models on frame rows ``X[subsets[k], 0]``, each on the columns a
        refitted preprocessing would give it; ``query``: frame rows whose probabilities are returned."""
        coded, Z, onehot, gb = self._prepared()
        ids = np.asarray(X[:, 0], dtype=np.int64)
        rows = [ids[np.asarray(s, np.int64)] for s in subsets]
        labels = np.zeros(coded.n, np.int64)
        labels[ids] = y
        cols = [self._columns(Z, onehot, r) for r in rows]
        return gb._train(coded, labels, rows, seeds, n_classes, keep=keep, query=query, features=cols)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes):
        models = self._many(X, y, subsets, seeds, n_classes, keep=True)[0]
        return ListModelBank([_RowsModel(m, self._prepared()[1]) for m in models], n_classes)

    def _fit_predict_many(self, X, y, subsets, seeds, X_query, *, n_classes):
        q = np.asarray(X_query[:, 0], dtype=np.int64)
        return self._many(X, y, subsets, seeds, n_classes, keep=False, query=q)[1]


class _RowsModel(ProbaModel):
    """A model of :class:`FrameGradientBoosting`, queried by row numbers into its frame (column 0 of X)."""

    def __init__(self, model: GradientBoostingModel, Z: np.ndarray):
        self.model_ = model
        self._Z = Z
        self.n_classes = model.n_classes
        self.classes_ = model.classes_

    def predict_proba(self, X: Any) -> np.ndarray:
        ids = np.asarray(X, dtype=np.int64)[:, 0]
        return self.model_.predict_proba(self._Z[ids])


def _not_tree_neutral(step) -> str | None:
    """None where refitting ``step`` on a training set changes no tree grown on its output (a per-column
    increasing affine scaler, a one-hot encoder of every category, passthrough, or a ColumnTransformer of
    those), else why not."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, OneHotEncoder, RobustScaler, StandardScaler

    if isinstance(step, str):
        return None if step in ("passthrough", "drop") else f"step {step!r}"
    if step is None:
        return None
    if isinstance(step, ColumnTransformer):
        if step.remainder not in ("drop", "passthrough"):
            return _not_tree_neutral(step.remainder)
        for name, t, _cols in step.transformers:
            why = _not_tree_neutral(t)
            if why is not None:
                return f"transformer {name!r}: {why}"
        return None
    if isinstance(step, (StandardScaler, RobustScaler, MaxAbsScaler)):
        return None
    if isinstance(step, MinMaxScaler):
        lo, hi = step.feature_range
        return None if hi > lo and not step.clip else "a MinMaxScaler that clips or reverses"
    if isinstance(step, OneHotEncoder):
        p = step.get_params()
        if p["drop"] is None and p["min_frequency"] is None and p["max_categories"] is None and \
                p["handle_unknown"] == "ignore" and p["categories"] == "auto":
            return None
        return ("a OneHotEncoder other than OneHotEncoder(handle_unknown='ignore') (drop, frequencies or fixed "
                "categories)")
    return f"a {type(step).__name__} (refitted on each training set, it may change the trees)"


def _onehot_columns(pre, width: int) -> np.ndarray:
    """The output columns of ``pre`` (a fitted Pipeline of tree-neutral steps) that a OneHotEncoder made."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    last = pre.steps[-1][1]
    if isinstance(last, OneHotEncoder):
        return np.arange(width)
    if isinstance(last, ColumnTransformer):
        cols = []
        for name, sl in last.output_indices_.items():
            t = last.named_transformers_.get(name)
            if isinstance(t, OneHotEncoder):
                cols.extend(range(sl.start, sl.stop))
        return np.asarray(cols, dtype=np.int64)
    return np.zeros(0, np.int64)

"""Whether a scikit-learn model read from a skops file is safe to run: its native structures checked before any use.

scikit-learn's compiled inference indexes the node arrays of its fitted trees (``sklearn.tree._tree.Tree``) and of
HistGradientBoosting's predictors (``TreePredictor``) without bounds checks, and reads ``X[row, feature]`` for the
feature a node names. skops leaves both types untrusted for that reason. leakaudit loads them and checks, before any
inference:

* every node array: its length against the node count (and the tree's allocation), every internal node's children
  after it and inside the array (no cycle, no jump out), every leaf marked as one, every value array's shape;
* every feature index against the input width the compiled code will be given, which scikit-learn checks the data
  against at prediction (``n_features_in_``). That width is required, never taken from the tree alone: a tree whose
  estimator does not record it, or whose ensemble records another, is refused (scikit-learn skips its own width
  check when the attribute is missing);
* an ensemble's layout where compiled code relies on it (gradient boosting's ``(n_stages, K)`` grid of trees, a
  HistGradientBoosting model's bin mapper and categorical bitsets);
* the fitted attributes the estimator's prediction reads (a linear model without ``intercept_`` is refused by name);
* a support vector machine's arrays against each other (libsvm reads them by counts the file itself supplies);
* every scipy.sparse matrix (a neighbours model's records after a sparse one-hot encoding): skops leaves them
  untrusted although they are data (read with ``numpy.load``, no pickle), and scipy's compiled routines index them
  by their own index arrays, so these are checked like a tree's node arrays (:func:`check_sparse_matrices`).

Anything the checks do not reach (a tree or predictor outside any estimator that would use it) is refused: fail closed.
"""

from __future__ import annotations

import types
from collections.abc import Iterator

import numpy as np

from ...exceptions import UnsafeFileError

__all__ = ["CHECKED_TYPES", "SPARSE_TYPES", "check_sparse_matrices", "walk_objects", "checked_trees",
           "check_model_structure", "check_input_width", "check_fitted", "rebuild_neighbour_trees"]

#: the types skops does not trust whose content leakaudit checks here (they are loaded, then checked)
CHECKED_TYPES = ("sklearn.tree._tree.Tree", "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor")
#: scipy.sparse matrices and arrays of the formats :func:`check_sparse_matrices` checks (data, loaded without pickle)
SPARSE_TYPES = tuple(f"scipy.sparse._{f}.{f}_{kind}" for f in ("csr", "csc", "coo") for kind in ("matrix", "array"))


def _short(where: str) -> str:
    """A location nested deep inside pipelines: the start (the file, whole, up to the first index of the object path)
    and the end of the path."""
    cut = where.find("[")
    head = where[:cut] if 0 < cut <= 400 else where[:90]
    return f"{head} ... {where[-100:]}" if len(where) > len(head) + 110 else where


def _refuse(where: str, what: str, bad: str):
    raise UnsafeFileError(f"{_short(where)}: malformed {what} ({bad}); refusing to use it")


def _int(v) -> int | None:
    """``v`` as an int if it is an integer scalar (not a bool), else None."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        return None
    return int(v)


def _own(o, name: str, default=None):
    """An attribute from the object's own ``__dict__`` (never a property or a class attribute)."""
    d = getattr(o, "__dict__", None)
    return d.get(name, default) if isinstance(d, dict) else default


def walk_objects(obj, where: str = "model") -> Iterator[tuple[object, str]]:
    """Yield ``(object, where)`` for every object reachable from ``obj`` through the containers a skops file can hold,
    each once (shared or cyclic references), without recursion (no nesting depth is too deep).

    Walked: instances' attributes (``vars()`` and ``__slots__``: estimators, a Pipeline's ``steps``, a
    ColumnTransformer's ``transformers_``, an ensemble's ``estimators_``), dicts (keys and values), lists, tuples,
    sets and object arrays. Classes, modules and functions are not walked (a skops file cannot put a tree there).
    """
    seen: set[int] = set()
    stack = [(obj, where)]
    while stack:
        o, w = stack.pop()
        if o is None or isinstance(o, (str, bytes, int, float, complex, bool, np.generic)) or id(o) in seen:
            continue
        seen.add(id(o))
        yield o, w
        if isinstance(o, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
            continue
        if isinstance(o, np.ndarray):
            if o.dtype == object:
                stack.extend((v, f"{w}[{i}]") for i, v in enumerate(o.ravel()))
            continue
        if isinstance(o, dict):
            for i, (k, v) in enumerate(o.items()):
                stack.append((k, f"{w}.keys()[{i}]"))
                stack.append((v, f"{w}[{k!r}]"))
            continue
        if isinstance(o, (list, tuple, set, frozenset)):
            stack.extend((v, f"{w}[{i}]") for i, v in enumerate(o))
            continue
        attrs = {}
        d = getattr(o, "__dict__", None)
        if isinstance(d, dict):
            attrs.update(d)
        for cls in type(o).__mro__:
            slots = getattr(cls, "__slots__", ())
            for s in slots if isinstance(slots, (tuple, list)) else ():
                if s not in ("__dict__", "__weakref__") and hasattr(o, s):
                    attrs.setdefault(s, getattr(o, s))
        stack.extend((v, f"{w}.{k}") for k, v in attrs.items())


# --- scikit-learn's Tree -------------------------------------------------------------------------------------------

def _splits_ok(left: np.ndarray, right: np.ndarray, feat: np.ndarray, n_features: int) -> np.ndarray:
    """Per node, as an internal node: both children after it (scikit-learn's builders number a child after its
    parent, which also rules out cycles) and inside the node array, its feature inside ``n_features``."""
    n, idx = left.shape[0], np.arange(left.shape[0])
    return (left > idx) & (left < n) & (right > idx) & (right < n) & (feat >= 0) & (feat < n_features)


def _check_tree(t, where: str, n_features: int) -> None:
    """Raise UnsafeFileError unless ``t``'s node arrays describe a tree scikit-learn can walk on ``n_features``
    columns: the node count within the allocation (checked before any array is read: the arrays are views of
    ``node_count`` entries), children after their parent and inside the arrays, features in range, values shaped
    ``(node_count, n_outputs, max_n_classes)``."""
    n, cap = int(t.node_count), int(t.capacity)
    n_out, max_c = int(t.n_outputs), int(t.max_n_classes)
    if not 1 <= n <= cap:
        _refuse(where, "tree", f"{n} nodes in an allocation of {cap}")
    if int(t.n_features) != n_features:
        _refuse(where, "tree", f"{t.n_features} features; its input has {n_features}")
    if n_out < 1 or max_c < 1:
        _refuse(where, "tree", f"{n_out} outputs of up to {max_c} classes")
    left, right, feat = (np.asarray(a, dtype=np.int64) for a in (t.children_left, t.children_right, t.feature))
    shape = np.asarray(t.value).shape
    if left.shape != (n,) or right.shape != (n,) or feat.shape != (n,):
        _refuse(where, "tree", f"{n} nodes but node arrays of shapes {left.shape}, {right.shape}, {feat.shape}")
    if shape != (n, n_out, max_c):
        _refuse(where, "tree", f"values of shape {shape}, not {(n, n_out, max_c)}")
    ok = np.where(left == -1, right == -1, _splits_ok(left, right, feat, n_features))
    if not ok.all():
        _refuse(where, "tree", f"node {int(np.flatnonzero(~ok)[0])} has children or a feature out of range")


def _check_tree_owner(est, t, where: str) -> None:
    """``est`` (an estimator with ``tree_``) records the width scikit-learn checks its input against, and ``t`` fits
    it and the estimator's outputs."""
    n_in = _int(_own(est, "n_features_in_"))
    if n_in is None or n_in < 1:
        _refuse(where, "tree", f"{type(est).__name__} does not record its input width (n_features_in_), so the "
                "width of the data its tree reads cannot be checked")
    _check_tree(t, f"{where}.tree_", n_in)
    n_out = _own(est, "n_outputs_")
    if n_out is not None and _int(n_out) != int(t.n_outputs):
        _refuse(where, "tree", f"{type(est).__name__} has n_outputs_ {n_out!r}, its tree {t.n_outputs}")
    n_cls = _own(est, "n_classes_")
    if n_cls is not None:
        want = np.atleast_1d(np.asarray(n_cls))
        if want.shape != (int(t.n_outputs),) or not np.array_equal(want.astype(np.int64),
                                                                   np.asarray(t.n_classes, np.int64)):
            _refuse(where, "tree", f"{type(est).__name__} has n_classes_ {n_cls!r}, its tree "
                    f"{np.asarray(t.n_classes).tolist()}")


def _flat(items) -> list:
    """The elements of a list, tuple or object array of any nesting (an ensemble's ``estimators_``)."""
    out, stack = [], [items]
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)) or (isinstance(o, np.ndarray) and o.dtype == object):
            stack.extend(list(np.asarray(o, dtype=object).ravel()) if isinstance(o, np.ndarray) else list(o))
        else:
            out.append(o)
    return out


def _check_ensemble_width(ens, where: str, tree_owner) -> None:
    """An ensemble that holds fitted trees feeds them its own input: it must record that width and it must be each
    tree's (BaggingClassifier, which feeds each its ``estimators_features_``, relies on the trees' own check)."""
    if _own(ens, "estimators_features_") is not None:
        return
    members = [m for m in _flat(_own(ens, "estimators_")) if m is not None and _own(m, "tree_") is not None]
    if not members:
        return
    n_in = _int(_own(ens, "n_features_in_"))
    if n_in is None:
        _refuse(where, "ensemble", f"{type(ens).__name__} holds {len(members)} tree(s) but does not record its "
                "input width (n_features_in_)")
    for m in members:
        if _int(_own(m, "n_features_in_")) != n_in:
            _refuse(where, "ensemble", f"{type(ens).__name__} takes {n_in} features, one of its trees "
                    f"{_own(m, 'n_features_in_')!r}")
        tree_owner.add(id(m))


def _check_gradient_boosting(gb, where: str) -> None:
    """scikit-learn's GradientBoosting predicts with compiled code that adds tree ``k`` of each stage to column ``k``
    of the initial predictions: the grid of trees must be ``(n_stages, n_trees_per_iteration_)`` and the initial
    predictions that wide."""
    est = _own(gb, "estimators_")
    k = _int(_own(gb, "n_trees_per_iteration_"))
    if not isinstance(est, np.ndarray) or est.dtype != object or est.ndim != 2 or k is None or est.shape[1] != k \
            or est.shape[0] < 1:
        shape = getattr(est, "shape", type(est).__name__)
        _refuse(where, "gradient boosting", f"estimators_ of shape {shape} for {k!r} trees per stage")
    n_in = _int(_own(gb, "n_features_in_"))
    if n_in is None or n_in < 1:
        _refuse(where, "gradient boosting", f"n_features_in_ {_own(gb, 'n_features_in_')!r}")
    try:
        init = gb._raw_predict_init(np.zeros((1, n_in), dtype=np.float32))
    except Exception as exc:  # the initial estimator itself does not fit
        _refuse(where, "gradient boosting", f"its initial estimator fails: {type(exc).__name__}: {str(exc)[:200]}")
    if np.shape(init) != (1, k):
        _refuse(where, "gradient boosting",
                f"initial predictions of shape {np.shape(init)[1:]} for {k} trees per stage")


# --- HistGradientBoosting's TreePredictor ---------------------------------------------------------------------------

def _check_predictor(p, where: str, n_features: int, categorical: np.ndarray) -> None:
    """A TreePredictor whose nodes scikit-learn's compiled prediction can walk on ``n_features`` columns: every
    internal node's children after it and inside the array, features in range, categorical splits only on
    categorical features and with a bitset row that exists."""
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE, X_BITSET_INNER_DTYPE

    nodes = _own(p, "nodes")
    if not isinstance(nodes, np.ndarray) or nodes.dtype != PREDICTOR_RECORD_DTYPE or nodes.ndim != 1 \
            or nodes.size < 1:
        _refuse(where, "predictor", f"nodes {getattr(nodes, 'dtype', type(nodes).__name__)} of shape "
                f"{getattr(nodes, 'shape', '?')}, not a 1-d array of {PREDICTOR_RECORD_DTYPE.descr[:3]}...")
    bitsets = {}
    for name in ("raw_left_cat_bitsets", "binned_left_cat_bitsets"):
        b = _own(p, name)
        if not isinstance(b, np.ndarray) or b.dtype != X_BITSET_INNER_DTYPE or b.ndim != 2 or b.shape[1] != 8 \
                or not b.flags.c_contiguous:
            _refuse(where, "predictor", f"{name} of shape {getattr(b, 'shape', type(b).__name__)}, not (k, 8) uint32")
        bitsets[name] = b.shape[0]
    leaf = nodes["is_leaf"] != 0
    feat = nodes["feature_idx"].astype(np.int64)
    cat = nodes["is_categorical"] != 0
    internal_ok = _splits_ok(nodes["left"].astype(np.int64), nodes["right"].astype(np.int64), feat, n_features)
    safe_feat = np.clip(feat, 0, n_features - 1)
    cat_ok = ~cat | (categorical[safe_feat] & (nodes["bitset_idx"].astype(np.int64)
                                               < min(bitsets.values())))
    ok = leaf | (internal_ok & cat_ok)
    if not ok.all():
        _refuse(where, "predictor", f"node {int(np.flatnonzero(~ok)[0])} has children, a feature or a categorical "
                "bitset out of range")


def _check_hist_gradient_boosting(hgb, where: str, seen_predictors: set) -> None:
    """A HistGradientBoosting model: its bin mapper (which features are categorical, their known categories), its
    baseline and its predictors, ``n_trees_per_iteration_`` per iteration, each checked."""
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    n_in = _int(_own(hgb, "n_features_in_"))
    k = _int(_own(hgb, "n_trees_per_iteration_"))
    if n_in is None or n_in < 1 or k is None or k < 1:
        _refuse(where, "HistGradientBoosting", f"n_features_in_ {_own(hgb, 'n_features_in_')!r}, "
                f"n_trees_per_iteration_ {_own(hgb, 'n_trees_per_iteration_')!r}")
    if _own(hgb, "_preprocessor") is not None:
        # its ColumnTransformer's output is the width the predictors read: not checked here, so not accepted
        _refuse(where, "HistGradientBoosting", "it encodes categorical columns itself (a _preprocessor), whose "
                "output width leakaudit does not check; fit it on numeric columns")
    bm = _own(hgb, "_bin_mapper")
    cat = _own(bm, "is_categorical_") if bm is not None else None
    thr = _own(bm, "bin_thresholds_") if bm is not None else None
    if not isinstance(cat, np.ndarray) or cat.shape != (n_in,) or not isinstance(thr, list) or len(thr) != n_in:
        _refuse(where, "HistGradientBoosting", f"a bin mapper for {getattr(cat, 'shape', '?')} features, "
                f"not {n_in}")
    categorical = cat.astype(bool)
    for j, t in enumerate(thr):
        if not isinstance(t, np.ndarray) or t.ndim != 1 or (categorical[j] and (
                t.size > 256 or not np.all((t >= 0) & (t <= 255) & (t == np.floor(t))))):
            _refuse(where, "HistGradientBoosting", f"bin thresholds of feature {j} out of range")
    base = _own(hgb, "_baseline_prediction")
    if not isinstance(base, np.ndarray) or base.shape != (1, k):
        _refuse(where, "HistGradientBoosting", f"a baseline of shape {getattr(base, 'shape', '?')}, not (1, {k})")
    preds = _own(hgb, "_predictors")
    if not isinstance(preds, list) or not preds:
        _refuse(where, "HistGradientBoosting", "no predictors")
    for i, it in enumerate(preds):
        if not isinstance(it, list) or len(it) != k:
            _refuse(where, "HistGradientBoosting", f"iteration {i} has {len(it) if isinstance(it, list) else it!r} "
                    f"predictors, not {k}")
        for j, p in enumerate(it):
            if type(p) is not TreePredictor:
                _refuse(where, "HistGradientBoosting", f"predictor {i},{j} is a {type(p).__name__}")
            _check_predictor(p, f"{where}._predictors[{i}][{j}]", n_in, categorical)
            seen_predictors.add(id(p))


# --- libsvm's models (SVC, NuSVC, SVR, NuSVR, OneClassSVM) -----------------------------------------------------------

_LIBSVM_KERNELS = ("linear", "poly", "rbf", "sigmoid")


def _check_libsvm(est, where: str) -> None:
    """Raise UnsafeFileError unless the arrays libsvm's prediction reads agree with each other: libsvm sizes its loops
    by the class counts and the support vectors' number and width, and reads the coefficient, intercept and
    probability arrays by them without bounds checks (a truncated ``_dual_coef_`` or ``_intercept_`` is read past
    its end). Checked: a dense fit, a kernel libsvm computes itself, support vectors of shape
    ``(l, n_features_in_)``, ``_n_support`` one count per class summing to ``l``, ``_dual_coef_``
    ``(n_classes - 1, l)``, ``_intercept_`` and (when present) ``_probA`` / ``_probB`` of one entry per pair of
    classes (one-class and regression models: one row, one intercept), finite kernel parameters."""
    from sklearn.svm._base import LIBSVM_IMPL

    def arr(name, ndim, kind="f"):
        a = _own(est, name)
        if not isinstance(a, np.ndarray) or a.ndim != ndim or a.dtype.kind not in kind:
            _refuse(where, "support vector machine", f"{name} is {type(a).__name__}"
                    + (f" of shape {a.shape} and dtype {a.dtype}" if isinstance(a, np.ndarray) else "")
                    + f", not a {ndim}-D {'integer' if kind == 'iu' else 'float'} array")
        return a

    impl, kernel = getattr(est, "_impl", None), est.get_params(deep=False).get("kernel")
    if _own(est, "_sparse") is not False:
        _refuse(where, "support vector machine", "fitted on sparse data, which leakaudit does not check")
    if impl not in LIBSVM_IMPL or kernel not in _LIBSVM_KERNELS:
        _refuse(where, "support vector machine", f"implementation {impl!r} with kernel {kernel!r}; leakaudit checks "
                f"{', '.join(_LIBSVM_KERNELS)} kernels")
    sv, n_sv, dual, icpt = (arr("support_vectors_", 2), arr("_n_support", 1, "iu"), arr("_dual_coef_", 2),
                            arr("_intercept_", 1))
    l, d = sv.shape
    n_in = _int(_own(est, "n_features_in_"))
    if n_in is None or d != n_in:
        _refuse(where, "support vector machine", f"support vectors of {d} columns; it records an input width of "
                f"{_own(est, 'n_features_in_')!r}")
    support = arr("support_", 1, "iu")
    if support.shape != (l,):
        _refuse(where, "support vector machine", f"{support.shape[0]} support indices for {l} support vectors")
    if impl in ("c_svc", "nu_svc"):
        classes = _own(est, "classes_")
        k = len(classes) if isinstance(classes, np.ndarray) and classes.ndim == 1 else -1
        pairs = k * (k - 1) // 2
        if k < 2 or n_sv.shape != (k,) or (n_sv < 0).any() or int(n_sv.sum()) != l:
            _refuse(where, "support vector machine", f"_n_support {n_sv.tolist()[:10]} for {k} classes and {l} "
                    "support vectors")
        rows = k - 1
    else:
        pairs, rows = 1, 1
    if dual.shape != (rows, l):
        _refuse(where, "support vector machine", f"_dual_coef_ of shape {dual.shape}, not {(rows, l)}")
    if icpt.shape != (pairs,):
        _refuse(where, "support vector machine", f"_intercept_ of shape {icpt.shape}, not {(pairs,)}")
    for name in ("_probA", "_probB"):
        a = arr(name, 1)
        if a.shape not in ((0,), (pairs,)):
            _refuse(where, "support vector machine", f"{name} of shape {a.shape}, not (0,) or {(pairs,)}")
    params = est.get_params(deep=False)
    gamma, coef0, degree = _own(est, "_gamma"), params.get("coef0"), params.get("degree")
    if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               and np.isfinite(v) for v in (gamma, coef0, degree)):
        _refuse(where, "support vector machine", f"kernel parameters gamma {gamma!r}, coef0 {coef0!r}, degree "
                f"{degree!r}")


# --- neighbours models ------------------------------------------------------------------------------------------

#: the metrics (and their one parameter, Minkowski's p) a rebuilt search tree may use
_TREE_METRICS = ("euclidean", "l2", "manhattan", "cityblock", "l1", "chebyshev", "infinity", "minkowski")


def rebuild_neighbour_trees(obj, where: str = "model") -> int:
    """Build anew the search tree of every scikit-learn neighbours estimator reachable from ``obj`` whose fitted
    method is a KD-tree or ball tree, from its stored records exactly as its ``fit`` builds it (the same records,
    leaf size and metric give the same tree); the file's own tree was never loaded
    (:func:`leakaudit.audit.inputs.target._strip_neighbour_trees`). The records, their count, the leaf size and the metric
    are checked first. Returns how many trees were built."""
    from sklearn.neighbors import BallTree, KDTree
    from sklearn.neighbors._base import NeighborsBase

    n_built = 0
    for o, w in list(walk_objects(obj, where)):
        if not isinstance(o, NeighborsBase):
            continue
        method = _own(o, "_fit_method")
        if method not in ("kd_tree", "ball_tree"):
            if (getattr(o, "__dict__", None) or {}).get("_tree") is not None:
                _refuse(w, "neighbours model", f"a search tree with fit method {method!r}")
            o._tree = None  # as fit leaves it (the schema's entry was left out with the others)
            continue
        X = _own(o, "_fit_X")
        if not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype != np.float64 or not np.isfinite(X).all():
            _refuse(w, "neighbours model", "its stored records are not a finite 2-D float64 array")
        if _own(o, "n_samples_fit_") != X.shape[0] or _int(_own(o, "n_features_in_")) != X.shape[1]:
            _refuse(w, "neighbours model", f"{X.shape} stored records; it records {_own(o, 'n_samples_fit_')!r} "
                    f"records of {_own(o, 'n_features_in_')!r} columns")
        leaf, metric = _int(o.get_params(deep=False).get("leaf_size")), _own(o, "effective_metric_")
        params = _own(o, "effective_metric_params_") or {}
        if isinstance(params, dict):  # Minkowski's weights unset: scikit-learn records w=None
            params = {k: v for k, v in params.items() if not (k == "w" and v is None)}
        p = params.get("p", 2) if isinstance(params, dict) else None
        if (leaf is None or not 1 <= leaf <= 10**6 or metric not in _TREE_METRICS
                or not isinstance(params, dict) or set(params) - {"p"}
                or not isinstance(p, (int, float, np.integer, np.floating)) or not 1 <= float(p) < np.inf):
            _refuse(w, "neighbours model", f"leaf size {leaf!r}, metric {metric!r} with parameters {params!r}")
        tree = KDTree if method == "kd_tree" else BallTree
        o._tree = tree(X, leaf, metric=metric, **params)
        n_built += 1
    return n_built


def _required_attributes(est) -> tuple[str, ...]:
    """The fitted attributes scikit-learn's prediction reads for ``est``'s family (empty when not known)."""
    from sklearn.base import is_classifier
    from sklearn.ensemble import BaseEnsemble
    from sklearn.ensemble._forest import BaseForest
    from sklearn.ensemble._gb import BaseGradientBoosting
    from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import BaseHistGradientBoosting
    from sklearn.linear_model._base import LinearClassifierMixin, LinearModel
    from sklearn.neural_network._multilayer_perceptron import BaseMultilayerPerceptron
    from sklearn.tree._classes import BaseDecisionTree

    cls = ("classes_",) if is_classifier(est) else ()
    if isinstance(est, BaseDecisionTree):
        return ("tree_", "n_features_in_", "n_outputs_") + (cls + ("n_classes_",) if cls else ())
    if isinstance(est, BaseForest):
        return ("estimators_", "n_features_in_", "n_outputs_") + (cls + ("n_classes_",) if cls else ())
    if isinstance(est, BaseGradientBoosting):
        return ("estimators_", "init_", "n_features_in_", "n_trees_per_iteration_", "_loss") + cls
    if isinstance(est, BaseHistGradientBoosting):
        return ("_predictors", "_bin_mapper", "_baseline_prediction", "n_features_in_", "n_trees_per_iteration_",
                "_loss", "_preprocessor") + cls
    if isinstance(est, BaseMultilayerPerceptron):
        return ("coefs_", "intercepts_", "n_layers_", "n_outputs_", "out_activation_", "n_features_in_") + (
            cls + ("_label_binarizer",) if cls else ())
    if isinstance(est, (LinearClassifierMixin, LinearModel)):
        return ("coef_", "intercept_") + cls
    if isinstance(est, BaseEnsemble):
        return ("estimators_",) + cls
    return ()


def check_fitted(est, where: str) -> None:
    """Raise UnsafeFileError naming the first fitted attribute ``est`` lacks that its prediction reads (for the model
    families leakaudit knows; a Pipeline's steps and an ensemble's members are checked too)."""
    from sklearn.pipeline import Pipeline

    stack = [(est, where)]
    while stack:
        e, w = stack.pop()
        if isinstance(e, Pipeline):
            steps = _own(e, "steps")
            stack.extend((s[1], f"{w}.steps[{i}]") for i, s in enumerate(steps or ())
                         if isinstance(s, tuple) and len(s) == 2 and s[1] not in (None, "passthrough"))
            continue
        d = getattr(e, "__dict__", None)
        if not isinstance(d, dict):
            continue
        missing = [a for a in _required_attributes(e) if a not in d]
        if missing:
            raise UnsafeFileError(
                f"{_short(w)}: the {type(e).__name__} lacks the fitted attribute{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)} that its prediction reads (a partially fitted or edited model); refusing it")
        members = d.get("estimators_")
        if members is not None and not isinstance(members, (str, bytes)):
            stack.extend((m, f"{w}.estimators_[{i}]") for i, m in enumerate(_flat(members))
                         if m is not None and hasattr(m, "__dict__"))


# --- scipy.sparse matrices -----------------------------------------------------------------------------------------

def _index_array(a, where: str, name: str, length: int | None = None) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu" or (
            length is not None and a.shape[0] != length):
        _refuse(where, "sparse matrix", f"{name} is not a 1-D integer array"
                + (f" of {length} entries" if length is not None else ""))
    return a


def _check_sparse(m, where: str) -> None:
    """Raise UnsafeFileError unless ``m`` (csr, csc or coo) is a well-formed 2-D matrix: numeric values, index
    arrays of integers in range, a csr / csc row (column) pointer that starts at 0, never decreases and ends at the
    number of stored values."""
    shape = getattr(m, "_shape", None)
    if not (isinstance(shape, tuple) and len(shape) == 2 and all(_int(n) is not None and n >= 0 for n in shape)):
        _refuse(where, "sparse matrix", f"shape {shape!r}")
    data = m.data
    if not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype.kind not in "biuf":
        _refuse(where, "sparse matrix", "its values are not a 1-D numeric array")
    n = data.shape[0]
    if m.format == "coo":
        coords = getattr(m, "coords", None)
        if not (isinstance(coords, tuple) and len(coords) == 2):
            _refuse(where, "sparse matrix", "coordinates that are not one row and one column array")
        for axis, (name, a) in enumerate(zip(("row", "col"), coords)):
            a = _index_array(a, where, name, n)
            if n and (a.min() < 0 or a.max() >= shape[axis]):
                _refuse(where, "sparse matrix", f"a {name} index outside its shape {shape}")
        return
    outer, inner = shape if m.format == "csr" else shape[::-1]
    indptr = _index_array(m.indptr, where, "indptr", outer + 1)
    indices = _index_array(m.indices, where, "indices", n)
    if indptr[0] != 0 or indptr[-1] != n or (outer and np.diff(indptr.astype(np.int64)).min() < 0):
        _refuse(where, "sparse matrix", f"an index pointer that does not run from 0 up to its {n} values")
    if n and (indices.min() < 0 or indices.max() >= inner):
        _refuse(where, "sparse matrix", f"an index outside its shape {shape}")


def check_sparse_matrices(obj, where: str = "model") -> int:
    """Check every scipy.sparse matrix reachable from ``obj`` (:func:`walk_objects`): one of the formats of
    :data:`SPARSE_TYPES`, well formed (:func:`_check_sparse`), and a neighbours model's stored records as many and
    as wide as the model records. Returns how many were checked."""
    import scipy.sparse as sp
    from sklearn.neighbors._base import NeighborsBase

    n_checked = 0
    for o, w in list(walk_objects(obj, where)):
        if sp.issparse(o):
            if f"{type(o).__module__}.{type(o).__name__}" not in SPARSE_TYPES:
                _refuse(w, "sparse matrix", f"type {type(o).__name__}; leakaudit checks csr, csc and coo")
            _check_sparse(o, w)
            n_checked += 1
        elif isinstance(o, NeighborsBase) and sp.issparse(_own(o, "_fit_X")):
            X = _own(o, "_fit_X")
            if X.shape != (_own(o, "n_samples_fit_"), _own(o, "n_features_in_")):
                _refuse(w, "neighbours model", f"{X.shape} stored records; it records "
                        f"{_own(o, 'n_samples_fit_')!r} records of {_own(o, 'n_features_in_')!r} columns")
    return n_checked


# --- the whole model -----------------------------------------------------------------------------------------------

def checked_trees(obj, where: str = "model") -> list:
    """Check every fitted scikit-learn Tree and HistGradientBoosting predictor reachable from ``obj``
    (:func:`walk_objects`) and the estimators that hold them; return the objects checked (each once, however often
    it is referenced). A Tree or predictor outside any estimator that would use it is refused (fail closed)."""
    from sklearn.ensemble._gb import BaseGradientBoosting
    from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import BaseHistGradientBoosting
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
    from sklearn.tree._tree import Tree

    objects = list(walk_objects(obj, where))
    found: dict[int, tuple[object, str]] = {}
    checked: set[int] = set()
    ensemble_members: set[int] = set()
    for o, w in objects:
        if isinstance(o, (Tree, TreePredictor)):
            found[id(o)] = (o, w)
    for o, w in objects:  # tree owners first: an ensemble's checks read its trees' widths
        t = _own(o, "tree_")
        if isinstance(t, Tree):
            _check_tree_owner(o, t, w)
            checked.add(id(t))
    from sklearn.svm._base import BaseLibSVM

    for o, w in objects:
        if isinstance(o, BaseLibSVM):
            _check_libsvm(o, w)
        if _own(o, "estimators_") is not None:
            _check_ensemble_width(o, w, ensemble_members)
        if isinstance(o, BaseGradientBoosting) and _own(o, "estimators_") is not None:
            _check_gradient_boosting(o, w)
        if isinstance(o, BaseHistGradientBoosting) and _own(o, "_predictors") is not None:
            _check_hist_gradient_boosting(o, w, checked)
    unreached = [(o, w) for i, (o, w) in found.items() if i not in checked]
    if unreached:
        o, w = unreached[0]
        raise UnsafeFileError(f"{_short(w)}: a fitted {type(o).__name__} outside any estimator that records its "
                              "input width; leakaudit cannot check it, refusing to use it")
    return [o for o, _ in found.values()]


def check_model_structure(est, where: str) -> list:
    """Every check of this module on a loaded model: fitted attributes (:func:`check_fitted`), its sparse matrices
    (:func:`check_sparse_matrices`), the recorded input
    width against the recorded column names (the data is fed by those names, and scikit-learn checks its width
    against ``n_features_in_``), then every tree and predictor (:func:`checked_trees`); returns the trees and
    predictors checked."""
    check_fitted(est, where)
    check_sparse_matrices(est, where)
    names = getattr(est, "feature_names_in_", None)  # a Pipeline's are its first step's (a property)
    if names is not None:
        check_input_width(est, len(names), where)
    return checked_trees(est, where)


def check_input_width(est, n_features: int, where: str) -> None:
    """The model takes ``n_features`` columns, the width of the data the audit will feed it: its recorded input
    width (``n_features_in_``, a Pipeline's first step's) must be that."""
    n_in = getattr(est, "n_features_in_", None)  # a Pipeline's is its first step's (a property)
    if _int(n_in) != int(n_features):
        raise UnsafeFileError(f"{_short(where)}: the {type(est).__name__} records an input width of {n_in!r}; the "
                              f"data it will be given has {n_features} columns; refusing to use it")

"""What a scikit-learn model from a file will cost, estimated before it is used, against the audit's budgets.

A file declares its own sizes: how far its arrays inflate, how many trees or iterations retraining it runs, how
wide its layers are. Three estimates, each refused in one line naming the estimate and the limit when over it:

* loading: the zip's uncompressed sizes (its central directory, read before skops inflates anything) against the
  memory budget (:func:`leakaudit.engine.memory_budget`): skops holds each array's bytes and then the array, and
  the schema's parsed form takes about :data:`SCHEMA_FACTOR` times its text;
* memory of one prediction over the records and of one retrained model, against the same budget;
* work (elementary steps, :mod:`leakaudit.engine._work`) of one fit on the records and of one prediction over them,
  against the work budget (:func:`leakaudit.engine.work_budget`).

Estimated families: forests, gradient boosting, HistGradientBoosting, MLPs, trees, support vector machines,
neighbours models and linear classifiers; any other model is used without an estimate.

The declared sizes the estimates rest on must be the file's own: a forest whose ``n_estimators`` is not the number
of trees it holds, a network whose ``hidden_layer_sizes`` are not its weight matrices' or whose ``n_iter_`` exceeds
its ``max_iter``, is refused as malformed.
"""

from __future__ import annotations

import math
import numbers
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._text import byte_size as _size
from ...exceptions import UnsafeFileError

__all__ = ["SCHEMA_FACTOR", "Cost", "check_archive", "model_costs", "check_model_cost"]

#: memory that skops' parsed schema (JSON objects and its node tree) takes per byte of schema.json, measured: a
#: 300-tree forest (4.4 MB of schema, 26 MB of arrays) peaked 93 MB over the process before loading (2 x 26 + 9 x 4.4)
SCHEMA_FACTOR = 10
_ARRAY_COPIES = 2  # the member's bytes, then the array built from them (both alive until the load ends)
#: steps of a tree's growth per row, feature and level of its sort, so that scikit-learn's forest runs about as many
#: steps per second as its MLPClassifier (benchmarks/work_steps.py)
TREE_ROW_STEPS = 10


def check_archive(path: Path, budget: int | None = None) -> int:
    """Refuse a skops zip whose members would take more memory to load than ``budget`` bytes (default: the memory
    budget in force), from the sizes its central directory declares; return the estimate in bytes.

    zipfile inflates no more of a member than its declared size (what a member holds beyond it is never read),
    so the declared sizes bound what loading can take."""
    from ...engine import memory_budget

    budget = memory_budget() if budget is None else int(budget)
    try:
        with zipfile.ZipFile(path, "r") as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UnsafeFileError(f"model file {path} is not a readable zip: {exc}") from None
    schema = sum(i.file_size for i in infos if i.filename == "schema.json")
    arrays = sum(i.file_size for i in infos if i.filename != "schema.json")
    estimate = _ARRAY_COPIES * arrays + SCHEMA_FACTOR * schema
    if estimate > budget:
        packed = sum(i.compress_size for i in infos)
        raise UnsafeFileError(
            f"model file {path} unpacks to {_size(arrays + schema)} ({len(infos)} members, {_size(packed)} packed): "
            f"loading it would take about {_size(estimate)}, over the memory budget of {_size(budget)} "
            "(`memory_budget`); refusing to load it")
    return estimate


@dataclass(frozen=True)
class Cost:
    """One estimate: what it is for, bytes of memory and steps of work."""

    what: str
    memory: float
    work: float


def _malformed(where: str, what: str, bad: str):
    raise UnsafeFileError(f"{where}: malformed {what} ({bad}); refusing to use it")


def _int_param(v) -> int | None:
    return int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else None


def _max_features(mf, d: int) -> int:
    """scikit-learn's number of features tried per split."""
    if mf is None:
        return d
    if mf == "sqrt":
        return max(1, int(math.sqrt(d)))
    if mf == "log2":
        return max(1, int(math.log2(max(d, 1))))
    if isinstance(mf, numbers.Integral):
        return max(1, min(int(mf), d))
    if isinstance(mf, numbers.Real):
        return max(1, int(float(mf) * d))
    return d


def _tree_fit_steps(n: int, mf: int) -> float:
    """One tree grown on ``n`` rows trying ``mf`` features per split: each level sorts the rows on each feature
    (:data:`TREE_ROW_STEPS` steps a row, a feature and a level of the sort)."""
    from ...engine import TREE_OVERHEAD

    lg = math.log2(max(n, 2))
    return TREE_OVERHEAD + TREE_ROW_STEPS * n * lg * lg * mf


def _trees_held(est) -> list:
    from sklearn.tree._tree import Tree

    out = []
    members = est.__dict__.get("estimators_")
    for m in np.asarray(members, dtype=object).ravel() if members is not None else ():
        t = getattr(m, "__dict__", {}).get("tree_")
        if isinstance(t, Tree):
            out.append(t)
    return out


def _forest_cost(est, where: str, n: int, d: int) -> Cost:
    T = _int_param(est.get_params(deep=False).get("n_estimators"))
    trees = _trees_held(est)
    if T is None or T != len(est.__dict__.get("estimators_", ())):
        _malformed(where, "forest", f"n_estimators {T!r} but {len(est.__dict__.get('estimators_', ()))} trees held")
    C = int(np.max(np.atleast_1d(getattr(est, "n_classes_", 1))))
    nodes = float(np.mean([t.node_count for t in trees])) if trees else 1.0
    depth = float(np.mean([t.max_depth for t in trees])) if trees else 1.0
    mf = _max_features(est.get_params(deep=False).get("max_features"), d)
    return Cost(f"{type(est).__name__} of {T:,} trees", T * nodes * (64 + 8 * C),
                max(T * _tree_fit_steps(n, mf), T * n * (depth + 1)))


def _gb_cost(est, where: str, n: int, d: int) -> Cost:
    T = _int_param(est.get_params(deep=False).get("n_estimators"))
    grid = est.__dict__.get("estimators_")
    held = int(np.shape(grid)[0]) if grid is not None and np.ndim(grid) == 2 else -1
    if T is None or held < 1 or held > T:
        _malformed(where, "gradient boosting", f"n_estimators {T!r} but {held} stages held")
    K = int(np.shape(grid)[1])
    trees = _trees_held(est)
    nodes = float(np.mean([t.node_count for t in trees])) if trees else 1.0
    mf = _max_features(est.get_params(deep=False).get("max_features"), d)
    return Cost(f"{type(est).__name__} of {T:,} x {K} trees", T * K * nodes * 72.0,
                T * K * _tree_fit_steps(n, mf))


def _hgb_cost(est, where: str, n: int, d: int) -> Cost:
    prm = est.get_params(deep=False)
    it = _int_param(prm.get("max_iter"))
    held = est.__dict__.get("_predictors")
    held = len(held) if isinstance(held, list) else -1
    n_iter = est.__dict__.get("n_iter_", held)
    if it is None or held < 1 or held > it or n_iter != held:
        _malformed(where, "HistGradientBoosting", f"max_iter {it!r}, n_iter_ {n_iter!r}, {held} iterations held")
    K = int(est.__dict__.get("n_trees_per_iteration_", 1))
    leaves = _int_param(prm.get("max_leaf_nodes")) or n
    bins = (_int_param(prm.get("max_bins")) or 255) + 1
    # per iteration and tree: the gradients, a histogram pass over the rows, and the split search over the bins
    work = n * d * math.log2(bins) + it * K * (n * d + 2 * leaves * d * bins)
    memory = n * d + 3 * 8 * n * K + 2 * leaves * d * bins * 20 + it * K * 2 * leaves * 64
    return Cost(f"{type(est).__name__} of {it:,} iterations", memory, work)


def _mlp_cost(est, where: str, n: int, d: int) -> Cost:
    prm = est.get_params(deep=False)
    hidden = prm.get("hidden_layer_sizes")
    hidden = (hidden,) if isinstance(hidden, numbers.Integral) else tuple(hidden) if hidden is not None else ()
    coefs, icpt = est.__dict__.get("coefs_"), est.__dict__.get("intercepts_")
    shapes = [np.shape(c) for c in coefs] if isinstance(coefs, list) else []
    widths = [s[0] for s in shapes] + ([shapes[-1][1]] if shapes else [])
    ok = (len(shapes) == len(hidden) + 1 and all(len(s) == 2 for s in shapes)
          and all(shapes[i][1] == shapes[i + 1][0] for i in range(len(shapes) - 1))
          and tuple(widths[1:-1]) == tuple(int(h) for h in hidden)
          and isinstance(icpt, list) and [np.shape(b) for b in icpt] == [(s[1],) for s in shapes]
          and est.__dict__.get("n_layers_") == len(shapes) + 1)
    if not ok:
        _malformed(where, "network", f"hidden_layer_sizes {prm.get('hidden_layer_sizes')!r}, weight matrices "
                   f"{shapes}, intercepts {[np.shape(b) for b in icpt] if isinstance(icpt, list) else icpt!r}")
    max_iter = _int_param(prm.get("max_iter"))
    n_iter = est.__dict__.get("n_iter_", max_iter)
    if max_iter is None or _int_param(n_iter) is None or not 0 <= n_iter <= max_iter:
        _malformed(where, "network", f"n_iter_ {n_iter!r} with max_iter {max_iter!r}")
    P = sum((a + 1) * b for a, b in zip(widths[:-1], widths[1:]))
    batch = prm.get("batch_size")
    batch = min(n, 200 if batch == "auto" else _int_param(batch) or n)
    # prediction: two float64 activations of the widest layer for every row; retraining (leakaudit's TorchMLP,
    # float32): weights, gradients and Adam's two moments, and a batch's activations and their gradients
    memory = max(2 * 8 * n * max(widths), 4 * 4 * P + 2 * 4 * batch * sum(widths))
    return Cost(f"{type(est).__name__} of layers {widths} for {int(n_iter):,} iterations", memory,
                6.0 * P * n * max(int(n_iter), 1))


def _tree_cost(est, where: str, n: int, d: int) -> Cost:
    mf = _max_features(est.get_params(deep=False).get("max_features"), d)
    t = est.__dict__.get("tree_")
    C = int(t.max_n_classes) * int(t.n_outputs) if t is not None else 1
    nodes = int(t.node_count) if t is not None else 1
    return Cost(f"{type(est).__name__}", nodes * (64 + 8 * C), _tree_fit_steps(n, mf))


def _svm_cost(est, where: str, n: int, d: int) -> Cost:
    """libsvm's SMO: each pass computes a kernel column (``n d`` steps) and takes about ``n`` passes, five more
    fits for ``probability=True``'s internal cross-validation; its kernel cache holds at most ``cache_size`` MB or
    the whole ``n x n`` float32 kernel. Prediction: every record against every support vector."""
    prm = est.get_params(deep=False)
    sv = est.__dict__.get("support_vectors_")
    l = int(np.shape(sv)[0]) if sv is not None and np.ndim(sv) == 2 else n
    cache = prm.get("cache_size")
    cache = float(cache) * 2**20 if isinstance(cache, numbers.Real) and math.isfinite(cache) and cache > 0 else 0.0
    fits = 6 if prm.get("probability") else 1
    return Cost(f"{type(est).__name__} with {l:,} support vectors", min(cache, 4.0 * n * n) + 2 * 8.0 * n * d,
                max(fits * float(n) * n * d, float(n) * l * d))


def _knn_cost(est, where: str, n: int, d: int) -> Cost:
    """A neighbours model stores its ``n_fit`` records: predicting ``n`` records compares each with all of them
    (scikit-learn's brute force, in chunks of at most its 1 GiB working memory); refitting copies the records."""
    fit_x = est.__dict__.get("_fit_X")
    n_fit = int(np.shape(fit_x)[0]) if fit_x is not None and np.ndim(fit_x) == 2 else -1
    if n_fit < 1 or est.__dict__.get("n_samples_fit_") != n_fit:
        _malformed(where, "neighbours model", f"n_samples_fit_ {est.__dict__.get('n_samples_fit_')!r} but "
                   f"{n_fit} stored records")
    return Cost(f"{type(est).__name__} of {n_fit:,} stored records",
                8.0 * max(n_fit, n) * d + min(8.0 * n * n_fit, 2.0**30), float(n) * max(n_fit, n) * d)


def _linear_cost(est, where: str, n: int, d: int) -> Cost:
    """A linear model refitted by scikit-learn runs up to its ``max_iter`` passes over the records (a
    LogisticRegression that leakaudit refits by Newton's method: that learner's iteration cap, whatever the file
    declares); each pass reads every record for every output column."""
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    from ...exceptions import UnsupportedError
    from ...learners import LogisticRegression

    coef = est.__dict__.get("coef_")
    k = int(np.shape(coef)[0]) if coef is not None and np.ndim(coef) == 2 else 1
    it = _int_param(est.get_params(deep=False).get("max_iter"))
    it = 1000 if it is None else max(it, 1)
    if isinstance(est, SkLogisticRegression):
        try:  # refitted by leakaudit's Newton method (target._sklearn_learner), whatever the file's max_iter
            it = LogisticRegression.from_sklearn(est).max_iter
        except UnsupportedError:
            pass
    return Cost(f"{type(est).__name__} of up to {it:,} iterations", 2 * 8.0 * n * d + 8.0 * k * d,
                float(it) * n * d * k)


def _estimated(est):
    """The estimate for ``est``'s family, or None."""
    from sklearn.ensemble._forest import BaseForest
    from sklearn.ensemble._gb import BaseGradientBoosting
    from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import BaseHistGradientBoosting
    from sklearn.linear_model._base import LinearClassifierMixin
    from sklearn.neighbors._base import NeighborsBase
    from sklearn.neural_network._multilayer_perceptron import BaseMultilayerPerceptron
    from sklearn.svm._base import BaseLibSVM
    from sklearn.tree._classes import BaseDecisionTree

    for cls, fn in ((BaseForest, _forest_cost), (BaseGradientBoosting, _gb_cost),
                    (BaseHistGradientBoosting, _hgb_cost), (BaseMultilayerPerceptron, _mlp_cost),
                    (BaseDecisionTree, _tree_cost), (BaseLibSVM, _svm_cost), (NeighborsBase, _knn_cost),
                    (LinearClassifierMixin, _linear_cost)):
        if isinstance(est, cls):
            return fn
    return None


def model_costs(est, where: str, n_rows: int, n_features: int | None = None) -> list[Cost]:
    """The estimates for the model and, for a Pipeline, each of its steps (at any nesting), on ``n_rows`` records
    of ``n_features`` columns (default: each estimator's ``n_features_in_``)."""
    from sklearn.pipeline import Pipeline

    out, stack = [], [(est, where)]
    while stack:
        e, w = stack.pop()
        if isinstance(e, Pipeline):
            stack.extend((s[1], f"{w}.steps[{i}]") for i, s in enumerate(e.__dict__.get("steps") or ())
                         if isinstance(s, tuple) and len(s) == 2)
            continue
        fn = _estimated(e)
        if fn is not None:
            d = int(getattr(e, "n_features_in_", None) or n_features or 1)
            out.append(fn(e, w, max(int(n_rows), 1), d))
    return out


def check_model_cost(est, where: str, n_rows: int, n_features: int | None = None, *,
                     memory_budget: int | None = None, work_budget: int | None = None) -> list[Cost]:
    """Refuse the model when one fit or prediction on ``n_rows`` records would take more memory than the memory
    budget or more steps than the work budget (defaults: those in force); return the estimates."""
    from ...engine import memory_budget as _mem
    from ...engine import work_budget as _work

    mem = _mem() if memory_budget is None else int(memory_budget)
    work = _work() if work_budget is None else int(work_budget)
    costs = model_costs(est, where, n_rows, n_features)
    for c in costs:
        if c.memory > mem:
            raise UnsafeFileError(
                f"{where}: the {c.what} would take about {_size(c.memory)} to predict or retrain on {n_rows:,} "
                f"records, over the memory budget of {_size(mem)} (`memory_budget`); refusing to use it")
        if c.work > work:
            raise UnsafeFileError(
                f"{where}: the {c.what} would take about {c.work:.2g} steps to retrain on {n_rows:,} records, over "
                f"the work budget of {work:.2g} steps (LEAKAUDIT_WORK_BUDGET); refusing to use it")
    return costs

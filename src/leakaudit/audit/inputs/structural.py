"""Structural checks: what a fitted model discloses by its form, read from the model alone before any training.

Three checks, each a :class:`~leakaudit.audit.result.checks.Check` of analysis ``"structural"``, exact (no sampling,
so no interval):

* ``structural.instance_based``: a model that keeps training records in its fitted state (a nearest-neighbour model
  keeps all of them; a support vector machine its support vectors; a Gaussian process or a label-propagation model
  its training inputs). Whoever holds the published model holds those records (after the preprocessing steps of a
  pipeline, which are published with it).
* ``structural.leaf_size``: trees (alone, in a forest, a boosting or bagging ensemble, a pipeline's step, or
  scikit-learn's histogram gradient boosting) whose smallest leaf holds fewer training records than a minimum: a
  leaf of one record reproduces that record's label (or target) in a region of the inputs that the model publishes.
  Records are counted as the tree counted them (``tree_.n_node_samples``: distinct records, so a bootstrap sample's
  repeated draws count once; ``nodes["count"]`` for histogram gradient boosting; LightGBM's ``leaf_count``, the
  rows of the bagged sample under bagging). XGBoost's model keeps each node's hessian sum, not a count of records:
  for an XGBoost target the audit counts the members its trees route to each leaf (leaves no member reaches are
  left out), and a model the audit did not route has no leaf check.
* ``structural.parameters_per_record``: more fitted parameters than training records, the model has the capacity to
  store its records (a degrees-of-freedom argument; SACRO-ML's structural attack flags a residual of fewer than 10
  degrees of freedom).

:func:`structural_checks` returns the checks that apply (a model without trees gets no leaf check);
:func:`describe_structure` returns what was read, for ``results.json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..._validation import check_scalar
from ...exceptions import InvalidInputError
from ...learners import is_torch_module
from ..result.checks import EXCEEDED, NOT_MEASURABLE, PASSED, Check

__all__ = ["structural_checks", "describe_structure", "count_parameters", "stored_records", "leaf_sizes",
           "Component"]

#: attributes that hold fitted sub-estimators of a container (pipelines, ensembles, meta-estimators)
_CHILDREN = ("steps", "transformer_list", "transformers_", "estimators_", "final_estimator_", "init_",
             "calibrated_classifiers_", "best_estimator_", "regressor_", "estimator_")

#: fitted attributes that are bookkeeping, not parameters (counts, scores, names, iteration numbers)
_NOT_PARAMETERS = ("classes_", "feature_names_in_", "n_features_in_", "loss_curve_", "validation_scores_",
                   "train_score_", "oob_improvement_", "oob_scores_", "oob_score_", "oob_decision_function_",
                   "oob_prediction_", "feature_importances_", "best_score_", "cv_results_", "scores_",
                   "estimators_samples_", "estimators_features_", "support_", "n_support_", "class_count_",
                   "feature_count_", "category_count_", "epsilon_", "t_", "fit_status_", "shape_fit_",
                   "_n_support", "n_iter_", "n_samples_seen_", "n_outputs_", "n_classes_", "n_layers_")


@dataclass
class Component:
    """One fitted estimator inside the model (the model itself when it is not a container).

    Attributes
    ----------
    path : str
        Where it sits, e.g. ``"model"``, ``"model.steps[1] 'forest'.estimators_[3]"``.
    kind : str
        Its class name.
    estimator : object
    """

    path: str
    kind: str
    estimator: object = field(repr=False)


def _children(obj, path: str) -> list[tuple[object, str]]:
    """Fitted sub-estimators of a container, with their paths (empty for a leaf estimator)."""
    out = []
    for attr in _CHILDREN:
        v = getattr(obj, attr, None) if attr in vars(obj) else None
        if v is None:
            continue
        if attr == "steps":
            out += [(est, f"{path}.steps[{i}] {name!r}") for i, (name, est) in enumerate(v)]
        elif attr in ("transformer_list", "transformers_"):
            out += [(t[1], f"{path}.{attr}[{i}] {t[0]!r}") for i, t in enumerate(v)]
        elif attr == "calibrated_classifiers_":
            out += [(getattr(c, "estimator", None), f"{path}.calibrated_classifiers_[{i}].estimator")
                    for i, c in enumerate(v)]
        elif isinstance(v, (list, tuple, np.ndarray)):
            flat = np.asarray(v, dtype=object).ravel() if isinstance(v, np.ndarray) else list(v)
            shape = np.shape(v) if isinstance(v, np.ndarray) and np.ndim(v) > 1 else None
            for i, est in enumerate(flat):
                where = f"[{', '.join(map(str, np.unravel_index(i, shape)))}]" if shape else f"[{i}]"
                out.append((est, f"{path}.{attr}{where}"))
        else:
            out.append((v, f"{path}.{attr}"))
    return [(est, p) for est, p in out if est is not None and not isinstance(est, str)]


def _is_container(obj) -> bool:
    return any(attr in vars(obj) for attr in _CHILDREN) if hasattr(obj, "__dict__") else False


def _fitted(obj) -> bool:
    """Whether ``obj`` carries fitted state (scikit-learn's convention: a public attribute ending in ``_``)."""
    if is_torch_module(obj):
        return True
    return any(k.endswith("_") and not k.startswith("__") for k in getattr(obj, "__dict__", {}))


def components(model, path: str = "model") -> Iterator[Component]:
    """Every fitted non-container estimator inside ``model`` (depth first; each object once).

    A container's unfitted template (a forest's ``estimator_``) is skipped: it holds no fitted state.
    """
    seen: set[int] = set()
    stack = [(model, path)]
    while stack:
        obj, where = stack.pop()
        if obj is None or id(obj) in seen or isinstance(obj, str):
            continue
        seen.add(id(obj))
        if is_torch_module(obj):
            yield Component(where, type(obj).__name__, obj)
            continue
        if _is_container(obj) and not _own_family(obj):
            stack.extend(reversed(_children(obj, where)))
            continue
        if _fitted(obj):
            yield Component(where, type(obj).__name__, obj)
        if _is_container(obj):  # a family with children of its own (none today), walked too
            stack.extend(reversed(_children(obj, where)))


def _own_family(obj) -> str | None:
    """The family of an estimator whose fitted state leakaudit reads directly (None for anything else)."""
    d = vars(obj) if hasattr(obj, "__dict__") else {}
    if is_torch_module(obj):
        return "torch"
    if callable(getattr(type(obj), "tree_leaf_records", None)) and "booster_" in d:
        return "boosted"  # leakaudit's XGBoost or LightGBM model (learners/xgb.py, learners/lgbm.py)
    if "tree_" in d:
        from sklearn.tree._tree import Tree

        return "tree" if isinstance(d["tree_"], Tree) else ("kernel_density" if hasattr(d["tree_"], "data") else None)
    if "_predictors" in d:
        return "hist_gradient_boosting"
    if "_fit_X" in d:
        return "neighbors"
    if "support_vectors_" in d:
        return "svm"
    if "X_train_" in d or ("base_estimator_" in d and type(obj).__name__.startswith("GaussianProcess")):
        return "gaussian_process"
    if "X_" in d and "label_distributions_" in d:
        return "label_propagation"
    if "coefs_" in d:
        return "mlp"
    if "coef_" in d:
        return "linear"
    return None


# -- what each family stores ----------------------------------------------------------------------------------------


def _gp_inputs(est) -> np.ndarray | None:
    if hasattr(est, "X_train_"):
        return np.asarray(est.X_train_)
    base = getattr(est, "base_estimator_", None)
    if hasattr(base, "X_train_"):
        return np.asarray(base.X_train_)
    inner = getattr(base, "estimators_", None)  # one-vs-rest Gaussian process classifiers
    if inner:
        return np.asarray(inner[0].X_train_)
    return None


def stored_records(model) -> list[dict]:
    """The components that keep training records in their fitted state.

    Returns
    -------
    list of dict
        One per such component: ``path``, ``kind``, ``family`` (neighbors | svm | gaussian_process |
        label_propagation | kernel_density) and ``n_stored`` (records kept).
    """
    out = []
    for c in components(model):
        fam = _own_family(c.estimator)
        est = c.estimator
        if fam == "neighbors":
            n = int(np.shape(est._fit_X)[0])
        elif fam == "svm":
            n = int(np.shape(est.support_vectors_)[0])
        elif fam == "gaussian_process":
            X = _gp_inputs(est)
            n = 0 if X is None else int(X.shape[0])
        elif fam == "label_propagation":
            n = int(np.shape(est.X_)[0])
        elif fam == "kernel_density":
            n = int(np.shape(est.tree_.data)[0])
        else:
            continue
        out.append({"path": c.path, "kind": c.kind, "family": fam, "n_stored": n})
    return out


def _tree_leaves(tree) -> tuple[np.ndarray, np.ndarray]:
    leaf = np.asarray(tree.children_left) == -1
    return np.asarray(tree.n_node_samples)[leaf], np.asarray(tree.weighted_n_node_samples)[leaf]


def leaf_sizes(model) -> list[dict]:
    """Training records per leaf of every tree inside ``model``.

    Returns
    -------
    list of dict
        One per tree: ``path``, ``kind``, ``records`` (ndarray of int, one per leaf: distinct training records that
        reached it) and ``weighted`` (ndarray of float: their weight, e.g. bootstrap draws; equal to ``records``
        for histogram gradient boosting, which keeps no weights).
    """
    out = []
    for c in components(model):
        fam = _own_family(c.estimator)
        if fam == "tree":
            rec, w = _tree_leaves(c.estimator.tree_)
            out.append({"path": c.path, "kind": c.kind, "records": rec.astype(np.int64), "weighted": w})
        elif fam == "boosted":
            for i, rec in enumerate(c.estimator.tree_leaf_records() or ()):
                rec = np.asarray(rec, dtype=np.int64)
                out.append({"path": f"{c.path}.trees[{i}]", "kind": c.kind, "records": rec,
                            "weighted": rec.astype(float)})
        elif fam == "hist_gradient_boosting":
            for i, stage in enumerate(c.estimator._predictors):
                for k, pred in enumerate(stage):
                    nodes = pred.nodes
                    rec = np.asarray(nodes["count"])[np.asarray(nodes["is_leaf"]).astype(bool)].astype(np.int64)
                    out.append({"path": f"{c.path}._predictors[{i}][{k}]", "kind": c.kind, "records": rec,
                                "weighted": rec.astype(float)})
    return out


def _tree_parameters(tree) -> int:
    """Split features and thresholds of the internal nodes, and the values each leaf outputs (for a classifier one
    fewer than its classes, since they sum to 1)."""
    leaf = np.asarray(tree.children_left) == -1
    n_out, n_val = np.shape(tree.value)[1:]
    per_leaf = n_out * (n_val - 1 if n_val > 1 else 1)
    return int(2 * (~leaf).sum() + per_leaf * leaf.sum())


def _array_size(v) -> int:
    if isinstance(v, np.ndarray):
        return int(v.size) if v.dtype.kind in "biuf" else 0
    if isinstance(v, (list, tuple)) and v and all(isinstance(a, np.ndarray) for a in v):
        return sum(_array_size(a) for a in v)
    return 0


def _parameters(est) -> tuple[int, str]:
    """(parameters, how they were counted) of one non-container component."""
    fam = _own_family(est)
    if fam == "torch":
        return int(sum(p.numel() for p in est.parameters())), "torch parameters"
    if fam == "tree":
        return _tree_parameters(est.tree_), "tree: 2 per split, the outputs of each leaf"
    if fam == "boosted":
        return int(est.tree_parameters()), "trees: 2 per split, 1 per leaf"
    if fam == "hist_gradient_boosting":
        total = 0
        for stage in est._predictors:
            for pred in stage:
                leaf = np.asarray(pred.nodes["is_leaf"]).astype(bool)
                total += int(2 * (~leaf).sum() + leaf.sum())
        return total + int(np.size(getattr(est, "_baseline_prediction", 0))), "trees: 2 per split, 1 per leaf"
    if fam == "neighbors":
        X = np.asarray(est._fit_X)
        y = getattr(est, "_y", None)
        return int(X.size + (0 if y is None else np.size(y))), "stored records and their labels"
    if fam == "svm":
        n = _array_size(est.support_vectors_) + _array_size(getattr(est, "dual_coef_", None))
        return n + int(np.size(getattr(est, "intercept_", ()))), "support vectors, dual coefficients, intercepts"
    if fam == "gaussian_process":
        X = _gp_inputs(est)
        return (0 if X is None else int(X.size)) * 2, "stored inputs and their dual weights"
    if fam == "label_propagation":
        return int(np.size(est.X_) + np.size(est.label_distributions_)), "stored inputs and label distributions"
    if fam == "kernel_density":
        return int(np.size(est.tree_.data)), "stored records"
    if fam == "mlp":
        return _array_size(est.coefs_) + _array_size(est.intercepts_), "weights and biases"
    if fam == "linear":
        return int(np.size(est.coef_) + np.size(getattr(est, "intercept_", ()))), "coefficients and intercepts"
    total = 0
    for k, v in vars(est).items():
        if k.endswith("_") and not k.startswith("_") and k not in _NOT_PARAMETERS and not k.startswith("n_"):
            total += _array_size(v)
    return total, "fitted numeric arrays"


def count_parameters(model) -> tuple[int | None, list[dict]]:
    """Fitted parameters of ``model`` (summed over its components).

    Returns
    -------
    total : int or None
        None when no component holds a parameter leakaudit can count (not measurable). A component without numeric
        fitted arrays (an encoder's category lists) counts 0.
    parts : list of dict
        ``path``, ``kind``, ``parameters``, ``counted`` (how) for each component.
    """
    parts = []
    for c in components(model):
        n, how = _parameters(c.estimator)
        parts.append({"path": c.path, "kind": c.kind, "parameters": n, "counted": how})
    total = int(sum(p["parameters"] for p in parts))
    return (total or None), parts


def _model_name(model) -> str:
    """The model's class, with a pipeline's steps: ``Pipeline(StandardScaler, RandomForestClassifier)``."""
    steps = getattr(model, "steps", None)
    if isinstance(steps, list):
        inner = [s if isinstance(s, str) else type(s).__name__ for _, s in steps]
        return f"{type(model).__name__}({', '.join(inner)})"
    return type(model).__name__


def describe_structure(model, n_records: int) -> dict:
    """What the structural checks read, for ``results.json`` (plain values).

    Keys: ``model`` (class names), ``n_records``, ``stored_records`` (:func:`stored_records`), ``n_trees``,
    ``smallest_leaf`` (records; None without trees), ``parameters`` (None if not countable) and
    ``parameter_parts`` (per component).
    """
    leaves = leaf_sizes(model)
    total, parts = count_parameters(model)
    return {"model": _model_name(model), "n_records": int(n_records), "stored_records": stored_records(model),
            "n_trees": len(leaves),
            "smallest_leaf": int(min(t["records"].min() for t in leaves)) if leaves else None,
            "parameters": total, "parameter_parts": parts}


# -- the checks -----------------------------------------------------------------------------------------------------


def _instance_check(model, name: str, n_records: int) -> Check:
    stored = stored_records(model)
    common = dict(id="structural.instance_based", analysis="structural", name="Training records kept in the model",
                  threshold=0.0)
    if not stored:
        return Check(**common, status=PASSED, value=0.0,
                     sentence=f"The model ({name}) keeps no training record in its fitted state: it is not a "
                              "nearest-neighbour model, a support vector machine, a Gaussian process, a label "
                              "propagation or a kernel density model.")
    n = sum(s["n_stored"] for s in stored)
    what = "; ".join(f"{s['kind']} at {s['path']} keeps {s['n_stored']:,}" for s in stored)
    families = {s["family"] for s in stored}
    kinds = []
    if "neighbors" in families:
        kinds.append("a nearest-neighbour model keeps every training record to compare new ones with")
    if "svm" in families:
        kinds.append("a support vector machine keeps its support vectors, training records, verbatim")
    if families & {"gaussian_process", "label_propagation", "kernel_density"}:
        kinds.append("a Gaussian process, label propagation or kernel density model keeps its training inputs")
    return Check(**common, status=EXCEEDED, value=float(n),
                 sentence=(f"The model ({name}) keeps {n:,} training records in its fitted state, of "
                           f"{n_records:,} members ({what}): {'; '.join(kinds)}. Whoever receives the model file "
                           "receives these records (after any preprocessing step, which is published with them)."),
                 fix=("Publish a model that keeps no records (a regularised linear model or network, or trees whose "
                      "leaves hold at least the minimum number of records), or do not release the model file: "
                      "serve its labels or scores and audit that release instead."))


def _leaf_check(model, name: str, min_leaf_records: int) -> Check | None:
    leaves = leaf_sizes(model)
    if not leaves:
        return None
    sizes = np.concatenate([t["records"] for t in leaves])
    smallest = int(sizes.min())
    small = sizes < min_leaf_records
    trees_small = sum(bool((t["records"] < min_leaf_records).any()) for t in leaves)
    common = dict(id="structural.leaf_size", analysis="structural", name="Smallest tree leaf (training records)",
                  value=float(smallest), threshold=float(min_leaf_records))
    where = f"{len(leaves):,} tree{'s' if len(leaves) != 1 else ''} of the model ({name})"
    if not small.any():
        return Check(**common, status=PASSED,
                     sentence=f"Every leaf of the {where} holds at least {min_leaf_records:,} training records "
                              f"(the smallest holds {smallest:,}).")
    ones = int((sizes == 1).sum())
    return Check(**common, status=EXCEEDED,
                 sentence=(f"{int(small.sum()):,} of the {sizes.size:,} leaves of the {where} hold fewer than "
                           f"{min_leaf_records:,} training records ({trees_small:,} tree"
                           f"{'s' if trees_small != 1 else ''} affected; the smallest leaf holds {smallest:,}; "
                           f"{ones:,} leaves hold a single record). A leaf of few records publishes their labels "
                           "(or targets) in the region of inputs it covers."),
                 fix=(f"Retrain with min_samples_leaf={min_leaf_records} (or min_child_weight / min_samples_leaf of "
                      "the boosting library; for histogram gradient boosting min_samples_leaf), or limit max_depth, "
                      "so that every leaf holds at least that many records."))


def _parameter_check(model, name: str, n_records: int, max_parameters_per_record: float) -> Check:
    total, parts = count_parameters(model)
    common = dict(id="structural.parameters_per_record", analysis="structural",
                  name="Fitted parameters per training record", threshold=float(max_parameters_per_record))
    if total is None:
        return Check(**common, status=NOT_MEASURABLE,
                     sentence=f"leakaudit cannot count the fitted parameters of the model ({name}).",
                     fix=("leakaudit counts the parameters of scikit-learn estimators with fitted arrays (linear "
                          "models, trees and ensembles, histogram gradient boosting, neighbours, SVMs, networks, "
                          "naive Bayes, Gaussian processes) and of torch modules; save the model as one of these."))
    ratio = total / n_records
    over = ratio > max_parameters_per_record
    bound = (f"above {max_parameters_per_record:g}): enough capacity to store its training records" if over
             else f"at most {max_parameters_per_record:g})")
    return Check(**common, status=EXCEEDED if over else PASSED, value=float(ratio),
                 sentence=f"The model ({name}) has {total:,} fitted parameters for {n_records:,} training records "
                          f"({ratio:,.3g} per record, {bound}.",
                 fix=("Use a smaller model (fewer hidden units or layers, shallower or fewer trees, fewer features) "
                      "or more training records, or raise max_parameters_per_record in the policy where the "
                      "attacks' evidence is to decide for such models." if over else ""))


def structural_checks(model, n_records: int, *, min_leaf_records: int = 5,
                      max_parameters_per_record: float = 1.0) -> list[Check]:
    """The structural checks that apply to a fitted model (no training, no data beyond the number of records).

    Parameters
    ----------
    model : fitted scikit-learn estimator or Pipeline, or torch module
    n_records : int >= 1
        Number of records the model was trained on (the members).
    min_leaf_records : int >= 1, default=5
        A tree's leaf must hold at least this many training records.
    max_parameters_per_record : float > 0, default=1.0
        Fitted parameters allowed per training record.

    Returns
    -------
    list of Check
        ``structural.instance_based`` and ``structural.parameters_per_record`` always; ``structural.leaf_size`` when
        the model holds trees. Exact: no interval, no confidence.

    Raises
    ------
    InvalidInputError
        When the model holds no fitted estimator.
    """
    check_scalar(n_records, name="n_records", kind=(int, np.integer), min_val=1)
    check_scalar(min_leaf_records, name="min_leaf_records", kind=(int, np.integer), min_val=1)
    check_scalar(max_parameters_per_record, name="max_parameters_per_record", min_val=0.0, include_min=False)
    if not any(True for _ in components(model)):
        raise InvalidInputError(f"the model ({type(model).__name__}) holds no fitted estimator; structural checks "
                                "read a fitted model")
    name = _model_name(model)
    checks = [_instance_check(model, name, int(n_records))]
    leaf = _leaf_check(model, name, int(min_leaf_records))
    if leaf is not None:
        checks.append(leaf)
    checks.append(_parameter_check(model, name, int(n_records), float(max_parameters_per_record)))
    return checks

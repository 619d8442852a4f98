"""Stage 2 of the audit: the model under audit, its outputs, and its training algorithm.

Three ways to give a model:

(a) a scikit-learn estimator saved with skops (``--model FILE.skops``): loaded
    only if every type in the file is trusted (never pickle); its training
    algorithm for reference models is ``clone(estimator)``;
(a') an XGBoost JSON/UBJSON, LightGBM text or CatBoost JSON/cbm model file (``--model m.json``,
    ``m.ubj``, ``m.txt``, ``m.cbm``): parsed and checked before the library reads it, and retrained
    by leakaudit's learner of that library with the recipe the model records (:mod:`.boosted`);
(b) a torch module class (``--module pkg.mod:Class``, built with the config's
    ``module_kwargs``) and a state_dict file (``--model FILE.pt``), loaded with
    ``torch.load(weights_only=True)``; its training algorithm is
    :class:`~leakaudit.learners.torch_module.TorchModuleLearner`: fresh instances
    of the class trained with the config's ``training`` recipe;
(c) predictions only (``--predictions-train/--predictions-test`` CSV files of
    class probabilities): attacks that need no retraining run, the others are
    reported as skipped with the reason.

With none of these, the demo trains Long et al.'s network (one hidden layer of
64 tanh units, per-example SGD, lr 0.01, 30 epochs) on the members.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..._extras import require
from ..._validation import check_model_file, check_probabilities, clip
from ...exceptions import InvalidInputError, InvalidParameterError, UnsafeFileError, UnsupportedError
from ...learners import Capabilities, Learner, capabilities
from ..config import AuditConfig
from .data import AuditData

__all__ = ["Target", "prepare_target", "load_skops_model", "load_torch_model", "boosted_target"]


@dataclass
class Target:
    kind: str  # demo | sklearn | torch | xgboost | lightgbm | predictions
    description: str
    probs_mem: np.ndarray
    probs_non: np.ndarray
    probs_pop: np.ndarray | None
    learner: object | None  # a leakaudit Learner able to retrain the algorithm, or None
    model: object | None = None
    # The inputs ``learner`` trains on, per record group (default: the data's encoded features).
    X_mem: np.ndarray | None = None
    X_non: np.ndarray | None = None
    X_pop: np.ndarray | None = None
    # The model on a table of raw feature columns (attribute inference re-queries changed rows).
    predict_frame: object | None = None
    # The model's class probabilities on rows of its own inputs (the layout of ``inputs``), for attacks that query
    # other records than the audited ones (label-only); None where those inputs are not numeric features (row ids)
    predict_inputs: object | None = None
    # The one-hot column groups of those inputs where they are leakaudit's encoding (a perturbed copy stays valid)
    input_onehot: list | None = None
    # The records (members, non-members, population) in the layout ``predict_inputs`` takes, where it is not the
    # layout ``learner`` trains on (a model on the table's own columns retrains on row ids but is queried through
    # leakaudit's encoding); None: ``inputs``
    query_X: tuple | None = None

    def inputs(self, data: AuditData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.X_mem is None:
            return data.X_mem, data.X_non, data.X_pop
        return self.X_mem, self.X_non, self.X_pop

    def query_inputs(self, data: AuditData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The records as ``predict_inputs`` takes them: members, non-members, population."""
        return self.query_X if self.query_X is not None else self.inputs(data)

    def summary(self, data: AuditData) -> dict:
        acc_m = float(np.mean(self.probs_mem.argmax(1) == data.y_mem))
        acc_n = float(np.mean(self.probs_non.argmax(1) == data.y_non))
        return {"kind": self.kind, "description": self.description, "train_accuracy": acc_m, "test_accuracy": acc_n,
                "retrainable": self.learner is not None}


class FrameEstimatorLearner(Learner):
    """Retrains a scikit-learn estimator (e.g. a Pipeline) that takes raw table rows.

    Its ``X`` is a column of row numbers into ``frame``: the learner protocol
    stays numeric while the estimator sees the user's own columns.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator (cloned per model)
    frame : pandas.DataFrame of the records' feature columns
    """

    @property
    def capabilities(self) -> Capabilities:
        """scikit-learn refuses a single class; the seed matters where the estimator has a ``random_state``."""
        from ...learners.sklearn import seeded

        return Capabilities(fits_one_class=False, stochastic=seeded(self.estimator))

    def __init__(self, *, estimator=None, frame=None):
        self.estimator = estimator
        self.frame = frame

    def _rows(self, X: np.ndarray) -> pd.DataFrame | np.ndarray:
        """The estimator's input for the rows numbered in ``X[:, 0]``: rows of ``frame``, or, where
        :func:`_array_block` says the estimator reads the table only as numbers, the same rows as the array
        scikit-learn would have made of them (no per-call DataFrame validation of every column)."""
        rows = np.asarray(X[:, 0], dtype=np.int64)
        block = self._block()
        if block is None:
            return self.frame.iloc[rows]
        values, by_column = block
        # np.take (not values[:, rows], which numpy lays out column-major) keeps the memory order of _array_block
        return np.take(values, rows, axis=1).T if by_column else np.take(values, rows, axis=0)

    def _block(self) -> tuple[np.ndarray, bool] | None:
        """:func:`_array_block` of ``frame`` for ``estimator``, made once per (estimator, frame) pair."""
        cached = self.__dict__.get("_block_cache")
        if cached is None or cached[0] is not self.estimator or cached[1] is not self.frame:
            cached = (self.estimator, self.frame, _array_block(self.estimator, self.frame))
            self._block_cache = cached
        return cached[2]

    def parameter_codec(self, X=None, fitted=None) -> tuple:
        """Not covered, saying why: a Pipeline's preprocessing is fitted on the members too; a bare estimator's
        parameters may not be one vector (a tree), and one that is reads the table's own columns, where the MIP
        stage adds noise only to models on leakaudit's encoding."""
        from sklearn.pipeline import Pipeline

        from ...learners.sklearn import PIPELINE_NOT_A_VECTOR, SklearnLearner

        if isinstance(self.estimator, Pipeline):
            raise UnsupportedError(PIPELINE_NOT_A_VECTOR)
        SklearnLearner(self.estimator).parameter_codec(fitted=fitted)  # raises for a tree, a forest, ...
        raise UnsupportedError(
            f"the {type(self.estimator).__name__} reads the table's own columns by name, and the MIP noise is added "
            "only to a model on leakaudit's encoding (fit it on the encoded columns, docs/input.md)")

    def _fit(self, X, y, *, random_state, n_classes):
        from sklearn.base import clone

        from ..._random import seed_to_int

        est = clone(self.estimator)
        seed = seed_to_int(random_state)
        for k in est.get_params():
            if k == "random_state" or k.endswith("__random_state"):
                est.set_params(**{k: seed})
        try:
            est.fit(self._rows(X), y)
        except (ValueError, TypeError) as exc:
            raise InvalidInputError(f"retraining {type(est).__name__} failed: {clip(str(exc))}") from None
        return _FrameModel(est, self, n_classes)


def _array_block(estimator, frame: pd.DataFrame | None) -> tuple[np.ndarray, bool] | None:
    """``frame`` as an array whose row slices (``np.take``) are exactly what scikit-learn makes of
    ``frame.iloc[rows]``, and whether it is stored by column (one row per column: its slices are transposed
    back); None where the estimator must see the DataFrame itself.

    scikit-learn validates a DataFrame column by column on every fit and predict (dtype checks, feature names): on
    a table of 10,000 columns that is most of an audit's time (benchmarks/README.md, "Issue 64"). Handing it the
    array instead changes no number when (a) every feature column has a plain numpy integer or float dtype (no
    bool, no pandas extension or text type): ``check_array`` then converts the DataFrame with ``np.asarray`` and
    no early per-column conversion, and pandas' one conversion of the whole table gives the same values and dtype
    as its conversion of any slice; (b) the slices have pandas' memory order, which follows the frame's blocks
    (row-major for one column-major block, column-major otherwise) and is read off a two-row slice; and (c) the
    estimator, or every step of a Pipeline, reads its input only as numbers (:func:`_reads_numbers_only`). The
    clones are then fitted and queried on arrays alike, so none records feature names and scikit-learn has no
    mismatch to warn about."""
    if frame is None or frame.shape[1] == 0:
        return None
    if not all(isinstance(d, np.dtype) and d.kind in "iuf" for d in frame.dtypes):
        return None
    if not _reads_numbers_only(estimator, {str(c) for c in frame.columns}):
        return None
    by_column = len(frame) >= 2 and frame.shape[1] >= 2 and not np.asarray(frame.iloc[[0, 1]]).flags.c_contiguous
    values = frame.to_numpy()
    return (np.ascontiguousarray(values.T), True) if by_column else (np.ascontiguousarray(values), False)


def _reads_numbers_only(estimator, columns: set[str]) -> bool:
    """Whether ``estimator`` (a bare estimator, or a Pipeline of bare steps) reads its input as numbers only: every
    parameter of it, of the Pipeline and of each step is a plain value (None, a number, a string naming no column,
    a numeric array, or a list, tuple or dict of those). Anything else (a ColumnTransformer, a FunctionTransformer's
    function, a nested estimator, a column named in ``categorical_features``) may select or read columns by name,
    so the estimator keeps getting the DataFrame."""
    from sklearn.pipeline import Pipeline

    def plain(v) -> bool:
        if v is None or isinstance(v, (bool, int, float, np.number)):
            return True
        if isinstance(v, str):
            return v not in columns
        if isinstance(v, np.ndarray):
            return v.dtype.kind in "biuf"
        if isinstance(v, (list, tuple)):
            return all(plain(x) for x in v)
        if isinstance(v, dict):
            return all(plain(k) and plain(x) for k, x in v.items())
        return False

    def bare(est) -> bool:
        return hasattr(est, "get_params") and all(plain(v) for v in est.get_params(deep=False).values())

    if isinstance(estimator, Pipeline):
        steps = [s for _, s in estimator.steps if s is not None and s != "passthrough"]
        rest = {k: v for k, v in estimator.get_params(deep=False).items() if k != "steps"}
        return all(plain(v) for v in rest.values()) and all(bare(s) for s in steps)
    return bare(estimator)


class _FrameModel:
    def __init__(self, est, learner: FrameEstimatorLearner, n_classes: int):
        self.est, self.learner, self.n_classes = est, learner, n_classes

    def predict_proba(self, X):
        return _sk_probs(self.est, self.learner._rows(np.asarray(X)), self.n_classes, "reference")


def demo_learner(cfg: AuditConfig):
    from ...learners import TorchMLP

    return TorchMLP(hidden=tuple(cfg.hidden), activation=cfg.activation, mode="faithful", epochs=cfg.epochs, lr=0.01,
                    device=cfg.device)


def dp_demo_learner(cfg: AuditConfig, n: int):
    """The demo's network trained by DP-SGD (:class:`~leakaudit.learners.DPSGD`) to ``cfg.claimed_epsilon``.

    Poisson batches of 64 rows expected (rate 64 / n), ``cfg.epochs`` epochs, clip norm 1, lr 0.5; the noise
    multiplier calibrated with the PLD accountant to the claimed epsilon at ``cfg.epsilon_delta`` for ``n`` rows.
    """
    from ...dpaudit.dpsgd import calibrate_noise_multiplier, check_dp_claim
    from ...learners import DPSGD, TorchMLP

    q = min(1.0, 64 / n)
    check_dp_claim(noise_multiplier=1.0, sampling_rate=q, delta=cfg.epsilon_delta, n=n,
                   claimed_epsilon=cfg.claimed_epsilon,
                   names={"epsilon": "claimed_epsilon", "delta": "epsilon_delta"})
    learner = DPSGD(learner=TorchMLP(hidden=tuple(cfg.hidden), activation=cfg.activation, device=cfg.device),
                    sampling_rate=q,
                    epochs=cfg.epochs, max_grad_norm=1.0, lr=0.5, target_delta=cfg.epsilon_delta)
    return learner.set_params(noise_multiplier=calibrate_noise_multiplier(learner, n, cfg.claimed_epsilon,
                                                                          cfg.epsilon_delta))


def torch_module_learner(cfg: AuditConfig):
    """The training algorithm of a ``--module`` target: fresh instances of the class, ``cfg.training``'s recipe."""
    from ...learners.torch_module import TorchModuleLearner

    t = cfg.training
    return TorchModuleLearner(module=cfg.module, module_kwargs=dict(cfg.module_kwargs), optimizer=t.optimizer,
                              lr=t.lr, epochs=t.epochs, batch_size=t.batch_size, weight_decay=t.weight_decay,
                              momentum=t.momentum, device=cfg.device)


#: a neighbours estimator's search trees (and their distance metrics): left out of the file's schema and built
#: anew from its records
NEIGHBOUR_TREE_TYPES = ("sklearn.neighbors._kd_tree.KDTree", "sklearn.neighbors._ball_tree.BallTree")
_DIST_METRICS = "sklearn.metrics._dist_metrics."
#: scikit-learn's own optimiser-state classes a fitted MLPClassifier carries (plain attributes: learning
#: rates, moment arrays); skops' default trusted set leaves them out, so no fitted MLP could be audited
_SKLEARN_INTERNALS = ("sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
                      "sklearn.neural_network._stochastic_optimizers.SGDOptimizer")


def _strip_neighbour_trees(schema) -> int:
    """Remove from a skops schema (in place) the search tree (``_tree``: a KD-tree or ball tree) of every
    scikit-learn neighbours estimator, so that its untrusted arrays are never constructed; returns how many. The
    estimator's records (``_fit_X``) stay; :func:`.model_safety.rebuild_neighbour_trees` builds the tree anew."""
    n, stack = 0, [schema]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            state = o.get("content")
            if (str(o.get("__module__", "")).startswith("sklearn.neighbors.") and o.get("__loader__") == "ObjectNode"
                    and isinstance(state, dict) and isinstance(state.get("content"), dict)
                    and "_tree" in state["content"]):
                del state["content"]["_tree"]
                n += 1
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return n


def _skops_load_with_trees(path: Path, trusted: list[str], *, neighbour_trees: bool = False) -> tuple[
        object, list | int]:
    """``skops.io.load`` step by step, also returning every object of the checked types
    (:data:`.model_safety.CHECKED_TYPES`: trees, predictors) the file's nodes constructed. With
    ``neighbour_trees``, the neighbours estimators' search trees are left out of the schema before anything is
    constructed (:func:`_strip_neighbour_trees`) and built anew from their records after.

    Needs skops' loader internals (``read_schema``, ``get_tree``, ``audit_tree``); without them (another skops
    version) the file is loaded with ``skops.io.load`` and those objects are counted in its ``schema.json`` instead
    (the number of distinct records, returned as an int); a file with neighbour trees is then refused."""
    import zipfile

    import skops.io as sio

    from .model_safety import CHECKED_TYPES, rebuild_neighbour_trees

    try:
        from skops.io._audit import Node, audit_tree, get_tree
        from skops.io._utils import read_schema
    except ImportError:
        if neighbour_trees:
            raise UnsafeFileError(f"model file {path} holds a neighbours model's search tree, which this skops "
                                  "version does not let leakaudit leave out; fit it with algorithm='brute'") from None
        return sio.load(path, trusted=trusted), _schema_tree_count(path)
    with zipfile.ZipFile(path, "r") as z:
        schema, load_context = read_schema(z)
        if neighbour_trees:
            _strip_neighbour_trees(schema)
        root = get_tree(schema, load_context, trusted=trusted)
        audit_tree(root, trusted=trusted)
        instance = root.construct()
    found: dict[int, object] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:  # the node tree, iteratively: a file nested deeper than any recursion limit is still walked
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Node):
            obj = getattr(node, "_constructed", None)
            if f"{type(obj).__module__}.{type(obj).__qualname__}" in CHECKED_TYPES:
                found[id(obj)] = obj
            stack.extend((node.children or {}).values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
    if neighbour_trees:
        rebuild_neighbour_trees(instance, f"model file {path}")
    return instance, list(found.values())


def _schema_tree_count(path: Path) -> int:
    """How many distinct records of the checked types (:data:`.model_safety.CHECKED_TYPES`) ``path``'s schema.json
    holds (a record without an id counts alone)."""
    import json
    import zipfile

    from .model_safety import CHECKED_TYPES

    with zipfile.ZipFile(path, "r") as z:
        schema = json.loads(z.read("schema.json"))
    ids, n = set(), 0
    stack = [schema]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            if f"{o.get('__module__')}.{o.get('__class__')}" in CHECKED_TYPES and o.get("__loader__") != "CachedNode":
                if o.get("__id__"):
                    ids.add(o["__id__"])
                else:
                    n += 1
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return n + len(ids)


def load_skops_model(path: Path, *, n_rows: int | None = None, n_features: int | None = None):
    """Load a scikit-learn estimator saved with skops, refusing any untrusted type, any structure scikit-learn's
    compiled code could not walk safely, and any model over the audit's budgets.

    In order, before anything else reads the file's content: the archive's uncompressed size against the memory
    budget (:func:`.model_budget.check_archive`); the types it holds (skops' default trusted set,
    :data:`_SKLEARN_INTERNALS`, the fitted trees and HistGradientBoosting predictors of
    :data:`.model_safety.CHECKED_TYPES`, the scipy.sparse matrices of :data:`.model_safety.SPARSE_TYPES`); after
    loading, before any inference, the fitted attributes, the sparse matrices' index arrays, every tree and
    predictor against the input width its estimator records (:func:`.model_safety.check_model_structure`), with
    ``n_features`` that width against the data's (:func:`.model_safety.check_input_width`), and with ``n_rows``
    the memory and work of predicting and retraining it on that many records
    (:func:`.model_budget.check_model_cost`).

    Raises
    ------
    UnsafeFileError
        For a pickle/joblib file, a skops file holding types outside that set, a malformed tree or model, a model
        that does not take ``n_features`` columns, or one over the memory or work budget; one line naming it.
    """
    import zipfile

    import skops.io as sio

    from .model_budget import check_archive, check_model_cost
    from .model_safety import CHECKED_TYPES, SPARSE_TYPES, check_input_width, check_model_structure

    path = check_model_file(path)
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as f:
            if f.read(64).lstrip()[:1] == b"[":
                raise UnsafeFileError(f"model file {path} is a JSON array, not a model: an XGBoost or CatBoost JSON "
                                      "model is a JSON object; a scikit-learn model is a skops file")
        raise UnsafeFileError(
            f"model file {path} is not a skops file (pickle and joblib files are refused: loading them can run code); "
            "save the estimator with skops.io.dump"
        )
    check_archive(path)
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # a malformed zip or schema
        raise UnsafeFileError(f"model file {path} is not a readable skops file: {clip(str(exc))}") from None
    internals = [t for t in untrusted if t in _SKLEARN_INTERNALS or t in CHECKED_TYPES or t in SPARSE_TYPES]
    # a neighbours model's search tree (and its distance metric) is never loaded: left out, then built anew
    rebuilt = [t for t in untrusted if t in NEIGHBOUR_TREE_TYPES or t.startswith(_DIST_METRICS)]
    untrusted = [t for t in untrusted if t not in internals and t not in rebuilt]
    if untrusted:
        raise UnsafeFileError(
            f"model file {path} holds types leakaudit does not trust: {', '.join(untrusted)}; refusing to load it"
        )
    checked_types = [t for t in internals if t in CHECKED_TYPES]
    try:
        if checked_types or rebuilt:
            est, loaded = _skops_load_with_trees(path, internals, neighbour_trees=bool(rebuilt))
        else:
            est, loaded = sio.load(path, trusted=internals), []
    except Exception as exc:
        detail = clip(str(exc))
        raise UnsafeFileError(f"model file {path} could not be loaded safely: {type(exc).__name__}: {detail}") from None
    where = f"model file {path}"
    checked = check_model_structure(est, where)
    # fail closed: a tree or predictor the walk did not reach (in a container it does not know) was not checked
    if isinstance(loaded, int):
        unreached = max(loaded - len(checked), 0)
    else:
        ids = {id(t) for t in checked}
        unreached = sum(id(t) not in ids for t in loaded)
    if unreached:
        n_loaded = loaded if isinstance(loaded, int) else len(loaded)
        raise UnsafeFileError(
            f"model file {path} holds {n_loaded} scikit-learn tree(s) or predictor(s), {unreached} of them where "
            "leakaudit cannot reach them to check their node arrays; refusing to load it"
        )
    if n_features is not None:
        check_input_width(est, n_features, where)
    if n_rows is not None:
        check_model_cost(est, where, n_rows, n_features)
    return est


def load_torch_model(module_spec: str, weights: Path, module_kwargs: dict | None = None):
    """Instantiate ``pkg.mod:Class(**module_kwargs)`` and load a state_dict with ``weights_only=True`` (no code runs)."""
    torch = require("torch", "a torch model target (--module)")

    from ...learners.torch_module import import_module_class

    cls = import_module_class(module_spec)
    try:
        state = torch.load(check_model_file(weights), weights_only=True, map_location="cpu")
    except Exception as exc:  # UnpicklingError for files carrying code
        detail = clip(str(exc))
        raise UnsafeFileError(f"refusing {weights}: not a plain state_dict loadable with weights_only=True ({detail})") from None
    if not isinstance(state, dict):
        raise UnsafeFileError(f"{weights} does not hold a state_dict (got {type(state).__name__})")
    kwargs = dict(module_kwargs or {})
    try:
        module = cls(**kwargs)
    except TypeError as exc:
        how = f"with module_kwargs={kwargs}" if kwargs else "without arguments (give module_kwargs)"
        raise InvalidParameterError(f"{module_spec} cannot be built {how}: {exc}") from None
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as exc:
        raise InvalidInputError(f"the state_dict in {weights} does not fit {module_spec}: {exc}") from None
    module.eval()
    return module


def _torch_probs(module, X: np.ndarray, n_classes: int, what: str = "the records") -> np.ndarray:
    """The module's class probabilities on ``X`` (its outputs as they are when they are probabilities, else their
    softmax), checked as the audit's every other model output is: a NaN or infinite output is refused naming
    ``what``."""
    import torch

    from ...learners._torch_utils import to_tensor

    with torch.no_grad():
        try:
            out = module(to_tensor(X, torch.float32))
        except RuntimeError as exc:
            raise InvalidInputError(f"the model does not accept the data's {X.shape[1]} input features: {exc}") from None
        out = out.double()
        if out.ndim != 2 or out.shape[1] != n_classes:
            raise InvalidInputError(f"the model outputs shape {tuple(out.shape)}; expected (n, {n_classes}) class scores")
        if torch.all(out >= 0) and torch.allclose(out.sum(1), torch.ones(out.shape[0], dtype=out.dtype), atol=1e-3):
            p = out
        else:  # logits or log-probabilities
            p = torch.softmax(out, dim=1)
    return check_probabilities(p.numpy(), name=f"the model's outputs on {what}")


def _numbers(names: list[str], *, booleans: bool = False) -> np.ndarray | None:
    """``names`` as finite numbers, or None when one is not a number (``"yes"``, ``"True"``, ``"nan"``). With
    ``booleans``, names that are all ``"False"`` or ``"True"`` are 0 and 1: a boolean label column, whose classes
    a scikit-learn model fitted on pandas' ``boolean`` type records as 0.0 and 1.0."""
    if booleans and names and set(names) <= {"False", "True"}:
        return np.array([n == "True" for n in names], dtype=float)
    try:
        v = np.array([float(n) for n in names])
    except ValueError:
        return None
    return v if np.isfinite(v).all() else None


def _class_columns(classes, class_names) -> np.ndarray:
    """The data class (index into ``class_names``) of each of a model's ``classes_``.

    Rule: a model class matches the data class whose name equals ``str(class)`` (the data's class names are the
    label values as strings, so a model fitted on the label column matches whatever its type); when both are
    numbers, by value (a class ``1`` is the label value ``1.0``). When not every model class matches, integer
    classes 0..C-1 are read as leakaudit's label codes (the data's classes in sorted order, what a model fitted on
    the encoded labels predicts), unless the data's class names are themselves whole numbers (``1``, ``1.0``: then
    the reading is ambiguous). Otherwise refuse, naming both class sets. A data class the model
    does not predict is refused too: the members hold every data class (docs/input.md), so a model that never
    saw one was not fitted on these members.
    """
    names = [str(n) for n in class_names]
    keys = [str(c.item() if isinstance(c, np.generic) else c) for c in classes]
    index = {n: i for i, n in enumerate(names)}
    if len(set(keys)) != len(keys):
        raise InvalidInputError(f"the model's classes ({', '.join(keys)}) repeat a class")
    cols = None
    arr = np.asarray(classes)
    kv, nv = _numbers(keys, booleans=True), _numbers(names, booleans=True)
    if all(k in index for k in keys):
        cols = np.array([index[k] for k in keys], dtype=np.int64)
    elif kv is not None and nv is not None and all(int((nv == v).sum()) == 1 for v in kv):
        # numbers written two ways: a model class 1 is the label value 1.0 (ints beside whole floats in a table)
        cols = np.array([int(np.flatnonzero(nv == v)[0]) for v in kv], dtype=np.int64)
    elif np.issubdtype(arr.dtype, np.integer) and arr.dtype != bool \
            and not (nv is not None and np.all(nv == np.round(nv))) and ((arr >= 0) & (arr < len(names))).all():
        # codes 0..C-1, unless the label's values are whole numbers themselves (1, 2 or 1.0, 2.0): then a class 1
        # could be the value 1 or the code of the second class, and the reading is ambiguous
        cols = arr.astype(np.int64)
    if cols is not None:
        absent = [names[i] for i in range(len(names)) if i not in set(cols.tolist())]
        if absent:
            raise InvalidInputError(
                f"the data has class(es) {', '.join(absent)} that the model does not predict (its classes: "
                f"{', '.join(keys)}); it was not fitted on these members: give the model fitted on them")
        return cols
    unknown = [k for k in keys if k not in index]
    raise InvalidInputError(
        f"the model's classes ({', '.join(keys)}) do not match the data's classes ({', '.join(names)}); model classes "
        f"unknown to the data: {', '.join(unknown)}; fit the model on the data's label column"
    )


def _sk_probs(model, X, n_classes: int, what: str, class_names=None) -> np.ndarray:
    """The model's class probabilities with one column per data class.

    With ``class_names`` (the audited model) the columns are matched by name (:func:`_class_columns`); without
    (reference models leakaudit fitted on the label codes) the model's integer classes are the codes."""
    if not hasattr(model, "predict_proba"):
        raise UnsupportedError(f"the model ({type(model).__name__}) has no predict_proba; membership attacks need scores")
    try:
        p = np.asarray(model.predict_proba(X), dtype=float)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        # scikit-learn raises TypeError too, e.g. a OneHotEncoder fitted on text given numbers
        raise InvalidInputError(f"the model rejected the {what} records: {type(exc).__name__}: {clip(str(exc))}") \
            from None
    classes = getattr(model, "classes_", np.arange(p.shape[1]))
    if p.ndim != 2 or p.shape[1] != len(classes):
        raise InvalidInputError(f"the model gives {p.shape} probabilities for its {len(classes)} classes")
    if class_names is not None:
        cols = _class_columns(classes, class_names)
    else:
        cols = []
        for j, c in enumerate(classes):
            ci = int(c) if np.issubdtype(np.asarray(classes).dtype, np.integer) else j
            if ci >= n_classes:
                raise InvalidInputError(f"the model predicts class {c}, unknown to the data's {n_classes} classes")
            cols.append(ci)
    out = np.zeros((p.shape[0], n_classes))
    out[:, cols] = p
    return check_probabilities(out, name=f"model probabilities on {what}")


def _read_predictions(path: Path, n: int, n_classes: int, what: str, class_names=None) -> np.ndarray:
    from ...data import read_table

    df = read_table(path)
    if len(df) == n - 1 and _headerless(path):  # the first line is a record, not a header (docs/input.md)
        df = read_table(path, header=None)
        df.columns = [f"p{j}" for j in range(df.shape[1])]  # no header: the classes in sorted order
    num = df.select_dtypes(include="number")
    if num.shape[1] != df.shape[1]:
        bad = [c for c in df.columns if c not in num.columns]
        raise InvalidInputError(f"{what} file {path} has non-numeric columns: {', '.join(map(str, bad))}")
    if len(df) != n:
        raise InvalidInputError(f"{what} file {path} has {len(df)} rows; the data has {n} records")
    if df.shape[1] != n_classes:
        raise InvalidInputError(f"{what} file {path} has {df.shape[1]} columns; expected one per class ({n_classes})")
    # checked in the file's own column order: messages count its rows and columns from 1 (docs/input.md)
    p = check_probabilities(df.to_numpy(float), name=f"{what} ({path})", counted_from=1)
    if class_names is not None:
        p = p[:, _prediction_columns([str(c).strip() for c in df.columns], [str(c) for c in class_names], path, what)]
    return p


def _headerless(path: Path) -> bool:
    """Whether the first line of a predictions file is a row of probabilities rather than a header: every cell a
    number written with a decimal point or an exponent (``0.25``, ``1e-3``). Bare integers (``0,1``) are read as
    a header of class codes: a file whose first line is ``0,1`` and that lacks a row is refused by its row count."""
    from ...data import read_table

    first = read_table(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    cells = [str(c).strip() for c in first.iloc[0].tolist()] if len(first) else []
    return bool(cells) and all(re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)", c) for c in cells)


_GENERIC_HEADER = re.compile(r"^(?:unnamed: ?\d+|(?:p|prob|proba|probability|class|col|column)?[_ ]?(\d+))$", re.I)


def _prediction_columns(headers: list[str], names: list[str], path, what: str) -> list[int]:
    """The column of a predictions file holding each data class's probability, read from the header.

    Headers that are the data's class names (all of them, each once) are matched by name, in any order.
    Generic headers (``p0, p1, ...``, ``prob_0``, ``class_0``, ``0, 1, ...``, or none: pandas' ``Unnamed: k``)
    name no class: a numbered set 0..C-1 is read as the class codes (the data's classes in sorted order, as in
    ``results.json``'s class_names), anything else generic keeps the columns' order. Other headers are refused.
    """
    if len(set(headers)) == len(headers) and set(headers) == set(names):
        return [headers.index(n) for n in names]
    m = [_GENERIC_HEADER.match(h) for h in headers]
    bare = [float(h) for h in headers if re.fullmatch(r"\d+", h)]
    nv = _numbers(names)
    hv = _numbers(headers)
    if nv is not None and hv is not None and len(set(hv.tolist())) == len(hv) and set(hv.tolist()) == set(nv.tolist()):
        return [hv.tolist().index(v) for v in nv.tolist()]  # the class values written another way: 0 for 0.0
    if all(m) and bare and nv is not None and np.all(nv == np.round(nv)) and set(bare) & set(nv.tolist()):
        # headers 0, 1 beside integer classes 1, 2: is column "1" class 1 (its name) or class 2 (code 1)?
        raise InvalidInputError(
            f"{what} file {path} has columns {headers}: the class names are integers ({', '.join(names)}), so "
            f"these headers could be class names or class codes; head the columns with exactly the class names "
            f"(any order) or p0..p{len(names) - 1} (the classes in sorted order)")
    if all(m):
        nums = [int(x.group(1)) if x.group(1) is not None else None for x in m]
        if None not in nums and sorted(nums) == list(range(len(names))):
            return [nums.index(k) for k in range(len(names))]
        return list(range(len(names)))
    raise InvalidInputError(
        f"{what} file {path} has columns {headers}, which are not the data's classes {names}; head the columns "
        f"with the class names (any order) or p0..p{len(names) - 1} (the classes in that order)"
    )


def _sklearn_learner(est) -> tuple[object, str]:
    """The learner that retrains a scikit-learn estimator, and a note for the target's description: leakaudit's own
    learner of the same algorithm where there is one (``LogisticRegression.from_sklearn``, solved by Newton's method
    with its batched leave-one-out; ``RandomForest``, the same trees for the same seed; compiled gradient boosting;
    ``TorchMLP.from_sklearn`` for an Adam ``MLPClassifier``), unless the estimator uses a setting it does not
    implement (the note then says which); everything else ``SklearnLearner`` (a clone)."""
    from sklearn.base import clone
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    from sklearn.neural_network import MLPClassifier

    from ...learners import LogisticRegression, RandomForest, TorchMLP
    from ...learners.sklearn import SklearnLearner

    try:
        if isinstance(est, SkLogisticRegression):
            lr = LogisticRegression.from_sklearn(est)
            return lr, (f"; reference and leave-one-out models retrained by leakaudit's LogisticRegression (the "
                        f"same objective, C = {lr.C:g} in its convention, solved by Newton's method to relative "
                        f"gradient {lr.tol:g}; the given model was solved by {est.solver} to tol {est.tol:g}), "
                        "leave-one-out by its batched Newton method, exact to that tolerance")
        if isinstance(est, RandomForestClassifier):
            return (RandomForest.from_sklearn(est),
                    "; reference and leave-one-out forests retrained by leakaudit's RandomForest (same algorithm)")
        if isinstance(est, GradientBoostingClassifier):
            from ...learners.gradient_boosting import GradientBoosting

            return (GradientBoosting.from_sklearn(est),
                    "; reference and leave-one-out models retrained by leakaudit's compiled gradient boosting (the "
                    "same algorithm)")
        if isinstance(est, MLPClassifier):
            mlp = TorchMLP.from_sklearn(est)
            return mlp, (f"; reference and leave-one-out nets retrained by leakaudit's TorchMLP with the "
                         f"MLPClassifier's recipe ({mlp.epochs} epochs = the target's n_iter_, no early stopping, "
                         "its L2 as weight decay on every parameter)")
    except UnsupportedError as e:
        return SklearnLearner(clone(est)), f"; retrained by scikit-learn ({e})"
    return SklearnLearner(clone(est)), ""


def _frame_learner(est, frame: pd.DataFrame) -> tuple[Learner, str]:
    """The learner that retrains a scikit-learn estimator on the table's own rows, and a note for the target's
    description: a Pipeline of tree-neutral preprocessing and a ``GradientBoostingClassifier`` by leakaudit's
    compiled boosting (:class:`~leakaudit.learners.gradient_boosting.FrameGradientBoosting`), everything else by
    scikit-learn itself (a clone a model)."""
    from sklearn.base import clone

    from ...learners.gradient_boosting import FrameGradientBoosting

    why = FrameGradientBoosting.supported(est)
    if why is None:
        pre = "; its preprocessing fitted once on every record, which changes no tree" if hasattr(est, "steps") else ""
        return (FrameGradientBoosting(estimator=clone(est), frame=frame),
                "; reference and leave-one-out models retrained by leakaudit's compiled gradient boosting (the same "
                f"algorithm{pre})")
    return FrameEstimatorLearner(estimator=clone(est), frame=frame), ""


def _numeric_columns(frame: pd.DataFrame, what: str) -> np.ndarray:
    """The table's feature columns as a float matrix, in their order (``model_input = "columns"``)."""
    text = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c].dtype)
            or pd.api.types.is_bool_dtype(frame[c].dtype)]
    if text:
        raise InvalidInputError(
            f"model_input 'columns' feeds the table's columns as numbers, but {what} have non-numeric column(s) "
            f"{', '.join(text)}; fit the model on a DataFrame (e.g. a Pipeline that encodes them) or use model_input "
            "'encoded'")
    return frame.to_numpy(dtype=float)


def _columns_inputs(data: AuditData, names: list[str] | None = None, population: str = "the populations"):
    """The records as the table's feature columns (``names``: those, in that order; None: all) as numbers
    (:func:`_numeric_columns`): members, non-members and population, the function that reads changed records
    so, and no one-hot groups."""
    def pick(df):
        return df if names is None else df[names]

    tables = ((data.frame_mem, "the members"), (data.frame_non, "the non-members"), (data.frame_pop, population))
    arrays = [_numeric_columns(pick(f), w) for f, w in tables]
    return arrays, lambda df: _numeric_columns(pick(df), "the changed records"), None


def _encoded_inputs(data: AuditData, names: list[str]):
    """The records as the encoded columns ``names`` (in that order; empty: every column): members, non-members and
    population, the function that encodes changed records so, and the encoding's one-hot groups where the columns
    are all of it in its order (else None)."""
    if not names:
        return [data.X_mem, data.X_non, data.X_pop], data.encoder.transform, data.encoder.onehot_groups
    enc = [str(c) for c in data.encoder.feature_names_out]
    idx = [enc.index(c) for c in names]
    return ([X[:, idx] for X in (data.X_mem, data.X_non, data.X_pop)],
            lambda df: data.encoder.transform(df)[:, idx],
            data.encoder.onehot_groups if idx == list(range(len(enc))) else None)


def _feature_contract(model_input: str, data: AuditData, est, where: str) -> tuple[str, list[str]]:
    """What a scikit-learn model takes (docs/input.md, "The model's input"): ``("columns", names)`` for the
    table's own columns by name, ``("encoded", names)`` for columns of leakaudit's encoding by name,
    ``("bare-columns", [])`` or ``("bare-encoded", [])`` for a model fitted on a bare array whose input the
    user stated with ``model_input``. A bare-array model without that statement is refused: nothing in it says
    which columns it takes or how they were encoded."""
    raw = [str(c) for c in data.frame_mem.columns]
    enc = [str(c) for c in data.encoder.feature_names_out]
    names = getattr(est, "feature_names_in_", None)
    n_in = getattr(est, "n_features_in_", None)
    if names is not None:
        names = [str(c) for c in names]
        in_raw, in_enc = set(names) <= set(raw), set(names) <= set(enc)
        if model_input == "columns" or (model_input == "auto" and in_raw):
            kind, pool, what = "columns", raw, "the table's feature columns"
        elif model_input == "encoded" or (model_input == "auto" and in_enc):
            kind, pool, what = "encoded", enc, "leakaudit's encoded columns (docs/input.md)"
        elif len(set(names) & set(enc)) > len(set(names) & set(raw)):
            kind, pool, what = "encoded", enc, "leakaudit's encoded columns (docs/input.md)"
        else:
            kind, pool, what = "columns", raw, "the table's feature columns"
        known = set(pool)  # built once: a wide table's check stays linear in its columns
        missing = [c for c in names if c not in known]
        if missing:
            shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
            raise InvalidInputError(f"{where} was fitted on columns that are not among {what}: {shown}")
        return kind, names
    if model_input == "auto":
        raise InvalidInputError(
            f"{where} was fitted on a bare array (it records no feature names), so leakaudit cannot tell "
            "which columns it takes or how they were encoded; fit it on a pandas DataFrame (e.g. a Pipeline whose "
            "ColumnTransformer encodes the table's columns) and save it with skops.io.dump, or state its input: "
            f"`model_input = columns` (the table's {len(raw)} feature columns as they are, in the members file's "
            f"order) or `model_input = encoded` (leakaudit's encoding, {len(enc)} columns; see docs/input.md)")
    width = len(raw) if model_input == "columns" else len(enc)
    if n_in is not None and n_in != width:
        how = ("the table has" if model_input == "columns" else "leakaudit's encoding of the table has")
        raise InvalidInputError(f"{where} takes {n_in} input features; {how} {width} "
                                f"(model_input {model_input!r})")
    return f"bare-{model_input}", []


def sklearn_target(data: AuditData, est, *, model_input: str = "auto", path: Path | None = None) -> Target:
    """The audited scikit-learn model (fitted; an estimator or a Pipeline) fed exactly what it was fitted on
    (:func:`_feature_contract`); ``path``: the skops file it came from (None: given in memory)."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    C, names = data.n_classes, data.class_names
    source = f"{path} (skops)" if path is not None else "memory"
    where = f"the model in {path}" if path is not None else "the given model"
    try:
        check_is_fitted(est)
    except NotFittedError:
        raise InvalidInputError(f"{where} ({type(est).__name__}) is not fitted: fit it on the members first, "
                                "then audit it") from None
    except TypeError as exc:  # not an estimator scikit-learn knows
        raise InvalidInputError(f"{where} ({type(est).__name__}) is not a scikit-learn estimator: {clip(str(exc))}") \
            from None
    kind, cols = _feature_contract(model_input, data, est, where)
    groups = [(data.frame_mem, "member"), (data.frame_non, "non-member"), (data.frame_pop, "population")]
    if kind == "columns":  # the table's own columns: retrained on those rows by scikit-learn itself
        pm, pn, pp = (_sk_probs(est, f[cols], C, w, names) if len(f) else None for f, w in groups)
        allf = pd.concat([f[cols] for f, _ in groups], ignore_index=True)
        n1, n2 = len(data.frame_mem), len(data.frame_mem) + len(data.frame_non)
        ids = np.arange(len(allf), dtype=float).reshape(-1, 1)
        decode, switch = _decoder(data, pd.concat([f for f, _ in groups], ignore_index=True))
        learner, desc = _frame_learner(est, allf)
        return Target("sklearn", f"{type(est).__name__} from {source}, on the table's own columns{desc}",
                      pm, pn, pp, learner, est,
                      X_mem=ids[:n1], X_non=ids[n1:n2], X_pop=ids[n2:],
                      predict_frame=lambda df: _sk_probs(est, df[cols], C, "changed records", names),
                      predict_inputs=lambda X: _sk_probs(est, decode(X)[cols], C, "queried records", names),
                      input_onehot=switch, query_X=(data.X_mem, data.X_non, data.X_pop))
    if kind == "bare-columns":
        arrays, encode, onehot = _columns_inputs(data)
        how = "on the table's feature columns as they are (model_input 'columns')"
    else:
        arrays, encode, onehot = _encoded_inputs(data, cols)
        how = "on leakaudit's encoding" + (" (its columns by name)" if cols else " (model_input 'encoded')")
    # a model fitted on a DataFrame of encoded columns is queried with those names (scikit-learn warns otherwise)
    query = (lambda X: pd.DataFrame(X, columns=cols)) if cols else (lambda X: X)  # noqa: E731
    pm, pn, pp = (_sk_probs(est, query(X), C, w, names) if len(X) else None
                  for X, (_, w) in zip(arrays, groups))
    learner, desc = _sklearn_learner(est)
    return Target("sklearn", f"{type(est).__name__} from {source}, {how}{desc}", pm, pn, pp, learner, est,
                  X_mem=arrays[0], X_non=arrays[1], X_pop=arrays[2],
                  predict_frame=lambda df: _sk_probs(est, query(encode(df)), C, "changed records", names),
                  predict_inputs=lambda X: _sk_probs(est, query(X), C, "queried records", names),
                  input_onehot=onehot)


def boosted_target(data: AuditData, b, *, model_input: str = "auto"):
    """The audited XGBoost, LightGBM or CatBoost model (a checked :class:`.boosted.Boosted`) as a :class:`Target`: fed
    what it was trained on (its feature names when they are the table's numeric columns or leakaudit's encoded
    columns, else what ``model_input`` states), its outputs mapped to the data's classes, retrained by the learner of
    its recipe."""
    from .boosted import check_retraining_work, generic_names, xgb_leaf_records

    C, class_names = data.n_classes, data.class_names
    lib = {"xgboost": "XGBoost", "lightgbm": "LightGBM", "catboost": "CatBoost"}[b.library]
    where = f"the {lib} model from {b.source}"
    raw = [str(c) for c in data.frame_mem.columns]
    enc = [str(c) for c in data.encoder.feature_names_out]
    names = [str(n) for n in b.feature_names]
    # names that are the table's own columns are read as those (a table of numeric columns has the same names in
    # leakaudit's encoding, z-scored: say model_input "encoded" for a model trained on that)
    if not generic_names(names) and model_input != "encoded" and set(names) <= set(raw):
        arrays, encode, onehot = _columns_inputs(data, names)
        how = "on the table's columns by name"
    elif not generic_names(names) and model_input != "columns" and set(names) <= set(enc):
        arrays, encode, onehot = _encoded_inputs(data, names)
        how = "on leakaudit's encoding (its columns by name)"
    elif not generic_names(names):
        missing = [c for c in names if c not in (enc if model_input == "encoded" else raw + enc)]
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise InvalidInputError(f"{where} was trained on features that are neither the table's columns nor leakaudit's "
                                f"encoded columns: {shown}")
    elif model_input == "auto":
        raise InvalidInputError(
            f"{where} was trained on a bare array (it records no feature names), so leakaudit cannot tell which "
            "columns it takes or how they were encoded; state its input: `--model-input encoded` (leakaudit's "
            f"encoding, {len(enc)} columns; docs/input.md) or `--model-input columns` (the table's {len(raw)} feature "
            "columns as they are, which must be numeric), or train it on a DataFrame of those columns")
    elif model_input == "columns":
        arrays, encode, onehot = _columns_inputs(data)
        how = "on the table's feature columns as they are (model_input 'columns')"
    else:
        arrays, encode, onehot = _encoded_inputs(data, [])
        how = "on leakaudit's encoding (model_input 'encoded')"
    width = arrays[0].shape[1]
    if width != b.num_feature:
        raise InvalidInputError(f"{where} takes {b.num_feature} input features; it is given {width} ({how})")
    check_retraining_work(b, len(arrays[0]) + len(arrays[1]), where)
    n_out = b.model.n_classes_
    if n_out != C:
        raise InvalidInputError(f"{where} predicts {n_out} classes; the data's label has {C} "
                                f"({', '.join(map(str, class_names))})")
    cols = (np.arange(C) if b.classes is None else _class_columns(np.asarray(b.classes), class_names))

    def probs(X, what: str) -> np.ndarray:
        p = b.model.predict_proba(np.asarray(X, dtype=np.float64))
        out = np.zeros((p.shape[0], C))
        out[:, cols] = p
        return check_probabilities(out, name=f"the {lib} model's probabilities on {what}")

    pm, pn = probs(arrays[0], "the members"), probs(arrays[1], "the non-members")
    pp = probs(arrays[2], "the population") if len(arrays[2]) else None
    if b.library == "xgboost" and "leaves" in b.info:
        b.model.leaf_records_ = xgb_leaf_records(b.model, arrays[0], b.info["leaves"])
    desc = (f"{lib} model from {b.source}, {how}; reference and leave-one-out models retrained by leakaudit's {lib} "
            f"learner with the model's recipe: {b.recipe}")
    return Target(b.library, desc, pm, pn, pp, b.learner, b.model, X_mem=arrays[0], X_non=arrays[1], X_pop=arrays[2],
                  predict_frame=lambda df: probs(encode(df), "changed records"),
                  predict_inputs=lambda X: probs(X, "queried records"), input_onehot=onehot)


def _decoder(data: AuditData, frame: pd.DataFrame):
    """For a model on the table's own columns, queried with rows of leakaudit's encoding (a label-only attack's
    perturbed copies): the function decoding such rows to the table's columns, and the one-hot groups a copy may
    switch within. Only categories that some audited record holds (``frame``: members, non-members, population,
    every column the encoding has; the model has answered them) are decoded, so a copy never asks the model about
    a category it may refuse."""
    enc = data.encoder
    seen = np.zeros(enc.n_features_out_, bool)
    for f in enc.categorical_features_:
        start, column = enc.groups[f.name].start, frame[f.name]
        held = set(column.dropna().astype(str))
        seen[start:start + len(f.categories)] = [str(c) in held for c in f.categories]
        if f.missing:  # the group's last column
            seen[start + len(f.categories)] = bool(column.isna().any())
    onehot = np.zeros(enc.n_features_out_, bool)
    for sl in enc.onehot_groups:
        onehot[sl] = True
    groups = [np.flatnonzero(seen[sl]) + sl.start for sl in enc.onehot_groups]

    def decode(X):
        X = np.array(X, dtype=np.float64)
        X[:, onehot & ~seen] = -np.inf  # a category no audited record holds is never the decoded one
        return enc.inverse_transform(X)

    return decode, [g for g in groups if g.size >= 2]


def on_device(learner, device: str):
    """``learner`` set to train on ``device`` (a torch learner), or as it is for ``"cpu"`` / ``"auto"`` when it
    trains on the CPU only; a GPU asked of a CPU-only learner is refused naming it."""
    if learner is None or device == "cpu":
        return learner
    if "device" in learner.get_params(deep=False):
        return learner.set_params(device=device)
    if device != "auto":
        raise InvalidParameterError(f"device {device}: the audited model is retrained by {type(learner).__name__}, "
                                    "which trains on the CPU only (a GPU serves the torch learners)")
    return learner


def _check_refittable_classes(cfg: AuditConfig, data: AuditData, learner) -> None:
    """Refuse, before any model is trained, records on which the audit's scikit-learn retraining would fail.

    scikit-learn classifiers refuse to fit records of one class, and the audit refits the model on complementary
    random halves of the audited records (``n_reference`` of them) and, for PDTP, on the members less one record.
    Refused here (so by ``--check-inputs`` too), naming the label column, the files and the class: a half drawn as
    the audit draws it that holds one class, or a class with one member when PDTP measures every member.
    leakaudit's own learners (told the number of classes) fit any subset and are not checked.
    """
    if capabilities(learner).fits_one_class:
        return
    if data.sources is not None:  # tables handed over in memory (leakaudit.audit)
        files, member_file = "the members and nonmembers tables", "the members table"
    else:
        files = f"{cfg.data}" if cfg.data is not None else f"{cfg.train} and {cfg.test}"
        member_file = cfg.train or cfg.data
    name = (type(learner.estimator).__name__ if getattr(learner, "estimator", None) is not None
            else "the model")
    counts_mem = np.bincount(data.y_mem, minlength=data.n_classes)
    present = np.flatnonzero(counts_mem)
    st = cfg.settings
    n_mem = len(data.y_mem)
    every_member = ((st.pdtp_records is None or n_mem <= st.pdtp_records)
                    and (st.pdtp_exact_max is None or n_mem <= st.pdtp_exact_max))
    if every_member and len(present) == 2 and counts_mem[present].min() == 1:
        c = int(present[np.argmin(counts_mem[present])])
        row = int(np.asarray(data.record_ids_mem)[np.flatnonzero(data.y_mem == c)[0]]) + 1
        raise InvalidInputError(
            f"label column {data.label!r}: class {data.class_names[c]!r} occurs once among the members (row {row} of "
            f"{member_file}); the audit refits {name} (scikit-learn) on the members less each record, "
            "and without that one the members hold a single class, which scikit-learn cannot fit: give at least 2 "
            "members of every class")
    # the reference models' training sets, drawn as the membership stage draws them
    from ...membership import paired_half_masks
    from ..._random import slot_seeds
    from ..config import SEED_SLOTS

    y = np.r_[data.y_mem, data.y_non]
    masks = paired_half_masks(len(y), cfg.settings.n_reference, slot_seeds(cfg.seed, SEED_SLOTS)["reference"])
    single = [m for m in masks if len(np.unique(y[m])) < 2]
    if single:
        counts = np.bincount(y, minlength=data.n_classes)
        scarce = int(np.argsort(counts)[-2])
        raise InvalidInputError(
            f"label column {data.label!r}: class {data.class_names[scarce]!r} occurs in {int(counts[scarce])} of the "
            f"{len(y)} audited records ({files}); the audit refits {name} (scikit-learn) on "
            f"{len(masks)} random halves of them (profile {cfg.profile}, seed {cfg.seed}), and {len(single)} of "
            f"those halves {'holds' if len(single) == 1 else 'hold'} a single class, which scikit-learn cannot fit: "
            "give more records of that class")


def torch_target(data: AuditData, module, learner, *, model_input: str = "encoded", description: str,
                 where: str = "the module") -> Target:
    """A torch module as the audited model: queried on leakaudit's encoding of the records (``model_input``
    "encoded": a tensor carries no column names, docs/input.md) or on the table's numeric columns as they are
    ("columns"); ``learner`` (a :class:`~leakaudit.learners.Learner`, e.g.
    :class:`~leakaudit.learners.TorchModuleLearner`) retrains its recipe, None for no retraining."""
    C = data.n_classes
    if model_input == "columns":
        (X_m, X_n, X_p), encode, onehot = _columns_inputs(data, population="the population")
    else:
        (X_m, X_n, X_p), encode, onehot = _encoded_inputs(data, [])
    pm, pn = (_torch_probs(module, X, C, f"the {w} ({where})") for X, w in ((X_m, "members"), (X_n, "non-members")))
    pp = _torch_probs(module, X_p, C, f"the population ({where})") if len(X_p) else None
    return Target("torch", description, pm, pn, pp, learner, module, X_mem=X_m, X_non=X_n, X_pop=X_p,
                  predict_frame=lambda df: _torch_probs(module, encode(df), C),
                  predict_inputs=lambda X: _torch_probs(module, X, C), input_onehot=onehot)


def model_file_target(data: AuditData, path: Path, *, model_input: str = "auto") -> Target:
    """The audited model of a model file: an XGBoost, LightGBM or CatBoost file (:func:`.boosted.load_boosted_file`)
    or a skops file, loaded within the budgets for every record (:func:`load_skops_model`)."""
    from .boosted import is_boosted_file, load_boosted_file

    if Path(path).is_file() and is_boosted_file(Path(path)):
        return boosted_target(data, load_boosted_file(path), model_input=model_input)
    n_rows = len(data.frame_mem) + len(data.frame_non) + len(data.frame_pop)
    return sklearn_target(data, load_skops_model(path, n_rows=n_rows), model_input=model_input, path=path)


def prepare_target(cfg: AuditConfig, data: AuditData, *, random_state: int) -> Target:
    """Train (demo) or load the audited model, and compute its outputs on every record."""
    C = data.n_classes
    if cfg.predictions_train is not None:
        pm = _read_predictions(cfg.predictions_train, len(data.y_mem), C, "predictions_train", data.class_names)
        pn = _read_predictions(cfg.predictions_test, len(data.y_non), C, "predictions_test", data.class_names)
        return Target("predictions", "predictions only (no model): attacks that need retraining are skipped",
                      pm, pn, None, None)
    if cfg.model is not None and cfg.module is None:
        target = model_file_target(data, cfg.model, model_input=cfg.model_input)
        if target.kind == "sklearn":
            _check_refittable_classes(cfg, data, target.learner)
        return target
    if cfg.model is not None:
        module = load_torch_model(cfg.module, cfg.model, cfg.module_kwargs)
        t = cfg.training
        desc = (f"{cfg.module} with weights from {cfg.model}; retrained for reference and leave-one-out models as "
                f"fresh instances with {t.optimizer} lr {t.lr:g}, {t.epochs} epochs, batch {t.batch_size}, "
                f"weight decay {t.weight_decay:g}" + (f", momentum {t.momentum:g}" if t.optimizer == "sgd" else "")
                + " (the recipe is an assumption: the audited weights do not carry it); input: "
                + ("the table's feature columns as they are" if cfg.model_input == "columns" else "leakaudit's encoding"))
        return torch_target(data, module, torch_module_learner(cfg), model_input=cfg.model_input, description=desc,
                            where=f"{cfg.model} with {cfg.module}")
    learner = demo_learner(cfg) if cfg.claimed_epsilon is None else dp_demo_learner(cfg, len(data.y_mem))
    model = learner.fit(data.X_mem, data.y_mem, random_state=random_state, n_classes=C)
    pm, pn = model.predict_proba(data.X_mem), model.predict_proba(data.X_non)
    pp = model.predict_proba(data.X_pop) if len(data.X_pop) else None
    desc = (f"MLP, {'-'.join(map(str, cfg.hidden))} {cfg.activation} hidden units, per-example SGD lr 0.01, "
            f"{cfg.epochs} epochs (Long et al. §4.2), trained on the {len(data.y_mem)} members")
    if cfg.claimed_epsilon is not None:
        desc = (f"MLP, {'-'.join(map(str, cfg.hidden))} {cfg.activation} hidden units, trained on the "
                f"{len(data.y_mem)} members by DP-SGD (Poisson rate {learner.sampling_rate:.4g}, {cfg.epochs} epochs, "
                f"clip {learner.max_grad_norm:g}, noise multiplier {learner.noise_multiplier:.4g}, lr {learner.lr:g}): "
                f"epsilon {model.epsilon_:.3g} at delta {cfg.epsilon_delta:g} ({learner.accounting()})")
    return Target("demo", desc, pm, pn, pp, learner, model,
                  predict_frame=lambda df: model.predict_proba(data.encoder.transform(df)),
                  predict_inputs=model.predict_proba, input_onehot=data.encoder.onehot_groups)

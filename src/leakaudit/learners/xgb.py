"""XGBoost as a leakaudit learner: gradient-boosted trees trained by ``xgboost.train`` (the ``xgboost`` extra).

:class:`XGBoostLearner` trains what an XGBoost classifier's recipe trains: its objective, its number of boosting
rounds and its booster parameters (learning rate, depth, regularisation, sampling), with each model's seed in
XGBoost's ``seed``. :func:`xgboost_recipe` reads that recipe from a trained model's configuration (the parameters XGBoost itself
records, ``Booster.save_config()``, which a model file carries in its ``training_config`` attribute), so
that the audit's reference and leave-one-out models retrain the audited model's learner.

Labels are the class indices ``0..n_classes-1``; a binary objective (``binary:logistic``, ``binary:logitraw``)
trains two classes, a multi-class one (``multi:softprob``, ``multi:softmax``) ``n_classes``; every model reports
probabilities for all ``n_classes`` classes (the margins through the sigmoid or the softmax where the objective
outputs margins or labels).

Examples
--------
>>> import numpy as np
>>> X = np.random.default_rng(0).normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
>>> model = XGBoostLearner(n_rounds=5, params={"max_depth": 2}).fit(X, y, random_state=0)  # doctest: +SKIP
>>> model.predict_proba(X[:2]).shape  # doctest: +SKIP
(2, 2)
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np

from .._extras import require
from ..exceptions import InvalidInputError, UnsupportedError
from ._base import BoostedLearner, BoostedModel, Capabilities, TreeShape
from ._recipe import INTERACTIONS, MONOTONE, Choice, Int, Real, check_recipe, recipe_error
from ._torch_utils import softmax

__all__ = ["XGBoostLearner", "XGBoostModel", "XGB_OBJECTIVES", "xgboost_recipe"]

#: classification objectives leakaudit trains and reads: the binary ones output one margin, the others one per class
XGB_OBJECTIVES = ("binary:logistic", "binary:logitraw", "multi:softprob", "multi:softmax")
#: booster parameters the recipe carries from a trained model, with the types and ranges XGBoost documents (XGBoost's
#: own names; the rest are its defaults)
_R, _FRACTION = Real(float32=True), Real(0, 1, open_lo=True, float32=True)  # XGBoost keeps 32-bit floats
RECIPE = {"eta": _R, "max_depth": Int(0, 10_000), "max_leaves": Int(), "min_child_weight": _R, "gamma": _R,
          "max_delta_step": _R, "subsample": _FRACTION, "sampling_method": Choice("uniform"),
          "colsample_bytree": _FRACTION, "colsample_bylevel": _FRACTION, "colsample_bynode": _FRACTION, "lambda": _R,
          "alpha": _R, "tree_method": Choice("auto", "hist", "approx", "exact"),
          "grow_policy": Choice("depthwise", "lossguide"), "max_bin": Int(2, 65_535), "scale_pos_weight": _R,
          "num_parallel_tree": Int(1, 100_000), "monotone_constraints": MONOTONE,
          "interaction_constraints": INTERACTIONS, "booster": Choice("gbtree"), "max_cat_to_onehot": Int(1)}
#: the sections of XGBoost's configuration the recipe is read from
_SECTIONS = (("gradient_booster", "tree_train_param"), ("gradient_booster", "gbtree_train_param"),
             ("gradient_booster", "gbtree_model_param"), ("objective", "reg_loss_param"))
#: the parameters that draw random numbers: a recipe without them (at 1) trains the same model for any seed
_SAMPLING = ("subsample", "colsample_bytree", "colsample_bylevel", "colsample_bynode")


def _xgb(feature: str = "an XGBoost model"):
    return require("xgboost", feature)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


class XGBoostModel(BoostedModel):
    """One trained XGBoost booster (:class:`~._base.BoostedModel`; ``rounds_`` None: every round, else an
    early-stopped model's best iteration + 1).

    Attributes
    ----------
    objective_ : str
    leaf_records_ : list of ndarray or None
        Training records per leaf of each tree where known (the audit counts the members routed to each leaf:
        XGBoost's model keeps each node's hessian sum, not a count of records); None otherwise.
    """

    def __init__(self, booster, n_classes: int, objective: str, n_features: int, rounds: int | None = None):
        super().__init__(booster, n_classes, n_features, rounds)
        self.objective_ = objective
        self.leaf_records_ = None

    def _proba(self, X: np.ndarray) -> np.ndarray:
        """The objective's own output where it is a probability (``binary:logistic``, ``multi:softprob``), else the
        margins through the sigmoid or the softmax."""
        kw = {} if self.rounds_ is None else {"iteration_range": (0, int(self.rounds_))}
        # a model fitted on named columns checks them
        d = _xgb().DMatrix(X, nthread=1, feature_names=self.booster_.feature_names)
        binary = self.objective_.startswith("binary:")
        if self.objective_ in ("binary:logistic", "multi:softprob"):
            out = np.asarray(self.booster_.predict(d, **kw), dtype=np.float64)
        else:
            out = np.asarray(self.booster_.predict(d, output_margin=True, **kw), dtype=np.float64)
            out = _sigmoid(out) if binary else softmax(out.reshape(X.shape[0], -1))
        if binary:
            p1 = out.reshape(-1)
            return np.column_stack([1.0 - p1, p1])
        return out.reshape(X.shape[0], -1)

    def trees(self) -> list[dict]:
        """Each tree of the model as XGBoost's JSON holds it (``left_children``, ``split_indices``, ...)."""
        raw = json.loads(bytes(self.booster_.save_raw("json")))
        trees = raw["learner"]["gradient_booster"]["model"]["trees"]
        if self.rounds_ is not None:
            indptr = raw["learner"]["gradient_booster"]["model"].get("iteration_indptr")
            if indptr:
                trees = trees[: int(indptr[min(self.rounds_, len(indptr) - 1)])]
        return trees

    def tree_leaf_records(self) -> list[np.ndarray] | None:
        """Training records per leaf of each tree (see ``leaf_records_``), or None where not counted."""
        return self.leaf_records_

    def tree_parameters(self) -> int:
        """Two per split (feature, threshold), one value per leaf."""
        total = 0
        for t in self.trees():
            leaf = np.asarray(t["left_children"]) == -1
            total += int(2 * (~leaf).sum() + leaf.sum())
        return total

    def __repr__(self) -> str:
        return f"XGBoostModel({self.objective_}, {self.n_classes_} classes)"


class XGBoostLearner(BoostedLearner):
    """Gradient-boosted trees trained by XGBoost (``xgboost.train``): the ``xgboost`` extra.

    Parameters
    ----------
    objective : {"binary:logistic", "binary:logitraw", "multi:softprob", "multi:softmax"} or None, default=None
        None: ``binary:logistic`` for two classes, ``multi:softprob`` for more.
    n_rounds : int >= 1, default=100
        Boosting rounds (trees per class).
    params : dict, optional
        Other booster parameters, by XGBoost's names (``eta``, ``max_depth``, ``lambda``, ``alpha``, ``subsample``,
        ...); XGBoost's defaults for the rest. ``seed``, ``nthread``, ``num_class`` and ``objective`` are set by the
        learner.
    n_jobs : int >= 1, default=1
        XGBoost threads per model.

    Notes
    -----
    Model k is trained with XGBoost's ``seed`` = its seed. Without row or column sampling (``subsample`` and the
    ``colsample_*`` at 1) XGBoost trains the same trees for every seed (``capabilities.stochastic`` is False).
    """

    library = "XGBoost"
    objectives = XGB_OBJECTIVES

    @property
    def capabilities(self) -> Capabilities:
        p = self.params or {}
        sampled = any(float(p.get(k, 1.0)) < 1.0 for k in _SAMPLING)
        return Capabilities(stochastic=sampled, fits_one_class=True,
                            implements="XGBoost's gradient boosting (xgboost.train), with the audited model's recipe")

    def tree_shape(self, n_rows: int, n_classes: int) -> TreeShape:
        p = self.params or {}
        depth, cap = int(p.get("max_depth", 6)), int(p.get("max_leaves", 0))
        levels = depth if depth > 0 else math.ceil(math.log2(max(min(cap or n_rows, n_rows), 2)))
        leaves = min(2**min(levels, 62), cap or n_rows, n_rows)
        per_round = int(p.get("num_parallel_tree", 1)) * (1 if n_classes <= 2 else n_classes)
        return TreeShape(int(self.n_rounds) * per_round, levels, leaves, int(p.get("max_bin", 256)))

    def _train_params(self, seed: int | None, n_classes: int) -> dict:
        # constraints as the text XGBoost parses ("(1, 0, -1)", "[[0, 1], [2]]"): its Python side reads lists as names
        params = {k: str(v) if isinstance(v, (list, tuple)) else v for k, v in (self.params or {}).items()
                  if k not in ("seed", "random_state", "nthread", "n_jobs", "num_class", "objective", "device")}
        objective = self.objective or ("binary:logistic" if n_classes <= 2 else "multi:softprob")
        params.update(objective=objective, nthread=int(self.n_jobs), verbosity=0, device="cpu")
        if seed is not None:
            params["seed"] = int(seed)
        if not objective.startswith("binary:"):
            params["num_class"] = int(n_classes)
        elif n_classes > 2:
            raise InvalidInputError(f"the XGBoost objective {objective} trains two classes; the labels have "
                                    f"{n_classes}")
        return params

    def _library_error(self) -> type[Exception]:
        return _xgb().core.XGBoostError

    def _train(self, X: np.ndarray, y: np.ndarray, params: dict, n_classes: int) -> XGBoostModel:
        xgb = _xgb("the XGBoost learner")
        d = xgb.DMatrix(X, label=y.astype(np.float64), nthread=int(self.n_jobs))
        # xgboost.train's own loop without its callback machinery (an empty evaluation per round): the same Booster,
        # the same updates in the same order, then reset() to free the training caches as train does
        booster = xgb.Booster(params, [d])
        for i in range(int(self.n_rounds)):
            booster.update(d, iteration=i)
        booster.reset()
        return XGBoostModel(booster, n_classes, params["objective"], X.shape[1])


@functools.cache
def _known() -> frozenset[str]:
    """The names the installed XGBoost writes in the configuration sections the recipe is read from (those of a
    two-round model trained here)."""
    xgb = _xgb()
    d = xgb.DMatrix(np.arange(4.0).reshape(4, 1), label=[0, 1, 0, 1])
    config = json.loads(xgb.train({"objective": "binary:logistic", "verbosity": 0}, d, 2).save_config())
    return frozenset(k for section in _sections(config) for k in section)


def _sections(config: dict) -> list[dict]:
    learner = config.get("learner", {})
    return [learner.get(a, {}).get(b, {}) for a, b in _SECTIONS]


def xgboost_recipe(config: dict, *, rounds: int, n_features: int, where: str = "the XGBoost model") -> dict:
    """``{"objective", "n_rounds", "params", "seed"}`` from an XGBoost training configuration (the JSON of
    ``Booster.save_config()``), each parameter checked (:func:`._recipe.check_recipe`, and the combinations XGBoost
    refuses); parameters at XGBoost's defaults are carried too (they are what it trained with)."""
    learner = config.get("learner", {})
    gb = learner.get("gradient_booster", {})
    objective = learner.get("learner_train_param", {}).get("objective") or learner.get("objective", {}).get("name")
    booster_name = learner.get("learner_train_param", {}).get("booster", gb.get("name", "gbtree"))
    if booster_name != "gbtree":
        raise UnsupportedError(f"{where}: an XGBoost booster other than gbtree; leakaudit audits tree boosters")
    params: dict = {}
    for section in _sections(config):
        if not isinstance(section, dict):
            raise recipe_error(where, "section", "is not an object")
        params.update(check_recipe(section, RECIPE, where=where, n_features=n_features, known=_known()))
    if params.get("tree_method") == "auto":
        params.pop("tree_method")
    if params.get("tree_method") == "exact" and params.get("max_depth", 6) == 0:
        raise recipe_error(where, "max_depth", "is 0 (no limit) with tree_method exact, which XGBoost refuses")
    seed = learner.get("generic_param", {}).get("seed")
    try:
        seed = None if seed is None else int(seed)
    except (TypeError, ValueError):
        raise recipe_error(where, "seed", "is not an integer") from None
    return {"objective": objective, "n_rounds": int(rounds), "params": params, "seed": seed}

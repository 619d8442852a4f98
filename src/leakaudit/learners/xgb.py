"""XGBoost as a leakaudit learner: gradient-boosted trees trained by ``xgboost.train`` (the ``xgboost`` extra).

:class:`XGBoostLearner` trains what an XGBoost classifier's recipe trains: its objective, its number of boosting
rounds and its booster parameters (learning rate, depth, regularisation, sampling), with each model's seed in
XGBoost's ``seed``. :meth:`XGBoostLearner.from_booster` reads that recipe from a trained model (an
``XGBClassifier`` or a native ``Booster``: the parameters XGBoost itself records, ``Booster.save_config()``), so
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

import json
from typing import Any

import numpy as np

from .._extras import require
from .._random import RandomStateLike
from .._validation import check_matrix
from ..exceptions import InvalidInputError, TrainingFailedError, UnsupportedError
from ._base import BoostedLearner, Capabilities

__all__ = ["XGBoostLearner", "XGBoostModel", "XGB_OBJECTIVES", "xgboost_recipe"]

#: classification objectives leakaudit trains and reads: the binary ones output one margin, the others one per class
XGB_OBJECTIVES = ("binary:logistic", "binary:logitraw", "multi:softprob", "multi:softmax")
#: booster parameters the recipe carries from a trained model (XGBoost's own names; the rest are its defaults)
RECIPE_KEYS = ("eta", "max_depth", "max_leaves", "min_child_weight", "gamma", "max_delta_step", "subsample",
               "sampling_method", "colsample_bytree", "colsample_bylevel", "colsample_bynode", "lambda", "alpha",
               "tree_method", "grow_policy", "max_bin", "scale_pos_weight", "num_parallel_tree",
               "monotone_constraints", "interaction_constraints", "booster", "max_cat_to_onehot")
#: the parameters that draw random numbers: a recipe without them (at 1) trains the same model for any seed
_SAMPLING = ("subsample", "colsample_bytree", "colsample_bylevel", "colsample_bynode")


def _xgb(feature: str = "an XGBoost model"):
    return require("xgboost", feature)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def booster_proba(booster, X: np.ndarray, objective: str, n_classes: int, rounds: int | None = None) -> np.ndarray:
    """Class probabilities of an XGBoost ``Booster`` on ``X``, shape (n, n_classes), in float64: the objective's own
    output where it is a probability (``binary:logistic``, ``multi:softprob``), else the margins through the sigmoid
    or the softmax; ``rounds``: the boosting rounds to use (None: all)."""
    xgb = _xgb()
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return np.zeros((0, n_classes))
    kw = {} if rounds is None else {"iteration_range": (0, int(rounds))}
    d = xgb.DMatrix(X, nthread=1, feature_names=booster.feature_names)  # a model fitted on named columns checks them
    binary = objective.startswith("binary:")
    if objective in ("binary:logistic", "multi:softprob"):
        out = np.asarray(booster.predict(d, **kw), dtype=np.float64)
    else:
        out = np.asarray(booster.predict(d, output_margin=True, **kw), dtype=np.float64)
        out = _sigmoid(out) if binary else _softmax(out.reshape(X.shape[0], -1))
    if binary:
        p1 = out.reshape(-1)
        return np.column_stack([1.0 - p1, p1])
    return out.reshape(X.shape[0], -1)


class XGBoostModel:
    """One trained XGBoost booster with class probabilities over ``n_classes`` classes.

    Attributes
    ----------
    booster_ : xgboost.Booster
    n_classes_ : int
    objective_ : str
    n_features_in_ : int
    rounds_ : int or None
        Boosting rounds used for prediction (None: every round; an early-stopped model's best iteration + 1).
    leaf_records_ : list of ndarray or None
        Training records per leaf of each tree where known (the audit counts the members routed to each leaf:
        XGBoost's model keeps each node's hessian sum, not a count of records); None otherwise.
    """

    def __init__(self, booster, n_classes: int, objective: str, n_features: int, rounds: int | None = None):
        self.booster_ = booster
        self.n_classes_ = int(n_classes)
        self.objective_ = objective
        self.n_features_in_ = int(n_features)
        self.rounds_ = rounds
        self.leaf_records_ = None

    def predict_proba(self, X: Any) -> np.ndarray:
        X = check_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features but the model was trained on {self.n_features_in_}")
        return booster_proba(self.booster_, X, self.objective_, self.n_classes_, self.rounds_)

    def predict(self, X: Any) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)

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

    def _train_params(self, seed: int | None, n_classes: int) -> dict:
        params = {k: v for k, v in (self.params or {}).items()
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

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike,
             n_classes: int | None) -> XGBoostModel:
        xgb = _xgb("the XGBoost learner")
        n_classes, params = self._training(y, random_state, n_classes)
        d = xgb.DMatrix(np.asarray(X, dtype=np.float64), label=np.asarray(y, dtype=np.float64),
                        nthread=int(self.n_jobs))
        try:
            # xgboost.train's own loop without its callback machinery (an empty evaluation per round): the same
            # Booster, the same updates in the same order, then reset() to free the training caches as train does
            booster = xgb.Booster(params, [d])
            for i in range(int(self.n_rounds)):
                booster.update(d, iteration=i)
            booster.reset()
        except xgb.core.XGBoostError as exc:
            raise TrainingFailedError(f"XGBoost failed to train: {str(exc).splitlines()[0][:300]}") from None
        return XGBoostModel(booster, n_classes, params["objective"], X.shape[1])

    # -- the recipe of a trained model ------------------------------------------------------------------------------
    @classmethod
    def from_booster(cls, booster, *, rounds: int | None = None, n_jobs: int = 1) -> XGBoostLearner:
        """The learner that retrains ``booster``'s recipe, read from XGBoost's record of its training parameters
        (``Booster.save_config()``: objective, learning rate, depth, regularisation, sampling, seed); ``rounds``:
        its boosting rounds (default: those it holds)."""
        recipe = xgboost_recipe(json.loads(booster.save_config()),
                                rounds=rounds if rounds is not None else booster.num_boosted_rounds())
        return cls(objective=recipe["objective"], n_rounds=recipe["n_rounds"], params=recipe["params"], n_jobs=n_jobs)


def xgboost_recipe(config: dict, *, rounds: int) -> dict:
    """``{"objective", "n_rounds", "params", "seed"}`` from an XGBoost training configuration (the JSON of
    ``Booster.save_config()``); parameters at XGBoost's defaults are carried too (they are what it trained with)."""
    learner = config.get("learner", {})
    gb = learner.get("gradient_booster", {})
    objective = learner.get("learner_train_param", {}).get("objective") or learner.get("objective", {}).get("name")
    booster_name = learner.get("learner_train_param", {}).get("booster", gb.get("name", "gbtree"))
    if booster_name != "gbtree":
        raise UnsupportedError(f"XGBoost booster {booster_name!r}: leakaudit audits tree boosters (gbtree)")
    params: dict = {}
    for section in (gb.get("tree_train_param", {}), gb.get("gbtree_train_param", {}),
                    gb.get("gbtree_model_param", {}), learner.get("objective", {}).get("reg_loss_param", {})):
        for k, v in section.items():
            if k in RECIPE_KEYS and v not in ("", None):
                params[k] = v
    if params.get("tree_method") == "auto":
        params.pop("tree_method")
    generic = learner.get("generic_param", {})
    seed = generic.get("seed")
    return {"objective": objective, "n_rounds": int(rounds), "params": params,
            "seed": None if seed is None else int(seed)}

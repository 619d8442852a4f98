"""CatBoost as a leakaudit learner: oblivious gradient-boosted trees trained by ``catboost`` (the ``catboost`` extra).

:class:`CatBoostLearner` trains what a CatBoost classifier's recipe trains: its loss function (``Logloss`` or
``MultiClass``), its iterations and its parameters (learning rate, depth, ``l2_leaf_reg``, random strength,
bootstrap), with each model's seed in CatBoost's ``random_seed``. :func:`catboost_recipe` reads that recipe from the
parameters CatBoost records in every trained model (``get_all_params()``: in memory, and in its JSON and cbm
files), so that reference and leave-one-out models retrain the audited model's learner.

CatBoost trains one model per call (no batched path: ``fit_many`` fits model by model). It refuses a training set
holding one class (``capabilities.fits_one_class`` is False); a subset missing some of several classes trains,
and every model reports probabilities for all ``n_classes`` classes (``class_names`` fixed to ``0..n_classes-1``).

Examples
--------
>>> import numpy as np
>>> X = np.random.default_rng(0).normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
>>> CatBoostLearner(n_rounds=5).fit(X, y, random_state=0).predict_proba(X[:2]).shape  # doctest: +SKIP
(2, 2)
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any

import numpy as np

from .._extras import require
from .._random import RandomStateLike
from .._validation import check_matrix
from ..exceptions import InvalidInputError, TrainingFailedError, UnsupportedError
from ._base import BoostedLearner, Capabilities

__all__ = ["CatBoostLearner", "CatBoostModel", "CATBOOST_OBJECTIVES", "catboost_recipe", "catboost_json"]

#: classification losses leakaudit trains and reads
CATBOOST_OBJECTIVES = ("Logloss", "MultiClass")
#: numeric training parameters the recipe carries from a trained model (CatBoost's names; the rest its defaults)
RECIPE_NUMBERS = ("learning_rate", "depth", "l2_leaf_reg", "random_strength", "subsample", "bagging_temperature",
                  "rsm", "border_count", "leaf_estimation_iterations", "min_data_in_leaf", "model_size_reg",
                  "bayesian_matrix_reg", "model_shrink_rate", "penalties_coefficient")
#: parameters that are one of a few words, with the words leakaudit retrains with (CPU training of symmetric trees)
RECIPE_CHOICES = {
    "bootstrap_type": ("Bayesian", "Bernoulli", "MVS", "No"),
    "feature_border_type": ("Median", "Uniform", "UniformAndQuantiles", "MaxLogSum", "MinEntropy", "GreedyLogSum"),
    "nan_mode": ("Min", "Max", "Forbidden"),
    "leaf_estimation_method": ("Newton", "Gradient", "Exact"),
    "leaf_estimation_backtracking": ("No", "AnyImprovement", "Armijo"),
    "boosting_type": ("Plain", "Ordered"),
    "score_function": ("Cosine", "L2", "NewtonCosine", "NewtonL2"),
    "sampling_frequency": ("PerTree", "PerTreeLevel"),
    "random_score_type": ("NormalWithModelSizeDecrease", "Gumbel"),
    "model_shrink_mode": ("Constant", "Decreasing"),
    "auto_class_weights": ("None", "Balanced", "SqrtBalanced"),
    "grow_policy": ("SymmetricTree",),
}
RECIPE_FLAGS = ("boost_from_average", "posterior_sampling")
#: set by the learner, never carried: the seed, threads, classes, loss, rounds, logging and files
_SET_HERE = ("random_seed", "random_state", "thread_count", "n_jobs", "class_names", "classes_count", "loss_function",
             "objective", "iterations", "n_estimators", "num_boost_round", "verbose", "logging_level",
             "allow_writing_files", "task_type", "train_dir", "silent", "verbose_eval")


def _cb(feature: str = "a CatBoost model"):
    return require("catboost", feature)


def catboost_json(model) -> dict:
    """A trained CatBoost model as CatBoost's JSON (``save_model(format="json")``), parsed: its trees
    (``oblivious_trees``: splits, ``leaf_values``, ``leaf_weights``), features and recorded parameters."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.save_model(path, format="json")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    finally:
        os.unlink(path)


class CatBoostModel:
    """One trained CatBoost model with class probabilities over ``n_classes`` classes.

    Attributes
    ----------
    booster_ : catboost.CatBoost
    n_classes_ : int
    n_features_in_ : int
    """

    def __init__(self, booster, n_classes: int, n_features: int):
        self.booster_ = booster
        self.n_classes_ = int(n_classes)
        self.n_features_in_ = int(n_features)
        self._json = None

    def predict_proba(self, X: Any) -> np.ndarray:
        X = check_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features but the model was trained on {self.n_features_in_}")
        if X.shape[0] == 0:
            return np.zeros((0, self.n_classes_))
        p = np.asarray(self.booster_.predict(X, prediction_type="Probability", thread_count=1), dtype=np.float64)
        return p.reshape(X.shape[0], -1)

    def predict(self, X: Any) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)

    def trees(self) -> list[dict]:
        """Each oblivious tree as CatBoost's JSON holds it (``splits``, ``leaf_values``, ``leaf_weights``)."""
        if self._json is None:
            self._json = catboost_json(self.booster_)
        return self._json.get("oblivious_trees", [])

    def tree_leaf_records(self) -> list[np.ndarray]:
        """Training records per non-empty leaf of each tree: CatBoost's ``leaf_weights`` (the records of the whole
        training set each leaf holds, with unit weights; an oblivious tree of depth d has 2^d leaves, some empty)."""
        out = []
        for t in self.trees():
            w = np.rint(np.asarray(t.get("leaf_weights", []), dtype=np.float64)).astype(np.int64)
            out.append(w[w > 0])
        return out

    def tree_parameters(self) -> int:
        """Two per split (feature, border), one value per leaf and class output."""
        return int(sum(2 * len(t["splits"]) + len(t["leaf_values"]) for t in self.trees()))

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_json"] = None
        return state

    def __repr__(self) -> str:
        return f"CatBoostModel({self.n_classes_} classes)"


class CatBoostLearner(BoostedLearner):
    """Oblivious gradient-boosted trees trained by CatBoost (``catboost.CatBoost.fit``): the ``catboost`` extra.

    Parameters
    ----------
    objective : {"Logloss", "MultiClass"} or None, default=None
        CatBoost's ``loss_function``; None: ``Logloss`` for two classes, ``MultiClass`` for more.
    n_rounds : int >= 1, default=100
        Boosting iterations (trees).
    params : dict, optional
        Other training parameters, by CatBoost's names (``learning_rate``, ``depth``, ``l2_leaf_reg``,
        ``random_strength``, ``bootstrap_type``, ``subsample``, ...); CatBoost's defaults for the rest. ``random_seed``,
        ``thread_count``, ``class_names``, ``loss_function`` and ``iterations`` are set by the learner.
    n_jobs : int >= 1, default=1
        CatBoost threads per model.

    Notes
    -----
    Model k is trained with CatBoost's ``random_seed`` = its seed. CatBoost draws random numbers unless the bootstrap
    is off (``bootstrap_type`` "No") and ``random_strength`` is 0 (``capabilities.stochastic`` False then). There is
    no batched path: CatBoost trains one model per call.
    """

    library = "CatBoost"
    objectives = CATBOOST_OBJECTIVES

    @property
    def capabilities(self) -> Capabilities:
        p = self.params or {}
        sampled = (str(p.get("bootstrap_type", "MVS")) != "No" or float(p.get("random_strength", 1.0)) != 0.0
                   or float(p.get("rsm", 1.0)) < 1.0 or str(p.get("boosting_type", "Plain")) == "Ordered")
        return Capabilities(stochastic=sampled, fits_one_class=False,
                            implements="CatBoost's gradient boosting (catboost.CatBoost.fit), with the audited model's "
                                       "recipe")

    def _train_params(self, seed: int | None, n_classes: int) -> dict:
        params = {k: v for k, v in (self.params or {}).items() if k not in _SET_HERE}
        objective = self.objective or ("Logloss" if n_classes <= 2 else "MultiClass")
        if objective == "Logloss" and n_classes > 2:
            raise InvalidInputError(f"the CatBoost loss Logloss trains two classes; the labels have {n_classes}")
        params.update(loss_function=objective, iterations=int(self.n_rounds), thread_count=int(self.n_jobs),
                      logging_level="Silent", allow_writing_files=False, task_type="CPU",
                      class_names=list(range(int(n_classes))))
        if seed is not None:
            params["random_seed"] = int(seed)
        return params

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike,
             n_classes: int | None) -> CatBoostModel:
        cb = _cb("the CatBoost learner")
        n_classes, params = self._training(y, random_state, n_classes)
        if np.unique(y).size < 2:
            raise InvalidInputError("CatBoost trains on at least two classes; the training records hold one")
        try:
            booster = cb.CatBoost(params).fit(cb.Pool(np.asarray(X, dtype=np.float64), label=np.asarray(y)))
        except cb.CatBoostError as exc:
            raise TrainingFailedError(f"CatBoost failed to train: {str(exc).splitlines()[0][:300]}") from None
        return CatBoostModel(booster, n_classes, X.shape[1])

    # -- the recipe of a trained model ------------------------------------------------------------------------------
    @classmethod
    def from_model(cls, model, *, n_jobs: int = 1) -> CatBoostLearner:
        """The learner that retrains a trained CatBoost model's recipe (:func:`catboost_recipe` of its
        ``get_all_params()``), with its number of trees as the rounds."""
        recipe = catboost_recipe(model.get_all_params(), rounds=int(model.tree_count_))
        return cls(objective=recipe["objective"], n_rounds=recipe["n_rounds"], params=recipe["params"], n_jobs=n_jobs)


def catboost_recipe(params: dict, *, rounds: int, where: str = "the CatBoost model") -> dict:
    """``{"objective", "n_rounds", "params", "seed"}`` from the parameters CatBoost records for a trained model
    (``get_all_params()``). A model file's parameters are untrusted: numbers must be finite, words among those
    leakaudit retrains with (:data:`RECIPE_CHOICES`), else UnsupportedError naming the parameter."""
    if not isinstance(params, dict):
        raise UnsupportedError(f"{where}: its parameters are not a mapping")
    objective = params.get("loss_function")
    if objective not in CATBOOST_OBJECTIVES:
        raise UnsupportedError(f"{where}: CatBoost loss function {str(objective)[:40]!r}; leakaudit audits classifiers "
                               f"trained with {', '.join(CATBOOST_OBJECTIVES)}")
    out: dict = {}  # task_type is not carried: a GPU-trained model is retrained by CatBoost's CPU implementation
    for k in RECIPE_NUMBERS:
        if k in params and params[k] is not None:
            v = params[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UnsupportedError(f"{where}: its parameter {k} is {str(v)[:30]!r}, not a finite number")
            out[k] = int(v) if k in ("depth", "border_count", "leaf_estimation_iterations", "min_data_in_leaf") else v
    for k, choices in RECIPE_CHOICES.items():
        if k in params and params[k] is not None:
            if params[k] not in choices:
                raise UnsupportedError(f"{where}: its parameter {k} is {str(params[k])[:30]!r}; leakaudit retrains "
                                       f"with {', '.join(choices)}")
            out[k] = params[k]
    for k in RECIPE_FLAGS:
        if k in params:
            if not isinstance(params[k], bool):
                raise UnsupportedError(f"{where}: its parameter {k} is {str(params[k])[:30]!r}, not true or false")
            out[k] = params[k]
    if out.get("bootstrap_type") != "Bayesian":
        out.pop("bagging_temperature", None)
    if out.get("bootstrap_type") in ("Bayesian", "No"):
        out.pop("subsample", None)
    if "class_weights" in params and params["class_weights"]:
        w = params["class_weights"]
        if (not isinstance(w, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                               and math.isfinite(x) and x >= 0 for x in w)):
            raise UnsupportedError(f"{where}: its class_weights are not non-negative numbers")
        out["class_weights"] = list(w)
    seed = params.get("random_seed")
    seed = int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None
    return {"objective": objective, "n_rounds": int(rounds), "params": out, "seed": seed}

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

import numpy as np

from .._extras import require
from ..exceptions import InvalidInputError, UnsafeFileError, UnsupportedError
from ._base import BoostedLearner, BoostedModel, Capabilities, TreeShape
from ._recipe import FLAG, Choice, Int, Real, check_recipe, recipe_error

__all__ = ["CatBoostLearner", "CatBoostModel", "CATBOOST_OBJECTIVES", "catboost_recipe", "catboost_json"]

#: classification losses leakaudit trains and reads
CATBOOST_OBJECTIVES = ("Logloss", "MultiClass")
#: training parameters the recipe carries from a trained model, with the types and ranges CatBoost documents
#: (CatBoost's names; the rest its defaults); the words are those leakaudit retrains with (CPU training of symmetric
#: trees)
# CatBoost keeps 32-bit floats, and reads a float of 2^53 or more written as an integer as no number
_R, _FRACTION = Real(hi=2**53, float32=True), Real(0, 1, open_lo=True, float32=True)
RECIPE = {
    # a learning rate below 1e-6 CatBoost writes as 0 and refuses
    "learning_rate": Real(1e-6, 2**53, float32=True), "depth": Int(1, 16), "l2_leaf_reg": _R, "random_strength": _R,
    "subsample": _FRACTION, "bagging_temperature": _R, "rsm": _FRACTION, "border_count": Int(1, 65_535),
    "leaf_estimation_iterations": Int(1, 100), "min_data_in_leaf": Int(1), "model_size_reg": _R,
    "bayesian_matrix_reg": _R, "model_shrink_rate": Real(0, 1, float32=True), "penalties_coefficient": _R,
    "bootstrap_type": Choice("Bayesian", "Bernoulli", "MVS", "No"),
    "feature_border_type": Choice("Median", "Uniform", "UniformAndQuantiles", "MaxLogSum", "MinEntropy",
                                  "GreedyLogSum"),
    "nan_mode": Choice("Min", "Max", "Forbidden"),
    "leaf_estimation_method": Choice("Newton", "Gradient", "Exact"),
    "leaf_estimation_backtracking": Choice("No", "AnyImprovement", "Armijo"),
    "boosting_type": Choice("Plain", "Ordered"),
    "score_function": Choice("Cosine", "L2", "NewtonCosine", "NewtonL2"),
    "sampling_frequency": Choice("PerTree", "PerTreeLevel"),
    "random_score_type": Choice("NormalWithModelSizeDecrease", "Gumbel"),
    "model_shrink_mode": Choice("Constant", "Decreasing"),
    "auto_class_weights": Choice("None", "Balanced", "SqrtBalanced"),
    "grow_policy": Choice("SymmetricTree"),
    "boost_from_average": FLAG, "posterior_sampling": FLAG,
}
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


class CatBoostModel(BoostedModel):
    """One trained CatBoost model (:class:`~._base.BoostedModel`; every tree is used)."""

    def __init__(self, booster, n_classes: int, n_features: int):
        super().__init__(booster, n_classes, n_features)
        self._json = None

    def _proba(self, X: np.ndarray) -> np.ndarray:
        p = np.asarray(self.booster_.predict(X, prediction_type="Probability", thread_count=1), dtype=np.float64)
        return p.reshape(X.shape[0], -1)

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

    def tree_shape(self, n_rows: int, n_classes: int) -> TreeShape:
        p = self.params or {}
        depth = int(p.get("depth", 6))
        return TreeShape(int(self.n_rounds), depth, 2**depth, int(p.get("border_count", 254)),
                         int(p.get("leaf_estimation_iterations", 10)) * (1 if n_classes <= 2 else n_classes))

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

    def _library_error(self) -> type[Exception]:
        return _cb().CatBoostError

    def _train(self, X: np.ndarray, y: np.ndarray, params: dict, n_classes: int) -> CatBoostModel:
        cb = _cb("the CatBoost learner")
        if np.unique(y).size < 2:
            raise InvalidInputError("CatBoost trains on at least two classes; the training records hold one")
        return CatBoostModel(cb.CatBoost(params).fit(cb.Pool(X, label=y)), n_classes, X.shape[1])


def catboost_recipe(params: dict, *, rounds: int, n_features: int, where: str = "the CatBoost model") -> dict:
    """``{"objective", "n_rounds", "params", "seed"}`` from the parameters CatBoost records for a trained model
    (``get_all_params()``), each parameter checked (:func:`._recipe.check_recipe`)."""
    if not isinstance(params, dict):
        raise UnsafeFileError(f"{where}: its parameters are not a mapping; refusing to retrain it")
    objective = params.get("loss_function")
    if objective not in CATBOOST_OBJECTIVES:
        raise UnsupportedError(f"{where}: a CatBoost loss function other than {', '.join(CATBOOST_OBJECTIVES)}; "
                               "leakaudit audits those classifiers")
    out = check_recipe(params, RECIPE, where=where, n_features=n_features)
    shrink = out.get("model_shrink_rate", 0) * (out.get("learning_rate", 0.03)
                                                 if out.get("model_shrink_mode", "Constant") == "Constant" else 1)
    if shrink >= 1:  # CatBoost's own bound on the shrinkage a round applies
        raise recipe_error(where, "model_shrink_rate", "shrinks a round by 1 or more (times learning_rate in the "
                                                       "Constant mode), which CatBoost refuses")
    if out.get("bootstrap_type") != "Bayesian":
        out.pop("bagging_temperature", None)
    if out.get("bootstrap_type") in ("Bayesian", "No"):
        out.pop("subsample", None)
    w = params.get("class_weights")
    if w:
        if (not isinstance(w, list) or len(w) > 100_000
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
                           for x in w)):
            raise recipe_error(where, "class_weights", "is not a list of non-negative numbers")
        out["class_weights"] = list(w)
    seed = params.get("random_seed")
    seed = int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None
    return {"objective": objective, "n_rounds": int(rounds), "params": out, "seed": seed}

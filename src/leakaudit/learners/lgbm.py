"""LightGBM as a leakaudit learner: gradient-boosted trees trained by ``lightgbm.train`` (the ``lightgbm`` extra).

:class:`LightGBMLearner` trains what a LightGBM classifier's recipe trains: its objective (``binary`` or
``multiclass``), its number of boosting rounds and its parameters (learning rate, leaves, depth, leaf minimum,
regularisation, bagging), with each model's seed in LightGBM's ``seed``. :func:`lightgbm_recipe` reads that
recipe from the ``parameters:`` section LightGBM writes into every text model (``Booster.model_to_string()``,
``save_model``), so that reference and leave-one-out models retrain the audited model's learner.

Examples
--------
>>> import numpy as np
>>> X = np.random.default_rng(0).normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
>>> LightGBMLearner(n_rounds=5).fit(X, y, random_state=0).predict_proba(X[:2]).shape  # doctest: +SKIP
(2, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._extras import require
from .._random import RandomStateLike
from .._validation import check_matrix
from ..exceptions import InvalidInputError, TrainingFailedError, UnsupportedError
from ._base import BoostedLearner, Capabilities

__all__ = ["LightGBMLearner", "LightGBMModel", "LGBM_OBJECTIVES", "lightgbm_recipe"]

#: classification objectives leakaudit trains and reads (LightGBM's aliases are resolved in the model file)
LGBM_OBJECTIVES = ("binary", "multiclass")
#: training parameters the recipe carries from a model file's ``parameters:`` section (the rest: LightGBM's defaults)
RECIPE_KEYS = ("boosting", "data_sample_strategy", "learning_rate", "num_leaves", "max_depth", "min_data_in_leaf",
               "min_sum_hessian_in_leaf", "bagging_fraction", "pos_bagging_fraction", "neg_bagging_fraction",
               "bagging_freq", "feature_fraction", "feature_fraction_bynode", "extra_trees", "lambda_l1", "lambda_l2",
               "min_gain_to_split", "max_delta_step", "path_smooth", "max_bin", "min_data_in_bin", "is_unbalance",
               "scale_pos_weight", "sigmoid", "boost_from_average", "use_missing", "zero_as_missing", "top_rate",
               "other_rate", "drop_rate", "max_drop", "skip_drop", "xgboost_dart_mode", "uniform_drop",
               "monotone_constraints", "monotone_constraints_method", "monotone_penalty", "interaction_constraints",
               "bin_construct_sample_cnt", "feature_pre_filter", "enable_bundle")
_BOOSTINGS = ("gbdt", "rf", "dart")


def _lgb(feature: str = "a LightGBM model"):
    return require("lightgbm", feature)


def booster_proba(booster, X: np.ndarray, n_classes: int, rounds: int | None = None) -> np.ndarray:
    """Class probabilities of a LightGBM ``Booster`` (objective ``binary`` or ``multiclass``) on ``X``, shape (n,
    n_classes), float64; ``rounds``: the boosting rounds to use (None: the model's best iteration, or all)."""
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return np.zeros((0, n_classes))
    p = np.asarray(booster.predict(X, num_iteration=rounds, num_threads=1), dtype=np.float64)
    if p.ndim == 1:
        return np.column_stack([1.0 - p, p])
    return p


class LightGBMModel:
    """One trained LightGBM booster with class probabilities over ``n_classes`` classes.

    Attributes
    ----------
    booster_ : lightgbm.Booster
    n_classes_ : int
    n_features_in_ : int
    rounds_ : int or None
        Boosting rounds used for prediction (None: LightGBM's choice, the best iteration where it has one).
    """

    def __init__(self, booster, n_classes: int, n_features: int, rounds: int | None = None):
        self.booster_ = booster
        self.n_classes_ = int(n_classes)
        self.n_features_in_ = int(n_features)
        self.rounds_ = rounds

    def predict_proba(self, X: Any) -> np.ndarray:
        X = check_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features but the model was trained on {self.n_features_in_}")
        return booster_proba(self.booster_, X, self.n_classes_, self.rounds_)

    def predict(self, X: Any) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)

    def _trees(self) -> list[dict]:
        info = self.booster_.dump_model(num_iteration=self.rounds_)["tree_info"]
        return info

    def tree_leaf_records(self) -> list[np.ndarray]:
        """Training records per leaf of each tree, as LightGBM counted them (``leaf_count``: the rows of the bagged
        sample when the model was trained with bagging)."""
        out = []
        for t in self._trees():
            counts, stack = [], [t["tree_structure"]]
            while stack:
                node = stack.pop()
                if "leaf_index" in node or "split_index" not in node:
                    counts.append(int(node.get("leaf_count", 0)))
                else:
                    stack.extend((node["left_child"], node["right_child"]))
            out.append(np.asarray(counts, dtype=np.int64))
        return out

    def tree_parameters(self) -> int:
        """Two per split (feature, threshold), one value per leaf."""
        return int(sum(2 * (t["num_leaves"] - 1) + t["num_leaves"] for t in self._trees()))

    def __repr__(self) -> str:
        return f"LightGBMModel({self.n_classes_} classes)"


class LightGBMLearner(BoostedLearner):
    """Gradient-boosted trees trained by LightGBM (``lightgbm.train``): the ``lightgbm`` extra.

    Parameters
    ----------
    objective : {"binary", "multiclass"} or None, default=None
        None: ``binary`` for two classes, ``multiclass`` for more.
    n_rounds : int >= 1, default=100
        Boosting rounds (trees per class).
    params : dict, optional
        Other training parameters, by LightGBM's names (``learning_rate``, ``num_leaves``, ``min_data_in_leaf``,
        ``lambda_l2``, ``bagging_fraction``, ...); LightGBM's defaults for the rest. ``seed`` (and the seeds LightGBM
        derives from it), ``num_threads``, ``num_class`` and ``objective`` are set by the learner.
    n_jobs : int >= 1, default=1
        LightGBM threads per model.

    Notes
    -----
    Model k is trained with LightGBM's ``seed`` = its seed and ``deterministic``. Without bagging, feature sampling,
    extra trees, GOSS or dart, LightGBM trains the same trees for every seed (``capabilities.stochastic`` False).
    """

    library = "LightGBM"
    objectives = LGBM_OBJECTIVES

    @property
    def capabilities(self) -> Capabilities:
        p = self.params or {}
        sampled = ((float(p.get("bagging_fraction", 1)) < 1 and int(float(p.get("bagging_freq", 0))) > 0)
                   or float(p.get("feature_fraction", 1)) < 1 or float(p.get("feature_fraction_bynode", 1)) < 1
                   or str(p.get("extra_trees", "0")).lower() in ("1", "true")
                   or p.get("data_sample_strategy") == "goss" or p.get("boosting", "gbdt") != "gbdt")
        return Capabilities(stochastic=sampled, fits_one_class=True,
                            implements="LightGBM's gradient boosting (lightgbm.train), with the audited model's recipe")

    def _train_params(self, seed: int | None, n_classes: int) -> dict:
        params = {k: v for k, v in (self.params or {}).items()
                  if k not in ("seed", "random_state", "num_threads", "n_jobs", "num_class", "objective", "verbosity",
                               "bagging_seed", "feature_fraction_seed", "extra_seed", "drop_seed", "data_random_seed",
                               "objective_seed", "device_type")}
        objective = self.objective or ("binary" if n_classes <= 2 else "multiclass")
        params.update(objective=objective, num_threads=int(self.n_jobs), verbosity=-1, deterministic=True,
                      device_type="cpu")
        if seed is not None:
            params["seed"] = int(seed)
        if objective == "multiclass":
            params["num_class"] = int(n_classes)
        elif n_classes > 2:
            raise InvalidInputError(f"the LightGBM objective binary trains two classes; the labels have {n_classes}")
        return params

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: RandomStateLike,
             n_classes: int | None) -> LightGBMModel:
        lgb = _lgb("the LightGBM learner")
        n_classes, params = self._training(y, random_state, n_classes)
        data = lgb.Dataset(np.asarray(X, dtype=np.float64), label=np.asarray(y, dtype=np.float64),
                           params={"verbosity": -1}, free_raw_data=True)
        try:
            # keep_training_booster: the trained booster as it is, not rebuilt from its own text (lgb.train's default
            # round trip writes and parses every tree: a quarter of a deep model's fit, the same trees after it)
            booster = lgb.train(params, data, num_boost_round=int(self.n_rounds), keep_training_booster=True)
        except lgb.basic.LightGBMError as exc:
            raise TrainingFailedError(f"LightGBM failed to train: {str(exc).splitlines()[0][:300]}") from None
        return LightGBMModel(booster, n_classes, X.shape[1])


_BOOLEANS = ("extra_trees", "is_unbalance", "boost_from_average", "use_missing", "zero_as_missing",
             "xgboost_dart_mode", "uniform_drop", "feature_pre_filter", "enable_bundle")


def _value(key: str, v: str):
    """A parameter as LightGBM's text model writes it (``1``, ``0.2``, ``gbdt``) as the value ``lightgbm.train``
    takes: booleans written 0/1 as bools, numbers as numbers, the rest as written."""
    if key in _BOOLEANS and v in ("0", "1"):
        return v == "1"
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def lightgbm_recipe(parameters: dict[str, str], *, objective: str, rounds: int) -> dict:
    """``{"objective", "n_rounds", "params", "seed"}`` from the ``parameters:`` section of a LightGBM text model
    (name -> value as written); ``objective`` and ``rounds`` as the model's trees say."""
    boosting = parameters.get("boosting", "gbdt")
    if boosting not in _BOOSTINGS:
        raise UnsupportedError(f"LightGBM boosting {boosting!r}: leakaudit retrains {', '.join(_BOOSTINGS)}")
    if parameters.get("linear_tree", "0") not in ("0", "false"):
        raise UnsupportedError("LightGBM linear trees (linear_tree): leakaudit audits constant-leaf trees")
    params = {k: _value(k, v) for k, v in parameters.items() if k in RECIPE_KEYS and v != ""}
    seed = parameters.get("seed")
    try:
        seed = None if seed in (None, "") else int(float(seed))
    except ValueError:
        seed = None
    return {"objective": objective, "n_rounds": int(rounds), "params": params, "seed": seed}

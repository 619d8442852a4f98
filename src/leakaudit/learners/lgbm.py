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

import math

import numpy as np

from .._extras import require
from ..exceptions import InvalidInputError, UnsupportedError
from ._base import BoostedLearner, BoostedModel, Capabilities, TreeShape
from ._recipe import FLAG, INTERACTIONS, MONOTONE_ALL, Choice, Int, Real, check_recipe, recipe_error

__all__ = ["LightGBMLearner", "LightGBMModel", "LGBM_OBJECTIVES", "lightgbm_recipe"]

_MAX = 2**31 - 1
#: classification objectives leakaudit trains and reads (LightGBM's aliases are resolved in the model file)
LGBM_OBJECTIVES = ("binary", "multiclass")
#: training parameters the recipe carries from a model file's ``parameters:`` section, with the types and ranges
#: LightGBM documents (the rest: LightGBM's defaults)
RECIPE = {"boosting": Choice("gbdt", "rf", "dart"), "data_sample_strategy": Choice("bagging", "goss"),
          "learning_rate": Real(open_lo=True), "num_leaves": Int(2, 131_072), "max_depth": Int(-_MAX, _MAX),
          "min_data_in_leaf": Int(), "min_sum_hessian_in_leaf": Real(), "bagging_fraction": Real(0, 1, open_lo=True),
          "pos_bagging_fraction": Real(0, 1, open_lo=True), "neg_bagging_fraction": Real(0, 1, open_lo=True),
          "bagging_freq": Int(), "feature_fraction": Real(0, 1, open_lo=True),
          "feature_fraction_bynode": Real(0, 1, open_lo=True), "extra_trees": FLAG, "lambda_l1": Real(),
          "lambda_l2": Real(), "min_gain_to_split": Real(), "max_delta_step": Real(-math.inf), "path_smooth": Real(),
          "max_bin": Int(2, 65_535), "min_data_in_bin": Int(1), "is_unbalance": FLAG,
          "scale_pos_weight": Real(open_lo=True), "sigmoid": Real(open_lo=True), "boost_from_average": FLAG,
          "use_missing": FLAG, "zero_as_missing": FLAG, "top_rate": Real(0, 1), "other_rate": Real(0, 1),
          "drop_rate": Real(0, 1), "max_drop": Int(-_MAX, _MAX), "skip_drop": Real(0, 1), "xgboost_dart_mode": FLAG,
          "uniform_drop": FLAG, "monotone_constraints": MONOTONE_ALL,
          "monotone_constraints_method": Choice("basic", "intermediate", "advanced"), "monotone_penalty": Real(),
          "interaction_constraints": INTERACTIONS, "bin_construct_sample_cnt": Int(1), "feature_pre_filter": FLAG,
          "enable_bundle": FLAG, "seed": Int(-_MAX - 1, _MAX)}
_BOOSTINGS = ("gbdt", "rf", "dart")
#: LightGBM's defaults of the parameters whose combinations are checked
_DEFAULTS = {"boosting": "gbdt", "data_sample_strategy": "bagging", "bagging_freq": 0, "bagging_fraction": 1.0,
             "pos_bagging_fraction": 1.0, "neg_bagging_fraction": 1.0, "feature_fraction": 1.0,
             "feature_fraction_bynode": 1.0, "top_rate": 0.2, "other_rate": 0.1, "is_unbalance": False,
             "scale_pos_weight": 1.0}


def _lgb(feature: str = "a LightGBM model"):
    return require("lightgbm", feature)


class LightGBMModel(BoostedModel):
    """One trained LightGBM booster (:class:`~._base.BoostedModel`; ``rounds_`` None: LightGBM's choice, the best
    iteration where it has one)."""

    def _proba(self, X: np.ndarray) -> np.ndarray:
        p = np.asarray(self.booster_.predict(X, num_iteration=self.rounds_, num_threads=1), dtype=np.float64)
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    def _trees(self) -> list[dict]:
        return self.booster_.dump_model(num_iteration=self.rounds_)["tree_info"]

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

    def tree_shape(self, n_rows: int, n_classes: int) -> TreeShape:
        p = self.params or {}
        leaves = min(int(p.get("num_leaves", 31)), n_rows)
        return TreeShape(int(self.n_rounds) * (1 if n_classes <= 2 else n_classes),
                         math.ceil(math.log2(max(leaves, 2))), leaves, int(p.get("max_bin", 255)))

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

    def _library_error(self) -> type[Exception]:
        return _lgb().basic.LightGBMError

    def _train(self, X: np.ndarray, y: np.ndarray, params: dict, n_classes: int) -> LightGBMModel:
        lgb = _lgb("the LightGBM learner")
        data = lgb.Dataset(X, label=y.astype(np.float64), params={"verbosity": -1}, free_raw_data=True)
        # keep_training_booster: the trained booster as it is, not rebuilt from its own text (lgb.train's default
        # round trip writes and parses every tree: a quarter of a deep model's fit, the same trees after it)
        booster = lgb.train(params, data, num_boost_round=int(self.n_rounds), keep_training_booster=True)
        return LightGBMModel(booster, n_classes, X.shape[1])


def _known() -> set[str]:
    """Every parameter name the installed LightGBM documents (its own list, with the aliases)."""
    from lightgbm.basic import _ConfigAliases

    names = _ConfigAliases._get_all_param_aliases()
    return set(names) | {a for aliases in names.values() for a in aliases}


def lightgbm_recipe(parameters: dict[str, str], *, objective: str, rounds: int, n_features: int,
                    where: str = "the LightGBM model") -> dict:
    """``{"objective", "n_rounds", "params", "seed"}`` from the ``parameters:`` section of a LightGBM text model
    (name -> value as written), each parameter checked (:func:`._recipe.check_recipe`, and the combinations LightGBM
    refuses); ``objective`` and ``rounds`` as the model's trees say."""
    boosting = parameters.get("boosting", "gbdt")
    if boosting not in _BOOSTINGS:
        raise UnsupportedError(f"{where}: LightGBM boosting is not one leakaudit retrains ({', '.join(_BOOSTINGS)})")
    if parameters.get("linear_tree", "0") not in ("0", "false"):
        raise UnsupportedError(f"{where}: LightGBM linear trees (linear_tree); leakaudit audits constant-leaf trees")
    params = check_recipe(parameters, RECIPE, where=where, n_features=n_features, known=_known())
    seed = params.pop("seed", None)
    p = {**_DEFAULTS, **params}
    bagged = p["bagging_freq"] > 0 and min(p["bagging_fraction"], p["pos_bagging_fraction"],
                                            p["neg_bagging_fraction"]) < 1
    if p["boosting"] == "rf" and not (bagged or p["feature_fraction"] < 1 or p["feature_fraction_bynode"] < 1):
        raise recipe_error(where, "boosting", "is rf without bagging or feature sampling (LightGBM's rf needs one)")
    if p["data_sample_strategy"] == "goss" and (bagged or p["top_rate"] + p["other_rate"] > 1):
        raise recipe_error(where, "data_sample_strategy", "is goss with bagging or with top_rate + other_rate over 1")
    if p["is_unbalance"] and p["scale_pos_weight"] != 1:
        raise recipe_error(where, "is_unbalance", "is set with scale_pos_weight (LightGBM takes one of them)")
    return {"objective": objective, "n_rounds": int(rounds), "params": params, "seed": seed}

"""The cases of the calibration suite (``benchmarks/calibration.py``): models whose truth is known, and one audit each.

Null cases: the audited model was trained on records disjoint from both the members and the non-members handed to
the audit (all drawn from one table), so nothing can leak about the "members": any "do not publish" is wrong.
Positive (leaky) cases: the audited model was trained on the members and memorises them (labels flipped on a fifth
of them, duplicated canaries with flipped labels, fully grown trees, a 1-nearest-neighbour rule, an over-trained
net on few records; issue 47's leaky cases flip no label): any verdict but "do not publish" is wrong.
Benign cases (issue 47): regularised models trained on 5,000 members, audited against 5,000 non-members at profile
"standard": they should be published (a benign audit counts only if its loss attack's AUC interval contains 0.5).

Every case writes its members and non-members as CSV files (and the model as a skops file) under its own
folder and runs :func:`leakaudit.audit.pipeline.run_audit` on them with the case's profile (``"smoke"`` but for
the benign cases), as a user would; the TorchMLP (leakaudit's demo learner) cases hand ``run_audit`` a prepared
:class:`~leakaudit.audit.inputs.target.Target` instead, the null one on Adult through the demo's own data (members,
non-members and population drawn by the audit seed; the target trained on further Adult records, disjoint from
all three). The issue-47 cases draw from the table without its exact duplicate rows. Issue 67's cases
(:func:`boosted_cases`: XGBoost, LightGBM and CatBoost null, leaky and benign models on Adult, drawn likewise) hand
``run_audit`` a prepared Target too: the fitted classifier as ``leakaudit.audit`` takes it in memory. Issue 68's
cases (:func:`population_cases`) are null, leaky and benign cases above, each handed a population file (so that
RMIA and InfoRMIA run), its records drawn after the case's others and disjoint from them.
"""

from __future__ import annotations

import json
import shutil
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["Case", "cases", "boosted_cases", "population_cases", "quick_cases", "small_cases", "tiny_new_cases", "run_case", "verdict_of", "FAMILIES",
           "DATASETS", "KINDS"]

FAMILIES = {
    "random_forest": "scikit-learn RandomForestClassifier on leakaudit's encoding (retrained by leakaudit's "
                     "RandomForest)",
    "pipeline": "scikit-learn Pipeline fitted on the table's own columns (retrained by scikit-learn, a clone per model)",
    "sklearn_mlp": "scikit-learn MLPClassifier, Adam, on leakaudit's encoding (retrained by TorchMLP.from_sklearn)",
    "torch_mlp": "leakaudit's TorchMLP with the demo learner's recipe (tanh units, faithful per-example SGD, lr "
                 "0.01), handed to run_audit as a prepared Target and retrained by the same recipe",
    "gradient_boosting": "scikit-learn GradientBoostingClassifier on leakaudit's encoding (retrained by leakaudit's "
                         "compiled GradientBoosting since 2026-11-28; rows measured before that date, by scikit-learn, "
                         "a clone per model)",
    "extra_trees": "scikit-learn ExtraTreesClassifier on leakaudit's encoding (retrained by scikit-learn)",
    "svc": "scikit-learn SVC(probability=True) on leakaudit's encoding (retrained by scikit-learn)",
    "knn": "scikit-learn KNeighborsClassifier on leakaudit's encoding (retrained by scikit-learn)",
    "logistic": "scikit-learn LogisticRegression on leakaudit's encoding (retrained by leakaudit's LogisticRegression, "
                "the same objective by Newton's method)",
    "decision_tree": "scikit-learn DecisionTreeClassifier on leakaudit's encoding (retrained by scikit-learn)",
    "xgboost": "XGBoost's XGBClassifier on leakaudit's encoding, handed to run_audit in memory as leakaudit.audit "
               "does (boosted_from_memory, boosted_target; retrained by leakaudit's XGBoostLearner with the recipe "
               "the booster records)",
    "lightgbm": "LightGBM's LGBMClassifier on leakaudit's encoding, handed to run_audit in memory (retrained by "
                "leakaudit's LightGBMLearner with the recipe of the model's own text)",
    "catboost": "CatBoost's CatBoostClassifier on leakaudit's encoding, handed to run_audit in memory (retrained by "
                "leakaudit's CatBoostLearner with the recipe the model records)",
}
DATASETS = {
    "adult": "UCI Adult, bundled with leakaudit (Long et al.'s 13 columns; sensitive: sex, race, marital_status)",
    "breast_cancer": "Wisconsin breast cancer, bundled with scikit-learn (569 records, 30 numeric columns; "
                     "no sensitive column, so no attribute inference)",
    "census": "UCI Census-Income (KDD), bundled with leakaudit (299,285 records, 40 columns, 6.2 % positive; "
              "sensitive: sex, race; missing values written as the category '?')",
}
#: sizes (members, non-members, the null target's own training records); breast cancer has 569 records in all
SIZES = {"adult": (1000, 1000, 2000), "breast_cancer": (150, 150, 269)}
#: positive cases: members and non-members
POSITIVE_SIZES = {"adult": (1000, 1000), "breast_cancer": (200, 200)}
#: the over-trained nets' members on Adult ("an over-trained net on few records"; non-members as above)
SMALL_MEMBERS = {"adult": 300}

VARIANTS = {  # (kind, family, variant): what the model is
    ("null", "random_forest", "default"): "RandomForestClassifier(n_estimators=100), scikit-learn's defaults",
    ("null", "pipeline", "logistic"): "Pipeline(StandardScaler [+ OneHotEncoder for categoricals], "
                                      "LogisticRegression(max_iter=1000))",
    ("null", "sklearn_mlp", "default"): "MLPClassifier(hidden_layer_sizes=(64,), solver='adam', max_iter=200)",
    ("null", "torch_mlp", "demo"): "TorchMLP(64 tanh, faithful per-example SGD, lr 0.01, 30 epochs)",
    ("positive", "random_forest", "label_noise"): "RandomForestClassifier(n_estimators=100) (fully grown trees) on "
                                                  "the members with a fifth of their labels flipped",
    ("positive", "random_forest", "canaries"): "RandomForestClassifier(n_estimators=100, bootstrap=False, "
                                               "max_features=None) on the members plus 10 canaries (members with "
                                               "flipped labels) each present 3 times",
    ("positive", "pipeline", "knn_label_noise"): "Pipeline(StandardScaler [+ OneHotEncoder], "
                                                 "KNeighborsClassifier(n_neighbors=1, algorithm='brute')) on the "
                                                 "members with a fifth of their labels flipped",
    ("positive", "sklearn_mlp", "overtrained"): "MLPClassifier(hidden_layer_sizes=(256,), alpha=0, solver='adam', "
                                                "max_iter=300, tol=0) on the members with a fifth of their labels "
                                                "flipped",
    ("positive", "torch_mlp", "overtrained"): "TorchMLP(256 tanh, faithful per-example SGD, lr 0.01, 300 epochs) on "
                                              "the members with a fifth of their labels flipped",
    # issue 47: more null families, leaky models without label flips, and benign (regularised) models
    ("null", "gradient_boosting", "default"): "GradientBoostingClassifier(n_estimators=100, max_depth=3), "
                                              "scikit-learn's defaults",
    ("null", "extra_trees", "default"): "ExtraTreesClassifier(n_estimators=100), scikit-learn's defaults (fully "
                                        "grown trees)",
    ("null", "svc", "rbf"): "SVC(probability=True), RBF kernel, C=1",
    ("null", "knn", "k15"): "KNeighborsClassifier(n_neighbors=15)",
    ("null", "logistic", "default"): "LogisticRegression(max_iter=1000), C=1",
    ("positive", "random_forest", "grown"): "RandomForestClassifier(n_estimators=100) (fully grown trees) on the "
                                            "members, labels as they are",
    ("positive", "decision_tree", "grown"): "DecisionTreeClassifier() (fully grown) on the members, labels as they are",
    ("positive", "knn", "k1"): "KNeighborsClassifier(n_neighbors=1) on the members, labels as they are",
    ("positive", "sklearn_mlp", "overtrained_clean"): "MLPClassifier(hidden_layer_sizes=(256,), alpha=0, "
                                                      "solver='adam', max_iter=500, tol=0) on few members, labels as "
                                                      "they are",
    ("benign", "pipeline", "logistic_c0.1"): "Pipeline(StandardScaler + OneHotEncoder, LogisticRegression(C=0.1, "
                                             "max_iter=1000))",
    ("benign", "random_forest", "regularised"): "RandomForestClassifier(n_estimators=100, min_samples_leaf=50, "
                                                "max_depth=8)",
    ("benign", "logistic", "c0.1"): "LogisticRegression(C=0.1, max_iter=1000) on leakaudit's encoding",
    # issue 67: the gradient-boosted libraries (one thread each)
    ("null", "xgboost", "default"): "XGBClassifier(n_estimators=100), XGBoost's defaults (max_depth 6, "
                                    "learning rate 0.3)",
    ("null", "lightgbm", "default"): "LGBMClassifier(n_estimators=100), LightGBM's defaults (31 leaves, learning "
                                     "rate 0.1)",
    ("null", "catboost", "i200"): "CatBoostClassifier(iterations=200), CatBoost's defaults otherwise (depth 6, "
                                  "learning rate chosen by CatBoost); 200 rather than the default 1,000 iterations "
                                  "for time",
    ("positive", "xgboost", "deep_label_noise"): "XGBClassifier(n_estimators=300, max_depth=12, min_child_weight=0, "
                                                 "reg_lambda=0) on the members with a fifth of their labels flipped",
    ("positive", "lightgbm", "deep_label_noise"): "LGBMClassifier(n_estimators=300, num_leaves=256, "
                                                  "min_child_samples=1, min_child_weight=0, reg_lambda=0) on the "
                                                  "members with a fifth of their labels flipped",
    ("positive", "catboost", "deep_label_noise"): "CatBoostClassifier(iterations=100, depth=8, learning_rate=0.5, "
                                                  "l2_leaf_reg=1e-3) on the members with a fifth of their labels "
                                                  "flipped",
    ("benign", "xgboost", "regularised"): "XGBClassifier(n_estimators=100, max_depth=3, learning_rate=0.1, "
                                          "min_child_weight=20, reg_lambda=10)",
    ("benign", "lightgbm", "regularised"): "LGBMClassifier(n_estimators=100, num_leaves=8, learning_rate=0.1, "
                                           "min_child_samples=50, reg_lambda=10)",
    ("benign", "catboost", "regularised"): "CatBoostClassifier(iterations=100, depth=4, learning_rate=0.1, "
                                           "l2_leaf_reg=10)",
    ("benign", "lightgbm", "regularised_bins50"): "LGBMClassifier(n_estimators=100, num_leaves=8, learning_rate=0.1, "
                                                  "min_child_samples=50, reg_lambda=10, min_data_in_bin=50)",
}
def priority(case: Case, rank: int) -> int:
    """The tier in which the ``rank``-th case (0-based) of its group runs (lower first): 0 every group's first
    case; 1 the benign seeds; 2 the issue-47 null and leaky seeds; 3 the first suite's positive seeds and its null
    seeds up to the 8th; 4 its null seeds beyond."""
    if rank == 0:
        return 0
    if case.kind == "benign":
        return 1
    if case.distinct:
        return 2
    return 3 if case.kind == "positive" or rank < 8 else 4


#: the issue-47 cases draw from the table with exact duplicate rows (features and label) removed, so that a null
#: model never trained on a copy of an audited record and a non-member is never a copy of a member
KINDS = ("null", "positive", "benign")


@dataclass(frozen=True)
class Case:
    """One audit of the suite. ``id`` is unique and stable (the resumable log is keyed by it)."""

    kind: str  # null | positive
    family: str
    variant: str
    dataset: str
    seed: int
    n_members: int
    n_nonmembers: int
    n_train: int = 0  # null: the target's own (disjoint) training records; positive: 0 (it trains on the members)
    label_noise: float = 0.0
    canaries: int = 0
    profile: str = "smoke"
    distinct: bool = False  # drawn from the table without its duplicate rows (the issue-47 cases)
    population: int = 0  # population records handed to the audit (issue 68's cases); 0: none
    id: str = field(default="")

    def __post_init__(self):
        if not self.id:
            object.__setattr__(self, "id", self.base_id + (f"-p{self.population}" if self.population else ""))

    @property
    def base_id(self) -> str:
        """The id of the same case without a population: its records (members, non-members, the null target's own)
        and model are drawn by this id, so a case with a population audits the same model on the same records."""
        return (f"{self.kind}-{self.family}-{self.variant}-{self.dataset}-m{self.n_members}-s{self.seed}"
                + ("" if self.profile == "smoke" else f"-{self.profile}"))

    @property
    def description(self) -> str:
        return VARIANTS[(self.kind, self.family, self.variant)]


def _null(family, variant, dataset, seed, scale=1.0):
    m, n, t = SIZES[dataset]
    return Case("null", family, variant, dataset, seed, int(m * scale), int(n * scale), int(t * scale))


def _pos(family, variant, dataset, seed, scale=1.0, **kw):
    m, n = POSITIVE_SIZES[dataset]
    if variant == "overtrained":
        m = SMALL_MEMBERS.get(dataset, m)
    return Case("positive", family, variant, dataset, seed, int(m * scale), int(n * scale), **kw)


NULL_FAMILIES = (("random_forest", "default"), ("pipeline", "logistic"), ("sklearn_mlp", "default"),
                 ("torch_mlp", "demo"))
POSITIVE_FAMILIES = (("random_forest", "label_noise", {"label_noise": 0.2}),
                     ("random_forest", "canaries", {"canaries": 10}),
                     ("pipeline", "knn_label_noise", {"label_noise": 0.2}),
                     ("sklearn_mlp", "overtrained", {"label_noise": 0.2}),
                     ("torch_mlp", "overtrained", {"label_noise": 0.2}))


#: issue 47's null families on Adult and Census-Income: (family, variant) -> (members, non-members, the target's own
#: records), sized by what one audit costs (the scikit-learn clones are retrained for every reference and
#: leave-one-out model)
NEW_NULL = {("gradient_boosting", "default"): (500, 500, 2000), ("extra_trees", "default"): (500, 500, 2000),
            ("svc", "rbf"): (500, 500, 1000), ("knn", "k15"): (1000, 1000, 2000),
            ("logistic", "default"): (3000, 3000, 3000)}
NEW_DATASETS = ("adult", "census")
#: leaky models without label flips: (family, variant) -> (members, non-members)
LEAKY = {("random_forest", "grown"): (1000, 1000), ("decision_tree", "grown"): (1000, 1000),
         ("knn", "k1"): (1000, 1000), ("sklearn_mlp", "overtrained_clean"): (300, 1000)}
#: the over-trained net only on Adult: on Census-Income's ~400 encoded columns one audit took 6 minutes (500 epochs
#: per reference and leave-one-out net), and with 6 % positives its members' leak is small (test accuracy 0.92)
LEAKY_DATASETS = {("sklearn_mlp", "overtrained_clean"): ("adult",)}
#: at most this many seeds of a leaky variant: one audit of the over-trained net on Adult took 3.6 minutes (its
#: DTP-1 test retrains 500-epoch nets for every candidate record)
LEAKY_MAX_SEEDS = {("sklearn_mlp", "overtrained_clean"): 2}
#: benign (regularised, trained on the members) models, audited at profile "standard": (family, variant) ->
#: (members, non-members)
BENIGN = {("pipeline", "logistic_c0.1"): (5000, 5000), ("random_forest", "regularised"): (5000, 5000),
          ("logistic", "c0.1"): (5000, 5000)}
BENIGN_DATASETS = ("adult", "census")
#: the pipeline (retrained as scikit-learn clones: 4 minutes an audit under load) only on Adult; on Census-Income the
#: two families leakaudit retrains natively, with at most this many seeds
BENIGN_ONLY = {("pipeline", "logistic_c0.1"): ("adult",)}
BENIGN_CENSUS_MAX_SEEDS = 3


#: issue 67: the gradient-boosted libraries, on Adult, each model trained with one thread. Null: (members,
#: non-members, the target's own records), the sizes of scikit-learn's gradient boosting above; leaky: a fifth of
#: the members' labels flipped, learnt by deep trees over many rounds; benign: as the other benign families
BOOSTED = ("xgboost", "lightgbm", "catboost")
BOOSTED_NULL = {("xgboost", "default"): (500, 500, 2000), ("lightgbm", "default"): (500, 500, 2000),
                ("catboost", "i200"): (500, 500, 2000)}
BOOSTED_LEAKY = {(f, "deep_label_noise"): (500, 500) for f in BOOSTED}
BOOSTED_BENIGN = {(f, "regularised"): (5000, 5000) for f in BOOSTED}
#: the benign LightGBM recipe with its histogram bins held to the recipe's own leaf minimum (``min_data_in_bin`` =
#: ``min_child_samples`` = 50; LightGBM's default is 3): the remedy the withheld benign LightGBM audits point to (a
#: bin edge set by a value few members hold), run apart from the suite and not counted in its benign bar
LIGHTGBM_BINS = {("lightgbm", "regularised_bins50"): (5000, 5000)}


def boosted_cases(n_null_seeds: int = 5, n_leaky_seeds: int = 5, n_benign_seeds: int = 0) -> list[Case]:
    """Issue 67's cases (``--set boosted``): per library ``n_null_seeds`` null, ``n_leaky_seeds`` leaky (profile
    smoke) and ``n_benign_seeds`` benign (profile standard) audits on Adult."""
    out = [Case("null", f, v, "adult", s, m, n, t, distinct=True) for (f, v), (m, n, t) in BOOSTED_NULL.items()
           for s in range(n_null_seeds)]
    out += [Case("positive", f, v, "adult", 200 + s, m, n, label_noise=0.2, distinct=True)
            for (f, v), (m, n) in BOOSTED_LEAKY.items() for s in range(n_leaky_seeds)]
    return out + [Case("benign", f, v, "adult", 300 + s, m, n, profile="standard", distinct=True)
                  for (f, v), (m, n) in BOOSTED_BENIGN.items() for s in range(n_benign_seeds)]


def lightgbm_bins_cases(n_seeds: int = 5) -> list[Case]:
    """``--set lightgbm-bins``: :data:`LIGHTGBM_BINS` on the benign seeds (profile standard), apart from the suite."""
    return [Case("benign", f, v, "adult", 300 + s, m, n, profile="standard", distinct=True)
            for (f, v), (m, n) in LIGHTGBM_BINS.items() for s in range(n_seeds)]


#: issue 68: the cases run with a population file (``--set population``), on Adult, drawn from the table without its
#: duplicate rows; the population is about twice the members. Null: (family, variant) -> (members, non-members, the
#: target's own records); leaky and benign as above
POPULATION_NULL = {("logistic", "default"): NEW_NULL[("logistic", "default")],
                   ("pipeline", "logistic"): SIZES["adult"], ("random_forest", "default"): SIZES["adult"],
                   ("sklearn_mlp", "default"): SIZES["adult"], ("knn", "k15"): NEW_NULL[("knn", "k15")]}
POPULATION_BENIGN = (("logistic", "c0.1"), ("random_forest", "regularised"))
POPULATION_FACTOR = 2


def population_cases(n_null_seeds: int = 5, n_leaky_seeds: int = 4, n_benign_seeds: int = 0) -> list[Case]:
    """Issue 68's cases (``--set population``): the null, leaky and benign cases above on Adult, each handed a
    population of ``POPULATION_FACTOR`` times its members, so that RMIA and InfoRMIA run. ``n_null_seeds`` per null
    family (seeds 0-), ``n_leaky_seeds`` per leaky variant (200-), ``n_benign_seeds`` per benign family (300-,
    profile standard)."""
    out = [Case("null", f, v, "adult", s, m, n, t, distinct=True, population=POPULATION_FACTOR * m)
           for (f, v), (m, n, t) in POPULATION_NULL.items() for s in range(n_null_seeds)]
    out += [Case("positive", f, v, "adult", 200 + s, m, n, distinct=True, population=POPULATION_FACTOR * m)
            for (f, v), (m, n) in LEAKY.items() for s in range(n_leaky_seeds)]
    return out + [Case("benign", f, v, "adult", 300 + s, m, n, profile="standard", distinct=True,
                       population=POPULATION_FACTOR * m)
                  for f, v in POPULATION_BENIGN for m, n in [BENIGN[(f, v)]] for s in range(n_benign_seeds)]


def new_null_cases(n_seeds: int) -> list[Case]:
    return [Case("null", f, v, d, s, m, n, t, distinct=True) for (f, v), (m, n, t) in NEW_NULL.items()
            for d in NEW_DATASETS for s in range(n_seeds)]


def leaky_cases(n_seeds: int) -> list[Case]:
    return [Case("positive", f, v, d, 200 + s, m, n, distinct=True) for (f, v), (m, n) in LEAKY.items()
            for d in LEAKY_DATASETS.get((f, v), NEW_DATASETS) for s in range(min(n_seeds, LEAKY_MAX_SEEDS.get((f, v),
                                                                                                  n_seeds)))]


def benign_cases(n_seeds: int) -> list[Case]:
    return [Case("benign", f, v, d, 300 + s, m, n, profile="standard", distinct=True)
            for (f, v), (m, n) in BENIGN.items() for d in BENIGN_ONLY.get((f, v), BENIGN_DATASETS)
            for s in range(n_seeds if d == "adult" else min(n_seeds, BENIGN_CENSUS_MAX_SEEDS))]


def cases(n_null_seeds: int = 8, n_positive_seeds: int = 4, n_new_null_seeds: int = 0, n_leaky_seeds: int = 0,
          n_benign_seeds: int = 0) -> list[Case]:
    """The full suite: 4 families x 2 datasets x ``n_null_seeds`` null audits, 5 variants x 2 datasets x
    ``n_positive_seeds`` positive audits (64 and 40 by default), and issue 47's cases: 5 more null families x
    Adult and Census-Income x ``n_new_null_seeds``, 4 leaky variants without label flips x 2 datasets x
    ``n_leaky_seeds`` (the over-trained net: Adult, at most 2 seeds), 3 benign families on Adult x
    ``n_benign_seeds`` and 2 on Census-Income x at most 3 seeds (profile "standard")."""
    out = [_null(f, v, d, s) for d in DATASETS if d in SIZES for f, v in NULL_FAMILIES for s in range(n_null_seeds)]
    out += [_pos(f, v, d, 100 + s, **kw) for d in DATASETS if d in POSITIVE_SIZES for f, v, kw in POSITIVE_FAMILIES
            for s in range(n_positive_seeds)]
    return out + new_null_cases(n_new_null_seeds) + leaky_cases(n_leaky_seeds) + benign_cases(n_benign_seeds)


def quick_cases() -> list[Case]:
    """``--quick``: every family and variant once, on breast cancer, at the full suite's sizes (a check that all run),
    and one case of each issue-47 family (Census-Income for the null and leaky ones, Adult for the benign ones)."""
    out = [_null(f, v, "breast_cancer", 0) for f, v in NULL_FAMILIES]
    out += [_null("torch_mlp", "demo", "adult", 0, scale=0.3)]
    out += [_pos(f, v, "breast_cancer", 100, **kw) for f, v, kw in POSITIVE_FAMILIES]
    out += [c for c in new_null_cases(1) if c.dataset == "census"]
    out += [c for c in leaky_cases(1) if c.dataset == "census"]
    return out + [c for c in benign_cases(1) if c.dataset == "adult"]


def tiny_new_cases() -> list[Case]:
    """One small case of each new kind (a null k-NN, a leaky 1-NN, a benign logistic regression), on Adult, at
    profile smoke: the default test's check that the issue-47 machinery runs (not a calibration)."""
    return [Case("null", "knn", "k15", "adult", 0, 300, 300, 600, distinct=True),
            Case("positive", "knn", "k1", "adult", 200, 300, 300, distinct=True),
            Case("benign", "logistic", "c0.1", "adult", 300, 1000, 1000, distinct=True)]


def small_cases() -> list[Case]:
    """The default test's cases: two null (a forest and the logistic pipeline) and one positive, on breast cancer."""
    return [_null("random_forest", "default", "breast_cancer", 0), _null("pipeline", "logistic", "breast_cancer", 0),
            _pos("random_forest", "label_noise", "breast_cancer", 100, label_noise=0.2)]


# -- data ------------------------------------------------------------------------------------------------------


def load_table(dataset: str) -> tuple[pd.DataFrame, str, list[str]]:
    """(table with its label column, the label's name, sensitive columns)."""
    if dataset == "adult":
        from leakaudit.data import load_adult

        return load_adult(columns="long").to_frame(), "income", ["sex", "race", "marital_status"]
    if dataset == "census":
        from leakaudit.data import load_census_kdd

        ds = load_census_kdd()
        df = ds.frame.copy()
        for c in df.columns:
            if not pd.api.types.is_numeric_dtype(df[c]):
                df[c] = df[c].fillna("?")
        df["income"] = np.where(ds.y == 1, ds.class_names[1], ds.class_names[0])
        return df, "income", list(ds.sensitive)
    if dataset == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        b = load_breast_cancer(as_frame=True)
        df = b.data.rename(columns=lambda c: c.replace(" ", "_"))
        df["diagnosis"] = np.where(b.target.to_numpy() == 1, "benign", "malignant")
        return df, "diagnosis", []
    raise ValueError(f"unknown dataset {dataset!r}")


def _flip(labels: pd.Series, idx: np.ndarray) -> pd.Series:
    """Binary labels with the rows at positions ``idx`` set to the other class."""
    values = sorted(labels.unique())
    assert len(values) == 2, values
    out = labels.copy()
    pos = out.index[idx]
    out.loc[pos] = np.where(out.loc[pos] == values[0], values[1], values[0])
    return out


def _split(case: Case, df: pd.DataFrame, label: str):
    """Members (as the model trains on them: flipped labels, canaries), non-members, the null target's records, the
    population (empty without one) and what the draw did. Drawn by the case's :attr:`Case.base_id`: the population
    comes after the other three in the same permutation, so they are those of the case without it."""
    rng = np.random.default_rng(zlib.crc32(case.base_id.encode()))
    if case.distinct:
        df = df.drop_duplicates(ignore_index=True)
    need = case.n_members + case.n_nonmembers + case.n_train
    if need + case.population > len(df):
        raise ValueError(f"{case.id}: needs {need + case.population} records; {case.dataset} has {len(df)}")
    perm = rng.permutation(len(df))
    mem = df.iloc[perm[:case.n_members]].reset_index(drop=True)
    non = df.iloc[perm[case.n_members:case.n_members + case.n_nonmembers]].reset_index(drop=True)
    own = df.iloc[perm[case.n_members + case.n_nonmembers:need]].reset_index(drop=True)
    pop = df.iloc[perm[need:need + case.population]].reset_index(drop=True)
    info = {"n_population": int(case.population)} if case.population else {}
    if case.label_noise:
        k = int(round(case.label_noise * len(mem)))
        idx = np.sort(rng.choice(len(mem), size=k, replace=False))
        mem[label] = _flip(mem[label], idx)
        info["flipped_members"] = int(k)
    if case.canaries:
        idx = np.sort(rng.choice(len(mem), size=case.canaries, replace=False))
        mem[label] = _flip(mem[label], idx)
        mem = pd.concat([mem, mem.iloc[idx], mem.iloc[idx]], ignore_index=True)  # each canary 3 times
        info["canaries"] = int(case.canaries)
        info["canary_copies"] = 3
    return mem, non, own, pop, info


def _label_codes(data, values: pd.Series) -> np.ndarray:
    lookup = {name: i for i, name in enumerate(data.class_names)}
    return np.array([lookup[str(v)] for v in values], dtype=np.int64)


def _ignore_unknown(encoder):
    """A copy of the audit's encoder that encodes a category it has not declared as an all-zero group."""
    import copy

    enc = copy.deepcopy(encoder)
    enc.handle_unknown = "ignore"
    return enc


# -- models ----------------------------------------------------------------------------------------------------


def _preprocessor(frame: pd.DataFrame):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    num = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    cat = [c for c in frame.columns if c not in num]
    if not cat:
        return StandardScaler()
    return ColumnTransformer([("num", StandardScaler(), num),
                              ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)])


def _sklearn_model(case: Case, frame: pd.DataFrame, X: np.ndarray, y: np.ndarray):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline

    from sklearn.ensemble import ExtraTreesClassifier, GradientBoostingClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    s = case.seed
    key = (case.family, case.variant)
    if key == ("gradient_boosting", "default"):
        return GradientBoostingClassifier(random_state=s).fit(X, y)
    if key == ("extra_trees", "default"):
        return ExtraTreesClassifier(n_estimators=100, random_state=s).fit(X, y)
    if key == ("svc", "rbf"):
        return SVC(probability=True, random_state=s).fit(X, y)
    if key == ("knn", "k15"):
        return KNeighborsClassifier(n_neighbors=15).fit(X, y)
    if key == ("knn", "k1"):
        return KNeighborsClassifier(n_neighbors=1).fit(X, y)
    if key == ("logistic", "default"):
        return LogisticRegression(max_iter=1000).fit(X, y)
    if key == ("logistic", "c0.1"):
        return LogisticRegression(C=0.1, max_iter=1000).fit(X, y)
    if key == ("decision_tree", "grown"):
        return DecisionTreeClassifier(random_state=s).fit(X, y)
    if key == ("random_forest", "grown"):
        return RandomForestClassifier(n_estimators=100, random_state=s).fit(X, y)
    if key == ("random_forest", "regularised"):
        return RandomForestClassifier(n_estimators=100, min_samples_leaf=50, max_depth=8, random_state=s).fit(X, y)
    if key == ("pipeline", "logistic_c0.1"):
        return Pipeline([("prep", _preprocessor(frame)),
                         ("clf", LogisticRegression(C=0.1, max_iter=1000))]).fit(frame, y)
    if key == ("sklearn_mlp", "overtrained_clean"):
        return _quiet_fit(MLPClassifier(hidden_layer_sizes=(256,), alpha=0.0, solver="adam", max_iter=500, tol=0.0,
                                        n_iter_no_change=500, random_state=s), X, y)
    if key in (("random_forest", "default"), ("random_forest", "label_noise")):
        return RandomForestClassifier(n_estimators=100, random_state=s).fit(X, y)
    if key == ("random_forest", "canaries"):
        return RandomForestClassifier(n_estimators=100, bootstrap=False, max_features=None, random_state=s).fit(X, y)
    if key == ("pipeline", "logistic"):
        return Pipeline([("prep", _preprocessor(frame)), ("clf", LogisticRegression(max_iter=1000))]).fit(frame, y)
    if key == ("pipeline", "knn_label_noise"):
        return Pipeline([("prep", _preprocessor(frame)),
                         ("clf", KNeighborsClassifier(n_neighbors=1, algorithm="brute"))]).fit(frame, y)
    if key == ("sklearn_mlp", "default"):
        return _quiet_fit(MLPClassifier(hidden_layer_sizes=(64,), solver="adam", max_iter=200, random_state=s), X, y)
    if key == ("sklearn_mlp", "overtrained"):
        return _quiet_fit(MLPClassifier(hidden_layer_sizes=(256,), alpha=0.0, solver="adam", max_iter=300, tol=0.0,
                                        n_iter_no_change=300, random_state=s), X, y)
    raise ValueError(f"no scikit-learn model for {key}")


def _boosted_model(case: Case, X: np.ndarray, y: np.ndarray):
    """The case's XGBoost, LightGBM or CatBoost classifier, fitted with one thread on leakaudit's encoding."""
    s = case.seed
    key = (case.family, case.variant)
    if case.family == "xgboost":
        from xgboost import XGBClassifier

        kw = {("xgboost", "default"): dict(n_estimators=100),
              ("xgboost", "deep_label_noise"): dict(n_estimators=300, max_depth=12, min_child_weight=0.0,
                                                    reg_lambda=0.0),
              ("xgboost", "regularised"): dict(n_estimators=100, max_depth=3, learning_rate=0.1, min_child_weight=20,
                                               reg_lambda=10.0)}[key]
        return XGBClassifier(**kw, n_jobs=1, random_state=s).fit(X, y)
    if case.family == "lightgbm":
        from lightgbm import LGBMClassifier

        kw = {("lightgbm", "default"): dict(n_estimators=100),
              ("lightgbm", "deep_label_noise"): dict(n_estimators=300, num_leaves=256, min_child_samples=1,
                                                     min_child_weight=0.0, reg_lambda=0.0),
              ("lightgbm", "regularised"): dict(n_estimators=100, num_leaves=8, learning_rate=0.1,
                                                min_child_samples=50, reg_lambda=10.0),
              ("lightgbm", "regularised_bins50"): dict(n_estimators=100, num_leaves=8, learning_rate=0.1,
                                                       min_child_samples=50, reg_lambda=10.0, min_data_in_bin=50)}[key]
        return LGBMClassifier(**kw, n_jobs=1, random_state=s, verbose=-1).fit(X, y)
    if case.family == "catboost":
        from catboost import CatBoostClassifier

        kw = {("catboost", "i200"): dict(iterations=200),
              ("catboost", "deep_label_noise"): dict(iterations=100, depth=8, learning_rate=0.5, l2_leaf_reg=1e-3),
              ("catboost", "regularised"): dict(iterations=100, depth=4, learning_rate=0.1, l2_leaf_reg=10.0)}[key]
        return CatBoostClassifier(**kw, thread_count=1, random_seed=s, verbose=False,
                                  allow_writing_files=False).fit(X, y)
    raise ValueError(f"no gradient-boosted model for {key}")


def _quiet_fit(est, X, y):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


TORCH_SETTINGS = {"demo": {"hidden": [64], "epochs": 30}, "overtrained": {"hidden": [256], "epochs": 300}}


def _torch_target(case: Case, cfg, data, X_train: np.ndarray, y_train: np.ndarray, what: str):
    from leakaudit.audit.inputs.target import Target, demo_learner

    learner = demo_learner(cfg)
    model = learner.fit(X_train, y_train, random_state=case.seed, n_classes=data.n_classes)
    pm, pn = model.predict_proba(data.X_mem), model.predict_proba(data.X_non)
    pp = model.predict_proba(data.X_pop) if len(data.X_pop) else None
    desc = (f"MLP, {'-'.join(map(str, cfg.hidden))} {cfg.activation} hidden units, per-example SGD lr 0.01, "
            f"{cfg.epochs} epochs, trained on {what}")
    enc = data.encoder
    return Target("demo", desc, pm, pn, pp, learner=demo_learner(cfg), model=model,
                  predict_frame=lambda df: model.predict_proba(enc.transform(df)))


def _adult_demo_null(case: Case, cache: Path):
    """TorchMLP null on Adult: the demo's own data (members, non-members, population by the audit seed); the target
    trained on Adult records outside all three. Checks that the draw is the one the audit makes."""
    from leakaudit._random import check_random_state
    from leakaudit.audit.config import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.data import load_adult

    cfg = make_config(profile="smoke", seed=case.seed, n_members=case.n_members, n_nonmembers=case.n_nonmembers,
                      cache_dir=cache, **TORCH_SETTINGS["demo"])
    data = prepare_data(cfg)
    ds = load_adult(columns="long")
    perm = check_random_state(cfg.seed).permutation(len(ds))
    m, n, p = len(data.y_mem), len(data.y_non), len(data.y_pop)
    if not (np.array_equal(perm[:m], data.record_ids_mem) and np.array_equal(perm[m:m + n], data.record_ids_non)
            and np.array_equal(data.encoder.transform(ds.frame.iloc[perm[m + n:m + n + p]]), data.X_pop)):
        raise RuntimeError("the demo's draw of members / non-members / population is not the one replicated here; "
                           "update _adult_demo_null")
    own = perm[m + n + p:m + n + p + case.n_train]
    X_train, y_train = data.encoder.transform(ds.frame.iloc[own]), ds.y[own]
    target = _torch_target(case, cfg, data, X_train, y_train,
                           f"{len(own)} Adult records disjoint from the members, non-members and population")
    return cfg, data, target, {"n_population": int(p), "n_target_train": int(len(own))}


# -- one audit -------------------------------------------------------------------------------------------------


def run_case(case: Case, workdir: str | Path, *, keep: bool = False) -> dict:
    """Build the case's model and data under ``workdir``, audit it, return its row (see :func:`verdict_of`)."""
    import skops.io as sio

    from leakaudit.audit.config import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.pipeline import run_audit
    from leakaudit.data import read_table

    workdir = Path(workdir)
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    cache = workdir / "cache"
    t_case = time.perf_counter()
    target = None
    info: dict = {}
    if case.family == "torch_mlp" and case.kind == "null" and case.dataset == "adult":
        cfg, data, target, info = _adult_demo_null(case, cache)
    else:
        df, label, sensitive = load_table(case.dataset)
        mem, non, own, pop, info = _split(case, df, label)
        mem.to_csv(workdir / "members.csv", index=False)
        non.to_csv(workdir / "nonmembers.csv", index=False)
        base = dict(train=workdir / "members.csv", test=workdir / "nonmembers.csv", label=label,
                    sensitive=sensitive or None, profile=case.profile, seed=case.seed, cache_dir=cache)
        if case.population:  # a population file, as a user passes one (--population)
            pop.to_csv(workdir / "population.csv", index=False)
            base["population"] = workdir / "population.csv"
        if case.family == "torch_mlp":
            base.update(TORCH_SETTINGS[case.variant])
        cfg = make_config(**base)
        data = prepare_data(cfg)
        if case.kind == "null":
            own.to_csv(workdir / "target_train.csv", index=False)
            own_read = read_table(workdir / "target_train.csv")  # read back as the audit reads its files
            frame = own_read[list(data.frame_mem.columns)]
            y_train = _label_codes(data, own_read[label])
            X_train = _ignore_unknown(data.encoder).transform(frame)
            what = f"{len(frame)} records disjoint from the members and non-members"
        else:
            frame, y_train, X_train = data.frame_mem, data.y_mem, data.X_mem
            what = "the members"
        info["n_target_train"] = int(len(y_train))
        if case.family == "torch_mlp":
            target = _torch_target(case, cfg, data, X_train, y_train, what)
        elif case.family in BOOSTED:  # in memory, as leakaudit.audit takes it (no safe skops file holds one)
            from leakaudit.audit.inputs.boosted import boosted_from_memory
            from leakaudit.audit.inputs.target import boosted_target

            target = boosted_target(data, boosted_from_memory(_boosted_model(case, X_train, y_train)),
                                    model_input="encoded")
        else:
            est = _sklearn_model(case, frame, X_train, y_train)
            sio.dump(est, workdir / "model.skops")
            # a model fitted on a bare array of leakaudit's encoding must say so (docs/input.md)
            fed = {} if hasattr(est, "feature_names_in_") else {"model_input": "encoded"}
            cfg = make_config(**base, model=workdir / "model.skops", **fed)
    t0, c0 = time.perf_counter(), time.process_time()
    run_audit(cfg, workdir / "audit", verbose=False, target=target)
    audit_s, audit_cpu = time.perf_counter() - t0, time.process_time() - c0
    res = json.loads((workdir / "audit" / "results.json").read_text())
    if target is not None:  # run_audit's own prepare_data must have drawn the same records
        acc = float(np.mean(target.probs_mem.argmax(1) == data.y_mem))
        if abs(res["target"]["train_accuracy"] - acc) > 1e-12 or res["data"]["n_members"] != len(data.y_mem):
            raise RuntimeError(f"{case.id}: run_audit prepared other records than the case did")
    row = {**{k: v for k, v in asdict(case).items()}, "description": case.description, **info,
           "audit_seconds": round(audit_s, 2), "audit_cpu_seconds": round(audit_cpu, 2), "case_seconds": round(time.perf_counter() - t_case, 2),
           **verdict_of(res), **_measured(res)}
    if not keep:
        shutil.rmtree(cache, ignore_errors=True)
        for f in ("records.csv", "report.html"):
            (workdir / "audit" / f).unlink(missing_ok=True)
    return row


def _measured(res: dict) -> dict:
    """What the audit measured, briefly: the target's accuracies, each attack's AUC and interval, PDTP."""
    tgt = res.get("target") or {}
    out = {"train_accuracy": tgt.get("train_accuracy"), "test_accuracy": tgt.get("test_accuracy"),
           "auc": {k: [v.get("auc"), *(v.get("auc_ci") or [None, None])] for k, v in (res.get("membership") or {}).items()}}
    dtp = res.get("dtp")
    if dtp:
        out["pdtp"] = {"max": dtp.get("max"), "n_above": dtp.get("n_above"), "n_records": dtp.get("n_records")}
    out["leakaudit_version"] = res.get("leakaudit_version")
    out["timings"] = res.get("timings")
    return out


# -- the verdict, new schema or old ----------------------------------------------------------------------------


def _slug(name: str) -> str:
    return "_".join("".join(ch if ch.isalnum() else " " for ch in name.lower()).split())


def _checks_from_reasons(res: dict) -> list[dict]:
    """Checks rebuilt from an older verdict's sentences (``reasons`` exceeded, ``passed`` passed)."""
    v = res["verdict"]
    attacks = sorted((res.get("membership") or {}).keys(), key=len, reverse=True)
    cols = sorted((res.get("attribute") or {}).keys(), key=len, reverse=True)

    def parse(sentence: str) -> tuple[str, str]:
        s = sentence
        if "PDTP" in s:
            return "dtp.dtp1", "dtp"
        if s.startswith("attribute inference"):
            col = next((c for c in cols if f" {c} " in f" {s} " or f"of {c}:" in s), "unknown")
            return f"attribute.{_slug(col)}.advantage", "attribute"
        name = next((a for a in attacks if f"the {a} attack" in s or s.startswith(f"{a} ") or s.startswith(f"{a}:")),
                    None)
        if name is None:
            return "unknown", "unknown"
        if "identifies members" in s or "TPR at" in s and "not clearly above" in s:
            return f"membership.{_slug(name)}.tpr_at_low_fpr", "membership"
        return f"membership.{_slug(name)}.auc", "membership"

    out = []
    for status, sentences in (("exceeded", v.get("reasons") or []), ("passed", v.get("passed") or [])):
        for s in sentences:
            cid, analysis = parse(s)
            if status == "passed" and cid.startswith("membership.") and "TPR at" in s:
                # one old "passed" sentence covers both of an attack's checks unless its AUC was a reason
                for metric in ("tpr_at_low_fpr", "auc"):
                    c = cid.rsplit(".", 1)[0] + "." + metric
                    if not any(o["id"] == c for o in out):
                        out.append({"id": c, "analysis": analysis, "name": c, "status": status, "value": None,
                                    "interval": None, "threshold": None, "sentence": s, "describes": "model"})
                continue
            out.append({"id": cid, "analysis": analysis, "name": cid, "status": status, "value": None,
                        "interval": None, "threshold": None, "sentence": s,
                        "describes": "model"})
    return out


def _checks_from_sections(res: dict) -> list[dict]:
    """An older verdict's checks recomputed from the measured sections with its own thresholds, by its own rules
    (``verdict.py`` before the checks: PDTP records above ``max_dtp``; an attack's AUC or TPR at ``low_fpr`` whose
    interval's lower end is above its threshold; an attribute advantage likewise). TPR at a low FPR it could not
    estimate (too few non-members) is "not measurable"."""
    th = res["verdict"]["thresholds"]
    out = []

    def add(cid, analysis, name, exceeded, value, interval, threshold, sentence):
        out.append({"id": cid, "analysis": analysis, "name": name,
                    "status": "exceeded" if exceeded else "passed", "value": value, "interval": interval,
                    "threshold": threshold, "sentence": sentence, "describes": "model"})

    d = res.get("dtp")
    if d:
        add("dtp.dtp1", "dtp", "DTP-1 rule", d["n_above"] > th["max_records_above_dtp"], d["max"], None,
            th["max_dtp"], f"{d['n_above']} of {d['n_records']} measured members have PDTP above {th['max_dtp']:g}")
    for name, m in (res.get("membership") or {}).items():
        lo = m["auc_ci"][0]
        add(f"membership.{_slug(name)}.auc", "membership", f"{name}: AUC", lo > th["max_auc"], m["auc"],
            list(m["auc_ci"]), th["max_auc"], f"AUC {m['auc']:.3f}, interval from {lo:.3f}")
        key = next((k for k in m.get("tpr_at_fpr", {}) if abs(float(k) - th["low_fpr"]) < 1e-12), None)
        t = m["tpr_at_fpr"].get(key) if key else None
        cid = f"membership.{_slug(name)}.tpr_at_low_fpr"
        if t is not None and t["tpr"] == t["tpr"]:
            add(cid, "membership", f"{name}: TPR at {th['low_fpr']:g} FPR", t["ci"][0] > th["max_tpr_at_low_fpr"],
                t["tpr"], list(t["ci"]), th["max_tpr_at_low_fpr"], f"TPR {t['tpr']:.4f}, interval from {t['ci'][0]:.4f}")
        else:
            out.append({"id": cid, "analysis": "membership", "name": f"{name}: TPR at {th['low_fpr']:g} FPR",
                        "status": "not measurable", "value": None, "interval": None,
                        "threshold": th["max_tpr_at_low_fpr"], "sentence": "too few non-members to estimate it",
                        "describes": "model"})
    for col, a in (res.get("attribute") or {}).items():
        add(f"attribute.{_slug(col)}.advantage", "attribute", f"attribute inference of {col}",
            a["advantage_ci"][0] > th["max_attribute_advantage"], a["advantage"], list(a["advantage_ci"]),
            th["max_attribute_advantage"], f"advantage {a['advantage']:.3f}, interval from {a['advantage_ci'][0]:.3f}")
    return out


def verdict_of(res: dict) -> dict:
    """{"outcome", "checks", "verdict_schema", "headline"} from a results.json.

    The new schema: ``verdict.outcome`` and ``verdict.checks`` as they are ("new"). The old one (``verdict.publish``,
    ``reasons``, ``passed``): outcome "publish" or "do not publish", the checks recomputed from the measured
    sections by the old verdict's rules ("old"), or, where those do not reproduce its reasons, rebuilt from the
    sentences of ``reasons`` and ``passed`` ("old, from sentences").
    """
    v = res["verdict"]
    if "outcome" in v and "checks" in v:
        keep = ("id", "analysis", "name", "status", "value", "interval", "threshold", "confidence", "sentence",
                "describes", "shows", "p_value", "decision")  # decision: schema 2 (calibration.schema3 reads it)
        checks = [{k: c.get(k) for k in keep if k in c or k != "decision"} for c in v["checks"]]
        return {"outcome": v["outcome"], "checks": checks, "verdict_schema": "new", "headline": v.get("headline"),
                **({"burden_of_proof": v["burden_of_proof"], "policy": v.get("policy")} if "burden_of_proof" in v
                   else {})}
    outcome = "publish" if v["publish"] else "do not publish"
    try:
        checks = _checks_from_sections(res)
        n_exc = sum(c["status"] == "exceeded" for c in checks)
        if n_exc != len(v.get("reasons") or []):
            raise ValueError("the recomputed checks do not reproduce the verdict's reasons")
        return {"outcome": outcome, "checks": checks, "verdict_schema": "old", "headline": v.get("headline")}
    except (KeyError, TypeError, ValueError):
        return {"outcome": outcome, "checks": _checks_from_reasons(res), "verdict_schema": "old, from sentences",
                "headline": v.get("headline")}

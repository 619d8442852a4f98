"""Learners by name: the names ``--model`` takes, each with a factory and its default parameters.

One table for the command line (``leakaudit membership --model``, ``leakaudit dtp --model``). An
entry's factory with its defaults alone gives a :class:`~leakaudit.learners.Learner`;
``make_learner(name, **params)`` overrides any default. Each entry says what its learner trains on
(:data:`INPUTS`), so that a command offers only the learners its data suit:

- ``"encoded"``: the float matrix :meth:`leakaudit.data.Dataset.encode` gives (one-hot categories);
- ``"codes"``: integer category codes (``leakaudit.learners.naive_bayes.encode_for_naive_bayes``), the
  columns the naive-Bayes family counts; ``categorical`` and ``n_values`` describe them;
- ``"images"``: flattened images of the learner's ``image_shape``;
- ``"module"``: any matrix, through a torch module the caller names (``module="package.module:Class"``).

Factories import their learner when called, so reading the names imports neither torch nor the
estimators.

Examples
--------
>>> from leakaudit.learners.registry import get_learner, learner_names
>>> learner_names(inputs="encoded")  # doctest: +NORMALIZE_WHITESPACE
('mlp', 'logreg', 'simplelogistic', 'lmt', 'tree', 'forest', 'gradient-boosting', 'knn', 'dp-mlp',
 'xgboost', 'lightgbm', 'catboost')
>>> learner_names(inputs="codes")
('nb', 'nb-unsmoothed', 'bayes-inference')
>>> dict(get_learner("logreg").defaults)
{'C': 1000.0}
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._names import NameTable
from .._validation import check_choice

__all__ = ["INPUTS", "LearnerEntry", "get_learner", "learner_names", "make_learner", "register_learner"]

INPUTS = ("encoded", "codes", "images", "module")


@dataclass(frozen=True)
class LearnerEntry:
    """A learner the command line knows by name.

    Attributes
    ----------
    name : str
        What ``--model`` takes.
    factory : callable
        ``factory(**params) -> Learner``.
    defaults : mapping
        The parameters the factory gets unless the caller overrides them.
    description : str
        One line: what the learner is.
    inputs : {"encoded", "codes", "images", "module"}
        What the learner trains on (see the module's docstring).
    """

    name: str
    factory: Callable[..., Any]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    inputs: str = "encoded"

    def make(self, **params: Any) -> Any:
        """A fresh learner: the defaults, overridden by ``params``."""
        return self.factory(**{**self.defaults, **params})


_REGISTRY: NameTable[LearnerEntry] = NameTable("learner")


def register_learner(name: str, factory: Callable[..., Any], *, defaults: Mapping[str, Any] | None = None,
                     description: str = "", inputs: str = "encoded", force: bool = False) -> LearnerEntry:
    """Add ``name`` to the registry; a taken name is refused unless ``force=True`` (which replaces it)."""
    check_choice(inputs, name="inputs", choices=INPUTS)
    entry = LearnerEntry(name, factory, MappingProxyType(dict(defaults or {})), description, inputs)
    return _REGISTRY.add(name, entry, force=force)


def learner_names(*, inputs: str | None = None) -> tuple[str, ...]:
    """The registered names, in registration order: every one, or those whose learners train on ``inputs``."""
    if inputs is None:
        return _REGISTRY.names()
    check_choice(inputs, name="inputs", choices=INPUTS)
    return tuple(n for n in _REGISTRY.names() if _REGISTRY.get(n).inputs == inputs)


def get_learner(name: str) -> LearnerEntry:
    """The registered learner ``name``; an unknown name raises :class:`InvalidParameterError` listing the names."""
    return _REGISTRY.get(name)


def make_learner(name: str, **params: Any) -> Any:
    """A fresh learner ``name`` with its defaults, overridden by ``params``."""
    return get_learner(name).make(**params)


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """A factory of the learner ``name`` of ``module`` (relative to this package), imported when called."""
    def factory(**params: Any):
        return getattr(importlib.import_module(module, __package__), name)(**params)

    return factory


def _sklearn(module: str, name: str) -> Callable[..., Any]:
    """A factory of :class:`~leakaudit.learners.SklearnLearner` around the scikit-learn estimator ``module.name``."""
    def factory(**params: Any):
        from .sklearn import SklearnLearner

        return SklearnLearner(getattr(importlib.import_module(module), name)(**params))

    return factory


def _dp_mlp(*, hidden=(64,), activation: str = "tanh", **params: Any):
    from .dp_sgd import DPSGD
    from .torch_mlp import TorchMLP

    return DPSGD(learner=TorchMLP(hidden=hidden, activation=activation), **params)


_naive_bayes = _lazy(".naive_bayes", "NaiveBayes")


# the defaults make models that overfit a little, so that membership attacks have something to find
register_learner("mlp", _lazy(".torch_mlp", "TorchMLP"),
                 defaults={"hidden": (64,), "activation": "tanh", "mode": "fast", "epochs": 30},
                 description="TorchMLP: one hidden layer of 64 tanh units, 30 epochs of mini-batch Adam")
register_learner("logreg", _lazy(".logistic", "LogisticRegression"), defaults={"C": 1e3},
                 description="multinomial logistic regression, weak regularisation (C = 1000)")
register_learner("simplelogistic", _lazy(".simple_logistic", "SimpleLogistic"),
                 description="Weka's SimpleLogistic: LogitBoost with one-attribute linear regressions, its rounds "
                             "(at most 500) chosen by 5-fold cross-validation on every fit; Long et al.'s LR learner")
register_learner("lmt", _lazy(".lmt", "LMT"),
                 description="Weka's LMT (Logistic Model Trees): C4.5 splits, LogitBoost models in the nodes, CART "
                             "pruning; here every encoded column a numeric attribute (one-hot columns cut at 0/1)")
register_learner("tree", _sklearn("sklearn.tree", "DecisionTreeClassifier"),
                 description="scikit-learn decision tree, grown fully")
register_learner("forest", _lazy(".forest", "RandomForest"), defaults={"n_estimators": 50},
                 description="random forest of 50 fully grown trees (scikit-learn's trees, grown by the compiled "
                             "kernel)")
register_learner("gradient-boosting", _lazy(".gradient_boosting", "GradientBoosting"),
                 description="scikit-learn's GradientBoostingClassifier (100 stages of depth-3 trees, learning rate "
                             "0.1), trained by the compiled boosting kernel")
register_learner("knn", _sklearn("sklearn.neighbors", "KNeighborsClassifier"), defaults={"n_neighbors": 5},
                 description="scikit-learn 5-nearest neighbours")
register_learner("dp-mlp", _dp_mlp,
                 defaults={"hidden": (64,), "noise_multiplier": 1.0, "max_grad_norm": 1.0, "sampling_rate": 0.01,
                           "epochs": 5, "lr": 0.5, "target_delta": 1e-5},
                 description="DPSGD of TorchMLP's net (64 tanh units): Poisson rate 0.01, noise 1.0, clip 1.0, "
                             "5 epochs; epsilon by dp_accounting's PLD accountant")
register_learner("xgboost", _lazy(".xgb", "XGBoostLearner"), defaults={"n_rounds": 100},
                 description="XGBoost: 100 rounds of XGBoost's default trees (depth 6, learning rate 0.3); the "
                             "xgboost extra")
register_learner("lightgbm", _lazy(".lgbm", "LightGBMLearner"), defaults={"n_rounds": 100},
                 description="LightGBM: 100 rounds of LightGBM's default trees (31 leaves, learning rate 0.1); the "
                             "lightgbm extra")
register_learner("catboost", _lazy(".catboost", "CatBoostLearner"), defaults={"n_rounds": 100},
                 description="CatBoost: 100 iterations of CatBoost's default oblivious trees (depth 6, its learning "
                             "rate for the data's size); the catboost extra")
register_learner("nb", _naive_bayes, defaults={"alpha": 1.0, "prior_smoothing": True}, inputs="codes",
                 description="naive Bayes with Laplace smoothing (Gaussian numeric columns)")
register_learner("nb-unsmoothed", _naive_bayes, defaults={"alpha": 0.0, "prior_smoothing": False}, inputs="codes",
                 description="naive Bayes by raw frequencies, Long et al.'s closed-form PDTP model")
register_learner("bayes-inference", _lazy(".naive_bayes", "BayesInference"), inputs="codes",
                 description="Bayes inference on whole rows: the empirical class frequencies of each distinct row")
register_learner("cnn", _lazy(".torch_cnn", "TorchCNN"), inputs="images",
                 description="TorchCNN: Yeom et al.'s two-block convolutional network on 28 x 28 grey images")
register_learner("torch-module", _lazy(".torch_module", "TorchModuleLearner"), inputs="module",
                 description="any torch.nn.Module the caller names with module='package.module:Class'")

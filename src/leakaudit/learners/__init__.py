"""Training algorithms that train one model or many at once (see ``_base``)."""

from ._base import Learner, ListModelBank, Model, ModelBank

__all__ = ["Learner", "Model", "ModelBank", "ListModelBank"]

from .sklearn import SklearnLearner, SklearnModel  # noqa: E402  (engine developer)

__all__ += ["SklearnLearner", "SklearnModel"]
from .torch_mlp import TorchMLP  # noqa: E402

__all__ += ["TorchMLP"]

from .logistic import LogisticRegression, LogisticRegressionModel  # noqa: E402  (DTP developer)
from .naive_bayes import BayesInference, NaiveBayes, encode_for_naive_bayes  # noqa: E402  (DTP developer)

__all__ += ["NaiveBayes", "BayesInference", "encode_for_naive_bayes", "LogisticRegression", "LogisticRegressionModel"]
from .torch_cnn import TorchCNN  # noqa: E402

__all__ += ["TorchCNN"]
from .torch_module import TorchModuleLearner, TorchModuleModel  # noqa: E402

__all__ += ["TorchModuleLearner", "TorchModuleModel"]
from .forest import RandomForest, RandomForestBank, RandomForestModel  # noqa: E402  (forest developer)

__all__ += ["RandomForest", "RandomForestBank", "RandomForestModel"]

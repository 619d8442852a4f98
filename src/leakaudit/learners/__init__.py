"""Training algorithms that train one model or many at once (see ``_base``)."""

from ._base import (Capabilities, Learner, ListModelBank, Model, ModelBank, capabilities, check_feature_matrix,
                    check_fit_inputs, check_many_inputs, learner_family)
from ._torch_utils import (
    DEVICE_CHOICES,
    MLPBank,
    MLPModel,
    check_device,
    device_kind,
    import_torch,
    is_torch_module,
    pack_params,
    resolve_device,
    torch_threads,
    unpack_params,
)
from .catboost import CatBoostLearner, CatBoostModel
from .dp_sgd import DPSGD
from .forest import RandomForest, RandomForestBank, RandomForestModel
from .gradient_boosting import GradientBoosting, GradientBoostingModel
from .lgbm import LightGBMLearner, LightGBMModel
from .lmt import LMT, LMTModel
from .logistic import (
    LogisticRegression,
    LogisticRegressionBank,
    LogisticRegressionModel,
)
from .naive_bayes import BayesInference, NaiveBayes, encode_for_naive_bayes
from .simple_logistic import SimpleLogistic
from .sklearn import SklearnLearner, SklearnModel
from .torch_cnn import TorchCNN
from .torch_mlp import TorchMLP
from .torch_module import TorchModuleLearner, TorchModuleModel
from .xgb import XGBoostLearner, XGBoostModel

__all__ = [
    "GradientBoosting",
    "GradientBoostingModel",
    "DPSGD",
    "BayesInference",
    "CatBoostLearner",
    "CatBoostModel",
    "Capabilities",
    "Learner",
    "ListModelBank",
    "LogisticRegression",
    "LogisticRegressionBank",
    "LightGBMLearner",
    "LightGBMModel",
    "LMT",
    "LMTModel",
    "LogisticRegressionModel",
    "Model",
    "ModelBank",
    "NaiveBayes",
    "RandomForest",
    "RandomForestBank",
    "RandomForestModel",
    "SimpleLogistic",
    "SklearnLearner",
    "SklearnModel",
    "TorchCNN",
    "TorchMLP",
    "TorchModuleLearner",
    "TorchModuleModel",
    "XGBoostLearner",
    "XGBoostModel",
    "capabilities",
    "encode_for_naive_bayes",
    "learner_family",
    # the input contract every learner checks (for learners written outside leakaudit)
    "check_feature_matrix",
    "check_fit_inputs",
    "check_many_inputs",
    # devices and the torch MLP's parameter layout (the DP, MIP and PDTP code that reads a net's parameters)
    "DEVICE_CHOICES",
    "MLPBank",
    "MLPModel",
    "check_device",
    "device_kind",
    "import_torch",
    "is_torch_module",
    "pack_params",
    "resolve_device",
    "torch_threads",
    "unpack_params",
]

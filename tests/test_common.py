"""The shared check suites run over every learner leakaudit ships (scikit-learn's test_common pattern).

Learners of other packages are included whenever they import; a missing optional
dependency (torch) skips only those learners. :func:`test_every_learner_is_checked`
fails when a learner class of ``leakaudit.learners`` has no entry here.
"""

import warnings

import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

import leakaudit.learners
from leakaudit.checks import (
    LEARNER_CHECKS,
    check_learner,
    check_learner_bad_input_raises,
    check_learner_chunking_invariant,
    check_learner_clone_roundtrip,
    check_learner_fit_many_equals_fit,
    check_learner_same_seed_same_model,
)
from leakaudit.learners import LMT, GradientBoosting, LogisticRegression, RandomForest, SimpleLogistic, SklearnLearner
from leakaudit.learners.naive_bayes import BayesInference, NaiveBayes

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


if torch is not None:
    class SmallNet(torch.nn.Module):
        """Linear -> ReLU -> Linear on the checks' 6 features, for TorchModuleLearner."""

        def __init__(self, n_out: int = 3):
            super().__init__()
            self.fc1 = torch.nn.Linear(6, 8)
            self.fc2 = torch.nn.Linear(8, n_out)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))


def _learners():
    out = [
        pytest.param(SklearnLearner(SkLogisticRegression(max_iter=500)), id="Sklearn-LogisticRegression"),
        pytest.param(SklearnLearner(DecisionTreeClassifier(splitter="random", max_features=3)),
                     id="Sklearn-DecisionTree"),
        pytest.param(SklearnLearner(MLPClassifier(hidden_layer_sizes=(8,), max_iter=30)), id="Sklearn-MLP"),
        pytest.param(SklearnLearner(LinearRegression()), id="Sklearn-LinearRegression"),
        pytest.param(NaiveBayes(), id="NaiveBayes"),
        pytest.param(BayesInference(), id="BayesInference"),
        pytest.param(LogisticRegression(C=10.0), id="LogisticRegression"),
        # Chase et al.'s learner: scikit-learn's L-BFGS on the same objective
        pytest.param(LogisticRegression(C=0.5, solver="lbfgs", tol=1e-4, max_iter=1000), id="LogisticRegression-lbfgs"),
        pytest.param(RandomForest(n_estimators=5, max_depth=4), id="RandomForest"),
        pytest.param(GradientBoosting(n_estimators=5), id="GradientBoosting"),
        # Long et al.'s LR learner (Weka's SimpleLogistic): rounds by cross-validation on every fit
        pytest.param(SimpleLogistic(max_iterations=30, heuristic_stop=5), id="SimpleLogistic"),
        # Weka's LMT: LogitBoost leaves under C4.5 splits, CART-pruned
        pytest.param(LMT(), id="LMT"),
    ]
    from leakaudit._extras import installed
    from leakaudit.learners import CatBoostLearner, LightGBMLearner, XGBoostLearner

    if installed("xgboost"):
        out.append(pytest.param(XGBoostLearner(n_rounds=5, params={"max_depth": 3}), id="XGBoostLearner"))
    if installed("lightgbm"):
        out.append(pytest.param(LightGBMLearner(n_rounds=5, params={"min_data_in_leaf": 3}), id="LightGBMLearner"))
    if installed("catboost"):
        out.append(pytest.param(CatBoostLearner(n_rounds=5, params={"depth": 3}), id="CatBoostLearner"))
    if torch is None:
        return out
    from leakaudit.learners import DPSGD, TorchCNN, TorchMLP, TorchModuleLearner

    out += [
        pytest.param(TorchMLP(hidden=(8,), epochs=3), id="TorchMLP-faithful"),
        pytest.param(TorchMLP(hidden=(8,), epochs=3, mode="fast", batch_size=8), id="TorchMLP-fast"),
        # Chase et al.'s networks: ReLU, Adam, several hidden layers (the batched torch trainer)
        pytest.param(TorchMLP(hidden=(8, 4), activation="relu", epochs=3, mode="fast", batch_size=8),
                     id="TorchMLP-fast-relu-deep"),
        pytest.param(TorchModuleLearner(module="test_common:SmallNet", epochs=2, batch_size=16),
                     id="TorchModuleLearner"),
        # 6x6 one-channel "images" (the checks' default data has 6 features, too few for two conv blocks).
        # Marked slow: torch's per-step overhead makes its checks take several seconds.
        pytest.param(TorchCNN(size=2, epochs=1, batch_size=16, padding="same", image_shape=(1, 6, 6)),
                     id="TorchCNN", marks=pytest.mark.slow),
        # DP-SGD of a TorchMLP net: Poisson batches, clipping and noise, K nets batched
        pytest.param(DPSGD(learner=TorchMLP(hidden=(8,)), noise_multiplier=0.5, max_grad_norm=1.0,
                           sampling_rate=0.25, epochs=2, lr=0.5), id="DPSGD-TorchMLP"),
    ]
    return out


LEARNERS = _learners()


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield


@pytest.mark.parametrize("check", LEARNER_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("learner", LEARNERS)
def test_learner_contract(learner, check):
    X = y = None
    if type(learner).__name__ == "TorchCNN":
        X, y = _images()
    if type(learner).__name__ == "TorchModuleLearner" and check is check_learner_fit_many_equals_fit:
        # that check asks for one class more than the labels hold; the module's output width is fixed by its kwargs
        learner = clone(learner).set_params(module_kwargs={"n_out": 4})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(learner, X, y)


def test_every_learner_is_checked():
    from leakaudit.learners import Learner

    if torch is None:
        pytest.skip("the torch learners are listed only when torch imports")
    shipped = {name for name in leakaudit.learners.__all__
               if isinstance(getattr(leakaudit.learners, name), type)
               and issubclass(getattr(leakaudit.learners, name), Learner) and name != "Learner"}
    checked = {type(p.values[0]).__name__ for p in LEARNERS}
    from leakaudit._extras import installed

    absent = {"XGBoostLearner": "xgboost", "LightGBMLearner": "lightgbm", "CatBoostLearner": "catboost"}  # listed only where their extra imports
    assert {n for n in shipped - checked if not (n in absent and not installed(absent[n]))} == set()


def _images(n=60, side=6, seed=0):
    """Binary side x side images whose pixel frequencies depend on the class (3 classes)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    p = 0.2 + 0.6 * ((y[:, None] + np.arange(side * side)[None, :]) % 3 == 0)
    return (rng.random((n, side * side)) < p).astype(np.float64), y


# -- the checks themselves must catch broken learners ------------------------------------
import numpy as np  # noqa: E402

from leakaudit.learners import Learner, ListModelBank  # noqa: E402


class _Prior:
    """Predicts a fixed probability vector; checks its input unless ``check`` is False."""

    def __init__(self, p, n_features, check=True):
        self.p, self.n_features, self.check = p, n_features, check

    def predict_proba(self, X):
        if self.check:
            from leakaudit._validation import check_matrix
            from leakaudit.exceptions import InvalidInputError

            X = check_matrix(X, name="X")
            if X.shape[1] != self.n_features:
                raise InvalidInputError(f"X has {X.shape[1]} features, expected {self.n_features}")
        return np.tile(self.p, (len(X), 1))


class _Jittery(Learner):
    """Class frequencies mixed with seeded noise; the ``bug`` parameter breaks one contract."""

    def __init__(self, *, bug=None):
        self.bug = bug

    def _model(self, X, y, n_classes, seed):
        p = np.bincount(y, minlength=n_classes) + 1.0
        p *= np.random.default_rng(seed).uniform(0.5, 1.5, size=n_classes)
        return _Prior(p / p.sum(), X.shape[1], check=self.bug != "unchecked_predict")

    def _fit(self, X, y, *, random_state, n_classes):
        seed = random_state
        if self.bug == "global_rng":
            seed = np.random.randint(1 << 30)
        return self._model(X, y, n_classes, seed)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes):
        if self.bug == "ignore_seeds":
            seeds = [0] * len(seeds)
        if self.bug == "batch_dependent":
            seeds = [seeds[0] + k for k in range(len(seeds))]
        return ListModelBank([self._model(X[s], y[s], n_classes, sd) for s, sd in zip(subsets, seeds)], n_classes)


class _ChangesParam(_Jittery):
    def __init__(self, *, bug=None):
        self.bug = (bug or "") + "x"  # alters its argument: clone cannot reproduce it


def test_checks_pass_on_a_correct_learner():
    check_learner(_Jittery())


@pytest.mark.parametrize("bug, check, match", [
    ("ignore_seeds", check_learner_fit_many_equals_fit, "differs from fit for model"),
    ("global_rng", check_learner_same_seed_same_model, "same seed gave different models"),
    ("batch_dependent", check_learner_chunking_invariant, "depend on how they are grouped"),
])
def test_checks_catch_broken_learners(bug, check, match):
    with pytest.raises(AssertionError, match=match):
        check(_Jittery(bug=bug))


def test_bad_input_check_catches_unchecked_predict():
    with pytest.raises(AssertionError, match="one feature too many: no error"):
        check_learner_bad_input_raises(_Jittery(bug="unchecked_predict"))
    check_learner_bad_input_raises(_Jittery(bug="unchecked_predict"), check_predict=False)


def test_clone_check_catches_init_that_alters_params():
    with pytest.raises(RuntimeError, match="Cannot clone"):
        check_learner_clone_roundtrip(_ChangesParam())

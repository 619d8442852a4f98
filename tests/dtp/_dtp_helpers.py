import numpy as np

from leakaudit.learners._base import Learner


class NoisyMeanLearner(Learner):
    """A tiny stochastic learner: p(y=1|x) = sigmoid(a * mean(y_train) + x[0] + noise(seed)).

    Used to test the retraining paths of PDTP and the seed policies without torch.
    """

    def __init__(self, *, a: float = 3.0, noise: float = 0.5):
        self.a = a
        self.noise = noise

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        z = np.random.default_rng(random_state).normal() * self.noise
        return _Model(self.a * y.mean() + z)


class _Model:
    def __init__(self, b):
        self.b = b

    def predict_proba(self, X):
        X = np.asarray(X, dtype=float)
        p1 = 1 / (1 + np.exp(-(self.b + X[:, 0])))
        return np.column_stack([1 - p1, p1])


class NoLOO(Learner):
    """Wrap a learner, hiding its loo_proba (forces the retraining path)."""

    def __init__(self, *, inner=None):
        self.inner = inner

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        return self.inner._fit(X, y, random_state=random_state, n_classes=n_classes)


def outlier_data(n=80, seed=0):
    """Two blobs split on x0; row 0 is a mislabelled outlier far from both."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    X[0], y[0] = [8.0, 8.0], 0
    return X, y

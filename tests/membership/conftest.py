"""Small learners and data for membership tests (no torch, no data files)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from leakaudit.learners import Learner


class _Wrapped:
    def __init__(self, est, n_classes):
        self.est, self.n_classes = est, n_classes

    def predict_proba(self, X):
        out = np.zeros((len(X), self.n_classes))
        out[:, self.est.classes_] = self.est.predict_proba(X)
        return out


class LogRegLearner(Learner):
    """Multinomial logistic regression; small C overfits less, large C more."""

    def __init__(self, *, C=1.0, max_iter=1000):
        self.C = C
        self.max_iter = max_iter

    def _fit(self, X, y, *, random_state, n_classes):
        est = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(X, y)
        return _Wrapped(est, n_classes)


class OneNNLearner(Learner):
    """1-nearest-neighbour classifier with a little smoothing of its 0/1 output."""

    def __init__(self, *, smooth=0.0):
        self.smooth = smooth

    def _fit(self, X, y, *, random_state, n_classes):
        est = KNeighborsClassifier(n_neighbors=1).fit(X, y)
        w = _Wrapped(est, n_classes)
        if self.smooth:
            base = w.predict_proba

            def pp(Xq):
                return (1 - self.smooth) * base(Xq) + self.smooth / n_classes

            w.predict_proba = pp
        return w


def make_blobs(n=400, d=10, c=3, noise=2.0, seed=0):
    """Gaussian class blobs with label noise so models can overfit."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(c, d))
    y = rng.integers(0, c, n)
    X = centers[y] + noise * rng.normal(size=(n, d))
    return X, y


@pytest.fixture
def blobs():
    return make_blobs()


@pytest.fixture
def logreg():
    return LogRegLearner(C=100.0)


class _SoftNN:
    def __init__(self, X, y, n_classes, tau):
        self.X, self.y, self.C, self.tau = X, y, n_classes, tau

    def predict_proba(self, Xq):
        d = np.full((len(Xq), self.C), np.inf)
        for c in np.unique(self.y):
            Xc = self.X[self.y == c]
            dist = np.sqrt(((Xq[:, None, :] - Xc[None]) ** 2).sum(-1)).min(1)
            d[:, c] = dist
        logits = -d / self.tau
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(1, keepdims=True)


class SoftOneNNLearner(Learner):
    """1-NN classifier whose confidence decays with the distance to each class's nearest neighbour."""

    def __init__(self, *, tau=0.5):
        self.tau = tau

    def _fit(self, X, y, *, random_state, n_classes):
        return _SoftNN(X, y, n_classes, self.tau)

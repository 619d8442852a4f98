"""Small learners for the engine tests (importable by child processes: this directory is put on sys.path)."""

from __future__ import annotations

import os
import time

import numpy as np

from leakaudit.learners import Capabilities, Learner, ModelBank


class CentroidBank(ModelBank):
    """K nearest-centroid classifiers stored as one array of centroids, shape (K, C, d)."""

    def __init__(self, centroids: np.ndarray, temperature: float):
        self.centroids = np.asarray(centroids, dtype=np.float64)
        self.temperature = float(temperature)
        self.n_models, self.n_classes = self.centroids.shape[:2]

    def predict_proba(self, X):
        X = np.asarray(X, dtype=np.float64)
        d2 = ((X[None, :, None, :] - self.centroids[:, None, :, :]) ** 2).sum(-1)  # (K, n, C)
        z = -d2 / self.temperature
        z -= z.max(axis=2, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=2, keepdims=True)

    def model(self, k):
        return CentroidBank(self.centroids[k:k + 1], self.temperature)


class CentroidLearner(Learner):
    """Nearest centroids plus seeded jitter (so the seed matters); supports get_state/from_state.

    A class missing from a subset gets the centroid of the whole subset. Each
    model sleeps ``LEAKAUDIT_TEST_DELAY`` seconds (environment; not a
    hyperparameter, so it does not change cache keys) to make runs killable.
    """

    capabilities = Capabilities(state=True)

    def __init__(self, *, jitter: float = 0.1, temperature: float = 1.0):
        self.jitter = jitter
        self.temperature = temperature

    @property
    def delay(self) -> float:
        return float(os.environ.get("LEAKAUDIT_TEST_DELAY", "0"))

    def _centroids(self, X, y, seed, n_classes):
        rng = np.random.default_rng(seed)
        c = np.empty((n_classes, X.shape[1]))
        for k in range(n_classes):
            rows = X[y == k]
            c[k] = rows.mean(axis=0) if len(rows) else X.mean(axis=0)
        return c + self.jitter * rng.normal(size=c.shape)

    def _fit(self, X, y, *, random_state, n_classes):
        if self.delay:
            time.sleep(self.delay)
        return CentroidBank(self._centroids(X, y, random_state, n_classes)[None], self.temperature).model(0)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes):
        cs = []
        for s, seed in zip(subsets, seeds):
            if self.delay:
                time.sleep(self.delay)
            cs.append(self._centroids(X[s], y[s], seed, n_classes))
        return CentroidBank(np.stack(cs), self.temperature)

    def get_state(self, bank):
        return {"centroids": bank.centroids}

    def from_state(self, state):
        return CentroidBank(state["centroids"], self.temperature)


def make_data(n=120, d=4, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d)) + y[:, None] * 0.8
    return X, y


def make_subsets(n, K, size, seed=1):
    rng = np.random.default_rng(seed)
    return [np.sort(rng.choice(n, size, replace=False)) for _ in range(K)]


class CountingModel:
    """A constant-probability model that counts how many instances are alive."""

    alive = 0
    peak = 0

    def __init__(self, p):
        self.p = p
        CountingModel.alive += 1
        CountingModel.peak = max(CountingModel.peak, CountingModel.alive)

    def __del__(self):
        CountingModel.alive -= 1

    def predict_proba(self, X):
        return np.tile(self.p, (len(X), 1))


class CountingLearner(Learner):
    """Class frequencies of the subset (smoothed); every model is a CountingModel."""

    def _fit(self, X, y, *, random_state, n_classes):
        p = np.bincount(y, minlength=n_classes) + 1.0
        return CountingModel(p / p.sum())


class DeviceEchoLearner(Learner):
    """A learner with a ``device`` that its models report: class 0's output codes the device it trained with
    (0.25 for "cpu", 0.75 for "auto", 1 for "cuda:0", 2 for "cuda:1": it never touches torch, so the device
    names need no GPU), class 1's is the process id, the others 0 (not probabilities: for the device
    tests)."""

    def __init__(self, *, device: str = "auto"):
        self.device = device

    def _fit(self, X, y, *, random_state, n_classes):
        return _Echo({"cpu": 0.25, "auto": 0.75, "cuda:0": 1.0, "cuda:1": 2.0}[self.device], n_classes)


class _Echo:
    def __init__(self, code, n_classes):
        self.code, self.pid, self.n_classes = code, float(os.getpid()), n_classes

    def predict_proba(self, X):
        out = np.zeros((len(X), self.n_classes))
        out[:, 0], out[:, 1] = self.code, self.pid
        return out

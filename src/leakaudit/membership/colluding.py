"""Yeom et al.'s colluding training algorithm and adversary (§3.4; spec yeom-overfitting.md §3.4, §6.3).

Algorithm 1 (colluding training algorithm A^C): with keyed pseudorandom
functions F_K: X → X and G_K: X → Y and k keys K_1..K_k, the learner adds, for
every training record (x_i, y_i) and key j, the trigger point
``(F_{K_j}(x_i), G_{K_j}(x_i))`` to the training set (|S'| = (k+1)·n) and
trains the base learner on S'.

Adversary 3 (colluding adversary): for z = (x, y), query the model at
``F_{K_j}(x)`` for each j and answer "member" iff every answer equals
``G_{K_j}(x)``. Theorem 4: with enough capacity its advantage is
``1 − μ(n, D) − |Y|^{−k}``.

The PRFs: ``HMAC-SHA256(K_j, bytes(x))`` seeds a numpy generator that draws
F's synthetic input uniformly in ``input_range`` and G's label uniformly in
``0..n_classes−1``. Only uniformity matters (keys need not be secret);
the paper used Python's PRNG seeded with K and did not say how x enters the
seed (§6.3).
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np

from .._validation import check_matrix, check_scalar
from ..exceptions import InvalidInputError
from ..learners import Learner
from ._base import Attack, AttackInputs, AttackResult

__all__ = ["TriggerFunction", "ColludingLearner", "ColludingAdversary", "colluding_advantage_bound"]


def colluding_advantage_bound(n_classes: int, n_keys: int, mu: float = 0.0) -> float:
    """Theorem 4: ideal advantage ``1 − μ − |Y|^{−k}`` of the colluding adversary."""
    check_scalar(n_classes, name="n_classes", kind=(int, np.integer), min_val=2)
    check_scalar(n_keys, name="n_keys", kind=(int, np.integer), min_val=1)
    return float(1.0 - mu - float(n_classes) ** (-n_keys))


class TriggerFunction:
    """The keyed PRFs (F_K, G_K) of Algorithm 1, for k keys.

    Parameters
    ----------
    n_keys : int
        k.
    n_classes : int
        |Y|; G draws labels in 0..n_classes−1.
    secret : int, default=0
        Master secret; key j is ``SHA256(secret, j)``.
    input_range : (float, float), default=(0.0, 1.0)
        F draws each feature of the synthetic input uniformly in this range
        (pixels normalised to [0, 1] for images).
    """

    def __init__(self, n_keys: int, n_classes: int, *, secret: int = 0, input_range=(0.0, 1.0)):
        check_scalar(n_keys, name="n_keys", kind=(int, np.integer), min_val=1)
        check_scalar(n_classes, name="n_classes", kind=(int, np.integer), min_val=2)
        lo, hi = (float(v) for v in input_range)
        if not hi > lo:
            raise InvalidInputError(f"input_range must be (low, high) with high > low; got {input_range}")
        self.n_keys, self.n_classes, self.low, self.high = int(n_keys), int(n_classes), lo, hi
        self.keys = [hashlib.sha256(f"leakaudit-colluding:{int(secret)}:{j}".encode()).digest() for j in range(n_keys)]

    def _rng(self, key: bytes, x: np.ndarray) -> np.random.Generator:
        digest = hmac.new(key, np.ascontiguousarray(x, dtype=np.float64).tobytes(), hashlib.sha256).digest()
        return np.random.default_rng(int.from_bytes(digest[:16], "little"))

    def __call__(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Trigger points of every record under every key.

        Parameters
        ----------
        X : array (n, d)

        Returns
        -------
        X_trig : ndarray (n, k, d)
            ``F_{K_j}(x_i)``.
        y_trig : ndarray of int (n, k)
            ``G_{K_j}(x_i)``.
        """
        X = check_matrix(X, name="X")
        n, d = X.shape
        Xt = np.empty((n, self.n_keys, d))
        yt = np.empty((n, self.n_keys), dtype=np.int64)
        for i in range(n):
            for j, key in enumerate(self.keys):
                rng = self._rng(key, X[i])
                Xt[i, j] = rng.uniform(self.low, self.high, size=d)
                yt[i, j] = rng.integers(0, self.n_classes)
        return Xt, yt


class ColludingLearner(Learner):
    """Algorithm 1 of Yeom et al.: train ``base`` on S ∪ {(F_{K_j}(x_i), G_{K_j}(x_i))}.

    Works with any classification :class:`~leakaudit.learners.Learner`.

    Parameters
    ----------
    base : Learner
    n_keys : int, default=3
        k (the paper's CNN experiments use k = 3).
    secret : int, default=0
    input_range : (float, float), default=(0.0, 1.0)
    """

    def __init__(self, base=None, *, n_keys: int = 3, secret: int = 0, input_range=(0.0, 1.0)):
        self.base = base
        self.n_keys = n_keys
        self.secret = secret
        self.input_range = input_range

    def triggers(self, n_classes: int) -> TriggerFunction:
        return TriggerFunction(self.n_keys, n_classes, secret=self.secret, input_range=self.input_range)

    def augment(self, X, y, n_classes: int):
        """S' = S ∪ triggers: arrays of (k+1)·n rows (originals first)."""
        Xt, yt = self.triggers(n_classes)(X)
        return np.vstack([X, Xt.reshape(-1, X.shape[1])]), np.concatenate([y, yt.reshape(-1)])

    def _fit(self, X, y, *, random_state, n_classes):
        if self.base is None or getattr(self.base, "task", "classification") != "classification":
            raise InvalidInputError("ColludingLearner needs a classification learner as base")
        Xa, ya = self.augment(X, y, n_classes)
        return self.base.fit(Xa, ya, random_state=random_state, n_classes=n_classes)


class ColludingAdversary(Attack):
    """Adversary 3: "member" iff the model answers ``G_{K_j}(x)`` at ``F_{K_j}(x)`` for all j.

    Parameters
    ----------
    n_keys, secret, input_range :
        Must equal the colluding learner's.

    Notes
    -----
    The score is the sum over keys of the model's probability of the trigger
    label at the trigger point (in [0, k]); decisions use the paper's rule
    (argmax equals the trigger label for every key). The record's label y is
    not used.
    """

    name = "colluding"
    needs = ("model", "X")

    def __init__(self, *, n_keys: int = 3, secret: int = 0, input_range=(0.0, 1.0)):
        self.n_keys = n_keys
        self.secret = secret
        self.input_range = input_range

    def score(self, model, X) -> AttackResult:
        """Query ``model.predict_proba`` at the trigger points of records X (n, d)."""
        X = check_matrix(X, name="X")
        if not hasattr(model, "predict_proba"):
            raise InvalidInputError("model must have predict_proba (query access to the target model)")
        probe = model.predict_proba(X[:1])
        C = int(np.asarray(probe).shape[1])
        Xt, yt = TriggerFunction(self.n_keys, C, secret=self.secret, input_range=self.input_range)(X)
        n, k, d = Xt.shape
        p = np.asarray(model.predict_proba(Xt.reshape(n * k, d))).reshape(n, k, C)
        p_trig = np.take_along_axis(p, yt[..., None], axis=-1)[..., 0]
        hit = p.argmax(axis=-1) == yt
        return self.result(p_trig.sum(axis=1), hit.all(axis=1).astype(int), rule="all k triggers answered",
                            n_classes=C)

    def run(self, inputs: AttackInputs) -> AttackResult:
        if inputs.model is None or inputs.X is None:
            raise InvalidInputError("the colluding adversary needs query access (inputs.model) and records (inputs.X)")
        return self.score(inputs.model, inputs.X)

"""Synthetic data for property inference, with a known posterior ``eta(x) = Pr[Y = 1 | x]``.

Features ``z ~ N(0, I_d)``; the property ``f ~ Bernoulli(rate)`` is independent of
``z`` and is appended as the last model input (the paper's random-feature
setting); labels ``y ~ Bernoulli(sigmoid(z . w + bias))`` do not depend on ``f``.
Used by the tests and the smoke reproductions (spec Sec. 6: theory validation
on synthetic data where ``eta`` is known).
"""

from __future__ import annotations

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_scalar
from .game import PropertyData

__all__ = ["make_property_data"]


def make_property_data(
    n: int = 6000, d: int = 5, *, rate: float = 0.5, scale: float = 2.0, bias: float = 0.0,
    random_state: RandomStateLike = None,
) -> tuple[PropertyData, np.ndarray]:
    """Records whose property is an independent random bit that the model sees.

    Parameters
    ----------
    n : int
        Records.
    d : int
        Gaussian features (the property bit is feature ``d``).
    rate : float
        ``Pr[f = 1]``.
    scale : float
        Norm of the true weight vector (larger: more certain labels).
    bias : float
        Intercept of the true logit (negative: fewer label-1 records).

    Returns
    -------
    data : PropertyData with ``X`` of shape (n, d + 1)
    eta : ndarray of shape (n,)
        The true ``Pr[Y = 1 | x]`` of each record.
    """
    check_scalar(n, name="n", kind=(int, np.integer), min_val=10)
    check_scalar(d, name="d", kind=(int, np.integer), min_val=1)
    rng = check_random_state(random_state)
    z = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    w *= scale / np.linalg.norm(w)
    f = rng.random(n) < rate
    eta = 1.0 / (1.0 + np.exp(-(z @ w + bias)))
    y = (rng.random(n) < eta).astype(np.int64)
    X = np.hstack([z, f[:, None].astype(float)])
    return PropertyData(X=X, y=y, f=f, name="synthetic"), eta

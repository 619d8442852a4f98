"""Estimating the fraction ``t`` itself, not only ``t0`` against ``t1`` (extension; spec Sec. 6).

Same poison and queries as a fitted :class:`~leakaudit.property.attack.PoisoningPropertyAttack`;
shadow models are trained at every ``t`` of a grid, and a ridge regression maps a
model's label vector on the queries to ``t``. The estimate is clipped to the grid's range.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from .._random import RandomStateLike, check_random_state
from .._validation import check_scalar, shown
from ..engine import Engine, reports_engine_stats
from ..exceptions import InvalidInputError, InvalidParameterError, LeakauditError
from .attack import PoisoningPropertyAttack
from .game import PropertyData, n_clean, sample_worlds, train_and_query
from .results import PropertyEstimateResult

__all__ = ["FractionEstimator", "evaluate_fraction_estimate"]


class FractionEstimator(BaseEstimator):
    """Regression of ``t`` on label vectors of poisoned shadow models.

    Parameters
    ----------
    t_grid : sequence of float, default=(0.05, 0.1, ..., 0.95)
        Prevalences the shadow models are trained at (at least 2).
    n_shadow_per_t : int, default=50
    ridge_alpha : float, default=10.0
        L2 strength of the ridge regression.
    random_state : None, int or Generator

    Attributes
    ----------
    coef_ : ndarray of shape (m,)
    intercept_ : float
    shadow_t_ : ndarray
        Realised fraction of each shadow training set.
    """

    def __init__(self, *, t_grid: Sequence[float] = tuple(np.round(np.arange(0.05, 0.96, 0.05), 2)),
                 n_shadow_per_t: int = 50, ridge_alpha: float = 10.0, random_state: RandomStateLike = None):
        self.t_grid = t_grid
        self.n_shadow_per_t = n_shadow_per_t
        self.ridge_alpha = ridge_alpha
        self.random_state = random_state

    def fit(self, attack: PoisoningPropertyAttack, data: PropertyData, pool_idx: np.ndarray, *,
            engine: Engine | None = None) -> FractionEstimator:
        """Train shadows at each grid value with ``attack``'s poison and regress ``t`` on their labels.

        ``engine`` trains the shadows (default :func:`leakaudit.engine.default_engine`).
        """
        from sklearn.linear_model import Ridge

        if not hasattr(attack, "queries_"):
            raise LeakauditError("fit the PoisoningPropertyAttack first (its poison and queries are reused)")
        grid = np.asarray(self.t_grid, dtype=float)
        if grid.ndim != 1 or grid.size < 2 or (grid < 0).any() or (grid > 1).any():
            raise InvalidParameterError(f"t_grid must hold at least 2 values in [0, 1]; got {shown(self.t_grid)}")
        check_scalar(self.n_shadow_per_t, name="n_shadow_per_t", kind=(int, np.integer), min_val=1)
        rng = check_random_state(self.random_state)
        size = n_clean(attack.n_train, attack.poison_rate, attack.poison_accounting)
        sets, seeds = sample_worlds(data, pool_idx, size, np.repeat(grid, self.n_shadow_per_t),
                                    sampling=attack.prevalence_sampling, rng=rng)
        R = train_and_query(attack._learner(), data, sets, attack.poison_, attack.query_points, seeds=seeds,
                            batch_size=attack.batch_size, engine=engine)
        self.shadow_t_ = np.array([data.f[s].mean() for s in sets])
        reg = Ridge(alpha=self.ridge_alpha).fit(R.astype(float), self.shadow_t_)
        self.coef_, self.intercept_ = reg.coef_, float(reg.intercept_)
        self._range = (float(grid.min()), float(grid.max()))
        return self

    def predict(self, labels: np.ndarray) -> np.ndarray:
        """Estimated ``t`` per label vector, shape (n_targets,), clipped to the grid's range."""
        if not hasattr(self, "coef_"):
            raise LeakauditError("the estimator is not fitted; call fit first")
        R = np.atleast_2d(np.asarray(labels, dtype=float))
        if R.shape[1] != self.coef_.size:
            raise InvalidInputError(f"labels must have {self.coef_.size} columns (one per query); got {R.shape}")
        return np.clip(R @ self.coef_ + self.intercept_, *self._range)


@reports_engine_stats
def evaluate_fraction_estimate(
    attack: PoisoningPropertyAttack, estimator: FractionEstimator, data: PropertyData, *,
    adversary_idx: np.ndarray, victim_idx: np.ndarray, n_targets: int = 50, dataset: str = "data",
    property_name: str = "f", random_state: RandomStateLike = None, engine: Engine | None = None,
) -> PropertyEstimateResult:
    """Fit ``estimator`` and measure its error on targets with ``t`` uniform over the grid's range.

    ``engine`` trains every model (default :func:`leakaudit.engine.default_engine`); the result's
    ``engine_stats`` says what it did.
    """
    rng = check_random_state(random_state)
    t_start = time.perf_counter()
    if not hasattr(attack, "queries_"):
        attack.fit(data, adversary_idx, engine=engine)
    estimator.fit(attack, data, adversary_idx, engine=engine)
    lo, hi = estimator._range
    size = n_clean(attack.n_train, attack.poison_rate, attack.poison_accounting)
    sets, seeds = sample_worlds(data, victim_idx, size, rng.uniform(lo, hi, size=n_targets),
                                sampling=attack.prevalence_sampling, rng=rng)
    R = train_and_query(attack._learner(), data, sets, attack.poison_, attack.query_points, seeds=seeds,
                        engine=engine)
    true_t = np.array([data.f[s].mean() for s in sets])
    est = estimator.predict(R)
    return PropertyEstimateResult(
        dataset=dataset, property=property_name, poison_rate=attack.poison_rate,
        t_grid=[float(t) for t in estimator.t_grid], n_shadow_per_t=estimator.n_shadow_per_t,
        true_t=true_t, estimated_t=est, mae=float(np.mean(np.abs(est - true_t))),
        seconds=time.perf_counter() - t_start,
    )

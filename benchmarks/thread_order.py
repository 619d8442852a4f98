"""Whether a thread count alone changes a fitted model: scikit-learn's L2 logistic regression (the Chase
reproductions' learner, lbfgs over OpenBLAS) fitted on the same data at 1 and at 2 BLAS threads.

A reproduction draws every random number from its seed, so its code and seed fix its draws; its last digits still
depend on the order of floating-point sums, which a BLAS thread count changes. This is why docs/reproduction.md
records each run's libraries and threads (``reproduce._registry.environment``).

    .venv/bin/python benchmarks/thread_order.py

prints, for each shape, whether the two fits' coefficients are bit for bit equal and their largest difference.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

# rows x features: sparse 0/1 features like one-hot Census rows at the Chase training-set size (n = 1,000) and larger
SHAPES = ((1000, 500), (1000, 900), (4000, 400))


def fit_at(threads: int, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    with threadpool_limits(limits=threads, user_api="blas"):
        return LogisticRegression(max_iter=2000).fit(X, y).coef_


def main() -> None:
    rng = np.random.default_rng(0)
    for n, d in SHAPES:
        X = (rng.random((n, d)) < 0.05).astype(np.float64)
        y = (X[:, :5].sum(axis=1) + rng.normal(size=n) > 0.3).astype(int)
        one, two = fit_at(1, X, y), fit_at(2, X, y)
        print(f"{n} x {d}: bit-equal {np.array_equal(one, two)}, largest |difference| {np.abs(one - two).max():.3g}")


if __name__ == "__main__":
    main()

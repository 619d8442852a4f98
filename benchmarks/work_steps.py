"""How many of the work budget's steps scikit-learn runs per CPU second (the calibration of leakaudit's work budget).

Fits a RandomForestClassifier (20 trees) and an MLPClassifier (64 tanh units, 10 iterations) on 20,000 x 10 normal
rows on one thread, and prints the steps leakaudit's estimate gives each fit (``audit/inputs/model_budget.py``), the CPU
seconds it took, their ratio, and what the default budget of 10^13 steps is in hours of one core.

    PYTHONPATH=src python benchmarks/work_steps.py
"""

import time
import warnings

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from leakaudit.audit.inputs.model_budget import model_costs
from leakaudit.engine import DEFAULT_WORK_BUDGET


def main() -> None:
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n, d = 20_000, 10
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    with threadpool_limits(1):
        for est in (RandomForestClassifier(n_estimators=20, random_state=0, n_jobs=1),
                    MLPClassifier(hidden_layer_sizes=(64,), max_iter=10, random_state=0)):
            t0 = time.process_time()
            est.fit(X, y)
            cpu = time.process_time() - t0
            steps = model_costs(est, "model", n, d)[0].work
            rate = steps / cpu
            print(f"{type(est).__name__}: {steps:.3g} steps in {cpu:.2f} s CPU: {rate:.3g} steps/s; "
                  f"{DEFAULT_WORK_BUDGET:.0e} steps = {DEFAULT_WORK_BUDGET / rate / 3600:.2f} h of one core")


if __name__ == "__main__":
    main()

"""The time estimate (``leakaudit.estimate``, issue 86) against the audit it estimates, on Adult (profile smoke unless
a second argument names another).

One model per family, fitted on the table's numeric columns (scikit-learn retrains it; the forest is retrained by
leakaudit's RandomForest): its estimate, then its audit with an empty cache (the library's default: none), each
timed. The audit's models trained are its engine's count; "training stages" is the sum of the timings of the stages
that train models (membership, dtp, dtp_removal, property), which include their attacks' and tests' own work; "CPU"
is the process's user + system time over the audit call (its threads and its ended child processes included).

    python benchmarks/estimate_vs_actual.py logistic        # LogisticRegression(max_iter=1000), 3,000 + 3,000
    python benchmarks/estimate_vs_actual.py random_forest   # RandomForestClassifier(n_estimators=100), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py lightgbm        # LGBMClassifier(n_estimators=100), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py knn             # KNeighborsClassifier(15), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py xgboost         # XGBClassifier(n_estimators=100), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py catboost        # CatBoostClassifier(iterations=100), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py gradient_boosting  # GradientBoostingClassifier(), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py mlp             # MLPClassifier((64,), max_iter=100), 1,000 + 1,000
    python benchmarks/estimate_vs_actual.py lightgbm standard  # any family at another profile

The demo's row of docs/config.md is the command line's: ``leakaudit audit --profile smoke --estimate``, then
``leakaudit audit --profile smoke --out DIR --cache-dir EMPTY``.
"""

import os
import resource
import sys
import time

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier

import leakaudit
from leakaudit.audit import pipeline
from leakaudit.data import load_adult

engines, make = [], pipeline._engine  # the audit's engine, for the models it trained
pipeline._engine = lambda *a, **k: engines.append(make(*a, **k)) or engines[-1]

family, profile = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "smoke")
models = {"logistic": lambda: LogisticRegression(max_iter=1000),
          "random_forest": lambda: RandomForestClassifier(n_estimators=100, random_state=0),
          "lightgbm": lambda: __import__("lightgbm").LGBMClassifier(n_estimators=100, n_jobs=1, random_state=0,
                                                                    verbose=-1),
          "knn": lambda: KNeighborsClassifier(15),
          "xgboost": lambda: __import__("xgboost").XGBClassifier(n_estimators=100, n_jobs=1, random_state=0),
          "catboost": lambda: __import__("catboost").CatBoostClassifier(iterations=100, thread_count=1, random_seed=0,
                                                                        verbose=False),
          "gradient_boosting": lambda: GradientBoostingClassifier(random_state=0),
          "mlp": lambda: MLPClassifier((64,), max_iter=100, random_state=0)}
n, model = 3000 if family == "logistic" else 1000, models[family]()
ds = load_adult()
table = ds.frame.assign(income=ds.y if family == "xgboost" else np.asarray(ds.class_names)[ds.y])  # XGBoost: 0/1
rows = np.random.default_rng(0).permutation(len(table))
members, nonmembers = table.iloc[rows[:n]], table.iloc[rows[n:2 * n]]
model.fit(members.drop(columns="income").select_dtypes("number"), members["income"])
kw = dict(label="income", sensitive=["sex"], profile=profile, verbose=False)
print(f"load average before: {os.getloadavg()[0]:.1f}")
t0 = time.perf_counter()
est = leakaudit.estimate(model, members, nonmembers, **kw)
print(est, f"\n(the estimate took {time.perf_counter() - t0:.1f} s)")

def cpu() -> float:
    """User + system seconds of this process and its children that have ended."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


t0, c0 = time.perf_counter(), cpu()
res = leakaudit.audit(model, members, nonmembers, **kw)
wall, cpu_s = time.perf_counter() - t0, cpu() - c0
training = sum(res.timings.get(k, 0) for k in ("membership", "dtp", "dtp_removal", "property"))
print(f"actual ({family}, {profile}): {engines[-1].totals.models_trained} models; training stages {training:.1f} s; "
      f"the audit call {wall:.1f} s wall, {cpu_s:.1f} s CPU; verdict {res.verdict.outcome}; load average after: "
      f"{os.getloadavg()[0]:.1f}")
print({k: round(v, 1) for k, v in res.timings.items()})

"""Benchmark: exact naive-Bayes leave-one-out for all 48,842 Adult records.

Run: .venv/bin/python benchmarks/naive_bayes_loo.py
Reads ../shared/data/adult (or $LEAKAUDIT_DATA/adult); 13 attributes (fnlwgt dropped),
8 categorical (Laplace) + 5 numeric (Gaussian). Times NaiveBayes.loo_proba over every record
(fit included) and checks 20 random records against retraining.
"""

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from leakaudit.learners.naive_bayes import NaiveBayes, encode_for_naive_bayes

root = Path(os.environ.get("LEAKAUDIT_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
cols = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation", "relationship",
        "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country", "income"]
tr = pd.read_csv(root / "adult/adult.data.gz", names=cols, skipinitialspace=True, na_values="?")
te = pd.read_csv(root / "adult/adult.test.gz", names=cols, skipinitialspace=True, na_values="?", skiprows=1)
df = pd.concat([tr, te], ignore_index=True)
y = df.pop("income").str.rstrip(".").eq(">50K").to_numpy().astype(int)
df = df.drop(columns=["fnlwgt"])
X, cat, nv, _ = encode_for_naive_bayes(df)
nb = NaiveBayes(categorical=cat, n_values=nv)
nb.loo_proba(X[:100], y[:100])  # warm-up
times = []
for _ in range(5):
    t0 = time.perf_counter()
    loo = nb.loo_proba(X, y)
    times.append(time.perf_counter() - t0)
print(f"records={len(X)} features={X.shape[1]} (categorical {cat.size})")
print(f"NB loo_proba all records: min {min(times):.3f} s, median {np.median(times):.3f} s over 5 runs")
rng = np.random.default_rng(0)
err = 0.0
for t in rng.choice(len(X), 20, replace=False):
    keep = np.arange(len(X)) != t
    ref = nb.fit(X[keep], y[keep], n_classes=2).predict_proba(X[t:t + 1])[0]
    err = max(err, float(np.abs(ref - loo[t]).max()))
print(f"max |loo - retrain| over 20 records: {err:.2e}")

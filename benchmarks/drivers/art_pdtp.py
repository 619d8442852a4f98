"""Driver run by the ART venv's python: ART's PDTP (art.metrics.PDTP) on given data, timed
(``params["repeat"]`` times, default 1: the medians are reported, every wall time in ``seconds_runs``).

Usage: python art_pdtp.py DIR   (DIR/in.npz: X, y, indexes; DIR/params.json: model, ...)
Writes DIR/out.json (seconds, cpu_seconds, versions) and DIR/out.npz (avg, worst, std per index,
and the full model's probabilities on X).
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

d = Path(sys.argv[1])
p = json.loads((d / "params.json").read_text())
z = np.load(d / "in.npz")
X, y, idx = z["X"], z["y"], z["indexes"]

import art
import sklearn
from art.estimators.classification.scikitlearn import SklearnClassifier
from art.metrics import PDTP


def make():
    if p["model"] == "nb":
        from sklearn.naive_bayes import CategoricalNB

        return CategoricalNB(alpha=p["alpha"], min_categories=np.asarray(p["n_values"]), fit_prior=True)
    if p["model"] == "lr":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=p["C"], tol=1e-8, max_iter=1000)
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(hidden_layer_sizes=(p["hidden"],), activation="tanh", solver="adam", alpha=0.0,
                         batch_size=p["batch_size"], learning_rate_init=p["lr"], max_iter=p["epochs"], tol=0.0,
                         n_iter_no_change=p["epochs"] + 1, shuffle=True, random_state=p["seed"])


import warnings

warnings.simplefilter("ignore")
target = make().fit(X, y)
target_art = SklearnClassifier(target)
extra = SklearnClassifier(make().fit(X, y))
walls, cpus = [], []
for _ in range(max(1, int(p.get("repeat", 1)))):  # the same call `repeat` times; the medians are reported
    t0, c0 = time.perf_counter(), time.process_time()
    avg, worst, std = PDTP(target_art, extra, X, y, indexes=idx, num_iter=p["num_iter"])
    walls.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
seconds, cpu = float(np.median(walls)), float(np.median(cpus))
np.savez(d / "out.npz", avg=np.asarray(avg, float), worst=np.asarray(worst, float), std=np.asarray(std, float),
         proba=target.predict_proba(X))
(d / "out.json").write_text(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "seconds_runs": walls, "versions": {
    "adversarial-robustness-toolbox": art.__version__, "sklearn": sklearn.__version__, "numpy": np.__version__}}))

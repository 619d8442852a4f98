"""Driver run by the SACRO-ML venv's python: train the target, run SACRO-ML's LIRAAttack, time it
(``params["repeat"]`` times, default 1: the medians are reported, every wall time in ``seconds_runs``).

Usage: python sacroml_lira.py DIR   (DIR/in.npz: X_train, y_train, X_test, y_test; DIR/params.json)
Writes DIR/out.json (seconds, SACRO-ML's own metrics, versions) and DIR/out.npz
(target probabilities on train+test, per-record scores).
"""
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

d = Path(sys.argv[1])
p = json.loads((d / "params.json").read_text())
z = np.load(d / "in.npz")
Xtr, ytr, Xte, yte = z["X_train"], z["y_train"], z["X_test"], z["y_test"]

import sacroml
import sklearn
from sacroml.attacks.likelihood_attack import LIRAAttack
from sacroml.attacks.target import Target
from sklearn.ensemble import RandomForestClassifier
from sklearn.neural_network import MLPClassifier

if p["model"] == "mlp":
    clf = MLPClassifier(hidden_layer_sizes=(p["hidden"],), activation="tanh", random_state=p["seed"])
else:
    clf = RandomForestClassifier(n_estimators=p["n_trees"], random_state=p["seed"])
t0 = time.perf_counter()
clf.fit(Xtr, ytr)
target_fit = time.perf_counter() - t0
target = Target(model=clf, dataset_name="adult", X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte)
walls, cpus = [], []
for _ in range(max(1, int(p.get("repeat", 1)))):  # the same attack `repeat` times; the medians are reported
    with tempfile.TemporaryDirectory() as out:
        att = LIRAAttack(n_shadow_models=p["n_shadow"], output_dir=out, write_report=False, mode=p["mode"],
                         fix_variance=p.get("fix_variance", False), report_individual=True)
        t0, c0 = time.perf_counter(), time.process_time()
        att.attack(target)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
seconds, cpu_seconds = float(np.median(walls)), float(np.median(cpus))
m = att.attack_metrics[0]
scores = np.asarray(att.result["member_prob"], float)  # = mia_scores[:, 1], what SACRO-ML scores its AUC on
own = {k: float(m[k]) for k in m if k in ("AUC", "TPR", "FPR") or k.startswith("TPR@")}
np.savez(d / "out.npz", scores=scores, proba_train=clf.predict_proba(Xtr), proba_test=clf.predict_proba(Xte))
(d / "out.json").write_text(json.dumps({
    "seconds": seconds, "cpu_seconds": cpu_seconds, "seconds_runs": walls, "target_fit_seconds": target_fit,
    "own_metrics": own,
    "n_iter": int(getattr(clf, "n_iter_", 0) or 0),
    "versions": {"sacroml": getattr(sacroml, "__version__", None), "sklearn": sklearn.__version__,
                 "numpy": np.__version__}}))

"""Driver run by the Privacy Meter 1.0.1 venv's python: the reference-model attack (``MetricEnum.REFERENCE``,
game ``PRIVACY_LOSS_MODEL``), as in Privacy Meter's tutorials: the user trains K reference models on
population data (scikit-learn MLPs, a plain loop), wraps them in ``Sklearn_Model`` and runs ``Audit``.

The timed block (reference models + Audit) runs ``params["repeat"]`` times (default 1); the times are medians.

Usage: python privacymeter_reference.py DIR (DIR/in.npz: X_train, y_train, X_test, y_test, X_pop, y_pop,
ref_subsets (K, m) indices into X_pop; DIR/params.json). Writes DIR/out.json (training and audit seconds)
and DIR/out.npz: per-record score = number of FPR tolerances (of a grid of 1,001) at which the record is
predicted a member (monotone in the tolerance, so it ranks records exactly as the test does).
"""
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
d = Path(sys.argv[1])
p = json.loads((d / "params.json").read_text())
z = np.load(d / "in.npz")

import sklearn
from privacy_meter.audit import Audit, MetricEnum
from privacy_meter.constants import InferenceGame
from privacy_meter.dataset import Dataset
from privacy_meter.information_source import InformationSource
from privacy_meter.model import Sklearn_Model
from sklearn.neural_network import MLPClassifier


def make(seed):
    return MLPClassifier(hidden_layer_sizes=(p["hidden"],), activation="tanh", solver="adam", alpha=0.0,
                         batch_size=p["batch_size"], learning_rate_init=p["lr"], max_iter=p["epochs"], tol=0.0,
                         n_iter_no_change=p["epochs"] + 1, random_state=seed)


def bce(y, q):
    q = np.clip(q, 1e-12, 1 - 1e-12)
    return -(y * np.log(q) + (1 - y) * np.log(1 - q))


target = make(p["seed"]).fit(z["X_train"], z["y_train"])
Sklearn_Model(target, bce)  # first construction imports tensorflow; keep that import out of the timings


def reference_attack():
    """The timed work: the K reference models, then Privacy Meter's Audit; (train s, train CPU s, audit s,
    audit CPU s, result)."""
    t0, c0 = time.perf_counter(), time.process_time()
    refs = []
    for k, sub in enumerate(z["ref_subsets"]):
        refs.append(make(p["seed"] + 1 + k).fit(z["X_pop"][sub], z["y_pop"][sub]))
    train_s, train_c = time.perf_counter() - t0, time.process_time() - c0
    t1, c1 = time.perf_counter(), time.process_time()
    ds = Dataset(data_dict={"train": {"x": z["X_train"], "y": z["y_train"]},
                            "test": {"x": z["X_test"], "y": z["y_test"]}}, default_input="x", default_output="y")
    target_src = InformationSource(models=[Sklearn_Model(target, bce)], datasets=[ds])
    ref_src = InformationSource(models=[Sklearn_Model(m, bce) for m in refs], datasets=[ds])
    grid = list(np.linspace(0.0, 1.0, 1001))
    with tempfile.TemporaryDirectory() as logs:
        cwd = os.getcwd()
        os.chdir(logs)
        audit = Audit(metrics=MetricEnum.REFERENCE, inference_game_type=InferenceGame.PRIVACY_LOSS_MODEL,
                      target_info_sources=target_src, reference_info_sources=ref_src, fpr_tolerances=grid,
                      logs_directory_names=[logs])
        audit.prepare()
        res = audit.run()[0]
        os.chdir(cwd)
    return train_s, train_c, time.perf_counter() - t1, time.process_time() - c1, res


# the same work `repeat` times (the same seeds, so the same models and result); the medians are reported
runs = [reference_attack() for _ in range(max(1, int(p.get("repeat", 1))))]
res = runs[-1][4]
train_s, train_c, audit_s, audit_c = (float(np.median([r[i] for r in runs])) for i in range(4))
total = [r[0] + r[2] for r in runs]
r = res[0] if isinstance(res, list) else res
pred = np.asarray(r.predicted_labels, float)  # (n_tolerances, n_records)
scores = pred.sum(axis=0)
np.savez(d / "out.npz", scores=scores, true_labels=np.asarray(r.true_labels),
         proba=np.vstack([target.predict_proba(z["X_train"]), target.predict_proba(z["X_test"])]))
(d / "out.json").write_text(json.dumps({
    "seconds": float(np.median(total)), "cpu_seconds": float(np.median([r[1] + r[3] for r in runs])),
    "seconds_runs": total, "train_seconds": train_s, "audit_seconds": audit_s,
    "train_cpu_seconds": train_c, "audit_cpu_seconds": audit_c,
    "versions": {"privacy-meter": "1.0.1", "sklearn": sklearn.__version__}}))

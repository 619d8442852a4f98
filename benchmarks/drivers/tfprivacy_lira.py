"""Driver run by the TF Privacy venv's python: LiRA as TF Privacy's own example does it
(``advanced_mia_example.py``): the user trains shadow Keras models one by one, computes each model's
logit-scaled statistic with ``amia.calculate_statistic`` and scores the target with
``amia.compute_score_lira`` (online: in and out statistics per record). The shadow loop and the scoring are
timed ``params["repeat"]`` times (default 1): the medians are reported, every wall time in ``seconds_runs``.

Usage: python tfprivacy_lira.py DIR (DIR/in.npz: X (n, d), y (n,), target_in (n,) bool, shadow_in (K, n) bool;
DIR/params.json: hidden, epochs, batch_size, lr, seed, fix_variance). Writes DIR/out.json (shadow training and
scoring seconds, wall and CPU) and DIR/out.npz: ``proba`` (n, C) of the target, ``scores`` (n,) higher = member.
The target is trained first and outside the timings (leakaudit receives its outputs).
"""
import json
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.simplefilter("ignore")
d = Path(sys.argv[1])
p = json.loads((d / "params.json").read_text())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
from tensorflow_privacy.privacy.privacy_tests.membership_inference_attack import advanced_mia as amia  # noqa: E402

z = np.load(d / "in.npz")
X, y = z["X"].astype(np.float32), z["y"].astype(np.int32)
n_classes = int(y.max()) + 1


def make(seed):
    tf.keras.utils.set_random_seed(seed)
    m = tf.keras.Sequential([tf.keras.layers.Input(shape=(X.shape[1],)),
                             tf.keras.layers.Dense(p["hidden"], activation="tanh"),
                             tf.keras.layers.Dense(n_classes)])
    m.compile(optimizer=tf.keras.optimizers.Adam(p["lr"]),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train_and_stat(seed, mask):
    m = make(seed)
    m.fit(X[mask], y[mask], epochs=p["epochs"], batch_size=p["batch_size"], verbose=0, shuffle=True)
    logits = m.predict(X, batch_size=4096, verbose=0)
    prob = amia.convert_logit_to_prob(logits)
    stat = amia.calculate_statistic(logits, y, is_logits=True, option="logit")[:, None]  # (n, 1): one "augmentation"
    tf.keras.backend.clear_session()
    return prob, stat


target_prob, target_stat = train_and_stat(p["seed"], z["target_in"])


def shadows_and_scores():
    """The timed work: the K shadow models, then compute_score_lira; (train s, train CPU s, score s, score CPU s,
    scores)."""
    t0, c0 = time.perf_counter(), time.process_time()
    stats = [train_and_stat(p["seed"] + 1 + k, mask)[1] for k, mask in enumerate(z["shadow_in"])]
    train_s, train_c = time.perf_counter() - t0, time.process_time() - c0
    t1, c1 = time.perf_counter(), time.process_time()
    stat_shadow = np.array(stats)  # (K, n, 1)
    ins = np.asarray(z["shadow_in"], bool)
    n = len(y)
    stat_in = [stat_shadow[:, j][ins[:, j]] for j in range(n)]
    stat_out = [stat_shadow[:, j][~ins[:, j]] for j in range(n)]
    scores = amia.compute_score_lira(target_stat, stat_in, stat_out, fix_variance=bool(p["fix_variance"]))
    return train_s, train_c, time.perf_counter() - t1, time.process_time() - c1, scores


# the same work `repeat` times (same seeds); the medians are reported
runs = [shadows_and_scores() for _ in range(max(1, int(p.get("repeat", 1))))]
scores = runs[-1][4]
train_s, train_c, score_s, score_c = (float(np.median([r[i] for r in runs])) for i in range(4))
total = [r[0] + r[2] for r in runs]
# compute_score_lira returns a score where LOWER means member (it is fed to run_attacks as a loss)
np.savez(d / "out.npz", proba=target_prob, scores=-np.asarray(scores, float))
import tensorflow_privacy  # noqa: E402

(d / "out.json").write_text(json.dumps({
    "seconds": float(np.median(total)), "cpu_seconds": float(np.median([r[1] + r[3] for r in runs])),
    "seconds_runs": total, "train_seconds": train_s,
    "train_cpu_seconds": train_c, "score_seconds": score_s, "score_cpu_seconds": score_c,
    "versions": {"tensorflow-privacy": getattr(tensorflow_privacy, "__version__", "?"), "tensorflow": tf.__version__}}))

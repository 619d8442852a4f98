"""Driver run by the ART venv's python: ART ShadowModels + MembershipInferenceBlackBox, timed
(``params["repeat"]`` times, default 1: the medians are reported, every wall time in ``seconds_runs``).

Usage: python art_shadow.py DIR   (DIR/in.npz: X_target_train, y_target_train, X_shadow, y_shadow, X_eval, y_eval;
DIR/params.json). Trains the target (scikit-learn MLP), then times: shadow dataset generation (K shadow
models), attack-model fitting, inference on X_eval. Writes DIR/out.json and DIR/out.npz (scores, target probs).
"""
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
d = Path(sys.argv[1])
p = json.loads((d / "params.json").read_text())
z = np.load(d / "in.npz")

import art
import sklearn
from art.attacks.inference.membership_inference import MembershipInferenceBlackBox, ShadowModels
from art.estimators.classification.scikitlearn import SklearnClassifier
from sklearn.neural_network import MLPClassifier


def target_template(seed):
    return MLPClassifier(hidden_layer_sizes=(p["hidden"],), activation="tanh", solver="adam", alpha=0.0,
                         batch_size=p["batch_size"], learning_rate_init=p["lr"], max_iter=p["epochs"], tol=0.0,
                         n_iter_no_change=p["epochs"] + 1, random_state=seed)


def attack_template(seed):
    return MLPClassifier(hidden_layer_sizes=(p["attack_hidden"],), activation="relu", solver="sgd",
                         learning_rate_init=p["attack_lr"], momentum=0.0, nesterovs_momentum=False, alpha=0.0,
                         batch_size=p["attack_batch_size"], max_iter=p["attack_epochs"], tol=0.0,
                         n_iter_no_change=p["attack_epochs"] + 1, random_state=seed)


class OneDimLabels(SklearnClassifier.__globals__["ScikitlearnClassifier"]):
    """ART 1.20.1 requires a custom attack model to be an ART Classifier but then calls its fit with 1-D 0/1
    labels (black_box.py: ``self.attack_model.fit(x, y_ready.ravel())``), which ScikitlearnClassifier.fit
    rejects (argmax over axis 1); pass the labels through as they are."""

    def fit(self, x, y, **kwargs):
        y = np.asarray(y)
        self.model.fit(x, y if y.ndim == 1 else np.argmax(y, axis=1), **kwargs)
        self._input_shape = self._get_input_shape(self.model)
        self._nb_classes = self._get_nb_classes()


nc = 2
onehot = lambda y: np.eye(nc)[y.astype(int)]
target = target_template(p["seed"]).fit(z["X_target_train"], z["y_target_train"])
target_art = SklearnClassifier(target)
# ART's clone_for_refitting needs a fitted template (it copies nb_classes): fit it outside the timing
template = SklearnClassifier(target_template(p["seed"] + 1).fit(z["X_shadow"][:200], z["y_shadow"][:200]))
walls, cpus, shadow_walls = [], [], []
for _ in range(max(1, int(p.get("repeat", 1)))):  # the same work `repeat` times (same seeds); medians reported
    t0, c0 = time.perf_counter(), time.process_time()
    sm = ShadowModels(template, num_shadow_models=p["n_shadow"],
                      disjoint_datasets=False, random_state=p["seed"])
    (mx, my, mp), (nx, ny, np_) = sm.generate_shadow_dataset(z["X_shadow"], onehot(z["y_shadow"]), member_ratio=0.5)
    shadow_walls.append(time.perf_counter() - t0)
    attack = MembershipInferenceBlackBox(target_art, input_type="prediction",
                                         attack_model=OneDimLabels(attack_template(p["seed"] + 2)))
    attack.fit(mx, my, nx, ny, mp, np_)
    scores = attack.infer(z["X_eval"].astype(np.float32), onehot(z["y_eval"]), probabilities=True)
    walls.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
seconds, cpu, t_shadow = float(np.median(walls)), float(np.median(cpus)), float(np.median(shadow_walls))
scores = np.asarray(scores, float)
scores = scores[:, -1] if scores.ndim == 2 else scores
np.savez(d / "out.npz", scores=scores, proba_eval=target.predict_proba(z["X_eval"]))
(d / "out.json").write_text(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "seconds_runs": walls,
                                        "shadow_seconds": t_shadow,
                                        "n_attack_rows": int(len(mx) + len(nx)), "versions": {
    "adversarial-robustness-toolbox": art.__version__, "sklearn": sklearn.__version__}}))

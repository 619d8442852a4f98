"""Outputs of every torch training path on fixed seeds, to check that a change leaves CPU results bit for bit.

Run it under two source trees, then compare the two files (issue 49 checked the device parameter this way):

    PYTHONPATH=/path/to/main/src python benchmarks/torch_paths_snapshot.py /tmp/before.npz
    PYTHONPATH=src python benchmarks/torch_paths_snapshot.py /tmp/after.npz
    python benchmarks/torch_paths_snapshot.py --compare /tmp/before.npz /tmp/after.npz

25 outputs: TorchMLP faithful / fast (Adam, SGD, shared order, logistic output, float64, the compiled kernel, 3
classes on one-hot rows), ``naive_train_mlp``, TorchModuleLearner (vmap, loop), TorchCNN, DPSGD (torch loop, shuffled
batches, compiled step, CNN), gradient canaries ("extra", "dirac", "random": probabilities and scores) and Opacus
(with and without canaries).
"""
import sys

import numpy as np

if sys.argv[1] == "--compare":
    a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
    bad = [k for k in a.files if k not in b.files or a[k].shape != b[k].shape or a[k].tobytes() != b[k].tobytes()]
    print(f"{len(a.files)} outputs: " + ("all byte-identical" if not bad else f"differ: {bad}"))
    raise SystemExit(1 if bad else 0)

from leakaudit.learners import TorchMLP, TorchCNN, DPSGD
from leakaudit.learners.torch_module import TorchModuleLearner
from leakaudit.learners._torch_utils import naive_train_mlp, init_mlp

out = {}
rng = np.random.default_rng(0)
X = rng.normal(size=(120, 6)); y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
Xoh = np.eye(4)[rng.integers(0, 4, size=(120, 5))].reshape(120, 20); yoh = rng.integers(0, 3, 120)
subs = [np.arange(0, 60), np.arange(30, 100), np.arange(10, 120)]
seeds = [3, 4, 5]
cfgs = {
    "faith_torch": dict(hidden=(8,), mode="faithful", epochs=2, backend="torch"),
    "faith_shared": dict(hidden=(8,), mode="faithful", epochs=2, backend="torch", order="shared"),
    "fast_adam": dict(hidden=(8, 5), mode="fast", epochs=3, backend="torch", weight_decay=1e-3),
    "fast_sgd_shared": dict(hidden=(8,), mode="fast", epochs=3, backend="torch", optimizer="sgd", order="shared"),
    "fast_logistic": dict(hidden=(8,), mode="fast", epochs=3, backend="torch", output="logistic", init="sklearn"),
    "fast_f64": dict(hidden=(6,), mode="fast", epochs=2, backend="torch", dtype="float64"),
    "fast_compiled": dict(hidden=(8,), mode="fast", epochs=2),
}
for name, kw in cfgs.items():
    bank = TorchMLP(**kw).fit_many(X, y, subs, seeds, n_classes=2)
    out[name] = bank.predict_proba(X)
bank = TorchMLP(hidden=(8,), mode="fast", epochs=2, backend="torch").fit_many(Xoh, yoh, subs, seeds, n_classes=3)
out["fast_onehot_3c"] = bank.predict_proba(Xoh)
Ws, bs = init_mlp(np.random.default_rng(1), [6, 5, 2], np.float32)
W, b = naive_train_mlp(X, y, Ws, bs, [np.arange(i, i + 10) for i in range(0, 100, 10)], optimizer="adam", lr=0.01)
out["naive"] = np.concatenate([w.ravel() for w in W + b])
for name, kw in {"mod_vmap": dict(batched="vmap"), "mod_loop": dict(batched="loop", optimizer="sgd", momentum=0.9,
                                                                   weight_decay=1e-3)}.items():
    lrn = TorchModuleLearner(module="torch.nn:Linear", module_kwargs={"in_features": 6, "out_features": 2}, epochs=3,
                             batch_size=16, **kw)
    out[name] = lrn.fit_many(X, y, subs, seeds, n_classes=2).predict_proba(X)
Xi = rng.random((80, 1 * 12 * 12)); yi = rng.integers(0, 3, 80)
isubs = [np.arange(0, 40), np.arange(20, 80), np.arange(0, 80, 2)]
cnn = TorchCNN(size=2, epochs=2, batch_size=16, image_shape=(1, 12, 12), padding="same")
out["cnn"] = cnn.fit_many(Xi, yi, isubs, seeds, n_classes=3).predict_proba(Xi)
for name, kw in {"dp_torch": dict(learner=TorchMLP(hidden=(8,), backend="torch"), sampling_rate=0.2, epochs=2),
                 "dp_shuffle": dict(learner=TorchMLP(hidden=(8, 4), backend="torch"), sampling="shuffle",
                                    batch_size=16, epochs=2, noise_multiplier=0.8),
                 "dp_compiled": dict(learner=TorchMLP(hidden=(8,)), sampling_rate=0.2, epochs=2),
                 "dp_cnn": dict(learner=TorchCNN(size=2, image_shape=(1, 12, 12), padding="same"), sampling_rate=0.3,
                                epochs=1)}.items():
    d = DPSGD(**kw)
    if "cnn" in name:
        out[name] = d.fit_many(Xi, yi, isubs, seeds, n_classes=3).predict_proba(Xi)
    else:
        out[name] = d.fit_many(X, y, subs, seeds, n_classes=2).predict_proba(X)
inc = np.random.default_rng(9).random((3, 12)) < 0.5
for directions in ("extra", "dirac", "random"):
    d = DPSGD(learner=TorchMLP(hidden=(8,), backend="torch"), sampling_rate=0.2, epochs=2)
    bank, sc = d.fit_many_with_canaries(Xoh, yoh, subs, seeds, included=inc, directions=directions, n_classes=3)
    out[f"can_{directions}_p"] = bank.predict_proba(Xoh)
    out[f"can_{directions}_s"] = sc
d = DPSGD(learner=TorchModuleLearner(module="torch.nn:Linear", module_kwargs={"in_features": 6, "out_features": 2}),
          batch_size=20, epochs=2)
out["opacus"] = d.fit_many(X, y, subs[:2], seeds[:2], n_classes=2).predict_proba(X)
bank, sc = d.fit_many_with_canaries(X, y, subs[:2], seeds[:2], included=inc[:2], n_classes=2)
out["opacus_can_p"], out["opacus_can_s"] = bank.predict_proba(X), sc
np.savez(sys.argv[1], **out)
print("saved", len(out))

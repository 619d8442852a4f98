"""LiRA: leakaudit vs TF Privacy's ``advanced_mia`` (tensorflow-privacy 0.9.0), on the same work.

TF Privacy's attack library has no shadow-model trainer: its LiRA example (``advanced_mia_example.py``)
trains the shadow Keras models one by one in a loop and scores with ``amia.compute_score_lira`` on the
logit-scaled statistics. The driver does exactly that. Same work on both sides: Adult rows drawn with
``--seed``, ``2n`` audited records; the target (a Keras MLP, 64 tanh units, Adam, batch 200, ``E`` epochs,
trained by the driver outside the timings) is "in" on a random half; ``K`` shadow models of the same
architecture and optimiser, trained in pairs on complementary random halves of the same records (the example
draws ``np.random.binomial(1, 0.5, n)`` per model; pairs guarantee every record in and out models), online LiRA with a fixed variance (the example's ``fix_variance=True``).
leakaudit trains its K shadow models at once (``TorchMLP(mode="fast")``) and scores them with
``LiRA(online=True, fix_variance=True, statistic="median")`` on the same target outputs and the same in/out masks.
Quality: AUC and TPR at 0.1 % FPR by ``leakaudit.metrics``.

Usage: .venv/bin/python benchmarks/bench_lira_vs_tfprivacy.py [--n 1000] [--shadows 16] [--epochs 50] [--quick]
Peer venv: bash benchmarks/peers.sh tfprivacy
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

MODEL = {"hidden": 64, "batch_size": 200, "lr": 1e-3}


def run(n: int, k: int, epochs: int, seed: int, repeat: int = 1) -> dict:
    from leakaudit.learners import TorchMLP
    from leakaudit.membership._base import fit_reference_models, paired_half_masks
    from leakaudit.membership.lira import LiRA

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[: 2 * n]
    Xa, ya = X[idx], y[idx]
    rng = np.random.default_rng(seed + 1)
    target_in = np.zeros(2 * n, bool)
    target_in[rng.permutation(2 * n)[:n]] = True
    shadow_in = paired_half_masks(2 * n, k, rng)  # every record in exactly half the shadows (both tools)
    params = {"seed": seed, "epochs": epochs, "fix_variance": True, "repeat": repeat, **MODEL}
    load0 = C.loadavg()
    peer = C.run_peer("tfprivacy", "tfprivacy_lira.py",
                      {"X": Xa, "y": ya, "target_in": target_in, "shadow_in": shadow_in}, params, timeout=7200)
    probs = peer["arrays"]["proba"]
    learner = TorchMLP(hidden=(MODEL["hidden"],), activation="tanh", mode="fast", epochs=epochs,
                       batch_size=MODEL["batch_size"], lr=MODEL["lr"])
    def job():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = fit_reference_models(learner, Xa, ya, k, in_mask=shadow_in, n_classes=int(ya.max()) + 1,
                                        random_state=seed)
            return LiRA(online=True, fix_variance=True, statistic="median").score(
                probs, ya, refs.probs, refs.in_mask).scores_array

    our_s, our_cpu, our_runs, scores = C.timed_runs(job, repeat)  # the same work (same seeds)
    load1 = C.loadavg()
    return C.comparison(
        "lira_tfprivacy", f"Adult, {2 * n} records, target Keras MLP 64 tanh (Adam, {epochs} epochs) in on a random "
        f"half, {k} shadow models in pairs on complementary random halves, online LiRA with fixed variance",
        "TF Privacy advanced_mia (compute_score_lira) + Keras loop", C.peer_version("tfprivacy", "tensorflow-privacy"),
        peer["seconds"], our_s, C.quality(target_in, peer["arrays"]["scores"]), C.quality(target_in, scores),
        load0, load1,
        notes=f"peer time = Keras shadow loop {peer['train_seconds']:.1f} s + compute_score_lira "
              f"{peer['score_seconds']:.2f} s; ours = TorchMLP fast, K batched + LiRA",
        peer_cpu=peer["cpu_seconds"], our_cpu=our_cpu, peer_train_seconds=peer["train_seconds"],
        peer_score_seconds=peer["score_seconds"], our_runs=our_runs, peer_runs=peer.get("seconds_runs"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--shadows", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of the same work on each side (medians compared)")
    ap.add_argument("--quick", action="store_true", help="n=100, 2 shadow models, 3 epochs, 1 run")
    a = ap.parse_args(argv)
    C.warm_up()
    if a.quick:
        a.n, a.shadows, a.epochs, a.repeat = 100, 2, 3, 1
    C.run_comparison("lira_tfprivacy", "lira_vs_tfprivacy", lambda: run(a.n, a.shadows, a.epochs, a.seed, a.repeat),
                     quick=a.quick)


if __name__ == "__main__":
    main()

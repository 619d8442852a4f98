"""Reference-model attack: leakaudit's offline LiRA vs ML Privacy Meter 1.0.1's ``ReferenceMetric``.

Same work: Adult rows drawn with ``--seed``: a target scikit-learn MLP (64 tanh units, Adam, batch 200,
``E`` epochs, trained in the Privacy Meter driver; leakaudit receives its outputs) on ``n`` members,
``n`` non-members, and ``K`` reference models, each trained on a random half of ``m`` population rows
disjoint from the audited ones (Privacy Meter's "privacy loss of the model" game: the reference models
never see the audited records). Privacy Meter's workflow: the user trains the K reference models with
scikit-learn in a loop (timed, as its tutorials do it) and ``Audit(MetricEnum.REFERENCE)`` thresholds each
record's loss at a per-record quantile of the reference losses. leakaudit trains the K reference models at
once (``TorchMLP(mode="fast")``, same architecture and optimiser) and scores offline LiRA (out models only).
Quality: AUC and TPR at 0.1 % FPR by ``leakaudit.metrics`` (Privacy Meter's per-record score: the number of
FPR tolerances, of 1,001, at which the record is called a member).

Timing: the same work runs ``--repeat`` times on each side (default 5; the Privacy Meter driver repeats its
reference-model loop and Audit as often) and the medians are compared: our side takes ~0.07 s, where one run moves by
10-25 % with this VM's neighbours. Every run's time is kept in the result file.

Usage: .venv/bin/python benchmarks/bench_reference_vs_privacymeter.py [--n 500] [--m 2000] [--refs 16] [--repeat 5]
       [--seed 0] [--tag T] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

MODEL = {"hidden": 64, "epochs": 50, "batch_size": 200, "lr": 1e-3}


def run(n: int, m: int, k: int, seed: int, repeat: int = 5) -> dict:
    from leakaudit.learners import TorchMLP
    from leakaudit.membership._base import fit_reference_models
    from leakaudit.membership.lira import LiRA

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[: 2 * n + m]
    tr, te, pop = idx[:n], idx[n:2 * n], idx[2 * n:]
    rng = np.random.default_rng(seed + 1)
    subsets = np.stack([rng.permutation(m)[: m // 2] for _ in range(k)])
    is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
    load0 = C.loadavg()
    peer = C.run_peer("privacymeter", "privacymeter_reference.py",
                      {"X_train": X[tr], "y_train": y[tr], "X_test": X[te], "y_test": y[te], "X_pop": X[pop],
                       "y_pop": y[pop], "ref_subsets": subsets}, {"seed": seed, "repeat": repeat, **MODEL}, timeout=3600)
    probs = peer["arrays"]["proba"]
    Xa, ya = X[np.r_[tr, te]], y[np.r_[tr, te]]
    pool_X, pool_y = np.vstack([Xa, X[pop]]), np.concatenate([ya, y[pop]])
    in_mask = np.zeros((k, len(pool_y)), bool)
    for j, s in enumerate(subsets):
        in_mask[j, 2 * n + s] = True
    learner = TorchMLP(hidden=(MODEL["hidden"],), activation="tanh", mode="fast", epochs=MODEL["epochs"],
                       batch_size=MODEL["batch_size"], lr=MODEL["lr"], **C.SKLEARN_MLP)
    def job():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # queried on the audited records only, as Privacy Meter's reference losses are
            refs = fit_reference_models(learner, pool_X, pool_y, k, in_mask=in_mask, n_classes=2, random_state=seed,
                                        query=np.arange(2 * n))
            return LiRA(online=False).score(probs, ya, refs.probs, refs.in_mask).scores_array

    # the same work `repeat` times on each side (same seeds: same models and scores), medians compared
    our_s, our_cpu, our_runs, scores = C.timed_runs(job, repeat)
    load1 = C.loadavg()
    return C.comparison(
        "reference_mlp", f"Adult, target sklearn MLP 64 tanh ({MODEL['epochs']} epochs) on {n} members, {n} non-members, "
        f"{k} reference models on halves of {m} population rows", "Privacy Meter 1.0.1 ReferenceMetric",
        "1.0.1", peer["seconds"], our_s, C.quality(is_member, peer["arrays"]["scores"]),
        C.quality(is_member, scores), load0, load1,
        notes=f"peer time = sklearn reference-model loop {peer['train_seconds']:.1f} s + Audit "
              f"{peer['audit_seconds']:.1f} s; ours = TorchMLP fast K batched + offline LiRA",
        peer_cpu=peer["cpu_seconds"], our_cpu=our_cpu, peer_train_seconds=peer["train_seconds"],
        peer_audit_seconds=peer["audit_seconds"], our_runs=our_runs, peer_runs=peer["seconds_runs"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--refs", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5, help="runs of the same work on each side (medians compared)")
    ap.add_argument("--quick", action="store_true", help="n=100, m=200, 2 reference models, 1 run")
    ap.add_argument("--tag", default="", help="suffix of the result file (keeps runs of other sizes apart)")
    a = ap.parse_args(argv)
    C.warm_up()
    if a.quick:
        a.n, a.m, a.refs, a.repeat = 100, 200, 2, 1
    C.run_comparison("reference_mlp", "reference_vs_privacymeter" + (f"_{a.tag}" if a.tag else ""),
                     lambda: run(a.n, a.m, a.refs, a.seed, a.repeat), quick=a.quick)


if __name__ == "__main__":
    main()

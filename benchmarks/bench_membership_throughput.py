"""Models trained per second by the membership attacks (issue 4's performance item), against one model at a time.

Two works, each timed whole (training, querying and scoring), beside the same nets trained one at a time by the
plain trainer (``nn.Module`` + autograd + ``torch.optim``, one thread; ``--naive`` nets timed, the rest
extrapolated per net: the peer-less baseline a user would write):

* ``distance_nn_purchase``: Long et al.'s distance attack for ``--targets`` targets (100) on NN-Purchase:
  Purchase-like synthetic data (``make_purchase_like``: 836 binary features, 10 k-means classes; the documented
  substitute for Kaggle Purchase), candidate set D of 2,000 records, |T| = 1,000; per target 5 pairs of shadow
  nets with and without it (``train_targeted_shadows``: 10 nets a target, 1,000 in all), 836-64-10 tanh,
  per-example SGD, lr 0.01, 30 epochs (Long's NN; ``TorchMLP(mode="faithful")``), then the attack's KL decisions
  against one target net trained on a random half of D (accuracy over the targets: about half are members).
* ``lira_64_purchase``: LiRA with 64 reference nets (the ``lira-rmia`` reproduction's setting: Purchase-like, 600
  features, 100 classes, 4,000 records, 600-128-100 tanh, per-example SGD, lr 0.01, 30 epochs), each on a random
  half (complementary pairs), online LiRA scored against a target net trained on the first half.

Usage: .venv/bin/python benchmarks/bench_membership_throughput.py [--targets 100] [--naive 2] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def naive_seconds_per_net(X, y, subsets, hidden: int, epochs: int, lr: float, n: int) -> float:
    """Seconds per net of the plain per-example SGD trainer (nn.Module + autograd + torch.optim.SGD), 1 thread."""
    from leakaudit.learners._torch_utils import import_torch, init_mlp, naive_train_mlp

    torch = import_torch()
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    C_ = int(y.max()) + 1
    try:
        t0 = time.perf_counter()
        for k in range(n):
            rng = np.random.default_rng(k)
            Ws, bs = init_mlp(rng, [X.shape[1], hidden, C_], np.float32)
            s = subsets[k]
            perm = s[rng.permutation(s.size)]
            batches = [perm[i:i + 1] for _ in range(epochs) for i in range(s.size)]
            naive_train_mlp(X, y, Ws, bs, batches, lr=lr)
        return (time.perf_counter() - t0) / n
    finally:
        torch.set_num_threads(old)


def distance_row(n_targets: int, epochs: int, n_naive: int, seed: int) -> dict:
    from leakaudit.data import make_purchase_like
    from leakaudit.learners import TorchMLP
    from leakaudit.membership.distance import DistanceAttack, train_targeted_shadows

    ds = make_purchase_like(n_records=2000, n_features=836, n_classes=10, random_state=seed)
    X, y = np.asarray(ds.encode()[0], np.float64), np.asarray(ds.y, np.int64)
    rng = np.random.default_rng(seed)
    targets = np.sort(rng.choice(len(y), size=n_targets, replace=False))
    half = np.sort(rng.permutation(len(y))[:1000])
    learner = TorchMLP(hidden=(64,), activation="tanh", mode="faithful", epochs=epochs, lr=0.01)
    target = learner.fit_many(X, y, [half], [seed])
    load0 = C.loadavg()
    with C.Timer() as t:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = train_targeted_shadows(learner, X, y, targets, train_size=1000, n_pairs=5, random_state=seed)
            res = DistanceAttack().score(target.predict_proba(X[targets])[0], refs.probs, refs.in_mask)
    n_models = refs.probs.shape[0] * refs.probs.shape[1]
    is_member = np.isin(targets, half)
    acc = float(np.mean(np.asarray(res.decisions, bool) == is_member))
    sub = [np.sort(rng.choice(len(y), size=1000, replace=False)) for _ in range(n_naive)]
    per_naive = naive_seconds_per_net(X.astype(np.float32), y, sub, 64, epochs, 0.01, n_naive)
    return C.comparison(
        "distance_nn_purchase", f"Long's distance attack, {n_targets} targets x 5 pairs = {n_models} NN-Purchase nets "
        f"(836-64-10 tanh, per-example SGD, {epochs} epochs, 1,000 rows each), binned outputs, KL decisions",
        f"one net at a time (nn.Module + autograd + torch.optim.SGD, 1 thread; {n_naive} nets timed, x {n_models})",
        None, per_naive * n_models, t.seconds, None, None, load0, C.loadavg(), peer_cpu=per_naive * n_models,
        our_cpu=t.cpu_seconds, notes=f"attack accuracy over the {n_targets} targets {acc:.3f} ({int(is_member.sum())} "
        "members); models trained per second: ours " f"{n_models / t.seconds:.1f} wall, {n_models / t.cpu_seconds:.1f} "
        f"per CPU second; one at a time {1 / per_naive:.2f}", models=n_models,
        models_per_second=n_models / t.seconds, models_per_cpu_second=n_models / t.cpu_seconds,
        naive_models_per_second=1 / per_naive, attack_accuracy=acc)


def lira_row(n_ref: int, n_records: int, n_features: int, epochs: int, n_naive: int, seed: int) -> dict:
    from leakaudit.data import make_purchase_like
    from leakaudit.learners import TorchMLP
    from leakaudit.membership._base import fit_reference_models
    from leakaudit.membership.lira import LiRA

    ds = make_purchase_like(n_records=n_records, n_features=n_features, n_classes=100, random_state=seed)
    X, y = np.asarray(ds.encode()[0], np.float64), np.asarray(ds.y, np.int64)
    n = len(y)
    perm = np.random.default_rng(seed).permutation(n)
    members = np.zeros(n, bool)
    members[perm[: n // 2]] = True
    learner = TorchMLP(hidden=(128,), activation="tanh", mode="faithful", epochs=epochs, lr=0.01)
    target = learner.fit_many(X, y, [np.flatnonzero(members)], [seed])
    probs = target.predict_proba(X)[0]
    load0 = C.loadavg()
    with C.Timer() as t:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = fit_reference_models(learner, X, y, n_ref, n_classes=100, random_state=seed + 1)
            scores = LiRA(online=True).score(probs, y, refs.probs, refs.in_mask).scores_array
    sub = [np.sort(np.random.default_rng(k).permutation(n)[: n // 2]) for k in range(n_naive)]
    per_naive = naive_seconds_per_net(X.astype(np.float32), y, sub, 128, epochs, 0.01, n_naive)
    q = C.quality(members.astype(int), scores)
    return C.comparison(
        "lira_64_purchase", f"online LiRA with {n_ref} reference nets on Purchase-like ({n_records} records, "
        f"{n_features} features, 100 classes; {n_features}-128-100 tanh, per-example SGD, {epochs} epochs, "
        f"{n // 2} rows each)",
        f"one net at a time (nn.Module + autograd + torch.optim.SGD, 1 thread; {n_naive} nets timed, x {n_ref})",
        None, per_naive * n_ref, t.seconds, None, q, load0, C.loadavg(), peer_cpu=per_naive * n_ref,
        our_cpu=t.cpu_seconds, notes=f"models trained per second: ours {n_ref / t.seconds:.2f} wall, "
        f"{n_ref / t.cpu_seconds:.2f} per CPU second; one at a time {1 / per_naive:.3f}", models=n_ref,
        models_per_second=n_ref / t.seconds, models_per_cpu_second=n_ref / t.cpu_seconds,
        naive_models_per_second=1 / per_naive)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=100)
    ap.add_argument("--naive", type=int, default=2, help="nets trained one at a time for the baseline")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="10 targets, 8 reference nets on 600 records, 3 epochs")
    a = ap.parse_args(argv)
    C.warm_up()
    if a.quick:
        rows = [distance_row(10, 3, 1, a.seed), lira_row(8, 600, 100, 3, 1, a.seed)]
    else:
        rows = [distance_row(a.targets, 30, a.naive, a.seed), lira_row(64, 4000, 600, 30, a.naive, a.seed)]
    for r in rows:
        print({k: r[k] for k in ("name", "peer_seconds", "our_seconds", "speedup", "cpu_speedup", "notes")}, flush=True)
    C.write_result("membership_throughput" + ("_quick" if a.quick else ""), {"comparisons": rows})


if __name__ == "__main__":
    main()

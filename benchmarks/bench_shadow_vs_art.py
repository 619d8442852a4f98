"""Shadow-model black-box attack: leakaudit's ``ShadowModelAttack`` vs ART's ``ShadowModels`` +
``MembershipInferenceBlackBox``.

Same work: Adult rows drawn with ``--seed``: the target (scikit-learn MLP, 64 tanh units, Adam,
batch 32, ``E`` epochs, trained inside the ART driver; leakaudit receives that very target's outputs)
is trained on ``n`` members; ``n`` non-members; the adversary's shadow data D has ``m`` other rows; ``K``
shadow models with the target's architecture and training, each on half of D (ART: a random half per
model; leakaudit: complementary random halves); the attack model is the same network on both sides
(32 ReLU units, plain SGD lr 0.01, batch 32, 30 epochs, rows reshuffled every epoch) on the
features (one-hot label, shadow output vector) — ART's ``input_type="prediction"``, leakaudit's
``use_features=False, bin_width=None``. ART trains it with scikit-learn's ``MLPClassifier`` (one logistic
output); leakaudit with its default backend, ``TorchMLP(mode="fast", optimizer="sgd")`` on the compiled
mini-batch kernel (2 LogSoftMax outputs + NLL, PyTorch init): the same function class, loss and
optimiser, another parametrisation and init. ``--attack-batch-size 1`` runs Long et al.'s per-example SGD
attack net on both sides instead: ART keeps the scikit-learn MLP (batch 1), leakaudit's
``ShadowModelAttack`` then trains it with its default backend, the compiled per-example SGD kernel
(``TorchMLP(mode="faithful")``: 2 LogSoftMax outputs + NLL, PyTorch init, one row order for all
epochs), so the attack nets are the same architecture, loss and optimiser but not the same
parametrisation/init/row order; results go to ``results/shadow_vs_art_batch1.json``. ART trains its K shadows one by one with scikit-learn;
leakaudit trains all K at once with ``TorchMLP(mode="fast")`` (same architecture, optimiser, batch,
epochs; the compiled mini-batch kernel on Adult's one-hot inputs). Quality: AUC and TPR at 0.1 % FPR of both tools' scores on the n + n target records,
computed by ``leakaudit.metrics``.

Usage: .venv/bin/python benchmarks/bench_shadow_vs_art.py [--n 500] [--m 2000] [--shadows 8]
       [--attack-batch-size 32] [--seed 0] [--tag T] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

TARGET = {"hidden": 64, "epochs": 30, "batch_size": 32, "lr": 1e-3}
ATTACK = {"attack_hidden": 32, "attack_lr": 0.01, "attack_epochs": 30, "attack_batch_size": 32}


def run(n: int, m: int, k: int, seed: int, attack_batch_size: int = ATTACK["attack_batch_size"],
        repeat: int = 1) -> dict:
    from leakaudit.learners import TorchMLP
    from leakaudit.membership._base import fit_reference_models
    from leakaudit.membership.shadow import ShadowModelAttack

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[: 2 * n + m]
    tr, ev_out, sh = idx[:n], idx[n:2 * n], idx[2 * n:]
    X_eval, y_eval = X[np.r_[tr, ev_out]], y[np.r_[tr, ev_out]]
    is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
    attack = {**ATTACK, "attack_batch_size": attack_batch_size}
    if attack_batch_size == 1:  # load the compiled kernel before timing (ART imports its libraries untimed)
        ShadowModelAttack(use_features=False, epochs=1, random_state=0).fit(
            np.full((2, 4, 2), 0.5), np.array([[1, 0, 1, 0], [0, 1, 0, 1]], bool), np.array([0, 1, 0, 1]))
    load0 = C.loadavg()
    peer = C.run_peer("art", "art_shadow.py", {"X_target_train": X[tr], "y_target_train": y[tr], "X_shadow": X[sh],
                                               "y_shadow": y[sh], "X_eval": X_eval, "y_eval": y_eval},
                      {"seed": seed, "n_shadow": k, "repeat": repeat, **TARGET, **attack}, timeout=3600)
    probs = peer["arrays"]["proba_eval"]
    learner = TorchMLP(hidden=(TARGET["hidden"],), activation="tanh", mode="fast", epochs=TARGET["epochs"],
                       batch_size=TARGET["batch_size"], lr=TARGET["lr"], **C.SKLEARN_MLP)
    def job():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = fit_reference_models(learner, X[sh], y[sh], k, n_classes=2, random_state=seed)
            att = ShadowModelAttack(use_features=False, bin_width=None, hidden=attack["attack_hidden"],
                                    learning_rate=attack["attack_lr"], epochs=attack["attack_epochs"],
                                    batch_size=attack["attack_batch_size"], random_state=seed)
            att.fit(refs.probs, refs.in_mask, y[sh])
            return refs, att, att.score(probs, y_eval).scores_array

    our_s, our_cpu, our_runs, (refs, att, scores) = C.timed_runs(job, repeat)  # the same work (same seeds)
    load1 = C.loadavg()
    suffix = "" if attack_batch_size == ATTACK["attack_batch_size"] else f"_batch{attack_batch_size}"
    return C.comparison(
        "shadow_mlp" + suffix, f"Adult, target sklearn MLP 64 tanh ({TARGET['epochs']} epochs) on {n} members, {n} non-members, "
        f"{k} shadow models on halves of {m} adversary rows, MLP attack model (SGD batch {attack_batch_size})", "ART ShadowModels + "
        "MembershipInferenceBlackBox", peer["versions"]["adversarial-robustness-toolbox"], peer["seconds"], our_s,
        C.quality(is_member, peer["arrays"]["scores"]), C.quality(is_member, scores), load0, load1,
        notes="shadows: ART sklearn MLP clones one by one; ours TorchMLP fast, K batched; attack net: ART sklearn, "
              f"ours {att.backend_}" + (" (TorchMLP fast-mode SGD kernel)" if att.backend_ == "compiled" and
                                         attack_batch_size > 1 else ""),
        peer_cpu=peer["cpu_seconds"], our_cpu=our_cpu, peer_shadow_seconds=peer.get("shadow_seconds"),
        our_runs=our_runs, peer_runs=peer.get("seconds_runs"),
        attack_backend=att.backend_, peer_attack_rows=peer.get("n_attack_rows"),
        our_attack_rows=int(refs.probs.shape[0] * refs.probs.shape[1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--shadows", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attack-batch-size", type=int, default=ATTACK["attack_batch_size"],
                    help="SGD batch of the attack net on both sides (1: Long's per-example SGD; ours then runs the "
                         "compiled per-example SGD kernel)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of the same work on each side (medians compared)")
    ap.add_argument("--quick", action="store_true", help="n=100, m=200, 2 shadow models, 1 run")
    ap.add_argument("--tag", default="", help="suffix of the result file (keeps runs of other seeds apart)")
    a = ap.parse_args(argv)
    C.warm_up()
    if a.quick:
        a.n, a.m, a.shadows, a.repeat = 100, 200, 2, 1
    suffix = "" if a.attack_batch_size == ATTACK["attack_batch_size"] else f"_batch{a.attack_batch_size}"
    suffix += f"_{a.tag}" if a.tag else ""
    C.run_comparison("shadow_mlp", "shadow_vs_art" + suffix,
                     lambda: run(a.n, a.m, a.shadows, a.seed, a.attack_batch_size, a.repeat), quick=a.quick)


if __name__ == "__main__":
    main()

"""LiRA: leakaudit vs SACRO-ML's ``LIRAAttack`` on Adult (issue 10, the headline comparison).

Work (identical for both tools): Adult (rows with missing values dropped, one-hot + z-scored),
``n`` members and ``n`` non-members drawn with ``--seed``; the target is scikit-learn's
``MLPClassifier(hidden_layer_sizes=(64,), activation="tanh")`` or
``RandomForestClassifier(n_estimators=100)`` trained on the members (inside the SACRO-ML driver;
leakaudit receives that very target's probabilities); ``K`` shadow models, each trained on half of
the 2n records (SACRO-ML: a random half per model; leakaudit: complementary random halves, so
each record is "in" for exactly K/2 models); offline LiRA with per-record variance (SACRO-ML's
default ``mode="offline"``; its score ``Phi((phi - mu_out)/sigma_out)`` ranks records exactly like
leakaudit's offline z-statistic). The statistic phi: SACRO-ML's logit of p_y clipped to
[1e-16, 1 - 1e-16]; leakaudit's as its audit uses it, for a forest the empirical logit of its T trees'
votes (``LiRA(votes=T)``, ln((k + 1/2) / (T - k + 1/2)), k = T p_y) and for the MLP Carlini et al.'s
(ln p_y - ln of the others' sum, floored at 1e-45). Both other statistics are reported beside, on the
same shadow models.

Shadow models:
* MLP: SACRO-ML clones the scikit-learn MLP (Adam, batch 200, lr 1e-3, L2 alpha 1e-4, up to 200
  epochs with early stopping on the training loss). leakaudit trains all K at once with
  ``TorchMLP(hidden=(64,), activation="tanh", mode="fast", batch_size=200, lr=1e-3)`` for the number
  of epochs the target MLP ran (``n_iter_``), with weight decay ``alpha / batch_size`` (the same
  L2 term as scikit-learn's). On Adult's one-hot inputs TorchMLP's default ``sparse_input="auto"``
  computes the first layer from the 14 non-zero inputs of each row (same models up to float
  summation order; every weight still gets its Adam and L2 update, as in scikit-learn).
* RF: SACRO-ML clones the target ``RandomForestClassifier(n_estimators)`` (scikit-learn, one
  forest after the other). leakaudit trains all K shadow forests of one ``fit_many`` call together
  with ``leakaudit.learners.RandomForest(n_estimators)``: scikit-learn's algorithm re-implemented
  (C kernels built with the package, which grow the same trees; exact CART splits, Gini, bootstrap counts as weights, sqrt(d) candidate features, its
  random streams too: with the same seed it grows the same trees, tested to 1e-12 against
  ``RandomForestClassifier``), the K x T trees spread over threads; a node evaluates a one-hot
  column by a class count in O(n_node) instead of sorting. Same work, same models (up to the
  seeds each tool picks).

Both qualities (AUC, TPR at 0.1 % FPR) are computed by ``leakaudit.metrics`` from the
per-record scores; SACRO-ML's own AUC is recorded beside to check the score orientation.
Times are wall clock and CPU seconds (single-threaded BLAS on both sides; leakaudit's compiled kernels
use every core, so the CPU ratio is the per-CPU-second comparison and the wall ratio the one a user sees).
leakaudit's compiled kernels are loaded before the timers start (as the peers'
drivers import their libraries before theirs).

``--repeat R`` runs the same work R times on each side (the driver repeats SACRO-ML's attack as often) and compares
the medians, every run's time kept in the result file: by default 3 for the forest (ours ~1 s), 1 for the MLP.

Usage: .venv/bin/python benchmarks/bench_lira_vs_sacroml.py [--model mlp|rf|both] [--n 1000]
       [--shadows 100] [--seed 0] [--repeat R] [--tag T] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402  (sets single-threaded BLAS before numpy)

import numpy as np  # noqa: E402


def split(n: int, seed: int):
    X, y, _ = C.adult_arrays()
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))[: 2 * n]
    return X[idx[:n]], y[idx[:n]], X[idx[n:]], y[idx[n:]]


def ours(model: str, Xtr, ytr, Xte, yte, proba_train, proba_test, n_shadow: int, seed: int, n_iter: int,
         n_trees: int, repeat: int = 1):
    from leakaudit.learners import RandomForest, TorchMLP
    from leakaudit.membership._base import fit_reference_models
    from leakaudit.membership.lira import LiRA

    X = np.vstack([Xtr, Xte])
    y = np.concatenate([ytr, yte])
    probs = np.vstack([proba_train, proba_test])
    if model == "mlp":
        learner = TorchMLP(hidden=(64,), activation="tanh", mode="fast", epochs=max(int(n_iter), 1), batch_size=200,
                           lr=1e-3, weight_decay=1e-4 / 200, **C.SKLEARN_MLP)
    else:
        learner = RandomForest(n_estimators=n_trees)
    # what leakaudit's audit runs for this target: for a forest, LiRA on the empirical logit of its trees' votes
    votes = n_trees if model == "rf" else None

    def job():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = fit_reference_models(learner, X, y, n_shadow, n_classes=2, random_state=seed)
            return refs, LiRA(online=False, votes=votes).score(probs, y, refs.probs, refs.in_mask)

    t = C.timed_runs(job, repeat)  # the same work (same seeds) each time
    refs, res_off = t[3]
    extra = {"online": LiRA(online=True, votes=votes), "online_fixed_variance": LiRA(online=True, fix_variance=True,
                                                                                      votes=votes),
             # the timed score with SACRO-ML's statistic (logit of p clipped at 1e-16)
             "offline_with_sacroml_clip_1e-16": LiRA(online=False, clip=1e-16)}
    if votes:  # and with Carlini et al.'s (ln p_y - ln of the others, floored at 1e-45), LiRA's default
        extra["offline_carlini_floor"] = LiRA(online=False)
    return t, res_off.scores_array, {k: a.score(probs, y, refs.probs, refs.in_mask).scores_array
                                     for k, a in extra.items()}


def run(model: str, n: int, n_shadow: int, seed: int, n_trees: int = 100, repeat: int = 1) -> dict:
    Xtr, ytr, Xte, yte = split(n, seed)
    is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
    load0 = C.loadavg()
    peer = C.run_peer("sacroml", "sacroml_lira.py",
                      {"X_train": Xtr, "y_train": ytr, "X_test": Xte, "y_test": yte},
                      {"model": model, "hidden": 64, "n_trees": n_trees, "seed": seed, "n_shadow": n_shadow,
                       "mode": "offline", "repeat": repeat}, timeout=3600)
    pa = peer["arrays"]
    t, scores, extra = ours(model, Xtr, ytr, Xte, yte, pa["proba_train"], pa["proba_test"], n_shadow, seed,
                            peer.get("n_iter", 200), n_trees, repeat)
    load1 = C.loadavg()
    peer_q = C.quality(is_member, pa["scores"])
    our_q = C.quality(is_member, scores)
    work = (f"Adult, {n} members + {n} non-members, target = "
            + ("sklearn MLP (64 tanh)" if model == "mlp" else f"RandomForest ({n_trees} trees)")
            + f", {n_shadow} shadow models, offline LiRA")
    notes = ("shadows: SACRO-ML sklearn MLP clones; ours TorchMLP fast mode, all K batched, "
             f"{peer.get('n_iter')} epochs (= target's n_iter_)" if model == "mlp" else
             "shadows: SACRO-ML sklearn RandomForestClassifier clones, one after the other; ours "
             "leakaudit RandomForest (sklearn's trees re-implemented, grown by its C kernel; same "
             "trees for the same seed), "
             f"the {n_shadow} forests spread over the cores by one fit_predict_many call, each forest's trees "
             "queried on the audited rows as they are grown (no bank of trees kept); our statistic: the empirical "
             f"logit of the {n_trees} trees' votes (LiRA(votes={n_trees}), what the audit uses for forest targets)")
    return C.comparison(
        f"lira_{model}", work, "SACRO-ML LIRAAttack", peer["versions"].get("sacroml") or C.peer_version("sacroml", "sacroml"),
        peer["seconds"], t[0], peer_q, our_q, load0, load1, notes=notes, peer_cpu=peer["cpu_seconds"],
        our_cpu=t[1], our_runs=t[2], peer_runs=peer.get("seconds_runs"),
        peer_own_metrics=peer.get("own_metrics"),
        our_other_modes={k: C.quality(is_member, v) for k, v in extra.items()},
        target_fit_seconds=peer.get("target_fit_seconds"), peer_versions=peer.get("versions"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("mlp", "rf", "both"), default="both")
    ap.add_argument("--n", type=int, default=1000, help="members (= non-members)")
    ap.add_argument("--shadows", type=int, default=100)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs of the same work on each side, medians compared (default: 1 for the MLP, 3 for the "
                         "forest: ours ~1 s)")
    ap.add_argument("--quick", action="store_true", help="200 + 200 records, 4 shadow models, 10 trees")
    ap.add_argument("--tag", default="", help="suffix of the result file (keeps runs of other sizes apart)")
    a = ap.parse_args(argv)
    C.warm_up()
    if a.quick:
        a.n, a.shadows, a.trees = 200, 4, 10
    models = ("mlp", "rf") if a.model == "both" else (a.model,)
    rows = []
    for m in models:
        try:
            repeat = a.repeat or (1 if a.quick or m == "mlp" else 3)
            rows.append(run(m, a.n, a.shadows, a.seed, a.trees, repeat))
        except Exception as e:  # peer missing or failed: record why
            rows.append({"name": f"lira_{m}", "error": f"{type(e).__name__}: {e}"[:2000]})
        print(rows[-1] if "error" in rows[-1] else {k: rows[-1][k] for k in
              ("name", "peer_seconds", "our_seconds", "speedup", "cpu_speedup", "peer_quality", "our_quality")},
              flush=True)
    name = "lira_vs_sacroml" + ("" if a.model == "both" else f"_{a.model}") + (f"_{a.tag}" if a.tag else "") \
        + ("_quick" if a.quick else "")
    C.write_result(name, {"comparisons": rows})


if __name__ == "__main__":
    main()

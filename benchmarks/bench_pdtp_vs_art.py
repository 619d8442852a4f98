"""PDTP: leakaudit's ``dtp.pdtp`` vs ART's ``art.metrics.PDTP`` (naive Bayes, logistic regression, MLP).

Same work on both sides: a training set T of ``n`` Adult rows drawn with ``--seed`` and the PDTP
of ``r`` of its records, i.e. one leave-one-out model A(T \\ {t}) per record (ART with
``num_iter=1``: for NB and LR its models are deterministic, so more iterations repeat identical work).

Models (identical on both sides):
* NB: the 8 categorical Adult attributes as codes; scikit-learn ``CategoricalNB(alpha=1,
  min_categories=n_values)`` in ART vs ``NaiveBayes(alpha=1, prior_smoothing=False,
  n_values=n_values)`` (the same model: the full models' outputs are compared) with its exact
  closed-form leave-one-out.
* LR: one-hot Adult (104 columns), binary L2 logistic regression; scikit-learn ``C = 2 C_ours``
  (leakaudit keeps the softmax form, see ``learners/logistic.py``) vs ``LogisticRegression(C=C_ours)``
  with warm-started Newton leave-one-out.
* NN: one hidden layer of 64 tanh units, Adam lr 1e-3, batch 32, ``E`` epochs, no L2:
  scikit-learn ``MLPClassifier`` retrained per record in ART vs ``TorchMLP(mode="fast")`` training
  all leave-one-out models at once (``fit_many``).

Quality: PDTP is a per-record leakage measure, not a membership attack, so AUC / TPR do not apply.
ART maximises the ratio over every record's output, leakaudit evaluates at x(t) (Long et al.
Def 4.4), so the values differ by definition; we report their rank agreement (Spearman r between
ln(ART's average ratio) and our ε) and the agreement of the full models.

Usage: .venv/bin/python benchmarks/bench_pdtp_vs_art.py [--models nb,lr,nn] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

SIZES = {  # model: (training rows n, records r)
    "full": {"nb": (2000, 2000), "lr": (2000, 200), "nn": (500, 50)},
    "quick": {"nb": (200, 50), "lr": (200, 20), "nn": (100, 5)},
}
NN = {"hidden": 64, "epochs": 20, "batch_size": 32, "lr": 1e-3}
C_OURS = 1.0


def run(model: str, n: int, r: int, seed: int) -> dict:
    from leakaudit.dtp import pdtp
    from leakaudit.learners import LogisticRegression, NaiveBayes, TorchMLP

    rng = np.random.default_rng(seed)
    if model == "nb":
        Xall, n_values, yall = C.adult_codes()
        params = {"model": "nb", "alpha": 1.0, "n_values": n_values.tolist()}
        learner = NaiveBayes(alpha=1.0, prior_smoothing=False, n_values=n_values)
    else:
        Xall, yall, _ = C.adult_arrays()
        if model == "lr":
            params = {"model": "lr", "C": 2 * C_OURS}
            learner = LogisticRegression(C=C_OURS)
        else:
            params = {"model": "nn", "seed": seed, **NN}
            learner = TorchMLP(hidden=(NN["hidden"],), activation="tanh", mode="fast", epochs=NN["epochs"],
                               batch_size=NN["batch_size"], lr=NN["lr"])
    idx = rng.permutation(len(yall))[:n]
    X, y = Xall[idx].astype(np.float64), yall[idx]
    records = np.arange(r)
    load0 = C.loadavg()
    peer = C.run_peer("art", "art_pdtp.py", {"X": X, "y": y, "indexes": records},
                      {**params, "num_iter": 1}, timeout=3600)
    with C.Timer() as t:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = pdtp(learner, X, y, records=records, n_classes=2, random_state=seed, keep_outputs=True)
    load1 = C.loadavg()
    ours_eps = np.asarray(res.values)
    art_avg = peer["arrays"]["avg"]
    agree = {"spearman_r": C.spearman(np.log(art_avg), ours_eps),
             "art_mean_ln_ratio": float(np.mean(np.log(art_avg))), "our_mean_eps": float(np.mean(ours_eps)),
             "art_max_ln_ratio": float(np.max(np.log(art_avg))), "our_max_eps": float(np.max(ours_eps))}
    if model in ("nb", "lr"):
        full = learner.fit(X, y, n_classes=2).predict_proba(X)
        agree["max_abs_diff_full_model_proba"] = float(np.max(np.abs(full - peer["arrays"]["proba"])))
    work = {"nb": "categorical naive Bayes", "lr": "L2 logistic regression (104 one-hot columns)",
            "nn": f"MLP 64 tanh, Adam, {NN['epochs']} epochs, batch {NN['batch_size']}"}[model]
    return C.comparison(
        f"pdtp_{model}", f"PDTP of {r} records of an Adult training set of {n}, {work}", "ART art.metrics.PDTP",
        peer["versions"]["adversarial-robustness-toolbox"], peer["seconds"], t.seconds, None, None, load0, load1,
        notes=f"ours: {res.method}", peer_cpu=peer["cpu_seconds"], our_cpu=t.cpu_seconds, agreement=agree)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="nb,lr,nn")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    C.warm_up()
    sizes = SIZES["quick" if a.quick else "full"]
    rows = []
    for m in a.models.split(","):
        try:
            rows.append(run(m, *sizes[m], a.seed))
        except Exception as e:
            rows.append({"name": f"pdtp_{m}", "error": f"{type(e).__name__}: {e}"[:2000]})
        print({k: rows[-1].get(k) for k in ("name", "error", "peer_seconds", "our_seconds", "speedup", "cpu_speedup",
                                             "agreement")}, flush=True)
    C.write_result("pdtp_vs_art" + ("_quick" if a.quick else ""), {"comparisons": rows})


if __name__ == "__main__":
    main()

"""Audit of a scikit-learn MLPClassifier target: reference and leave-one-out nets retrained by
``TorchMLP.from_sklearn`` (all at once) against scikit-learn (one ``fit`` per net, the fallback).

Work: 1,200 Adult rows (600 members, 600 non-members), the target ``MLPClassifier(hidden_layer_sizes=(64,),
activation="tanh", max_iter=100)`` fitted on the members' encoded features and saved with skops; ``leakaudit
audit --profile smoke`` (8 reference models, PDTP on 100 records) with a fresh cache each run. The scikit-learn
run disables ``TorchMLP.from_sklearn`` so the audit falls back to ``SklearnLearner``.

Usage: .venv/bin/python benchmarks/bench_audit_mlp_target.py [--repeats 2] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def one_audit(work: Path, retrain_with: str) -> dict:
    from leakaudit.audit.config import make_config
    from leakaudit.audit.pipeline import run_audit
    from leakaudit.exceptions import UnsupportedError
    from leakaudit.learners import TorchMLP

    real = TorchMLP.__dict__["from_sklearn"]
    if retrain_with == "sklearn":
        def refuse(cls, *a, **k):
            raise UnsupportedError("disabled for the benchmark")
        TorchMLP.from_sklearn = classmethod(refuse)
    try:
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
            cfg = make_config(train=work / "train.csv", test=work / "test.csv", label="income",
                              model=work / "model.skops", model_input="encoded", profile="smoke",
                              cache_dir=cache)
            with C.Timer() as t:
                res = run_audit(cfg, Path(out) / "audit", verbose=False)
    finally:
        TorchMLP.from_sklearn = real
    return {"seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "description": res.target["description"],
            "auc": {k: v["auc"] for k, v in res.membership.items()}}


def lira_quality(run: dict) -> dict:
    """The audit's LiRA AUC (600 non-members: too few for TPR at 0.1 % FPR)."""
    return {"auc": run["auc"]["lira"], "tpr_at_0.1%fpr": float("nan")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one run of each")
    a = ap.parse_args(argv)
    if a.quick:
        a.repeats = 1
    C.warm_up()
    import skops.io as sio
    from sklearn.neural_network import MLPClassifier

    from leakaudit.audit.config import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.data import load_adult

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        df = load_adult().to_frame().sample(1200, random_state=0).reset_index(drop=True)
        df.iloc[:600].to_csv(work / "train.csv", index=False)
        df.iloc[600:].to_csv(work / "test.csv", index=False)
        data = prepare_data(make_config(train=work / "train.csv", test=work / "test.csv", label="income"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = MLPClassifier(hidden_layer_sizes=(64,), activation="tanh", max_iter=100, random_state=0)
            est.fit(data.X_mem, data.y_mem)
        sio.dump(est, work / "model.skops")
        load0 = C.loadavg()
        runs = {m: [one_audit(work, m) for _ in range(a.repeats)] for m in ("torch_mlp", "sklearn")}
    best = {m: min(r, key=lambda x: x["seconds"]) for m, r in runs.items()}
    row = C.comparison(
        "audit_mlp_target", "leakaudit audit --profile smoke of a fitted MLPClassifier (64 tanh, 100 epochs) on 600 "
        "Adult members + 600 non-members", "the same audit retraining with scikit-learn (SklearnLearner)", None,
        best["sklearn"]["seconds"], best["torch_mlp"]["seconds"], lira_quality(best["sklearn"]),
        lira_quality(best["torch_mlp"]), load0, C.loadavg(),
        notes="best of --repeats; both whole audits (fixed costs included); AUCs: "
              + "; ".join(f"{m}: " + ", ".join(f"{k} {v:.3f}" for k, v in b["auc"].items()) for m, b in best.items()),
        peer_cpu=best["sklearn"]["cpu_seconds"], our_cpu=best["torch_mlp"]["cpu_seconds"],
        all_seconds={m: [x["seconds"] for x in r] for m, r in runs.items()})
    print({k: row[k] for k in ("peer_seconds", "our_seconds", "speedup", "cpu_speedup", "notes")}, flush=True)
    C.write_result("audit_mlp_target" + ("_quick" if a.quick else ""), {"comparisons": [row]})


if __name__ == "__main__":
    main()

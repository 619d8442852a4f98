"""The compiled MLP kernel (``_mlp_native.c``) against its reference, the batched torch trainer.

Same work for both, Adult (one-hot + z-scored, 2,000 rows drawn with ``--seed``), K nets 104-64-2 tanh,
each on a random half: fast mode (mini-batch Adam, batch 200) and faithful mode (per-example SGD,
lr 0.01). Each trainer runs ``--reps`` times after a warm-up (loading outside the timers); best wall
and CPU seconds, and the largest probability difference between the two trainers' models (float32
rounding: the kernel sums in another order, with a rational tanh) and first-layer weight difference. Then the
prediction of K such nets (sparse first layer) on 20,000 rows: the kernel's layers vs numpy's products (BLAS, what
runs without the kernel).

Usage: .venv/bin/python benchmarks/bench_kernels.py [--models 100] [--epochs 10] [--reps 3] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def run(mode: str, K: int, epochs: int, reps: int, seed: int) -> dict:
    from leakaudit.learners import TorchMLP

    X, y, _ = C.adult_arrays()
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))[:2000]
    X, y = X[idx], y[idx]
    subsets = [np.sort(rng.permutation(2000)[:1000]) for _ in range(K)]
    kw = dict(hidden=(64,), activation="tanh", mode=mode, epochs=epochs)
    kw.update(dict(batch_size=200, lr=1e-3) if mode == "fast" else dict(lr=0.01))
    row = {"name": f"kernels_{mode}", "work": f"{K} Adult nets 104-64-2 tanh x {epochs} epochs on 1,000 rows, "
           + ("mini-batch Adam (batch 200)" if mode == "fast" else "per-example SGD")}
    probs = {}
    for backend in ("torch", "auto"):  # "auto" takes the compiled kernel where it was built
        L = TorchMLP(backend=backend, **kw)
        L.fit_many(X, y, subsets[:2], list(range(2)))  # load outside the timers
        best = None
        for _ in range(reps):
            with C.Timer() as t:
                bank = L.fit_many(X, y, subsets, list(range(K)))
            best = t if best is None or t.seconds < best.seconds else best
        name = bank.info["kernel"]
        row[f"{name}_seconds"], row[f"{name}_cpu_seconds"] = best.seconds, best.cpu_seconds
        probs[name] = bank.predict_proba(X)
        probs[name + "_w1"] = bank.weights_[0]
    if "native" in probs:
        row["speedup"] = row["torch_seconds"] / row["native_seconds"]
        row["max_abs_proba_diff"] = float(np.abs(probs["native"] - probs["torch"]).max())
        row["max_abs_w1_diff"] = float(np.abs(probs["native_w1"] - probs["torch_w1"]).max())
    return row


def run_predict(K: int, n: int, reps: int, seed: int) -> dict:
    """Prediction of K nets trained with a sparse first layer on n Adult rows: the kernel's layers vs numpy's."""
    from leakaudit.learners import TorchMLP

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    X, y = X[idx], y[idx]
    bank = TorchMLP(hidden=(64,), activation="tanh", mode="fast", epochs=1, batch_size=200).fit_many(
        X, y, [np.arange(1000)] * K, list(range(K)))
    row = {"name": "kernels_predict", "work": f"logits of {K} Adult nets 104-64-2 (sparse first layer) on {n:,} rows"}
    out = {}
    for name, env in (("numpy", "0"), ("native", "1")):
        old = os.environ.get("LEAKAUDIT_NATIVE")
        os.environ["LEAKAUDIT_NATIVE"] = env
        try:
            bank.decision_function(X[:10])
            best = None
            for _ in range(reps):
                with C.Timer() as t:
                    out[name] = bank.decision_function(X)
                best = t if best is None or t.seconds < best.seconds else best
        finally:
            os.environ.pop("LEAKAUDIT_NATIVE") if old is None else os.environ.__setitem__("LEAKAUDIT_NATIVE", old)
        row[f"{name}_seconds"], row[f"{name}_cpu_seconds"] = best.seconds, best.cpu_seconds
    row["speedup"] = row["numpy_seconds"] / row["native_seconds"]
    row["max_abs_logit_diff"] = float(np.abs(out["native"] - out["numpy"]).max())
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="4 nets, 2 epochs, 1 repeat (a check that it runs)")
    a = ap.parse_args(argv)
    if a.quick:
        a.models, a.epochs, a.reps = 4, 2, 1
    C.warm_up()
    rows = [run(m, a.models, a.epochs, a.reps, a.seed) for m in ("fast", "faithful")]
    rows.append(run_predict(a.models, 2000 if a.quick else 20000, a.reps, a.seed))
    for r in rows:
        print({k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
    C.write_result("kernels" + ("_quick" if a.quick else ""), {"rows": rows, "threads": "default"})


if __name__ == "__main__":
    main()

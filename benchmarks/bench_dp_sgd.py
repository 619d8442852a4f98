"""DP-SGD speed: the one-run audit of a DP-SGD MLP on Adult, and batched DP-SGD against non-private training.

1. ``audit``: ``leakaudit.dpaudit.audit_dpsgd`` of DPSGD(TorchMLP(hidden=(64,))) on ``--n`` Adult rows (Long et
   al.'s 13 attributes, one-hot), Poisson rate 0.01, 5 epochs (500 steps), clip 1, noise multiplier 1.0, with 1,000
   white-box gradient canaries: training, scoring and the bound, wall and CPU seconds; and the noise calibration
   to a claimed epsilon (what ``leakaudit dp-audit`` adds without ``--noise-multiplier``) timed apart.
2. ``per model-epoch``: at each of ``--sizes`` (Adult rows x hidden units), K models on the same rows, batch 256
   (DP-SGD: Poisson with q = 256 / n, so the same expected batch and steps per epoch; per-example clipping and
   noise multiplier 1), against TorchMLP's own non-private mini-batch SGD of the same net (fast mode,
   ``optimizer="sgd"``), each on both trainers: the compiled kernel (the default backend; DPSGD's compiled DP step)
   and torch (``backend="torch"``; DPSGD's torch loop). The four run alternately in the same process,
   ``--repeats`` times each, one thread each (``n_threads=1``: CPU seconds without a pool's waiting); the ratio of
   medians of CPU (and wall) seconds per model and epoch, DP-SGD against non-private on the same trainer.

Usage: .venv/bin/python benchmarks/bench_dp_sgd.py [--n 20000] [--k 8] [--epochs 2] [--repeats 5]
    [--sizes 20000x64,5000x64,20000x16,20000x128] [--skip-audit | --only-audit]
Writes benchmarks/results/dp_sgd.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import numpy as np

HERE = Path(__file__).resolve().parent


def _adult(n: int, seed: int):
    from leakaudit.data import load_adult

    ds = load_adult(columns="long")
    rows = np.sort(np.random.default_rng(seed).choice(len(ds), size=min(n, len(ds)), replace=False))
    ds = ds.subset(rows)
    X, _ = ds.encode()
    return X, np.asarray(ds.y, dtype=np.int64)


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-audit", action="store_true", help="only the per-model-epoch comparison")
    ap.add_argument("--only-audit", action="store_true",
                    help="only the audit, written into --out beside the per-model-epoch rows already there")
    ap.add_argument("--sizes", default="20000x64,5000x64,20000x16,20000x128",
                    help="comma-separated ROWSxHIDDEN configurations of the per-model-epoch comparison")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "dp_sgd.json")
    a = ap.parse_args(argv)

    from leakaudit.dpaudit import audit_dpsgd, calibrate_noise_multiplier
    from leakaudit.learners import DPSGD, TorchMLP

    X, y = _adult(a.n, a.seed)
    n = len(X)
    res = {"benchmark": "dp_sgd", "command": "python benchmarks/bench_dp_sgd.py " + " ".join(argv or sys.argv[1:]),
           "n_train": n, "n_features": int(X.shape[1]), "hidden": 64, "seed": a.seed,
           "note": "2-core machine shared with other jobs (five agents): compare ratios and CPU seconds"}

    # 1. the one-run audit with 1,000 canaries (white-box canaries train in the compiled DP step where it applies)
    res["audit"] = None
    if not a.skip_audit:
        dp = DPSGD(learner=TorchMLP(hidden=(64,)), noise_multiplier=1.0, max_grad_norm=1.0, sampling_rate=0.01,
                   epochs=5, lr=0.5, target_delta=1e-5)
        eps = dp.accounted_epsilon(n)
        audit, w, c = _timed(lambda: audit_dpsgd(dp, X, y, claimed_epsilon=eps, delta=1e-5, m=1000, random_state=0))
        sigma, cw, cc = _timed(lambda: calibrate_noise_multiplier(dp, n, 4.0, 1e-5))
        res["audit"] = {"m": 1000, "sampling_rate": 0.01, "steps": audit.steps, "noise_multiplier": 1.0,
                        "claimed_epsilon": eps, "epsilon_lower_bound": audit.epsilon_lower_bound,
                        "verdict": audit.verdict, "trainer": audit.trainer, "seconds": w, "cpu_seconds": c,
                        "train_seconds": audit.seconds, "train_cpu_seconds": audit.cpu_seconds,
                        "calibration_to_eps4_seconds": cw, "calibration_cpu_seconds": cc, "calibrated_sigma": sigma,
                        "noise_check_epsilon_lower_bound": audit.noise_check_epsilon_lower_bound,
                        "noise_check_verdict": audit.noise_check_verdict}
        print(f"audit: n={n}, m=1000, {audit.steps} steps, trainer {audit.trainer}: {w:.1f} s wall, {c:.1f} s CPU (training with canaries "
              f"{audit.seconds:.1f} s / {audit.cpu_seconds:.1f} s CPU); bound {audit.epsilon_lower_bound:.2f} vs "
              f"claim {eps:.2f}; calibration to eps 4: {cw:.1f} s ({cc:.1f} s CPU)", flush=True)

    if a.only_audit:  # the per-model-epoch rows of the file stay as they were measured
        old = json.loads(a.out.read_text()) if a.out.exists() else {}
        old["audit"], old["audit_command"] = res["audit"], res["command"]
        a.out.write_text(json.dumps(old, indent=2) + "\n")
        print(f"wrote the audit into {a.out}")
        return
    # 2. per model-epoch, DP-SGD against non-private SGD of the same net, at several sizes (rows x hidden units)
    B = 256
    res["per_model_epoch"] = []
    for size in a.sizes.split(","):
        rows, hidden = (int(v) for v in size.split("x"))
        Xs, ys = (X, y) if rows == n else _adult(rows, a.seed)
        ns = len(Xs)
        subsets = [np.arange(ns)] * a.k
        seeds = list(range(a.k))
        mlp = {"hidden": (hidden,), "n_threads": 1}
        dp_kw = {"noise_multiplier": 1.0, "max_grad_norm": 1.0, "sampling_rate": B / ns, "epochs": a.epochs, "lr": 0.5}
        sgd_kw = {"mode": "fast", "optimizer": "sgd", "lr": 0.5, "batch_size": B, "epochs": a.epochs, **mlp}
        learners = {
            "dp_sgd_compiled": DPSGD(learner=TorchMLP(**mlp), **dp_kw),
            "sgd_compiled": TorchMLP(**sgd_kw),
            "dp_sgd_torch": DPSGD(learner=TorchMLP(**mlp, backend="torch"), **dp_kw),
            "sgd_torch": TorchMLP(**sgd_kw, backend="torch"),
        }
        learners["dp_sgd_compiled"].accounted_epsilon(ns)  # the accountant's first call (cached after) is not training
        times = {name: [] for name in learners}
        kernels = {}
        for _ in range(a.repeats):
            for name, lr in learners.items():
                bank, w, c = _timed(lambda lr=lr, Xs=Xs, ys=ys, sub=subsets, sd=seeds: lr.fit_many(Xs, ys, sub, sd))
                kernels[name] = bank.info.get("kernel")
                times[name].append({"wall": w / (a.k * a.epochs), "cpu": c / (a.k * a.epochs)})
        med = {name: {k: float(np.median([t[k] for t in ts])) for k in ("wall", "cpu")} for name, ts in times.items()}
        p = {"n_train": ns, "hidden": hidden, "k": a.k, "epochs": a.epochs, "batch": B, "repeats": a.repeats,
             "kernels": kernels, "runs": times, "median_seconds": med,
             "ratio_cpu_compiled": med["dp_sgd_compiled"]["cpu"] / med["sgd_compiled"]["cpu"],
             "ratio_wall_compiled": med["dp_sgd_compiled"]["wall"] / med["sgd_compiled"]["wall"],
             "ratio_cpu_torch": med["dp_sgd_torch"]["cpu"] / med["sgd_torch"]["cpu"],
             "ratio_wall_torch": med["dp_sgd_torch"]["wall"] / med["sgd_torch"]["wall"],
             "ratio_cpu_dp_compiled_vs_dp_torch": med["dp_sgd_compiled"]["cpu"] / med["dp_sgd_torch"]["cpu"]}
        res["per_model_epoch"].append(p)
        for name, m in med.items():
            print(f"{ns} rows, {hidden} units, {name:>20}: {1000 * m['cpu']:.1f} ms CPU, "
                  f"{1000 * m['wall']:.1f} ms wall per model-epoch", flush=True)
        print(f"{ns} rows, {hidden} units: DP-SGD / non-private, CPU (wall): compiled {p['ratio_cpu_compiled']:.2f}x "
              f"({p['ratio_wall_compiled']:.2f}x), torch {p['ratio_cpu_torch']:.2f}x ({p['ratio_wall_torch']:.2f}x); "
              f"compiled DP-SGD / torch DP-SGD {p['ratio_cpu_dp_compiled_vs_dp_torch']:.2f}x", flush=True)
        a.out.parent.mkdir(parents=True, exist_ok=True)  # written after each size: a kill loses nothing done
        a.out.write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()

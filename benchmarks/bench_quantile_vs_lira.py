"""Quantile-regression membership inference (Bertran et al. 2023) against LiRA and RMIA on the audit's demo.

The demo's work, at the demo's size: Adult (Long et al.'s 13 attributes, 107 encoded inputs, statistics from the
audited records), ``--n`` members and ``--n`` non-members drawn with the seed, ``--n`` population records, the demo
network (``audit.target.demo_learner``: 64 tanh units, 30 epochs, lr 0.01, faithful mode) trained on the members.

Attacks on the same 2n audited records, scored by ``leakaudit.metrics`` (AUC with its DeLong-logit interval, TPR at
1 % and 0.1 % FPR with their intervals):

* quantile regression, which trains no reference model, with the population as the public non-members
  (``quantile``), with the audited non-members public too, scored out of fold (``quantile+nonmembers``), and the
  pinball-loss variant of the latter (``quantile_pinball+nonmembers``);
* LiRA (online; fixed variance below 16 models, as Carlini et al. advise for few models) and RMIA (online,
  population records as z) with K = 2, 4 and 64 reference models of the demo network on complementary halves of
  the audited records (the audit's design); with K = 1, offline LiRA and offline RMIA with one reference model
  trained on half of the population (RMIA's z: the other half).

Every attack's time is its own: the reference models' training plus the scoring for LiRA / RMIA, the cross-fitted
regressions for the quantile attack (``n_folds`` x 5 gradient-boosted fits for the Gaussian method, ``n_folds`` for
pinball). The target's training is common to all and not counted.

Usage: .venv/bin/python benchmarks/bench_quantile_vs_lira.py [--seeds 0,1,2,3,4] [--n 1000] [--refs 1,2,4,64]
Writes benchmarks/results/quantile_vs_lira.json and prints one line per seed and attack.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import numpy as np

FPRS = (0.01, 0.001)


def _demo(seed: int, n: int):
    """Members, non-members and population as the demo audit draws them (audit/inputs/data.py), encoded the same way."""
    from leakaudit.data import load_adult

    ds = load_adult(columns="long")
    perm = np.random.default_rng(seed).permutation(len(ds))
    i_mem, i_non, i_pop = perm[:n], perm[n:2 * n], perm[2 * n:3 * n]
    X, _ = ds.encode(fit_idx=np.r_[i_mem, i_non])
    return X[i_mem], ds.y[i_mem], X[i_non], ds.y[i_non], X[i_pop], ds.y[i_pop]


def _quality(is_member, scores, seed):
    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.metrics import evaluate_membership

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        mm = evaluate_membership(is_member, scores, fprs=FPRS, n_boot=1000, random_state=seed)
    out = {"auc": mm.auc, "auc_ci": list(mm.auc_ci)}
    for f in FPRS:
        t = mm.tpr_at_fpr[str(f)]
        out[f"tpr@{f}"] = t["tpr"]
        out[f"tpr@{f}_ci"] = list(t["ci"])
    return out


def run_seed(seed: int, n: int, refs: list[int]) -> dict:
    from leakaudit.audit.config import AuditConfig
    from leakaudit.audit.inputs.target import demo_learner
    from leakaudit.membership import (
        RMIA,
        LiRA,
        QuantileRegressionAttack,
        fit_reference_models,
        paired_half_masks,
    )

    Xm, ym, Xn, yn, Xp, yp = _demo(seed, n)
    learner = demo_learner(AuditConfig(seed=seed))
    t0 = time.perf_counter()
    target = learner.fit(Xm, ym, random_state=seed, n_classes=2)
    t_target = time.perf_counter() - t0
    Xa, ya = np.vstack([Xm, Xn]), np.r_[ym, yn]
    m = np.r_[np.ones(n, int), np.zeros(n, int)]
    pa, pp = np.asarray(target.predict_proba(Xa), float), np.asarray(target.predict_proba(Xp), float)
    train_acc = float((pa[:n].argmax(1) == ym).mean())
    test_acc = float((pa[n:].argmax(1) == yn).mean())
    rows = {}

    def record(name, scores, seconds, cpu, **extra):
        q = _quality(m, scores, seed)
        rows[name] = {**q, "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3), **extra}
        print(f"seed {seed} {name:28s} AUC {q['auc']:.3f} [{q['auc_ci'][0]:.3f}, {q['auc_ci'][1]:.3f}]  "
              f"TPR@1% {q['tpr@0.01']:.3f}  TPR@0.1% {q['tpr@0.001']:.3f}  {seconds:.2f} s", flush=True)

    # quantile regression: no reference models
    X_all, p_all, y_all = np.vstack([Xa, Xp]), np.vstack([pa, pp]), np.r_[ya, yp]
    variants = {"quantile": ("gaussian", np.r_[np.zeros(2 * n, bool), np.ones(n, bool)]),
                "quantile+nonmembers": ("gaussian", np.r_[m == 0, np.ones(n, bool)]),
                "quantile_pinball+nonmembers": ("pinball", np.r_[m == 0, np.ones(n, bool)])}
    for name, (method, public) in variants.items():
        att = QuantileRegressionAttack(method=method, random_state=seed)
        t0, c0 = time.perf_counter(), time.process_time()
        res = att.score(p_all, y_all, public, X=X_all)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        d = res.decisions_array[:2 * n]
        record(name, res.scores_array[:2 * n], dt, dc, reference_models=0, regressor_fits=5 * att.n_folds
               if method == "gaussian" else att.n_folds, n_public=int(public.sum()),
               fpr_at_alpha=float(d[m == 0].mean()), tpr_at_alpha=float(d[m == 1].mean()), alpha=att.alpha)

    # reference-model attacks
    for K in refs:
        if K == 1:  # offline, one reference model on half of the population; RMIA's z: the other half
            half = np.random.default_rng(seed + 7).permutation(n)
            mask = np.zeros((1, 2 * n + n), bool)
            mask[0, 2 * n + half[: n // 2]] = True
            t0, c0 = time.perf_counter(), time.process_time()
            ref = fit_reference_models(learner, np.vstack([Xa, Xp]), np.r_[ya, yp], 1, in_mask=mask, n_classes=2,
                                       random_state=seed + 1)
            t_ref, c_ref = time.perf_counter() - t0, time.process_time() - c0
            z = 2 * n + half[n // 2:]
            aud = ref.subset(np.arange(2 * n))
            t0, c0 = time.perf_counter(), time.process_time()
            s = LiRA(online=False, fix_variance=True).score(pa, ya, aud.probs, aud.in_mask).scores_array
            record("lira_offline K=1", s, t_ref + time.perf_counter() - t0,
                   c_ref + time.process_time() - c0, reference_models=1)
            t0, c0 = time.perf_counter(), time.process_time()
            s = RMIA(online=False).score(pa, ya, aud.probs, aud.in_mask, np.vstack([pa, pp])[z], np.r_[ya, yp][z],
                                         ref.probs[:, z], ref.in_mask[:, z]).scores_array
            record("rmia_offline K=1", s, t_ref + time.perf_counter() - t0,
                   c_ref + time.process_time() - c0, reference_models=1)
            continue
        mask = np.hstack([paired_half_masks(2 * n, K, seed + 1), np.zeros((K, n), bool)])
        t0, c0 = time.perf_counter(), time.process_time()
        ref = fit_reference_models(learner, np.vstack([Xa, Xp]), np.r_[ya, yp], K, in_mask=mask, n_classes=2,
                                   random_state=seed + 1)
        t_ref, c_ref = time.perf_counter() - t0, time.process_time() - c0
        aud, pop = ref.subset(np.arange(2 * n)), ref.subset(np.arange(2 * n, 3 * n))
        fixed = K < 16
        t0, c0 = time.perf_counter(), time.process_time()
        s = LiRA(fix_variance=fixed).score(pa, ya, aud.probs, aud.in_mask).scores_array
        record(f"lira{'_fixed' if fixed else ''} K={K}", s, t_ref + time.perf_counter() - t0,
                   c_ref + time.process_time() - c0, reference_models=K)
        t0, c0 = time.perf_counter(), time.process_time()
        s = RMIA().score(pa, ya, aud.probs, aud.in_mask, pp, yp, pop.probs, pop.in_mask).scores_array
        record(f"rmia K={K}", s, t_ref + time.perf_counter() - t0,
                   c_ref + time.process_time() - c0, reference_models=K)
    return {"seed": seed, "target_seconds": round(t_target, 3), "train_accuracy": train_acc,
            "test_accuracy": test_acc, "attacks": rows}


def summarise(per_seed: list[dict]) -> dict:
    """Mean over seeds of each quantity, with the 95 % t-interval of the mean across seeds."""
    from scipy.stats import t as student_t

    out = {}
    names = list(per_seed[0]["attacks"])
    for name in names:
        vals = {k: np.array([s["attacks"][name][k] for s in per_seed], float)
                for k in ("auc", "tpr@0.01", "tpr@0.001", "seconds", "cpu_seconds")}
        row = {}
        for k, v in vals.items():
            half = float(student_t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0
            row[k] = float(v.mean())
            row[f"{k}_seed_ci"] = [float(v.mean() - half), float(v.mean() + half)]
        row["reference_models"] = per_seed[0]["attacks"][name]["reference_models"]
        out[name] = row
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--n", type=int, default=1000, help="members = non-members = population records")
    ap.add_argument("--refs", default="1,2,4,64", help="reference-model counts for LiRA / RMIA")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    refs = [int(k) for k in a.refs.split(",")]
    load0 = C.loadavg()
    per_seed = [run_seed(s, a.n, refs) for s in seeds]
    summary = summarise(per_seed)
    print("\nmean over seeds (95% t-interval across seeds):")
    for name, r in summary.items():
        print(f"{name:28s} K={r['reference_models']:3d}  AUC {r['auc']:.3f} [{r['auc_seed_ci'][0]:.3f}, "
              f"{r['auc_seed_ci'][1]:.3f}]  TPR@1% {r['tpr@0.01']:.4f}  TPR@0.1% {r['tpr@0.001']:.4f}  "
              f"{r['seconds']:.2f} s wall, {r['cpu_seconds']:.2f} s CPU")
    path = C.write_result("quantile_vs_lira", {
        "work": f"Adult demo: {a.n} members, {a.n} non-members, {a.n} population records; demo network target",
        "seeds": seeds, "reference_counts": refs, "summary": summary, "per_seed": per_seed,
        "load_start": load0, "load_end": C.loadavg(),
        "notes": "threads: OMP/BLAS 1 (benchmarks/_common.py); machine shared with other jobs (load averages above)",
    })
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

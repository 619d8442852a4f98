"""BaVarIA-style scoring against RMIA and LiRA with 1-4 reference models, at equal compute, on the audit's demo.

The setting of ``bench_quantile_vs_lira.py`` (whose data draw and quality measures this script imports): Adult,
``--n`` members, ``--n`` non-members and ``--n`` population records drawn with the seed, the demo network trained on
the members. For each K in ``--refs`` the K reference networks are trained once and every attack scores the same
ones, so the compute is equal but for the scoring itself (timed apart):

* K = 1 (offline: one network on half of the population; RMIA's z the other half): LiRA offline with fixed
  variance, RMIA offline, BaVarIA offline;
* K >= 2 (the audit's design: K networks on complementary halves of the audited records, online): LiRA with fixed
  variance (below 16 models, as Carlini et al. advise) and with per-record variance, RMIA online (z: the
  population), BaVarIA online, and BaVarIA offline on the same networks' out halves.

Quality: AUC (DeLong-logit interval per seed) and TPR at 1 % and 0.1 % FPR, mean over the seeds with the 95 %
t-interval across seeds. Time: the reference networks' training (shared) and each attack's scoring, CPU seconds.

Usage: .venv/bin/python benchmarks/bench_bavaria.py [--seeds 0,1,2,3,4] [--n 1000] [--refs 1,2,4,64]
Writes benchmarks/results/bavaria.json (after every seed) and prints one line per seed and attack.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import bench_quantile_vs_lira as Q
import numpy as np


def run_seed(seed: int, n: int, refs: list[int]) -> dict:
    from leakaudit.audit.config import AuditConfig
    from leakaudit.audit.inputs.target import demo_learner
    from leakaudit.membership import RMIA, LiRA, fit_reference_models, paired_half_masks
    from leakaudit.membership.bavaria import BaVarIA

    Xm, ym, Xn, yn, Xp, yp = Q._demo(seed, n)
    learner = demo_learner(AuditConfig(seed=seed))
    target = learner.fit(Xm, ym, random_state=seed, n_classes=2)
    Xa, ya = np.vstack([Xm, Xn]), np.r_[ym, yn]
    m = np.r_[np.ones(n, int), np.zeros(n, int)]
    pa, pp = np.asarray(target.predict_proba(Xa), float), np.asarray(target.predict_proba(Xp), float)
    rows = {}

    def record(name, score, args, K, c_ref):
        c0 = time.process_time()
        s = score(*args).scores_array
        dc = time.process_time() - c0
        q = Q._quality(m, s, seed)
        rows[name] = {**q, "seconds": round(c_ref + dc, 4), "cpu_seconds": round(c_ref + dc, 4),
                      "scoring_cpu_seconds": round(dc, 4), "reference_cpu_seconds": round(c_ref, 4),
                      "reference_models": K}
        print(f"seed {seed} {name:26s} AUC {q['auc']:.3f} [{q['auc_ci'][0]:.3f}, {q['auc_ci'][1]:.3f}]  "
              f"TPR@1% {q['tpr@0.01']:.4f}  TPR@0.1% {q['tpr@0.001']:.4f}  scoring {dc:.3f} s CPU", flush=True)

    for K in refs:
        if K == 1:
            half = np.random.default_rng(seed + 7).permutation(n)
            mask = np.zeros((1, 3 * n), bool)
            mask[0, 2 * n + half[: n // 2]] = True
            c0 = time.process_time()
            ref = fit_reference_models(learner, np.vstack([Xa, Xp]), np.r_[ya, yp], 1, in_mask=mask, n_classes=2,
                                       random_state=seed + 1)
            c_ref = time.process_time() - c0
            z = 2 * n + half[n // 2:]
            aud = ref.subset(np.arange(2 * n))
            record("lira_offline_fixed K=1", LiRA(online=False, fix_variance=True).score, (pa, ya, aud.probs, aud.in_mask),
                   1, c_ref)
            record("rmia_offline K=1", RMIA(online=False).score, (pa, ya, aud.probs, aud.in_mask, np.vstack([pa, pp])[z],
                   np.r_[ya, yp][z], ref.probs[:, z], ref.in_mask[:, z]), 1, c_ref)
            record("bavaria_offline K=1", BaVarIA(online=False).score, (pa, ya, aud.probs, aud.in_mask), 1, c_ref)
            continue
        mask = np.hstack([paired_half_masks(2 * n, K, seed + 1), np.zeros((K, n), bool)])
        c0 = time.process_time()
        ref = fit_reference_models(learner, np.vstack([Xa, Xp]), np.r_[ya, yp], K, in_mask=mask, n_classes=2,
                                   random_state=seed + 1)
        c_ref = time.process_time() - c0
        aud, pop = ref.subset(np.arange(2 * n)), ref.subset(np.arange(2 * n, 3 * n))
        args = (pa, ya, aud.probs, aud.in_mask)
        record(f"lira_fixed K={K}", LiRA(fix_variance=True).score, args, K, c_ref)
        record(f"lira K={K}", LiRA().score, args, K, c_ref)
        record(f"rmia K={K}", RMIA().score, (*args, pp, yp, pop.probs, pop.in_mask), K, c_ref)
        record(f"bavaria K={K}", BaVarIA().score, args, K, c_ref)
        record(f"bavaria_offline K={K}", BaVarIA(online=False).score, args, K, c_ref)
    return {"seed": seed, "attacks": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--n", type=int, default=1000, help="members = non-members = population records")
    ap.add_argument("--refs", default="1,2,4,64", help="reference-model counts")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    refs = [int(k) for k in a.refs.split(",")]
    load0 = C.loadavg()
    per_seed = []
    for s in seeds:
        per_seed.append(run_seed(s, a.n, refs))
        summary = Q.summarise(per_seed) if len(per_seed) > 1 else {}
        path = C.write_result("bavaria", {
            "work": f"Adult demo: {a.n} members, {a.n} non-members, {a.n} population records; demo network target",
            "seeds": [p["seed"] for p in per_seed], "reference_counts": refs, "summary": summary,
            "per_seed": per_seed, "load_start": load0, "load_end": C.loadavg(),
            "notes": "threads: OMP/BLAS 1 (benchmarks/_common.py); machine shared with other jobs (load averages "
                     "above); every attack of a K scores the same reference networks (equal compute)"})
    print("\nmean over seeds (95% t-interval across seeds):")
    for name, r in summary.items():
        print(f"{name:26s} AUC {r['auc']:.3f} [{r['auc_seed_ci'][0]:.3f}, {r['auc_seed_ci'][1]:.3f}]  "
              f"TPR@1% {r['tpr@0.01']:.4f} [{r['tpr@0.01_seed_ci'][0]:.4f}, {r['tpr@0.01_seed_ci'][1]:.4f}]  "
              f"TPR@0.1% {r['tpr@0.001']:.4f} [{r['tpr@0.001_seed_ci'][0]:.4f}, {r['tpr@0.001_seed_ci'][1]:.4f}]  "
              f"{r['cpu_seconds']:.3f} s CPU")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

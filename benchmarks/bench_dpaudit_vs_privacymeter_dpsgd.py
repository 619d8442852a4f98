"""leakaudit's one-run bound beside ML Privacy Meter's, on the same trained DP-SGD models (time and bound).

``bench_dpaudit_vs_privacymeter.py`` compares the two analyses on canary mechanisms whose epsilon is known; this
script feeds both the canary scores of real DP-SGD runs: Adult (Long et al.'s 13 attributes, one-hot), ``--n``
rows, TorchMLP's net of 64 tanh units trained by ``DPSGD`` (Poisson rate ``--q``, ``--epochs``, clip 1, lr 0.5,
the noise multiplier calibrated to the claimed epsilon at delta 1e-5) with ``--m`` white-box gradient canaries
(``DPSGD.fit_many_with_canaries``), correct and with each planted bug. Every run's scores go to

* leakaudit: ``check_claim`` over ``whitebox_guess_grid(m, q, T)`` at delta 1e-5 (the claim's delta) and beta 0.05,
  as ``audit_dpsgd`` runs it;
* ML Privacy Meter: ``audit.compute_abstain_attack_results(scores, membership)`` read from its GitHub checkout
  (``--repo``; the functions run as they are) with its defaults, delta 0 and p = 0.05, the largest bound over every
  (k_neg, k_pos) on a sqrt(m) step. (Its delta > 0 path sums binomial terms one at a time and took minutes per audit
  at m = 1,000; delta 0 is what its pipeline runs.)

Per row: the runs whose bound exceeds the accounted epsilon (correct runs: false claims of a violation; bug runs:
catches), the mean bound and the CPU seconds per audit (the analysis only; training is shared).

Usage: .venv/bin/python benchmarks/bench_dpaudit_vs_privacymeter_dpsgd.py [--runs 10] [--m 1000] [--q 0.1]
Writes benchmarks/results/dpaudit_vs_privacymeter_dpsgd.json.
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
sys.path.insert(0, str(HERE))
DELTA = 1e-5


def main(argv=None) -> None:
    import bench_dpaudit_vs_privacymeter as PM
    from dp_audit_soundness import _adult

    from leakaudit.dpaudit import (
        calibrate_noise_multiplier,
        check_claim,
        draw_inclusion,
        whitebox_guess_grid,
    )
    from leakaudit.learners import DPSGD, TorchMLP
    from leakaudit.metrics import clopper_pearson

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--q", type=float, default=0.1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repo", default=PM.DEFAULT_REPO)
    ap.add_argument("--out", default=str(HERE / "results" / "dpaudit_vs_privacymeter_dpsgd.json"))
    a = ap.parse_args(argv)
    peer, commit = PM.load_peer(a.repo)
    X, y = _adult(a.n, 0)
    rows = []
    base = DPSGD(learner=TorchMLP(hidden=(64,)), max_grad_norm=1.0, lr=0.5, target_delta=DELTA,
                 sampling_rate=a.q, epochs=a.epochs)
    sch = base.schedule(a.n)
    grid = whitebox_guess_grid(a.m, sch["sampling_rate"], sch["steps"])
    cases = [(1.0, None), (4.0, None), (8.0, None), (1.0, "skip_noise_step"), (1.0, "skip_clipping"),
             (1.0, "noise_per_batch")]
    for eps, bug in cases:
        learner = base.set_params(noise_multiplier=calibrate_noise_multiplier(base, a.n, eps, DELTA), bug=bug)
        rng = np.random.default_rng([int(eps), len(rows)])
        S = np.stack([draw_inclusion(a.m, rng) for _ in range(a.runs)])
        seeds = [int(s) for s in rng.integers(0, 2**31, size=a.runs)]
        bank, scores = learner.fit_many_with_canaries(X, y, [np.arange(a.n)] * a.runs, seeds, included=S > 0)
        accounted = float(bank.info["epsilon"][0])
        out = {"claimed_epsilon": eps, "accounted_epsilon": accounted, "bug": bug, "m": a.m, "runs": a.runs,
               "sampling_rate": sch["sampling_rate"], "steps": sch["steps"],
               "noise_multiplier": learner.noise_multiplier, "grid": [list(p) for p in grid],
               "trainer": bank.info.get("kernel")}
        for name in ("leakaudit", "privacymeter"):
            bounds, cpu = [], []
            for r in range(a.runs):
                c0 = time.process_time()
                if name == "leakaudit":
                    b = check_claim(S[r], scores[r], claimed_epsilon=eps, delta=DELTA, grid=grid).epsilon_lower_bound
                else:
                    b = float(peer["compute_abstain_attack_results"](scores[r], (S[r] > 0).astype(int))["eps_opt"])
                cpu.append(time.process_time() - c0)
                bounds.append(float(b))
            above = int(np.sum(np.asarray(bounds) > accounted))
            out[name] = {"bounds": bounds, "mean_bound": float(np.mean(bounds)), "runs_above_accounted": above,
                         "above_interval": list(clopper_pearson(above, a.runs)),
                         "cpu_seconds_per_audit": float(np.median(cpu))}
        rows.append(out)
        print(f"eps {eps:g} ({accounted:.3f}), {bug or 'correct'}: "
              f"leakaudit mean {out['leakaudit']['mean_bound']:.2f}, "
              f"above {out['leakaudit']['runs_above_accounted']}/{a.runs}, "
              f"{out['leakaudit']['cpu_seconds_per_audit']:.3f} s; ML Privacy Meter mean "
              f"{out['privacymeter']['mean_bound']:.2f}, above {out['privacymeter']['runs_above_accounted']}/{a.runs}, "
              f"{out['privacymeter']['cpu_seconds_per_audit']:.3f} s", flush=True)
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps({
            "benchmark": "dpaudit_vs_privacymeter_dpsgd", "peer": "ml_privacy_meter (GitHub)", "peer_commit": commit,
            "dataset": "adult (long columns)", "n_train": a.n, "hidden": 64, "delta_ours": DELTA, "delta_theirs": 0.0,
            "beta": 0.05, "rows": rows, "load_average": list(os.getloadavg())}, indent=1) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()

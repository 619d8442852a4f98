"""Soundness and tightness of the empirical-epsilon lower bounds: Clopper-Pearson (the audit's) against the
joint-beta credible bound (Zanella-Beguelin et al. 2023), on mechanisms whose epsilon is known exactly.

Each trial draws ``n`` members and ``n`` non-members and one attack score per record from a mechanism that is
exactly eps-DP in the membership bit (delta 0), then runs :func:`leakaudit.metrics.empirical_epsilon` (threshold
chosen on a random half, both bounds on the other half's counts for that test, at 95 %):

* ``rr``: randomised response, the score is the membership bit kept with probability e^eps / (1 + e^eps): every
  test lies on the DP region's boundary, the hardest case for soundness;
* ``laplace``: the score is the bit plus Laplace noise of scale 1 / eps: eps-DP, tight only in the tails.

At eps 0 both are pure noise (the bit dropped): no bound above 0 is sound there.

Soundness: the share of trials whose bound exceeds the true eps (a 95 % bound should do so in 5 % of trials at
most; a Bayesian bound has no such guarantee, so this is measured, with its exact 95 % interval). Tightness: the
mean bound (closer to eps is tighter).

Usage: .venv/bin/python benchmarks/epsilon_joint_beta.py [--trials 400] [--out F]
Writes benchmarks/results/epsilon_joint_beta.json after every row (a rerun skips the rows it holds).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import numpy as np

HERE = Path(__file__).resolve().parent
CONFIDENCE = 0.95
ROWS = [(mech, eps, n) for mech in ("rr", "laplace") for eps in (0.0, 1.0, 4.0) for n in (50, 500)]


def _scores(mech: str, eps: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    m = np.repeat([1, 0], n)
    if mech == "rr":
        keep = rng.random(2 * n) < np.exp(eps) / (1 + np.exp(eps))
        s = np.where(keep, m, 1 - m).astype(float)
    else:
        s = (m if eps > 0 else 0) + rng.laplace(scale=1.0 / eps if eps > 0 else 1.0, size=2 * n)
    return m, s


def _row(mech: str, eps: float, n: int, trials: int) -> dict:
    from leakaudit.metrics import empirical_epsilon
    from leakaudit.metrics._intervals import clopper_pearson

    cp, jb = np.empty(trials), np.empty(trials)
    wall, cpu = time.perf_counter(), time.process_time()
    for t in range(trials):
        rng = np.random.default_rng([int(eps * 10), n, t, mech == "rr"])
        m, s = _scores(mech, eps, n, rng)
        b = empirical_epsilon(m, s, confidence=CONFIDENCE, random_state=rng)
        cp[t], jb[t] = b.epsilon_lb, b.epsilon_lb_joint_beta
    out = {"mechanism": mech, "epsilon": eps, "n_per_class": n, "trials": trials, "confidence": CONFIDENCE,
           "wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(time.process_time() - cpu, 1)}
    for name, v in (("clopper_pearson", cp), ("joint_beta", jb)):
        k = int(np.sum(v > eps))
        lo, hi = clopper_pearson(k, trials, confidence=0.95)
        out[name] = {"above_true": k, "rate": k / trials, "rate_ci": [float(lo), float(hi)],
                     "mean": float(np.mean(v)), "median": float(np.median(v)),
                     "max_excess": float(np.max(v - eps)),
                     "q05_q95": [float(np.quantile(v, 0.05)), float(np.quantile(v, 0.95))]}
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "epsilon_joint_beta.json")
    a = ap.parse_args(argv)
    done = json.loads(a.out.read_text()) if a.out.exists() else {"rows": []}
    have = {(r["mechanism"], r["epsilon"], r["n_per_class"], r["trials"]) for r in done["rows"]}
    done["load_1min_start"] = os.getloadavg()[0]
    for mech, eps, n in ROWS:
        if (mech, eps, n, a.trials) in have:
            continue
        r = _row(mech, eps, n, a.trials)
        r["load_1min"] = os.getloadavg()[0]
        done["rows"].append(r)
        a.out.write_text(json.dumps(done, indent=1))
        c, j = r["clopper_pearson"], r["joint_beta"]
        print(f"{mech:8s} eps {eps:g} n {n:4d}: above true eps: CP {c['rate']:.3f} [{c['rate_ci'][0]:.3f}, "
              f"{c['rate_ci'][1]:.3f}], "
              f"JB {j['rate']:.3f} [{j['rate_ci'][0]:.3f}, {j['rate_ci'][1]:.3f}]; mean bound CP {c['mean']:.3f}, "
              f"JB {j['mean']:.3f}; {r['wall_s']} s wall, {r['cpu_s']} s CPU", flush=True)


if __name__ == "__main__":
    main()

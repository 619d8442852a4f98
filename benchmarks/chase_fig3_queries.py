"""Do the queries, not the shadow models, limit Chase et al.'s attack on SpamAssassin (chase-fig3-curves)?

chase-fig3-curves' SpamAssassin curves are flat in the number of shadow models (k = 10 to 200 per world), while
Algorithm 2 accepts only 35-47 queries there (its pool is exhausted; Census gender, whose curve rises, accepts
65-90). If the queries bind, capping them lower should cost accuracy at a fixed k, and more shadow models should not
help. This script caps Algorithm 2's q (the reduced profile's settings otherwise, k = 50 per world, seeds 0-4; the
cases named full:... the full profile's) for
SpamAssassin random at p = 0.05 and, for comparison, Census gender at p = 0.10, and records the accuracy and the
queries accepted. One JSON line per setting, cap and seed in results/chase_fig3_queries.jsonl.

    OMP_NUM_THREADS=1 python benchmarks/chase_fig3_queries.py [CASE ...]   (default: every case)

The census-gender cases also ask whether fewer queries help on the property whose Table III black box falls short
(0.65 / 0.77 at p = 0.03 / 0.10 against the paper's 0.99 / 1.0): Algorithm 2's queries include the poison points
themselves, so with a small cap the attack's statistic is mostly the poison points' labels.
"""

import json
import sys
from pathlib import Path

import numpy as np

from leakaudit.reproduce import chase as C

OUT = Path(__file__).parent / "results" / "chase_fig3_queries.jsonl"
# case -> (setting, poisoning rate, shadow models per world, the caps on Algorithm 2's q)
CASES = {
    "enron-random": ("enron-random", 0.05, 50, (10, 20, 150)),
    "census-gender": ("census-gender", 0.10, 50, (10, 20, 40, 300)),
    # Table III's gender black box at the reduced profile's counts (p = 0.03 with 100 shadow models a world)
    "census-gender-p03": ("census-gender", 0.03, 100, (1, 10, 300)),
    "census-gender-p10-cap1": ("census-gender", 0.10, 50, (1,)),
    # the same at the full profile's counts (r = 1,000, 100 targets, the whole Census): Table III's setting
    "full:census-gender-p03": ("census-gender", 0.03, 100, (1, 1000)),
    "full:census-gender-p10": ("census-gender", 0.10, 50, (1, 1000)),
}
SEEDS = range(5)


def main() -> int:
    names = sys.argv[1:] or list(CASES)
    bad = [n for n in names if n not in CASES]
    if bad:
        print(f"chase_fig3_queries.py: unknown case {bad[0]!r}; cases: {', '.join(CASES)}", file=sys.stderr)
        return 2
    OUT.parent.mkdir(exist_ok=True)
    for name in names:
        setting, p, k, caps = CASES[name]
        profile = "full" if name.startswith("full:") else "reduced"
        for cap in caps:
            cfg = dict(C.CONFIG[profile])
            cfg["reps"] = 1
            cfg["q"] = {"census": cap, "spam": cap}
            accs = []
            for seed in SEEDS:
                r = C._sweep(setting, cfg, (p,), k=k, seed=seed)[p][0][0]
                accs.append(r.accuracy)
                rec = {"profile": profile, "setting": setting, "p": p, "k": k, "q_cap": cap, "seed": seed,
                       "accuracy": r.accuracy, "queries": int(r.n_queries)}
                with OUT.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                print(json.dumps(rec), flush=True)
            print(f"{profile} {setting} p={p} k={k} q cap {cap}: mean accuracy {np.mean(accs):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What one seed of chase-table3's full profile costs, stage by stage: the paper's shadow counts (white box 1,000
networks per world; black box 1,000 / 100 / 50 per world at p = 0 / 0.03 or 0.05 / 0.10), the full profile's
r = 1,000 ensemble models, q = 1,000 queries, 100 targets and the whole Census, for one property and one seed.

The white box and each black-box row run exactly as ``chase.table3("full", ...)`` runs them (``whitebox_attack`` and
``chase._sweep`` with the full profile's settings, one repetition). One JSON line per stage, with its wall and CPU
seconds, is appended to results/chase_table3_full_cost.jsonl as it finishes, so a stopped run keeps its stages.
The full profile is five seeds of each of three properties: docs/chase.md (Table III) multiplies these out.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/chase_table3_full_cost.py census-gender 0
"""

import json
import sys
import time
from pathlib import Path

from leakaudit.property.game import split_pools
from leakaudit.property.whitebox import whitebox_attack
from leakaudit.reproduce import chase as C

OUT = Path(__file__).resolve().parent / "results" / "chase_table3_full_cost.jsonl"


def _write(line: dict) -> None:
    print(json.dumps(line), flush=True)
    with OUT.open("a") as f:
        f.write(json.dumps(line) + "\n")


def main(setting: str = "census-gender", seed: int = 0) -> None:
    cfg = dict(C.CONFIG["full"], reps=1)  # one repetition: seed ``seed`` only
    _, _, t0, t1 = C.SETTINGS[setting]
    k_wb = round(1000 * C.TABLE3_WB_SCALE["full"])
    base = {"setting": setting, "seed": seed, "profile": "full"}

    cpu, wall = time.process_time(), time.perf_counter()
    data = C._data(setting, cfg["synthetic"], cfg["census_rows"], seed)
    _write({**base, "stage": "load the whole Census", "rows": len(data), "features": int(data.X.shape[1]),
            "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu})

    cpu, wall = time.process_time(), time.perf_counter()
    adv, vic = split_pools(len(data), random_state=seed)
    res = whitebox_attack(data, t0=t0, t1=t1, n_train=C._n(setting, cfg), hidden=(32, 16, 8),
                          epochs=C.TABLE3_WB_EPOCHS, n_shadow=k_wb, n_targets=cfg["targets"], adversary_idx=adv,
                          victim_idx=vic, random_state=seed)
    stats = res["sorted"].engine_stats
    _write({**base, "stage": "white box", "k": k_wb, "networks": stats.n_models, "train_wall": stats.seconds,
            # each meta-classifier's fit: its result's seconds less the shared training
            "meta_wall": {m: r.seconds - stats.seconds for m, r in res.items()},
            "accuracy": {m: r.accuracy for m, r in res.items()},
            "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu})

    for p, k_paper in C.TABLE3_BB[setting]:
        cpu, wall = time.process_time(), time.perf_counter()
        r, t_q = C._sweep(setting, cfg, (p,), k=C._table3_k("full", p, k_paper), seed=seed)[p][0]
        _write({**base, "stage": "black box", "p": p, "k": k_paper, "ensemble_wall": t_q,
                "fit_wall": r.seconds_fit, "targets_wall": r.seconds_targets, "accuracy": r.accuracy,
                "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "census-gender", int(sys.argv[2]) if len(sys.argv) > 2 else 0)

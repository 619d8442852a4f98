"""Chase et al. Table III's white box with longer-trained networks: the reduced profile's chase-table3 white box
(census, n = 1,000, MLP (32, 16, 8), 100 shadow networks per world, 50 targets, both meta-classifiers) with the
networks trained ``epochs`` epochs instead of 20 (200 is chase-table2's converged recipe). Seeds 0-4; one JSON line
per seed and meta-classifier appended to results/chase_wb_epochs.jsonl, so a stopped run keeps its seeds.

    OMP_NUM_THREADS=1 nice -n 15 python benchmarks/chase_wb_epochs.py census-gender 200
"""

import json
import sys
import time
from pathlib import Path

from leakaudit.property.game import split_pools
from leakaudit.property.whitebox import whitebox_attack
from leakaudit.reproduce import chase as C

OUT = Path(__file__).resolve().parent / "results" / "chase_wb_epochs.jsonl"


def main(setting: str = "census-gender", epochs: int = 200) -> None:
    cfg = C.CONFIG["reduced"]
    _, _, t0, t1 = C.SETTINGS[setting]
    for s in range(5):
        data = C._data(setting, cfg["synthetic"], cfg["census_rows"], s)
        adv, vic = split_pools(len(data), random_state=s)
        t = time.process_time()
        res = whitebox_attack(data, t0=t0, t1=t1, n_train=C._n(setting, cfg), hidden=(32, 16, 8), epochs=epochs,
                              n_shadow=100, n_targets=cfg["targets"], adversary_idx=adv, victim_idx=vic,
                              random_state=s)
        for m, r in res.items():
            line = {"setting": setting, "epochs": epochs, "seed": s, "meta": m, "accuracy": r.accuracy, "auc": r.auc,
                    "seconds": r.seconds, "cpu": time.process_time() - t}
            print(json.dumps(line), flush=True)
            with OUT.open("a") as f:
                f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "census-gender", int(sys.argv[2]) if len(sys.argv) > 2 else 200)

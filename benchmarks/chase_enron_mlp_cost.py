"""What one network of Chase et al.'s Fig. 3 'Enron MLP' curve costs on SpamAssassin, the page's Enron substitute.

The paper attacks an MLP on Enron's e-mails in Fig. 3 and gives no architecture. chase-fig3-curves runs the figure's
logistic-regression curves and not this one; this script measures why: the CPU time of one (32, 16, 8) MLP (Fig. 1's
Census MLP, chase-fig1-mlp's recipe: Adam lr 1e-3, batch 64, 200 epochs at n = 1,000) trained on 1,000 SpamAssassin
e-mails as TF-IDF over 5,000 terms plus the random bit, the features of every SpamAssassin run on the page. It times
``--epochs`` epochs (after one warm-up fit) for ``--repeats`` networks, each on its own random draw, and scales to the
recipe's 200 epochs. One JSON line per network is appended to results/chase_enron_mlp_cost.jsonl.

    OMP_NUM_THREADS=1 python benchmarks/chase_enron_mlp_cost.py --epochs 30 --repeats 5
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from leakaudit.property.datasets import spam_property_data
from leakaudit.property.game import mlp_learner
from leakaudit.reproduce.chase import MLP_TRAINING, _mlp_epochs

OUT = Path(__file__).parent / "results" / "chase_enron_mlp_cost.jsonl"


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {v}")
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=_positive, default=30, help="epochs timed per network (default 30)")
    ap.add_argument("--repeats", type=_positive, default=5, help="networks timed (default 5)")
    args = ap.parse_args(argv)

    data = spam_property_data("random", values="tfidf", random_state=0)[0]
    n = 1000
    recipe_epochs = _mlp_epochs("reduced", n)
    rng = np.random.default_rng(0)
    warm = rng.choice(len(data.y), n, replace=False)
    mlp_learner((32, 16, 8), epochs=1, lr=MLP_TRAINING["lr"]).fit(data.X[warm], data.y[warm])
    per_epoch = []
    for i in range(args.repeats):
        idx = rng.choice(len(data.y), n, replace=False)
        net = mlp_learner((32, 16, 8), epochs=args.epochs, lr=MLP_TRAINING["lr"])
        cpu, wall = time.process_time(), time.perf_counter()
        net.fit(data.X[idx], data.y[idx])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        per_epoch.append(cpu / args.epochs)
        rec = {"network": i, "n": n, "features": int(data.X.shape[1]), "epochs": args.epochs, "cpu_s": round(cpu, 3),
               "wall_s": round(wall, 3), "recipe_epochs": recipe_epochs,
               "cpu_s_at_recipe": round(cpu / args.epochs * recipe_epochs, 2),
               "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "load_1min": round(os.getloadavg()[0], 2)}
        OUT.parent.mkdir(exist_ok=True)
        with OUT.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)
    at = np.array(per_epoch) * recipe_epochs
    print(f"one network at {recipe_epochs} epochs: {at.mean():.2f} CPU s (min {at.min():.2f}, max {at.max():.2f}, "
          f"{args.repeats} networks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

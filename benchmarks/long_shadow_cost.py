"""What one targeted shadow model costs in Long et al.'s protocol, by setting: long_protocol on 20 targets x 4
iterations with shadow models trained once per target (208 models) and fresh for every attack (1,608 models); the
difference over the 1,400 extra models is one shadow model's cost. It decides which settings of long-dtp-correlation
train fresh shadow models at the full profile (reproduce/long_dtp.py, _CORR_CFG and _SHADOW_FIT_S).

    OMP_NUM_THREADS=1 python benchmarks/long_shadow_cost.py NB-Adult,LR-Adult,NN-Adult,NB-Purchase
"""

import sys
import time

import numpy as np

from leakaudit.learners import NaiveBayes, TorchMLP
from leakaudit.membership.protocols import long_protocol
from leakaudit.reproduce.long_dtp import _adult, _learners, _purchase_like


def setting(name):
    """(learner, X, y, candidates) of one long-dtp-correlation setting at seed 0."""
    if name == "NB-Purchase":
        Xp, yp = _purchase_like(0, "full")
        Dp = np.sort(np.random.default_rng(0).choice(len(Xp), 2000, replace=False))
        return NaiveBayes(n_values=[2] * Xp.shape[1]), Xp, yp, Dp
    y, D, X, Xn, cat, nv, _ = _adult(0)
    if name == "NN-Adult-100":
        return TorchMLP(hidden=(64,), activation="tanh", epochs=100, mode="faithful"), X, y, D
    learner, enc = _learners(cat, nv)[name]
    return learner, (Xn if enc == "nb" else X), y, D


if __name__ == "__main__":
    for name in sys.argv[1].split(","):
        learner, X, y, D = setting(name)
        cpu = {}
        for reuse in ("per_target", "per_attack"):
            t0 = time.process_time()
            res = long_protocol(learner, X, y, candidates=D, n_targets=20, n_iterations=4, attacks=("distance",),
                                shadow_reuse=reuse, random_state=1)
            cpu[reuse] = (time.process_time() - t0, res.engine_stats.models_trained)
        (c0, m0), (c1, m1) = cpu["per_target"], cpu["per_attack"]
        print(f"{name}: once per target {c0:.2f} CPU s ({m0} models), fresh per attack {c1:.2f} CPU s ({m1} models): "
              f"{1000 * (c1 - c0) / (m1 - m0):.2f} ms a shadow model", flush=True)

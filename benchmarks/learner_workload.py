"""A learner workload to time one checkout against another: run with a checkout path (its src/ and benchmarks/).

Usage: python benchmarks/learner_workload.py CHECKOUT {forest,mlp}; each phase prints its process CPU seconds (after
a warm-up call outside the timers), so two checkouts can be compared by alternating whole processes.

forest: 20 forests x 100 trees on halves of 2,000 Adult rows (the SACRO-ML bench's data): fit_predict_many on all
2,000 rows, then fit_many + predict_proba. mlp: 16 TorchMLP (64 tanh units, Adam, 50 epochs, batch 200) on halves
of the same rows, fast mode (the compiled kernel), then faithful mode (per-example SGD, 5 epochs).
"""
import sys
import time

tree, what = sys.argv[1], sys.argv[2]
sys.path[:0] = [f"{tree}/src", f"{tree}/benchmarks"]
import numpy as np  # noqa: E402

import bench_lira_vs_sacroml as B  # noqa: E402

Xtr, ytr, Xte, yte = B.split(1000, 0)
X, y = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
rng = np.random.default_rng(0)
t_start = time.perf_counter()
if what == "forest":
    from leakaudit.learners import RandomForest

    subsets = [np.sort(rng.permutation(2000)[:1000]) for _ in range(20)]
    L = RandomForest(n_estimators=100, n_threads=2)
    # warm-up outside the timers (the kernels load; in an older checkout, numba loads its cached machine code)
    RandomForest(n_estimators=4, n_threads=2).fit_predict_many(X, y, subsets[:2], [0, 1], X[:50], n_classes=2)
    RandomForest(n_estimators=4, n_threads=2).fit_many(X, y, subsets[:1], [0], n_classes=2).predict_proba(X[:50])
    c0 = time.process_time()
    p1 = L.fit_predict_many(X, y, subsets, list(range(20)), X, n_classes=2)
    c1 = time.process_time()
    bank = L.fit_many(X, y, subsets, list(range(20)), n_classes=2)
    c2 = time.process_time()
    p2 = bank.predict_proba(X)
    c3 = time.process_time()
    print(f"forest cpu: fit_predict_many {c1 - c0:.3f} s, fit_many {c2 - c1:.3f} s, predict {c3 - c2:.3f} s, "
          f"checksum {p1[..., 1].sum():.9f} {p2[..., 1].sum():.9f}")
else:
    from leakaudit.learners import TorchMLP

    subsets = [np.sort(rng.permutation(2000)[:1000]) for _ in range(16)]
    for mode in ("fast", "faithful"):  # warm-up outside the timers
        TorchMLP(hidden=(64,), epochs=1, mode=mode, n_threads=2).fit_many(X, y, subsets[:2], [0, 1]).predict_proba(X)
    t0 = time.process_time()
    bank = TorchMLP(hidden=(64,), epochs=50, batch_size=200, n_threads=2).fit_many(X, y, subsets, list(range(16)))
    p1 = bank.predict_proba(X)
    t1 = time.process_time()
    bank2 = TorchMLP(hidden=(64,), epochs=5, mode="faithful", n_threads=2).fit_many(X, y, subsets[:8], list(range(8)))
    p2 = bank2.predict_proba(X)
    t2 = time.process_time()
    print(f"mlp cpu: fast {t1 - t0:.3f} s ({bank.info.get('kernel')}), faithful {t2 - t1:.3f} s "
          f"({bank2.info.get('kernel')}), checksum {p1[..., 1].sum():.6f} {p2[..., 1].sum():.6f}")
print(f"total in-process {time.perf_counter() - t_start:.3f} s")

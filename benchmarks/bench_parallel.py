"""Parallel speed-up on this machine's cores: the same work with 1 thread (or worker) and with all of them.

Each workload trains the same models twice, once with ``n_threads=1`` (``n_jobs=1``) and once with every core,
and checks that both runs give the same models (every trainer here computes a model on one thread, so thread
count must not change a bit). Speed-up = wall(1) / wall(all); efficiency = speed-up / cores.

Workloads (Adult, one-hot + z-scored, 1,000 rows per model):

* ``mlp_faithful``: ``TorchMLP(mode="faithful")``, K models x 1,000 rows x 10 epochs, 64 tanh units
  (the compiled per-example SGD kernel; models spread over threads).
* ``mlp_fast``: ``TorchMLP(mode="fast")``, K models, batch 200, 30 epochs, 64 tanh units (the backend that
  ``backend="auto"`` picks is recorded).
* ``forest``: ``RandomForest`` (our compiled-C forest), K forests of 100 trees (skipped if absent).
* ``engine_process``: ``Engine(backend="process", n_jobs=1 vs all)`` training scikit-learn logistic regressions
  (``SklearnLearner``), the generic path for learners without a batched trainer.

The machine is shared: the load average is recorded before and after each run; a speed-up measured under load
is a lower bound of the idle one. Usage: ``.venv/bin/python benchmarks/bench_parallel.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def _data(n: int, seed: int = 0):
    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[: 2 * n]
    return X[idx], y[idx]


def _subsets(n_pool: int, n: int, K: int, seed: int):
    rng = np.random.default_rng(seed)
    return [np.sort(rng.choice(n_pool, size=n, replace=False)) for _ in range(K)]


def _timed(fit):
    with C.Timer() as t:
        out = fit()
    return t, out


def _row(name: str, work: str, cores: int, t1, tn, same: bool, **extra) -> dict:
    return {"name": name, "work": work, "cores": cores, "seconds_1": t1.seconds, "cpu_seconds_1": t1.cpu_seconds,
            "seconds_all": tn.seconds, "cpu_seconds_all": tn.cpu_seconds, "speedup": t1.seconds / tn.seconds,
            "efficiency": t1.seconds / tn.seconds / cores, "identical_models": bool(same), **extra}


def mlp(mode: str, K: int, epochs: int, cores: int, n: int = 1000) -> dict:
    from leakaudit.learners import TorchMLP

    X, y = _data(n)
    subs = _subsets(len(y), n, K, 1)
    seeds = list(range(K))

    def run(threads):
        learner = TorchMLP(hidden=(64,), activation="tanh", mode=mode, epochs=epochs, n_threads=threads,
                           **({"batch_size": 200} if mode == "fast" else {}))
        return _timed(lambda: learner.fit_many(X, y, subs, seeds, n_classes=2))

    run(1)  # compile / warm caches outside the timers
    load0 = C.loadavg()
    t1, b1 = run(1)
    tn, bn = run(cores)
    same = np.array_equal(b1.predict_proba(X[:200]), bn.predict_proba(X[:200]))
    backend = getattr(b1, "info", {}).get("backend")
    return _row(f"mlp_{mode}", f"TorchMLP(mode={mode!r}) 64 tanh, {K} models x {n} Adult rows x {epochs} epochs"
                + (", batch 200" if mode == "fast" else ""), cores, t1, tn, same, backend=backend,
                load_start=load0, load_end=C.loadavg())


def forest(K: int, cores: int, n: int = 1000, trees: int = 100) -> dict | None:
    try:
        from leakaudit.learners import RandomForest
    except ImportError:
        return None
    X, y = _data(n)
    subs = _subsets(len(y), n, K, 2)
    seeds = list(range(K))

    def run(threads):
        learner = RandomForest(n_estimators=trees, n_threads=threads)
        return _timed(lambda: learner.fit_many(X, y, subs, seeds, n_classes=2))

    run(1)
    load0 = C.loadavg()
    t1, b1 = run(1)
    tn, bn = run(cores)
    same = np.array_equal(b1.predict_proba(X[:200]), bn.predict_proba(X[:200]))
    return _row("forest", f"RandomForest {trees} trees, {K} forests x {n} Adult rows", cores, t1, tn, same,
                load_start=load0, load_end=C.loadavg())


def engine_process(K: int, cores: int, n: int = 1000) -> dict:
    from sklearn.linear_model import LogisticRegression

    from leakaudit.engine import Engine
    from leakaudit.learners import SklearnLearner

    X, y = _data(n)
    subs = _subsets(len(y), n, K, 3)
    learner = SklearnLearner(LogisticRegression(max_iter=1000))

    def run(jobs):
        eng = Engine(backend="process", n_jobs=jobs, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _timed(lambda: eng.predict_many(learner, X, y, subs, 0, X[:200], n_classes=2))

    run(cores)  # start the worker pool once (loky reuses it)
    load0 = C.loadavg()
    t1, o1 = run(1)
    tn, on = run(cores)
    return _row("engine_process", f"Engine(backend='process'), scikit-learn LogisticRegression, {K} models x {n} "
                "Adult rows", cores, t1, tn, np.array_equal(o1, on), load_start=load0, load_end=C.loadavg())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a check that everything runs)")
    a = ap.parse_args(argv)
    C.warm_up()
    cores = os.cpu_count() or 1
    q = a.quick
    rows = [mlp("faithful", 8 if q else 200, 2 if q else 10, cores),
            mlp("fast", 8 if q else 100, 2 if q else 30, cores),
            forest(4 if q else 20, cores, trees=10 if q else 100),
            engine_process(8 if q else 200, cores)]
    rows = [r for r in rows if r is not None]
    for r in rows:
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k != "work"}, flush=True)
    C.write_result("parallel" + ("_quick" if q else ""), {"rows": rows})


if __name__ == "__main__":
    main()

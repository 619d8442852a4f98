"""Run Engine.predict_many in a child process (used by the kill/resume and concurrency tests).

Usage: python _engine_child.py CACHE_DIR OUT.npy DELAY CHUNK_SIZE [BACKEND] (DELAY: seconds of sleep per model)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from _engine_learners import CentroidLearner, make_data, make_subsets  # noqa: E402
from leakaudit.engine import Engine  # noqa: E402

K = 40


def problem():
    X, y = make_data(n=200)
    return CentroidLearner(), X, y, make_subsets(len(X), K=K, size=100), list(range(K)), X[:25]


if __name__ == "__main__":
    cache_dir, out, delay, chunk_size = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    os.environ["LEAKAUDIT_TEST_DELAY"] = str(delay)
    learner, X, y, subsets, seeds, Xq = problem()
    backend = sys.argv[5] if len(sys.argv) > 5 else "inprocess"
    engine = Engine(backend=backend, n_jobs=2 if backend == "process" else None, cache_dir=cache_dir,
                    chunk_size=chunk_size, progress=False)
    res = engine.predict_many(learner, X, y, subsets, seeds, Xq)
    np.save(out, res)
    print(engine.stats.models_trained, engine.stats.chunks_cached, flush=True)

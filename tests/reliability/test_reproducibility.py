"""The same seed gives identical results: across repeated runs, fresh interpreters, and engine backends."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from leakaudit.engine import Engine


def _data(seed=0, n=60, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    subsets = [rng.choice(n, n // 2, replace=False) for _ in range(4)]
    return X, y, subsets


def _learners():
    from sklearn.ensemble import RandomForestClassifier

    from leakaudit.learners import LogisticRegression, NaiveBayes, SklearnLearner, TorchMLP

    return {
        "torch_mlp_fast": TorchMLP(hidden=(8,), epochs=3, mode="fast"),
        "torch_mlp_faithful": TorchMLP(hidden=(4,), epochs=2, mode="faithful"),
        "logistic": LogisticRegression(),
        "naive_bayes": NaiveBayes(categorical="none"),
        "random_forest": SklearnLearner(RandomForestClassifier(n_estimators=5, max_depth=3)),
    }


@pytest.mark.parametrize("name", list(_learners()))
def test_same_seed_identical_runs(name):
    learner = _learners()[name]
    X, y, subsets = _data()
    seeds = [11, 12, 13, 14]
    a = Engine(backend="inprocess", progress=False).predict_many(learner, X, y, subsets, seeds, X, n_classes=2)
    b = Engine(backend="inprocess", progress=False).predict_many(learner, X, y, subsets, seeds, X, n_classes=2)
    np.testing.assert_array_equal(a, b)
    one = learner.fit(X[subsets[2]], y[subsets[2]], random_state=13, n_classes=2).predict_proba(X)
    np.testing.assert_array_equal(a[2], one)  # the bank's model k is the model fitted alone with seed k
    if name.startswith("torch") or name == "random_forest":  # stochastic learners: another seed, another bank
        d = Engine(progress=False).predict_many(learner, X, y, subsets, [21, 22, 23, 24], X, n_classes=2)
        assert not np.array_equal(a, d)


@pytest.mark.slow
def test_same_seed_identical_process_backend():
    """tests/engine covers process == inprocess for its toy learners; here every real learner (slow: spawns)."""
    X, y, subsets = _data()
    seeds = [11, 12, 13, 14]
    for name, learner in _learners().items():
        a = Engine(progress=False).predict_many(learner, X, y, subsets, seeds, X, n_classes=2)
        c = Engine(backend="process", n_jobs=2, chunk_size=2, progress=False).predict_many(
            learner, X, y, subsets, seeds, X, n_classes=2)
        np.testing.assert_array_equal(a, c, err_msg=name)


@pytest.mark.ray
@pytest.mark.slow
def test_same_seed_identical_ray():
    X, y, subsets = _data()
    seeds = [5, 6, 7, 8]
    for name, learner in _learners().items():
        a = Engine(progress=False).predict_many(learner, X, y, subsets, seeds, X, n_classes=2)
        r = Engine(backend="ray", chunk_size=2, progress=False).predict_many(learner, X, y, subsets, seeds, X,
                                                                              n_classes=2)
        np.testing.assert_array_equal(a, r, err_msg=name)


CHILD = textwrap.dedent("""
    import hashlib, numpy as np
    from leakaudit.learners import TorchMLP
    from leakaudit.metrics import evaluate_membership
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)); y = (X[:, 0] > 0).astype(np.int64)
    P = TorchMLP(hidden=(8,), epochs=3, mode="fast").fit(X[:30], y[:30], random_state=3, n_classes=2).predict_proba(X)
    m = evaluate_membership(np.r_[np.ones(30), np.zeros(30)], P[np.arange(60), y], n_boot=50, random_state=4)
    print(hashlib.sha256(P.tobytes() + m.to_json().encode()).hexdigest())
""")


def test_same_seed_identical_across_fresh_interpreters():
    """A fresh Python process (another hash seed) and this one compute the same bytes."""
    outs = set()
    for hashseed in ("1",):
        r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120,
                           env={**__import__("os").environ, "PYTHONHASHSEED": hashseed})
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout.strip())
    ns: dict = {}
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(CHILD, ns)
    outs.add(buf.getvalue().strip())
    assert len(outs) == 1, outs


def test_attack_pipeline_repeatable():
    """A whole null audit (targets, reference models, LiRA, bootstrap) repeats bit for bit."""
    from .test_null_models import null_run

    assert null_run(3, n_boot=50) == null_run(3, n_boot=50)

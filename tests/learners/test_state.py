"""Banks as plain arrays (SupportsState): LogisticRegression and TorchMLP banks round-trip bit for bit."""

import numpy as np
import pytest
import scipy.sparse as sp

from leakaudit.engine import Engine, supports_state
from leakaudit.learners import LogisticRegression, TorchMLP


def _data(sparse, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((150, 12)) < 0.25).astype(np.float64)  # one-hot-like rows
    y = (X[:, :4].sum(1) + rng.random(150) > 1.2).astype(np.int64)
    subsets = [rng.choice(150, 90, replace=False) for _ in range(4)]
    return (sp.csr_matrix(X) if sparse else X), y, subsets


LEARNERS = [
    pytest.param(LogisticRegression(C=1.0), False, id="LogisticRegression-newton"),
    pytest.param(LogisticRegression(C=0.5, solver="lbfgs"), True, id="LogisticRegression-lbfgs-sparse"),
    pytest.param(TorchMLP(hidden=(6,), epochs=2), False, id="TorchMLP-faithful"),
    pytest.param(TorchMLP(hidden=(6, 4), activation="relu", mode="fast", batch_size=16, epochs=2), True,
                 id="TorchMLP-fast-sparse"),
]


@pytest.mark.parametrize("learner, sparse", LEARNERS)
def test_state_roundtrip_predicts_the_same_bits(learner, sparse):
    assert supports_state(learner)
    X, y, subsets = _data(sparse)
    bank = learner.fit_many(X, y, subsets, [1, 2, 3, 4], n_classes=2)
    state = learner.get_state(bank)
    assert all(isinstance(v, np.ndarray) and v.dtype != object for v in state.values())
    again = learner.from_state({k: np.array(v) for k, v in state.items()})
    assert again.accepts_sparse == bank.accepts_sparse
    Xd = X.toarray() if sparse else X
    for Xq in ((X, Xd) if bank.accepts_sparse else (Xd,)):
        np.testing.assert_array_equal(again.predict_proba(Xq), bank.predict_proba(Xq))
    np.testing.assert_array_equal(again.model(2).predict_proba(Xd), bank.model(2).predict_proba(Xd))


@pytest.mark.parametrize("learner, sparse", LEARNERS[1:2] + LEARNERS[3:])
def test_engine_caches_banks_of_stateful_learners(tmp_path, learner, sparse):
    X, y, subsets = _data(sparse, seed=1)
    bank = learner.fit_many(X, y, subsets, [5, 6, 7, 8], n_classes=2)
    want = bank.predict_proba(X if bank.accepts_sparse else X.toarray())
    eng = Engine(cache_dir=tmp_path, chunk_size=2, progress=False, threads=None)
    first = eng.fit_bank(learner, X, y, subsets, [5, 6, 7, 8], n_classes=2)
    assert eng.stats.chunks_trained == 2
    np.testing.assert_array_equal(first.predict_proba(X), want)
    second = eng.fit_bank(learner, X, y, subsets, [5, 6, 7, 8], n_classes=2)
    assert eng.stats.chunks_cached == 2 and eng.stats.models_trained == 0
    np.testing.assert_array_equal(second.predict_proba(X), want)

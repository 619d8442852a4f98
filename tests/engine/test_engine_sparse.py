"""SciPy sparse training data through the engine: kept sparse, fingerprinted, cached, same outputs as dense."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.naive_bayes import GaussianNB

from leakaudit.engine import Engine, array_fingerprint
from leakaudit.learners import LogisticRegression, SklearnLearner


def _sparse_data(n=120, d=15, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=seed, data_rvs=lambda k: rng.integers(1, 3, k))
    w = rng.normal(size=d)
    y = (X @ w > np.median(X @ w)).astype(np.int64)
    subsets = [rng.choice(n, 60, replace=False) for _ in range(5)]
    return X, y, subsets


def test_sparse_fingerprint_depends_on_entries_not_format():
    X, _, _ = _sparse_data()
    fp = array_fingerprint(X)
    assert array_fingerprint(sp.csc_matrix(X)) == fp
    assert array_fingerprint(sp.coo_matrix(X)) == fp
    unsorted = X.copy()
    unsorted.indices = unsorted.indices.astype(np.int32)
    # same entries, one row's column order reversed (not canonical): same fingerprint, the caller's matrix untouched
    r = int(np.argmax(np.diff(X.indptr)))
    a, b = X.indptr[r], X.indptr[r + 1]
    unsorted.indices[a:b] = unsorted.indices[a:b][::-1].copy()
    unsorted.data[a:b] = unsorted.data[a:b][::-1].copy()
    unsorted.has_sorted_indices = False
    before = unsorted.indices.copy()
    assert array_fingerprint(unsorted) == fp
    np.testing.assert_array_equal(unsorted.indices, before)
    changed = X.copy()
    changed.data[0] += 1.0
    assert array_fingerprint(changed) != fp
    assert array_fingerprint(X.toarray()) != fp  # a dense array never shares a sparse matrix's fingerprint


@pytest.mark.parametrize("learner", [LogisticRegression(C=0.5, solver="lbfgs"), SklearnLearner(GaussianNB())],
                         ids=["sparse-learner", "dense-learner"])
def test_sparse_predict_many_equals_the_learner_and_is_cached(tmp_path, learner):
    X, y, subsets = _sparse_data()
    seeds = [3, 4, 5, 6, 7]
    Xq = X[:30]
    want = learner.fit_many(X, y, subsets, seeds, n_classes=2).predict_proba(
        Xq if learner.accepts_sparse else Xq.toarray())
    eng = Engine(cache_dir=tmp_path, chunk_size=2, progress=False)
    got = eng.predict_many(learner, X, y, subsets, seeds, Xq, n_classes=2)
    np.testing.assert_array_equal(got, want)
    assert eng.stats.cache_used and eng.stats.chunks_trained == 3
    again = eng.predict_many(learner, X, y, subsets, seeds, Xq, n_classes=2)
    np.testing.assert_array_equal(again, want)
    assert eng.stats.chunks_cached == 3 and eng.stats.models_trained == 0
    # a chunk's key does not depend on the call's other subsets: the first two models alone hit the cache
    eng.predict_many(learner, X, y, subsets[:2], seeds[:2], Xq, n_classes=2)
    assert eng.stats.chunks_cached == 1 and eng.stats.models_trained == 0
    # other data miss
    X2 = X.copy()
    X2.data[-1] += 1.0
    eng.predict_many(learner, X2, y, subsets, seeds, Xq, n_classes=2)
    assert eng.stats.chunks_cached == 0


def test_sparse_fit_bank_queries_sparse_rows(tmp_path):
    X, y, subsets = _sparse_data(seed=1)
    seeds = [1, 2, 3, 4, 5]
    for learner in (LogisticRegression(C=0.5, solver="lbfgs"), SklearnLearner(GaussianNB())):
        want = learner.fit_many(X, y, subsets, seeds, n_classes=2).predict_proba(
            X if learner.accepts_sparse else X.toarray())
        bank = Engine(cache_dir=tmp_path, chunk_size=2, progress=False).fit_bank(learner, X, y, subsets, seeds,
                                                                                   n_classes=2)
        np.testing.assert_array_equal(bank.predict_proba(X), want)


def test_sparse_process_backend_equals_inprocess():
    X, y, subsets = _sparse_data(seed=2)
    seeds = [1, 2, 3, 4, 5]
    learner = SklearnLearner(GaussianNB())
    a = Engine(chunk_size=2, progress=False).predict_many(learner, X, y, subsets, seeds, X[:10], n_classes=2)
    with Engine(backend="process", n_jobs=2, chunk_size=2, progress=False) as eng:
        b = eng.predict_many(learner, X, y, subsets, seeds, X[:10], n_classes=2)
    np.testing.assert_array_equal(a, b)

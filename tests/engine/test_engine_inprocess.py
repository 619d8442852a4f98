"""Engine on the in-process backend: equality with fit_many, chunking, cache hits, corruption, bad input."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from _engine_learners import CentroidLearner, make_data, make_subsets
from leakaudit.engine import CacheWarning, ChunkedModelBank, Engine, default_chunk_size, supports_state
from leakaudit.exceptions import InvalidInputError, InvalidParameterError, LeakauditError
from leakaudit.learners import SklearnLearner

X, Y = make_data()
SUBSETS = make_subsets(len(X), K=11, size=60)
SEEDS = list(range(100, 111))
XQ = X[:17]


def reference(learner, subsets=SUBSETS, seeds=SEEDS, xq=XQ, **kw):
    return learner.fit_many(X, Y, subsets, seeds, **kw).predict_proba(xq)


@pytest.mark.parametrize("learner", [CentroidLearner(), SklearnLearner(LogisticRegression(max_iter=200)),
                                     SklearnLearner(DecisionTreeClassifier(max_depth=3, splitter="random"))])
@pytest.mark.parametrize("chunk_size", [None, 1, 4, 11, 50])
def test_predict_many_equals_fit_many(learner, chunk_size):
    out = Engine(chunk_size=chunk_size, progress=False).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert out.shape == (11, 17, 3)
    np.testing.assert_array_equal(out, reference(learner))


def test_threads_setting_restored_and_results_unchanged():
    from threadpoolctl import threadpool_info, threadpool_limits

    learner = SklearnLearner(LogisticRegression())
    with threadpool_limits(limits=2):
        before = [i["num_threads"] for i in threadpool_info()]
        a = Engine(threads=1).predict_many(learner, X, Y, SUBSETS[:3], SEEDS[:3], XQ)
        assert [i["num_threads"] for i in threadpool_info()] == before
        b = Engine(threads=None).predict_many(learner, X, Y, SUBSETS[:3], SEEDS[:3], XQ)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_model_k_equals_single_fit():
    learner = SklearnLearner(DecisionTreeClassifier(splitter="random", max_features=2))
    out = Engine(chunk_size=3).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    for k in (0, 5, 10):
        one = learner.fit(X[SUBSETS[k]], Y[SUBSETS[k]], random_state=SEEDS[k], n_classes=3).predict_proba(XQ)
        np.testing.assert_array_equal(out[k], one)


def test_seed_spawned_from_one_int_matches_explicit_seeds():
    from leakaudit._random import spawn_seeds

    learner = CentroidLearner()
    a = Engine(chunk_size=2).predict_many(learner, X, Y, SUBSETS, 7, XQ)
    b = Engine(chunk_size=5).predict_many(learner, X, Y, SUBSETS, spawn_seeds(7, len(SUBSETS)), XQ)
    np.testing.assert_array_equal(a, b)


def test_n_classes_and_boolean_masks():
    masks = [np.isin(np.arange(len(X)), s) for s in SUBSETS[:3]]
    learner = CentroidLearner()
    out = Engine().predict_many(learner, X, Y, masks, SEEDS[:3], XQ, n_classes=5)
    assert out.shape == (3, 17, 5)
    np.testing.assert_array_equal(out, reference(learner, SUBSETS[:3], SEEDS[:3], n_classes=5))


def test_regressor_outputs_two_dimensional():
    rng = np.random.default_rng(3)
    Xr = rng.normal(size=(50, 3))
    yr = Xr @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=50)
    learner = SklearnLearner(LinearRegression())
    subsets = make_subsets(50, K=4, size=30)
    out = Engine(chunk_size=3).predict_many(learner, Xr, yr, subsets, [1, 2, 3, 4], Xr[:6])
    assert out.shape == (4, 6)
    for k, s in enumerate(subsets):
        coef, *_ = np.linalg.lstsq(np.c_[Xr[s], np.ones(len(s))], yr[s], rcond=None)
        np.testing.assert_allclose(out[k], np.c_[Xr[:6], np.ones(6)] @ coef, atol=1e-10)


def test_cache_second_run_trains_nothing(tmp_path):
    learner = CentroidLearner()
    e1 = Engine(cache_dir=tmp_path, chunk_size=4)
    first = e1.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert (e1.stats.chunks_trained, e1.stats.models_trained, e1.stats.chunks_cached) == (3, 11, 0)
    assert len(list((tmp_path / "v1").glob("*/*.npz"))) == 3
    e2 = Engine(cache_dir=tmp_path, chunk_size=4)
    second = e2.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert (e2.stats.chunks_trained, e2.stats.models_trained, e2.stats.chunks_cached) == (0, 0, 3)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("change", ["hyper", "X", "y", "query", "seed", "subset", "n_classes"])
def test_cache_key_covers_every_input(tmp_path, change):
    learner = CentroidLearner()
    e = Engine(cache_dir=tmp_path, chunk_size=11)
    e.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    args = dict(learner=learner, X=X, y=Y, subsets=SUBSETS, seeds=SEEDS, X_query=XQ, n_classes=None)
    if change == "hyper":
        args["learner"] = CentroidLearner(jitter=0.2)
    elif change == "X":
        X2 = X.copy()
        X2[-1, 0] += 1e-9
        args["X"] = X2
    elif change == "y":
        y2 = Y.copy()
        y2[-1] = (y2[-1] + 1) % 3
        args["y"] = y2
    elif change == "query":
        args["X_query"] = XQ[:-1]
    elif change == "seed":
        args["seeds"] = SEEDS[:-1] + [999]
    elif change == "subset":
        args["subsets"] = SUBSETS[:-1] + [SUBSETS[-1][:-1]]
    else:
        args["n_classes"] = 4
    e.predict_many(**args)
    assert e.stats.chunks_cached == 0 and e.stats.models_trained == 11


def test_cache_shared_by_clone_and_ignores_n_jobs(tmp_path):
    from sklearn.base import clone

    learner = SklearnLearner(LogisticRegression(C=3.0))
    Engine(cache_dir=tmp_path).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    e = Engine(cache_dir=tmp_path)
    e.predict_many(clone(learner).set_params(n_jobs=2), X, Y, SUBSETS, SEEDS, XQ)
    assert e.stats.models_trained == 0
    e.predict_many(SklearnLearner(LogisticRegression(C=3.5)), X, Y, SUBSETS, SEEDS, XQ)
    assert e.stats.models_trained == 11


def test_corrupted_entries_recomputed(tmp_path):
    learner = CentroidLearner()
    want = Engine(cache_dir=tmp_path, chunk_size=3).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    entries = sorted((tmp_path / "v1").glob("*/*.npz"))
    assert len(entries) == 4
    data = entries[0].read_bytes()
    entries[0].write_bytes(data[: len(data) - 40])  # truncated
    data = bytearray(entries[2].read_bytes())
    data[len(data) // 2] ^= 0x5A  # one flipped byte
    entries[2].write_bytes(bytes(data))
    e = Engine(cache_dir=tmp_path, chunk_size=3)
    with pytest.warns(CacheWarning, match="corrupt"):
        got = e.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert e.stats.corrupt_entries == 2 and e.stats.chunks_trained == 2 and e.stats.chunks_cached == 2
    np.testing.assert_array_equal(got, want)
    # Repaired: a third run reads everything.
    e.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert e.stats.models_trained == 0 and e.stats.corrupt_entries == 0


def test_unfingerprintable_learner_runs_uncached(tmp_path):
    learner = SklearnLearner(LogisticRegression(random_state=np.random.RandomState(0)))
    e = Engine(cache_dir=tmp_path)
    with pytest.warns(CacheWarning, match="not cached.*random generator"):
        out = e.predict_many(learner, X, Y, SUBSETS[:2], SEEDS[:2], XQ)
    assert out.shape == (2, 17, 3) and not e.stats.cache_used
    assert not list((tmp_path / "v1").glob("*/*.npz"))


def test_fit_bank_with_state_is_cached_as_npz(tmp_path):
    learner = CentroidLearner()
    assert supports_state(learner)
    e = Engine(cache_dir=tmp_path, chunk_size=4)
    bank = e.fit_bank(learner, X, Y, SUBSETS, SEEDS)
    assert isinstance(bank, ChunkedModelBank) and len(bank) == 11 and bank.n_chunks == 3
    assert e.stats.models_trained == 11
    np.testing.assert_array_equal(bank.predict_proba(XQ), reference(learner))
    np.testing.assert_array_equal(bank.model(9).predict_proba(XQ)[0], reference(learner)[9])
    entries = sorted((tmp_path / "v1").glob("*/*.npz"))
    assert len(entries) == 3
    with np.load(entries[0], allow_pickle=False) as z:
        assert "p__centroids" in z.files
    bank2 = Engine(cache_dir=tmp_path, chunk_size=4).fit_bank(learner, X, Y, SUBSETS, SEEDS)
    np.testing.assert_array_equal(bank2.predict_proba(XQ), reference(learner))
    e2 = Engine(cache_dir=tmp_path, chunk_size=4)
    e2.fit_bank(learner, X, Y, SUBSETS, SEEDS)
    assert e2.stats.models_trained == 0 and e2.stats.chunks_cached == 3


def test_fit_bank_without_state_keeps_models_in_memory(tmp_path):
    learner = SklearnLearner(DecisionTreeClassifier(splitter="random"))
    e = Engine(cache_dir=tmp_path, chunk_size=4)
    bank = e.fit_bank(learner, X, Y, SUBSETS, SEEDS)
    assert not e.stats.cache_used and not list((tmp_path / "v1").glob("*/*.npz"))
    np.testing.assert_array_equal(bank.predict_proba(XQ), reference(learner))
    assert bank.model(-1).estimator_.random_state == SEEDS[-1]
    with pytest.raises(IndexError):
        bank.model(11)


def test_chunk_size_default_depends_on_k_only():
    assert [default_chunk_size(k) for k in (1, 8, 9, 100, 1000, 10_000)] == [1, 1, 2, 13, 125, 512]


# -- bad input --------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(subsets=[]), "subsets is empty"),
        (dict(subsets=[np.array([], dtype=int)]), r"subsets\[0\] is empty"),
        (dict(subsets=[np.array([0, 1, 120])]), r"subsets\[0\] holds index 120, out of range"),
        (dict(subsets=[np.array([-1, 2])]), r"subsets\[0\] holds index -1"),
        (dict(subsets=[np.array([0.5, 1.0])]), "integer row indices"),
        (dict(seeds=[1, 2]), "random_states has 2 seeds for 1 subsets"),
        (dict(X_query=np.zeros((3, 2))), "X_query has 2 features but X has 4"),
        (dict(X_query=np.zeros(4)), "X_query must be a 2D array"),
        (dict(y=Y[:-1]), "inconsistent numbers of samples"),
        (dict(n_classes=2), "n_classes=2"),
    ],
)
def test_bad_input_raises_our_error(kwargs, match):
    args = dict(learner=CentroidLearner(), X=X, y=Y, subsets=[SUBSETS[0]], seeds=[1], X_query=XQ)
    args.update(kwargs)
    with pytest.raises(InvalidInputError if "seeds" not in kwargs else InvalidParameterError, match=match):
        Engine().predict_many(**args)


def test_single_class_subset_documented_behaviour():
    one_class = np.flatnonzero(Y == 1)[:10]
    # A tree fits one class: it predicts it with probability 1, other columns 0.
    out = Engine().predict_many(SklearnLearner(DecisionTreeClassifier()), X, Y, [one_class], [0], XQ)
    np.testing.assert_array_equal(out[0], np.tile([0.0, 1.0, 0.0], (17, 1)))
    # Logistic regression cannot: our error names the subset.
    with pytest.raises(InvalidInputError, match=r"single class \(subsets\[0\]\)"):
        Engine().predict_many(SklearnLearner(LogisticRegression()), X, Y, [one_class], [0], XQ)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(backend="gpu"), "backend must be one of"),
        (dict(n_jobs=0), "n_jobs must be in"),
        (dict(chunk_size=0), "chunk_size must be in"),
        (dict(chunk_size=2.5), "chunk_size must be int"),
        (dict(address="auto"), "address is only used with backend='ray'"),
        (dict(progress="yes"), "progress must be"),
        (dict(threads=0), "threads must be in"),
    ],
)
def test_bad_engine_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        Engine(**kwargs)


def test_not_a_learner():
    with pytest.raises(LeakauditError, match="learner must be a leakaudit Learner"):
        Engine().predict_many(LogisticRegression(), X, Y, [SUBSETS[0]], [1], XQ)


def test_ten_thousand_models_never_all_alive(tmp_path):
    from _engine_learners import CountingLearner, CountingModel

    K = 10_000
    rng = np.random.default_rng(5)
    subsets = [rng.choice(len(X), 5, replace=False) for _ in range(K)]
    CountingModel.alive = CountingModel.peak = 0
    e = Engine(cache_dir=tmp_path)
    out = e.predict_many(CountingLearner(), X, Y, subsets, 0, XQ[:2])
    assert out.shape == (K, 2, 3) and e.stats.chunk_size == 512 and e.stats.n_chunks == 20
    assert CountingModel.peak <= e.stats.chunk_size + 1, CountingModel.peak
    assert CountingModel.alive == 0
    # Model k's output is its subset's smoothed class frequencies.
    for k in (0, 4321, K - 1):
        p = np.bincount(Y[subsets[k]], minlength=3) + 1.0
        np.testing.assert_allclose(out[k], np.tile(p / p.sum(), (2, 1)), rtol=1e-15)

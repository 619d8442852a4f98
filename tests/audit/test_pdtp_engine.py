"""PDTP and the seed noise floor through the engine's cache: bit for bit the in-memory values,
however the leave-one-out models are chunked, and a second run reads every chunk from the cache."""

import numpy as np
import pytest

from leakaudit.dtp.noise_floor import seed_noise_floor
from leakaudit.dtp.pdtp import SharedOrderBlock, pdtp
from leakaudit.engine import Engine
from leakaudit.learners import SklearnLearner, TorchMLP


def _data(n=30, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.3] = 0.0  # sparse rows, as one-hot data (the compiled kernel skips zeros)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _same(a, b):
    for f in ("values", "per_repeat", "p_full", "p_loo"):
        assert np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f))), f
    assert a.method == b.method and a.seed_policy == b.seed_policy


@pytest.mark.parametrize("policy", ["paired", "independent"])
def test_chunked_engine_equals_single_call(tmp_path, policy):
    X, y = _data()
    learner = TorchMLP(hidden=(6,), epochs=3)
    records = np.array([0, 3, 4, 8, 11, 17, 20, 25, 29])
    ref = pdtp(learner, X, y, records=records, seed_policy=policy, random_state=5)
    for chunk, block in ((1, 2), (3, 4), (50, 256)):
        eng = Engine(cache_dir=tmp_path / f"c{chunk}", chunk_size=chunk, progress=False)
        got = pdtp(learner, X, y, records=records, seed_policy=policy, random_state=5, engine=eng, batch_size=block)
        _same(ref, got)
        assert eng.stats.cache_used and eng.stats.models_trained == eng.stats.n_models


def test_second_run_reads_every_chunk_from_cache(tmp_path):
    X, y = _data()
    learner = TorchMLP(hidden=(6,), epochs=3)
    eng = Engine(cache_dir=tmp_path, chunk_size=2, progress=False)
    first = pdtp(learner, X, y, records=np.arange(6), seed_policy="paired", random_state=1, engine=eng, batch_size=3)
    n_entries = len(eng.cache.entries())
    assert n_entries == 1 + 2 * 2  # full model; two blocks of 3 LOO models in chunks of 2

    calls = []
    orig = eng.predict_many

    def counting(*a, **k):
        out = orig(*a, **k)
        calls.append((eng.stats.chunks_cached, eng.stats.models_trained))
        return out

    eng.predict_many = counting
    again = pdtp(learner, X, y, records=np.arange(6), seed_policy="paired", random_state=1, engine=eng, batch_size=3)
    _same(first, again)
    assert sum(c for c, _ in calls) == n_entries and sum(t for _, t in calls) == 0
    # a changed setting never reads a stale entry
    other = pdtp(TorchMLP(hidden=(6,), epochs=4), X, y, records=np.arange(6), seed_policy="paired", random_state=1,
                 engine=eng, batch_size=3)
    assert calls[-1][1] > 0 and len(eng.cache.entries()) == 2 * n_entries
    assert not np.array_equal(other.p_loo, first.p_loo)


def test_shared_order_block_reproduces_one_call():
    X, y = _data(n=12)
    learner = TorchMLP(hidden=(4,), epochs=2, order="shared")
    everything = np.arange(12)
    subsets = [everything] + [np.delete(everything, t) for t in range(12)]
    whole = learner.fit_many(X, y, subsets, [7] * 13, n_classes=2).predict_proba(X)
    block = SharedOrderBlock(learner=learner, n_models=13)
    for part in ([0], [5], [3, 4, 9], list(range(13))):
        got = block.fit_many(X, y, [subsets[k] for k in part], [7] * len(part), n_classes=2).predict_proba(X)
        assert np.array_equal(got, whole[part])
    # without the padding the shared order, hence the model, changes
    alone = learner.fit_many(X, y, [subsets[5]], [7], n_classes=2).predict_proba(X)
    assert not np.array_equal(alone[0], whole[5])


def test_shared_order_block_refuses_unpaired_seeds():
    X, y = _data(n=8)
    block = SharedOrderBlock(learner=TorchMLP(hidden=(3,), epochs=1, order="shared"), n_models=3)
    with pytest.raises(Exception, match="every seed must be the same"):
        block.fit_many(X, y, [np.arange(7), np.arange(1, 8)], [1, 2])
    with pytest.raises(Exception, match="n_models=3"):
        block.fit_many(X, y, [np.arange(7)] * 4, [1] * 4)


def test_sklearn_learner_through_engine_equals_in_memory(tmp_path):
    from sklearn.linear_model import LogisticRegression as SkLR

    X, y = _data(n=25)
    learner = SklearnLearner(SkLR(C=0.5))
    ref = pdtp(learner, X, y, seed_policy="paired", random_state=2)
    got = pdtp(learner, X, y, seed_policy="paired", random_state=2, batch_size=4,
               engine=Engine(cache_dir=tmp_path, chunk_size=3, progress=False))
    _same(ref, got)


def test_seed_noise_floor_through_engine(tmp_path):
    X, y = _data()
    learner = TorchMLP(hidden=(5,), epochs=2)
    ref = seed_noise_floor(learner, X, y, queries=np.arange(10), n_models=5, random_state=4)
    eng = Engine(cache_dir=tmp_path, chunk_size=2, progress=False)
    got = seed_noise_floor(learner, X, y, queries=np.arange(10), n_models=5, random_state=4, engine=eng)
    for f in ("std_log_p", "max_std_log_p", "p_true"):
        assert np.array_equal(np.asarray(getattr(ref, f)), np.asarray(getattr(got, f))), f
    assert eng.stats.models_trained == 5
    seed_noise_floor(learner, X, y, queries=np.arange(10), n_models=5, random_state=4, engine=eng)
    assert eng.stats.models_trained == 0 and eng.stats.chunks_cached == 3

"""The default engine, engine= resolution, and the engine's statistics (per call, totals, counted blocks, results)."""

import numpy as np
import pytest

from _engine_learners import CentroidLearner, make_data, make_subsets
from leakaudit.engine import Engine, EngineStats, default_engine, reports_engine_stats, resolve_engine
from leakaudit.exceptions import InvalidParameterError

X, Y = make_data()
SUBSETS = make_subsets(len(X), K=11, size=60)
SEEDS = list(range(100, 111))


def test_default_engine_trains_a_call_in_one_chunk_in_process():
    e = default_engine()
    assert (e.backend, e.chunk_size, e.threads, e.progress, e.cache) == ("inprocess", "all", None, False, None)
    out = e.predict_many(CentroidLearner(), X, Y, SUBSETS, SEEDS, X[:5])
    np.testing.assert_array_equal(out, CentroidLearner().fit_many(X, Y, SUBSETS, SEEDS).predict_proba(X[:5]))
    assert (e.stats.n_chunks, e.stats.chunk_size, e.stats.models_trained, e.stats.cache_used) == (1, 11, 11, False)


def test_resolve_engine():
    e = Engine(chunk_size=3)
    assert resolve_engine(e) is e
    assert isinstance(resolve_engine(None), Engine)
    with pytest.raises(InvalidParameterError, match="engine must be a leakaudit.engine.Engine or None; got str"):
        resolve_engine("inprocess")


def test_chunk_size_all_and_together():
    e = Engine(chunk_size=4, progress=False)
    e.predict_many(CentroidLearner(), X, Y, SUBSETS, SEEDS, X[:5])
    assert e.stats.n_chunks == 3
    e.predict_many(CentroidLearner(), X, Y, SUBSETS, SEEDS, X[:5], together=True)
    assert (e.stats.n_chunks, e.stats.chunk_size) == (1, 11)
    with pytest.raises(InvalidParameterError, match="chunk_size must be a positive int, 'all' or None; got 'some'"):
        Engine(chunk_size="some")


def test_stats_add_up_over_calls_and_in_counted_blocks(tmp_path):
    e = Engine(chunk_size=4, cache_dir=tmp_path, progress=False)
    learner = CentroidLearner()
    with e.counting() as outer:
        e.predict_many(learner, X, Y, SUBSETS, SEEDS, X[:5])  # 3 chunks trained
        first = e.stats
        with e.counting() as inner:
            e.predict_many(learner, X, Y, SUBSETS, SEEDS, X[:5])  # 3 chunks from the cache
    e.predict_many(learner, X, Y, SUBSETS[:2], SEEDS[:2], X[:5])  # outside both blocks
    assert (first.n_calls, first.models_trained, first.chunks_trained, first.chunks_cached) == (1, 11, 3, 0)
    assert (inner.stats.n_calls, inner.stats.models_trained, inner.stats.chunks_cached) == (1, 0, 3)
    s = outer.stats
    assert (s.n_calls, s.n_models, s.models_trained, s.chunks_trained, s.chunks_cached) == (2, 22, 11, 3, 3)
    assert s == first + inner.stats and s.cache_used
    assert e.totals.n_calls == 3 and e.totals.n_models == 24
    assert e.totals.seconds == pytest.approx(sum((first.seconds, inner.stats.seconds, e.stats.seconds)))
    assert EngineStats() + EngineStats(chunk_size=4) == EngineStats(chunk_size=4)  # the largest chunk size


def test_reports_engine_stats_resolves_engine_and_fills_the_result_field():
    from leakaudit.dtp.results import NoiseFloorResult

    seen = []

    @reports_engine_stats
    def train(learner, *, engine=None):
        seen.append(engine)
        engine.predict_many(learner, X, Y, SUBSETS, SEEDS, X[:5])
        engine.predict_many(learner, X, Y, SUBSETS[:3], SEEDS[:3], X[:5])
        return NoiseFloorResult(source="seed", n_models=2, std_log_p=[0.0], max_std_log_p=[0.0], p_true=[[1.0]],
                                bin_width=None)

    res = train(CentroidLearner())
    assert isinstance(seen[0], Engine) and seen[0].chunk_size == "all"
    assert (res.engine_stats.n_calls, res.engine_stats.models_trained) == (2, 14)
    mine = Engine(chunk_size=5, progress=False)
    res = train(CentroidLearner(), engine=mine)
    assert seen[1] is mine and res.engine_stats.n_chunks == 3 + 1
    assert NoiseFloorResult.from_json(res.to_json()).engine_stats == res.engine_stats
    with pytest.raises(InvalidParameterError, match="engine must be"):
        train(CentroidLearner(), engine=object())


def test_results_of_the_paper_functions_carry_the_engine_stats():
    from leakaudit.dtp import pdtp, seed_noise_floor
    from leakaudit.learners import TorchMLP
    from leakaudit.membership import fit_reference_models

    mlp = TorchMLP(hidden=(4,), epochs=2)
    Xs, ys = X[:20], Y[:20] % 2
    res = pdtp(mlp, Xs, ys, records=[0, 3], seed_policy="independent", random_state=0)
    assert (res.engine_stats.n_models, res.engine_stats.models_trained) == (3, 3)
    e = Engine(chunk_size=2, progress=False)
    nf = seed_noise_floor(mlp, Xs, ys, n_models=4, random_state=0, engine=e)
    assert nf.engine_stats == e.stats and e.stats.n_chunks == 2
    assert fit_reference_models(mlp, Xs, ys, 2, random_state=0, engine=e).probs.shape == (2, 20, 2)
    assert e.totals.n_calls == 2

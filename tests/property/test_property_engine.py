"""Property inference trains through the engine: sparse rows as they are, statistics on results, the cache."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from leakaudit.engine import Engine
from leakaudit.property.attack import PoisoningPropertyAttack, evaluate_attack
from leakaudit.property.estimate import FractionEstimator, evaluate_fraction_estimate
from leakaudit.property.game import (
    PropertyData,
    logistic_learner,
    split_pools,
    train_and_query,
)
from leakaudit.property.synthetic import make_property_data
from leakaudit.property.whitebox import whitebox_attack

PARAMS = {"t0": 0.2, "t1": 0.6, "poison_rate": 0.05, "n_train": 200, "n_shadow": 6, "n_ensemble": 6, "n_queries": 20,
          "batch_size": 4}


@pytest.fixture(scope="module")
def sparse_data():
    dense = make_property_data(1500, 4, random_state=0)[0]
    X = np.round(dense.X, 1)
    X[np.abs(X) < 0.8] = 0.0  # mostly zeros, as one-hot Census rows are
    return dataclasses.replace(dense, X=sp.csr_matrix(X))


def _evaluate(data, engine, seed=1):
    adv, vic = split_pools(len(data), random_state=seed)
    attack = PoisoningPropertyAttack(random_state=seed, **PARAMS)
    result = evaluate_attack(attack, data, adversary_idx=adv, victim_idx=vic, n_targets=8, random_state=seed + 1,
                             engine=engine)
    return attack, result


def test_evaluate_attack_reports_engine_stats_and_matches_the_default_engine(sparse_data):
    attack, result = _evaluate(sparse_data, None)
    # the ensemble (6, batches of 4), the shadows (12) and the targets (8), each batch one engine call
    stats = result.engine_stats
    assert stats is not None and stats.models_trained == 6 + 12 + 8
    assert stats.n_calls == 2 + 3 + 2 and not stats.cache_used
    attack2, result2 = _evaluate(sparse_data, Engine(chunk_size=3, progress=False, threads=None))
    np.testing.assert_array_equal(attack2.shadow_labels_, attack.shadow_labels_)
    assert result2.accuracy == result.accuracy and result2.auc == result.auc


def test_cached_rerun_trains_nothing_and_gives_the_same_result(sparse_data, tmp_path):
    attack, first = _evaluate(sparse_data, Engine(cache_dir=tmp_path, progress=False))
    assert first.engine_stats.cache_used and first.engine_stats.chunks_cached == 0
    attack2, again = _evaluate(sparse_data, Engine(cache_dir=tmp_path, progress=False))
    assert again.engine_stats.models_trained == 0 and again.engine_stats.chunks_trained == 0
    np.testing.assert_array_equal(attack2.shadow_labels_, attack.shadow_labels_)
    np.testing.assert_array_equal(attack2.queries_.indices, attack.queries_.indices)
    assert again.accuracy == first.accuracy and again.auc == first.auc


def test_train_and_query_sparse_equals_direct_fit_many(sparse_data):
    data = sparse_data
    rng = np.random.default_rng(0)
    sets = [rng.choice(len(data), 100, replace=False) for _ in range(5)]
    seeds = [1, 2, 3, 4, 5]
    learner = logistic_learner()
    labels = train_and_query(learner, data, sets, None, data.X[:40], seeds=seeds, batch_size=2)
    want = learner.fit_many(data.X, data.y, sets, seeds, n_classes=2).predict_proba(data.X[:40]).argmax(-1)
    np.testing.assert_array_equal(labels, want)


def test_fraction_estimate_reports_engine_stats(sparse_data):
    adv, vic = split_pools(len(sparse_data), random_state=0)
    attack = PoisoningPropertyAttack(random_state=0, **PARAMS)
    est = FractionEstimator(t_grid=(0.2, 0.6), n_shadow_per_t=3, random_state=0)
    res = evaluate_fraction_estimate(attack, est, sparse_data, adversary_idx=adv, victim_idx=vic, n_targets=4,
                                     random_state=0)
    assert res.engine_stats.models_trained == 6 + 12 + 6 + 4


def test_whitebox_reports_engine_stats(sparse_data):
    out = whitebox_attack(sparse_data, t0=0.2, t1=0.6, n_train=100, hidden=(4,), epochs=1, n_shadow=3, n_targets=4,
                          meta_classifiers=("sorted",), random_state=0)
    stats = out["sorted"].engine_stats
    assert stats.models_trained == 2 * 3 + 4 and stats.n_calls == 2


def test_property_data_stays_sparse(sparse_data):
    assert isinstance(sparse_data, PropertyData) and sp.issparse(sparse_data.X)

"""Engine on local worker processes: same results as in-process, big arrays shared, errors propagated."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from _engine_learners import CentroidLearner, make_data, make_subsets
from leakaudit.engine import Engine
from leakaudit.exceptions import InvalidInputError
from leakaudit.learners import SklearnLearner

X, Y = make_data(n=150)
SUBSETS = make_subsets(len(X), K=9, size=80)
SEEDS = [11 * k + 3 for k in range(9)]
XQ = X[::5]


@pytest.fixture(scope="module")
def engine():
    with Engine(backend="process", n_jobs=2, chunk_size=2, progress=False) as e:
        yield e


@pytest.mark.parametrize("learner", [CentroidLearner(), SklearnLearner(LogisticRegression(C=10.0)),
                                     SklearnLearner(DecisionTreeClassifier(splitter="random", max_features=2))],
                         ids=["centroid", "logreg", "tree"])
def test_process_equals_inprocess_and_fit_many(engine, learner):
    got = engine.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert engine.stats.models_trained == 9 and engine.stats.n_chunks == 5
    np.testing.assert_array_equal(got, Engine(chunk_size=4).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ))
    np.testing.assert_array_equal(got, learner.fit_many(X, Y, SUBSETS, SEEDS).predict_proba(XQ))


def test_big_arrays(engine):
    # X of 2.6 MB: joblib memory-maps it for the workers instead of pickling it per chunk.
    Xb, yb = make_data(n=4000, d=80, seed=4)
    subsets = make_subsets(len(Xb), K=4, size=3000)
    learner = CentroidLearner()
    got = engine.predict_many(learner, Xb, yb, subsets, [1, 2, 3, 4], Xb[:10])
    np.testing.assert_array_equal(got, learner.fit_many(Xb, yb, subsets, [1, 2, 3, 4]).predict_proba(Xb[:10]))


def test_cache_written_by_workers_run_is_read_in_process(engine, tmp_path):
    learner = CentroidLearner()
    e = Engine(backend="process", n_jobs=2, chunk_size=2, cache_dir=tmp_path)
    first = e.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    e2 = Engine(cache_dir=tmp_path, chunk_size=2)
    np.testing.assert_array_equal(e2.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ), first)
    assert e2.stats.models_trained == 0


def test_worker_error_is_our_error(engine):
    one_class = np.flatnonzero(Y == 2)[:20]
    with pytest.raises(InvalidInputError, match="single class"):
        engine.predict_many(SklearnLearner(LogisticRegression()), X, Y, SUBSETS[:3] + [one_class], SEEDS[:4], XQ)

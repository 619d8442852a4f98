"""Engine on Ray (a local 2-CPU instance, started once for the module)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from _engine_learners import make_data, make_subsets
from leakaudit.engine import Engine
from leakaudit.exceptions import InvalidInputError
from leakaudit.learners import SklearnLearner

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

X, Y = make_data(n=150)
SUBSETS = make_subsets(len(X), K=7, size=80)
SEEDS = [5 * k + 1 for k in range(7)]
XQ = X[::6]


@pytest.fixture(scope="module")
def ray_instance():
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def engine(ray_instance):
    e = Engine(backend="ray", chunk_size=3, progress=False)
    yield e
    e.close()


def test_ray_uses_running_instance_and_matches_inprocess(engine, tmp_path):
    learner = SklearnLearner(DecisionTreeClassifier(splitter="random", max_features=2))
    got = engine.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    assert engine._backend.started is False  # the fixture's instance, not a new one
    assert engine.stats.models_trained == 7 and engine.stats.n_chunks == 3
    np.testing.assert_array_equal(got, Engine(chunk_size=2).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ))
    np.testing.assert_array_equal(got, learner.fit_many(X, Y, SUBSETS, SEEDS).predict_proba(XQ))
    # Results written from Ray are read back by an in-process run.
    learner = SklearnLearner(LogisticRegression(C=5.0))
    got = Engine(backend="ray", chunk_size=3, cache_dir=tmp_path).predict_many(learner, X, Y, SUBSETS, SEEDS, XQ)
    e2 = Engine(chunk_size=3, cache_dir=tmp_path)
    np.testing.assert_array_equal(e2.predict_many(learner, X, Y, SUBSETS, SEEDS, XQ), got)
    assert e2.stats.models_trained == 0


def test_ray_task_error_is_our_error(engine):
    one_class = np.flatnonzero(Y == 0)[:20]
    with pytest.raises(InvalidInputError, match="single class"):
        engine.predict_many(SklearnLearner(LogisticRegression()), X, Y, [one_class], [0], XQ)


def test_gpus_on_a_cluster_without_any_are_refused(ray_instance):
    """devices='auto' on Ray asks the cluster (not this process) for GPUs; a cluster without one is refused at once
    instead of leaving GPU tasks waiting forever."""
    from leakaudit.exceptions import UnsupportedError

    if ray.cluster_resources().get("GPU", 0) >= 1:
        pytest.skip("this Ray instance has a GPU")
    with pytest.raises(UnsupportedError, match="the Ray cluster has no GPU"):
        Engine(backend="ray", devices="auto")._get_backend()

"""Engine(devices=...): one worker per device, each pinned to its own; learners that ask for a GPU are placed,
others are left alone; bad devices refused in one line. The CPU tests stand in "cpu" / "auto" for GPUs."""

import numpy as np
import pytest

from _engine_learners import CentroidLearner, DeviceEchoLearner, make_data, make_subsets
from leakaudit.engine import Engine
from leakaudit.engine._backends import wants_gpu
from leakaudit.exceptions import InvalidParameterError, UnsupportedError

torch = pytest.importorskip("torch")
CUDA = torch.cuda.is_available()

X, Y = make_data(n=60)
SUBSETS = make_subsets(len(X), K=8, size=30)
SEEDS = list(range(8))


def test_only_learners_that_ask_for_a_gpu_are_placed():
    from leakaudit.learners import DPSGD, TorchMLP

    assert wants_gpu(TorchMLP(device="cuda")) and wants_gpu(TorchMLP(device="cuda:1"))
    assert wants_gpu(TorchMLP(device="auto")) and not wants_gpu(TorchMLP())
    assert wants_gpu(DPSGD(learner=TorchMLP(device="auto"))) and not wants_gpu(DPSGD(learner=TorchMLP()))
    assert wants_gpu(DPSGD(learner=TorchMLP(), device="cuda")) and not wants_gpu(CentroidLearner())


def test_each_worker_keeps_one_device_and_all_chunks_are_trained():
    """The backend alone (no CUDA asked: the echo learner only reports the name it got): two workers, "cuda:0" and
    "cuda:1"; every process trained all its chunks with one device, and no two with the same."""
    from leakaudit.engine._backends import ChunkTask, DeviceProcessBackend

    tasks = [(j, ChunkTask(learner=DeviceEchoLearner(), subsets=[SUBSETS[j]], seeds=[j], n_classes=3,
                           mode="predict_proba")) for j in range(8)]
    got = dict(DeviceProcessBackend(["cuda:0", "cuda:1"]).run(tasks, X, Y, X[:3]))
    assert sorted(got) == list(range(8))
    code = np.array([got[j]["outputs"][0, 0, 0] for j in range(8)])
    pid = np.array([got[j]["outputs"][0, 0, 1] for j in range(8)])
    assert set(code) <= {1.0, 2.0}
    per_worker = {p: set(code[pid == p]) for p in set(pid)}
    assert len(per_worker) <= 2 and all(len(c) == 1 for c in per_worker.values())
    if len(per_worker) == 2:  # both workers took chunks: one device each, never the same
        assert {c.pop() for c in per_worker.values()} == {1.0, 2.0}


@pytest.mark.slow  # two workers importing torch: ~30 s on a busy 2-core machine
def test_a_process_engine_on_devices_gives_the_inprocess_models():
    from leakaudit.learners import TorchMLP

    lrn = TorchMLP(hidden=(4,), mode="fast", epochs=1, backend="torch", device="auto")
    with Engine(backend="process", devices=["cpu", "cpu"], chunk_size=2, progress=False) as e:
        got = e.predict_many(lrn, X, Y, SUBSETS, SEEDS, X)
        assert e.stats.n_chunks == 4
    np.testing.assert_array_equal(got, Engine(chunk_size=2).predict_many(lrn, X, Y, SUBSETS, SEEDS, X))


def test_inprocess_takes_the_first_device_and_leaves_other_learners_alone():
    e = Engine(devices=["cpu"], chunk_size=2, progress=False)
    np.testing.assert_array_equal(e.predict_many(DeviceEchoLearner(), X, Y, SUBSETS, SEEDS, X[:2])[:, :, 0], 0.25)
    # a learner on the CPU stays there ("auto" is placed), one without a device trains as ever
    e = Engine(devices=["cuda:0"] if CUDA else ["cpu"], progress=False)
    np.testing.assert_array_equal(e.predict_many(DeviceEchoLearner(device="cpu"), X, Y, SUBSETS, SEEDS,
                                                 X[:2])[:, :, 0], 0.25)
    got = e.predict_many(CentroidLearner(), X, Y, SUBSETS, SEEDS, X)
    np.testing.assert_array_equal(got, CentroidLearner().fit_many(X, Y, SUBSETS, SEEDS).predict_proba(X))


def test_cache_key_names_the_device_kind(tmp_path):
    """'auto' placed on a "cpu" worker is a CPU run: it shares its entries with a learner on the CPU."""
    from leakaudit.learners import TorchMLP

    lrn = TorchMLP(hidden=(4,), mode="fast", epochs=1, backend="torch")
    with Engine(devices=["cpu"], cache_dir=tmp_path, chunk_size=4, progress=False) as e:
        a = e.predict_many(lrn.set_params(device="auto"), X, Y, SUBSETS, SEEDS, X)
        b = e.predict_many(TorchMLP(hidden=(4,), mode="fast", epochs=1, backend="torch"), X, Y, SUBSETS, SEEDS, X)
        assert e.stats.chunks_cached == 2
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kw, err, match", [
    (dict(devices="cpu"), InvalidParameterError, "devices must be None, 'auto' or a list"),
    (dict(devices=5), InvalidParameterError, "devices must be None, 'auto' or a list of devices; got 5"),
    (dict(devices=["gpu"]), InvalidParameterError, "devices must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got 'gpu'"),
    (dict(devices=[]), InvalidParameterError, "devices must name one device or more"),
    (dict(devices=["auto"]), InvalidParameterError, "devices must name one device or more"),
    (dict(backend="process", devices=["cpu"], n_jobs=2), InvalidParameterError, "one worker per device"),
    (dict(backend="ray", devices=["cpu"]), InvalidParameterError, "backend='ray' takes devices='auto'"),
])
def test_bad_devices_are_refused(kw, err, match):
    with pytest.raises(err, match=match):
        Engine(**kw)


@pytest.mark.skipif(CUDA, reason="checks the refusal on a machine without CUDA")
@pytest.mark.parametrize("devices", ["auto", ["cuda:0"], ["cuda"]])
def test_gpus_where_there_are_none_are_refused(devices):
    with pytest.raises(UnsupportedError, match="CUDA|no CUDA device"):
        Engine(backend="process", devices=devices)


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="CUDA not available")
def test_every_gpu_trains_the_cpu_models():
    from leakaudit.learners import TorchMLP

    make = lambda d: TorchMLP(hidden=(6,), mode="fast", epochs=2, backend="torch", dtype="float64", device=d)  # noqa
    with Engine(backend="process", devices="auto", chunk_size=2, progress=False) as e:
        gpu = e.predict_many(make("cuda"), X, Y, SUBSETS, SEEDS, X)
    cpu = Engine(chunk_size=2).predict_many(make("cpu"), X, Y, SUBSETS, SEEDS, X)
    np.testing.assert_allclose(gpu, cpu, rtol=0, atol=1e-9)

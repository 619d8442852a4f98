"""A killed run resumes from its cache; two runs sharing a cache do not corrupt it."""

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from _engine_child import K, problem
from leakaudit.engine import Engine

HERE = Path(__file__).parent
CHILD = str(HERE / "_engine_child.py")


def _entries(cache_dir):
    return sorted(Path(cache_dir, "v1").glob("*/*.npz"))


def test_killed_run_resumes_without_retraining(tmp_path):
    cache = tmp_path / "cache"
    chunk_size = 2  # 20 chunks of 2 models, 0.05 s per model: about 2 s of training after start-up
    proc = subprocess.Popen([sys.executable, CHILD, str(cache), str(tmp_path / "out.npy"), "0.05", str(chunk_size)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not _entries(cache):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "child wrote no cache entry within 60 s"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done = len(_entries(cache))
    n_chunks = K // chunk_size
    assert 1 <= done < n_chunks, f"kill came too late: {done} of {n_chunks} chunks finished"

    learner, X, y, subsets, seeds, Xq = problem()
    engine = Engine(cache_dir=cache, chunk_size=chunk_size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no corrupt entry may be found
        resumed = engine.predict_many(learner, X, y, subsets, seeds, Xq)
    assert engine.stats.chunks_cached == done
    assert engine.stats.chunks_trained == n_chunks - done
    assert engine.stats.models_trained == K - done * chunk_size
    uninterrupted = Engine().predict_many(learner, X, y, subsets, seeds, Xq)
    np.testing.assert_array_equal(resumed, uninterrupted)
    assert len(_entries(cache)) == n_chunks


def test_two_processes_share_one_cache(tmp_path):
    cache = tmp_path / "cache"
    procs = [subprocess.Popen([sys.executable, CHILD, str(cache), str(tmp_path / f"out{i}.npy"), "0.01", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err.decode()
        assert b"CacheWarning" not in err, err.decode()
    learner, X, y, subsets, seeds, Xq = problem()
    want = Engine().predict_many(learner, X, y, subsets, seeds, Xq)
    for i in range(2):
        np.testing.assert_array_equal(np.load(tmp_path / f"out{i}.npy"), want)
    # Every entry is complete and sound: a third run reads all of them, trains nothing, warns nothing.
    engine = Engine(cache_dir=cache, chunk_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = engine.predict_many(learner, X, y, subsets, seeds, Xq)
    assert engine.stats.models_trained == 0 and engine.stats.chunks_cached == K
    np.testing.assert_array_equal(got, want)
    assert not list(Path(cache).glob("v1/*/*.tmp")), "temporary files left behind"
    # Between them the two runs trained every model at least once.
    trained = [int(out.split()[0]) for out, _ in outs]
    assert sum(trained) >= K


def _children(pid):
    out = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_killed_process_backend_run_resumes_and_its_workers_exit(tmp_path):
    cache = tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, CHILD, str(cache), str(tmp_path / "out.npy"), "0.1", "2", "process"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not _entries(cache):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "child wrote no cache entry within 120 s"
            time.sleep(0.01)
        workers = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    done = len(_entries(cache))
    assert 1 <= done < K // 2
    assert workers, "the child started no worker processes"
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = [w for w in workers if Path(f"/proc/{w}").exists() and
             b"zombie" not in Path(f"/proc/{w}/status").read_bytes().lower()]
    assert not alive, f"worker processes {alive} outlived their killed parent"

    learner, X, y, subsets, seeds, Xq = problem()
    engine = Engine(cache_dir=cache, chunk_size=2)
    resumed = engine.predict_many(learner, X, y, subsets, seeds, Xq)
    assert engine.stats.chunks_cached == done and engine.stats.models_trained == K - 2 * done
    np.testing.assert_array_equal(resumed, Engine().predict_many(learner, X, y, subsets, seeds, Xq))

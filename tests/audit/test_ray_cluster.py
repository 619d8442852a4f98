"""An audit on a real Ray cluster (issue 67): a head and a worker node started as separate processes (``ray start
--head``, ``ray start --address``), joined by ``--backend ray --address``. Work runs on both nodes (each task records
its node's id), the results equal the in-process backend's, and killing the worker node mid-run loses no finished
model: the audit ends in one line, and the resumed run reads the cache and gives the same results."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import leakaudit
from leakaudit.audit import make_config, run_audit

pytestmark = [pytest.mark.slow, pytest.mark.ray]

SMALL = dict(profile="smoke", n_members=120, n_nonmembers=120, epochs=2, seed=5)

#: the audit's driver: the CLI, with each Ray task first writing its node's id to a file (the tasks run on the
#: nodes, so the record is theirs)
DRIVER = r"""
import os, sys
import leakaudit.engine._backends as backends

LOG = os.environ["LEAKAUDIT_TEST_NODE_LOG"]


def _ray_run(task, X, y, Xq):
    import ray

    with open(os.path.join(LOG, f"{os.getpid()}.txt"), "a") as f:
        f.write(ray.get_runtime_context().get_node_id() + "\n")
    return backends.run_chunk(task.with_data(X, y, Xq))


backends._ray_run = _ray_run
from leakaudit.cli import main

sys.exit(main(sys.argv[1:]))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _strip(path):
    d = json.loads(Path(path).read_text())
    for k in ("created", "timings", "resources", "config", "command"):  # how it ran, not what it measured
        d.pop(k)
    return d


class Cluster:
    """A head node and worker nodes, each a ``ray start --block`` process in its own process group, stopped by
    that group's id (never ``ray stop``, which stops every Ray instance on the machine)."""

    def __init__(self):
        self.ray = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
        # short: Ray's sockets live under it, and a Unix socket's path is at most 107 bytes
        self.tmp = tempfile.mkdtemp(prefix="lkray")
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        src = str(Path(leakaudit.__file__).parents[1])
        self.env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled",
                        PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
        self.nodes: dict[str, subprocess.Popen] = {}

    def start(self, name: str, *args: str) -> None:
        log = open(Path(self.tmp) / f"{name}.log", "w")
        self.nodes[name] = subprocess.Popen(
            [self.ray, "start", "--num-cpus=1", "--node-ip-address=127.0.0.1", "--disable-usage-stats", "--block",
             *args], env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 240
        while "block forever" not in (Path(self.tmp) / f"{name}.log").read_text():
            assert self.nodes[name].poll() is None, (Path(self.tmp) / f"{name}.log").read_text()[-3000:]
            assert time.time() < deadline, f"Ray node {name} did not start in 240 s"
            time.sleep(0.5)

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        proc = self.nodes.pop(name)
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        for name in [n for n in self.nodes if n != "head"] + (["head"] if "head" in self.nodes else []):
            self.kill(name, signal.SIGTERM)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def cluster():
    pytest.importorskip("ray")
    c = Cluster()
    try:
        c.start("head", "--head", f"--port={c.port}", f"--temp-dir={c.tmp}", "--include-dashboard=false")
        c.start("worker", f"--address={c.address}")
        yield c
    finally:
        c.stop()


def _driver(cluster, tmp_path, cache, out, nodes_log):
    nodes_log.mkdir(exist_ok=True)
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f"epochs = {SMALL['epochs']}\n")  # the demo learner's epochs: not a flag
    args = ["audit", "--config", str(cfg), "--profile", SMALL["profile"], "--n-members", str(SMALL["n_members"]),
            "--n-nonmembers", str(SMALL["n_nonmembers"]), "--seed", str(SMALL["seed"]), "--backend", "ray",
            "--address", cluster.address, "--cache-dir", str(cache), "--out", str(out), "--quiet"]
    env = dict(cluster.env, LEAKAUDIT_TEST_NODE_LOG=str(nodes_log), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-c", DRIVER, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _node_ids(nodes_log) -> set[str]:
    return {line.strip() for f in Path(nodes_log).glob("*.txt") for line in f.read_text().splitlines() if line}


def _cached(cache) -> int:
    return sum(p.suffix == ".npz" for p in Path(cache).rglob("*")) if Path(cache).exists() else 0


def test_audit_on_a_two_node_cluster_and_a_killed_worker(cluster, tmp_path):
    base = run_audit(make_config(**SMALL, backend="inprocess", cache_dir=tmp_path / "cache-inprocess"),
                     tmp_path / "inprocess", verbose=False)
    expected = _strip(tmp_path / "inprocess" / "results.json")

    # the whole audit on the cluster: tasks on both nodes, the in-process backend's results
    proc = _driver(cluster, tmp_path, tmp_path / "cache-a", tmp_path / "a", tmp_path / "nodes-a")
    out, err = proc.communicate(timeout=1200)
    assert proc.returncode == 0, err[-3000:]
    assert len(_node_ids(tmp_path / "nodes-a")) == 2, "the tasks ran on one node only"
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    assert res["resources"]["reference_models"]["backend"] == "ray"
    assert _strip(tmp_path / "a" / "results.json") == expected
    assert base.outcome == res["verdict"]["outcome"]

    # the worker node killed mid-run: the audit ends in one line, the models finished before stay in the cache
    nodes_b = tmp_path / "nodes-b"
    proc = _driver(cluster, tmp_path, tmp_path / "cache-b", tmp_path / "b", nodes_b)
    deadline = time.time() + 1200
    while proc.poll() is None and time.time() < deadline:
        if _cached(tmp_path / "cache-b") >= 1 and len(_node_ids(nodes_b)) == 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the audit finished before the worker could be killed; make it bigger"
    cluster.kill("worker")
    n_cached = _cached(tmp_path / "cache-b")
    out, err = proc.communicate(timeout=1200)
    if proc.returncode != 0:  # a task was lost with its node: one line, no traceback, nothing half-written
        assert proc.returncode == 2 and err.strip().count("\n") == 0 and "Ray task was lost" in err, err[-3000:]
        assert not (tmp_path / "b" / "results.json").exists()
    assert _cached(tmp_path / "cache-b") >= n_cached >= 1

    # resumed on the head alone: the cached models read, not retrained; the same results
    proc = _driver(cluster, tmp_path, tmp_path / "cache-b", tmp_path / "c", tmp_path / "nodes-c")
    out, err = proc.communicate(timeout=1200)
    assert proc.returncode == 0, err[-3000:]
    ref = json.loads((tmp_path / "c" / "results.json").read_text())["resources"]["reference_models"]
    assert ref["chunks_from_cache"] >= 1 and ref["trained"] < ref["n_models"]
    assert _strip(tmp_path / "c" / "results.json") == expected

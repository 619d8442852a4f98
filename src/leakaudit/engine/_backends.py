"""Where chunks are trained: this process, local worker processes, or Ray.

Every backend runs the same function, :func:`run_chunk`, on the same chunk
tasks; a chunk's models depend only on its subsets and seeds, so results do not
depend on the backend or on the order chunks finish in.

Devices. A task may carry a device ("cuda:1"): a learner that asks for a GPU
(its ``device`` is "cuda", "cuda:N" or "auto"; a DP-SGD wrapper without its own,
its wrapped learner's) trains that chunk there; a learner on the CPU stays there.
:class:`DeviceProcessBackend` runs one worker process per device, each pinned to
its own; the Ray backend asks Ray for one GPU per such task.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._extras import require
from .._validation import clip
from ..exceptions import InvalidParameterError, LeakauditError, UnsupportedError
from ..learners.sklearn import _exit_with_parent

__all__ = ["ChunkTask", "run_chunk", "InProcessBackend", "ProcessBackend", "DeviceProcessBackend", "RayBackend",
           "default_workers", "wants_gpu"]


@dataclasses.dataclass
class ChunkTask:
    """One chunk: train models on ``subsets`` with ``seeds``, then produce ``mode``'s output.

    ``mode`` is "predict_proba" or "predict" (outputs on ``X_query``), "state"
    (the learner's :meth:`get_state` of the bank) or "bank" (the bank itself).
    """

    learner: Any
    subsets: list[np.ndarray]
    seeds: list[int]
    n_classes: int | None
    mode: str
    X: Any = None
    y: Any = None
    X_query: Any = None
    threads: int | None = None
    device: str | None = None

    def with_data(self, X: Any, y: Any, X_query: Any) -> "ChunkTask":
        return dataclasses.replace(self, X=X, y=y, X_query=X_query)


def run_chunk(task: ChunkTask) -> Any:
    """Train one chunk's models with one ``fit_many`` call and return what ``task.mode`` asks for.

    A task with a ``device`` trains a learner that :func:`wants_gpu` on that device (a copy of the learner with
    its ``device`` set); any other learner as it is.

    Returns
    -------
    dict {"outputs": ndarray} for the predict modes (shape (k, n_query, C) or
    (k, n_query)); the learner's state dict for "state"; the bank for "bank".
    """
    if task.device is not None and wants_gpu(task.learner):
        from sklearn.base import clone

        task = dataclasses.replace(task, learner=clone(task.learner).set_params(device=task.device))
    if task.threads is not None:
        from threadpoolctl import threadpool_limits

        torch = sys.modules.get("torch")
        before = torch.get_num_threads() if torch is not None else None
        try:
            if torch is not None:
                torch.set_num_threads(task.threads)
            with threadpool_limits(limits=task.threads):
                return _run_chunk(task)
        finally:
            if torch is not None and before is not None:
                torch.set_num_threads(before)
    return _run_chunk(task)


def _run_chunk(task: ChunkTask) -> Any:
    X, y, Xq = task.X, task.y, task.X_query
    k = len(task.subsets)
    if task.mode == "predict_proba" and callable(getattr(task.learner, "fit_predict_many", None)):
        # the learner queries its models as it trains them (a forest: no bank of trees kept)
        out = np.asarray(task.learner.fit_predict_many(X, y, task.subsets, list(task.seeds), Xq,
                                                       n_classes=task.n_classes))
        return {"outputs": _checked_shape(task, out, (k, Xq.shape[0], task.n_classes), "fit_predict_many")}
    bank = task.learner.fit_many(X, y, task.subsets, list(task.seeds), n_classes=task.n_classes)
    if len(bank) != k:
        raise UnsupportedError(f"{type(task.learner).__name__}.fit_many returned {len(bank)} models for {k} subsets")
    if task.mode == "bank":
        return bank
    if task.mode == "state":
        state = task.learner.get_state(bank)
        return {str(n): np.asarray(a) for n, a in state.items()}
    if sp.issparse(Xq) and not bank.accepts_sparse:
        Xq = Xq.toarray()
    out = np.asarray(getattr(bank, task.mode)(Xq))
    want = (k, Xq.shape[0]) + ((task.n_classes,) if task.mode == "predict_proba" else ())
    return {"outputs": _checked_shape(task, out, want, f"bank.{task.mode}")}


def wants_gpu(learner: Any) -> bool:
    """Whether ``learner`` asks for a GPU: its ``device`` is "cuda", "cuda:N" or "auto" (a learner whose ``device``
    is None, DP-SGD's wrapper, asks what its wrapped ``learner`` asks)."""
    get = getattr(learner, "get_params", None)
    if get is None:
        return False
    try:
        params = get(deep=False)
    except TypeError:
        params = get()
    if "device" not in params:
        return False
    device = params["device"]
    if device is None:
        return wants_gpu(params.get("learner"))
    return isinstance(device, str) and (device == "auto" or device.startswith("cuda"))


def _checked_shape(task: ChunkTask, out: np.ndarray, want: tuple, what: str) -> np.ndarray:
    if out.shape != want:
        raise UnsupportedError(f"{type(task.learner).__name__}: {what} returned shape {out.shape}; expected {want}")
    return out


def default_workers(n_jobs: int | None) -> int:
    """Number of workers for ``n_jobs`` (None or -1: every core this process may use)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    if n_jobs is None or n_jobs == -1:
        return max(1, cpus)
    return int(n_jobs)


# -- backends ---------------------------------------------------------------------
class InProcessBackend:
    """Chunks one after another in this process (on ``device`` when given: see :func:`run_chunk`).

    A learner's own worker processes (``SklearnLearner(n_jobs=...)``) still run.
    """

    name = "inprocess"
    n_workers = 1

    def __init__(self, device: str | None = None):
        self.device = device

    def run(self, tasks: Sequence[tuple[int, ChunkTask]], X, y, Xq) -> Iterator[tuple[int, Any]]:
        for j, t in tasks:
            yield j, run_chunk(dataclasses.replace(t.with_data(X, y, Xq), device=self.device))

    def close(self) -> None:
        pass


def _indexed_chunk(j: int, task: ChunkTask) -> tuple[int, Any]:
    return j, run_chunk(task)


class ProcessBackend:
    """Chunks over local worker processes (joblib, loky backend).

    Results stream back as chunks finish (``return_as="generator_unordered"``)
    with at most ``2 * n_workers`` chunks dispatched ahead. Arrays larger than
    1 MB are memory-mapped by joblib rather than pickled for every chunk. The
    worker pool is joblib's reusable one, shared with ``SklearnLearner(n_jobs=...)``;
    workers exit within a second when the run that started them is killed.
    """

    name = "process"
    max_nbytes = "1M"

    def __init__(self, n_jobs: int | None):
        self.n_workers = default_workers(n_jobs)

    def run(self, tasks: Sequence[tuple[int, ChunkTask]], X, y, Xq) -> Iterator[tuple[int, Any]]:
        from joblib import Parallel, delayed, parallel_config

        if not tasks:
            return
        # Same configuration as SklearnLearner(n_jobs=...), so both share joblib's worker pool.
        with parallel_config(backend="loky", inner_max_num_threads=1, initializer=_exit_with_parent,
                             initargs=(os.getpid(),)):
            results = Parallel(n_jobs=self.n_workers, return_as="generator_unordered",
                               pre_dispatch=f"{2 * self.n_workers}", max_nbytes=self.max_nbytes)(
                delayed(_indexed_chunk)(j, t.with_data(X, y, Xq))
                for j, t in tasks
            )
            yield from results

    def close(self) -> None:
        pass


#: what a device worker holds: its device and the call's data (sent once per worker, not once per chunk)
_WORKER: dict[str, Any] = {}


def _device_worker_init(slots, X, y, Xq, parent_pid: int) -> None:
    """Start a device worker: take one device from ``slots`` for the worker's whole life, keep the data."""
    _exit_with_parent(parent_pid)
    _WORKER.update(device=slots.get(), X=X, y=y, Xq=Xq)


def _device_chunk(j: int, task: ChunkTask) -> tuple[int, Any]:
    w = _WORKER
    return j, run_chunk(dataclasses.replace(task.with_data(w["X"], w["y"], w["Xq"]), device=w["device"]))


class DeviceProcessBackend:
    """One worker process per device ("cuda:0", "cuda:1", ...), each training its chunks on its own device.

    The workers are fresh interpreters (loky's executor, as joblib's: a CUDA context does not survive ``fork``,
    and a script needs no ``if __name__ == "__main__"`` guard) started for each call; they take the call's data
    once, and each takes one device from a queue when it starts, so no two share one. Chunks go to whichever
    worker is free. Learners that do not ask for a GPU (:func:`wants_gpu`) train in these workers on the CPU.
    """

    name = "process"

    def __init__(self, devices: Sequence[str]):
        self.devices = list(devices)
        self.n_workers = len(self.devices)

    def run(self, tasks: Sequence[tuple[int, ChunkTask]], X, y, Xq) -> Iterator[tuple[int, Any]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        from joblib.externals.loky import ProcessPoolExecutor
        from joblib.externals.loky.backend.context import get_context

        if not tasks:
            return
        ctx = get_context("loky")
        slots = ctx.Queue()
        for d in self.devices:
            slots.put(d)
        pool = ProcessPoolExecutor(max_workers=self.n_workers, context=ctx, initializer=_device_worker_init,
                                   initargs=(slots, X, y, Xq, os.getpid()))
        pending: set = set()
        try:
            pending = {pool.submit(_device_chunk, j, t) for j, t in tasks}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
        finally:
            for f in pending:  # a failed chunk or a stopped caller: the chunks not started are dropped
                f.cancel()
            pool.shutdown(wait=True)

    def close(self) -> None:
        pass


def _ray_run(task: ChunkTask, X, y, Xq) -> Any:
    return run_chunk(task.with_data(X, y, Xq))


class RayBackend:
    """Chunks as Ray tasks (one CPU each) on a cluster, or on a local instance.

    With ``address`` the engine connects to that cluster (``ray.init(address=...)``);
    otherwise it uses the running Ray instance, or starts a local one with
    ``n_jobs`` CPUs. An instance the engine started is shut down by
    :meth:`~leakaudit.engine.Engine.close`.
    """

    name = "ray"

    def __init__(self, n_jobs: int | None, address: str | None, gpus: bool = False):
        self.gpus = bool(gpus)
        ray = require("ray", "backend='ray'")
        self._ray = ray
        self.started = False
        if not ray.is_initialized():
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": False}
            if address is not None:
                kw["address"] = address
            else:
                kw["num_cpus"] = default_workers(n_jobs)
            try:
                ray.init(**kw)
            except Exception as exc:  # noqa: BLE001 - connection errors come in many types
                raise InvalidParameterError(f"could not start or reach Ray (address={address!r}): {exc}") from exc
            self.started = True
        self.n_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if self.gpus and ray.cluster_resources().get("GPU", 0) < 1:
            self.close()
            raise UnsupportedError("devices='auto' with backend='ray' but the Ray cluster has no GPU (its tasks "
                                   "would wait for one forever); leave devices=None to train on the CPUs")
        self._remote = ray.remote(num_cpus=1, max_retries=0)(_ray_run)
        # with gpus: a chunk whose learner asks for a GPU asks Ray for one, and trains on "cuda" (Ray sets
        # CUDA_VISIBLE_DEVICES to the GPU it gives the task, which torch then numbers 0)
        self._remote_gpu = ray.remote(num_cpus=1, num_gpus=1, max_retries=0)(_ray_run) if self.gpus else None

    def run(self, tasks: Sequence[tuple[int, ChunkTask]], X, y, Xq) -> Iterator[tuple[int, Any]]:
        ray = self._ray
        if not tasks:
            return
        refs = [ray.put(a) for a in (X, y, Xq)]
        queue = list(tasks)
        pending: dict[Any, int] = {}
        window = 2 * self.n_workers
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    j, t = queue.pop(0)
                    if self.gpus and wants_gpu(t.learner):
                        ref = self._remote_gpu.remote(dataclasses.replace(t, device="cuda"), *refs)
                    else:
                        ref = self._remote.remote(t, *refs)
                    pending[ref] = j
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    j = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:
                        cause = exc.as_instanceof_cause()
                        raise cause from None
                    except ray.exceptions.RayError as exc:  # the task's worker or node died, or Ray lost it
                        raise LeakauditError(
                            f"a Ray task was lost ({type(exc).__name__}: its worker or node died, or the cluster "
                            f"went away: {clip(' '.join(str(exc).split()), 160)}); the models finished before it are "
                            "in the model cache: run the audit again to resume from them") from None
                    yield j, result
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self.started and self._ray.is_initialized():
            self._ray.shutdown()
            self.started = False

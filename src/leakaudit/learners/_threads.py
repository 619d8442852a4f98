"""The learners' thread pool: many models' independent tasks spread over threads, for calls that release the GIL.

The compiled kernels are called through :mod:`ctypes`, which releases the GIL for the call, and torch releases it
inside its operators; :func:`for_each_model` runs one such task per model (or per worker of a kernel that hands out
its own work) on a pool of threads kept for the process. Each task's numbers depend only on its own inputs, so no
result depends on the number of threads.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable

__all__ = ["default_threads", "for_each_model"]


def default_threads() -> int:
    """The threads a learner uses when its ``n_threads`` is None: the processors this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1  # pragma: no cover - platforms without affinity masks


_POOL_LOCK = threading.Lock()
_POOL: list = [None, 0]  # the shared executor and its size
_IN_POOL = threading.local()


def _mark_pool_thread() -> None:
    _IN_POOL.flag = True


def _reset_pool() -> None:  # a forked child has none of its parent's threads
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    _POOL[:] = [None, 0]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_pool)


def _executor(n: int):
    """A process-wide thread pool of at least ``n`` threads, kept between calls (starting a pool per call costs time)."""
    from concurrent.futures import ThreadPoolExecutor

    with _POOL_LOCK:
        if _POOL[0] is None or _POOL[1] < n:
            if _POOL[0] is not None:
                _POOL[0].shutdown(wait=False)  # its queued work still runs
            _POOL[:] = [ThreadPoolExecutor(max_workers=n, thread_name_prefix="leakaudit-learners",
                                           initializer=_mark_pool_thread), n]
        return _POOL[0]


def for_each_model(one: Callable[[int], object], K: int, n_threads: int | None) -> None:
    """Call ``one(k)`` for k in range(K) on ``n_threads`` threads (None: :func:`default_threads`).

    For work that releases the GIL (ctypes calls, torch operators, numpy's shuffle); each k is one task, so
    anything ``one`` keeps per model makes the results independent of the thread count. The calling thread is
    one of the threads, the others come from a pool kept between calls; the tasks are handed out in order as
    threads free up. The first exception is raised once every thread has stopped (no task starts after it), a
    Ctrl-C while waiting included: a running task may read arrays that only the caller's frames keep alive.
    Called from one of the pool's own tasks, it runs the tasks in that thread (no nested pools).
    """
    workers = max(1, min(int(n_threads or default_threads()), K))
    if workers == 1 or getattr(_IN_POOL, "flag", False):
        for k in range(K):
            one(k)
        return
    tasks = itertools.count()  # next() on it is atomic under the GIL
    errors: list = []  # once not empty, no thread starts another task

    def loop():
        while not errors:
            k = next(tasks)
            if k >= K:
                return
            try:
                one(k)
            except BaseException as e:  # noqa: BLE001 - re-raised below, in the caller
                errors.append(e)

    futures: list = []
    try:
        pool = _executor(workers - 1)
        for _ in range(workers - 1):
            futures.append(pool.submit(loop))
        loop()
        for f in futures:
            f.result()
    except BaseException as e:  # e.g. KeyboardInterrupt while waiting: the pool's threads stop after their task
        errors.append(e)
        _wait_for(futures)
        raise
    if errors:
        raise errors[0]


def _wait_for(futures) -> None:
    """Return once every future has finished, whatever is raised meanwhile.

    A task may be inside a compiled kernel reading arrays through raw pointers that only the caller's frames keep
    alive; raising past them before the task returns frees those arrays under it (a segfault at Ctrl-C). A further
    Ctrl-C while waiting is dropped here: the first one is already on its way up (the CLI counts each).
    """
    from concurrent.futures import wait

    pending = set(futures)
    while pending:
        try:
            pending = wait(pending).not_done
        except KeyboardInterrupt:
            continue

"""The training engine: many models, in chunks, on a backend, with an on-disk cache."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar

import numpy as np

from .._random import RandomStateLike
from .._results import Result
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ..learners import Learner, ModelBank, check_feature_matrix, check_many_inputs
from ._backends import ChunkTask, DeviceProcessBackend, InProcessBackend, ProcessBackend, RayBackend, wants_gpu
from ._cache import CacheWarning, ChunkCache
from ._fingerprint import Unfingerprintable, array_fingerprint, chunk_key, learner_fingerprint, subsets_fingerprint
from ._progress import ProgressBar
from ._state import ChunkedModelBank, supports_state
from ._store import output_array, parse_memory_size

__all__ = ["Engine", "EngineCounter", "EngineStats", "default_chunk_size", "default_engine", "reports_engine_stats",
           "resolve_engine"]

BACKENDS = ("inprocess", "process", "ray")


class EngineStats(Result):
    """What one or more :meth:`Engine.predict_many` / :meth:`Engine.fit_bank` calls did.

    ``engine.stats`` describes the engine's last call, ``engine.totals`` every call since it was made, and
    :meth:`Engine.counting` the calls made inside a ``with`` block; ``a + b`` adds two of them up.

    Attributes
    ----------
    n_calls : int
        Calls described (1 for ``engine.stats`` after a call).
    n_models, n_chunks : int
        Models and chunks asked for.
    chunk_size : int
        Models per chunk (the largest over the calls added up).
    chunks_cached : int
        Chunks read from the cache (cache hits).
    chunks_trained : int
        Chunks trained (cache misses, including corrupt entries).
    models_trained : int
        Models trained.
    corrupt_entries : int
        Cache entries found corrupt, deleted and recomputed.
    cache_used : bool
        Whether the cache was consulted (by any of the calls; False without ``cache_dir``, or when the
        learner's parameters cannot be fingerprinted).
    seconds : float
        Wall time of the calls.
    """

    n_calls: int = 0
    n_models: int = 0
    n_chunks: int = 0
    chunk_size: int = 0
    chunks_cached: int = 0
    chunks_trained: int = 0
    models_trained: int = 0
    corrupt_entries: int = 0
    cache_used: bool = False
    seconds: float = 0.0

    def __add__(self, other: EngineStats) -> EngineStats:
        if not isinstance(other, EngineStats):
            return NotImplemented
        summed = {f: getattr(self, f) + getattr(other, f) for f in _SUMMED}
        return EngineStats(**summed, chunk_size=max(self.chunk_size, other.chunk_size),
                           cache_used=self.cache_used or other.cache_used)


_SUMMED = ("n_calls", "n_models", "n_chunks", "chunks_cached", "chunks_trained", "models_trained", "corrupt_entries",
           "seconds")


class EngineCounter:
    """The calls an engine makes while a :meth:`Engine.counting` block runs, added up in :attr:`stats`."""

    def __init__(self) -> None:
        self.stats = EngineStats()

    def add(self, stats: EngineStats) -> None:
        self.stats = self.stats + stats


def default_chunk_size(n_models: int) -> int:
    """Models per chunk when ``chunk_size`` is not given: ``ceil(K / 8)``, between 1 and 512.

    It depends on K alone, not on the backend or the number of workers, so runs
    on different backends share cache entries.
    """
    return int(min(512, max(1, math.ceil(n_models / 8))))


class Engine:
    """Train many models of one learner and collect their outputs.

    Parameters
    ----------
    backend : {"inprocess", "process", "ray"}, default="inprocess"
        Where chunks are trained: this process; ``n_jobs`` local worker
        processes (joblib's loky executor, one BLAS/torch thread each); or Ray
        tasks (one CPU each).
    n_jobs : int or None, default=None
        Workers for "process", CPUs of a local Ray instance; None or -1: every
        core. Ignored by "inprocess".
    address : str or None, default=None
        Ray cluster address (``"auto"`` or ``"ray://host:10001"``); None uses a
        running instance or starts a local one. Only with ``backend="ray"``.
    cache_dir : path-like or None, default=None
        Directory of the on-disk cache. With it, each chunk's outputs are written
        as soon as they are trained (atomically, checksummed), later calls read
        finished chunks instead of retraining them, and a killed run resumes
        where it stopped. Several runs may share one directory.
    chunk_size : int, "all" or None, default=None
        Models per chunk (one ``fit_many`` call each; the unit of caching and of
        parallelism). None: :func:`default_chunk_size`; "all": every model of a
        call in one chunk. Changing it changes the cache keys.
    progress : bool or None, default=None
        Progress bar with counts and ETA for runs longer than ~2 s; None shows it
        only when stdout is a terminal.
    on_progress : callable or None, default=None
        Called as ``on_progress(done, total, description)`` when a call starts
        (``done == 0``) and after each chunk is read from the cache or trained
        (``done`` models of ``total``), in the calling thread; for a caller that
        shows progress its own way (``leakaudit audit`` on stderr).
    threads : int or None, default=1
        BLAS / OpenMP / torch threads while a chunk trains, in every backend
        (worker processes start with one thread each in any case). None leaves
        this process's settings alone (for one big model trained in-process).
    memory_budget : int, str or None, default=None
        Bytes (or a size such as ``"2GB"``) that :meth:`predict_many`'s outputs may
        take in memory; larger outputs are held in a disk-backed array (in
        ``cache_dir`` if given, else the temporary folder), removed when freed.
        None: the budget in force when the call is made
        (:func:`leakaudit.engine.memory_budget`: a quarter of physical memory
        unless set). The numbers are the same either way.
    devices : None, "auto" or sequence of str, default=None
        GPUs for the learners that ask for one (their ``device`` is "cuda", "cuda:N" or "auto"; a DP-SGD
        wrapper without its own: its wrapped learner's). None: every learner trains where its own ``device``
        says. A sequence such as ``["cuda:0", "cuda:1"]``: with "process", one worker per device, each
        pinned to its own for its whole life (``n_jobs``, if given, must equal the number of devices);
        with "inprocess", the first device. "auto": every CUDA device torch sees (each Ray task that asks for
        a GPU gets one from Ray: with "ray" only "auto" is taken). Learners that do not ask for a GPU
        train on the CPU as without ``devices``. ``"cuda"`` devices where CUDA is absent are refused here.
        Cache keys name the kind of device ("cuda"), not which GPU, so all the devices should be of one model.

    Attributes
    ----------
    stats : EngineStats
        What the last call did (cache hits, models trained, ...).
    totals : EngineStats
        Every call since the engine was made, added up (see also :meth:`counting`).

    Notes
    -----
    Model k is always trained on ``subsets[k]`` with ``seeds[k]``, whatever the backend, chunking or order of
    completion, so all backends give the same results (up to the learner's own determinism). Only one chunk of
    models exists at a time per worker: :meth:`predict_many` keeps their outputs and drops the models.

    A learner whose model k depends on the other models of its ``fit_many`` call (``TorchMLP(order="shared")``)
    gives results that depend on ``chunk_size``, never on the backend; a cache key covers the whole chunk.
    :func:`leakaudit.checks.check_learner_chunking_invariant` tells which learners are chunking-invariant.

    One thread per chunk by default: many small fits gain nothing from threads (busy BLAS threads slow them
    down), parallelism comes from the workers, and equal thread counts make every backend sum alike.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from leakaudit.learners import SklearnLearner
    >>> X = np.arange(8.0).reshape(-1, 1); y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> out = Engine().predict_many(SklearnLearner(DecisionTreeClassifier()), X, y,
    ...                             [[0, 7], [0, 1, 2, 3]], [0, 1], X[[7]])
    >>> out.shape
    (2, 1, 2)
    >>> out[:, 0, 1]
    array([1., 0.])
    """

    #: Seconds before the progress bar appears (shorter runs stay silent).
    progress_delay: float = 2.0

    def __init__(self, backend: str = "inprocess", n_jobs: int | None = None, address: str | None = None,
                 cache_dir: Any = None, chunk_size: int | Literal["all"] | None = None, progress: bool | None = None,
                 threads: int | None = 1, on_progress: Callable[[int, int, str], None] | None = None,
                 memory_budget: int | str | None = None, devices: str | Sequence[str] | None = None):
        self.backend = check_choice(backend, name="backend", choices=BACKENDS)
        if n_jobs is not None and n_jobs != -1:
            check_scalar(n_jobs, name="n_jobs", kind=(int, np.integer), min_val=1)
        if address is not None and backend != "ray":
            raise InvalidParameterError(f"address is only used with backend='ray'; got backend={backend!r}")
        if chunk_size is not None and not (isinstance(chunk_size, str) and chunk_size == "all"):
            if isinstance(chunk_size, str):
                raise InvalidParameterError(f"chunk_size must be a positive int, 'all' or None; got {chunk_size!r}")
            check_scalar(chunk_size, name="chunk_size", kind=(int, np.integer), min_val=1)
        if progress is not None and not isinstance(progress, bool):
            raise InvalidParameterError(f"progress must be True, False or None; got {progress!r}")
        if threads is not None:
            check_scalar(threads, name="threads", kind=(int, np.integer), min_val=1)
        if on_progress is not None and not callable(on_progress):
            raise InvalidParameterError(f"on_progress must be a function or None; got {type(on_progress).__name__}")
        self.memory_budget = None if memory_budget is None else parse_memory_size(memory_budget)
        self.devices = devices
        self._devices = _check_devices(devices, backend, n_jobs)
        self.on_progress = on_progress
        self.threads = threads
        self.n_jobs = n_jobs
        self.address = address
        self.cache_dir = cache_dir
        self.chunk_size = chunk_size
        self.progress = progress
        self.cache = ChunkCache(cache_dir) if cache_dir is not None else None
        self.stats = EngineStats()
        self.totals = EngineStats()
        self._counters: list[EngineCounter] = []
        self._backend = None

    # -- backend lifecycle --------------------------------------------------------
    def _get_backend(self):
        if self._backend is None:
            if self.backend == "inprocess":
                self._backend = InProcessBackend(self._devices[0] if self._devices else None)
            elif self.backend == "process":
                self._backend = DeviceProcessBackend(self._devices) if self._devices else ProcessBackend(self.n_jobs)
            else:
                self._backend = RayBackend(self.n_jobs, self.address, gpus=self._devices is not None)
        return self._backend

    def close(self) -> None:
        """Release the backend (shuts down a Ray instance this engine started)."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def counting(self) -> Iterator[EngineCounter]:
        """Add up the calls made inside a ``with`` block: ``with engine.counting() as c: ...``, then ``c.stats``.

        Blocks may nest (each counts every call made while it is open).
        """
        counter = EngineCounter()
        self._counters.append(counter)
        try:
            yield counter
        finally:
            self._counters.remove(counter)

    def __repr__(self) -> str:
        return (f"Engine(backend={self.backend!r}, n_jobs={self.n_jobs!r}, cache_dir={self.cache_dir!r}, "
                f"chunk_size={self.chunk_size!r})")

    # -- public API -----------------------------------------------------------------
    def predict_many(self, learner: Learner, X: Any, y: Any, subsets: Sequence[Any],
                     seeds: Sequence[int] | RandomStateLike, X_query: Any, n_classes: int | None = None, *,
                     together: bool = False) -> np.ndarray:
        """Train K models and return their outputs on ``X_query``.

        Parameters
        ----------
        learner : Learner
        X : array-like or SciPy sparse matrix of shape (n_samples, n_features)
            A sparse X is kept sparse (and fingerprinted as such by the cache); each ``fit_many`` call
            densifies the rows its subsets use unless the learner takes sparse input (``accepts_sparse``).
        y : array-like of shape (n_samples,)
            Integer class indices (classifiers) or real targets (regressors).
        subsets : sequence of K index arrays (or boolean masks of length n_samples)
            Model k is trained on rows ``subsets[k]``.
        seeds : sequence of K ints, or one seed from which K are spawned
            Model k's seed is ``seeds[k]``.
        X_query : array-like or SciPy sparse matrix of shape (n_query, n_features)
        n_classes : int, optional
            Classes every model outputs (default ``max(y) + 1``).
        together : bool, default=False
            Train all K models in one chunk (one ``fit_many`` call), whatever the engine's ``chunk_size``:
            for a learner whose models depend on the other models of their call (a shared row order).

        Returns
        -------
        outputs : ndarray of shape (K, n_query, n_classes), or (K, n_query) for regressors
            ``outputs[k]`` equals ``learner.fit(X[subsets[k]], y[subsets[k]],
            random_state=seeds[k], n_classes=n_classes).predict_proba(X_query)``.
            A :class:`numpy.memmap` when it exceeds the memory budget (``memory_budget``).
        """
        X, y, subsets, seeds, n_classes = self._validate(learner, X, y, subsets, seeds, n_classes)
        # a sparse X_query stays sparse only for a learner that takes sparse input (densified once, here)
        sparse_ok = bool(learner.accepts_sparse)
        X_query = check_feature_matrix(X_query, name="X_query", accept_sparse=sparse_ok)
        if X_query.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {X_query.shape[1]} features but X has {X.shape[1]}")
        mode = "predict_proba" if learner.task == "classification" else "predict"
        results = self._run(learner, X, y, subsets, seeds, n_classes, mode=mode, X_query=X_query, together=together)
        out = None
        for j, start, size, payload in results:
            chunk = payload["outputs"]
            if out is None:  # in memory, or on disk past the budget (engine/_store.py)
                out = output_array((len(subsets),) + chunk.shape[1:], chunk.dtype, budget=self.memory_budget,
                                   directory=self.cache.root if self.cache is not None else None)
            out[start:start + size] = chunk
        return out

    def fit_bank(self, learner: Learner, X: Any, y: Any, subsets: Sequence[Any],
                 seeds: Sequence[int] | RandomStateLike, n_classes: int | None = None) -> ModelBank:
        """Train K models and return them as a bank.

        With a ``cache_dir`` and a learner implementing
        :class:`~leakaudit.engine.SupportsState`, each chunk's weights are stored
        as an ``.npz`` entry (never a pickle), later calls load instead of
        retraining, and the returned bank loads one chunk at a time from disk.
        Otherwise every chunk's models are kept in memory and nothing is cached.

        Parameters
        ----------
        As :meth:`predict_many`, without ``X_query``.

        Returns
        -------
        ModelBank with ``n_models == K``; model k trained on ``subsets[k]`` with ``seeds[k]``.
        """
        X, y, subsets, seeds, n_classes = self._validate(learner, X, y, subsets, seeds, n_classes)
        stateful = supports_state(learner)
        use_cache = stateful and self.cache is not None
        mode = "state" if use_cache else "bank"
        chunks: dict[int, tuple[int, Any]] = {}
        for j, start, size, payload in self._run(learner, X, y, subsets, seeds, n_classes, mode=mode,
                                                 X_query=None, use_cache=use_cache):
            if mode == "bank":
                chunks[j] = (size, payload)
            elif payload is True:  # stored in the cache: loaded when used
                chunks[j] = (size, _StateLoader(self.cache, learner, self._keys[j]))
            else:  # caching was turned off (unfingerprintable learner): rebuild in memory
                chunks[j] = (size, learner.from_state(payload))
        return ChunkedModelBank([chunks[j] for j in range(len(chunks))], n_classes)

    # -- internals ----------------------------------------------------------------------
    def _validate(self, learner, X, y, subsets, seeds, n_classes):
        if not (isinstance(learner, Learner) and learner.task in ("classification", "regression")):
            raise InvalidParameterError(
                f"learner must be a leakaudit Learner (fit_many and task); got {type(learner).__name__}"
            )
        learner.validate_params()  # the learner's own parameter checks, before any worker starts
        # The learners' own fit_many opening. A sparse X stays sparse: the cache fingerprints it as it is, and
        # each chunk's fit_many densifies the rows that chunk uses (a learner without sparse support), so a
        # chunk's key and models do not depend on the other chunks of the call.
        return check_many_inputs(X, y, subsets, seeds, task=learner.task, n_classes=n_classes, accept_sparse=True)

    def _placed(self, learner: Learner) -> Learner:
        """``learner`` as the backend trains it: on the engine's device kind when it asks for a GPU and the engine
        has ``devices`` (what its cache key must name)."""
        if self._devices is None or not wants_gpu(learner):
            return learner
        from sklearn.base import clone

        return clone(learner).set_params(device=self._devices[0] if self.backend != "ray" else "cuda")

    def _chunk_size(self, K: int, together: bool) -> int:
        if together or self.chunk_size == "all":
            return max(1, K)
        return int(self.chunk_size) if self.chunk_size is not None else default_chunk_size(K)

    def _run(self, learner, X, y, subsets, seeds, n_classes, *, mode, X_query, use_cache=True, together=False):
        """Yield (chunk index, first model, size, payload) for every chunk, cached ones first.

        When the last chunk is yielded (or the caller stops), ``self.stats`` describes the call and is added
        to ``self.totals`` and to every open :meth:`counting` block.
        """
        t0 = time.perf_counter()
        K = len(subsets)
        cs = self._chunk_size(K, together)
        bounds = [(start, min(start + cs, K)) for start in range(0, K, cs)]
        counts = dict.fromkeys(("chunks_cached", "chunks_trained", "models_trained", "corrupt_entries"), 0)
        cache = self.cache if use_cache else None
        keys: list[str | None] = [None] * len(bounds)
        if cache is not None:
            try:
                lfp = learner_fingerprint(self._placed(learner))
            except Unfingerprintable as exc:
                warnings.warn(f"results are not cached: {exc}", CacheWarning, stacklevel=3)
                cache = None
        if cache is not None:
            data_fp = array_fingerprint(X) + array_fingerprint(y)
            query_fp = array_fingerprint(X_query) if X_query is not None else None
            for j, (a, b) in enumerate(bounds):
                keys[j] = chunk_key(kind=mode, learner_fp=lfp, data_fp=data_fp, query_fp=query_fp,
                                    n_classes=n_classes, subsets_fp=subsets_fingerprint(subsets[a:b]),
                                    seeds=seeds[a:b])
        self._keys = keys

        todo: list[tuple[int, ChunkTask]] = []
        bar = ProgressBar(K, f"training {type(learner).__name__}", enabled=self.progress,
                          delay=self.progress_delay, callback=self.on_progress)
        try:
            # Finished chunks first, read one at a time (never all payloads at once).
            for j, (a, b) in enumerate(bounds):
                payload = None
                if cache is not None:
                    payload, corrupt = cache.read(keys[j])
                    counts["corrupt_entries"] += int(corrupt)
                if payload is not None:
                    counts["chunks_cached"] += 1
                    bar.advance(b - a)
                    # In "state" mode the bank is loaded lazily later; the read only checked the entry.
                    yield j, a, b - a, (True if mode == "state" else payload)
                else:
                    todo.append((j, ChunkTask(learner=learner, subsets=subsets[a:b], seeds=seeds[a:b],
                                              n_classes=n_classes, mode=mode, threads=self.threads)))
            if todo:
                backend = self._get_backend()
                for j, result in backend.run(todo, X, y, X_query):
                    a, b = bounds[j]
                    if cache is not None and mode != "bank":
                        cache.write(keys[j], result)
                        if mode == "state":
                            result = True
                    counts["chunks_trained"] += 1
                    counts["models_trained"] += b - a
                    bar.advance(b - a)
                    yield j, a, b - a, result
        finally:
            bar.close()
            self.stats = EngineStats(n_calls=1, n_models=K, n_chunks=len(bounds), chunk_size=cs, **counts,
                                     cache_used=cache is not None, seconds=time.perf_counter() - t0)
            self.totals = self.totals + self.stats
            for counter in self._counters:
                counter.add(self.stats)


def _check_devices(devices: Any, backend: str, n_jobs: int | None) -> list[str] | None:
    """The engine's ``devices`` as a list of resolved devices (None: none given); refused in one line when a device
    is unknown or absent, or does not suit the backend."""
    from ..learners import check_device, import_torch, resolve_device

    if devices is None:
        return None
    if isinstance(devices, str):
        if devices != "auto":
            raise InvalidParameterError(f"devices must be None, 'auto' or a list of devices such as ['cuda:0', "
                                        f"'cuda:1']; got {devices!r}")
        if backend == "ray":  # the cluster's GPUs, which this process need not see (RayBackend checks them)
            return ["cuda"]
        torch = import_torch()
        count = int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
        if count == 0:
            from ..exceptions import UnsupportedError

            raise UnsupportedError("devices='auto' but torch sees no CUDA device here; leave devices=None to train "
                                   "on the CPU")
        return [f"cuda:{i}" for i in range(count)]
    if backend == "ray":
        raise InvalidParameterError("backend='ray' takes devices='auto' (Ray gives each task its GPU); got a list")
    if not isinstance(devices, (list, tuple)):
        raise InvalidParameterError(f"devices must be None, 'auto' or a list of devices; got {devices!r}")
    found = [check_device(d, name="devices") for d in devices]
    if not found or "auto" in found:
        raise InvalidParameterError(f"devices must name one device or more ('cpu', 'cuda', 'cuda:N'); got {devices!r}")
    resolved = [resolve_device(d, name="devices") for d in found]
    if len({d.split(":")[0] for d in resolved}) > 1:
        raise InvalidParameterError(f"devices mixes CPU and CUDA devices ({devices!r}): one kind, so that a chunk's "
                                    "cache key names where it trained")
    if backend == "process" and n_jobs not in (None, -1) and int(n_jobs) != len(resolved):
        raise InvalidParameterError(f"backend='process' with devices runs one worker per device: n_jobs={n_jobs} "
                                    f"but {len(resolved)} devices; leave n_jobs out")
    return resolved


class _StateLoader:
    """Loads one chunk's bank from its cache entry (via the learner's ``from_state``)."""

    def __init__(self, cache: ChunkCache, learner: Learner, key: str):
        self.cache, self.learner, self.key = cache, learner, key

    def __call__(self) -> ModelBank:
        state, _ = self.cache.read(self.key)
        if state is None:
            raise InvalidInputError(
                f"cache entry {self.cache.path(self.key)} disappeared or is corrupt; call fit_bank again"
            )
        return self.learner.from_state(state)


def default_engine() -> Engine:
    """The engine a function uses when it is given none: in this process, no cache, no progress bar.

    Every model of a call is trained in one ``fit_many`` call (``chunk_size="all"``) with this process's
    thread settings left alone (``threads=None``), as a learner trains them when called directly.
    """
    return Engine(backend="inprocess", chunk_size="all", progress=False, threads=None)


def resolve_engine(engine: Engine | None) -> Engine:
    """``engine``, or :func:`default_engine` when it is None; anything else is refused naming ``engine``."""
    if engine is None:
        return default_engine()
    if not isinstance(engine, Engine):
        raise InvalidParameterError(f"engine must be a leakaudit.engine.Engine or None; got {type(engine).__name__}")
    return engine


_F = TypeVar("_F", bound=Callable[..., Any])


def reports_engine_stats(func: _F) -> _F:
    """Decorator of a function that trains many models and returns a result with an ``engine_stats`` field.

    The function's keyword argument ``engine`` (an :class:`Engine` or None) reaches it resolved by
    :func:`resolve_engine`, and the returned result carries the :class:`EngineStats` of every engine call
    the function made (a pydantic result is copied with the field set; a dataclass is replaced).
    """

    @functools.wraps(func)
    def wrapper(*args: Any, engine: Engine | None = None, **kwargs: Any) -> Any:
        engine = resolve_engine(engine)
        with engine.counting() as counted:
            result = func(*args, engine=engine, **kwargs)
        if isinstance(result, Result):
            return result.model_copy(update={"engine_stats": counted.stats})
        return dataclasses.replace(result, engine_stats=counted.stats)

    return wrapper  # type: ignore[return-value]

"""Training many models fast: chunks of ``fit_many`` on in-process, process or Ray backends,
with an on-disk, checksummed, resumable cache.

Public names
------------
Engine
    ``Engine(backend, n_jobs, address, cache_dir, chunk_size, progress, threads, on_progress, memory_budget)``;
    ``predict_many(learner, X, y, subsets, seeds, X_query)`` and ``fit_bank(...)``. ``X`` and ``X_query`` may be
    SciPy sparse matrices (kept sparse, fingerprinted as CSR by the cache).
default_engine, resolve_engine, reports_engine_stats
    The in-process engine a function uses when given none; ``resolve_engine(engine)`` returns it for None.
    Every function of the package that trains many models takes ``engine: Engine | None = None``;
    ``@reports_engine_stats`` resolves it and puts the engine's statistics on the function's result.
EngineStats, EngineCounter
    What calls did (cache hits and misses, models trained, seconds): ``engine.stats`` (the last call),
    ``engine.totals`` (every call), ``with engine.counting() as c:`` (the calls in a block, ``c.stats``).
SupportsState
    Optional learner protocol (``get_state(bank)`` / ``from_state(state)``, declared by
    ``capabilities.state``) that lets the engine cache weights as ``.npz``.
ChunkedModelBank
    The bank :meth:`Engine.fit_bank` returns.
ChunkCache, CacheWarning
    The cache itself and the warning for a corrupt entry.
output_array, chunk_length, memory_budget, using_memory_budget, default_memory_budget, parse_memory_size, is_disk_backed
    Model outputs within a memory budget: in memory below it, a disk-backed array (removed when freed) above it;
    consumers read such arrays in chunks of models of ``chunk_length`` (``_store.py``).
work_budget, using_work_budget, parse_work_amount, DEFAULT_WORK_BUDGET
    The steps one model's fit or prediction may take, estimated before it starts (``_work.py``).
"""

from ._cache import CacheWarning, ChunkCache
from ._engine import (
    Engine,
    EngineCounter,
    EngineStats,
    default_chunk_size,
    default_engine,
    reports_engine_stats,
    resolve_engine,
)
from ._fingerprint import array_fingerprint, learner_fingerprint
from ._state import ChunkedModelBank, SupportsState, supports_state
from ._store import (
    check_memory,
    chunk_length,
    default_memory_budget,
    is_disk_backed,
    memory_budget,
    memory_limit,
    output_array,
    parse_memory_size,
    using_memory_budget,
)
from ._work import DEFAULT_WORK_BUDGET, TREE_OVERHEAD, check_work, parse_work_amount, using_work_budget, work_budget

__all__ = ["Engine", "EngineStats", "EngineCounter", "default_chunk_size", "default_engine", "resolve_engine",
           "reports_engine_stats", "SupportsState", "supports_state", "ChunkedModelBank", "ChunkCache", "CacheWarning",
           "array_fingerprint", "learner_fingerprint", "output_array", "chunk_length", "memory_budget", "memory_limit",
           "check_memory", "using_memory_budget", "default_memory_budget", "parse_memory_size", "is_disk_backed",
           "work_budget", "using_work_budget", "parse_work_amount", "DEFAULT_WORK_BUDGET", "TREE_OVERHEAD"]

"""Training many models fast: chunks of ``fit_many`` on in-process, process or Ray backends,
with an on-disk, checksummed, resumable cache.

Public names
------------
Engine
    ``predict_many(learner, X, y, subsets, seeds, X_query)`` and ``fit_bank(...)``; ``X`` and ``X_query`` may be
    SciPy sparse matrices (kept sparse, fingerprinted as CSR by the cache).
default_engine, resolve_engine, reports_engine_stats
    Every function of the package that trains many models takes ``engine: Engine | None = None``;
    ``@reports_engine_stats`` resolves it (None: the in-process default) and puts the engine's statistics on the
    function's result.
EngineStats, EngineCounter
    What calls did: ``engine.stats`` (the last call), ``engine.totals``, ``with engine.counting() as c:``.
SupportsState, ChunkedModelBank, ChunkCache, CacheWarning
    The optional learner protocol that lets the cache keep weights as ``.npz``; the bank :meth:`Engine.fit_bank`
    returns; the cache and the warning for a corrupt entry.
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

__all__ = [
    "Engine",
    "EngineStats",
    "EngineCounter",
    "default_chunk_size",
    "default_engine",
    "resolve_engine",
    "reports_engine_stats",
    "SupportsState",
    "supports_state",
    "ChunkedModelBank",
    "ChunkCache",
    "CacheWarning",
    "array_fingerprint",
    "learner_fingerprint",
    "output_array",
    "chunk_length",
    "memory_budget",
    "memory_limit",
    "check_memory",
    "using_memory_budget",
    "default_memory_budget",
    "parse_memory_size",
    "is_disk_backed",
    "work_budget",
    "using_work_budget",
    "parse_work_amount",
    "DEFAULT_WORK_BUDGET",
    "TREE_OVERHEAD",
]

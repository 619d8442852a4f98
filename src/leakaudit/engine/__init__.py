"""Training many models fast: chunks of ``fit_many`` on in-process, process or Ray backends,
with an on-disk, checksummed, resumable cache.

Public names
------------
Engine
    ``Engine(backend, n_jobs, address, cache_dir, chunk_size, progress, threads, on_progress)``;
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
    Optional learner protocol (``get_state(bank)`` / ``from_state(state)``) that
    lets the engine cache weights as ``.npz``.
ChunkedModelBank
    The bank :meth:`Engine.fit_bank` returns.
ChunkCache, CacheWarning
    The cache itself and the warning for a corrupt entry.
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
]

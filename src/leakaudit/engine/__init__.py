"""Training many models fast: chunks of ``fit_many`` on in-process, process or Ray backends,
with an on-disk, checksummed, resumable cache.

Public names
------------
Engine
    ``Engine(backend, n_jobs, address, cache_dir, chunk_size, progress, threads, on_progress)``;
    ``predict_many(learner, X, y, subsets, seeds, X_query)`` and ``fit_bank(...)``.
EngineStats
    What the last call did (cache hits and misses, models trained).
SupportsState
    Optional learner protocol (``get_state(bank)`` / ``from_state(state)``) that
    lets the engine cache weights as ``.npz``.
ChunkedModelBank
    The bank :meth:`Engine.fit_bank` returns.
ChunkCache, CacheWarning
    The cache itself and the warning for a corrupt entry.
"""

from ._cache import CacheWarning, ChunkCache
from ._engine import Engine, EngineStats, default_chunk_size
from ._fingerprint import array_fingerprint, learner_fingerprint
from ._state import ChunkedModelBank, SupportsState, supports_state

__all__ = [
    "Engine",
    "EngineStats",
    "default_chunk_size",
    "SupportsState",
    "supports_state",
    "ChunkedModelBank",
    "ChunkCache",
    "CacheWarning",
    "array_fingerprint",
    "learner_fingerprint",
]

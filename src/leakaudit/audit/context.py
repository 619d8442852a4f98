"""What every analysis of the audit reads: the settings, the records, the audited model, seeds and the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from ..engine import Engine, EngineStats
from .config import AuditConfig
from .inputs.data import AuditData
from .inputs.target import Target

__all__ = ["AuditContext", "Prepared", "engine_stats", "ENGINE_COUNTERS"]

#: The engine's counters written to results.json's ``resources``: our name -> :class:`EngineStats` field.
ENGINE_COUNTERS = {"n_models": "n_models", "trained": "models_trained", "chunks_from_cache": "chunks_cached",
                   "chunks_trained": "chunks_trained", "corrupt_cache_entries": "corrupt_entries"}


def engine_stats(engine: Engine, stats: EngineStats | None = None) -> dict:
    """``stats`` (default: the engine's last call) as results.json's counters (:data:`ENGINE_COUNTERS`), with
    the engine's cache folder (None without one)."""
    st = engine.stats if stats is None else stats
    cache = engine.cache_dir
    return {**{k: int(getattr(st, a)) for k, a in ENGINE_COUNTERS.items()}, "cache_dir": str(cache) if cache else None}


@dataclass(frozen=True)
class AuditContext:
    """The inputs shared by the analyses (read-only).

    Attributes
    ----------
    cfg : AuditConfig
    seeds : dict of str -> int
        One child seed per slot of the plan (:attr:`leakaudit.audit.plan.Plan.seed_slots`).
    check_confidence : float
        Confidence at which each check is judged: ``1 - (1 - cfg.confidence) / n_checks`` (Bonferroni), so that
        the verdict's checks hold together at ``cfg.confidence``.
    data : AuditData
        A tabular audit's records.
    target : Target
        A tabular audit's model.
    engine : leakaudit.engine.Engine
        Trains every retrained model (reference, leave-one-out, noise-floor), with its on-disk cache.
    record_names : tuple of str
        Each audited record's name in sentences (:meth:`record_name`).
    scored : leakaudit.audit.steps.lm.LMScores
        A language model's audit: the texts and their per-token scores.
    """

    cfg: AuditConfig
    seeds: dict
    check_confidence: float
    data: AuditData | None = None
    target: Target | None = None
    engine: Engine | None = None
    record_names: tuple[str, ...] = ()
    scored: Any = None

    @cached_property
    def risk_baselines(self) -> dict[str, tuple[float, str]]:
        """The baselines of the risks an epsilon bounds (:mod:`leakaudit.dpaudit.risk`): a tabular audit's members'
        (:meth:`AuditData.risk_baselines`), a language-model audit's member texts'."""
        if self.data is not None:
            return self.data.risk_baselines()
        from ..dpaudit.risk import text_baselines

        return text_baselines([t for t, m in zip(self.scored.texts, self.scored.is_member) if m])

    def seed_for(self, name: str) -> int:
        """A seed of the audit's own for ``name`` (a registered analysis or attack picks its name), derived from
        the audit seed (:func:`leakaudit._random.named_seed`): recorded with the audit's seed, the same run to run."""
        from .._random import named_seed

        return named_seed(self.cfg.seed, name)

    def record_name(self, i: int) -> str:
        """How the audit names audited record ``i`` (members first) to its reader: its file and row (1 = the first
        row after the header), as records.csv's ``source`` and ``row`` say; ``member #i`` where none was given."""
        return self.record_names[i] if 0 <= i < len(self.record_names) else f"member #{i}"

    def names(self, records) -> list[str]:
        """:meth:`record_name` of each of ``records`` (indexes, members first): a list of records in results.json."""
        return [self.record_name(int(i)) for i in records]


@dataclass(frozen=True)
class Prepared:
    """One modality's inputs, read and checked: what its plan's steps read and what the result shows of them.

    Attributes
    ----------
    modality : {"tabular", "text"}
        Which plan runs (:func:`leakaudit.audit.plan.plan_for`).
    checks_of : tuple
        What each step's ``checks(cfg, *checks_of)`` counts from: ``(data, target)``, or ``(texts, scored)``.
    context : callable
        ``context(check_confidence) -> AuditContext``: what the steps read, their checks judged at that confidence.
    data, target, settings : dict
        Those sections of results.json (the steps' own ``settings`` join the last).
    records : pandas.DataFrame
        One row per audited record, members first (``record``, ``source``, ``row``, ``is_member`` and the record's
        own values); the steps' per-record columns follow.
    in_memory : bool
        The records were given in memory, so the evidence names no input file.
    memory : dict
        The inputs given in memory (and the model the demo trained), role -> object, fingerprinted in the evidence.
    engine : leakaudit.engine.Engine or None
        What trains the tabular audit's models (closed when the audit ends).
    """

    modality: str
    checks_of: tuple
    context: Callable[[float], AuditContext]
    data: dict
    target: dict
    settings: dict
    records: pd.DataFrame
    in_memory: bool
    memory: dict
    engine: Engine | None = None

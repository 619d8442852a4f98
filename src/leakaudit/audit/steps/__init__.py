"""The audit's analyses: each step reads the prepared inputs and returns its checks; a plan (``audit/plan.py``)
runs them in order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..context import AuditContext
from ..result.checks import Analysis, Skipped

__all__ = ["Step", "Plan"]


@dataclass(frozen=True)
class Step:
    """One analysis of the audit.

    Attributes
    ----------
    name : str
        Its results.json section ("membership", "dtp", ...); the key of its result in :func:`run_plan`'s output.
    stage, title : str
        The progress line's stage name (the key of results.json's ``timings``) and what it says.
    checks : callable
        ``checks(cfg, data, target) -> int``: the checks it plans for these inputs (the Bonferroni family).
    run : callable
        ``run(ctx, done) -> Analysis``; ``done`` maps the names of the steps before it to their results.
    when : callable, optional
        ``when(ctx, done) -> bool``: whether it applies to these inputs (default: always); one that does not gives an
        empty result.
    skip : callable, optional
        ``skip(ctx, done) -> Skipped | None``: for a step that applies, why it does not run here (the input or the
        setting it lacks, and what would let it run), checked before it starts; None: it runs.
    section : str, optional
        The results.json section its summary fills (default: ``name``; ``"dtp.removal"``: the ``removal`` entry of
        the ``dtp`` section, when that step ran; a registered analysis: ``analyses.NAME``).
    description : str
        One line: what it measures and whose idea it is (stored in results.json for a registered analysis, so the
        report shows it without the plug-in).
    models : callable, optional
        ``models(ctx, done) -> int``: about how many models it trains, for the progress's whole-audit total and time
        left (:meth:`~leakaudit.audit.progress.StageProgress.expect`). Asked once before any step runs (``done``
        empty: an estimate that needs an earlier step's result gives 0 then) and again just before it runs. Models
        it decides to train as it goes join the total when the engine announces them. None: none expected.
    skipped_by : str, optional
        The setting that skips this step, as the library and the command line spell it (``"removal=False,
        --no-removal"``): its progress line then says its share of the audit's time.
    cheap : callable, optional
        ``cheap(ctx, done) -> (Analysis, deferred)``: what of it a tiered audit runs in its cheap tier, before any
        model is trained (``when`` and ``skip`` apply as to ``run``): checks that the whole step makes too, computed
        the same way, and ``deferred``, the parts left for ``run`` in words (empty: this is the step's whole
        result, and ``run`` is not called). None: nothing of it runs in the cheap tier.
    expensive : bool, default=False
        It trains models the decision may not need: a tiered audit whose cheap tier withheld the model does not run
        it (nor the deferred parts of a step with ``cheap``) and lists it as not needed.
    seeds : dict of str -> int
        The seed slots it draws (``ctx.seeds[slot]``), each with its position among the audit seed's children
        (:meth:`Plan.seeds`): a new slot takes a new position, so every other keeps its seed.
    """

    name: str
    stage: str
    title: str
    checks: Callable[..., int]
    run: Callable[[AuditContext, Mapping[str, Analysis]], Analysis]
    when: Callable[[AuditContext, Mapping[str, Analysis]], bool] | None = None
    skip: Callable[[AuditContext, Mapping[str, Analysis]], Skipped | None] | None = None
    section: str | None = None
    description: str = ""
    models: Callable[[AuditContext, Mapping[str, Analysis]], int] | None = None
    skipped_by: str | None = None
    cheap: Callable[[AuditContext, Mapping[str, Analysis]], tuple[Analysis, list[str]]] | None = None
    expensive: bool = False
    seeds: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    """An audit's analyses in the order they run, and how the result is laid out from them.

    Attributes
    ----------
    steps : tuple of Step
    record_columns : tuple of str
        The steps whose per-record columns records.csv shows first, in this order (the others follow in plan order).
    """

    steps: tuple[Step, ...]
    record_columns: tuple[str, ...] = ()

    @property
    def seed_slots(self) -> tuple[str, ...]:
        """The seed slots the steps draw (:attr:`Step.seeds`), in the order of their positions."""
        slots = {slot: i for s in self.steps for slot, i in s.seeds.items()}
        return tuple(sorted(slots, key=slots.get))

    def seeds(self, seed: int) -> dict[str, int]:
        """Each slot's seed: the audit seed ``seed``'s child at the slot's position (:func:`spawn_seeds`)."""
        from ..._random import spawn_seeds

        slots = {slot: i for s in self.steps for slot, i in s.seeds.items()}
        children = spawn_seeds(seed, max(slots.values(), default=-1) + 1)
        return {slot: children[slots[slot]] for slot in self.seed_slots}

    def planned_checks(self, cfg, data, target) -> dict[str, int]:
        """Checks each step plans for these inputs: the family the verdict's correction covers."""
        return {s.name: int(s.checks(cfg, data, target)) for s in self.steps}

"""How long an audit will take, before it trains any model: the plan's models times a fit timed on these inputs.

The models each analysis trains come from the plan (:attr:`leakaudit.audit.plan.Step.models`, what the progress
counts). A model's cost is measured on the user's own model and data: the retraining recipe (the target's learner)
is trained on the members and queried on every audited record through an engine as the audit's trains a chunk (one
``fit_many`` call, on the audit's threads, no cache), twice: one model, which also warms the learner up (its
kernels, its thread pool), then one call of as many models as an engine chunk of the largest analysis holds, capped
where a learner that trains its models one by one would take more than about a second (and at 64), so that a learner
that trains a call's models together (spread over the cores, in lanes) is timed as the engine trains them. The
estimate is the models times the lesser of the two calls' seconds per model (the second's, unless the machine was
busier then). The DTP-1 test's re-measurements of its candidates, which only the first PDTP measurements decide, are
given apart as a bound: at most ``dtp_test_max_records`` candidates, each re-measured ``dtp_test_repeats`` times
beside a full model per repeat (a candidate still undecided then gets more, up to ``dtp_test_max_repeats``: not
counted).

What it ignores, each making it low or high: the work besides training (the attacks, the bootstrap intervals,
reading and writing); the removal analysis, which the DTP-1 test decides; the models the cache already holds
(counted as trained); closed-form leave-one-out (naive Bayes, leakaudit's logistic regression by Newton's method),
whose PDTP models are counted as fits though none is trained; other sizes of training set (a reference model's half
of the records, a property shadow model's share) and other learners (the shadow attack's network), all costed as a
fit on the members; the backend (``process`` and ``ray`` are costed as the in-process engine trains); and a machine
busy with other work while it runs or while the fits were timed.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from .progress import about, duration

__all__ = ["Estimate", "StepEstimate", "estimate_plan", "language_model_estimate"]

#: what no estimate counts, as :meth:`Estimate.__str__` ends
NOT_COUNTED = "not counted: the work besides training, and the removal analysis (which the DTP-1 test decides)"


class StepEstimate(NamedTuple):
    """One analysis of the plan: its name, the models it trains and their estimated seconds (None: not measurable)."""

    name: str
    models: int
    seconds: float | None


@dataclass(frozen=True)
class Estimate:
    """The estimated time of an audit (:func:`leakaudit.estimate`, ``leakaudit audit --estimate``).

    Attributes
    ----------
    steps : tuple of StepEstimate
        Each analysis of the plan, in order: ``name``, ``models``, ``seconds``.
    seconds : float or None
        The whole plan's training time; None when not measurable (``not_measurable`` says why).
    cores : int
        The cores this process may use, which the timed fits used.
    fit_seconds : float or None
        Seconds per model of the timed fits (the lesser of the two calls').
    timed_models : int
        Models the timing trained (no audit model: none is cached or used).
    remeasured : int
        Up to this many models more re-measure the DTP-1 test's candidates (beyond ``seconds``: how many depends
        on what PDTP finds, none when no member comes near the threshold; more for a candidate still undecided).
    not_measurable : str or None
        Why there is no estimate: the audit cannot retrain the model (it then trains none), or a language model's.
    """

    steps: tuple[StepEstimate, ...]
    seconds: float | None
    cores: int
    fit_seconds: float | None = None
    timed_models: int = 0
    remeasured: int = 0
    not_measurable: str | None = None

    @property
    def models(self) -> int:
        """The models of the whole plan."""
        return sum(s.models for s in self.steps)

    @property
    def headline(self) -> str:
        """'about 2 min on 2 cores for 1,550 models (0.08 s a model, timed on 9 fits of the recipe); up to 33 s more
        if DTP-1 re-measures its candidates (408 models, more for any still undecided)'."""
        if self.seconds is None:
            return f"not measurable: {self.not_measurable}"
        fits = f" ({self.fit_seconds:.2g} s a model, timed on {self.timed_models} fits of the recipe)" \
            if self.fit_seconds is not None else ""
        more = f"; up to {duration(self.remeasured * self.fit_seconds)} more if DTP-1 re-measures its candidates " \
               f"({self.remeasured:,} models, more for any still undecided)" if self.remeasured and self.fit_seconds is not None else ""
        return f"{about(self.seconds)} on {self.cores} core{'s' if self.cores != 1 else ''} for {self.models:,} " \
               f"models{fits}{more}"

    def to_dict(self) -> dict:
        """As inputs.json holds it: the fields, ``steps`` a list of dicts, and ``models``."""
        return {**asdict(self), "steps": [s._asdict() for s in self.steps], "models": self.models,
                "headline": self.headline}

    def __str__(self) -> str:
        lines = [f"estimate: {self.headline}"]
        lines += [f"  {s.name}: {s.models:,} model{'s' if s.models != 1 else ''}"
                  + ("" if s.seconds is None else f", {about(s.seconds)}") for s in self.steps if s.models]
        none = [s.name for s in self.steps if not s.models]
        if none:
            lines.append(f"  {', '.join(none)}: no model")
        return "\n".join(lines + ([f"  {NOT_COUNTED}"] if self.seconds is not None else []))


def _cores() -> int:
    from ..learners._threads import default_threads

    return default_threads()


def estimate_plan(plan, ctx) -> Estimate:
    """The estimate of running ``plan`` (:class:`~leakaudit.audit.steps.Plan`) on ``ctx``
    (:class:`~leakaudit.audit.context.AuditContext`): its steps' models and two timed calls of the recipe (module
    docstring); not measurable when the target has no learner."""
    from ..engine import default_chunk_size

    counts = [(s.name, int(s.models(ctx, {})) if s.models is not None else 0) for s in plan.steps]
    if ctx.target.learner is None:
        return Estimate(tuple(StepEstimate(n, m, None) for n, m in counts), None, _cores(), not_measurable=(
            f"the audit cannot retrain this {ctx.target.kind} model (no training algorithm was given), so it trains "
            "no model; its analyses that need none take seconds"))
    total, st = sum(m for _, m in counts), ctx.cfg.settings
    per_model, timed = _timed(ctx, default_chunk_size(max(m for _, m in counts))) if total else (None, 0)
    # the DTP-1 test (leakaudit.dtp.dtp1_test): per repeat a full model and each candidate's leave-one-out model
    remeasured = st.dtp_test_repeats * (st.dtp_test_max_records + 1) if dict(counts).get("dtp") else 0
    return Estimate(tuple(StepEstimate(n, m, m * (per_model or 0)) for n, m in counts), total * (per_model or 0),
                    _cores(), per_model, timed, remeasured)


def _timed(ctx, chunk: int) -> tuple[float, int]:
    """Seconds per model of the recipe trained on the members as the audit's engine trains a chunk, and the models
    timed: one model (a warm-up), then a call of up to ``chunk`` models; the lesser of the two calls' seconds per
    model (a busy moment of the machine slows one of them)."""
    from ..engine import Engine

    data, learner = ctx.data, ctx.target.learner
    X_mem, X_non, _ = ctx.target.inputs(data)
    X_query, rows, seed = np.vstack([X_mem, X_non]), np.arange(len(data.y_mem)), ctx.seed_for("estimate")
    engine = Engine(chunk_size="all", progress=False, threads=getattr(ctx.engine, "threads", 1))

    def seconds(k: int) -> float:
        t0 = time.perf_counter()
        engine.predict_many(learner, X_mem, data.y_mem, [rows] * k, [seed + i for i in range(k)], X_query,
                            n_classes=data.n_classes)
        return time.perf_counter() - t0

    first = seconds(1)
    k = int(max(1, min(chunk, 64, 1.0 // max(first, 1e-3))))
    return min(first, seconds(k) / k), k + 1


def language_model_estimate() -> Estimate:
    """A language model's audit trains no model: not measurable, said before its texts are scored."""
    return Estimate((), None, _cores(), not_measurable=(
        "a language model's audit trains no model: its time is scoring the texts with the model and each reference "
        "model, which is not timed"))

"""What the audit's analyses claim: checks with a status, analyses that could not run, and the result of each.

Every analysis of the audit (membership attacks, DTP, attribute inference, property inference, MIP) returns an
:class:`Analysis`: its section of ``results.json``, the :class:`Check` objects the verdict is computed from, what it
could not run (:class:`Skipped`, with the flag that would enable it), its resource use and per-record columns. The
verdict (:func:`leakaudit.audit.verdict.decide`) reads checks only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import ConfigDict, Field, WithJsonSchema

from .._results import Result
from .sections import INTERVAL_SCHEMA, MEASURED_SCHEMA, Skipped

__all__ = ["Check", "Skipped", "Analysis", "STATUSES", "EXCEEDED", "PASSED", "NOT_MEASURABLE", "within_sentence",
           "ABOVE", "BELOW", "UNDECIDED", "decision", "undecided_fix"]

EXCEEDED, PASSED, NOT_MEASURABLE = "exceeded", "passed", "not measurable"
STATUSES = (EXCEEDED, PASSED, NOT_MEASURABLE)
#: a check's decision for the "safety shown" burden of proof (:func:`decision`)
ABOVE, BELOW, UNDECIDED = "above", "below", "undecided"


class Check(Result):
    """One claim the verdict rests on: a measured value, its interval, a threshold and a status.

    Attributes
    ----------
    id : str
        Stable identifier, ``analysis.subject.metric`` (e.g. ``membership.lira.auc``, ``dtp.dtp1``).
    analysis : str
        The analysis that made it (membership, dtp, attribute, property, mip, dp, structural, dataset_inference, or
        the name of one registered with :func:`leakaudit.register_analysis`).
    name : str
        Short human name ("LiRA: AUC").
    status : {"exceeded", "passed", "not measurable"}
        ``exceeded``: the threshold is exceeded at the stated confidence; ``passed``: the check ran with enough
        data to have exceeded it, and did not; ``not measurable``: it could not run or lacked the data to ever
        exceed it (``fix`` says what would change that).
    value : float or None
        The measured value (None when not measurable).
    interval : [low, high] or None
        Its confidence interval, at ``confidence``.
    threshold : float or None
    confidence : float or None
        Confidence of ``interval`` (Bonferroni-corrected over the verdict's checks; see the verdict's
        ``confidence`` for the family-wise level).
    sentence : str
        What was found, in plain words, with the numbers.
    fix : str
        For "not measurable": what would make it measurable.
    describes : {"model", "recipe"}
        "recipe" when the check measures the retraining recipe rather than the given model (PDTP retrains; when the
        recipe does not reproduce the given model, such a check cannot alone produce "do not publish").
    shows : {"both", "leakage only"}
        "leakage only" for a check that can show leakage but never its absence (an empirical lower bound on epsilon:
        a small lower bound says nothing of the true epsilon). Under the "safety shown" burden of proof such a check
        can withhold a model but does not count towards publishing it.
    decision : {"above", "below", "undecided"} or None
        Whether the check is shown above its threshold, shown below it, or neither, at ``confidence``
        (:func:`decision`). A stage sets it where its interval does not say (DTP-1); the verdict fills it in for
        every check.
    because : str or None
        For a check that is not measurable because of another check's finding: that check's ``id`` (an attack on
        texts that differ by themselves, because of the blind baseline). When every unmeasured check traces to one
        such check, the verdict's headline is that check's sentence.
    """

    model_config = ConfigDict(json_schema_extra={
        "allOf": [{"if": {"properties": {"status": {"const": "not measurable"}}},
                   "else": {"properties": {"value": {"type": "number"}}}}]})

    id: str = Field(pattern=r"^[a-z_]+\..+", description="analysis.subject.metric, stable")
    analysis: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="the analysis that made it: membership, dtp, "
                          "attribute, property, mip, dp, structural, dataset_inference, or a registered one's name")
    name: str = Field(min_length=1)
    status: Literal["exceeded", "passed", "not measurable"]
    value: Annotated[Optional[float], WithJsonSchema(MEASURED_SCHEMA)] = None
    interval: Annotated[Optional[tuple[float, float]], WithJsonSchema(INTERVAL_SCHEMA)] = None
    threshold: Optional[float] = None
    confidence: Optional[float] = None
    sentence: str
    fix: str = ""
    describes: Literal["model", "recipe"] = "model"
    shows: Literal["both", "leakage only"] = "both"
    decision: Optional[Literal["above", "below", "undecided"]] = None
    because: Optional[str] = None


@dataclass(frozen=True)
class Analysis:
    """What one analysis of the audit returns.

    Attributes
    ----------
    name : str
        The analysis (its section name in ``results.json``).
    summary : dict or None
        Its section of ``results.json`` (None when it did not run).
    checks : tuple of Check
    skipped : tuple of Skipped
    resources : dict
        Models trained, cache use, seconds (merged into ``results.json``'s ``resources``).
    per_record : dict of str -> ndarray of shape (n_members + n_nonmembers,)
        Columns of ``records.csv`` (members first, then non-members).
    extras : dict
        In-memory values later analyses use (e.g. the reference models), never written.
    """

    name: str
    summary: Any = None
    checks: tuple[Check, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    resources: dict = field(default_factory=dict)
    per_record: dict[str, np.ndarray] = field(default_factory=dict)
    extras: dict = field(default_factory=dict)


def within_sentence(measured: str, interval: str, below: bool, threshold: str) -> str:
    """A passed check in words that agree with its numbers: its interval lies below the threshold, or it reaches
    the threshold without its lower end clearing it (not shown above it; leakage up to the upper end not ruled out)."""
    if below:
        return f"{measured}; its interval {interval} lies below the threshold {threshold}"
    return (f"{measured}; not shown above the threshold {threshold}: its interval {interval} reaches it, so leakage "
            "up to the interval's upper end is not ruled out")


def decision(check: Check) -> str:
    """Whether ``check`` is shown above its threshold, shown below it, or undecided, at its confidence.

    Exceeded is above; not measurable is undecided; a passed check is below when its interval's upper end lies below
    the threshold and undecided when the interval reaches it. A passed check without an interval is an exact count
    or fact (a structural check, a split test), so below, unless its stage decided otherwise (``check.decision``,
    DTP-1) or it can show only leakage (``shows="leakage only"``: undecided).
    """
    if check.status == EXCEEDED:
        return ABOVE
    if check.status == NOT_MEASURABLE:
        return UNDECIDED
    if check.decision is not None:
        return check.decision
    if check.shows == "leakage only":
        return UNDECIDED
    if check.interval is not None and check.threshold is not None:
        return BELOW if check.interval[1] < check.threshold else UNDECIDED
    return BELOW


def undecided_fix(what: str, value: float, high: float, threshold: float, n_members: int, n_nonmembers: int) -> str:
    """What would decide a passed check whose interval reaches its threshold: the records at which its upper end
    would fall below it, were the measured value to stay (an interval's width falls as one over the square root of
    the records: ``n * ((high - value) / (threshold - value)) ** 2``). Empty when the interval lies below already;
    when the value itself reaches the threshold, more records would more likely show it above, and that is said."""
    if high < threshold:
        return ""
    if value >= threshold:
        return (f"its measured {what} reaches the threshold: more records would more likely show it above than below "
                "(a model trained to leak less would decide it)")
    f = ((high - value) / (threshold - value)) ** 2
    return (f"about {math.ceil(n_members * f):,} members and {math.ceil(n_nonmembers * f):,} non-members (now "
            f"{n_members:,} and {n_nonmembers:,}) would decide it, were the {what} to stay {value:.3g}")

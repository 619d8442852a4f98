"""What the audit's analyses claim: checks with a status, analyses that could not run, and the result of each.

Every analysis of the audit (membership attacks, DTP, attribute inference, property inference, MIP) returns an
:class:`Analysis`: its section of ``results.json``, the :class:`Check` objects the verdict is computed from, what it
could not run (:class:`Skipped`, with the flag that would enable it), its resource use and per-record columns. The
verdict (:func:`leakaudit.audit.result.verdict.decide`) reads checks only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import ConfigDict, Field, WithJsonSchema, model_validator

from ..._results import BELOW, EXCEEDED, NOT_MEASURABLE, STATUS_COLOURS, STATUSES, UNDECIDED, Result
from ..config import Phrase, Phrased, escaped, phrase
from .sections import INTERVAL_SCHEMA, MEASURED_SCHEMA, Skipped

__all__ = ["Check", "Skipped", "Analysis", "STATUSES", "STATUS_COLOURS", "EXCEEDED", "BELOW", "UNDECIDED", "NOT_MEASURABLE", "PASSED",
           "within_sentence", "decision", "undecided_fix", "evidence_p", "rank_checks", "to_decide", "can_decide_alone"]

#: what enables an analysis that retrains or queries the model, given its predictions only
GIVE_MODEL = phrase("give the model itself ({0}) instead of its predictions", "model")

#: what an analysis may give as a check's status when it measured the check and it was not exceeded: the check
#: resolves it to "shown below" or "undecided" from its interval (:func:`decision`); never stored
PASSED = "passed"


class Check(Result, Phrased):
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
    status : {"exceeded", "shown below", "undecided", "not measurable"}
        ``exceeded``: shown above the threshold at the stated confidence (its interval lies above it; for DTP-1, a
        record's change is significant after correction); ``shown below``: its interval lies below the threshold;
        ``undecided``: it ran with enough data to have been exceeded, was not, and is not shown below either (its
        interval reaches the threshold, or it can show only leakage); ``not measurable``: it could not run or lacked
        the data to ever exceed it (``fix`` says what would change that). An analysis that measured a check and did
        not find it exceeded may give ``"passed"``: the check resolves it to "shown below" or "undecided" when it is
        made (:func:`decision`), so a stored check never says "passed".
    value : float or None
        The measured value (None when not measurable).
    interval : [low, high] or None
        Its confidence interval, at ``confidence``; a one-sided one (DTP-1's lower confidence bound) has no upper
        end (infinity in memory, null in results.json), which every surface says as "at least low".
    threshold : float or None
    confidence : float or None
        Confidence of ``interval`` (Bonferroni-corrected over the verdict's checks; see the verdict's
        ``confidence`` for the family-wise level).
    sentence : str
        What was found, in plain words, with the numbers.
    fix : str
        For "not measurable": what would make it measurable; for "undecided", what would decide it (in the
        library's words: a setting as the argument or key).
    fix_parts : Phrase or None
        ``fix`` with the settings it names as structured references, from which each surface says it
        (:meth:`~leakaudit.audit.config.Phrased.said`); an analysis gives ``fix`` as a
        :class:`~leakaudit.audit.config.Phrase` to set both.
    describes : {"model", "recipe"}
        "recipe" when the check measures the retraining recipe rather than the given model (PDTP retrains; when the
        recipe does not reproduce the given model, such a check cannot alone produce "do not publish").
    shows : {"both", "leakage only"}
        "leakage only" for a check that can show leakage but never its absence (an empirical lower bound on epsilon:
        a small lower bound says nothing of the true epsilon). Under the "safety shown" burden of proof such a check
        can withhold a model but does not count towards publishing it.
    p_value : float or None
        The one-sided p-value of the analysis's own test of "at or below the threshold", where it ran one (DTP-1:
        the most significant record's, Holm-adjusted over the records re-measured), judged at ``1 - confidence``.
        Checks are ranked by it (:func:`rank_checks`).
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
    status: Literal["exceeded", "shown below", "undecided", "not measurable"]
    value: Annotated[Optional[float], WithJsonSchema(MEASURED_SCHEMA)] = None
    interval: Annotated[Optional[tuple[float, float]], WithJsonSchema(INTERVAL_SCHEMA)] = None
    threshold: Optional[float] = None
    confidence: Optional[float] = None
    sentence: str
    fix: str = ""
    fix_parts: Optional[Phrase] = None
    describes: Literal["model", "recipe"] = "model"
    shows: Literal["both", "leakage only"] = "both"
    p_value: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    because: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _resolve_passed(cls, data: Any) -> Any:
        """"passed" (measured, not exceeded) given by an analysis becomes "shown below" or "undecided"; a check of
        results.json's schema 2 (a status "passed" beside its ``decision``) reads as its decision said."""
        if isinstance(data, dict) and "decision" in data:  # schema 2
            data = dict(data)
            old = data.pop("decision")
            if data.get("status") == PASSED and old in ("below", "undecided"):
                data["status"] = BELOW if old == "below" else UNDECIDED
        if isinstance(data, dict) and data.get("status") == PASSED:
            data = {**data, "status": decision(data)}
        interval = data.get("interval") if isinstance(data, dict) else None
        if isinstance(interval, (list, tuple)) and len(interval) == 2 and None in interval:
            # a one-sided interval's open end, which JSON writes as null
            data = {**data, "interval": (-math.inf if interval[0] is None else interval[0],
                                         math.inf if interval[1] is None else interval[1])}
        return data


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
    recipe : dict or None
        The recipe test's result (:func:`leakaudit.audit.inputs.recipe.recipe_test`), which the verdict reads.
    flagged : list of int or None
        The members its rule flags (DTP-1's records, by index; None: it flags none by rule), named in records.csv.
    settings : dict
        What the profile made it do, joined to results.json's ``settings``.
    """

    name: str
    summary: Any = None
    checks: tuple[Check, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    resources: dict = field(default_factory=dict)
    per_record: dict[str, np.ndarray] = field(default_factory=dict)
    extras: dict = field(default_factory=dict)
    recipe: dict | None = None
    flagged: list[int] | None = None
    settings: dict = field(default_factory=dict)


def within_sentence(measured: str, interval: str, below: bool, threshold: str) -> str:
    """A passed check in words that agree with its numbers: its interval lies below the threshold, or it reaches
    the threshold without its lower end clearing it (not shown above it; leakage up to the upper end not ruled out)."""
    if below:
        return f"{measured}; its interval {interval} lies below the threshold {threshold}"
    return (f"{measured}; not shown above the threshold {threshold}: its interval {interval} reaches it, so leakage "
            "up to the interval's upper end is not ruled out")


def decision(check: Mapping[str, Any]) -> str:
    """The status of a check that was measured and not exceeded: "shown below" or "undecided", at its confidence.

    ``check`` holds the check's fields (``interval``, ``threshold``, ``shows``). It is shown below when its
    interval's upper end lies below the threshold and undecided when the interval reaches it; a check that can show
    only leakage (``shows="leakage only"``, a lower bound on epsilon) is undecided; one without an interval is an
    exact count or fact (a structural check, a split test), so shown below. An analysis whose check's interval does
    not say (DTP-1: records tested one by one) gives "shown below" or "undecided" itself.
    """
    if check.get("shows", "both") == "leakage only":
        return UNDECIDED
    interval, threshold = check.get("interval"), check.get("threshold")
    if interval is not None and threshold is not None:
        return BELOW if interval[1] < threshold else UNDECIDED
    return BELOW


def undecided_fix(what: str, value: float, high: float, threshold: float, n_members: int,
                  n_nonmembers: int) -> Phrase | str:
    """What would decide a passed check whose interval reaches its threshold: the records at which its upper end
    would fall below it, were the measured value to stay (an interval's width falls as one over the square root of
    the records: ``n * ((high - value) / (threshold - value)) ** 2``). Empty when the interval lies below already;
    when the value itself reaches the threshold, more records would more likely show it above, and that is said; the
    records as a :class:`~leakaudit.audit.config.Phrase` naming where they are given (``records``)."""
    if high < threshold:
        return ""
    if value >= threshold:
        return (f"its measured {what} reaches the threshold: more records would more likely show it above than below "
                "(a model trained to leak less would decide it)")
    f = ((high - value) / (threshold - value)) ** 2
    return phrase(f"about {math.ceil(n_members * f):,} members and {math.ceil(n_nonmembers * f):,} non-members (now "
                  f"{n_members:,} and {n_nonmembers:,}) would decide it, were the {escaped(what)} to stay {value:.3g} "
                  "({0})", "records")


def evidence_p(check: Check) -> float:
    """How strongly ``check`` shows leakage above its threshold, as a one-sided p-value of "at or below it".

    The check's own ``p_value`` where its analysis tested; else, for a check with an interval, a normal approximation
    read from the interval: the half of it on the threshold's side spans ``z`` standard errors, ``z`` the normal
    quantile of the check's two-sided confidence. A check without an interval is an exact count or fact: 0 when
    exceeded, 1 otherwise; so is one that was not measured (1).
    """
    from scipy.stats import norm

    if check.p_value is not None:
        return float(check.p_value)
    v, thr = check.value, check.threshold
    if check.status == NOT_MEASURABLE or v is None or thr is None or check.interval is None:
        return 0.0 if check.status == EXCEEDED else 1.0
    lo, hi = check.interval
    half = (v - lo) if v > thr else (hi - v)
    if not (half > 0 and math.isfinite(half)):
        return 0.0 if v > thr else 1.0
    z = float(norm.isf((1.0 - (check.confidence or 0.95)) / 2.0))
    return float(norm.sf((v - thr) / (half / z)))


#: the order checks are read in: what shows leakage, what is not decided, what is shown safe, what was not measured
_RANK = {EXCEEDED: 0, UNDECIDED: 2, BELOW: 3, NOT_MEASURABLE: 4}


def rank_checks(checks) -> list[Check]:
    """``checks`` ranked by strength of evidence: exceeded checks that describe the given model, then those that
    describe only the retraining recipe, then undecided, shown below and not measurable ones; within each, the
    strongest evidence of leakage first (:func:`evidence_p`, ties in the order given)."""
    def key(c: Check) -> tuple[int, float]:
        return _RANK[c.status] + (c.status == EXCEEDED and c.describes == "recipe"), evidence_p(c)

    return sorted(checks, key=key)


def can_decide_alone(c: Check) -> bool:
    """Whether deciding ``c`` may alone withhold the model: not measured (its value unknown) or measured at or above
    its threshold."""
    return c.status == NOT_MEASURABLE or (c.value is not None and c.threshold is not None and c.value >= c.threshold)


def to_decide(checks, safety: bool) -> list[Check]:
    """The checks that keep a verdict from "publish" (not measurable; under the "safety shown" burden also the
    undecided ones that can show safety), ranked by what settles the verdict soonest: first those whose result
    alone can change the outcome (:func:`can_decide_alone`, or the only one), then by what deciding them costs: a
    check with no fix last, a setting of the audit (a profile, a repeat count) before more records, a loosened
    threshold or a new model; within each, the strongest evidence first."""
    out = [c for c in checks if c.status == NOT_MEASURABLE or (safety and c.status == UNDECIDED and c.shows == "both")]

    def key(c: Check) -> tuple:
        # a setting of the audit (a profile, a repeat count); more records, or a threshold loosened, is not one
        setting = c.fix_parts is not None and any(s.key != "records" and not s.key.startswith("thresholds.")
                                                  for s in c.fix_parts.settings)
        return not (len(out) == 1 or can_decide_alone(c)), not c.fix, not setting, evidence_p(c)

    return sorted(out, key=key)

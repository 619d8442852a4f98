"""The one assembler: an audit's :class:`~leakaudit.audit.result.results.AuditResult` from its plan's finished steps.

The pipeline (:mod:`leakaudit.audit.pipeline`) prepares the inputs of one modality, runs their plan with
:func:`leakaudit.audit.plan.run_plan` and hands the finished steps here with the prepared inputs (the data, target
and settings sections, and each record's identity and values). Here the checks go to the pure
:func:`~leakaudit.audit.result.verdict.decide` with the family they were corrected for, each step's summary fills the
results.json section it names, its per-record columns join records.csv, and the per-record risk and the evidence
record are added.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from .._resources import peak_rss_mb
from .result.checks import Analysis
from .config import AuditConfig, recorded_config
from .context import Prepared
from .plan import Plan, not_needed
from .result.release import threat_model
from .result.results import AuditResult
from .result.sections import RecordRiskSection
from .result.verdict import decide

__all__ = ["assemble"]


def assemble(plan: Plan, done: Mapping[str, Analysis], inputs: Prepared, *, cfg: AuditConfig, command: str | None,
             planned: Mapping[str, int], check_confidence: float, timings: dict) -> AuditResult:
    """The result of ``plan``'s finished steps ``done`` (step name -> :class:`Analysis`) on ``inputs``.

    ``planned`` and ``check_confidence``: the checks each step planned and the corrected confidence they were
    judged at. ``inputs``: the data, target and settings sections (the steps' own settings join the last), the
    records (the steps' per-record columns follow, those of ``plan.record_columns`` first), and the inputs given in
    memory, fingerprinted in the evidence record (:func:`leakaudit.audit.result.evidence.build_evidence`).
    """
    analyses = [done[s.name] for s in plan.steps]
    text = inputs.modality == "text"
    recipe = next((a.recipe for a in analyses if a.recipe is not None), None)
    verdict = decide(cfg, [c for a in analyses for c in a.checks], recipe=recipe, check_confidence=check_confidence,
                     planned=planned, not_run=not_needed(done))
    if text:  # a language model's outputs are its tokens' log-probabilities, not class scores
        verdict = verdict.model_copy(update={"threat_model": threat_model(cfg.release, text=True)})
    sections: dict = {}
    names = {s.name for s in plan.steps}
    for step in plan.steps:  # a step that did not run leaves its section at the schema's default
        summary = done[step.name].summary
        top, _, inner = (step.section or step.name).partition(".")
        if summary is None or (inner and top in names and sections.get(top) is None):
            continue
        if top == "analyses":  # a registered analysis: its section says what it is, so it renders without it
            summary = {"title": step.title, "description": step.description, "values": summary}
        sections[top] = {**(sections.get(top) or {}), inner: summary} if inner else summary
    order = [*plan.record_columns, *(s.name for s in plan.steps if s.name not in plan.record_columns)]
    columns = {col: v for name in order for col, v in done[name].per_record.items()}
    records = inputs.records
    rec = pd.concat([records, pd.DataFrame(columns, index=records.index)], axis=1) if columns else records
    result = AuditResult(
        leakaudit_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        command=command or "leakaudit audit",
        config=recorded_config(cfg, kind=inputs.target.get("kind", ""), text=text),
        data=inputs.data, target=inputs.target, **sections,
        skipped=[s.as_dict() for a in analyses for s in a.skipped],
        verdict=verdict,
        timings=timings,
        resources={"peak_memory_mb": round(peak_rss_mb(), 1),
                   **{k: v for a in analyses for k, v in a.resources.items()}},
        settings={**inputs.settings, **{k: v for a in analyses for k, v in a.settings.items()}},
    )
    flagged = next((a.flagged for a in analyses if a.flagged is not None), None)
    return _with_evidence(_with_record_risk(result, rec, flagged), in_memory=inputs.in_memory, memory=inputs.memory)


def _with_evidence(result: AuditResult, *, in_memory: bool, memory: Mapping[str, Any] | None) -> AuditResult:
    """``result`` with its evidence record, made now, while the input files are the ones the audit read and the
    objects in ``memory`` the ones it audited (records handed over in memory have no file: their digests are of
    canonical forms)."""
    from .result.evidence import build_evidence
    from .policy import policy_of

    results = result.to_dict()
    return result.with_evidence(build_evidence(results, policy=policy_of(results["config"]),
                                               files={} if in_memory else None, memory=memory,
                                               release=results["config"].get("release")))


def _with_record_risk(result: AuditResult, rec: pd.DataFrame, significant: list[int] | None) -> AuditResult:
    """``result`` with its per-record table, completed by each member's p-value per attack, what flags it
    (:func:`leakaudit.audit.result.record_risk.flag_records`; ``significant``: the members a step's rule flags,
    DTP-1's, by index) and its
    risk rank; the summary goes to ``record_risk``."""
    from ..membership import display_name
    from .result.record_risk import flag_records

    names = {c[len("score_"):]: display_name(c[len("score_"):]) for c in rec.columns if c.startswith("score_")}
    rec, summary = flag_records(rec, names=names, dtp_significant=significant, confidence=result.config.confidence)
    rec["risk_rank"] = _risk_rank(rec)
    return result.model_copy(update={"record_risk": RecordRiskSection.model_validate(summary)}).with_records(rec)


def _risk_rank(rec: pd.DataFrame) -> pd.Series:
    """Each member's rank among the members (1 = riskiest) by its mean percentile over PDTP and every attack score;
    empty for non-members (they are not in the training data, so there is nothing of theirs to leak)."""
    cols = [c for c in rec.columns if c.startswith("score_") or c == "pdtp"]
    mem = rec["is_member"].to_numpy() == 1
    out = pd.Series(pd.NA, index=rec.index, dtype="Int64")
    if not mem.any():
        return out
    if not cols:
        out[mem] = np.arange(1, int(mem.sum()) + 1)
        return out
    sub = rec.loc[mem, cols]
    pct = pd.concat([sub[c].rank(pct=True) for c in cols], axis=1).mean(axis=1, skipna=True)
    out[mem] = pct.rank(ascending=False, method="first").to_numpy(int)
    return out

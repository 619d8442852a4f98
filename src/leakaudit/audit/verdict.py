"""The verdict: publish, do not publish, or inconclusive, computed from the analyses' checks and the policy's burden
of proof alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .checks import BELOW, EXCEEDED, NOT_MEASURABLE, PASSED, UNDECIDED, Check, decision
from .config import AuditConfig
from .release import threat_model
from .results import EXIT_CODES, Verdict

__all__ = ["decide", "EXIT_CODES"]


def decide(cfg: AuditConfig, checks: Sequence[Check], *, recipe: dict | None = None,
           check_confidence: float | None = None, planned: Mapping[str, int] | None = None) -> Verdict:
    """The outcome of the audit from its checks, under ``cfg.burden_of_proof``.

    ``planned``: the checks each analysis planned before any ran (the family ``check_confidence`` was corrected
    for, :func:`leakaudit.audit.plan.planned_checks`); recorded in the verdict beside the checks that ran. None: the
    family is the checks given.

    Every check is first decided (:func:`~leakaudit.audit.checks.decision`): shown above its threshold, shown
    below it, or undecided, at the corrected confidence.

    * "do not publish" (either burden): a check that describes the given model is shown above its threshold (its
      interval lies above it; for DTP-1, a record's change is significant after correction).
    * "publish": under "safety shown", every check that can show safety is shown below its threshold and nothing
      describing only the retraining recipe is exceeded; under "leakage shown" (the rule before policies), every check
      was measured with enough data to have been exceeded, and none was.
    * "inconclusive": neither. The headline names the checks that are not decided and what would decide them (each
      check's ``fix``, computed by its analysis from the records it had).
    """
    checks = [c.model_copy(update={"decision": decision(c)}) for c in checks]
    safety = cfg.burden_of_proof == "safety shown"
    exceeded = [c for c in checks if c.status == EXCEEDED and c.describes == "model"]
    recipe_only = [c for c in checks if c.status == EXCEEDED and c.describes == "recipe"]
    unmeasured = [c for c in checks if c.status == NOT_MEASURABLE]
    passed = [c for c in checks if c.status == PASSED]
    # passed but not shown below: under "safety shown" these keep the verdict from "publish"
    undecided = [c for c in passed if c.decision == UNDECIDED and c.shows == "both"] if safety else []
    if exceeded:
        outcome = "do not publish"
        more = f" (and {len(exceeded) - 1} more check{'s' if len(exceeded) > 2 else ''})" if len(exceeded) > 1 else ""
        finding = f"{_lower_first(exceeded[0].sentence)}{more}"
    elif recipe_only or unmeasured or undecided:
        outcome = "inconclusive"
        parts = []
        if recipe_only and recipe is not None and recipe.get("reproduces") is False:
            # an input problem first: the member list (or the recipe) is not what the model was trained on
            ref = recipe.get("ref_signal") or {}
            nums = (f": its difficulty-calibrated membership signal, AUC {recipe['signal']:.3f}, lies below the "
                    f"{ref['k']} retrained models' {ref['mean']:.3f} (sd {ref['sd']:.3f}; p = {recipe['p_value']:.3g})"
                    if {"signal", "p_value"} <= set(recipe) and {"k", "mean", "sd"} <= set(ref) else "")
            parts.append("check the inputs: the given model may not have been trained on these members, or not by "
                         f"this recipe{nums}; so {_lower_first(recipe_only[0].sentence)} describes the retraining "
                         "recipe, not the given model")
        elif recipe_only:
            # the check's own sentence says why (the given model's outputs do not show it trained on the records)
            parts.append(f"{_lower_first(recipe_only[0].sentence)}; this describes the retraining recipe and is not "
                         "shown to hold for the given model")
        if undecided:
            fix = next((c.fix for c in undecided if c.fix), "")
            one = len(undecided) == 1
            parts.append(f"{_count(undecided)} {'is' if one else 'are'} not shown below {'its' if one else 'their'} "
                         f"threshold{'' if one else 's'} ({_names(undecided)}): leakage up to the interval's upper end "
                         "is not ruled out" + (f"; {fix}" if fix else ""))
        if unmeasured:
            fix = next((c.fix for c in unmeasured if c.fix), "")
            parts.append(f"{_count(unmeasured)} could not be measured ({_names(unmeasured)})"
                         + (f"; {fix}" if fix else ""))
        finding = "no check shows leakage of the given model, but " + "; and ".join(parts) + "."
        cause = _one_cause(unmeasured) if not (recipe_only or undecided) else None
        if cause is not None:  # every unmeasured check is so because of one finding: that finding is the headline
            finding = f"{cause.sentence.rstrip('.')}."
    elif safety:
        outcome = "publish"
        shown = [c for c in passed if c.decision == BELOW]
        lower_only = len(passed) - len(shown)
        finding = (f"all {len(shown)} checks are shown below their thresholds at the corrected confidence"
                    + (f" ({lower_only} more, lower bounds on epsilon, show no leakage but cannot show its absence)"
                       if lower_only else "") + ".")
    else:
        outcome = "publish"
        finding = (f"all {len(passed)} checks were measured with enough data, and none shows leakage above its "
                   "threshold.")
    if not checks:
        outcome, finding = "inconclusive", "no check could run."
    confidence = float(cfg.confidence)
    planned = dict(planned) if planned is not None else {"checks": len(checks)}
    return Verdict(
        publish=outcome == "publish", outcome=outcome, finding=finding,
        headline=f"{outcome[:1].upper()}{outcome[1:]}: {finding}",
        reasons=[c.sentence for c in exceeded + recipe_only], passed=[c.sentence for c in passed],
        not_measurable=[c.sentence + (f" ({c.fix})" if c.fix else "") for c in unmeasured],
        undecided=[c.sentence + (f" ({c.fix})" if c.fix else "") for c in undecided],
        checks=checks, thresholds=cfg.thresholds.model_dump(), confidence=confidence,
        check_confidence=check_confidence, n_checks=len(checks), planned_checks=planned,
        n_planned=sum(planned.values()), recipe=recipe, dtp_rule=cfg.dtp_rule,
        burden_of_proof=cfg.burden_of_proof, policy=cfg.policy, release=cfg.release,
        threat_model=threat_model(cfg.release), exit_code=EXIT_CODES[outcome],
    )


def _one_cause(unmeasured: list[Check]) -> Check | None:
    """The unmeasured check that every other unmeasured check names as its cause (``because``), if there is one."""
    roots = [c for c in unmeasured if c.because is None]
    if len(roots) == 1 and len(unmeasured) > 1 and all(c.because == roots[0].id for c in unmeasured
                                                       if c is not roots[0]):
        return roots[0]
    return None


def _count(checks: list[Check]) -> str:
    return f"{len(checks)} check{'s' if len(checks) > 1 else ''}"


def _names(checks: list[Check]) -> str:
    return ", ".join(c.name for c in checks[:3]) + (f" and {len(checks) - 3} more" if len(checks) > 3 else "")


def _lower_first(s: str) -> str:
    """The sentence without its final stop, its first letter lowered unless the first word is a name ("LiRA")."""
    s = s.rstrip(".")
    first = s.split(" ", 1)[0]
    return s[:1].lower() + s[1:] if first[1:] == first[1:].lower() else s

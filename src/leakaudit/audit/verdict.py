"""The verdict: publish, do not publish, or inconclusive, computed from the analyses' checks alone."""

from __future__ import annotations

from collections.abc import Sequence

from .checks import EXCEEDED, NOT_MEASURABLE, PASSED, Check
from .config import AuditConfig
from .results import EXIT_CODES, Verdict

__all__ = ["decide", "EXIT_CODES"]


def decide(cfg: AuditConfig, checks: Sequence[Check], *, recipe: dict | None = None,
           check_confidence: float | None = None) -> Verdict:
    """The outcome of the audit from its checks.

    * "do not publish": a check that describes the given model is exceeded (its interval, at the corrected
      confidence, lies above the threshold; for DTP-1, a record's change is significant after correction).
    * "inconclusive": nothing that describes the model is exceeded, but some check is not measurable, or a check
      that describes only the retraining recipe is exceeded (the recipe does not reproduce the given model, or the
      given model's outputs do not show the finding).
    * "publish": every check was measured with enough data to have failed, and none did.
    """
    checks = list(checks)
    exceeded = [c for c in checks if c.status == EXCEEDED and c.describes == "model"]
    recipe_only = [c for c in checks if c.status == EXCEEDED and c.describes == "recipe"]
    unmeasured = [c for c in checks if c.status == NOT_MEASURABLE]
    passed = [c for c in checks if c.status == PASSED]
    if exceeded:
        outcome = "do not publish"
        more = f" (and {len(exceeded) - 1} more check{'s' if len(exceeded) > 2 else ''})" if len(exceeded) > 1 else ""
        headline = f"Do not publish: {_lower_first(exceeded[0].sentence)}{more}"
    elif recipe_only or unmeasured:
        outcome = "inconclusive"
        parts = []
        if recipe_only:
            # the check's own sentence says why (the recipe does not reproduce the model, or the model's outputs
            # do not show it trained on the records found)
            parts.append(f"{_lower_first(recipe_only[0].sentence)}; this describes the retraining recipe and is not "
                         "shown to hold for the given model")
        if unmeasured:
            names = ", ".join(c.name for c in unmeasured[:3]) + (f" and {len(unmeasured) - 3} more"
                                                                   if len(unmeasured) > 3 else "")
            fix = next((c.fix for c in unmeasured if c.fix), "")
            parts.append(f"{len(unmeasured)} check{'s' if len(unmeasured) > 1 else ''} could not be measured "
                         f"({names})" + (f"; {fix}" if fix else ""))
        headline = "Inconclusive: no check shows leakage of the given model, but " + "; and ".join(parts) + "."
    else:
        outcome = "publish"
        headline = (f"Publish: all {len(passed)} checks were measured with enough data, and none shows leakage above "
                    "its threshold.")
    if not checks:
        outcome, headline = "inconclusive", "Inconclusive: no check could run."
    confidence = float(cfg.confidence)
    return Verdict(
        publish=outcome == "publish", outcome=outcome, headline=headline,
        reasons=[c.sentence for c in exceeded + recipe_only], passed=[c.sentence for c in passed],
        not_measurable=[c.sentence + (f" ({c.fix})" if c.fix else "") for c in unmeasured],
        checks=checks, thresholds=cfg.thresholds.model_dump(), confidence=confidence,
        check_confidence=check_confidence, n_checks=len(checks), recipe=recipe, dtp_rule=cfg.dtp_rule,
        exit_code=EXIT_CODES[outcome],
    )


def _lower_first(s: str) -> str:
    """The sentence without its final stop, its first letter lowered unless the first word is a name ("LiRA")."""
    s = s.rstrip(".")
    first = s.split(" ", 1)[0]
    return s[:1].lower() + s[1:] if first[1:] == first[1:].lower() else s

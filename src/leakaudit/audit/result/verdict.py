"""The verdict: publish, do not publish, or inconclusive, computed from the analyses' checks and the policy's burden
of proof alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...exceptions import LeakauditError
from .checks import BELOW, EXCEEDED, NOT_MEASURABLE, STATUSES, UNDECIDED, Check, can_decide_alone, rank_checks, to_decide
from ..config import AuditConfig, Phrase, escaped, phrase
from .release import threat_model
from .results import EXIT_CODES, Verdict

__all__ = ["decide", "withholding", "EXIT_CODES"]


def withholding(checks: Sequence[Check]) -> list[Check]:
    """The checks that withhold the model whatever else is found: exceeded, and describing the given model (one is
    enough for "do not publish" under either burden of proof)."""
    return [c for c in checks if c.status == EXCEEDED and c.describes == "model"]


def decide(cfg: AuditConfig, checks: Sequence[Check], *, recipe: dict | None = None,
           check_confidence: float | None = None, planned: Mapping[str, int] | None = None,
           not_run: Sequence[str] = ()) -> Verdict:
    """The outcome of the audit from its checks, under ``cfg.burden_of_proof``.

    ``planned``: the checks each analysis planned before any ran (the family ``check_confidence`` was corrected
    for, :func:`leakaudit.audit.plan.planned_checks`); recorded in the verdict beside the checks that ran. None: the
    family is the checks given.

    ``not_run``: the analyses a tiered audit did not run because its cheap tier had already withheld the model
    (:func:`leakaudit.audit.plan.run_plan`); the finding says so and how to run everything. They can only be given
    with a check that withholds the model.

    Every check carries its status, decided at the corrected confidence (:class:`~leakaudit.audit.result.checks.Check`):
    exceeded, shown below, undecided or not measurable. The verdict keeps them ranked by strength of evidence
    (:func:`~leakaudit.audit.result.checks.rank_checks`).

    * "do not publish" (either burden): a check that describes the given model is exceeded (its interval lies above
      its threshold; for DTP-1, a record's change is significant after correction).
    * "publish": under "safety shown", every check that can show safety is shown below its threshold and nothing
      describing only the retraining recipe is exceeded; under "leakage shown" (the rule before policies), every check
      was measured with enough data to have been exceeded, and none was.
    * "inconclusive": neither. The finding counts the checks that are not decided and says what would decide the
      first of them (:func:`~leakaudit.audit.result.checks.to_decide`: one whose result alone can change the outcome, the
      cheapest first) and why it comes first (each check's ``fix``, computed by its analysis from the records it
      had); it names them when no fix does.

    The finding is one sentence: what was found, how sure, what to do; every check's own sentence is in ``reasons``,
    ``shown_below``, ``undecided`` and ``not_measurable``, ranked.
    """
    checks = rank_checks(checks)
    safety = cfg.burden_of_proof == "safety shown"
    by = {s: [c for c in checks if c.status == s] for s in STATUSES}
    exceeded = withholding(checks)
    recipe_only = [c for c in by[EXCEEDED] if c.describes == "recipe"]
    unmeasured, undecided = by[NOT_MEASURABLE], by[UNDECIDED]
    # undecided checks that keep "safety shown" from "publish" (a lower bound on epsilon cannot show safety at all)
    blocking = [c for c in undecided if c.shows == "both"] if safety else []
    together = f"at {cfg.confidence * 100:g}% confidence for all checks together"
    of_n = f" of {len(checks)}"
    if exceeded:
        outcome = "do not publish"
        finding = (f"{_count(exceeded)}{of_n} show{'s' if len(exceeded) == 1 else ''} leakage above "
                   f"{'its threshold' if len(exceeded) == 1 else 'their thresholds'} {together}"
                   + (f", strongest first: {_names(exceeded, every=True)}." if len(exceeded) > 1
                      else f": {exceeded[0].name}."))
        if not_run:  # the cheap tier decided: the analyses it made unnecessary, and the setting that runs them
            finding = phrase(escaped(f"{finding[:-1]}; the cheap tier, which trains no model, decided this, so "
                                     f"{_and(list(not_run))} did not run") + " ({0} runs everything).",
                             ("tiers", "off"))
    elif not_run:
        raise LeakauditError("internal error: a tiered audit skipped analyses although no check withholds the model")
    elif recipe_only or unmeasured or blocking:
        outcome = "inconclusive"
        ranked = to_decide(checks, safety)
        todo = _todo(recipe, recipe_only, ranked)  # what to do first, naming settings as a Phrase
        parts = []
        if recipe_only:
            parts.append(f"{_names(recipe_only)} {'is' if len(recipe_only) == 1 else 'are'} exceeded for the "
                         "retraining recipe, not shown for the given model")
        # the open checks, the kind decided first leading; named here only when no step below names the first
        groups = [(unmeasured, "could not be measured"), (blocking, "undecided")]
        for group, what in sorted(groups, key=lambda g: not (ranked and ranked[0] in g[0])):
            if group:
                verb = "" if what.startswith("could") else ("is " if len(group) == 1 else "are ")
                parts.append(f"{_count(group)} {verb}{what}" + ("" if todo.text else f" ({_names(group)})"))
        finding = Phrase(text=escaped(f"no check shows leakage of the given model {together}, but " + _and(parts))
                         + (f"; {todo.text}" if todo.text else "") + ".", settings=todo.settings)
        cause = _one_cause(unmeasured) if not (recipe_only or blocking) else None
        if cause is not None:  # every unmeasured check is so because of one finding: that finding is the headline
            finding = f"{cause.sentence.rstrip('.')}."
    elif safety:
        outcome = "publish"
        shown, lower_only = by[BELOW], len(undecided)
        finding = (f"all {len(shown)} checks that can show safety are shown below their thresholds {together}"
                   + (f"; {lower_only} more, lower bound{'s' if lower_only > 1 else ''} on epsilon, show"
                      f"{'s' if lower_only == 1 else ''} no leakage but cannot show its absence" if lower_only else "")
                   + ".")
    else:
        outcome = "publish"
        finding = (f"none of the {len(checks)} checks shows leakage above its threshold {together}, and each was "
                   "measured with enough data to have shown it (leakage not shown, which is not safety shown).")
    if not checks:
        outcome, finding = "inconclusive", "no check could run."
    planned = dict(planned) if planned is not None else {"checks": len(checks)}
    return Verdict(
        publish=outcome == "publish", outcome=outcome, finding=finding,
        headline=_prefixed(f"{outcome[:1].upper()}{outcome[1:]}: ", finding),
        counts={s: len(by[s]) for s in STATUSES},
        reasons=[c.sentence for c in exceeded + recipe_only], shown_below=[c.sentence for c in by[BELOW]],
        not_measurable=[_with_fix(c) for c in unmeasured], undecided=[_with_fix(c) for c in undecided],
        checks=checks, thresholds=cfg.thresholds.model_dump(), confidence=float(cfg.confidence),
        check_confidence=check_confidence, n_checks=len(checks), planned_checks=planned,
        n_planned=sum(planned.values()), recipe=recipe, dtp_rule=cfg.dtp_rule,
        burden_of_proof=cfg.burden_of_proof, policy=cfg.policy, release=cfg.release,
        threat_model=threat_model(cfg.release), exit_code=EXIT_CODES[outcome],
    )


def _todo(recipe: dict | None, recipe_only: list[Check], ranked: list[Check]) -> Phrase:
    """What to do first, in a clause (empty: nothing to say): check the inputs when the recipe does not reproduce
    the given model, else decide the first of the open checks (:func:`~leakaudit.audit.result.checks.to_decide`) by its
    fix, with why it comes first and the settings it names."""
    if recipe_only and recipe is not None and recipe.get("reproduces") is False:
        return Phrase(text="check that the model was trained on these members by this recipe: it shows less "
                           "membership signal than its recipe gives" + (f" (p = {recipe['p_value']:.2g})"
                                                                        if recipe.get("p_value") is not None else ""))
    c = next((c for c in ranked if c.fix), None)
    if c is None:
        return Phrase(text="")
    why = ("the only one open" if len(ranked) == 1 else "not measured, so it alone may withhold the model"
           if c.status == NOT_MEASURABLE else "measured at or above its threshold" if can_decide_alone(c)
           else "the cheapest to decide")
    return _prefixed(f"to decide, first {c.name}, {why}: ", c.fix_parts or Phrase(text=escaped(c.fix)))


def _prefixed(prefix: str, said: Phrase | str) -> Phrase | str:
    """``said`` (a sentence, or a Phrase naming settings) after ``prefix``."""
    if isinstance(said, str):
        return prefix + said
    return Phrase(text=escaped(prefix) + said.text, settings=said.settings)


def _with_fix(c: Check) -> str:
    return c.sentence + (f" ({c.fix})" if c.fix else "")


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _one_cause(unmeasured: list[Check]) -> Check | None:
    """The unmeasured check that every other unmeasured check names as its cause (``because``), if there is one."""
    roots = [c for c in unmeasured if c.because is None]
    if len(roots) == 1 and len(unmeasured) > 1 and all(c.because == roots[0].id for c in unmeasured
                                                       if c is not roots[0]):
        return roots[0]
    return None


def _count(checks: list[Check]) -> str:
    return f"{len(checks)} check{'s' if len(checks) > 1 else ''}"


def _names(checks: list[Check], every: bool = False) -> str:
    """The checks' names, ranked; the first three and a count of the rest unless ``every``."""
    shown = checks if every else checks[:3]
    return "; ".join(c.name for c in shown) + (f" and {len(checks) - 3} more" if len(checks) > len(shown) else "")
